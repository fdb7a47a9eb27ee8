import { expect } from 'vitest';
import type { KnownBlock } from '../../../src/slack/blocks/format.ts';

// Structure helpers for Block Kit assertions (no snapshots): collect interactive elements and all
// visible text, and check Slack's limits.

type AnyElement = { type: string; action_id?: string; value?: string; text?: unknown; confirm?: unknown };

/** Interactive elements of actions blocks and section accessories. */
export const interactiveElements = (blocks: readonly KnownBlock[]): AnyElement[] =>
  blocks.flatMap((b) => {
    if (b.type === 'actions') return b.elements as AnyElement[];
    if (b.type === 'section' && b.accessory) return [b.accessory as AnyElement];
    return [];
  });

export const actionIds = (blocks: readonly KnownBlock[]): string[] =>
  interactiveElements(blocks)
    .map((e) => e.action_id)
    .filter((id): id is string => typeof id === 'string');

const textOf = (value: unknown): string[] => {
  if (value === null || value === undefined) return [];
  if (typeof value === 'string') return [];
  if (Array.isArray(value)) return value.flatMap(textOf);
  if (typeof value === 'object') {
    const o = value as Record<string, unknown>;
    const own =
      (o.type === 'mrkdwn' || o.type === 'plain_text') && typeof o.text === 'string' ? [o.text] : [];
    return [
      ...own,
      ...Object.entries(o).flatMap(([k, v]) => (k === 'text' && typeof v === 'string' ? [] : textOf(v))),
    ];
  }
  return [];
};

/** Every mrkdwn / plain_text string in the blocks, joined by newlines. */
export const visibleText = (blocks: readonly KnownBlock[]): string => textOf(blocks).join('\n');

/** Slack's per-message limits: 50 blocks, 3000-char section text, 10 fields of ≤ 2000, 10 context elements. */
export const expectWithinSlackLimits = (blocks: readonly KnownBlock[]): void => {
  expect(blocks.length).toBeLessThanOrEqual(50);
  const blockIds = blocks.map((b) => b.block_id).filter((id) => id !== undefined);
  expect(new Set(blockIds).size).toBe(blockIds.length);
  for (const b of blocks) {
    if (b.type === 'section') {
      if (b.text) expect(b.text.text.length).toBeLessThanOrEqual(3000);
      expect(b.fields?.length ?? 0).toBeLessThanOrEqual(10);
      for (const f of b.fields ?? []) expect(f.text.length).toBeLessThanOrEqual(2000);
    }
    if (b.type === 'context') expect(b.elements.length).toBeLessThanOrEqual(10);
    if (b.type === 'header') expect(b.text.text.length).toBeLessThanOrEqual(150);
    if (b.type === 'actions') expect(b.elements.length).toBeLessThanOrEqual(25);
  }
};

import type { types } from '@slack/bolt';

// Small text helpers shared by the Block Kit builders. Pure: times are formatted from the ISO
// strings recorded on events, in UTC, never from the clock.

export type KnownBlock = types.KnownBlock;
export type ModalView = types.ModalView;

/** A message body: `text` is the notification / accessibility fallback Slack requires beside blocks. */
export type SlackMessage = Readonly<{ text: string; blocks: KnownBlock[] }>;

/** Slack's hard limits we build under. */
export const SLACK_LIMITS = {
  blocksPerMessage: 50,
  sectionText: 3000,
  sectionFields: 10,
  fieldText: 2000,
  contextElements: 10,
  headerText: 150,
  buttonText: 75,
  actionValue: 2000,
  staticSelectOptions: 100,
  optionText: 75,
  privateMetadata: 3000,
  modalTitle: 24,
} as const;

// Escaping and cutting text live in src/slack/text.ts (one module for Slack's text both ways);
// re-exported here for the Block Kit builders that import them beside `mrkdwn` and `plain`.
import { escapeMrkdwn } from '../text.ts';

export { escapeMrkdwn, truncate } from '../text.ts';

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const pad = (n: number): string => String(n).padStart(2, '0');

/**
 * `02:04 UTC`; with the date (`Nov 21 23:58 UTC`) when `reference` is given and falls on another
 * UTC day. Unparseable input is shown as is.
 */
export const formatTime = (iso: string, reference?: string | null): string => {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  const time = `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())} UTC`;
  if (!reference) return time;
  const r = new Date(reference);
  const sameDay =
    !Number.isNaN(r.getTime()) &&
    r.getUTCFullYear() === d.getUTCFullYear() &&
    r.getUTCMonth() === d.getUTCMonth() &&
    r.getUTCDate() === d.getUTCDate();
  return sameDay ? time : `${MONTHS[d.getUTCMonth()]} ${d.getUTCDate()} ${time}`;
};

/** `2026-11-22 02:04:31 UTC`, for timelines. */
export const formatTimestamp = (iso: string): string => {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${pad(
    d.getUTCMinutes(),
  )}:${pad(d.getUTCSeconds())} UTC`;
};

const SLACK_USER = /^[UW][A-Z0-9]{2,}$/;

/** A Slack user id as a mention; anything else escaped as plain text. */
export const mention = (slackUserId: string): string =>
  SLACK_USER.test(slackUserId) ? `<@${slackUserId}>` : escapeMrkdwn(slackUserId);

export const plain = (text: string): { type: 'plain_text'; text: string; emoji: true } => ({
  type: 'plain_text',
  text,
  emoji: true,
});

export const mrkdwn = (text: string): { type: 'mrkdwn'; text: string } => ({ type: 'mrkdwn', text });

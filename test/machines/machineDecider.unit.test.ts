import { describe, expect, it } from 'vitest';
import { assign, setup } from 'xstate';
import { z } from 'zod';
import { DecisionRejected, machineDecider, ReplayMismatch } from '../../machines/shared/machineDecider.ts';
import type { Command, Event } from '../../machines/shared/messages.ts';

type DoorEvent = Event<'DoorOpened', { by: string }> | Event<'DoorClosed', { by: string }>;
type DoorCommand = Command<'OpenDoor', { by: string }> | Command<'CloseDoor', { by: string }>;

const doorMachine = setup({
  types: { context: {} as { openedBy: string | null }, events: {} as DoorEvent },
  guards: { byOpener: ({ context, event }) => event.data.by === context.openedBy },
}).createMachine({
  id: 'door',
  initial: 'closed',
  context: { openedBy: null },
  states: {
    closed: {
      on: { DoorOpened: { target: 'open', actions: assign({ openedBy: ({ event }) => event.data.by }) } },
    },
    open: { on: { DoorClosed: { target: 'closed', guard: 'byOpener' } } },
  },
});

const door = machineDecider({
  machine: doorMachine,
  toEvents: (c: DoorCommand): DoorEvent[] =>
    c.type === 'OpenDoor' ? [{ type: 'DoorOpened', data: c.data }] : [{ type: 'DoorClosed', data: c.data }],
  events: {
    schemas: { DoorOpened: z.object({ by: z.string() }), DoorClosed: z.object({ by: z.string() }) },
  },
});
const meta = { now: '2026-11-22T02:00:00.000Z', commandId: 'c1', actor: 'U1' };

describe('machineDecider', () => {
  it('proposes events the machine accepts and folds them', () => {
    const events = door.decide(
      { type: 'OpenDoor', data: { by: 'ann' }, metadata: meta },
      door.initialState(),
    );
    expect(events).toEqual([{ type: 'DoorOpened', data: { by: 'ann' } }]);
    const state = events.reduce(door.evolve, door.initialState());
    expect(state.value).toBe('open');
    expect(state.context.openedBy).toBe('ann');
  });
  it('rejects a move the machine refuses, guards included', () => {
    const open = door.evolve(door.initialState(), { type: 'DoorOpened', data: { by: 'ann' } });
    expect(() => door.decide({ type: 'CloseDoor', data: { by: 'bob' }, metadata: meta }, open)).toThrow(
      DecisionRejected,
    );
    expect(() => door.decide({ type: 'OpenDoor', data: { by: 'bob' }, metadata: meta }, open)).toThrow(
      /OpenDoor is not allowed while open/,
    );
  });
  it('is loud when replay meets an event the machine does not accept', () => {
    expect(() => door.evolve(door.initialState(), { type: 'DoorClosed', data: { by: 'x' } })).toThrow(
      ReplayMismatch,
    );
  });
});

import { afterEach, describe, expect, it } from 'vitest';
import { assign, setup } from 'xstate';
import { z } from 'zod';
import { machineDecider } from '../../machines/shared/machineDecider.ts';
import { handleCommand } from '../../src/application/handleCommand.ts';
import { ConcurrencyError, IllegalStateError } from '../../src/core/errors.ts';
import type { Command, Event } from '../../src/core/messages.ts';
import type { EventStore } from '../../src/eventStore/eventStore.ts';
import { openEventStore } from '../../src/eventStore/openEventStore.ts';

type CounterEvent = Event<'CounterIncremented', { by: string }> | Event<'CounterClosed', { by: string }>;
type CounterCommand = Command<'Increment', Record<string, never>> | Command<'Close', Record<string, never>>;

const counterMachine = setup({
  types: { context: {} as { count: number }, events: {} as CounterEvent },
}).createMachine({
  id: 'counter',
  initial: 'open',
  context: { count: 0 },
  states: {
    open: {
      on: {
        CounterIncremented: { actions: assign({ count: ({ context }) => context.count + 1 }) },
        CounterClosed: 'closed',
      },
    },
    closed: { type: 'final' },
  },
});
const counter = machineDecider({
  machine: counterMachine,
  toEvents: (c: CounterCommand): CounterEvent[] => [
    { type: c.type === 'Increment' ? 'CounterIncremented' : 'CounterClosed', data: { by: c.metadata.actor } },
  ],
  events: {
    schemas: {
      CounterIncremented: z.object({ by: z.string() }),
      CounterClosed: z.object({ by: z.string() }),
    },
  },
});
const cmd = (type: 'Increment' | 'Close', id: string): CounterCommand => ({
  type,
  data: {},
  metadata: { now: '2026-11-22T02:04:00.000Z', commandId: id, actor: 'U1' },
});

let store: EventStore;
afterEach(async () => store?.close());

describe('handleCommand', () => {
  it('appends the command and its events atomically, with metadata', async () => {
    store = await openEventStore('sqlite::memory:');
    const r = await handleCommand(store, counter, 'counter-1', cmd('Increment', 'c1'));
    expect(r.events.map((e) => e.type)).toEqual(['CounterIncremented']);
    const stream = await store.readStream('counter-1');
    expect(stream.map((m) => [m.kind, m.type])).toEqual([
      ['command', 'Increment'],
      ['event', 'CounterIncremented'],
    ]);
    expect(stream[1]!.metadata).toMatchObject({ commandId: 'c1', actor: 'U1', commandType: 'Increment' });
  });

  it('is idempotent by command id: a redelivered command returns the original outcome', async () => {
    store = await openEventStore('sqlite::memory:');
    await handleCommand(store, counter, 'counter-1', cmd('Close', 'c1'));
    const again = await handleCommand(store, counter, 'counter-1', cmd('Close', 'c1'));
    expect(again.alreadyHandled).toBe(true);
    expect(again.events.map((e) => e.type)).toEqual(['CounterClosed']);
    expect(await store.streamRevision('counter-1')).toBe(1);
  });

  it('refuses an illegal command with a coded error and records the refusal', async () => {
    store = await openEventStore('sqlite::memory:');
    await handleCommand(store, counter, 'counter-1', cmd('Close', 'c1'));
    const refused = handleCommand(store, counter, 'counter-1', cmd('Increment', 'c2'));
    await expect(refused).rejects.toBeInstanceOf(IllegalStateError);
    await expect(refused).rejects.toMatchObject({ code: 'SB_ILLEGAL_STATE' });
    const last = (await store.readStream('counter-1', { direction: 'backwards', maxCount: 1 }))[0]!;
    expect(last).toMatchObject({ kind: 'command', type: 'CommandRefused' });
  });

  it('re-decides after a concurrency conflict: concurrent commands all land, in some order', async () => {
    store = await openEventStore('sqlite::memory:');
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        handleCommand(store, counter, 'counter-1', cmd('Increment', `c${i}`), { maxRetries: 50 }),
      ),
    );
    expect(results).toHaveLength(20);
    const events = (await store.readStream('counter-1')).filter((m) => m.kind === 'event');
    expect(events).toHaveLength(20);
    expect(new Set(events.map((e) => e.metadata.commandId)).size).toBe(20);
  });

  it('gives up with a ConcurrencyError when retries run out', async () => {
    store = await openEventStore('sqlite::memory:');
    const results = await Promise.allSettled(
      Array.from({ length: 10 }, (_, i) =>
        handleCommand(store, counter, 'counter-1', cmd('Increment', `c${i}`), { maxRetries: 0 }),
      ),
    );
    const failed = results.filter((r) => r.status === 'rejected');
    expect(failed.length).toBeGreaterThan(0);
    for (const f of failed) expect((f as PromiseRejectedResult).reason).toBeInstanceOf(ConcurrencyError);
  });
});

describe('handleCommand on redelivery of a refused command', () => {
  it('refuses it again with the recorded reason instead of reporting success', async () => {
    store = await openEventStore('sqlite::memory:');
    await handleCommand(store, counter, 'counter-1', cmd('Close', 'c1'));
    await expect(handleCommand(store, counter, 'counter-1', cmd('Increment', 'c2'))).rejects.toBeInstanceOf(
      IllegalStateError,
    );
    const again = handleCommand(store, counter, 'counter-1', cmd('Increment', 'c2'));
    await expect(again).rejects.toMatchObject({ code: 'SB_ILLEGAL_STATE', details: { redelivered: true } });
    expect((await store.readStream('counter-1')).filter((m) => m.type === 'CommandRefused')).toHaveLength(1);
  });
});

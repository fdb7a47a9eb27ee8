import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { INCIDENT_ROUTING_STREAM_PREFIX } from '../../machines/incidentRouting/streams.ts';
import { createCommandBus } from '../../src/application/dispatch.ts';
import { runEventsCli } from '../../src/cli/events.ts';
import { manualClock, systemClock } from '../../src/core/clock.ts';
import { newId } from '../../src/core/ids.ts';
import type { EventStore, RecordedEvent } from '../../src/eventStore/eventStore.ts';
import { openEventStore } from '../../src/eventStore/openEventStore.ts';
import {
  createIncidentReadModels,
  INCIDENT_READ_MODELS_ID,
  INCIDENT_READ_MODELS_VERSION,
  type IncidentReadModels,
} from '../../src/incidents/readModels.projection.ts';
import { createProcessorRunner, type Processor, type ProcessorRunner } from '../../src/processors/runner.ts';
import {
  cancelTimer,
  createScheduler,
  type Scheduler,
  scheduleTimer,
} from '../../src/processors/scheduler.ts';
import { readSnapshot, snapshotStreamId, writeSnapshot } from '../../src/processors/snapshots.ts';
import { createVerificationReadModel } from '../../src/verification/readModel.projection.ts';
import { createLogSink } from '../support/logSink.ts';
import { ticketCommand, ticketRoutes, ticketStreamId } from '../support/ticketLifecycle.ts';
import { waitFor } from '../support/waitFor.ts';

/**
 * Read models and the scheduler's pending timers resume from snapshots (issue 13, item 1), on the
 * real SQLite store. A counting wrapper around the store (it delegates every call) counts the events
 * of the read model's streams that reach the process, by reads and by subscriptions.
 */

let dir: string | undefined;
let store: EventStore | undefined;
let runners: ProcessorRunner[] = [];

afterEach(async () => {
  for (const r of runners) await r.stop();
  runners = [];
  await store?.close();
  store = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

const openFileStore = async (): Promise<EventStore> => {
  dir = mkdtempSync(join(tmpdir(), 'sb-snapshots-'));
  store = await openEventStore(`sqlite:${join(dir, 'store.db')}`);
  return store;
};

/** The real store, counting the events whose stream starts with `prefix` that it hands out. */
const counting = (inner: EventStore, prefix: string): { store: EventStore; read: () => number } => {
  let read = 0;
  const count = (events: readonly RecordedEvent[]) => {
    read += events.filter((e) => e.streamId.startsWith(prefix)).length;
  };
  return {
    read: () => read,
    store: {
      ...inner,
      readAll: async (options) => {
        const events = await inner.readAll(options);
        count(events);
        return events;
      },
      readStream: async (streamId, options) => {
        const events = await inner.readStream(streamId, options);
        count(events);
        return events;
      },
      subscribe: (options) =>
        inner.subscribe({
          ...options,
          onEvent: (event) => {
            count([event]);
            return options.onEvent(event);
          },
        }),
    },
  };
};

const run = async (s: EventStore, processors: Processor[], clock = systemClock): Promise<ProcessorRunner> => {
  const runner = createProcessorRunner({ store: s, logger: createLogSink().logger(), clock, processors });
  runners.push(runner);
  await runner.start();
  await runner.waitForIdle(10_000);
  return runner;
};

const stop = async (runner: ProcessorRunner): Promise<void> => {
  await runner.stop();
  runners = runners.filter((r) => r !== runner);
};

/** Incidents `first`..`first+count-1`, each requested, linked (number = its index), triggered, carded. */
const addIncidents = async (s: EventStore, first: number, count: number): Promise<void> => {
  for (let n = first; n < first + count; n++) {
    const service = { id: 'PSVC1', name: 'Payments API' };
    await s.appendToStream(`incident-i${n}`, [
      { id: newId(), type: 'IncidentTriggerRequested', data: { service, title: `incident ${n}` } },
      { id: newId(), type: 'IncidentLinked', data: { upstreamId: `Q${n}`, number: n } },
      { id: newId(), type: 'IncidentTriggered', data: { service } },
      { id: newId(), type: 'IncidentCardPosted', data: { channel: 'C0OPS', ts: `${n}.0001` } },
    ]);
  }
};

/** Slack inputs the read models do not take (the bulk of a real store). */
const addInputs = async (s: EventStore, count: number): Promise<void> => {
  for (let i = 0; i < count; i += 50) {
    await s.appendToStream(
      'inbox-slack',
      Array.from({ length: Math.min(50, count - i) }, () => ({
        id: newId(),
        type: 'SlackInputReceived',
        kind: 'command' as const,
        data: { input: { source: 'slack' } },
      })),
    );
  }
};

const snapshotAt = (s: EventStore, name: string, atLeast: bigint) =>
  waitFor(async () => {
    const snap = await readSnapshot(s, name);
    return snap !== undefined && snap.position >= atLeast ? snap : undefined;
  });

const expectIncidents = (rm: IncidentReadModels, numbers: number[]) => {
  expect(
    rm
      .openIncidents()
      .map((r) => r.number)
      .sort((a, b) => a! - b!),
  ).toEqual(numbers);
  for (const n of numbers) {
    expect(rm.streamForNumber(n)).toBe(`incident-i${n}`);
    expect(rm.streamForRef(`Q${n}`)).toBe(`incident-i${n}`);
  }
};

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

describe('read models resume from snapshots', () => {
  it('a restarted incident read model reads only the events after its snapshot', async () => {
    const s = await openFileStore();
    await addIncidents(s, 1, 20);
    await addInputs(s, 300);
    await addIncidents(s, 21, 20);

    await s.appendToStream(`${INCIDENT_ROUTING_STREAM_PREFIX}PSVC1`, [
      {
        id: newId(),
        type: 'IncidentChannelSubscribed',
        data: { serviceId: 'PSVC1', serviceName: 'Payments API', channel: 'C0OPS' },
      },
    ]);

    const first = createIncidentReadModels({ store: s });
    const runner1 = await run(s, [first.processor]);
    expect(first.resumable.appliedSinceStart()).toBe(161);
    expectIncidents(first, range(1, 40));
    await stop(runner1);
    const snap = await readSnapshot(s, INCIDENT_READ_MODELS_ID);
    expect(snap?.version).toBe(INCIDENT_READ_MODELS_VERSION);

    await addInputs(s, 200);
    await addIncidents(s, 41, 2);

    const counted = counting(s, 'incident-');
    const second = createIncidentReadModels({ store: counted.store });
    const runner2 = await run(counted.store, [second.processor]);
    expect(second.resumable.appliedSinceStart()).toBe(8);
    expect(counted.read()).toBeLessThanOrEqual(16);
    expectIncidents(second, range(1, 42));
    expect(second.channelsForService('PSVC1')).toEqual(['C0OPS']);
    expect(second.streamForCard('C0OPS', '7.0001')).toBe('incident-i7');

    // Read-your-writes after a restore: a query right after a write sees it.
    await addIncidents(s, 43, 1);
    await second.catchUp();
    expect(second.streamForNumber(43)).toBe('incident-i43');

    // The same instance started again (onStart/restore resets it): nothing counted twice.
    await stop(runner2);
    const runner3 = await run(counted.store, [second.processor]);
    expect(second.resumable.appliedSinceStart()).toBe(0);
    expectIncidents(second, range(1, 43));
    await stop(runner3);
  });

  it('a read model whose version changed ignores the old snapshot and rebuilds from zero', async () => {
    const s = await openFileStore();
    await addIncidents(s, 1, 10);
    const head = (await s.headPosition())!;
    // What older code left: another version, at the head, with a state that knows nothing.
    await writeSnapshot(s, INCIDENT_READ_MODELS_ID, {
      version: INCIDENT_READ_MODELS_VERSION - 1,
      position: head,
      state: { rows: [] },
      applied: 0,
      now: new Date(),
    });

    const rm = createIncidentReadModels({ store: s });
    await run(s, [rm.processor]);
    expect(rm.resumable.appliedSinceStart()).toBe(40);
    expectIncidents(rm, range(1, 10));
    // …and it writes a snapshot of its own version once caught up.
    const fresh = await waitFor(async () => {
      const snap = await readSnapshot(s, INCIDENT_READ_MODELS_ID);
      return snap?.version === INCIDENT_READ_MODELS_VERSION ? snap : undefined;
    });
    expect(fresh.position).toBeGreaterThanOrEqual(head);
  });

  it('a read model whose events are rare starts after the history it does not take', async () => {
    const s = await openFileStore();
    await addInputs(s, 3_000);
    const first = createVerificationReadModel({ store: s });
    const runner1 = await run(s, [first.processor]);
    const head = (await s.headPosition())!;
    await snapshotAt(s, 'verification-read-model', head);
    await stop(runner1);

    const second = createVerificationReadModel({ store: s });
    await run(s, [second.processor]);
    // Restored at the head it had seen, not at its last event (it has none): the 3,000 inputs
    // before it are not scanned again.
    expect(second.resumable.applied()).toBeGreaterThanOrEqual(head);
    expect(second.resumable.appliedSinceStart()).toBe(0);
  });

  it('the scheduler restores its pending timers from a snapshot, and each fires once', async () => {
    const s = await openFileStore();
    const T0 = '2026-11-22T02:00:00.000Z';
    const at = (minutes: number) => new Date(Date.parse(T0) + minutes * 60_000);
    const clock = manualClock(T0);
    const bus = createCommandBus(s, ticketRoutes);
    const scheduler = (): Scheduler =>
      createScheduler({ dispatch: bus.dispatch, pollIntervalMs: 0, retry: { jitter: 0 } });
    await bus.dispatch(ticketCommand('OpenTicket', 't1', { commandId: 'open-t1' }));
    const touch = { type: 'TouchTicket', data: { ticketId: 't1' } };
    await scheduleTimer(s, { timerId: 'a', dueAt: at(10), command: touch, now: T0 });
    await scheduleTimer(s, { timerId: 'b', dueAt: at(20), command: touch, now: T0 });
    await scheduleTimer(s, { timerId: 'c', dueAt: at(5), command: touch, now: T0 });
    await cancelTimer(s, 'c', { now: T0, reason: 'not needed' });

    const first = scheduler();
    await stop(await run(s, [first], clock));
    expect((await readSnapshot(s, 'scheduler'))?.version).toBe(1);

    const counted = counting(s, 'timer-');
    const second = scheduler();
    const runner2 = await run(counted.store, [second], clock);
    expect(second.resumable.appliedSinceStart()).toBe(0);
    expect(counted.read()).toBe(0);
    expect(second.pending().map((t) => [t.timerId, t.dueAt])).toEqual([
      ['a', at(10)],
      ['b', at(20)],
    ]);

    clock.set(at(11));
    expect((await second.tick()).fired).toEqual([{ timerId: 'a', outcome: 'dispatched' }]);
    expect((await second.tick()).fired).toEqual([]);
    await runner2.waitForIdle();
    await stop(runner2);

    const third = scheduler();
    const runner3 = await run(s, [third], clock);
    expect(third.pending().map((t) => t.timerId)).toEqual(['b']);
    clock.set(at(21));
    expect((await third.tick()).fired).toEqual([{ timerId: 'b', outcome: 'dispatched' }]);
    expect((await third.tick()).fired).toEqual([]);
    await stop(runner3);

    const touched = (await s.readStream(ticketStreamId('t1'))).filter((e) => e.type === 'TicketTouched');
    expect(touched).toHaveLength(2);
  });

  it('npm run events -- rebuild <read model> rebuilds a snapshot from zero', async () => {
    const s = await openFileStore();
    await addIncidents(s, 1, 5);
    // A snapshot of the right version whose state lost every incident (a bug since fixed).
    await writeSnapshot(s, INCIDENT_READ_MODELS_ID, {
      version: INCIDENT_READ_MODELS_VERSION,
      position: (await s.headPosition())!,
      state: {
        streamIds: [],
        positions: [],
        phases: [],
        upstreamIds: [],
        numbers: [],
        serviceIds: [],
        subscriptions: [],
        upstreamBySlack: [],
        slackByUpstream: [],
        cardKeys: [],
        cardStreams: [],
      },
      applied: 0,
      now: new Date(),
    });
    const broken = createIncidentReadModels({ store: s });
    const runner1 = await run(s, [broken.processor]);
    expect(broken.openIncidents()).toEqual([]);
    await stop(runner1);

    const out: string[] = [];
    const err: string[] = [];
    const io = {
      env: {},
      stdout: (t: string) => out.push(t),
      stderr: (t: string) => err.push(t),
      tty: false,
      store: s,
    };
    expect(await runEventsCli(['rebuild', INCIDENT_READ_MODELS_ID, '--json'], io)).toBe(0);
    const line = JSON.parse(out.at(-1)!) as { readModel: string; applied: number; position: string };
    expect(line).toMatchObject({ readModel: INCIDENT_READ_MODELS_ID, applied: 20 });

    const fixed = createIncidentReadModels({ store: s });
    await run(s, [fixed.processor]);
    expect(fixed.resumable.appliedSinceStart()).toBe(0);
    expectIncidents(fixed, range(1, 5));

    expect(await runEventsCli(['rebuild', 'no-such-model'], io)).toBe(2);
    expect(err.join('\n')).toContain('incident-read-models');
    const snapshots = await s.readStream(snapshotStreamId(INCIDENT_READ_MODELS_ID));
    expect(snapshots).toHaveLength(2);
    expect((await readSnapshot(s, INCIDENT_READ_MODELS_ID))?.applied).toBe(20);
  });
});

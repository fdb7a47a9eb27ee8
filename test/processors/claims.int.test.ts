import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { manualClock } from '../../src/core/clock.ts';
import { StoreUnavailableError } from '../../src/core/errors.ts';
import { newId } from '../../src/core/ids.ts';
import type { EventStore, RecordedEvent } from '../../src/eventStore/eventStore.ts';
import { createSqliteEventStore } from '../../src/eventStore/sqlite/sqliteEventStore.ts';
import { createClaims, leaseKey } from '../../src/processors/claims.ts';
import { createProcessorRunner, type Processor, type ProcessorRunner } from '../../src/processors/runner.ts';
import { createLogSink } from '../support/logSink.ts';
import { waitFor } from '../support/waitFor.ts';

/**
 * Two replicas in one test process, each with its own connection to one SQLite file (as two
 * processes would have): claims decide which runs the effectful processor, read models run on
 * both, and the other connection's appends wake live subscriptions at once (PRAGMA data_version).
 * Business time and each replica's monotonic time are the test's; only the claim rounds' cadence
 * (every third of the expiry) is real time.
 */

let dir: string | undefined;
const stores: EventStore[] = [];
const runners: ProcessorRunner[] = [];

afterEach(async () => {
  for (const r of runners.splice(0)) await r.stop();
  for (const s of stores.splice(0)) await s.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

const openConnection = (options: { pollIntervalMs?: number } = {}) => {
  dir ??= mkdtempSync(join(tmpdir(), 'sb-claims-'));
  const store = createSqliteEventStore({ path: join(dir, 'events.db'), ...options });
  stores.push(store);
  return store;
};

const work = (store: EventStore, n: number) =>
  store.appendToStream(`work-${n}`, [{ id: newId(), type: 'WorkRequested', data: { n } }]);

const recorder = (id: string, extra: Partial<Processor> = {}) => {
  const seen: RecordedEvent[] = [];
  const processor: Processor = {
    id,
    filter: { streamPrefixes: ['work-'] },
    async handle(event) {
      seen.push(event);
    },
    ...extra,
  };
  return { seen, processor };
};

const ns = (events: readonly RecordedEvent[]) => events.map((e) => e.data['n']);

describe('SQLite: appends by another connection', () => {
  it('wake a live subscription at once, without waiting for its poll', async () => {
    // The subscription's own poll is a minute away: only the data_version check can deliver in time.
    const reader = openConnection({ pollIntervalMs: 60_000 });
    const writer = openConnection();
    const seen: number[] = [];
    let live = false;
    const sub = reader.subscribe({
      from: 'start',
      onEvent: async (e) => void seen.push(e.data['n'] as number),
      onCaughtUp: () => {
        live = true;
      },
    });
    await waitFor(() => live || undefined, { what: 'the subscription live' });
    await work(writer, 1);
    await work(writer, 2);
    await waitFor(() => seen.length === 2 || undefined, {
      what: 'both appends delivered',
      timeoutMs: 20_000,
    });
    expect(seen).toEqual([1, 2]);
    await sub.stop();
  });
});

describe('processor claims between two replicas', () => {
  const EXPIRY_MS = 3_000;
  const clock = manualClock();

  /** A replica: its own connection, monotonic time, claims; `paused` makes its lease writes fail. */
  const replica = (id: string) => {
    const store = openConnection();
    let mono = 0;
    const state = { paused: false };
    // A fault at the store's door (the process cannot write its lease), over the real store.
    const door: EventStore = {
      ...store,
      storeCheckpoint: (key, position) =>
        state.paused && key === leaseKey(id)
          ? Promise.reject(new StoreUnavailableError('paused'))
          : store.storeCheckpoint(key, position),
    };
    const claims = createClaims({
      store: door,
      clock,
      replicaId: id,
      expiryMs: EXPIRY_MS,
      monotonicNow: () => mono,
    });
    const effects = recorder('effects');
    const view = recorder('view', { everyReplica: true });
    const runner = createProcessorRunner({
      store: door,
      clock,
      logger: createLogSink().logger(),
      processors: [view.processor, effects.processor],
      claims,
      checkpointIntervalMs: 10,
    });
    runners.push(runner);
    return {
      store,
      runner,
      effects: effects.seen,
      view: view.seen,
      state,
      advance: (ms: number) => {
        mono += ms;
      },
      held: () => runner.claims()?.processors.find((p) => p.id === 'effects'),
    };
  };

  it('one replica runs the effects, both run the read model; a replica that stops renewing is fenced and the other takes over from the checkpoint', async () => {
    const a = replica('replica-a');
    const b = replica('replica-b');
    await a.runner.start();
    await b.runner.start();
    expect(a.held()).toEqual({ id: 'effects', owner: 'replica-a', held: true });
    expect(b.held()).toEqual({ id: 'effects', owner: 'replica-a', held: false });
    const bStatus = (await b.runner.status()).find((s) => s.id === 'effects');
    expect(bStatus).toMatchObject({ running: false, claim: { owner: 'replica-a', held: false } });
    expect((await b.runner.status()).find((s) => s.id === 'view')?.claim).toBeUndefined();

    await work(a.store, 1);
    await work(b.store, 2);
    await waitFor(() => (a.effects.length === 2 && a.view.length === 2 && b.view.length === 2) || undefined, {
      what: 'both appends seen',
    });
    expect(ns(a.effects)).toEqual([1, 2]);
    expect(b.effects).toEqual([]);
    await a.runner.waitForIdle();

    // A stalls: its lease is not renewed and, by its own monotonic clock, its claim has lapsed.
    a.state.paused = true;
    a.advance(EXPIRY_MS);
    await work(b.store, 3);
    await waitFor(() => (b.view.length === 3 && a.view.length === 3) || undefined, {
      what: 'event 3 in both read models',
    });
    // A's read model took it; A's effects did not (it no longer holds a valid claim).
    expect(ns(a.effects)).toEqual([1, 2]);
    // B may take over only once A's lease has expired by B's clock.
    clock.advance(EXPIRY_MS + 1);
    await waitFor(() => b.held()?.held || undefined, { what: 'B holding the claim', timeoutMs: 10_000 });
    await waitFor(() => b.effects.length === 1 || undefined, { what: 'event 3 handled by B' });
    expect(ns(b.effects)).toEqual([3]);
    await waitFor(() => a.held()?.held === false || undefined, { what: 'A letting go' });
    expect(ns(a.effects)).toEqual([1, 2]);

    // A comes back: B's lease holds, so A stays off; the next event is B's alone.
    a.state.paused = false;
    await work(a.store, 4);
    await waitFor(() => (b.effects.length === 2 && a.view.length === 4) || undefined, { what: 'event 4' });
    await waitFor(() => a.held()?.owner === 'replica-b' || undefined, { what: 'A reading B as the owner' });
    expect(ns(a.effects)).toEqual([1, 2]);
    expect(ns(b.effects)).toEqual([3, 4]);
    // A never moved the checkpoint after it lost the claim: B's stands.
    await b.runner.waitForIdle();
    expect(await b.store.readCheckpoint('effects')).toBe((await b.store.headPosition())!);
  });

  it('a replica that stops releases its claims: the other takes over without waiting for the expiry', async () => {
    const a = replica('replica-a');
    const b = replica('replica-b');
    await a.runner.start();
    await b.runner.start();
    await work(a.store, 1);
    await waitFor(() => a.effects.length === 1 || undefined, { what: 'event 1 handled by A' });
    await a.runner.stop();
    runners.splice(runners.indexOf(a.runner), 1);
    // No time passes on any clock: the release alone lets B claim.
    await waitFor(() => b.held()?.held || undefined, { what: 'B holding the claim', timeoutMs: 10_000 });
    await work(b.store, 2);
    await waitFor(() => b.effects.length === 1 || undefined, { what: 'event 2 handled by B' });
    expect(ns(b.effects)).toEqual([2]);
  });
});

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { type CommandBus, createCommandBus } from '../../src/application/dispatch.ts';
import { type ManualClock, manualClock } from '../../src/core/clock.ts';
import type { EventStore } from '../../src/eventStore/eventStore.ts';
import { openEventStore } from '../../src/eventStore/openEventStore.ts';
import { createSqliteEventStore } from '../../src/eventStore/sqlite/sqliteEventStore.ts';
import { failureKindOf } from '../../src/processors/retryPolicy.ts';
import { createProcessorRunner, type ProcessorRunner } from '../../src/processors/runner.ts';
import { createScheduler, readTimer, type Scheduler } from '../../src/processors/scheduler.ts';
import { createCrashRig } from '../support/crashRig.ts';
import { createLogSink } from '../support/logSink.ts';
import {
  createTicketFilingReactor,
  TICKET_FILING_PROCESSOR,
  ticketCommand,
  ticketRetryTimerId,
  ticketRoutes,
  ticketStreamId,
} from '../support/ticketLifecycle.ts';
import { openTicketTracker, type TicketTracker } from '../support/ticketTracker.ts';

/**
 * The runner side of durable upstream calls (src/processors/upstreamCall.ts), driven through a tiny
 * lifecycle that files tickets with a tracker: the real store, command bus, decider, processor
 * runner and scheduler; only the tracker (the vendor) is a stand-in. The clock is a manual one, so
 * retries are due when the test says, not when the machine gets round to it.
 */
const T0 = '2026-11-22T02:00:00.000Z';
const POLICY = { maxAttempts: 3, baseMs: 60_000, maxMs: 600_000, jitter: 0 } as const;

let store: EventStore | undefined;
let runner: ProcessorRunner | undefined;
let tracker: TicketTracker | undefined;
let dir: string | undefined;
/** The crash test's child processes (test/support/crashRig.ts). */
const rig = createCrashRig('sb-crash-upstream-');

afterEach(async () => {
  await runner?.stop();
  runner = undefined;
  await store?.close();
  store = undefined;
  tracker?.close();
  tracker = undefined;
  await rig.killAll();
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});
afterAll(() => rig.cleanup());

type Harness = {
  store: EventStore;
  bus: CommandBus;
  clock: ManualClock;
  scheduler: Scheduler;
  tracker: TicketTracker;
  start(): Promise<void>;
  stop(): Promise<void>;
  idle(): Promise<void>;
};

const setup = async (
  policy: Parameters<typeof createTicketFilingReactor>[0]['policy'] = POLICY,
): Promise<Harness> => {
  store = await openEventStore('sqlite::memory:');
  tracker = openTicketTracker();
  const clock = manualClock(T0);
  const bus = createCommandBus(store, ticketRoutes);
  const scheduler = createScheduler({ dispatch: bus.dispatch, pollIntervalMs: 0 });
  const processors = [scheduler, createTicketFilingReactor({ tracker, dispatch: bus.dispatch, policy })];
  const h: Harness = {
    store,
    bus,
    clock,
    scheduler,
    tracker,
    async start() {
      runner = createProcessorRunner({
        store: h.store,
        logger: createLogSink().logger(),
        clock,
        processors,
        retry: { maxAttempts: 2, baseMs: 1, maxMs: 2 },
      });
      await runner.start();
    },
    async stop() {
      await runner?.stop();
      runner = undefined;
    },
    idle: async () => void (await runner?.waitForIdle()),
  };
  await h.start();
  return h;
};

/** Opens ticket `id` and asks to file it; returns the filing's request id. */
const fileTicket = async (h: Harness, id: string): Promise<string> => {
  await h.bus.dispatch(ticketCommand('OpenTicket', id, { commandId: `open-${id}` }));
  await h.bus.dispatch(ticketCommand('FileTicket', id, { commandId: `file-${id}` }));
  return `file-${id}`;
};

const events = async (s: EventStore, id: string) =>
  (await s.readStream(ticketStreamId(id))).filter((m) => m.kind === 'event');
const types = async (s: EventStore, id: string) => (await events(s, id)).map((e) => e.type);

/** Fires the due retry timers at `iso` and waits until everything they started is handled. */
const fireAt = async (h: Harness, iso: string) => {
  h.clock.set(iso);
  const tick = await h.scheduler.tick();
  await h.idle();
  return tick.fired;
};

describe('durable upstream calls (one mechanism, every lifecycle)', () => {
  it('calls once and records the success through the decider; nothing is looked up first', async () => {
    const h = await setup();
    await fileTicket(h, 't1');
    await h.idle();
    expect(h.tracker.calls()).toEqual([{ ticketId: 't1', outcome: 'filed' }]);
    const filed = (await events(h.store, 't1')).at(-1)!;
    expect(filed).toMatchObject({
      type: 'TicketFiled',
      data: { requestId: 'file-t1', trackerId: 'TRK-1', at: T0 },
      metadata: { actor: 'system:ticket-filing', commandType: 'RecordTicketFiled' },
    });
    // A first delivery of a first attempt has nothing to check.
    expect(h.tracker.finds()).toBe(0);
  });

  it('retries after a retryable failure with a durable timer, and succeeds', async () => {
    const h = await setup();
    h.tracker.failNext({ times: 1, status: 503 });
    const requestId = await fileTicket(h, 't1');
    await h.idle();
    const failed = (await events(h.store, 't1')).find((e) => e.type === 'TicketFilingFailed');
    expect(failed?.data).toEqual({
      requestId,
      action: 'file',
      attempt: 1,
      maxAttempts: 3,
      code: 'SB_UPSTREAM_UNAVAILABLE',
      message: 'tracker answered 503',
      nextAttemptAt: '2026-11-22T02:01:00.000Z',
      final: false,
      at: T0,
    });
    const timerId = ticketRetryTimerId(requestId, 1);
    expect((await readTimer(h.store, timerId)).status).toBe('pending');

    expect(await fireAt(h, '2026-11-22T02:00:59.000Z')).toEqual([]);
    expect(await fireAt(h, '2026-11-22T02:01:00.000Z')).toEqual([{ timerId, outcome: 'dispatched' }]);
    expect(await types(h.store, 't1')).toEqual([
      'TicketOpened',
      'TicketFilingRequested',
      'TicketFilingFailed',
      'TicketFilingRetried',
      'TicketFiled',
    ]);
    expect(h.tracker.calls().map((c) => c.outcome)).toEqual(['failed', 'filed']);
    // The retry looked at the tracker first (the failed attempt might have landed); it had not.
    expect(h.tracker.finds()).toBe(1);
    expect(h.tracker.filed('t1')).toBe(1);
  });

  it('records the failure as final after the last attempt, and schedules nothing more', async () => {
    const h = await setup();
    h.tracker.failNext({ times: 3, status: 502 });
    const requestId = await fileTicket(h, 't1');
    await h.idle();
    await fireAt(h, '2026-11-22T02:01:00.000Z'); // attempt 2, 2 min later: attempt 3
    await fireAt(h, '2026-11-22T02:03:00.000Z');
    const failures = (await events(h.store, 't1')).filter((e) => e.type === 'TicketFilingFailed');
    expect(failures.map((f) => [f.data.attempt, f.data.nextAttemptAt, f.data.final])).toEqual([
      [1, '2026-11-22T02:01:00.000Z', false],
      [2, '2026-11-22T02:03:00.000Z', false],
      [3, null, true],
    ]);
    expect(h.tracker.calls()).toHaveLength(3);
    expect(h.scheduler.pending()).toEqual([]);
    expect((await readTimer(h.store, ticketRetryTimerId(requestId, 3))).status).toBe('unknown');
    // Given up: a late retry command changes nothing and calls nothing.
    await h.bus.dispatch({
      type: 'RetryTicketFiling',
      data: { ticketId: 't1', requestId, action: 'file', attempt: 4 },
      metadata: { now: '2026-11-22T03:00:00.000Z', commandId: 'late-retry', actor: 'system:test' },
    });
    await h.idle();
    expect(h.tracker.calls()).toHaveLength(3);
  });

  it('gives up at once on a failure no retry can fix', async () => {
    const h = await setup();
    h.tracker.failNext({ code: 'SB_UPSTREAM_AUTH', status: 401 });
    await fileTicket(h, 't1');
    await h.idle();
    const failed = (await events(h.store, 't1')).filter((e) => e.type === 'TicketFilingFailed');
    expect(failed.map((f) => [f.data.attempt, f.data.code, f.data.final])).toEqual([
      [1, 'SB_UPSTREAM_AUTH', true],
    ]);
    expect(h.scheduler.pending()).toEqual([]);
  });

  it('does not send an attempt that is no longer current', async () => {
    const h = await setup();
    h.tracker.failNext({ times: 1 });
    const requestId = await fileTicket(h, 't1');
    await h.idle();
    expect(h.tracker.calls()).toHaveLength(1);

    // Attempt 2 starts while the processors are down, and then every event is delivered again from
    // the start: the request event (attempt 1) is stale now and is not sent; attempt 2 is, once.
    await h.stop();
    await h.bus.dispatch({
      type: 'RetryTicketFiling',
      data: { ticketId: 't1', requestId, action: 'file', attempt: 2 },
      metadata: { now: '2026-11-22T02:01:00.000Z', commandId: 'retry-2', actor: 'system:scheduler' },
    });
    await h.store.storeCheckpoint(TICKET_FILING_PROCESSOR, 0n);
    await h.start();
    await h.idle();
    expect(h.tracker.calls().map((c) => c.outcome)).toEqual(['failed', 'filed']);
    const stream = await events(h.store, 't1');
    expect(stream.map((e) => e.type)).toEqual([
      'TicketOpened',
      'TicketFilingRequested',
      'TicketFilingFailed',
      'TicketFilingRetried',
      'TicketFiled',
    ]);
    // The call was made for attempt 2, caused by its retry, not by the stale request event.
    expect(stream[4]!.metadata.causationId).toBe(stream[3]!.id);
    // Attempt 1's retry timer fires late: the decider drops the retry, nothing is called.
    expect(await fireAt(h, '2026-11-22T02:05:00.000Z')).toEqual([
      { timerId: ticketRetryTimerId(requestId, 1), outcome: 'dispatched' },
    ]);
    expect(await types(h.store, 't1')).toHaveLength(5);
    expect(h.tracker.calls()).toHaveLength(2);
  });

  it('never sends a request dropped while its retry waited', async () => {
    const h = await setup();
    h.tracker.failNext({ times: 1 });
    const requestId = await fileTicket(h, 't1');
    await h.idle();
    // Attempt 2 is recorded while the processors are down, then the ticket is closed (which drops
    // the filing) before they get to it.
    await h.stop();
    await h.bus.dispatch({
      type: 'RetryTicketFiling',
      data: { ticketId: 't1', requestId, action: 'file', attempt: 2 },
      metadata: { now: '2026-11-22T02:01:00.000Z', commandId: 'retry-2', actor: 'system:scheduler' },
    });
    await h.bus.dispatch(ticketCommand('CloseTicket', 't1', { commandId: 'close-t1' }));
    await h.start();
    await h.idle();
    expect(await types(h.store, 't1')).toEqual([
      'TicketOpened',
      'TicketFilingRequested',
      'TicketFilingFailed',
      'TicketFilingRetried',
      'TicketClosed',
    ]);
    expect(h.tracker.calls()).toHaveLength(1);
    expect(h.tracker.finds()).toBe(0);
  });

  it('redelivered while waiting for its retry, an attempt only makes sure the timer exists', async () => {
    const h = await setup();
    h.tracker.failNext({ times: 1 });
    const requestId = await fileTicket(h, 't1');
    await h.idle();
    await h.stop();
    await h.store.storeCheckpoint(TICKET_FILING_PROCESSOR, 0n);
    await h.start();
    await h.idle();
    expect(h.tracker.calls()).toHaveLength(1);
    expect(h.scheduler.pending().map((t) => t.timerId)).toEqual([ticketRetryTimerId(requestId, 1)]);
  });

  it('checks before repeating: a retry whose earlier attempt landed is recorded, not sent again', async () => {
    const h = await setup();
    // Filed at the tracker, but the answer is lost: recorded as a failed attempt.
    h.tracker.failNext({ times: 1, afterApply: true });
    const requestId = await fileTicket(h, 't1');
    await h.idle();
    expect(await types(h.store, 't1')).toContain('TicketFilingFailed');
    expect(h.tracker.filed('t1')).toBe(1);

    await fireAt(h, '2026-11-22T02:01:00.000Z');
    expect(h.tracker.calls()).toHaveLength(1);
    expect(h.tracker.filed('t1')).toBe(1);
    expect(h.tracker.finds()).toBe(1);
    const filed = (await events(h.store, 't1')).at(-1)!;
    expect(filed).toMatchObject({ type: 'TicketFiled', data: { requestId, trackerId: 'TRK-1' } });
  });
});

describe('a crash between the call and its recorded outcome', () => {
  it('the redelivered request finds the call landed and does not call twice', async () => {
    dir = mkdtempSync(join(tmpdir(), 'sb-crash-upstream-'));
    const eventsPath = join(dir, 'events.db');
    const trackerPath = join(dir, 'tracker.db');
    const seed = createSqliteEventStore({ path: eventsPath });
    const bus = createCommandBus(seed, ticketRoutes);
    await bus.dispatch(ticketCommand('OpenTicket', 't1', { commandId: 'open-t1' }));
    const { events: requested } = await bus.dispatch(
      ticketCommand('FileTicket', 't1', { commandId: 'file-t1' }),
    );
    await seed.close();

    // 1st run: killed after the tracker filed the ticket, before the outcome was recorded.
    const first = runChild([eventsPath, trackerPath], { PAUSE_AFTER_CALL: '1' });
    await first.waitForLine(/^filed t1$/);
    await rig.kill9(first);

    const mid = createSqliteEventStore({ path: eventsPath });
    expect((await mid.readStream(ticketStreamId('t1'))).map((m) => m.type)).not.toContain('TicketFiled');
    expect((await mid.readCheckpoint(TICKET_FILING_PROCESSOR)) ?? 0n).toBeLessThan(requested[0]!.position);
    await mid.close();

    // 2nd run: the request is delivered again (attempt 1, as a redelivery); the check finds the ticket.
    const second = runChild([eventsPath, trackerPath]);
    await second.waitForLine(/^done$/);
    expect((await second.exited).code).toBe(0);
    expect(second.lines).toContain('checked t1 TRK-1');
    expect(second.lines.filter((l) => l.startsWith('filed'))).toEqual([]);

    const end = createSqliteEventStore({ path: eventsPath });
    const stream = (await end.readStream(ticketStreamId('t1'))).filter((m) => m.kind === 'event');
    expect(stream.map((m) => m.type)).toEqual(['TicketOpened', 'TicketFilingRequested', 'TicketFiled']);
    expect(stream[2]!.data).toMatchObject({ requestId: 'file-t1', trackerId: 'TRK-1' });
    await end.close();
    const t = openTicketTracker(trackerPath);
    expect(t.filed('t1')).toBe(1);
    expect(t.calls()).toEqual([{ ticketId: 't1', outcome: 'filed' }]);
    t.close();
  });
});

/** Runs the fixture with the Node that runs vitest (Node 24, type stripping); collects stdout lines. */
const runChild = (args: string[], env: Record<string, string> = {}) =>
  rig.runFixture(resolve(import.meta.dirname, 'fixtures', 'crashUpstreamChild.ts'), args, env);

describe('a retry policy that depends on the failure', () => {
  const failures = async (h: Harness, id: string) =>
    (await events(h.store, id))
      .filter((e) => e.type === 'TicketFilingFailed')
      .map((f) => [f.data.attempt, f.data.maxAttempts, f.data.code, f.data.nextAttemptAt, f.data.final]);

  it('by kind of failure: a rate limit waits for the reset the vendor named, with its own attempts', async () => {
    const h = await setup({ base: POLICY, byFailure: { rate_limited: { maxAttempts: 2 } } });
    h.tracker.failNext({ times: 2, code: 'SB_UPSTREAM_RATE_LIMITED', status: 429, retryAfterMs: 90_000 });
    await fileTicket(h, 't1');
    await h.idle();
    // Not the policy's 1 minute: the 90 s the tracker asked for.
    expect(await failures(h, 't1')).toEqual([
      [1, 2, 'SB_UPSTREAM_RATE_LIMITED', '2026-11-22T02:01:30.000Z', false],
    ]);
    expect(await fireAt(h, '2026-11-22T02:01:00.000Z')).toEqual([]);
    await fireAt(h, '2026-11-22T02:01:30.000Z');
    expect((await failures(h, 't1')).at(-1)).toEqual([2, 2, 'SB_UPSTREAM_RATE_LIMITED', null, true]);
    expect(h.tracker.calls()).toHaveLength(2);
  });

  it('per operation: an override of the request’s action', async () => {
    const h = await setup({ base: POLICY, byAction: { file: { maxAttempts: 1 } } });
    h.tracker.failNext({ times: 1, status: 503 });
    await fileTicket(h, 't1');
    await h.idle();
    expect(await failures(h, 't1')).toEqual([[1, 1, 'SB_UPSTREAM_UNAVAILABLE', null, true]]);
    expect(h.scheduler.pending()).toEqual([]);
  });

  it('an auth failure is never retried blindly: only a policy that names a wait retries it, then', async () => {
    const h = await setup(({ error }) =>
      failureKindOf(error) === 'auth' ? { ...POLICY, retryAfterMs: 5 * 60_000 } : POLICY,
    );
    h.tracker.failNext({ times: 1, code: 'SB_UPSTREAM_AUTH', status: 401 });
    await fileTicket(h, 't1');
    await h.idle();
    expect(await failures(h, 't1')).toEqual([[1, 3, 'SB_UPSTREAM_AUTH', '2026-11-22T02:05:00.000Z', false]]);
    await fireAt(h, '2026-11-22T02:05:00.000Z');
    expect((await events(h.store, 't1')).at(-1)?.type).toBe('TicketFiled');
    expect(h.tracker.filed('t1')).toBe(1);
  });
});

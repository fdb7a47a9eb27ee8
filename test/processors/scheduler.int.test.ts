import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type CommandBus, createCommandBus } from '../../src/application/dispatch.ts';
import { type ManualClock, manualClock } from '../../src/core/clock.ts';
import { IllegalStateError, NotFoundError } from '../../src/core/errors.ts';
import type { Command } from '../../src/core/messages.ts';
import type { EventStore } from '../../src/eventStore/eventStore.ts';
import { openEventStore } from '../../src/eventStore/openEventStore.ts';
import { createProcessorRunner, type ProcessorRunner } from '../../src/processors/runner.ts';
import {
  cancelTimer,
  createScheduler,
  readTimer,
  rescheduleTimer,
  type Scheduler,
  scheduleTimer,
  timerCommandId,
  timerStreamId,
} from '../../src/processors/scheduler.ts';
import { createLogSink } from '../support/logSink.ts';
import { ticketCommand, ticketRoutes, ticketStreamId } from '../support/ticketLifecycle.ts';
import { waitFor } from '../support/waitFor.ts';

const T0 = '2026-11-22T02:00:00.000Z';
const at = (minutes: number) => new Date(Date.parse(T0) + minutes * 60_000);

let dir: string | undefined;
let store: EventStore | undefined;
let runner: ProcessorRunner | undefined;

afterEach(async () => {
  await runner?.stop();
  runner = undefined;
  await store?.close();
  store = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

type Harness = {
  store: EventStore;
  bus: CommandBus;
  clock: ManualClock;
  scheduler: Scheduler;
  runner: ProcessorRunner;
};

const startScheduler = async (
  s: EventStore,
  clock: ManualClock,
  options: { dispatch?: (c: Command) => Promise<unknown>; pollIntervalMs?: number } = {},
): Promise<Harness> => {
  const bus = createCommandBus(s, ticketRoutes);
  const scheduler = createScheduler({
    dispatch: options.dispatch ?? bus.dispatch,
    pollIntervalMs: options.pollIntervalMs ?? 0,
    retry: { maxAttempts: 3, baseMs: 1_000, maxMs: 10_000, jitter: 0 },
  });
  runner = createProcessorRunner({
    store: s,
    logger: createLogSink().logger(),
    clock,
    processors: [scheduler],
  });
  await runner.start();
  await runner.waitForIdle();
  return { store: s, bus, clock, scheduler, runner };
};

const openTicket = (bus: CommandBus, ticketId: string) =>
  bus.dispatch(ticketCommand('OpenTicket', ticketId, { commandId: `open-${ticketId}` }));

const touchTimer = (ticketId: string) => ({ type: 'TouchTicket', data: { ticketId } });

describe('durable scheduler', () => {
  it('fires a due timer once, as a command carrying the clock time and a deterministic id', async () => {
    store = await openEventStore('sqlite::memory:');
    const clock = manualClock(T0);
    const h = await startScheduler(store, clock);
    await openTicket(h.bus, 't1');
    const scheduled = await scheduleTimer(store, {
      timerId: 'touch-t1',
      dueAt: at(10),
      command: touchTimer('t1'),
      now: T0,
    });
    expect(scheduled).toEqual({ streamId: 'timer-touch-t1', alreadyScheduled: false });
    await h.runner.waitForIdle();
    expect(h.scheduler.pending().map((t) => t.timerId)).toEqual(['touch-t1']);

    clock.set(at(9));
    expect(await h.scheduler.tick()).toEqual({ ready: true, fired: [], deferred: [] });

    clock.set(at(11));
    expect((await h.scheduler.tick()).fired).toEqual([{ timerId: 'touch-t1', outcome: 'dispatched' }]);
    const ticket = await store.readStream(ticketStreamId('t1'));
    const touch = ticket.find((m) => m.type === 'TicketTouched');
    expect(touch?.data).toMatchObject({ at: at(11).toISOString(), by: 'system:scheduler' });
    expect(touch?.metadata).toMatchObject({
      commandId: timerCommandId('touch-t1'),
      now: at(11).toISOString(),
    });

    clock.set(at(30));
    expect((await h.scheduler.tick()).fired).toEqual([]);
    const timer = await readTimer(store, 'touch-t1');
    expect(timer.status).toBe('fired');
    expect(timer.fired).toMatchObject({
      outcome: 'dispatched',
      firedAt: at(11).toISOString(),
      dueAt: at(10).toISOString(),
      commandType: 'TouchTicket',
      attempts: 1,
    });
    await h.runner.waitForIdle();
    expect(h.scheduler.pending()).toEqual([]);
    expect(ticket.filter((m) => m.type === 'TicketTouched')).toHaveLength(1);
  });

  it('scheduling the same timer id again is a no-op', async () => {
    store = await openEventStore('sqlite::memory:');
    await scheduleTimer(store, { timerId: 'x', dueAt: at(5), command: touchTimer('t1'), now: T0 });
    const again = await scheduleTimer(store, {
      timerId: 'x',
      dueAt: at(50),
      command: touchTimer('t1'),
      now: T0,
    });
    expect(again.alreadyScheduled).toBe(true);
    expect(await store.readStream(timerStreamId('x'))).toHaveLength(1);
    expect((await readTimer(store, 'x')).dueAt).toEqual(at(5));
  });

  it('never fires a cancelled timer, even when the cancel is not projected yet', async () => {
    store = await openEventStore('sqlite::memory:');
    const clock = manualClock(T0);
    const h = await startScheduler(store, clock);
    await openTicket(h.bus, 't1');
    await scheduleTimer(store, { timerId: 'a', dueAt: at(5), command: touchTimer('t1'), now: T0 });
    await scheduleTimer(store, { timerId: 'b', dueAt: at(5), command: touchTimer('t1'), now: T0 });
    await h.runner.waitForIdle();
    expect(await cancelTimer(store, 'a', { now: at(1), reason: 'acknowledged' })).toEqual({
      cancelled: true,
      status: 'cancelled',
    });
    await h.runner.waitForIdle();
    // 'b' is cancelled and the clock moved on before the scheduler has seen the cancellation.
    await cancelTimer(store, 'b', { now: at(2), reason: 'resolved' });
    clock.set(at(6));
    expect((await h.scheduler.tick()).fired).toEqual([]);
    expect((await store.readStream(ticketStreamId('t1'))).filter((m) => m.type === 'TicketTouched')).toEqual(
      [],
    );
    expect(await cancelTimer(store, 'a', { now: at(7), reason: 'again' })).toEqual({
      cancelled: false,
      status: 'cancelled',
    });
    expect(await cancelTimer(store, 'nope', { now: at(7), reason: 'x' })).toEqual({
      cancelled: false,
      status: 'unknown',
    });
    expect((await readTimer(store, 'a')).cancelled).toMatchObject({
      reason: 'acknowledged',
      cancelledAt: at(1).toISOString(),
    });
  });

  it('records a lifecycle refusal as a rejected firing', async () => {
    store = await openEventStore('sqlite::memory:');
    const clock = manualClock(T0);
    const h = await startScheduler(store, clock);
    await scheduleTimer(store, {
      timerId: 'close-t9',
      dueAt: at(1),
      command: { type: 'CloseTicket', data: { ticketId: 't9' } },
      now: T0,
    });
    await h.runner.waitForIdle();
    clock.set(at(2));
    expect((await h.scheduler.tick()).fired).toEqual([
      { timerId: 'close-t9', outcome: 'rejected', errorCode: 'SB_ILLEGAL_STATE' },
    ]);
    expect((await readTimer(store, 'close-t9')).fired).toMatchObject({
      outcome: 'rejected',
      errorCode: 'SB_ILLEGAL_STATE',
    });
  });

  it('reschedules a pending timer and refuses to reschedule a fired one', async () => {
    store = await openEventStore('sqlite::memory:');
    const clock = manualClock(T0);
    const h = await startScheduler(store, clock);
    await openTicket(h.bus, 't1');
    await expect(rescheduleTimer(store, { timerId: 'r', dueAt: at(1), now: T0 })).rejects.toBeInstanceOf(
      NotFoundError,
    );
    await scheduleTimer(store, { timerId: 'r', dueAt: at(5), command: touchTimer('t1'), now: T0 });
    const moved = await rescheduleTimer(store, { timerId: 'r', dueAt: at(20), now: at(1) });
    expect(moved.dueAt).toEqual(at(20));
    await rescheduleTimer(store, { timerId: 'r', dueAt: at(20), now: at(1) }); // same again: nothing new
    expect(await store.readStream(timerStreamId('r'))).toHaveLength(2);
    await h.runner.waitForIdle();
    clock.set(at(6));
    expect((await h.scheduler.tick()).fired).toEqual([]);
    clock.set(at(21));
    expect((await h.scheduler.tick()).fired).toEqual([{ timerId: 'r', outcome: 'dispatched' }]);
    await expect(rescheduleTimer(store, { timerId: 'r', dueAt: at(60), now: at(22) })).rejects.toBeInstanceOf(
      IllegalStateError,
    );
  });

  it('survives a restart: a new scheduler on the same file fires the due timer exactly once', async () => {
    dir = mkdtempSync(join(tmpdir(), 'sb-scheduler-'));
    const url = `sqlite:${join(dir, 'events.db')}`;
    store = await openEventStore(url);
    let h = await startScheduler(store, manualClock(T0));
    await openTicket(h.bus, 't1');
    await scheduleTimer(store, { timerId: 'escalate-t1', dueAt: at(15), command: touchTimer('t1'), now: T0 });
    await h.runner.waitForIdle();
    expect((await h.scheduler.tick()).fired).toEqual([]);
    await h.runner.stop();
    await store.close();

    store = await openEventStore(url);
    h = await startScheduler(store, manualClock(at(16)));
    expect(h.scheduler.pending().map((t) => t.timerId)).toEqual(['escalate-t1']);
    expect((await h.scheduler.tick()).fired).toEqual([{ timerId: 'escalate-t1', outcome: 'dispatched' }]);
    await h.runner.stop();
    await store.close();

    store = await openEventStore(url);
    h = await startScheduler(store, manualClock(at(60)));
    expect(h.scheduler.pending()).toEqual([]);
    expect((await h.scheduler.tick()).fired).toEqual([]);
    const touches = (await store.readStream(ticketStreamId('t1'))).filter((m) => m.type === 'TicketTouched');
    expect(touches).toHaveLength(1);
    expect((await store.readStream(timerStreamId('escalate-t1'))).map((e) => e.type)).toEqual([
      'TimerScheduled',
      'TimerFired',
    ]);
  });

  it('a re-fire after a crash between dispatch and TimerFired has no second effect', async () => {
    store = await openEventStore('sqlite::memory:');
    const bus = createCommandBus(store, ticketRoutes);
    await openTicket(bus, 't1');
    await scheduleTimer(store, { timerId: 'touch', dueAt: at(1), command: touchTimer('t1'), now: T0 });
    // What a scheduler that crashed after dispatching (and before recording TimerFired) left behind:
    await bus.dispatch({
      type: 'TouchTicket',
      data: { ticketId: 't1' },
      metadata: { now: at(2).toISOString(), commandId: timerCommandId('touch'), actor: 'system:scheduler' },
    });
    const clock = manualClock(at(3));
    const h = await startScheduler(store, clock);
    expect((await h.scheduler.tick()).fired).toEqual([{ timerId: 'touch', outcome: 'dispatched' }]);
    const touches = (await store.readStream(ticketStreamId('t1'))).filter((m) => m.type === 'TicketTouched');
    expect(touches).toHaveLength(1);
    expect(touches[0]?.data.at).toBe(at(2).toISOString());
  });

  it('a refused command re-fired after a crash is still recorded as rejected', async () => {
    store = await openEventStore('sqlite::memory:');
    const bus = createCommandBus(store, ticketRoutes);
    await openTicket(bus, 't1');
    await bus.dispatch(ticketCommand('CloseTicket', 't1', { commandId: 'close-1' }));
    await scheduleTimer(store, { timerId: 'touch', dueAt: at(1), command: touchTimer('t1'), now: T0 });
    const command = {
      type: 'TouchTicket',
      data: { ticketId: 't1' },
      metadata: { now: at(2).toISOString(), commandId: timerCommandId('touch'), actor: 'system:scheduler' },
    };
    await expect(bus.dispatch(command)).rejects.toMatchObject({ code: 'SB_ILLEGAL_STATE' });
    const h = await startScheduler(store, manualClock(at(3)));
    expect((await h.scheduler.tick()).fired).toEqual([
      { timerId: 'touch', outcome: 'rejected', errorCode: 'SB_ILLEGAL_STATE' },
    ]);
  });

  it('retries an unexpected dispatch failure by the clock, then gives up as failed', async () => {
    store = await openEventStore('sqlite::memory:');
    const clock = manualClock(T0);
    let calls = 0;
    const h = await startScheduler(store, clock, {
      dispatch: async () => {
        calls += 1;
        throw new Error('bus exploded');
      },
    });
    await scheduleTimer(store, { timerId: 'boom', dueAt: at(1), command: touchTimer('t1'), now: T0 });
    await h.runner.waitForIdle();
    clock.set(at(2));
    expect(await h.scheduler.tick()).toEqual({ ready: true, fired: [], deferred: ['boom'] });
    expect(h.scheduler.pending()[0]).toMatchObject({
      attempts: 1,
      nextTryAt: new Date(at(2).getTime() + 1_000),
    });
    expect((await h.scheduler.tick()).deferred).toEqual([]); // not before nextTryAt
    clock.advance(1_000);
    expect((await h.scheduler.tick()).deferred).toEqual(['boom']);
    clock.advance(2_000);
    expect((await h.scheduler.tick()).fired).toEqual([
      { timerId: 'boom', outcome: 'failed', errorCode: 'UNCODED' },
    ]);
    expect(calls).toBe(3);
    expect((await readTimer(store, 'boom')).fired).toMatchObject({
      outcome: 'failed',
      attempts: 3,
      errorMessage: 'bus exploded',
    });
  });

  it('ticks by itself when polling is on, and nothing fires before it has caught up', async () => {
    store = await openEventStore('sqlite::memory:');
    const bus = createCommandBus(store, ticketRoutes);
    await openTicket(bus, 't1');
    await scheduleTimer(store, { timerId: 'auto', dueAt: at(1), command: touchTimer('t1'), now: T0 });
    const scheduler = createScheduler({ dispatch: bus.dispatch, pollIntervalMs: 10 });
    expect(await scheduler.tick()).toEqual({ ready: false, fired: [], deferred: [] });
    const clock = manualClock(T0);
    runner = createProcessorRunner({
      store,
      logger: createLogSink().logger(),
      clock,
      processors: [scheduler],
    });
    await runner.start();
    await runner.waitForIdle();
    expect((await readTimer(store, 'auto')).status).toBe('pending');
    clock.set(at(2));
    const s = store;
    await waitFor(async () => (await readTimer(s, 'auto')).status === 'fired');
    expect(
      (await store.readStream(ticketStreamId('t1'))).filter((m) => m.type === 'TicketTouched'),
    ).toHaveLength(1);
  });
});

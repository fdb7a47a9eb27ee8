import type { Clock } from '../core/clock.ts';
import {
  asError,
  ConcurrencyError,
  IllegalStateError,
  NotFoundError,
  ValidationError,
} from '../core/errors.ts';
import { uuidv5 } from '../core/ids.ts';
import type { Command, CommandMetadata, JsonObject } from '../core/messages.ts';
import type { EventStore, RecordedEvent } from '../eventStore/eventStore.ts';
import { type Dispatch, dispatchCommand } from './dispatchCommand.ts';
import type { ProcessorLogger } from './ports.ts';
import {
  errorCodeOf,
  errorMessageOf,
  isPermanentError,
  nextAttemptAt,
  type RetryPolicy,
} from './retryPolicy.ts';
import type { Processor } from './runner.ts';
import { createResumableState, type ReadModelRegistration, type ResumableState } from './snapshots.ts';

/**
 * The command a timer dispatches when due. `now` and `commandId` are filled at fire time
 * (`now` = the clock then, `commandId` = `timerCommandId(timerId)`), `actor` defaults to
 * `system:scheduler` and `causationId` to the `TimerScheduled` event id.
 */
export type TimerCommand = Readonly<{
  type: string;
  data: JsonObject;
  metadata?: Readonly<Partial<Omit<CommandMetadata, 'now' | 'commandId'>>>;
}>;

export type TimerScheduledData = Readonly<{
  timerId: string;
  dueAt: string;
  command: TimerCommand;
  scheduledAt: string;
}>;
export type TimerRescheduledData = Readonly<{
  timerId: string;
  dueAt: string;
  previousDueAt: string;
  rescheduledAt: string;
}>;
export type TimerCancelledData = Readonly<{ timerId: string; reason: string; cancelledAt: string }>;
export type TimerFiredData = Readonly<{
  timerId: string;
  dueAt: string;
  firedAt: string;
  commandId: string;
  commandType: string;
  /**
   * `dispatched`: the lifecycle accepted the command (or had already handled it);
   * `rejected`: it refused it with a coded reason (e.g. escalating an incident already acknowledged);
   * `failed`: dispatching kept failing unexpectedly and the scheduler gave up (see logs).
   */
  outcome: 'dispatched' | 'rejected' | 'failed';
  errorCode?: string;
  errorMessage?: string;
  attempts: number;
}>;

export const TIMER_STREAM_PREFIX = 'timer-';
export const TIMER_EVENT_TYPES = [
  'TimerScheduled',
  'TimerRescheduled',
  'TimerCancelled',
  'TimerFired',
] as const;
const SCHEDULER_FILTER = { streamPrefixes: [TIMER_STREAM_PREFIX], eventTypes: [...TIMER_EVENT_TYPES] };
/** Version of the snapshotted pending timers: bump it when their shape or `apply` changes. */
export const SCHEDULER_STATE_VERSION = 1;
export const timerStreamId = (timerId: string): string => `${TIMER_STREAM_PREFIX}${timerId}`;
/** The command id a timer's command carries: the same on every (re-)fire, so lifecycles dedupe it. */
export const timerCommandId = (timerId: string): string => uuidv5(`timer:${timerId}`);

export type TimerStatus = 'unknown' | 'pending' | 'fired' | 'cancelled';

export type TimerState = Readonly<{
  timerId: string;
  status: TimerStatus;
  /** Revision of the timer stream's last event (undefined when unknown). */
  revision: number | undefined;
  dueAt?: Date;
  command?: TimerCommand;
  scheduledEventId?: string;
  fired?: TimerFiredData;
  cancelled?: TimerCancelledData;
}>;

const toIso = (value: Date | string, what: string): string => {
  const d = value instanceof Date ? value : new Date(value);
  if (Number.isNaN(d.getTime())) throw new ValidationError(`${what} is not a valid time: ${String(value)}`);
  return d.toISOString();
};

const checkTimerId = (timerId: string): void => {
  if (typeof timerId !== 'string' || !/^\S{1,200}$/.test(timerId)) {
    throw new ValidationError(`invalid timer id ${JSON.stringify(timerId)}: 1-200 characters, no spaces`);
  }
};

/** Folds a timer stream. The first terminal event (fired or cancelled) wins. */
export const foldTimer = (timerId: string, events: readonly RecordedEvent[]): TimerState => {
  let state: TimerState = { timerId, status: 'unknown', revision: undefined };
  for (const e of events) {
    const revision = e.revision;
    const terminal = state.status === 'fired' || state.status === 'cancelled';
    if (e.type === 'TimerScheduled' && state.status === 'unknown') {
      const d = e.data as unknown as TimerScheduledData;
      state = {
        timerId,
        status: 'pending',
        revision,
        dueAt: new Date(d.dueAt),
        command: d.command,
        scheduledEventId: e.id,
      };
    } else if (e.type === 'TimerRescheduled' && state.status === 'pending') {
      state = { ...state, revision, dueAt: new Date((e.data as unknown as TimerRescheduledData).dueAt) };
    } else if (e.type === 'TimerCancelled' && !terminal) {
      state = { ...state, status: 'cancelled', revision, cancelled: e.data as unknown as TimerCancelledData };
    } else if (e.type === 'TimerFired' && !terminal) {
      state = { ...state, status: 'fired', revision, fired: e.data as unknown as TimerFiredData };
    } else {
      state = { ...state, revision };
    }
  }
  return state;
};

/** Reads one timer's state from its stream. */
export const readTimer = async (store: EventStore, timerId: string): Promise<TimerState> => {
  checkTimerId(timerId);
  return foldTimer(timerId, await store.readStream(timerStreamId(timerId)));
};

/**
 * Schedules a durable timer: appends `TimerScheduled { timerId, dueAt, command, scheduledAt }` to
 * `timer-<timerId>` (expected no stream). Scheduling an id that exists is a no-op
 * (`alreadyScheduled: true`, the original due time stands), so a reactor can call it again on a
 * redelivery. Use a new timer id for a new occurrence (`reminder-<approvalId>-2`).
 *
 * @example
 * await scheduleTimer(store, {
 *   timerId: `escalate-${incidentId}-1`,
 *   dueAt: new Date(now.getTime() + 15 * 60_000),
 *   command: { type: 'EscalateIncident', data: { incidentId, level: 2 } },
 *   now,
 * });
 */
export const scheduleTimer = async (
  store: EventStore,
  input: Readonly<{ timerId: string; dueAt: Date | string; command: TimerCommand; now: Date | string }>,
): Promise<{ streamId: string; alreadyScheduled: boolean }> => {
  checkTimerId(input.timerId);
  if (!input.command || typeof input.command.type !== 'string' || input.command.type.length === 0) {
    throw new ValidationError(`timer ${input.timerId} needs a command with a type`);
  }
  const data: TimerScheduledData = {
    timerId: input.timerId,
    dueAt: toIso(input.dueAt, 'dueAt'),
    command: {
      type: input.command.type,
      data: input.command.data ?? {},
      ...(input.command.metadata ? { metadata: input.command.metadata } : {}),
    },
    scheduledAt: toIso(input.now, 'now'),
  };
  const streamId = timerStreamId(input.timerId);
  const result = await store.appendToStream(
    streamId,
    [
      {
        id: uuidv5(`timer-scheduled:${input.timerId}`),
        type: 'TimerScheduled',
        data: data as unknown as JsonObject,
      },
    ],
    { expectedRevision: 'no_stream' },
  );
  return { streamId, alreadyScheduled: result.deduplicated };
};

/**
 * Moves a pending timer's due time (`TimerRescheduled`). Throws NotFoundError for an unknown timer
 * and IllegalStateError for one that already fired or was cancelled (schedule a new id instead).
 * Repeating the same call on an unchanged stream is deduplicated.
 */
export const rescheduleTimer = async (
  store: EventStore,
  input: Readonly<{ timerId: string; dueAt: Date | string; now: Date | string }>,
): Promise<TimerState> => {
  const dueAt = toIso(input.dueAt, 'dueAt');
  for (let attempt = 0; ; attempt++) {
    const state = await readTimer(store, input.timerId);
    if (state.status === 'unknown') throw new NotFoundError(`no timer ${input.timerId}`);
    if (state.status !== 'pending') {
      throw new IllegalStateError(`timer ${input.timerId} already ${state.status}`, {
        details: { timerId: input.timerId, status: state.status },
      });
    }
    if (state.dueAt?.toISOString() === dueAt) return state;
    const data: TimerRescheduledData = {
      timerId: input.timerId,
      dueAt,
      previousDueAt: state.dueAt!.toISOString(),
      rescheduledAt: toIso(input.now, 'now'),
    };
    try {
      await store.appendToStream(
        timerStreamId(input.timerId),
        [
          {
            id: uuidv5(`timer-rescheduled:${input.timerId}:${state.revision}:${dueAt}`),
            type: 'TimerRescheduled',
            data: data as unknown as JsonObject,
          },
        ],
        { expectedRevision: state.revision! },
      );
      return { ...state, dueAt: new Date(dueAt), revision: state.revision! + 1 };
    } catch (error) {
      if (!(error instanceof ConcurrencyError) || attempt >= 3) throw error;
    }
  }
};

/**
 * Cancels a pending timer (`TimerCancelled { timerId, reason, cancelledAt }`); a cancelled timer never
 * fires. Cancelling an unknown, fired or already cancelled timer writes nothing and says so.
 * A cancel that races a firing already in progress may lose: the timer's command then carries a
 * deterministic id and the lifecycle decides on its own state, as for any late command.
 */
export const cancelTimer = async (
  store: EventStore,
  timerId: string,
  input: Readonly<{ now: Date | string; reason: string }>,
): Promise<{ cancelled: boolean; status: TimerStatus }> => {
  const cancelledAt = toIso(input.now, 'now');
  for (let attempt = 0; ; attempt++) {
    const state = await readTimer(store, timerId);
    if (state.status !== 'pending') return { cancelled: false, status: state.status };
    const data: TimerCancelledData = { timerId, reason: input.reason, cancelledAt };
    try {
      await store.appendToStream(
        timerStreamId(timerId),
        [
          {
            id: uuidv5(`timer-cancelled:${timerId}`),
            type: 'TimerCancelled',
            data: data as unknown as JsonObject,
          },
        ],
        { expectedRevision: state.revision! },
      );
      return { cancelled: true, status: 'cancelled' };
    } catch (error) {
      if (!(error instanceof ConcurrencyError) || attempt >= 3) throw error;
    }
  }
};

export type PendingTimer = Readonly<{
  timerId: string;
  dueAt: Date;
  commandType: string;
  /** Failed dispatch attempts so far (unexpected errors only). */
  attempts: number;
  /** Set after a failed attempt: not retried before this time. */
  nextTryAt?: Date;
}>;

export type TickResult = Readonly<{
  /** False until the scheduler has rebuilt its pending timers from the store (nothing fires before). */
  ready: boolean;
  fired: readonly Readonly<{ timerId: string; outcome: TimerFiredData['outcome']; errorCode?: string }>[];
  /** Due timers whose dispatch failed unexpectedly and will be tried again later. */
  deferred: readonly string[];
}>;

export type SchedulerOptions = Readonly<{
  /** The CommandBus's dispatch. */
  dispatch: Dispatch;
  /**
   * How often to look for due timers, in real ms (default 1000; each look reads the injected
   * clock). 0 turns automatic ticks off: call `tick()` yourself (tests with a manual clock).
   */
  pollIntervalMs?: number;
  /** Unexpected dispatch failures: tries per timer and backoff by the clock (default 5 from 1 s, ≤ 60 s). */
  retry?: Partial<RetryPolicy>;
  /** Most timers fired per tick (default 100); the rest wait for the next tick. */
  batchSize?: number;
  /** Snapshot the pending timers after this many timer events while live (default 10,000). */
  snapshotEvery?: number;
}>;

export type Scheduler = Processor &
  Readonly<{
    /** Fires every pending timer due by the clock, one after another. Ticks never overlap. */
    tick(): Promise<TickResult>;
    /** Pending timers in due order, as the scheduler sees them now. */
    pending(): PendingTimer[];
    /** Its snapshots (`rebuild()` for the CLI, `appliedSinceStart()` for tests). */
    resumable: ResumableState;
  }>;

type Entry = {
  timerId: string;
  dueAt: Date;
  commandType: string;
  attempts: number;
  nextTryAt: Date | undefined;
};

/**
 * The durable scheduler, a processor (`id: 'scheduler'`) to hand to the runner. Timers are events
 * (see scheduleTimer / cancelTimer); the scheduler keeps the pending ones in memory, resumed from a
 * snapshot (`snapshot-scheduler`, see src/processors/snapshots.ts): a start loads the pending timers
 * it had and reads only the timer events after them.
 *
 * When a timer is due by the injected clock, it re-reads the timer's stream (so a cancel that the
 * projection has not seen yet still wins), dispatches the command with `metadata.now` = the clock's
 * time and `commandId` = `timerCommandId(timerId)`, then appends `TimerFired { outcome }`. A crash
 * between the two re-fires the timer on restart; the lifecycle sees the same command id and answers
 * "already handled", so the effect happens once.
 *
 * @example
 * const scheduler = createScheduler({ dispatch: bus.dispatch });
 * const runner = createProcessorRunner({ store, logger, clock, processors: [scheduler, …] });
 */
/** The scheduler's pending timers, a read model of the kernel's (see ReadModelRegistration). */
export const SCHEDULER_READ_MODEL: ReadModelRegistration = {
  name: 'scheduler',
  create: () =>
    createScheduler({
      dispatch: () => Promise.reject(new Error('a rebuild dispatches nothing')),
      pollIntervalMs: 0,
    }).resumable,
};

export const createScheduler = (options: SchedulerOptions): Scheduler => {
  const pollIntervalMs = options.pollIntervalMs ?? 1_000;
  const retry: RetryPolicy = {
    maxAttempts: options.retry?.maxAttempts ?? 5,
    baseMs: options.retry?.baseMs ?? 1_000,
    maxMs: options.retry?.maxMs ?? 60_000,
    jitter: options.retry?.jitter ?? 0.2,
    ...(options.retry?.random ? { random: options.retry.random } : {}),
  };
  const batchSize = options.batchSize ?? 100;

  const pending = new Map<string, Entry>();
  let env: { store: EventStore; clock: Clock; logger: ProcessorLogger } | undefined;
  let live = false;
  let stopping = false;
  let interval: NodeJS.Timeout | undefined;
  let chain: Promise<unknown> = Promise.resolve();

  const notReady: TickResult = { ready: false, fired: [], deferred: [] };

  const fire = async (
    entry: Entry,
    deps: { store: EventStore; clock: Clock; logger: ProcessorLogger },
  ): Promise<{ fired?: TickResult['fired'][number]; deferred?: string }> => {
    const { store, clock, logger } = deps;
    const log = logger.child({ timerId: entry.timerId });
    const now = clock.now();
    try {
      const state = await readTimer(store, entry.timerId);
      if (state.status !== 'pending') {
        pending.delete(entry.timerId);
        return {};
      }
      if (state.dueAt && state.dueAt > now) {
        entry.dueAt = state.dueAt;
        return {};
      }
      const stored = state.command!;
      const commandId = timerCommandId(entry.timerId);
      const command: Command = {
        type: stored.type,
        data: stored.data,
        metadata: {
          ...stored.metadata,
          now: now.toISOString(),
          commandId,
          actor: stored.metadata?.actor ?? 'system:scheduler',
          causationId: stored.metadata?.causationId ?? state.scheduledEventId!,
        },
      };
      entry.attempts += 1;
      let fired: TimerFiredData;
      const base = {
        timerId: entry.timerId,
        dueAt: state.dueAt!.toISOString(),
        firedAt: now.toISOString(),
        commandId,
        commandType: stored.type,
        attempts: entry.attempts,
      };
      try {
        const outcome = await dispatchCommand(options.dispatch, command);
        fired =
          outcome.outcome === 'dispatched'
            ? { ...base, outcome: 'dispatched' }
            : { ...base, outcome: 'rejected', errorCode: outcome.code, errorMessage: outcome.message };
      } catch (error) {
        if (entry.attempts < retry.maxAttempts && !isPermanentError(error)) {
          entry.nextTryAt = nextAttemptAt(entry.attempts, now, { ...retry, error });
          log.warn(
            { err: asError(error), attempt: entry.attempts, nextTryAt: entry.nextTryAt.toISOString() },
            'timer command failed; will retry',
          );
          return { deferred: entry.timerId };
        }
        log.error({ err: asError(error), attempts: entry.attempts }, 'timer command failed; giving up');
        fired = {
          ...base,
          outcome: 'failed',
          errorCode: errorCodeOf(error),
          errorMessage: errorMessageOf(error),
        };
      }
      await store.appendToStream(timerStreamId(entry.timerId), [
        {
          id: uuidv5(`timer-fired:${entry.timerId}`),
          type: 'TimerFired',
          data: fired as unknown as JsonObject,
        },
      ]);
      pending.delete(entry.timerId);
      log.info(
        { outcome: fired.outcome, commandType: fired.commandType, errorCode: fired.errorCode },
        'timer fired',
      );
      return {
        fired: {
          timerId: entry.timerId,
          outcome: fired.outcome,
          ...(fired.errorCode ? { errorCode: fired.errorCode } : {}),
        },
      };
    } catch (error) {
      // The store could not be read or written: try again on a later tick (a re-fire is idempotent).
      entry.nextTryAt = nextAttemptAt(Math.max(1, entry.attempts), now, retry);
      log.warn({ err: asError(error) }, 'timer could not be fired now; will retry');
      return { deferred: entry.timerId };
    }
  };

  const runTick = async (): Promise<TickResult> => {
    const deps = env;
    if (!deps || !live || stopping) return notReady;
    const now = deps.clock.now();
    const due = [...pending.values()]
      .filter((t) => t.dueAt <= now && (t.nextTryAt === undefined || t.nextTryAt <= now))
      .sort((a, b) => a.dueAt.getTime() - b.dueAt.getTime())
      .slice(0, batchSize);
    const fired: TickResult['fired'][number][] = [];
    const deferred: string[] = [];
    for (const entry of due) {
      if (stopping) break;
      const r = await fire(entry, deps);
      if (r.fired) fired.push(r.fired);
      if (r.deferred) deferred.push(r.deferred);
    }
    return { ready: true, fired, deferred };
  };

  const tick = (): Promise<TickResult> => {
    const next = chain.then(runTick, runTick);
    chain = next.catch(() => undefined);
    return next;
  };

  const apply = (event: RecordedEvent): void => {
    const data = event.data as { timerId?: unknown };
    if (!event.streamId.startsWith(TIMER_STREAM_PREFIX) || typeof data.timerId !== 'string') return;
    const timerId = data.timerId;
    switch (event.type) {
      case 'TimerScheduled': {
        const d = event.data as unknown as TimerScheduledData;
        pending.set(timerId, {
          timerId,
          dueAt: new Date(d.dueAt),
          commandType: d.command?.type ?? '',
          attempts: 0,
          nextTryAt: undefined,
        });
        break;
      }
      case 'TimerRescheduled': {
        const entry = pending.get(timerId);
        if (entry) entry.dueAt = new Date((event.data as unknown as TimerRescheduledData).dueAt);
        break;
      }
      case 'TimerCancelled':
      case 'TimerFired':
        pending.delete(timerId);
        break;
      default:
        break;
    }
  };

  const resumable = createResumableState({
    name: 'scheduler',
    version: SCHEDULER_STATE_VERSION,
    filter: SCHEDULER_FILTER,
    apply,
    save: () => ({
      pending: [...pending.values()].map((e) => [e.timerId, e.dueAt.toISOString(), e.commandType]),
    }),
    load(state) {
      for (const [timerId, dueAt, commandType] of (state as { pending: [string, string, string][] })
        .pending) {
        pending.set(timerId, {
          timerId,
          dueAt: new Date(dueAt),
          commandType,
          attempts: 0,
          nextTryAt: undefined,
        });
      }
    },
    reset: () => pending.clear(),
    ...(options.snapshotEvery === undefined ? {} : { snapshotEvery: options.snapshotEvery }),
  });

  return {
    id: 'scheduler',
    filter: SCHEDULER_FILTER,
    resumeFrom: 'snapshot',

    restore: resumable.restore,
    handle: resumable.handle,

    onStart(ctx) {
      env = { store: ctx.store, clock: ctx.clock, logger: ctx.logger };
      pending.clear();
      live = false;
      stopping = false;
    },

    onCaughtUp() {
      live = true;
      env?.logger.info({ pending: pending.size }, 'scheduler ready');
      resumable.caughtUp();
      if (pollIntervalMs > 0) {
        void tick();
        interval = setInterval(() => void tick(), pollIntervalMs);
        interval.unref();
      }
    },

    async onStop() {
      stopping = true;
      if (interval) clearInterval(interval);
      interval = undefined;
      await chain;
      live = false;
      await resumable.stop();
    },

    tick,
    resumable,

    pending: () =>
      [...pending.values()]
        .sort((a, b) => a.dueAt.getTime() - b.dueAt.getTime())
        .map((e) => ({
          timerId: e.timerId,
          dueAt: e.dueAt,
          commandType: e.commandType,
          attempts: e.attempts,
          ...(e.nextTryAt ? { nextTryAt: e.nextTryAt } : {}),
        })),
  };
};

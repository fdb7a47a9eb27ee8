import type { Clock } from '../core/clock.ts';
import { asError, hasCode, NotFoundError, ValidationError } from '../core/errors.ts';
import { newId, uuidv5 } from '../core/ids.ts';
import type { JsonObject } from '../core/messages.ts';
import type { EventFilter, EventStore, RecordedEvent, Subscription } from '../eventStore/eventStore.ts';
import { abortableSleep } from './abortableSleep.ts';
import type { Claims } from './claims.ts';
import type { ProcessorLogger } from './ports.ts';
import { backoffDelayMs, errorCodeOf, errorMessageOf, isPermanentError } from './retryPolicy.ts';

/** What a processor's `handle` gets besides the event. */
export type ProcessorContext = Readonly<{
  processorId: string;
  store: EventStore;
  clock: Clock;
  /** `clock.now()`: the time to put on commands and outcome events. */
  now(): Date;
  /** Child logger bound to `{ processorId, position, streamId, eventId, eventType }`. */
  logger: ProcessorLogger;
  /** 1 on first delivery, then 2, 3 … for in-process retries of the same event. */
  attempt: number;
  /**
   * The attempt after which a failing event is parked (the runner's `maxAttempts`). A handler whose
   * event must never be parked (a page: issue 18) records its failure instead when
   * `attempt >= maxAttempts`.
   */
  maxAttempts: number;
  /** True when `replayParked` runs a parked event again. */
  replay: boolean;
  /**
   * True when this event may have been handled before, all or in part: an in-process retry, a
   * parked event replayed, or an event recorded before this runner started (after a crash, the
   * events since the last stored checkpoint come again, and one may have had its effect without
   * its outcome being recorded). A handler whose effect has no idempotency key looks at what the
   * other side already has before repeating it when this is true.
   */
  redelivery: boolean;
  /** Aborted when the runner stops: pass it to long upstream calls. */
  signal: AbortSignal;
}>;

/** Given to lifecycle hooks (`onStart`). */
export type ProcessorLifecycleContext = Readonly<{
  processorId: string;
  store: EventStore;
  clock: Clock;
  logger: ProcessorLogger;
}>;

/**
 * A named reaction to recorded events, fed from its checkpoint, at least once.
 *
 * `handle` must be idempotent by a key derived from the event (deterministic ids for what it
 * appends, upstream idempotency keys, "already recorded as sent" checks): after a crash the events
 * since the last stored checkpoint are delivered again. A thrown error is retried in process and
 * then parked (see createProcessorRunner).
 *
 * @example
 * const audit: Processor = {
 *   id: 'incident-audit',
 *   filter: { streamPrefixes: ['incident-'], eventTypes: ['IncidentResolved'] },
 *   async handle(event, ctx) {
 *     await ctx.store.appendToStream(`audit-${event.streamId}`, [
 *       { id: uuidv5('audit:' + event.id), type: 'IncidentAudited', data: { at: ctx.now().toISOString() } },
 *     ]);
 *   },
 * };
 */
export type Processor = Readonly<{
  /** Stable kebab-case id (`inbox-dispatch`): the checkpoint's key. Renaming it replays from zero. */
  id: string;
  /** Store-level filter. Bookkeeping streams `processor-*` are hidden unless a prefix names them. */
  filter?: EventFilter;
  /**
   * `'checkpoint'` (default): resume after the stored checkpoint, storing it as it goes.
   * `'start'`: read from the beginning on every start and store no checkpoint (in-memory
   * projections that are cheap to rebuild).
   * `'snapshot'`: the processor keeps its own state with the position it covers (read models and
   * the scheduler's pending timers, see src/processors/snapshots.ts): `restore` loads it after
   * `onStart` and says where to resume; no checkpoint is stored.
   */
  resumeFrom?: 'checkpoint' | 'start' | 'snapshot';
  /**
   * With `resumeFrom: 'snapshot'`: loads the processor's state and returns the position it covers
   * (delivery resumes after it), or undefined to read from the beginning.
   */
  restore?(ctx: ProcessorLifecycleContext): Promise<bigint | undefined>;
  /**
   * True for an in-memory query model every replica needs to answer its own requests (read models
   * with `catchUp()`): it runs on every replica. Otherwise (effects: reactors, the inbox
   * dispatcher, the scheduler) a runner given `claims` runs it only while this replica holds its
   * claim (see claims.ts), so several replicas on one store run it once.
   */
  everyReplica?: boolean;
  handle(event: RecordedEvent, ctx: ProcessorContext): Promise<void>;
  /** Before the subscription starts (reset in-memory state here). */
  onStart?(ctx: ProcessorLifecycleContext): void | Promise<void>;
  /** Once per start, when the subscription has caught up with the store and goes live. */
  onCaughtUp?(): void;
  /** When the runner stops, before the last checkpoint is written (stop timers, finish work in hand). */
  onStop?(): void | Promise<void>;
}>;

export type ProcessorRetryOptions = Readonly<{
  /** Attempts per event before it is parked (default 5). */
  maxAttempts: number;
  /** Backoff after the first failure (default 100 ms), doubling per attempt. */
  baseMs: number;
  /** Cap on one backoff (default 2 s). */
  maxMs: number;
}>;

export type ProcessorRunnerOptions = Readonly<{
  store: EventStore;
  logger: ProcessorLogger;
  clock: Clock;
  processors: readonly Processor[];
  retry?: Partial<ProcessorRetryOptions>;
  /** Store the checkpoint after this many handled events… (default 100) */
  checkpointEvery?: number;
  /** …or this long after the first unsaved one (ms, default 200), and always on stop and idle. */
  checkpointIntervalMs?: number;
  /**
   * Several replicas on one store: processors that are not `everyReplica` run only while this
   * replica holds their claim. Omitted: this runner runs every processor (one replica).
   */
  claims?: Claims;
}>;

export type ProcessorError = Readonly<{
  code: string;
  message: string;
  at: string;
  eventId?: string;
  position?: bigint;
}>;

export type ProcessorStatus = Readonly<{
  id: string;
  /** Last checkpoint written to the store (undefined: never, or a `resumeFrom: 'start'` processor). */
  checkpoint: bigint | undefined;
  /** Last position this processor has finished (handled, parked or skipped), in memory. */
  position: bigint | undefined;
  /** The store's head position when the status was taken. */
  head: bigint | undefined;
  /**
   * Global positions between `position` and `head` when an event for this processor is waiting
   * (0 when nothing it subscribes to is pending, however far the head has moved on other streams).
   * On SQLite that is a count of events; on KurrentDB positions are log offsets, so read it as
   * "behind or not" and a trend, not as an event count.
   */
  lag: number;
  /** Events parked and not yet replayed successfully. */
  parked: number;
  /** True while started, live, nothing in hand and nothing matching pending up to `head`. */
  caughtUp: boolean;
  running: boolean;
  /** Events handled (including parked) since this runner started. */
  handled: number;
  /** In-process retries since start. */
  retries: number;
  lastError?: ProcessorError;
  /** With claims, for processors that run on one replica: who holds it and whether it is this one. */
  claim?: Readonly<{ owner: string | null; held: boolean }>;
}>;

/** Data of `ProcessorEventParked` in stream `processor-<processorId>`. */
export type ProcessorEventParkedData = Readonly<{
  processorId: string;
  /** Global position of the parked event, as a decimal string (positions are 64-bit). */
  position: string;
  eventId: string;
  streamId: string;
  type: string;
  attempts: number;
  errorCode: string;
  errorMessage: string;
  parkedAt: string;
}>;

/** Data of `ProcessorParkedEventReplayed` in stream `processor-<processorId>`. */
export type ProcessorParkedEventReplayedData = Readonly<{
  processorId: string;
  position: string;
  eventId: string;
  streamId: string;
  type: string;
  outcome: 'succeeded' | 'failed';
  attempts: number;
  errorCode?: string;
  errorMessage?: string;
  replayedAt: string;
}>;

export type ParkedEvent = ProcessorEventParkedData;

export type ReplayParkedResult = Readonly<{
  processorId: string;
  succeeded: string[];
  failed: { eventId: string; errorCode: string; errorMessage: string }[];
}>;

export type ProcessorRunner = Readonly<{
  /** Reads checkpoints and parked lists, starts every subscription. Resolves once they are running. */
  start(): Promise<void>;
  /**
   * Stops taking new events, lets each processor finish the event in hand (an event waiting for a
   * retry is abandoned, to be redelivered on the next start), writes checkpoints, resolves.
   */
  stop(): Promise<void>;
  /** Per-processor status, for /readyz and /metrics. Queries the store (head, pending events). */
  status(): Promise<ProcessorStatus[]>;
  /** Resolves when every processor has caught up with the head (checkpoints written); for tests. */
  waitForIdle(timeoutMs?: number): Promise<ProcessorStatus[]>;
  /** Parked events not yet replayed successfully (all processors, or one). */
  listParked(processorId?: string): Promise<ParkedEvent[]>;
  /**
   * Runs parked events through the processor again (one, or all of that processor's). Each outcome
   * is recorded as `ProcessorParkedEventReplayed`; a success removes the event from the parked list.
   * Works whether or not the runner is started; it never runs concurrently with live delivery.
   */
  replayParked(processorId: string, eventId?: string): Promise<ReplayParkedResult>;
  /**
   * With claims: this replica's id and, for each processor that runs on one replica at a time, its
   * owner as last read and whether it runs here (from memory, no store reads). Undefined without.
   */
  claims():
    | Readonly<{
        replicaId: string;
        processors: readonly Readonly<{ id: string; owner: string | null; held: boolean }>[];
      }>
    | undefined;
}>;

export const PROCESSOR_STREAM_PREFIX = 'processor-';
export const processorStreamId = (processorId: string): string => `${PROCESSOR_STREAM_PREFIX}${processorId}`;

const PROCESSOR_ID = /^[a-z][a-z0-9]*(-[a-z0-9]+)*$/;

class Stopped extends Error {
  constructor() {
    super('processor runner stopping');
    this.name = 'Stopped';
  }
}

/** Waits `ms`; rejects with Stopped as soon as the runner stops. */
const sleep = (ms: number, signal: AbortSignal): Promise<void> =>
  abortableSleep(ms, signal).catch(() => {
    throw new Stopped();
  });

const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

type Failure = { attempts: number; error: unknown };

type Slot = {
  processor: Processor;
  log: ProcessorLogger;
  seesBookkeeping: boolean;
  storesCheckpoint: boolean;
  checkpoint: bigint | undefined;
  position: bigint | undefined;
  unsaved: number;
  firstUnsavedAt: number | undefined;
  flushTimer: NodeJS.Timeout | undefined;
  saving: Promise<void>;
  subscription: Subscription | undefined;
  restartTimer: NodeJS.Timeout | undefined;
  live: boolean;
  running: boolean;
  stopping: boolean;
  abort: AbortController;
  inHand: RecordedEvent | undefined;
  lock: Promise<void>;
  parked: Map<string, ParkedEvent>;
  lastError: ProcessorError | undefined;
  /** The store's head when this start subscribed: events up to it may have been seen by a previous run. */
  startHead: bigint | undefined;
  handled: number;
  retries: number;
  resubscribes: number;
  /** Runs only while this replica holds the processor's claim. */
  claimed: boolean;
  held: boolean;
  /** The claim's owner as last read. */
  owner: string | undefined;
  /** This replica's claim lapsed or was taken: start nothing more, store no checkpoint. */
  fenced: boolean;
};

/**
 * Feeds each processor from its stored checkpoint, at least once, in global order, one event at a
 * time per processor (processors run side by side).
 *
 * Checkpoints are stored durably but in batches (every `checkpointEvery` events or
 * `checkpointIntervalMs`, and always on stop and when idle): a crash redelivers the events after the
 * last stored checkpoint. That is why every effect must be idempotent by a key (see Processor).
 *
 * A failing event is retried in process with capped exponential backoff and jitter, then PARKED:
 * `ProcessorEventParked` is appended to `processor-<processorId>` (id = UUIDv5 of processor and
 * event, so a redelivery does not park twice), logged with `err`, and the processor moves on. Coded
 * permanent errors (SB_VALIDATION, SB_ILLEGAL_STATE, SB_UPSTREAM_AUTH, … see isPermanentError) park
 * at once. SB_STORE_UNAVAILABLE is not the event's fault: it is retried at the backoff cap until the
 * store is back (or the runner stops), never parked. A processor never crashes the process: a
 * subscription that fails is restarted from the processor's position after a backoff.
 *
 * @example
 * const runner = createProcessorRunner({ store, logger, clock: systemClock, processors: [scheduler, inbox] });
 * await runner.start();
 * // …on SIGTERM:
 * await runner.stop();
 */
export const createProcessorRunner = (options: ProcessorRunnerOptions): ProcessorRunner => {
  const { store, clock } = options;
  const retry: ProcessorRetryOptions = {
    maxAttempts: options.retry?.maxAttempts ?? 5,
    baseMs: options.retry?.baseMs ?? 100,
    maxMs: options.retry?.maxMs ?? 2_000,
  };
  const checkpointEvery = options.checkpointEvery ?? 100;
  const checkpointIntervalMs = options.checkpointIntervalMs ?? 200;

  const slots = new Map<string, Slot>();
  for (const processor of options.processors) {
    if (!PROCESSOR_ID.test(processor.id) || processor.id.startsWith('claim-')) {
      throw new ValidationError(
        `processor id ${JSON.stringify(processor.id)} is not kebab-case (or starts with claim-)`,
      );
    }
    if (slots.has(processor.id)) throw new ValidationError(`two processors have the id ${processor.id}`);
    slots.set(processor.id, {
      processor,
      log: options.logger.child({ processorId: processor.id }),
      seesBookkeeping: (processor.filter?.streamPrefixes ?? []).some((p) => p.startsWith('processor')),
      storesCheckpoint: (processor.resumeFrom ?? 'checkpoint') === 'checkpoint',
      checkpoint: undefined,
      position: undefined,
      unsaved: 0,
      firstUnsavedAt: undefined,
      flushTimer: undefined,
      saving: Promise.resolve(),
      subscription: undefined,
      restartTimer: undefined,
      live: false,
      running: false,
      stopping: false,
      abort: new AbortController(),
      inHand: undefined,
      lock: Promise.resolve(),
      parked: new Map(),
      lastError: undefined,
      startHead: undefined,
      handled: 0,
      retries: 0,
      resubscribes: 0,
      claimed: options.claims !== undefined && processor.everyReplica !== true,
      held: false,
      owner: undefined,
      fenced: false,
    });
  }
  let started = false;
  const claims = options.claims;

  const slotOf = (processorId: string): Slot => {
    const slot = slots.get(processorId);
    if (!slot) throw new NotFoundError(`no processor ${processorId}`);
    return slot;
  };

  /** True (and the slot fenced) once this replica may no longer run a claimed processor. */
  const lostClaim = (slot: Slot): boolean => {
    if (!slot.claimed) return false;
    if (!slot.fenced && !claims!.valid()) slot.fenced = true;
    return slot.fenced;
  };

  const accepts = (slot: Slot, event: RecordedEvent): boolean =>
    slot.seesBookkeeping || !event.streamId.startsWith(PROCESSOR_STREAM_PREFIX);

  /** Serialises live delivery and replays of one processor. */
  const withLock = async <T>(slot: Slot, fn: () => Promise<T>): Promise<T> => {
    const previous = slot.lock;
    let release!: () => void;
    slot.lock = new Promise<void>((resolve) => {
      release = resolve;
    });
    await previous;
    try {
      return await fn();
    } finally {
      release();
    }
  };

  const recordError = (slot: Slot, error: unknown, event?: RecordedEvent): void => {
    slot.lastError = {
      code: errorCodeOf(error),
      message: errorMessageOf(error, 500),
      at: clock.now().toISOString(),
      ...(event ? { eventId: event.id, position: event.position } : {}),
    };
  };

  // ---- checkpoints

  const flush = (slot: Slot): Promise<void> => {
    if (slot.flushTimer) {
      clearTimeout(slot.flushTimer);
      slot.flushTimer = undefined;
    }
    slot.saving = slot.saving.then(async () => {
      const position = slot.position;
      // A replica that lost the claim must not move the new holder's checkpoint.
      if (!slot.storesCheckpoint || position === undefined || slot.fenced) return;
      if (slot.checkpoint !== undefined && position <= slot.checkpoint) return;
      try {
        await store.storeCheckpoint(slot.processor.id, position);
        slot.checkpoint = position;
        slot.unsaved = 0;
        slot.firstUnsavedAt = undefined;
      } catch (error) {
        recordError(slot, error);
        slot.log.warn(
          { err: asError(error), position: Number(position) },
          'checkpoint not stored; will retry',
        );
      }
    });
    return slot.saving;
  };

  const advance = async (slot: Slot, position: bigint): Promise<void> => {
    if (slot.position === undefined || position > slot.position) slot.position = position;
    if (!slot.storesCheckpoint) return;
    slot.unsaved += 1;
    slot.firstUnsavedAt ??= Date.now();
    if (slot.unsaved >= checkpointEvery || Date.now() - slot.firstUnsavedAt >= checkpointIntervalMs) {
      await flush(slot);
    } else if (!slot.flushTimer) {
      slot.flushTimer = setTimeout(() => {
        slot.flushTimer = undefined;
        void flush(slot);
      }, checkpointIntervalMs);
      slot.flushTimer.unref();
    }
  };

  // ---- handling, retries, parking

  const contextFor = (
    slot: Slot,
    event: RecordedEvent,
    attempt: number,
    replay: boolean,
    signal: AbortSignal,
  ): ProcessorContext => {
    let logger: ProcessorLogger | undefined;
    return {
      processorId: slot.processor.id,
      store,
      clock,
      now: () => clock.now(),
      get logger() {
        logger ??= slot.log.child({
          position: Number(event.position),
          streamId: event.streamId,
          eventId: event.id,
          eventType: event.type,
        });
        return logger;
      },
      attempt,
      maxAttempts: retry.maxAttempts,
      replay,
      redelivery: attempt > 1 || replay || (slot.startHead !== undefined && event.position <= slot.startHead),
      signal,
    };
  };

  /**
   * Resolves with undefined on success or with the failure to park/record; throws Stopped when the
   * runner stops meanwhile. Replays of a runner that is not running cannot be stopped.
   */
  const runWithRetries = async (
    slot: Slot,
    event: RecordedEvent,
    replay: boolean,
  ): Promise<Failure | undefined> => {
    const live = slot.running;
    const signal = live ? slot.abort.signal : new AbortController().signal;
    let attempt = 0;
    let storeDown = 0;
    for (;;) {
      attempt += 1;
      try {
        await slot.processor.handle(event, contextFor(slot, event, attempt, replay, signal));
        return undefined;
      } catch (error) {
        if (live && (slot.stopping || lostClaim(slot))) throw new Stopped();
        recordError(slot, error, event);
        const log = slot.log.child({ position: Number(event.position), streamId: event.streamId });
        if (!replay && hasCode(error, 'SB_STORE_UNAVAILABLE')) {
          // Not this event's fault, and parking needs the store too: wait for it, at the cap.
          storeDown += 1;
          attempt -= 1;
          slot.retries += 1;
          log.warn({ err: asError(error), eventId: event.id }, 'store unavailable; retrying event');
          await sleep(backoffDelayMs(storeDown, retry), signal);
          continue;
        }
        if (isPermanentError(error) || attempt >= retry.maxAttempts) return { attempts: attempt, error };
        slot.retries += 1;
        log.warn(
          { err: asError(error), eventId: event.id, eventType: event.type, attempt },
          'event failed; retrying',
        );
        await sleep(backoffDelayMs(attempt, retry), signal);
      }
    }
  };

  const readParked = async (
    slot: Slot,
  ): Promise<{ parked: Map<string, ParkedEvent>; replays: Map<string, number> }> => {
    const parked = new Map<string, ParkedEvent>();
    const replays = new Map<string, number>();
    for (const e of await store.readStream(processorStreamId(slot.processor.id))) {
      if (e.type === 'ProcessorEventParked') {
        const data = e.data as unknown as ParkedEvent;
        parked.set(data.eventId, data);
      } else if (e.type === 'ProcessorParkedEventReplayed') {
        const data = e.data as unknown as ProcessorParkedEventReplayedData;
        if (data.outcome === 'succeeded') {
          parked.delete(data.eventId);
          replays.set(data.eventId, (replays.get(data.eventId) ?? 0) + 1);
        } else {
          const before = parked.get(data.eventId);
          if (before) {
            parked.set(data.eventId, {
              ...before,
              errorCode: data.errorCode ?? before.errorCode,
              errorMessage: data.errorMessage ?? before.errorMessage,
            });
          }
        }
      }
    }
    return { parked, replays };
  };

  const park = async (slot: Slot, event: RecordedEvent, failure: Failure): Promise<void> => {
    const data: ProcessorEventParkedData = {
      processorId: slot.processor.id,
      position: event.position.toString(),
      eventId: event.id,
      streamId: event.streamId,
      type: event.type,
      attempts: failure.attempts,
      errorCode: errorCodeOf(failure.error),
      errorMessage: errorMessageOf(failure.error),
      parkedAt: clock.now().toISOString(),
    };
    for (let i = 1; ; i++) {
      try {
        // A redelivery parks with the same id (deduplicated). After a successful replay the same
        // event may fail again on a later redelivery: number the park so it is recorded again.
        const { replays } = await readParked(slot);
        const generation = replays.get(event.id) ?? 0;
        const id = uuidv5(
          `processor-parked:${slot.processor.id}:${event.id}${generation > 0 ? `:${generation}` : ''}`,
        );
        await store.appendToStream(processorStreamId(slot.processor.id), [
          { id, type: 'ProcessorEventParked', data: data as unknown as JsonObject },
        ]);
        break;
      } catch (error) {
        if (slot.stopping) throw new Stopped();
        recordError(slot, error, event);
        slot.log.error({ err: asError(error), eventId: event.id }, 'cannot record parked event; retrying');
        await sleep(backoffDelayMs(i, retry), slot.abort.signal);
      }
    }
    slot.parked.set(event.id, data);
    slot.log.error(
      {
        err: asError(failure.error),
        position: Number(event.position),
        streamId: event.streamId,
        eventId: event.id,
        eventType: event.type,
        attempts: failure.attempts,
        errorCode: data.errorCode,
      },
      'event parked',
    );
  };

  const onEvent = async (slot: Slot, event: RecordedEvent): Promise<void> => {
    // Stop taking new events: this one is left for the next start (or the claim's next holder).
    if (slot.stopping || lostClaim(slot)) throw new Stopped();
    if (!accepts(slot, event)) {
      await advance(slot, event.position);
      return;
    }
    await withLock(slot, async () => {
      slot.inHand = event;
      try {
        const failure = await runWithRetries(slot, event, false);
        if (failure) await park(slot, event, failure);
        slot.handled += 1;
      } finally {
        slot.inHand = undefined;
      }
    });
    await advance(slot, event.position);
  };

  // ---- subscriptions

  const subscribe = (slot: Slot): void => {
    const from = slot.position ?? 'start';
    const subscription = store.subscribe({
      from,
      ...(slot.processor.filter ? { filter: slot.processor.filter } : {}),
      onEvent: (event) => onEvent(slot, event),
      onCaughtUp: () => {
        if (slot.live) return;
        slot.live = true;
        slot.log.info({ position: slot.position === undefined ? null : Number(slot.position) }, 'caught up');
        void flush(slot);
        try {
          slot.processor.onCaughtUp?.();
        } catch (error) {
          recordError(slot, error);
          slot.log.error({ err: asError(error) }, 'onCaughtUp hook failed');
        }
      },
    });
    slot.subscription = subscription;
    subscription.done.then(
      () => {
        if (!slot.stopping && slot.running) resubscribeLater(slot, new Error('subscription ended'));
      },
      (error: unknown) => {
        if (slot.stopping || error instanceof Stopped) return;
        resubscribeLater(slot, error);
      },
    );
  };

  const resubscribeLater = (slot: Slot, error: unknown): void => {
    recordError(slot, error);
    slot.resubscribes += 1;
    const wait = backoffDelayMs(slot.resubscribes, retry);
    slot.log.error({ err: asError(error), retryInMs: wait }, 'subscription failed; restarting it');
    slot.restartTimer = setTimeout(() => {
      slot.restartTimer = undefined;
      if (!slot.stopping && slot.running) subscribe(slot);
    }, wait);
    slot.restartTimer.unref();
  };

  const startSlot = async (slot: Slot): Promise<void> => {
    slot.stopping = false;
    slot.fenced = false;
    slot.abort = new AbortController();
    slot.live = false;
    slot.handled = 0;
    slot.retries = 0;
    slot.resubscribes = 0;
    slot.checkpoint = slot.storesCheckpoint ? await store.readCheckpoint(slot.processor.id) : undefined;
    slot.position = slot.checkpoint;
    slot.unsaved = 0;
    slot.firstUnsavedAt = undefined;
    slot.parked = (await readParked(slot)).parked;
    // Read before subscribing: anything appended later cannot have been seen by a previous run.
    slot.startHead = await store.headPosition();
    const lifecycle = { processorId: slot.processor.id, store, clock, logger: slot.log };
    await slot.processor.onStart?.(lifecycle);
    // Where a processor that keeps its own state resumes: the position its restored state covers.
    if (slot.processor.resumeFrom === 'snapshot' && slot.processor.restore) {
      slot.position = await slot.processor.restore(lifecycle);
    }
    slot.running = true;
    slot.log.info(
      {
        checkpoint: slot.checkpoint === undefined ? null : Number(slot.checkpoint),
        parked: slot.parked.size,
        resumeFrom: slot.processor.resumeFrom ?? 'checkpoint',
      },
      'processor starting',
    );
    subscribe(slot);
  };

  const stopSlot = async (slot: Slot): Promise<void> => {
    if (!slot.running) return;
    slot.stopping = true;
    if (slot.restartTimer) clearTimeout(slot.restartTimer);
    slot.restartTimer = undefined;
    try {
      await slot.processor.onStop?.();
    } catch (error) {
      recordError(slot, error);
      slot.log.error({ err: asError(error) }, 'onStop hook failed');
    }
    // Wakes an event that is waiting between retries: it is abandoned, not checkpointed.
    slot.abort.abort();
    await slot.subscription?.stop();
    slot.subscription = undefined;
    await slot.lock;
    await flush(slot);
    slot.running = false;
    slot.live = false;
    slot.log.info(
      { checkpoint: slot.checkpoint === undefined ? null : Number(slot.checkpoint) },
      'processor stopped',
    );
  };

  // ---- claims (several replicas): whether this replica runs a processor at all

  let claimTimer: NodeJS.Timeout | undefined;
  let claimTicking: Promise<void> = Promise.resolve();
  const claimLog = options.logger.child({ component: 'claims' });

  /** Stops a processor this replica may no longer run, without storing its checkpoint. */
  const letGo = async (slot: Slot, why: string): Promise<void> => {
    slot.fenced = true;
    slot.held = false;
    if (slot.running) await stopSlot(slot);
    slot.log.warn({ replica: claims!.replicaId, owner: slot.owner ?? null }, why);
  };

  /**
   * One round: stop what this replica may no longer run, renew its lease, check that it still owns
   * what it runs, claim what is free. Runs at start and every `renewEveryMs`; rounds never overlap.
   */
  const claimRound = async (): Promise<void> => {
    const c = claims!;
    const lapsed = !c.valid();
    for (const slot of slots.values()) {
      if (slot.claimed && slot.held && (lapsed || slot.fenced)) {
        await letGo(slot, 'claim lapsed; processor stopped until claimed again');
      }
    }
    if (!(await c.renew())) {
      claimLog.warn({ replica: c.replicaId }, 'claim lease not renewed; will retry');
      return;
    }
    for (const slot of slots.values()) {
      if (!slot.claimed || !started) continue;
      try {
        if (slot.held) {
          slot.owner = (await c.read(slot.processor.id)).owner;
          if (slot.owner !== c.replicaId)
            await letGo(slot, 'claim taken by another replica; processor stopped');
        } else if (await c.acquire(slot.processor.id)) {
          slot.owner = c.replicaId;
          slot.held = true;
          slot.log.info({ replica: c.replicaId }, 'claimed');
          await startSlot(slot);
        } else {
          slot.owner = (await c.read(slot.processor.id)).owner;
        }
      } catch (error) {
        // Claimed but not started (the store failed meanwhile): claim it afresh next round.
        if (!slot.running) slot.held = false;
        recordError(slot, error);
        slot.log.warn({ err: asError(error), replica: c.replicaId }, 'claim round failed; will retry');
      }
    }
  };

  const runClaimRound = (): Promise<void> => {
    claimTicking = claimTicking.then(claimRound).catch((error: unknown) => {
      claimLog.error({ err: asError(error) }, 'claim round failed');
    });
    return claimTicking;
  };

  const releaseClaims = async (): Promise<void> => {
    for (const slot of slots.values()) {
      if (!slot.claimed || !slot.held) continue;
      slot.held = false;
      try {
        await claims!.release(slot.processor.id);
        slot.owner = undefined;
      } catch (error) {
        slot.log.warn({ err: asError(error) }, 'claim not released; it expires instead');
      }
    }
  };

  /** Processors this replica runs now (every-replica ones, and claimed ones it holds). */
  const runsHere = (slot: Slot): boolean => !slot.claimed || slot.held;

  // ---- status

  const PAGE = 500;
  const MAX_PAGES = 4;

  /**
   * Whether anything this processor takes is waiting at or below `head`. When nothing is, the
   * processor has effectively seen everything up to `head` (filtered-out positions included), so
   * its position moves there: lag reads 0 and the next checkpoint skips the gap.
   */
  const refresh = async (
    slot: Slot,
    head: bigint | undefined,
  ): Promise<{ caughtUp: boolean; lag: number }> => {
    const behind = () => (head === undefined ? 0 : Math.max(0, Number(head - (slot.position ?? 0n))));
    if (!slot.running || !slot.live || slot.inHand || slot.stopping)
      return { caughtUp: false, lag: behind() };
    if (head === undefined) return { caughtUp: true, lag: 0 };
    let after = slot.position ?? 0n;
    let pending = false;
    let decided = false;
    for (let page = 0; page < MAX_PAGES && !decided; page++) {
      if (after >= head) {
        decided = true;
        break;
      }
      const events = await store.readAll({
        after,
        maxCount: PAGE,
        ...(slot.processor.filter ? { filter: slot.processor.filter } : {}),
      });
      for (const e of events) {
        if (e.position > head) {
          decided = true;
          break;
        }
        if (accepts(slot, e)) {
          pending = true;
          decided = true;
          break;
        }
        after = e.position;
      }
      if (!decided && events.length < PAGE) decided = true;
    }
    if (!decided) pending = true;
    if (pending || slot.inHand) return { caughtUp: false, lag: behind() };
    if (slot.position === undefined || head > slot.position) {
      slot.position = head;
      if (slot.storesCheckpoint) {
        slot.unsaved += 1;
        slot.firstUnsavedAt ??= Date.now();
      }
    }
    return { caughtUp: true, lag: 0 };
  };

  const statusOf = async (slot: Slot, head: bigint | undefined): Promise<ProcessorStatus> => {
    const { caughtUp, lag } = await refresh(slot, head);
    return {
      id: slot.processor.id,
      checkpoint: slot.checkpoint,
      position: slot.position,
      head,
      lag,
      parked: slot.parked.size,
      caughtUp,
      running: slot.running,
      handled: slot.handled,
      retries: slot.retries,
      ...(slot.lastError ? { lastError: slot.lastError } : {}),
      ...(slot.claimed ? { claim: { owner: slot.owner ?? null, held: slot.held } } : {}),
    };
  };

  const status = async (): Promise<ProcessorStatus[]> => {
    const head = await store.headPosition();
    const out: ProcessorStatus[] = [];
    for (const slot of slots.values()) {
      slot.parked = (await readParked(slot)).parked;
      out.push(await statusOf(slot, head));
    }
    return out;
  };

  // ---- replay

  const replayParked = async (processorId: string, eventId?: string): Promise<ReplayParkedResult> => {
    const slot = slotOf(processorId);
    const { parked } = await readParked(slot);
    const entries = [...parked.values()].filter((p) => eventId === undefined || p.eventId === eventId);
    if (eventId !== undefined && entries.length === 0) {
      throw new NotFoundError(`processor ${processorId} has no parked event ${eventId}`);
    }
    const result: ReplayParkedResult = { processorId, succeeded: [], failed: [] };
    for (const entry of entries) {
      await withLock(slot, async () => {
        const original = (await store.readStream(entry.streamId)).find((e) => e.id === entry.eventId);
        let failure: Failure | undefined;
        if (!original) {
          failure = {
            attempts: 0,
            error: new NotFoundError(`event ${entry.eventId} is no longer in ${entry.streamId}`),
          };
        } else {
          try {
            failure = await runWithRetries(slot, original, true);
          } catch (error) {
            if (error instanceof Stopped) failure = { attempts: 0, error: new Error('runner stopped') };
            else throw error;
          }
        }
        const data: ProcessorParkedEventReplayedData = {
          processorId,
          position: entry.position,
          eventId: entry.eventId,
          streamId: entry.streamId,
          type: entry.type,
          outcome: failure ? 'failed' : 'succeeded',
          attempts: failure ? failure.attempts : 1,
          ...(failure
            ? { errorCode: errorCodeOf(failure.error), errorMessage: errorMessageOf(failure.error) }
            : {}),
          replayedAt: clock.now().toISOString(),
        };
        await store.appendToStream(processorStreamId(processorId), [
          { id: newId(), type: 'ProcessorParkedEventReplayed', data: data as unknown as JsonObject },
        ]);
        if (failure) {
          result.failed.push({
            eventId: entry.eventId,
            errorCode: data.errorCode!,
            errorMessage: data.errorMessage!,
          });
          slot.log.warn(
            { err: asError(failure.error), eventId: entry.eventId },
            'parked event failed again on replay',
          );
        } else {
          result.succeeded.push(entry.eventId);
          slot.parked.delete(entry.eventId);
          slot.log.info({ eventId: entry.eventId }, 'parked event replayed');
        }
      });
    }
    return result;
  };

  return {
    async start() {
      if (started) throw new ValidationError('processor runner already started');
      started = true;
      for (const slot of slots.values()) if (!slot.claimed) await startSlot(slot);
      if (claims) {
        await runClaimRound();
        claimTimer = setInterval(() => void runClaimRound(), claims.renewEveryMs);
        claimTimer.unref();
      }
    },

    async stop() {
      if (!started) return;
      started = false;
      if (claimTimer) clearInterval(claimTimer);
      claimTimer = undefined;
      await claimTicking;
      await Promise.all([...slots.values()].map(stopSlot));
      // Checkpoints are stored: the next holder resumes from them at its next round.
      if (claims) await releaseClaims();
    },

    status,

    async waitForIdle(timeoutMs = 5_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const head = await store.headPosition();
        const statuses: ProcessorStatus[] = [];
        for (const slot of slots.values()) if (runsHere(slot)) statuses.push(await statusOf(slot, head));
        if (statuses.every((s) => s.caughtUp)) {
          await Promise.all([...slots.values()].filter(runsHere).map(flush));
          return statuses.map((s) => ({ ...s, checkpoint: slotOf(s.id).checkpoint }));
        }
        if (Date.now() > deadline) {
          const lagging = statuses
            .filter((s) => !s.caughtUp)
            .map(
              (s) => `${s.id} (position ${s.position ?? '-'}, head ${s.head ?? '-'}, running ${s.running})`,
            );
          throw new Error(`processors not idle after ${timeoutMs} ms: ${lagging.join(', ')}`);
        }
        await delay(5);
      }
    },

    async listParked(processorId) {
      const chosen = processorId === undefined ? [...slots.values()] : [slotOf(processorId)];
      const out: ParkedEvent[] = [];
      for (const slot of chosen) out.push(...(await readParked(slot)).parked.values());
      return out;
    },

    replayParked,

    claims: () =>
      claims && {
        replicaId: claims.replicaId,
        processors: [...slots.values()]
          .filter((slot) => slot.claimed)
          .map((slot) => ({ id: slot.processor.id, owner: slot.owner ?? null, held: slot.held })),
      },
  };
};

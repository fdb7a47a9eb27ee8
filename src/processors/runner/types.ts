import type { Clock } from '../../core/clock.ts';
import type { EventFilter, EventStore, RecordedEvent } from '../../eventStore/eventStore.ts';
import type { Claims } from '../claims.ts';
import type { ProcessorLogger } from '../ports.ts';

/**
 * What processors and the processor runner (src/processors/runner.ts) promise each other: the
 * `Processor` a lifecycle writes, the context its `handle` gets, the runner's options and status,
 * and the bookkeeping stream `processor-<processorId>` where parked events and their replays are
 * recorded. Types only, plus the bookkeeping stream's name; runner.ts re-exports all of it.
 */

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

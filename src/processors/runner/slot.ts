import type { Clock } from '../../core/clock.ts';
import { ValidationError } from '../../core/errors.ts';
import type { EventStore, RecordedEvent, Subscription } from '../../eventStore/eventStore.ts';
import { abortableSleep } from '../abortableSleep.ts';
import type { Claims } from '../claims.ts';
import type { ProcessorLogger } from '../ports.ts';
import { errorCodeOf, errorMessageOf } from '../retryPolicy.ts';
import {
  type ParkedEvent,
  PROCESSOR_STREAM_PREFIX,
  type Processor,
  type ProcessorError,
  type ProcessorRetryOptions,
  type ProcessorRunnerOptions,
} from './types.ts';

/**
 * A processor's slot in the runner: everything the runner keeps about one processor while it runs
 * (its positions, its subscription, its retries and parked events, its claim), and the few helpers
 * every other unit of the runner shares. The units that act on slots:
 * - subscriptions.ts: start, feed and stop a slot's subscription;
 * - checkpoints.ts: store the position it has reached, in batches;
 * - handling.ts: run one event through the processor, retrying it (the retry/park decision);
 * - parked.ts: park an event that keeps failing, read and replay parked events;
 * - claimRounds.ts: run a processor only while this replica holds its claim;
 * - status.ts: how far behind each slot is, and waiting until all are idle.
 */

/** What every unit of the runner shares: the store, the clock and the runner's options. */
export type RunnerEnv = Readonly<{
  store: EventStore;
  clock: Clock;
  retry: ProcessorRetryOptions;
  /** Store the checkpoint after this many handled events… */
  checkpointEvery: number;
  /** …or this long after the first unsaved one (ms). */
  checkpointIntervalMs: number;
  /** Several replicas on one store (see claims.ts); undefined: this runner runs everything. */
  claims: Claims | undefined;
}>;

export const runnerEnvOf = (options: ProcessorRunnerOptions): RunnerEnv => ({
  store: options.store,
  clock: options.clock,
  retry: {
    maxAttempts: options.retry?.maxAttempts ?? 5,
    baseMs: options.retry?.baseMs ?? 100,
    maxMs: options.retry?.maxMs ?? 2_000,
  },
  checkpointEvery: options.checkpointEvery ?? 100,
  checkpointIntervalMs: options.checkpointIntervalMs ?? 200,
  claims: options.claims,
});

/** Thrown through a handler's retries and the subscription when the runner (or the slot) stops. */
export class Stopped extends Error {
  constructor() {
    super('processor runner stopping');
    this.name = 'Stopped';
  }
}

/** Waits `ms`; rejects with Stopped as soon as the runner stops. */
export const sleep = (ms: number, signal: AbortSignal): Promise<void> =>
  abortableSleep(ms, signal).catch(() => {
    throw new Stopped();
  });

/** An event that failed for good: how many attempts it took and the last error. */
export type Failure = { attempts: number; error: unknown };

export type Slot = {
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

const PROCESSOR_ID = /^[a-z][a-z0-9]*(-[a-z0-9]+)*$/;

/** One slot per processor, by id; refuses an id that is not kebab-case or is given twice. */
export const createSlots = (options: ProcessorRunnerOptions): Map<string, Slot> => {
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
  return slots;
};

/** Bookkeeping streams (`processor-*`) reach a processor only when its filter names them. */
export const accepts = (slot: Slot, event: RecordedEvent): boolean =>
  slot.seesBookkeeping || !event.streamId.startsWith(PROCESSOR_STREAM_PREFIX);

/** Processors this replica runs now (every-replica ones, and claimed ones it holds). */
export const runsHere = (slot: Slot): boolean => !slot.claimed || slot.held;

/** True (and the slot fenced) once this replica may no longer run a claimed processor. */
export const lostClaim = (env: RunnerEnv, slot: Slot): boolean => {
  if (!slot.claimed) return false;
  if (!slot.fenced && !env.claims!.valid()) slot.fenced = true;
  return slot.fenced;
};

/** Serialises live delivery and replays of one processor. */
export const withLock = async <T>(slot: Slot, fn: () => Promise<T>): Promise<T> => {
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

/** Keeps the slot's last error for its status (coded, scrubbed, bounded). */
export const recordError = (env: RunnerEnv, slot: Slot, error: unknown, event?: RecordedEvent): void => {
  slot.lastError = {
    code: errorCodeOf(error),
    message: errorMessageOf(error, 500),
    at: env.clock.now().toISOString(),
    ...(event ? { eventId: event.id, position: event.position } : {}),
  };
};

import { asError, hasCode } from '../../core/errors.ts';
import type { RecordedEvent } from '../../eventStore/eventStore.ts';
import type { ProcessorLogger } from '../ports.ts';
import { backoffDelayMs, isPermanentError } from '../retryPolicy.ts';
import { type Failure, lostClaim, type RunnerEnv, recordError, type Slot, Stopped, sleep } from './slot.ts';
import type { ProcessorContext, ProcessorRetryOptions } from './types.ts';

/**
 * Handling one event: the context a processor's `handle` gets, and the in-process retries of a
 * failing event until it succeeds or is given up on (then parked: parked.ts).
 */

/** What the runner does after an attempt of an event failed (see `runWithRetries`). */
export type RetryDecision =
  /** The store is down: not the event's fault (and parking needs it too). Wait at the backoff, not counted. */
  | Readonly<{ kind: 'waitForStore' }>
  /** Try the event again after the backoff for this attempt. */
  | Readonly<{ kind: 'retry' }>
  /** Give up on it: a permanent error, or the last attempt. It is parked (or its replay failed). */
  | Readonly<{ kind: 'giveUp' }>;

/**
 * The retry/park decision, pure: SB_STORE_UNAVAILABLE waits for the store (live delivery only; a
 * replay reports it), a permanent coded error (isPermanentError) or the `maxAttempts`-th attempt
 * gives up, anything else is retried.
 */
export const retryDecision = (
  error: unknown,
  attempt: number,
  replay: boolean,
  retry: Pick<ProcessorRetryOptions, 'maxAttempts'>,
): RetryDecision => {
  if (!replay && hasCode(error, 'SB_STORE_UNAVAILABLE')) return { kind: 'waitForStore' };
  if (isPermanentError(error) || attempt >= retry.maxAttempts) return { kind: 'giveUp' };
  return { kind: 'retry' };
};

/** The context of one attempt of `event`; its logger is made only when used. */
export const contextFor = (
  env: RunnerEnv,
  slot: Slot,
  event: RecordedEvent,
  attempt: number,
  replay: boolean,
  signal: AbortSignal,
): ProcessorContext => {
  let logger: ProcessorLogger | undefined;
  return {
    processorId: slot.processor.id,
    store: env.store,
    clock: env.clock,
    now: () => env.clock.now(),
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
    maxAttempts: env.retry.maxAttempts,
    replay,
    redelivery: attempt > 1 || replay || (slot.startHead !== undefined && event.position <= slot.startHead),
    signal,
  };
};

/**
 * Resolves with undefined on success or with the failure to park/record; throws Stopped when the
 * runner stops meanwhile. Replays of a runner that is not running cannot be stopped.
 */
export const runWithRetries = async (
  env: RunnerEnv,
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
      await slot.processor.handle(event, contextFor(env, slot, event, attempt, replay, signal));
      return undefined;
    } catch (error) {
      if (live && (slot.stopping || lostClaim(env, slot))) throw new Stopped();
      recordError(env, slot, error, event);
      const log = slot.log.child({ position: Number(event.position), streamId: event.streamId });
      const decision = retryDecision(error, attempt, replay, env.retry);
      if (decision.kind === 'waitForStore') {
        storeDown += 1;
        attempt -= 1;
        slot.retries += 1;
        log.warn({ err: asError(error), eventId: event.id }, 'store unavailable; retrying event');
        await sleep(backoffDelayMs(storeDown, env.retry), signal);
        continue;
      }
      if (decision.kind === 'giveUp') return { attempts: attempt, error };
      slot.retries += 1;
      log.warn(
        { err: asError(error), eventId: event.id, eventType: event.type, attempt },
        'event failed; retrying',
      );
      await sleep(backoffDelayMs(attempt, env.retry), signal);
    }
  }
};

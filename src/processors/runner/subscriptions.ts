import { asError } from '../../core/errors.ts';
import type { RecordedEvent } from '../../eventStore/eventStore.ts';
import { backoffDelayMs } from '../retryPolicy.ts';
import { advance, flush } from './checkpoints.ts';
import { runWithRetries } from './handling.ts';
import { park, readParked } from './parked.ts';
import { accepts, lostClaim, type RunnerEnv, recordError, type Slot, Stopped, withLock } from './slot.ts';

/**
 * A slot's subscription: where it resumes (its checkpoint, its own snapshot, or the start), the
 * events it is fed one at a time in global order, a failed subscription restarted after a backoff,
 * and the stop that lets the event in hand finish and stores the checkpoint.
 */

/** One delivered event: handled (retried, then parked if it keeps failing) or skipped, then the position moves on. */
export const onEvent = async (env: RunnerEnv, slot: Slot, event: RecordedEvent): Promise<void> => {
  // Stop taking new events: this one is left for the next start (or the claim's next holder).
  if (slot.stopping || lostClaim(env, slot)) throw new Stopped();
  if (!accepts(slot, event)) {
    await advance(env, slot, event.position);
    return;
  }
  await withLock(slot, async () => {
    slot.inHand = event;
    try {
      const failure = await runWithRetries(env, slot, event, false);
      if (failure) await park(env, slot, event, failure);
      slot.handled += 1;
    } finally {
      slot.inHand = undefined;
    }
  });
  await advance(env, slot, event.position);
};

/** Goes live once caught up: stores the checkpoint and tells the processor. */
const onCaughtUp = (env: RunnerEnv, slot: Slot): void => {
  if (slot.live) return;
  slot.live = true;
  slot.log.info({ position: slot.position === undefined ? null : Number(slot.position) }, 'caught up');
  void flush(env, slot);
  try {
    slot.processor.onCaughtUp?.();
  } catch (error) {
    recordError(env, slot, error);
    slot.log.error({ err: asError(error) }, 'onCaughtUp hook failed');
  }
};

export const subscribe = (env: RunnerEnv, slot: Slot): void => {
  const from = slot.position ?? 'start';
  const subscription = env.store.subscribe({
    from,
    ...(slot.processor.filter ? { filter: slot.processor.filter } : {}),
    onEvent: (event) => onEvent(env, slot, event),
    onCaughtUp: () => onCaughtUp(env, slot),
  });
  slot.subscription = subscription;
  subscription.done.then(
    () => {
      if (!slot.stopping && slot.running) resubscribeLater(env, slot, new Error('subscription ended'));
    },
    (error: unknown) => {
      if (slot.stopping || error instanceof Stopped) return;
      resubscribeLater(env, slot, error);
    },
  );
};

/** A subscription that failed or ended is restarted from the slot's position after a backoff. */
export const resubscribeLater = (env: RunnerEnv, slot: Slot, error: unknown): void => {
  recordError(env, slot, error);
  slot.resubscribes += 1;
  const wait = backoffDelayMs(slot.resubscribes, env.retry);
  slot.log.error({ err: asError(error), retryInMs: wait }, 'subscription failed; restarting it');
  slot.restartTimer = setTimeout(() => {
    slot.restartTimer = undefined;
    if (!slot.stopping && slot.running) subscribe(env, slot);
  }, wait);
  slot.restartTimer.unref();
};

/** Clears what a previous run of the slot counted. */
const resetSlot = (slot: Slot): void => {
  slot.stopping = false;
  slot.fenced = false;
  slot.abort = new AbortController();
  slot.live = false;
  slot.handled = 0;
  slot.retries = 0;
  slot.resubscribes = 0;
  slot.unsaved = 0;
  slot.firstUnsavedAt = undefined;
};

/**
 * Reads where the slot resumes (its stored checkpoint; for a processor that keeps its own state,
 * the position its restored snapshot covers), its parked list and the head, runs `onStart`, and
 * subscribes.
 */
export const startSlot = async (env: RunnerEnv, slot: Slot): Promise<void> => {
  resetSlot(slot);
  slot.checkpoint = slot.storesCheckpoint ? await env.store.readCheckpoint(slot.processor.id) : undefined;
  slot.position = slot.checkpoint;
  slot.parked = (await readParked(env, slot)).parked;
  // Read before subscribing: anything appended later cannot have been seen by a previous run.
  slot.startHead = await env.store.headPosition();
  const lifecycle = { processorId: slot.processor.id, store: env.store, clock: env.clock, logger: slot.log };
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
  subscribe(env, slot);
};

/**
 * Stops taking events, runs `onStop`, abandons an event waiting between retries (it is redelivered
 * on the next start), lets the event in hand finish and stores the checkpoint.
 */
export const stopSlot = async (env: RunnerEnv, slot: Slot): Promise<void> => {
  if (!slot.running) return;
  slot.stopping = true;
  if (slot.restartTimer) clearTimeout(slot.restartTimer);
  slot.restartTimer = undefined;
  try {
    await slot.processor.onStop?.();
  } catch (error) {
    recordError(env, slot, error);
    slot.log.error({ err: asError(error) }, 'onStop hook failed');
  }
  // Wakes an event that is waiting between retries: it is abandoned, not checkpointed.
  slot.abort.abort();
  await slot.subscription?.stop();
  slot.subscription = undefined;
  await slot.lock;
  await flush(env, slot);
  slot.running = false;
  slot.live = false;
  slot.log.info(
    { checkpoint: slot.checkpoint === undefined ? null : Number(slot.checkpoint) },
    'processor stopped',
  );
};

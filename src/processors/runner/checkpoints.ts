import { asError } from '../../core/errors.ts';
import { type RunnerEnv, recordError, type Slot } from './slot.ts';

/**
 * Checkpoint writing: a slot's position is stored durably but in batches, every
 * `checkpointEvery` events or `checkpointIntervalMs` after the first unsaved one, and always when
 * the slot stops or goes idle (`flush`). A crash redelivers the events after the last stored
 * checkpoint, which is why every effect is idempotent by a key. Processors that resume from their
 * own snapshot or from the start store none.
 */

/** Stores the slot's position now (after any write in progress); never moves a checkpoint back. */
export const flush = (env: RunnerEnv, slot: Slot): Promise<void> => {
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
      await env.store.storeCheckpoint(slot.processor.id, position);
      slot.checkpoint = position;
      slot.unsaved = 0;
      slot.firstUnsavedAt = undefined;
    } catch (error) {
      recordError(env, slot, error);
      slot.log.warn({ err: asError(error), position: Number(position) }, 'checkpoint not stored; will retry');
    }
  });
  return slot.saving;
};

/** Counts one more position not stored yet (and when the first of them was reached). */
export const markUnsaved = (slot: Slot): void => {
  slot.unsaved += 1;
  slot.firstUnsavedAt ??= Date.now();
};

/** The slot finished `position` (handled, parked or skipped): moves it on, storing it in batches. */
export const advance = async (env: RunnerEnv, slot: Slot, position: bigint): Promise<void> => {
  if (slot.position === undefined || position > slot.position) slot.position = position;
  if (!slot.storesCheckpoint) return;
  markUnsaved(slot);
  if (
    slot.unsaved >= env.checkpointEvery ||
    Date.now() - (slot.firstUnsavedAt ?? Date.now()) >= env.checkpointIntervalMs
  ) {
    await flush(env, slot);
  } else if (!slot.flushTimer) {
    slot.flushTimer = setTimeout(() => {
      slot.flushTimer = undefined;
      void flush(env, slot);
    }, env.checkpointIntervalMs);
    slot.flushTimer.unref();
  }
};

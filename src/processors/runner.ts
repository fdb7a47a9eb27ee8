import { NotFoundError, ValidationError } from '../core/errors.ts';
import { createClaimRounds } from './runner/claimRounds.ts';
import { readParked, replayParked } from './runner/parked.ts';
import { createSlots, runnerEnvOf, type Slot } from './runner/slot.ts';
import { status, waitForIdle } from './runner/status.ts';
import { startSlot, stopSlot } from './runner/subscriptions.ts';
import type { ParkedEvent, ProcessorRunner, ProcessorRunnerOptions } from './runner/types.ts';

export {
  type ParkedEvent,
  PROCESSOR_STREAM_PREFIX,
  type Processor,
  type ProcessorContext,
  type ProcessorError,
  type ProcessorEventParkedData,
  type ProcessorLifecycleContext,
  type ProcessorParkedEventReplayedData,
  type ProcessorRetryOptions,
  type ProcessorRunner,
  type ProcessorRunnerOptions,
  type ProcessorStatus,
  processorStreamId,
  type ReplayParkedResult,
} from './runner/types.ts';

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
  const env = runnerEnvOf(options);
  const slots = createSlots(options);
  let started = false;
  const claims = env.claims && createClaimRounds(env, env.claims, slots, options.logger, () => started);

  const slotOf = (processorId: string): Slot => {
    const slot = slots.get(processorId);
    if (!slot) throw new NotFoundError(`no processor ${processorId}`);
    return slot;
  };

  return {
    async start() {
      if (started) throw new ValidationError('processor runner already started');
      started = true;
      for (const slot of slots.values()) if (!slot.claimed) await startSlot(env, slot);
      await claims?.start();
    },

    async stop() {
      if (!started) return;
      started = false;
      await claims?.stop();
      await Promise.all([...slots.values()].map((slot) => stopSlot(env, slot)));
      // Checkpoints are stored: the next holder resumes from them at its next round.
      await claims?.releaseClaims();
    },

    status: () => status(env, slots),

    waitForIdle: (timeoutMs = 5_000) => waitForIdle(env, slots, timeoutMs),

    async listParked(processorId) {
      const chosen = processorId === undefined ? [...slots.values()] : [slotOf(processorId)];
      const out: ParkedEvent[] = [];
      for (const slot of chosen) out.push(...(await readParked(env, slot)).parked.values());
      return out;
    },

    async replayParked(processorId, eventId) {
      return replayParked(env, slotOf(processorId), eventId);
    },

    claims: () =>
      env.claims && {
        replicaId: env.claims.replicaId,
        processors: [...slots.values()]
          .filter((slot) => slot.claimed)
          .map((slot) => ({ id: slot.processor.id, owner: slot.owner ?? null, held: slot.held })),
      },
  };
};

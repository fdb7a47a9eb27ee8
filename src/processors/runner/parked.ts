import { asError, NotFoundError } from '../../core/errors.ts';
import { newId, uuidv5 } from '../../core/ids.ts';
import type { JsonObject } from '../../core/messages.ts';
import type { RecordedEvent } from '../../eventStore/eventStore.ts';
import { backoffDelayMs, errorCodeOf, errorMessageOf } from '../retryPolicy.ts';
import { runWithRetries } from './handling.ts';
import { type Failure, type RunnerEnv, recordError, type Slot, Stopped, sleep, withLock } from './slot.ts';
import {
  type ParkedEvent,
  type ProcessorEventParkedData,
  type ProcessorParkedEventReplayedData,
  processorStreamId,
  type ReplayParkedResult,
} from './types.ts';

/**
 * Parked events: an event a processor keeps failing on is recorded as `ProcessorEventParked` in
 * `processor-<processorId>` and the processor moves on; `replayParked` runs it again later and
 * records `ProcessorParkedEventReplayed` (a success takes it off the parked list).
 */

export type ParkedList = Readonly<{
  /** Parked and not replayed successfully since, by event id (with the last failure's code and message). */
  parked: Map<string, ParkedEvent>;
  /** Successful replays per event id: how many times it was parked and then replayed. */
  replays: Map<string, number>;
}>;

/** The parked list, folded from the processor's bookkeeping stream (pure). */
export const foldParked = (events: readonly RecordedEvent[]): ParkedList => {
  const parked = new Map<string, ParkedEvent>();
  const replays = new Map<string, number>();
  for (const e of events) {
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

/**
 * The id of a park: a redelivery parks with the same id (deduplicated by the store). After a
 * successful replay the same event may fail again on a later redelivery: the park is numbered
 * (`generation`, the replays so far) so it is recorded again.
 */
export const parkedEventId = (processorId: string, eventId: string, generation: number): string =>
  uuidv5(`processor-parked:${processorId}:${eventId}${generation > 0 ? `:${generation}` : ''}`);

export const readParked = async (env: RunnerEnv, slot: Slot): Promise<ParkedList> =>
  foldParked(await env.store.readStream(processorStreamId(slot.processor.id)));

/** Records the park (retrying while the store refuses, until the runner stops), then logs it. */
export const park = async (
  env: RunnerEnv,
  slot: Slot,
  event: RecordedEvent,
  failure: Failure,
): Promise<void> => {
  const data: ProcessorEventParkedData = {
    processorId: slot.processor.id,
    position: event.position.toString(),
    eventId: event.id,
    streamId: event.streamId,
    type: event.type,
    attempts: failure.attempts,
    errorCode: errorCodeOf(failure.error),
    errorMessage: errorMessageOf(failure.error),
    parkedAt: env.clock.now().toISOString(),
  };
  for (let i = 1; ; i++) {
    try {
      const { replays } = await readParked(env, slot);
      const id = parkedEventId(slot.processor.id, event.id, replays.get(event.id) ?? 0);
      await env.store.appendToStream(processorStreamId(slot.processor.id), [
        { id, type: 'ProcessorEventParked', data: data as unknown as JsonObject },
      ]);
      break;
    } catch (error) {
      if (slot.stopping) throw new Stopped();
      recordError(env, slot, error, event);
      slot.log.error({ err: asError(error), eventId: event.id }, 'cannot record parked event; retrying');
      await sleep(backoffDelayMs(i, env.retry), slot.abort.signal);
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

/** Runs one parked entry again (under the slot's lock): its outcome, or the failure to record. */
const replayOne = async (env: RunnerEnv, slot: Slot, entry: ParkedEvent): Promise<Failure | undefined> => {
  const original = (await env.store.readStream(entry.streamId)).find((e) => e.id === entry.eventId);
  if (!original) {
    return {
      attempts: 0,
      error: new NotFoundError(`event ${entry.eventId} is no longer in ${entry.streamId}`),
    };
  }
  try {
    return await runWithRetries(env, slot, original, true);
  } catch (error) {
    if (error instanceof Stopped) return { attempts: 0, error: new Error('runner stopped') };
    throw error;
  }
};

/**
 * Runs parked events through the processor again (one, or all of the slot's), never alongside live
 * delivery, and records each outcome as `ProcessorParkedEventReplayed`.
 */
export const replayParked = async (
  env: RunnerEnv,
  slot: Slot,
  eventId?: string,
): Promise<ReplayParkedResult> => {
  const processorId = slot.processor.id;
  const { parked } = await readParked(env, slot);
  const entries = [...parked.values()].filter((p) => eventId === undefined || p.eventId === eventId);
  if (eventId !== undefined && entries.length === 0) {
    throw new NotFoundError(`processor ${processorId} has no parked event ${eventId}`);
  }
  const result: ReplayParkedResult = { processorId, succeeded: [], failed: [] };
  for (const entry of entries) {
    await withLock(slot, async () => {
      const failure = await replayOne(env, slot, entry);
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
        replayedAt: env.clock.now().toISOString(),
      };
      await env.store.appendToStream(processorStreamId(processorId), [
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

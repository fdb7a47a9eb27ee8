import type { Decider } from '../../machines/shared/machineDecider.ts';
import { ChatOpsError } from '../core/errors.ts';
import type { Event } from '../core/messages.ts';
import type { RecordedEvent } from '../eventStore/eventStore.ts';

// biome-ignore lint/suspicious/noExplicitAny: folding never calls `decide`, so any command type will do
type AnyDecider<State, E extends Event> = Decider<State, any, E>;

/**
 * A stored message as the decider's typed event: upcast and parsed with the lifecycle's schemas
 * (`decider.parseEvent`). A decider that declares no schemas gets the stored data as it is.
 * Throws SB_STORE_CORRUPT naming the stream, position, revision and type when it does not parse.
 *
 * @example
 * const event = storedEvent(incidentDecider, recorded);
 */
export const storedEvent = <State, E extends Event>(
  decider: AnyDecider<State, E>,
  message: RecordedEvent,
): E => {
  if (!decider.parseEvent) return { type: message.type, data: message.data } as unknown as E;
  try {
    return decider.parseEvent({ type: message.type, data: message.data });
  } catch (error) {
    throw corrupt(message, error);
  }
};

/**
 * Folds a stream's messages into a decider's state: events only (the commands recorded beside them
 * are skipped), each upcast and parsed (storedEvent), then `evolve`d. A stored event that does not
 * parse, or that the machine does not accept in its state (ReplayMismatch), throws SB_STORE_CORRUPT
 * naming where it is: the fold is loud, never a silent guess.
 *
 * @example
 * const state = foldHistory(incidentDecider, await store.readStream(streamId));
 */
export const foldHistory = <State, E extends Event>(
  decider: AnyDecider<State, E>,
  history: readonly RecordedEvent[],
): State => {
  let state = decider.initialState();
  for (const message of history) {
    if (message.kind !== 'event') continue;
    const event = storedEvent(decider, message);
    try {
      state = decider.evolve(state, event);
    } catch (error) {
      throw corrupt(message, error);
    }
  }
  return state;
};

const corrupt = (message: RecordedEvent, error: unknown): unknown => {
  const code = (error as { code?: unknown } | null)?.code;
  if (code !== 'SB_STORE_CORRUPT') return error;
  const issues = (error as { issues?: unknown }).issues;
  return new ChatOpsError(
    'SB_STORE_CORRUPT',
    `stream ${message.streamId}, position ${message.position} (revision ${message.revision}), ` +
      `event ${message.type} (${message.id}): ${(error as Error).message}`,
    {
      cause: error,
      details: {
        streamId: message.streamId,
        position: message.position.toString(),
        revision: message.revision,
        eventId: message.id,
        eventType: message.type,
        ...(Array.isArray(issues) ? { issues } : {}),
      },
    },
  );
};

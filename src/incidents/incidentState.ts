import { type IncidentState, incidentDecider } from '../../machines/incident/decider.ts';
import { foldHistory } from '../application/fold.ts';
import type { EventStore, RecordedEvent } from '../eventStore/eventStore.ts';

/**
 * Folds an incident stream's messages into the decider's state: events only (recorded commands are
 * skipped), each upcast and parsed with the incident event schemas first. A stored event that does
 * not parse throws SB_STORE_CORRUPT naming the stream, position and type.
 *
 * @example
 * const state = foldIncidentHistory(await store.readStream(streamId));
 */
export const foldIncidentHistory = (history: readonly RecordedEvent[]): IncidentState =>
  foldHistory(incidentDecider, history);

/**
 * Reads an incident stream and folds it (events only) into the decider's state.
 *
 * @example
 * const { state, history } = await readIncidentState(ctx.store, event.streamId);
 */
export const readIncidentState = async (
  store: EventStore,
  streamId: string,
): Promise<{ state: IncidentState; history: RecordedEvent[] }> => {
  const history = await store.readStream(streamId);
  return { state: foldIncidentHistory(history), history };
};

import { type IncidentState, incidentDecider } from '../../machines/incident/decider.ts';
import type { IncidentEvent } from '../../machines/incident/events.ts';
import type { EventStore, RecordedEvent } from '../eventStore/eventStore.ts';

/**
 * Folds an incident stream's messages (events only; recorded commands are skipped) into the
 * decider's state.
 *
 * @example
 * const state = foldIncidentHistory(await store.readStream(streamId));
 */
export const foldIncidentHistory = (history: readonly RecordedEvent[]): IncidentState =>
  history
    .filter((m) => m.kind === 'event')
    .reduce(
      (s, e) => incidentDecider.evolve(s, { type: e.type, data: e.data } as unknown as IncidentEvent),
      incidentDecider.initialState(),
    );

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

import type { EventStore } from '../eventStore/eventStore.ts';
import { createIncidentReadModels, INCIDENT_READ_MODELS_ID } from '../incidents/readModels.projection.ts';
import { createScheduler } from '../processors/scheduler.ts';
import type { ResumableState } from '../processors/snapshots.ts';
import { createTimeOffReadModel, TIME_OFF_READ_MODEL_ID } from '../timeOff/readModel.projection.ts';
import {
  createVerificationReadModel,
  VERIFICATION_READ_MODEL_ID,
} from '../verification/readModel.projection.ts';

/**
 * The read models that resume from snapshots, by name, for `npm run events -- rebuild <name>`:
 * each builds a fresh instance over the store (nothing is dispatched, nothing runs) whose
 * `rebuild()` folds every matching event from the first and writes a snapshot.
 */
export const SNAPSHOTTED_READ_MODELS: Readonly<Record<string, (store: EventStore) => ResumableState>> = {
  [INCIDENT_READ_MODELS_ID]: (store) => createIncidentReadModels({ store }).resumable,
  [VERIFICATION_READ_MODEL_ID]: (store) => createVerificationReadModel({ store }).resumable,
  [TIME_OFF_READ_MODEL_ID]: (store) => createTimeOffReadModel({ store }).resumable,
  scheduler: () =>
    createScheduler({
      dispatch: () => Promise.reject(new Error('a rebuild dispatches nothing')),
      pollIntervalMs: 0,
    }).resumable,
};

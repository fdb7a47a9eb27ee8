import { VERIFICATION_LIMITS } from '../../machines/verification/decider.ts';
import { VERIFICATION_STREAM_PREFIX } from '../../machines/verification/streams.ts';
import type { EventFilter, EventStore } from '../eventStore/eventStore.ts';
import type { Processor } from '../processors/runner.ts';
import {
  createResumableState,
  type ReadModelRegistration,
  type ResumableState,
  readModelProcessor,
} from '../processors/snapshots.ts';

/**
 * The organisation-wide count the enrich step adds to starts and resends: the times of every
 * `VerificationRequested` and `VerificationResendRequested` in the store, in memory (older than the
 * window they are dropped), resumed from a snapshot (`snapshot-verification-read-model`, see
 * src/processors/snapshots.ts). `catchUp()` reads what the processor has not applied yet, so a start
 * right after another counts it.
 */
export type VerificationReadModel = Readonly<{
  processor: Processor;
  resumable: ResumableState;
  catchUp(): Promise<void>;
  /** Starts and resends in the window ending at `now`. */
  startsSince(now: Date): number;
}>;

/** Version of the snapshotted state and of `apply`: bump it when either changes (rebuilds from zero). */
export const VERIFICATION_READ_MODEL_VERSION = 1;
export const VERIFICATION_READ_MODEL_ID = 'verification-read-model';

const FILTER: EventFilter = {
  streamPrefixes: [VERIFICATION_STREAM_PREFIX],
  eventTypes: ['VerificationRequested', 'VerificationResendRequested'],
};

export const createVerificationReadModel = (deps: Readonly<{ store: EventStore }>): VerificationReadModel => {
  let starts: number[] = [];
  const resumable = createResumableState({
    name: VERIFICATION_READ_MODEL_ID,
    version: VERIFICATION_READ_MODEL_VERSION,
    filter: FILTER,
    store: deps.store,
    apply(e) {
      const at = Date.parse(String((e.data as { at?: unknown }).at));
      if (Number.isFinite(at)) starts.push(at);
    },
    save: () => ({ starts }),
    load(state) {
      starts = [...(state as { starts: number[] }).starts];
    },
    reset() {
      starts = [];
    },
  });
  return {
    processor: readModelProcessor(VERIFICATION_READ_MODEL_ID, FILTER, resumable),
    resumable,
    catchUp: resumable.catchUp,
    startsSince(now) {
      const since = now.getTime() - VERIFICATION_LIMITS.windowMs;
      starts = starts.filter((t) => t > since - VERIFICATION_LIMITS.windowMs);
      return starts.filter((t) => t > since && t <= now.getTime()).length;
    },
  };
};

/** Registered by its module's declaration (`readModels`). */
export const VERIFICATION_READ_MODEL: ReadModelRegistration = {
  name: VERIFICATION_READ_MODEL_ID,
  create: (store) => createVerificationReadModel({ store }).resumable,
};

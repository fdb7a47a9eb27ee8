import { VERIFICATION_LIMITS } from '../../machines/verification/decider.ts';
import { VERIFICATION_STREAM_PREFIX } from '../../machines/verification/streams.ts';
import type { EventFilter, EventStore, RecordedEvent } from '../eventStore/eventStore.ts';
import type { Processor } from '../processors/runner.ts';

/**
 * The organisation-wide count the enrich step adds to starts and resends: the times of every
 * `VerificationRequested` and `VerificationResendRequested` in the store, in memory (rebuilt on
 * every start, no checkpoint; older than the window they are dropped). `catchUp()` reads what the
 * processor has not applied yet, so a start right after another counts it.
 */
export type VerificationReadModel = Readonly<{
  processor: Processor;
  catchUp(): Promise<void>;
  /** Starts and resends in the window ending at `now`. */
  startsSince(now: Date): number;
}>;

const FILTER: EventFilter = {
  streamPrefixes: [VERIFICATION_STREAM_PREFIX],
  eventTypes: ['VerificationRequested', 'VerificationResendRequested'],
};

export const createVerificationReadModel = (deps: Readonly<{ store: EventStore }>): VerificationReadModel => {
  let applied: bigint | undefined;
  let starts: number[] = [];
  const apply = (e: RecordedEvent) => {
    if (applied !== undefined && e.position <= applied) return;
    applied = e.position;
    const at = Date.parse(String((e.data as { at?: unknown }).at));
    if (Number.isFinite(at)) starts.push(at);
  };
  let catching: Promise<void> = Promise.resolve();
  const catchUp = (): Promise<void> => {
    const run = async () => {
      for (;;) {
        const page = await deps.store.readAll({
          ...(applied === undefined ? {} : { after: applied }),
          filter: FILTER,
          maxCount: 1_000,
        });
        for (const e of page) apply(e);
        if (page.length < 1_000) return;
      }
    };
    catching = catching.then(run, run);
    return catching;
  };
  return {
    processor: {
      id: 'verification-read-model',
      filter: FILTER,
      resumeFrom: 'start',
      everyReplica: true,
      onStart() {
        applied = undefined;
        starts = [];
      },
      async handle(event) {
        apply(event);
      },
    },
    catchUp,
    startsSince(now) {
      const since = now.getTime() - VERIFICATION_LIMITS.windowMs;
      starts = starts.filter((t) => t > since - VERIFICATION_LIMITS.windowMs);
      return starts.filter((t) => t > since && t <= now.getTime()).length;
    },
  };
};

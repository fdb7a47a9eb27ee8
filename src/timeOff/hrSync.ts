import { HR_READ_STREAM_PREFIX } from '../../machines/timeOff/hrReads.ts';
import type { Clock } from '../core/clock.ts';
import type { EventStore } from '../eventStore/eventStore.ts';
import type { Logger } from '../logger.ts';
import type { Dispatch } from '../processors/dispatchCommand.ts';
import type { RetryPolicy } from '../processors/retryPolicy.ts';
import type { Processor } from '../processors/runner.ts';
import type { HiBobClient } from '../upstream/hibob.ts';
import { pollChangesOnce } from './hrSync/changesPoll.ts';
import { refreshDirectoryIfStale, refreshDirectoryOnce } from './hrSync/directoryRefresh.ts';
import { createHrFacts, TIME_OFF_HR_READS_PROCESSOR } from './hrSync/facts.ts';
import { createHrReReadHandler, HR_REREAD_EVENTS } from './hrSync/reReads.ts';
import type { TimeOffReadModel } from './readModel.projection.ts';

export { DIRECTORY_FIELDS, directoryEmployeeOf, hrEntryOf } from './hrSync/entries.ts';
export { TIME_OFF_HR_READS_PROCESSOR } from './hrSync/facts.ts';
export { HR_SYNC_CHANGES_STREAM, HR_SYNC_DIRECTORY_STREAM } from './hrSync/marks.ts';

/**
 * HR sync: what HR knows that Switchboard did not do itself, brought in as facts.
 *
 * - **Webhook re-reads** (`timeoff-hr-reads`): `POST /webhooks/hibob` records `RequestHrReRead`
 *   (machines/timeOff/hrReads.ts), due once HR's lag has passed since the delivery arrived; this
 *   processor reads the thing through the API then (a 404, or a read not showing what the webhook
 *   announced, retried on the lag policy) and records it: time off → `RecordHrTimeOff` on
 *   `hrtimeoff-<id>`; an employee → `RecordEmployeeUpdate` or `RecordEmployeeLeft` on the
 *   directory. Waiting for the lag (rather than reading at once) is what keeps a stale read from
 *   undoing a newer fact: a read taken after the lag is at least as new as the notification.
 * - **Changes poll** (`pollChanges`, every `changesPollMs`; 0: only when called): HR's time-off
 *   changes since the last poll, re-read with an overlap of HR's lag (a change becomes visible up
 *   to the lag after its time), the newest change per request recorded (`RecordHrTimeOff`). The
 *   poll's high-water mark is kept durably (`HrChangesPolled` on `hrsync-changes`).
 * - **Directory refresh** (`refreshDirectory`, at start when the directory is empty or older than
 *   the interval, then every `directoryRefreshMs`; 0: only when called): ONE people search, inactive
 *   people included, with only the fields the directory needs → `RecordDirectorySnapshot` (only
 *   differences become facts). The only people search the lifecycle spends. Its time is kept
 *   durably (`HrDirectoryRead` on `hrsync-directory`). People without an email in HR cannot be
 *   matched to Slack and are left out.
 *
 * Matching our own requests: an HR entry that is one of ours (`requestOfHrId`) confirms a request
 * whose read-back is outstanding or ran out (`RecordTimeOffReadBack` on its last read-back) or
 * cancels it (`RecordTimeOffCancelledInHr`, cancelled in the HR web app); an entry matching a
 * submission HR took but whose id we have not found (`awaitingHrId`, and `TimeOffSubmissionSent`
 * for it) records `RecordTimeOffSubmitted`, also after the lookups ran out.
 *
 * Where things are (`hrSync/`): HR's answers as entries, `entries.ts`; recording them and matching
 * our own requests, `facts.ts`; the re-reads, `reReads.ts`; the poll, `changesPoll.ts`; the
 * directory, `directoryRefresh.ts`; the durable marks, `marks.ts`. This file runs them: one at a
 * time each, on timers once the re-reads are live.
 */
export type TimeOffHrSync = Readonly<{
  processors: readonly Processor[];
  /** One full people search (inactive included) → RecordDirectorySnapshot. */
  refreshDirectory(): Promise<void>;
  /** HR's time-off changes since the last poll → RecordHrTimeOff (and ours matched). */
  pollChanges(): Promise<void>;
}>;

export type TimeOffHrSyncOptions = Readonly<{
  client: HiBobClient;
  dispatch: Dispatch;
  readModel: TimeOffReadModel;
  clock: Clock;
  logger: Logger;
  retry: RetryPolicy;
  lagRetry: RetryPolicy;
  /** 0: only at start and when asked (tests). */
  directoryRefreshMs: number;
  changesPollMs: number;
  /** The store, for the durable marks of the last poll and directory read. */
  store: EventStore;
  /** How long HR may take to show a write (default 30 s: its ~20 s and a margin). */
  hrLagMs?: number;
}>;

/** Runs `once` one call at a time: a call while one runs waits for it, then runs again. */
const oneAtATime = (once: () => Promise<void>) => {
  let running: Promise<void> = Promise.resolve();
  return {
    run: (): Promise<void> => {
      running = running.then(once, once);
      return running;
    },
    settled: (): Promise<unknown> => Promise.allSettled([running]),
  };
};

export const createTimeOffHrSync = (options: TimeOffHrSyncOptions): TimeOffHrSync => {
  const { client, readModel, clock, logger, store } = options;
  const hrLagMs = options.hrLagMs ?? 30_000;
  const facts = createHrFacts({ dispatch: options.dispatch, readModel, clock, logger });

  const polling = oneAtATime(() => pollChangesOnce({ client, store, clock, facts, hrLagMs }));
  const refreshing = oneAtATime(() => refreshDirectoryOnce({ client, store, clock, logger, facts }));
  const pollChanges = polling.run;
  const refreshDirectory = refreshing.run;

  // ---------------------------------------------------------------- timers

  const intervals: NodeJS.Timeout[] = [];
  const every = (ms: number, what: string, run: () => Promise<void>) => {
    if (ms <= 0) return;
    const t = setInterval(() => {
      run().catch((err: unknown) => logger.warn({ err }, `${what} failed; next time`));
    }, ms);
    t.unref();
    intervals.push(t);
  };

  const readsProcessor: Processor = {
    id: TIME_OFF_HR_READS_PROCESSOR,
    filter: { streamPrefixes: [HR_READ_STREAM_PREFIX], eventTypes: [...HR_REREAD_EVENTS] },
    handle: createHrReReadHandler({
      client,
      dispatch: options.dispatch,
      readModel,
      facts,
      lagRetry: options.lagRetry,
    }),
    onCaughtUp() {
      if (intervals.length > 0) return;
      every(options.directoryRefreshMs, 'HR directory read', refreshDirectory);
      every(options.changesPollMs, 'HR changes poll', pollChanges);
      if (options.directoryRefreshMs <= 0) return;
      // At start: the directory when it is empty or older than the interval.
      refreshDirectoryIfStale(
        { store, clock, logger, readModel },
        options.directoryRefreshMs,
        refreshDirectory,
      ).catch((err: unknown) => logger.warn({ err }, 'HR directory read at start failed; next time'));
    },
    async onStop() {
      for (const t of intervals.splice(0)) clearInterval(t);
      await Promise.all([polling.settled(), refreshing.settled()]);
    },
  };

  return { processors: [readsProcessor], refreshDirectory, pollChanges };
};

import type { DirectoryEmployee, EmployeeStatus } from '../../machines/timeOff/directory.ts';
import {
  type HrTimeOffEntry,
  hrTimeOffStatusOf,
  parseHrRequestId,
} from '../../machines/timeOff/hrCalendar.ts';
import {
  HR_READ_STREAM_PREFIX,
  type HrRead,
  type HrReadState,
  hrReadDecider,
  hrReadOfStream,
} from '../../machines/timeOff/hrReads.ts';
import { foldHistory } from '../application/fold.ts';
import type { Clock } from '../core/clock.ts';
import { ChatOpsError, isChatOpsError } from '../core/errors.ts';
import { uuidv5 } from '../core/ids.ts';
import type { Command, JsonObject } from '../core/messages.ts';
import type { EventStore, RecordedEvent } from '../eventStore/eventStore.ts';
import type { Logger } from '../logger.ts';
import { type Dispatch, dispatchCommand } from '../processors/dispatchCommand.ts';
import type { RetryPolicy } from '../processors/retryPolicy.ts';
import type { Processor } from '../processors/runner.ts';
import {
  createUpstreamCallProcessor,
  type OutcomeCommand,
  type UpstreamCallSpec,
  type UpstreamCallTarget,
} from '../processors/upstreamCall.ts';
import {
  type HiBobClient,
  type HiBobEmployee,
  hibobAuthWaitMs,
  type TimeOffChange,
  type TimeOffRequest,
} from '../upstream/hibob.ts';
import type { TimeOffReadModel } from './readModel.projection.ts';

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

export const TIME_OFF_HR_READS_PROCESSOR = 'timeoff-hr-reads';
const ACTOR = 'system:timeoff-hr-sync';
export const HR_SYNC_CHANGES_STREAM = 'hrsync-changes';
export const HR_SYNC_DIRECTORY_STREAM = 'hrsync-directory';
/** The first poll ever looks this far back. */
const FIRST_POLL_LOOKBACK_MS = 24 * 60 * 60_000;

/** The fields the directory needs, and only those (one search answers everyone). */
export const DIRECTORY_FIELDS = [
  'root.id',
  'root.email',
  'root.displayName',
  'root.firstName',
  'root.surname',
  'work.reportsTo',
  'work.site',
  'internal.lifecycleStatus',
] as const;

const PORTIONS = new Set(['all_day', 'morning', 'afternoon']);
const portionOf = (v: string | undefined): HrTimeOffEntry['startPortion'] =>
  v !== undefined && PORTIONS.has(v) ? (v as HrTimeOffEntry['startPortion']) : 'all_day';

const DATE = /^\d{4}-\d{2}-\d{2}$/;

/** An HR time-off answer (a read or a change) as an entry, or null when it does not check out. */
export const hrEntryOf = (
  r: Pick<
    TimeOffRequest,
    | 'requestId'
    | 'employeeId'
    | 'startDate'
    | 'endDate'
    | 'startDatePortion'
    | 'endDatePortion'
    | 'policyTypeDisplayName'
    | 'approved'
  > &
    Readonly<{ status?: string | undefined; policyType?: string | undefined }>,
): HrTimeOffEntry | null => {
  const hrRequestId = parseHrRequestId(r.requestId);
  if (hrRequestId === null || !/^[A-Za-z0-9_-]{1,64}$/.test(r.employeeId)) return null;
  if (!DATE.test(r.startDate) || !DATE.test(r.endDate)) return null;
  return {
    hrRequestId,
    employeeId: r.employeeId,
    policyType: (r.policyTypeDisplayName ?? r.policyType ?? '').slice(0, 100),
    startDate: r.startDate,
    endDate: r.endDate,
    startPortion: portionOf(r.startDatePortion),
    endPortion: portionOf(r.endDatePortion),
    status: hrTimeOffStatusOf(r.status, r.approved),
  };
};

const statusOfEmployee = (status: string | undefined): EmployeeStatus => {
  const s = (status ?? 'employed').toLowerCase();
  if (s === 'employed' || s === 'active') return 'active';
  if (s === 'terminated' || s === 'left' || s === 'deleted') return 'left';
  return 'inactive';
};

/** An HR employee as the directory keeps them, or null without an email. */
export const directoryEmployeeOf = (e: HiBobEmployee): DirectoryEmployee | null => {
  const email = e.email?.trim().toLowerCase();
  if (!email || email.length < 3 || email.length > 320) return null;
  const name = e.displayName ?? [e.firstName, e.surname].filter(Boolean).join(' ');
  return {
    hrId: e.id,
    email,
    displayName: name.slice(0, 200),
    managerHrId: e.managerId && /^[A-Za-z0-9_-]{1,64}$/.test(e.managerId) ? e.managerId : null,
    site: e.site ? e.site.slice(0, 200) : null,
    status: statusOfEmployee(e.status),
  };
};

type Target = UpstreamCallTarget &
  Readonly<{ cause: RecordedEvent; thing: NonNullable<ReturnType<typeof hrReadOfStream>> }>;

/** A read that did not show what the webhook announced yet: retried on the lag policy. */
class NotVisible extends ChatOpsError {
  constructor(message: string) {
    super('SB_UPSTREAM_UNAVAILABLE', message, { details: { reason: 'not_visible' } });
  }
}

/** HR refused our credentials: the read waits `waitMs`, until the client's circuit reopens. */
class AuthWait extends ChatOpsError {
  readonly waitMs: number;
  constructor(waitMs: number, cause: unknown) {
    super('SB_UPSTREAM_UNAVAILABLE', 'HR calls wait for the credentials', { cause });
    this.waitMs = waitMs;
  }
}

export const createTimeOffHrSync = (options: TimeOffHrSyncOptions): TimeOffHrSync => {
  const { client, readModel, clock, logger, store } = options;
  const hrLagMs = options.hrLagMs ?? 30_000;

  const command = (type: string, data: object, key: string, causationId?: string): Command => ({
    type,
    data: data as JsonObject,
    metadata: {
      now: clock.now().toISOString(),
      commandId: uuidv5(`${TIME_OFF_HR_READS_PROCESSOR}:${key}`),
      actor: ACTOR,
      ...(causationId ? { causationId } : {}),
    },
  });
  const record = async (c: Command): Promise<void> => {
    const r = await dispatchCommand(options.dispatch, c);
    if (r.outcome === 'rejected')
      logger.warn({ code: r.code, commandType: c.type }, `not recorded: ${r.message}`);
  };

  /** Records HR's entry, then what it means for one of our requests. */
  const recordEntry = async (entry: HrTimeOffEntry, key: string, causationId?: string): Promise<void> => {
    await record(command('RecordHrTimeOff', { entry }, `${key}:entry`, causationId));
    await readModel.catchUp();
    const ours = readModel.requestOfHrId(entry.hrRequestId);
    if (ours) {
      if (entry.status === 'cancelled') {
        await record(
          command(
            'RecordTimeOffCancelledInHr',
            { timeOffId: ours.timeOffId, cancelRequestId: null },
            `${key}:cancelled`,
            causationId,
          ),
        );
        return;
      }
      const state = readModel.state(ours.timeOffId);
      const readBackRequestId = state?.context.readBackRequestId ?? null;
      if (ours.phase === 'submitted' && readBackRequestId !== null) {
        await record(
          command(
            'RecordTimeOffReadBack',
            { timeOffId: ours.timeOffId, readBackRequestId, hrStatus: entry.status },
            `${key}:readback`,
            causationId,
          ),
        );
      }
      return;
    }
    if (entry.status === 'cancelled') return;
    const match = { policyType: entry.policyType, startDate: entry.startDate, endDate: entry.endDate };
    for (const view of readModel.awaitingHrId(entry.employeeId, match)) {
      const sent = readModel.state(view.timeOffId)?.context.submissionSent ?? null;
      // Only a submission HR took: an approved request not posted yet is not matched to a request
      // someone made in the HR web app for the same days.
      if (!sent) continue;
      await record(
        command(
          'RecordTimeOffSubmitted',
          {
            timeOffId: view.timeOffId,
            submitRequestId: sent.submitRequestId,
            hrRequestId: entry.hrRequestId,
          },
          `${key}:submitted:${view.timeOffId}`,
          causationId,
        ),
      );
      return;
    }
  };

  // ---------------------------------------------------------------- webhook re-reads

  const readState = async (s: EventStore, streamId: string): Promise<HrReadState> =>
    foldHistory(hrReadDecider, await s.readStream(streamId));

  const targetOf = (event: RecordedEvent): Target | null => {
    if (event.kind !== 'event') return null;
    const thing = hrReadOfStream(event.streamId);
    if (!thing) return null;
    const d = event.data as { readId?: unknown; requestId?: unknown; attempt?: unknown };
    const base = { streamId: event.streamId, cause: event, thing };
    if (event.type === 'HrReReadRequested' && typeof d.readId === 'string') {
      return { ...base, requestId: d.readId, attempt: 0 };
    }
    if (
      event.type === 'HrReReadRetried' &&
      typeof d.requestId === 'string' &&
      typeof d.attempt === 'number'
    ) {
      return { ...base, requestId: d.requestId, attempt: d.attempt };
    }
    return null;
  };

  const read = async (r: HrRead, target: Target): Promise<void> => {
    const key = `${r.requestId}:${target.attempt}`;
    const causationId = target.cause.id;
    if (r.action === 'read_timeoff') {
      let got: TimeOffRequest | null = null;
      try {
        got = await client.getTimeOffRequest(r.employeeId, Number(r.id));
      } catch (e) {
        if (!(isChatOpsError(e) && e.code === 'SB_NOT_FOUND')) throw e;
      }
      const known = readModel.hrEntry(r.id);
      if (got === null) {
        // Gone from HR after a cancel: as good as cancelled, when we know what it was.
        if (r.expect === 'cancelled' && known) {
          await recordEntry({ ...known, status: 'cancelled' }, key, causationId);
          return;
        }
        throw new NotVisible('HR does not show the request yet');
      }
      const entry = hrEntryOf(got);
      if (!entry)
        throw new ChatOpsError('SB_UPSTREAM_REJECTED', 'HR answered a request that does not check out');
      if (r.expect === 'cancelled' && entry.status !== 'cancelled') {
        throw new NotVisible('HR does not show the cancel yet');
      }
      await recordEntry(entry, key, causationId);
      return;
    }
    let employee: HiBobEmployee | null = null;
    try {
      employee = await client.getEmployee(r.id, DIRECTORY_FIELDS);
    } catch (e) {
      if (!(isChatOpsError(e) && e.code === 'SB_NOT_FOUND')) throw e;
    }
    if (employee === null || statusOfEmployee(employee.status) === 'left') {
      if (employee === null && r.expect !== 'left') throw new NotVisible('HR does not show the employee yet');
      await record(command('RecordEmployeeLeft', { hrId: r.id }, `${key}:left`, causationId));
      return;
    }
    if (r.expect === 'left') throw new NotVisible('HR does not show the employee as left yet');
    const entry = directoryEmployeeOf(employee);
    if (entry)
      await record(command('RecordEmployeeUpdate', { employee: entry }, `${key}:employee`, causationId));
  };

  const outcome = (target: Target, type: string, data: object): OutcomeCommand => ({
    type,
    data: { action: target.thing.action, id: target.thing.id, ...data } as JsonObject,
  });
  const spec: UpstreamCallSpec<HrReadState, HrRead, Target, OutcomeCommand> = {
    processorId: TIME_OFF_HR_READS_PROCESSOR,
    actor: ACTOR,
    // Every re-read retries on the lag policy; one HR refused our credentials waits for the
    // client's 401 circuit to reopen.
    policy: ({ error }) =>
      error instanceof AuthWait ? { ...options.lagRetry, retryAfterMs: error.waitMs } : options.lagRetry,
    readState,
    pendingRequest: (state, requestId) => state.reads.find((r) => r.requestId === requestId) ?? null,
    async call({ request, target, ctx }) {
      try {
        await read(request, target);
      } catch (e) {
        const waitMs = hibobAuthWaitMs(e, ctx.now());
        // Every HR call waits for the 401 circuit to reopen: the retry is due then.
        if (waitMs !== null) throw new AuthWait(waitMs, e);
        throw e;
      }
      return outcome(target, 'RecordHrReReadDone', { readId: request.requestId });
    },
    succeeded: ({ result }) => result,
    failed: ({ request, failure, target }) =>
      outcome(target, 'RecordHrReReadFailed', {
        requestId: request.requestId,
        attempt: failure.attempt,
        maxAttempts: failure.maxAttempts,
        code:
          failure.error instanceof NotVisible
            ? 'SB_HR_NOT_VISIBLE'
            : failure.error instanceof AuthWait
              ? 'SB_UPSTREAM_AUTH'
              : failure.code,
        message: failure.message,
        nextAttemptAt: failure.nextAttemptAt,
      }),
    retry: ({ request, attempt, target }) =>
      outcome(target, 'RetryHrReRead', { requestId: request.requestId, attempt }),
    retryTimerId: (request, failedAttempt) => `hrread-retry-${request.requestId}-${failedAttempt}`,
    record: (c) => options.dispatch(c),
  };

  // ---------------------------------------------------------------- durable marks

  const lastMark = async (streamId: string): Promise<Record<string, unknown> | null> => {
    const [last] = await store.readStream(streamId, { direction: 'backwards', maxCount: 1 });
    return last && last.kind === 'event' ? (last.data as Record<string, unknown>) : null;
  };
  const mark = async (streamId: string, type: string, data: JsonObject): Promise<void> => {
    await store.appendToStream(
      streamId,
      [{ id: uuidv5(`${streamId}:${JSON.stringify(data)}`), type, data }],
      {
        expectedRevision: 'any',
      },
    );
  };

  // ---------------------------------------------------------------- changes poll

  let polling: Promise<void> = Promise.resolve();
  const pollOnce = async (): Promise<void> => {
    const now = clock.now();
    const last = await lastMark(HR_SYNC_CHANGES_STREAM);
    const until = typeof last?.until === 'string' ? Date.parse(last.until) : NaN;
    const since = new Date(Number.isNaN(until) ? now.getTime() - FIRST_POLL_LOOKBACK_MS : until - hrLagMs);
    const changes = await client.changesSince(since, { includePending: true });
    // The newest change of each request is what it is now.
    const newest = new Map<number, TimeOffChange>();
    for (const c of changes) newest.set(c.requestId, c);
    let recorded = 0;
    for (const c of newest.values()) {
      const entry = hrEntryOf(c);
      if (!entry) continue;
      await recordEntry(entry, `poll:${now.toISOString()}:${entry.hrRequestId}:${entry.status}`);
      recorded += 1;
    }
    await mark(HR_SYNC_CHANGES_STREAM, 'HrChangesPolled', {
      since: since.toISOString(),
      until: now.toISOString(),
      changes: recorded,
      at: now.toISOString(),
    });
  };
  const pollChanges = (): Promise<void> => {
    polling = polling.then(pollOnce, pollOnce);
    return polling;
  };

  // ---------------------------------------------------------------- directory

  let refreshing: Promise<void> = Promise.resolve();
  const refreshOnce = async (): Promise<void> => {
    const now = clock.now();
    const people = await client.searchPeople({ fields: [...DIRECTORY_FIELDS], showInactive: true });
    const byId = new Map<string, DirectoryEmployee>();
    for (const p of people) {
      const e = directoryEmployeeOf(p);
      if (e) byId.set(e.hrId, e);
    }
    await record(
      command('RecordDirectorySnapshot', { employees: [...byId.values()] }, `directory:${now.toISOString()}`),
    );
    await mark(HR_SYNC_DIRECTORY_STREAM, 'HrDirectoryRead', {
      employees: byId.size,
      at: now.toISOString(),
    });
    logger.info({ employees: byId.size, searched: people.length }, 'HR directory read (one people search)');
  };
  const refreshDirectory = (): Promise<void> => {
    refreshing = refreshing.then(refreshOnce, refreshOnce);
    return refreshing;
  };

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

  const reads = createUpstreamCallProcessor({
    filter: { streamPrefixes: [HR_READ_STREAM_PREFIX], eventTypes: ['HrReReadRequested', 'HrReReadRetried'] },
    target: targetOf,
    spec,
  });
  const readsProcessor: Processor = {
    ...reads,
    onCaughtUp() {
      if (intervals.length > 0) return;
      every(options.directoryRefreshMs, 'HR directory read', refreshDirectory);
      every(options.changesPollMs, 'HR changes poll', pollChanges);
      if (options.directoryRefreshMs <= 0) return;
      // At start: the directory when it is empty or older than the interval.
      void (async () => {
        const last = await lastMark(HR_SYNC_DIRECTORY_STREAM);
        const at = typeof last?.at === 'string' ? Date.parse(last.at) : NaN;
        await readModel.catchUp();
        const age = Number.isNaN(at) ? null : clock.now().getTime() - at;
        if (readModel.directory().size === 0 || age === null || age >= options.directoryRefreshMs) {
          logger.info({ ageMs: age }, 'HR directory is empty or stale: read at start');
          await refreshDirectory();
        } else {
          logger.info({ ageMs: age }, 'HR directory is fresh: not read at start');
        }
      })().catch((err: unknown) => logger.warn({ err }, 'HR directory read at start failed; next time'));
    },
    async onStop() {
      for (const t of intervals.splice(0)) clearInterval(t);
      await Promise.allSettled([polling, refreshing]);
    },
  };

  return { processors: [readsProcessor], refreshDirectory, pollChanges };
};

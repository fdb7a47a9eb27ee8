import {
  type HrRead,
  type HrReadState,
  hrReadDecider,
  hrReadOfStream,
} from '../../../machines/timeOff/hrReads.ts';
import { foldHistory } from '../../application/fold.ts';
import { ChatOpsError, isChatOpsError } from '../../core/errors.ts';
import type { JsonObject } from '../../core/messages.ts';
import type { EventStore, RecordedEvent } from '../../eventStore/eventStore.ts';
import type { Dispatch } from '../../processors/dispatchCommand.ts';
import type { RetryPolicy } from '../../processors/retryPolicy.ts';
import type { ProcessorContext } from '../../processors/runner.ts';
import {
  type OutcomeCommand,
  runUpstreamCall,
  type UpstreamCallSpec,
  type UpstreamCallTarget,
} from '../../processors/upstreamCall.ts';
import {
  type HiBobClient,
  type HiBobEmployee,
  hibobAuthWaitMs,
  type TimeOffRequest,
} from '../../upstream/hibob.ts';
import type { TimeOffReadModel } from '../readModel.projection.ts';
import { DIRECTORY_FIELDS, directoryEmployeeOf, hrEntryOf, statusOfEmployee } from './entries.ts';
import { type HrFacts, TIME_OFF_HR_READS_PROCESSOR } from './facts.ts';

/**
 * Webhook re-reads (`timeoff-hr-reads`): `POST /webhooks/hibob` records `RequestHrReRead`
 * (machines/timeOff/hrReads.ts), due once HR's lag has passed since the delivery arrived; this reads
 * the thing through the API then (a 404, or a read not showing what the webhook announced, retried
 * on the lag policy) and records it: time off → `RecordHrTimeOff` on `hrtimeoff-<id>`; an employee
 * → `RecordEmployeeUpdate` or `RecordEmployeeLeft` on the directory.
 */

export const HR_REREAD_EVENTS = ['HrReReadRequested', 'HrReReadRetried'] as const;

const ACTOR = 'system:timeoff-hr-sync';

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

export type HrReReadDeps = Readonly<{
  client: HiBobClient;
  dispatch: Dispatch;
  readModel: TimeOffReadModel;
  facts: HrFacts;
  lagRetry: RetryPolicy;
}>;

/** The thing, or null when HR answers 404. */
const orNotFound = async <T>(read: Promise<T>): Promise<T | null> => {
  try {
    return await read;
  } catch (e) {
    if (!(isChatOpsError(e) && e.code === 'SB_NOT_FOUND')) throw e;
    return null;
  }
};

/** A time-off request as HR shows it now; gone after a cancel counts as cancelled when we know what it was. */
const readTimeOff = async (
  deps: HrReReadDeps,
  r: HrRead,
  key: string,
  causationId: string,
): Promise<void> => {
  const got: TimeOffRequest | null = await orNotFound(
    deps.client.getTimeOffRequest(r.employeeId, Number(r.id)),
  );
  const known = deps.readModel.hrEntry(r.id);
  if (got === null) {
    // Gone from HR after a cancel: as good as cancelled, when we know what it was.
    if (r.expect === 'cancelled' && known) {
      await deps.facts.recordEntry({ ...known, status: 'cancelled' }, key, causationId);
      return;
    }
    throw new NotVisible('HR does not show the request yet');
  }
  const entry = hrEntryOf(got);
  if (!entry) throw new ChatOpsError('SB_UPSTREAM_REJECTED', 'HR answered a request that does not check out');
  if (r.expect === 'cancelled' && entry.status !== 'cancelled') {
    throw new NotVisible('HR does not show the cancel yet');
  }
  await deps.facts.recordEntry(entry, key, causationId);
};

/** An employee as HR shows them now: left (or gone), or their directory entry. */
const readEmployee = async (
  deps: HrReReadDeps,
  r: HrRead,
  key: string,
  causationId: string,
): Promise<void> => {
  const { facts } = deps;
  const employee: HiBobEmployee | null = await orNotFound(deps.client.getEmployee(r.id, DIRECTORY_FIELDS));
  if (employee === null || statusOfEmployee(employee.status) === 'left') {
    if (employee === null && r.expect !== 'left') throw new NotVisible('HR does not show the employee yet');
    await facts.record(facts.command('RecordEmployeeLeft', { hrId: r.id }, `${key}:left`, causationId));
    return;
  }
  if (r.expect === 'left') throw new NotVisible('HR does not show the employee as left yet');
  const entry = directoryEmployeeOf(employee);
  if (entry)
    await facts.record(
      facts.command('RecordEmployeeUpdate', { employee: entry }, `${key}:employee`, causationId),
    );
};

const readState = async (s: EventStore, streamId: string): Promise<HrReadState> =>
  foldHistory(hrReadDecider, await s.readStream(streamId));

/** The `timeoff-hr-reads` processor's `handle`: one re-read (or its retry) on the upstream-call mechanism. */
export const createHrReReadHandler =
  (deps: HrReReadDeps) =>
  async (event: RecordedEvent, ctx: ProcessorContext): Promise<void> => {
    if (event.kind !== 'event') return;
    const thing = hrReadOfStream(event.streamId);
    if (!thing) return;
    const d = event.data as { readId?: unknown; requestId?: unknown; attempt?: unknown };
    const target: UpstreamCallTarget | null =
      event.type === 'HrReReadRequested' && typeof d.readId === 'string'
        ? { streamId: event.streamId, requestId: d.readId, attempt: 0 }
        : event.type === 'HrReReadRetried' && typeof d.requestId === 'string' && typeof d.attempt === 'number'
          ? { streamId: event.streamId, requestId: d.requestId, attempt: d.attempt }
          : null;
    if (!target) return;
    const read = (r: HrRead): Promise<void> => {
      const key = `${r.requestId}:${target.attempt}`;
      return r.action === 'read_timeoff'
        ? readTimeOff(deps, r, key, event.id)
        : readEmployee(deps, r, key, event.id);
    };

    const outcome = (type: string, data: object): OutcomeCommand => ({
      type,
      data: { action: thing.action, id: thing.id, ...data } as JsonObject,
    });
    const spec: UpstreamCallSpec<HrReadState, HrRead, UpstreamCallTarget, OutcomeCommand> = {
      processorId: TIME_OFF_HR_READS_PROCESSOR,
      actor: ACTOR,
      // Every re-read retries on the lag policy; one HR refused our credentials waits for the
      // client's 401 circuit to reopen.
      policy: ({ error }) =>
        error instanceof AuthWait ? { ...deps.lagRetry, retryAfterMs: error.waitMs } : deps.lagRetry,
      readState,
      pendingRequest: (state, requestId) => state.reads.find((r) => r.requestId === requestId) ?? null,
      async call({ request }) {
        try {
          await read(request);
        } catch (e) {
          const waitMs = hibobAuthWaitMs(e, ctx.now());
          // Every HR call waits for the 401 circuit to reopen: the retry is due then.
          if (waitMs !== null) throw new AuthWait(waitMs, e);
          throw e;
        }
        return outcome('RecordHrReReadDone', { readId: request.requestId });
      },
      succeeded: ({ result }) => result,
      failed: ({ request, failure }) =>
        outcome('RecordHrReReadFailed', {
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
      retry: ({ request, attempt }) => outcome('RetryHrReRead', { requestId: request.requestId, attempt }),
      retryTimerId: (request, failedAttempt) => `hrread-retry-${request.requestId}-${failedAttempt}`,
      record: (c) => deps.dispatch(c),
    };
    await runUpstreamCall(spec, ctx, event, target);
  };

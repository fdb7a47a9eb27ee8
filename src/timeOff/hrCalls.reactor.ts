import { type TimeOffState, timeOffDecider } from '../../machines/timeOff/decider.ts';
import type { TimeOffAction } from '../../machines/timeOff/events.ts';
import { findHrRequest, type TimeOffHrRequest } from '../../machines/timeOff/machine.ts';
import { requestIdOfStream, TIME_OFF_STREAM_PREFIX } from '../../machines/timeOff/streams.ts';
import { foldHistory } from '../application/fold.ts';
import { ChatOpsError, isChatOpsError } from '../core/errors.ts';
import { uuidv5 } from '../core/ids.ts';
import type { Command, JsonObject } from '../core/messages.ts';
import type { RecordedEvent } from '../eventStore/eventStore.ts';
import type { Logger } from '../logger.ts';
import { type Dispatch, dispatchCommand } from '../processors/dispatchCommand.ts';
import type { RetryPolicy, RetryRule } from '../processors/retryPolicy.ts';
import type { Processor, ProcessorContext } from '../processors/runner.ts';
import {
  createUpstreamCallProcessor,
  type FailedAttempt,
  type OutcomeCommand,
  type UpstreamCallArgs,
  type UpstreamCallSpec,
  type UpstreamCallTarget,
  type UpstreamFailure,
} from '../processors/upstreamCall.ts';
import { type HiBobClient, hibobAuthWaitMs } from '../upstream/hibob.ts';
import type { TimeOffReadModel } from './readModel.projection.ts';

/**
 * `timeoff-hr-calls`: every HR call a time-off request records (submit, read_back, cancel), on the
 * durable upstream-call mechanism (src/processors/upstreamCall.ts): folded right before each
 * attempt, sent only while pending, failures recorded with their retry, outcomes recorded once.
 *
 * The submit answers 200 with NO request id, and HR shows every write up to ~20 s late. So:
 * 1. "check first": before any POST, HR's changes feed since the approval is searched for the
 *    request (`findSubmittedRequest`); found → `RecordTimeOffSubmitted`, nothing posted;
 * 2. a redelivered attempt (a restart while it was in flight), or a retry after a failure that
 *    does not say HR did not take the POST (a timeout, a lost connection, a 5xx), first waits out
 *    HR's lag (`hrLagMs`, a recorded failure with its retry, never a sleep), so the check can see
 *    what may have landed;
 * 3. the POST; a 200 → `RecordTimeOffSubmissionSent { since }` at once: from then on the
 *    submission is NEVER posted again, its attempts only look for the id;
 * 4. looking for the id while HR does not show it yet is a failed attempt on the lag policy
 *    (`lagRetry`, about 4 minutes), fired by the scheduler: the processor never sleeps, so 200
 *    requests within a minute all progress. Found → `RecordTimeOffSubmitted { hrRequestId }`;
 *    the lag policy running out leaves the request approved (see TimeOffUpstreamCallFailed).
 *
 * Read back: `getTimeOffRequest`, a 404 within the lag retried on the lag policy →
 * `RecordTimeOffReadBack { hrStatus }`. Cancel: `cancelTimeOffRequest` → `RecordTimeOffCancelledInHr`.
 *
 * HR's answers: 400 → `RecordTimeOffSubmissionRejected` with the client's words for the requester;
 * 403 → a final failure in words ("HR refused Switchboard's permission to …; an admin has been
 * told"), an error log with the stable code `HIBOB_PERMISSION_MISSING` naming the permission, and
 * `onPermissionMissing` (a counter); 429 → the retry at `X-RateLimit-Reset`; 401 (and every call
 * refused unsent while the client's circuit is open) → the retry is due when the circuit reopens,
 * 5 minutes on: no HR call meanwhile, and not a final failure after 5 quick attempts into a closed
 * door (the operator alert is the client's `onAuthAlert`). Every failure's message is in words;
 * HR's own text is never stored as it came.
 */
export const TIME_OFF_HR_CALLS_PROCESSOR = 'timeoff-hr-calls';
const ACTOR = 'system:timeoff-hr-calls';
export const PERMISSION_MISSING_LOG_CODE = 'HIBOB_PERMISSION_MISSING';
/** The code of a failure while HR does not show a write yet. */
export const HR_NOT_VISIBLE = 'SB_HR_NOT_VISIBLE';
/** Failures after which a POST may have landed in HR all the same. */
const MAYBE_LANDED = (code: string): boolean =>
  code === 'SB_TIMEOUT' ||
  code === 'SB_UPSTREAM_UNAVAILABLE' ||
  code === 'UNCODED' ||
  code.startsWith('UND_ERR_') ||
  /^E[A-Z]+$/.test(code);

/** HR's changes are searched from a little before our own clock said the POST left (clock skew). */
const SINCE_MARGIN_MS = 2 * 60_000;

export type TimeOffHrCallsOptions = Readonly<{
  client: HiBobClient;
  dispatch: Dispatch;
  /** Durable retries of failed HR calls (network, 5xx, 429). */
  retry: RetryPolicy;
  /** Retries while HR has not shown a write yet (read-after-write lag, up to ~20 s). */
  lagRetry: RetryPolicy;
  readModel: TimeOffReadModel;
  logger: Logger;
  /** How long HR may take to show a write (default 30 s: its ~20 s and a margin). */
  hrLagMs?: number;
  /** A 403: the service user lacks `permission` (the operator alert's counter). */
  onPermissionMissing?: (alert: Readonly<{ operation: TimeOffAction; permission: string }>) => void;
}>;

type Target = UpstreamCallTarget & Readonly<{ timeOffId: string; cause: RecordedEvent }>;
type Args = UpstreamCallArgs<TimeOffState, TimeOffHrRequest, Target>;
/** Which of HR's answers an attempt's error was, for its retry and its words. */
type FailureKind = 'not_visible' | 'maybe_sent' | 'auth_circuit' | 'permission' | 'other';

const REQUEST_EVENTS = [
  'TimeOffApproved',
  'TimeOffResubmitted',
  'TimeOffSubmitted',
  'TimeOffCancelRequested',
  'TimeOffUpstreamCallRetried',
] as const;

/**
 * Thrown inside an attempt to end it as a failure of a known kind. `retryAfterMs`: the earliest
 * the next attempt may go (HR's 401 circuit reopening, HR's lag to wait out); `sentAttempt`: the
 * attempt at which HR took the submission this attempt looked for.
 */
class AttemptFailure extends ChatOpsError {
  readonly kind: Exclude<FailureKind, 'permission' | 'other'>;
  readonly retryAfterMs: number | undefined;
  readonly sentAttempt: number | undefined;
  constructor(
    kind: Exclude<FailureKind, 'permission' | 'other'>,
    message: string,
    options: Readonly<{ retryAfterMs?: number; sentAttempt?: number; cause?: unknown }> = {},
  ) {
    super('SB_UPSTREAM_UNAVAILABLE', message, { cause: options.cause, details: { reason: kind } });
    this.kind = kind;
    this.retryAfterMs = options.retryAfterMs;
    this.sentAttempt = options.sentAttempt;
  }
}

const reasonOf = (e: unknown): unknown => (isChatOpsError(e) ? e.details.reason : undefined);
const statusOf = (e: unknown): unknown => (isChatOpsError(e) ? e.details.status : undefined);

/** What an attempt's error was, from the error itself. */
const failureKindOf = (e: unknown): FailureKind =>
  e instanceof AttemptFailure ? e.kind : reasonOf(e) === 'permission_missing' ? 'permission' : 'other';

/** The permission a 403 named (the client puts it in the error's details). */
const permissionOf = (e: unknown): string => {
  const p = isChatOpsError(e) ? e.details.permission : undefined;
  return typeof p === 'string' ? p : 'unknown';
};

const VERB: Readonly<Record<TimeOffAction, string>> = {
  submit: 'record time off',
  read_back: 'read time off',
  cancel: 'cancel time off',
};

/** What happened, in words for the requester (never HR's own text). */
const wordsFor = (code: string): string => {
  switch (code) {
    case 'SB_UPSTREAM_RATE_LIMITED':
      return 'HR asked Switchboard to slow down';
    case 'SB_TIMEOUT':
      return 'HR took too long to answer';
    case 'SB_NOT_FOUND':
      return 'HR does not know this request';
    case 'SB_UPSTREAM_REJECTED':
    case 'SB_VALIDATION':
      return 'HR refused the call';
    default:
      return 'HR did not answer';
  }
};

const timeOfDay = (iso: string): string => `${iso.slice(0, 16).replace('T', ' ')} UTC`;

export const createTimeOffHrCallsReactor = (options: TimeOffHrCallsOptions): Processor => {
  const { client } = options;
  const hrLagMs = options.hrLagMs ?? 30_000;
  const json = (d: object): JsonObject => d as JsonObject;

  /** The lag policy for a submission sent at attempt `sentAttempt`: its 8 looks, from the first delay. */
  const lagPolicyAfter = (sentAttempt: number): RetryPolicy => ({
    ...options.lagRetry,
    baseMs: options.lagRetry.baseMs / 2 ** (sentAttempt - 1),
    maxAttempts: sentAttempt - 1 + options.lagRetry.maxAttempts,
  });

  const readState = async (store: ProcessorContext['store'], streamId: string): Promise<TimeOffState> =>
    foldHistory(timeOffDecider, await store.readStream(streamId));

  /** The attempt at which HR took this submission (it is only looked for from then on), or null. */
  const sentAt = (state: TimeOffState, requestId: string): number | null => {
    const sent = state.context.submissionSent;
    return sent?.submitRequestId === requestId ? sent.attempt : null;
  };

  /**
   * The retry of a failed attempt, by what it met (the policy the mechanism asks for each failure):
   * - a submission HR took (now, or at an earlier attempt) is only looked for, on the lag policy
   *   counted from the attempt that sent it; a read back too; anything else on the retry policy;
   * - "maybe sent" (a redelivery, or a failure that does not say HR did not take the POST): one
   *   more attempt than the retry policy, after HR's lag, so the check can see what landed;
   * - HR refused our credentials: the retry is due when the client's circuit reopens.
   */
  const policy = async ({
    error,
    request,
    state,
    target,
    ctx,
  }: UpstreamFailure<TimeOffState, TimeOffHrRequest, Target>): Promise<RetryRule> => {
    if (error instanceof AttemptFailure && error.kind === 'maybe_sent') {
      return { ...options.retry, maxAttempts: options.retry.maxAttempts + 1, retryAfterMs: hrLagMs };
    }
    let phase: RetryPolicy = options.retry;
    if (request.action === 'read_back') phase = options.lagRetry;
    if (request.action === 'submit') {
      // Sent before this attempt, or by it: the attempt says so when it knows (HR does not show
      // it yet); otherwise (an error looking for it) the stream, recorded on its way, is read again.
      const sent =
        (error instanceof AttemptFailure ? error.sentAttempt : undefined) ??
        sentAt(state, request.requestId) ??
        sentAt(await readState(ctx.store, target.streamId), request.requestId);
      if (sent !== null) phase = lagPolicyAfter(sent);
    }
    return error instanceof AttemptFailure && error.retryAfterMs !== undefined
      ? { ...phase, retryAfterMs: error.retryAfterMs }
      : phase;
  };

  const targetOf = async (event: RecordedEvent, ctx: ProcessorContext): Promise<Target | null> => {
    if (event.kind !== 'event') return null;
    const timeOffId = requestIdOfStream(event.streamId);
    if (timeOffId === null) return null;
    const d = event.data as Record<string, unknown>;
    const at = (requestId: unknown, attempt = 1): Target | null =>
      typeof requestId === 'string'
        ? { streamId: event.streamId, timeOffId, requestId, attempt, cause: event }
        : null;
    switch (event.type) {
      case 'TimeOffApproved':
      case 'TimeOffResubmitted':
        return at(d.submitRequestId);
      case 'TimeOffCancelRequested':
        return d.hrRequestId === null ? null : at(d.cancelRequestId);
      case 'TimeOffSubmitted': {
        // Read back, or (cancelled while the submission was on its way) cancel the new HR request.
        const state = await readState(ctx.store, event.streamId);
        const cancel = state.context.requests.find(
          (r) => r.action === 'cancel' && r.hrRequestId === d.hrRequestId,
        );
        return at(cancel ? cancel.requestId : d.readBackRequestId);
      }
      case 'TimeOffUpstreamCallRetried':
        return typeof d.attempt === 'number' ? at(d.requestId, d.attempt) : null;
      default:
        return null;
    }
  };

  const outcome = (type: string, target: Target, data: object): OutcomeCommand => ({
    type,
    data: json({ timeOffId: target.timeOffId, ...data }),
  });

  /** Records a fact in the middle of an attempt (an id stable per request and attempt). */
  const recordNow = async (ctx: ProcessorContext, target: Target, command: OutcomeCommand, key: string) => {
    const full: Command = {
      type: command.type,
      data: command.data,
      metadata: {
        now: ctx.now().toISOString(),
        commandId: uuidv5(`${TIME_OFF_HR_CALLS_PROCESSOR}:${key}`),
        actor: ACTOR,
        causationId: target.cause.id,
      },
    };
    const r = await dispatchCommand(options.dispatch, full);
    if (r.outcome === 'rejected') {
      ctx.logger.warn({ code: r.code, commandType: command.type }, `not recorded: ${r.message}`);
    }
  };

  const submit = async ({ request: r, state, target, ctx }: Args): Promise<OutcomeCommand> => {
    const c = state.context;
    const details = c.request;
    if (!details) throw new ChatOpsError('SB_ILLEGAL_STATE', 'no request to submit');
    const employee = details.requester.hrId;
    const match = {
      policyType: details.policyType,
      startDate: details.startDate,
      endDate: details.endDate,
    };
    const found = (hrRequestId: number) =>
      outcome('RecordTimeOffSubmitted', target, {
        submitRequestId: r.requestId,
        hrRequestId: String(hrRequestId),
      });
    const sent = c.submissionSent?.submitRequestId === r.requestId ? c.submissionSent : null;
    if (sent) {
      // Sent: never posted again, only looked for.
      const hit = await client.findSubmittedRequest(
        employee,
        match,
        new Date(Date.parse(sent.since) - SINCE_MARGIN_MS),
      );
      if (hit) return found(hit.requestId);
      throw new AttemptFailure('not_visible', 'HR took the request and has not shown it yet', {
        sentAttempt: sent.attempt,
      });
    }
    // Check first: the request may be in HR already (an earlier attempt whose answer was lost).
    const askedAt = c.submitAskedAt ?? details.requestedAt;
    const hit = await client.findSubmittedRequest(
      employee,
      match,
      new Date(Date.parse(askedAt) - SINCE_MARGIN_MS),
    );
    if (hit) {
      // Unless it is another of our requests (the same days asked twice).
      await options.readModel.catchUp();
      const owner = options.readModel.requestOfHrId(String(hit.requestId));
      if (!owner || owner.timeOffId === target.timeOffId) return found(hit.requestId);
    }
    if (ctx.redelivery || (r.lastFailureCode !== undefined && MAYBE_LANDED(r.lastFailureCode))) {
      // This attempt may have been in flight when Switchboard stopped, or the last one failed
      // in a way that does not say HR did not take it (a timeout, a lost connection, a 5xx):
      // HR shows what it took only after its lag, so look again once that has passed first.
      throw new AttemptFailure('maybe_sent', 'checking whether HR took an earlier attempt');
    }
    const before = ctx.now();
    try {
      await client.submitTimeOff(employee, {
        policyType: details.policyType,
        startDate: details.startDate,
        endDate: details.endDate,
        startDatePortion: details.startPortion,
        endDatePortion: details.endPortion,
        ...(details.description.trim() === '' ? {} : { description: details.description }),
        skipManagerApproval: true,
        approver: details.approver.hrId,
      });
    } catch (e) {
      if (isChatOpsError(e) && e.code === 'SB_VALIDATION' && statusOf(e) !== 401) {
        const words = e.details.forRequester;
        return outcome('RecordTimeOffSubmissionRejected', target, {
          submitRequestId: r.requestId,
          reason:
            typeof words === 'string'
              ? words
              : 'HR refused the request as it stands. Check the dates and the policy and try again.',
        });
      }
      throw e;
    }
    // From here on the submission is never posted again (and the policy counts its lag from here).
    await recordNow(
      ctx,
      target,
      outcome('RecordTimeOffSubmissionSent', target, {
        submitRequestId: r.requestId,
        since: before.toISOString(),
      }),
      `${r.requestId}:sent`,
    );
    const now = await client.findSubmittedRequest(
      employee,
      match,
      new Date(before.getTime() - SINCE_MARGIN_MS),
    );
    if (now) return found(now.requestId);
    throw new AttemptFailure('not_visible', 'HR took the request and has not shown it yet', {
      sentAttempt: r.attempt,
    });
  };

  const readBack = async ({ request: r, state, target }: Args): Promise<OutcomeCommand> => {
    const details = state.context.request;
    if (!details || r.hrRequestId === null)
      throw new ChatOpsError('SB_ILLEGAL_STATE', 'nothing to read back');
    try {
      const got = await client.getTimeOffRequest(details.requester.hrId, Number(r.hrRequestId));
      return outcome('RecordTimeOffReadBack', target, {
        readBackRequestId: r.requestId,
        hrStatus: got.status.slice(0, 40) || 'unknown',
      });
    } catch (e) {
      if (isChatOpsError(e) && e.code === 'SB_NOT_FOUND') {
        throw new AttemptFailure('not_visible', 'HR has not shown the request yet', { cause: e });
      }
      throw e;
    }
  };

  const cancel = async ({ request: r, state, target }: Args): Promise<OutcomeCommand> => {
    const details = state.context.request;
    if (!details || r.hrRequestId === null) throw new ChatOpsError('SB_ILLEGAL_STATE', 'nothing to cancel');
    await client.cancelTimeOffRequest(details.requester.hrId, Number(r.hrRequestId));
    return outcome('RecordTimeOffCancelledInHr', target, { cancelRequestId: r.requestId });
  };

  const call = async (args: Args): Promise<OutcomeCommand> => {
    try {
      switch (args.request.action) {
        case 'submit':
          return await submit(args);
        case 'read_back':
          return await readBack(args);
        case 'cancel':
          return await cancel(args);
      }
    } catch (e) {
      if (e instanceof AttemptFailure) throw e;
      const waitMs = hibobAuthWaitMs(e, args.ctx.now());
      if (waitMs !== null) {
        // HR refused our credentials: every HR call waits for the circuit to reopen (5 min).
        throw new AttemptFailure('auth_circuit', 'HR refused the credentials: every HR call waits', {
          retryAfterMs: waitMs,
          cause: e,
        });
      }
      if (reasonOf(e) === 'permission_missing') {
        const permission = permissionOf(e);
        options.logger.error(
          {
            code: PERMISSION_MISSING_LOG_CODE,
            alert: 'operator',
            operation: args.request.action,
            permission,
          },
          `HR refused the service user the permission "${permission}": time off cannot be ${args.request.action === 'submit' ? 'recorded' : 'changed'} in HR until an admin grants it`,
        );
        options.onPermissionMissing?.({ operation: args.request.action, permission });
      }
      throw e;
    }
    throw new ChatOpsError('SB_ILLEGAL_STATE', 'unknown HR call');
  };

  /** The failure's code and words, by what the attempt met (never HR's own text). */
  const wordsOfFailure = (
    request: TimeOffHrRequest,
    failure: FailedAttempt,
    now: Date,
  ): readonly [code: string, message: string] => {
    const verb = VERB[request.action];
    switch (failureKindOf(failure.error)) {
      case 'not_visible':
        if (failure.final) {
          return [
            HR_NOT_VISIBLE,
            request.action === 'submit'
              ? 'HR took the request but has not shown it yet; Switchboard records it as soon as HR does'
              : 'HR has not shown the request yet; Switchboard confirms it as soon as HR does',
          ];
        }
        return [
          HR_NOT_VISIBLE,
          request.action === 'submit'
            ? 'HR took the request but has not shown it yet'
            : 'HR has not shown the request yet',
        ];
      case 'maybe_sent':
        return [HR_NOT_VISIBLE, 'Switchboard is checking whether HR already has the request'];
      case 'auth_circuit':
        if (failure.final) {
          return [
            'SB_UPSTREAM_AUTH',
            `HR kept refusing Switchboard's credentials, so it could not ${verb}; an admin has been told.`,
          ];
        }
        return [
          'SB_UPSTREAM_AUTH',
          `HR refused Switchboard's credentials; HR calls wait until ${timeOfDay(failure.nextAttemptAt ?? now.toISOString())}, and an admin has been told`,
        ];
      case 'permission':
        return [
          'SB_UPSTREAM_AUTH',
          `HR refused Switchboard's permission to ${verb}; an admin has been told.`,
        ];
      default:
        return [failure.code, wordsFor(failure.code)];
    }
  };

  const spec: UpstreamCallSpec<TimeOffState, TimeOffHrRequest, Target, OutcomeCommand> = {
    processorId: TIME_OFF_HR_CALLS_PROCESSOR,
    actor: ACTOR,
    policy,
    readState,
    pendingRequest: (state, requestId) => findHrRequest(state.context, requestId),
    call,
    succeeded: ({ result }) => result,
    failed: ({ request, failure, target, ctx }) => {
      const [code, message] = wordsOfFailure(request, failure, ctx.now());
      return outcome('RecordTimeOffUpstreamCallFailed', target, {
        requestId: request.requestId,
        action: request.action,
        attempt: failure.attempt,
        maxAttempts: failure.maxAttempts,
        code,
        message,
        nextAttemptAt: failure.nextAttemptAt,
      });
    },
    retry: ({ request, attempt, target }) =>
      outcome('RetryTimeOffUpstreamCall', target, {
        requestId: request.requestId,
        action: request.action,
        attempt,
      }),
    retryTimerId: (request, failedAttempt) => `timeoff-hr-retry-${request.requestId}-${failedAttempt}`,
    record: (command) => options.dispatch(command),
  };

  return createUpstreamCallProcessor({
    filter: { streamPrefixes: [TIME_OFF_STREAM_PREFIX], eventTypes: [...REQUEST_EVENTS] },
    target: targetOf,
    spec,
  });
};

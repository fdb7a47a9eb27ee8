import { type TimeOffState, timeOffDecider } from '../../machines/timeOff/decider.ts';
import type { TimeOffAction } from '../../machines/timeOff/events.ts';
import { findHrRequest, type TimeOffHrRequest } from '../../machines/timeOff/machine.ts';
import { TIME_OFF_STREAM_PREFIX } from '../../machines/timeOff/streams.ts';
import { foldHistory } from '../application/fold.ts';
import { ChatOpsError } from '../core/errors.ts';
import { uuidv5 } from '../core/ids.ts';
import type { Command } from '../core/messages.ts';
import type { RecordedEvent } from '../eventStore/eventStore.ts';
import type { Logger } from '../logger.ts';
import { type Dispatch, dispatchCommand } from '../processors/dispatchCommand.ts';
import type { RetryPolicy, RetryRule } from '../processors/retryPolicy.ts';
import type { Processor, ProcessorContext } from '../processors/runner.ts';
import {
  type OutcomeCommand,
  runUpstreamCall,
  type UpstreamCallSpec,
  type UpstreamFailure,
} from '../processors/upstreamCall.ts';
import type { HiBobClient } from '../upstream/hibob.ts';
import {
  cancel,
  type HrCallArgs,
  type HrCallAttempt,
  hrOutcome,
  lagPolicyAfter,
  readBack,
  submit,
} from './hrCalls/calls.ts';
import {
  AttemptFailure,
  failureKindOf,
  failureText,
  hrRefusalOf,
  PERMISSION_MISSING_LOG_CODE,
} from './hrCalls/failures.ts';
import { HR_CALL_EVENTS, type HrCallTarget, hrCallTargetOf } from './hrCalls/target.ts';
import type { TimeOffReadModel } from './readModel.projection.ts';

export { HR_NOT_VISIBLE, PERMISSION_MISSING_LOG_CODE } from './hrCalls/failures.ts';

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
 *
 * Where things are: which call an event asks for, `hrCalls/target.ts`; the three calls,
 * `hrCalls/calls.ts`; what a failure was and its words, `hrCalls/failures.ts`. This file puts them
 * on the upstream-call mechanism.
 */
export const TIME_OFF_HR_CALLS_PROCESSOR = 'timeoff-hr-calls';
const ACTOR = 'system:timeoff-hr-calls';

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

const readState = async (store: ProcessorContext['store'], streamId: string): Promise<TimeOffState> =>
  foldHistory(timeOffDecider, await store.readStream(streamId));

export const createTimeOffHrCallsReactor = (options: TimeOffHrCallsOptions): Processor => {
  const hrLagMs = options.hrLagMs ?? 30_000;

  /** Records a fact in the middle of an attempt (an id stable per request and attempt). */
  const recordNow = async (
    ctx: ProcessorContext,
    cause: RecordedEvent,
    command: OutcomeCommand,
    key: string,
  ) => {
    const full: Command = {
      type: command.type,
      data: command.data,
      metadata: {
        now: ctx.now().toISOString(),
        commandId: uuidv5(`${TIME_OFF_HR_CALLS_PROCESSOR}:${key}`),
        actor: ACTOR,
        causationId: cause.id,
      },
    };
    const r = await dispatchCommand(options.dispatch, full);
    if (r.outcome === 'rejected') {
      ctx.logger.warn({ code: r.code, commandType: command.type }, `not recorded: ${r.message}`);
    }
  };

  /** HR refused the call: the retry waits for the credentials, or an operator is told of the permission. */
  const onRefused = (e: unknown, args: HrCallArgs, now: Date): void => {
    const refusal = hrRefusalOf(e, now);
    if (refusal.kind === 'auth_circuit') {
      // HR refused our credentials: every HR call waits for the circuit to reopen (5 min).
      throw new AttemptFailure('auth_circuit', 'HR refused the credentials: every HR call waits', {
        retryAfterMs: refusal.waitMs,
        cause: e,
      });
    }
    if (refusal.kind === 'permission') {
      const { permission } = refusal;
      const operation = args.request.action;
      options.logger.error(
        { code: PERMISSION_MISSING_LOG_CODE, alert: 'operator', operation, permission },
        `HR refused the service user the permission "${permission}": time off cannot be ${operation === 'submit' ? 'recorded' : 'changed'} in HR until an admin grants it`,
      );
      options.onPermissionMissing?.({ operation, permission });
    }
  };

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
  }: UpstreamFailure<TimeOffState, TimeOffHrRequest, HrCallTarget>): Promise<RetryRule> => {
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
      if (sent !== null) phase = lagPolicyAfter(options.lagRetry, sent);
    }
    return error instanceof AttemptFailure && error.retryAfterMs !== undefined
      ? { ...phase, retryAfterMs: error.retryAfterMs }
      : phase;
  };

  const handle = async (event: RecordedEvent, ctx: ProcessorContext): Promise<void> => {
    const target = await hrCallTargetOf(event, ctx.store, readState);
    if (!target) return;
    const attempt: HrCallAttempt = {
      client: options.client,
      readModel: options.readModel,
      ctx,
      target,
      recordNow: (command, key) => recordNow(ctx, event, command, key),
    };

    const call = async (args: HrCallArgs): Promise<OutcomeCommand> => {
      try {
        switch (args.request.action) {
          case 'submit':
            return await submit(attempt, args);
          case 'read_back':
            return await readBack(attempt, args);
          case 'cancel':
            return await cancel(attempt, args);
        }
      } catch (e) {
        if (e instanceof AttemptFailure) throw e;
        onRefused(e, args, ctx.now());
        throw e;
      }
      throw new ChatOpsError('SB_ILLEGAL_STATE', 'unknown HR call');
    };

    const spec: UpstreamCallSpec<TimeOffState, TimeOffHrRequest, HrCallTarget, OutcomeCommand> = {
      processorId: TIME_OFF_HR_CALLS_PROCESSOR,
      actor: ACTOR,
      policy,
      readState,
      pendingRequest: (state, requestId) => findHrRequest(state.context, requestId),
      call,
      succeeded: ({ result }) => result,
      failed: ({ request, failure }) => {
        const [code, message] = failureText(failureKindOf(failure.error), request.action, failure, ctx.now());
        return hrOutcome('RecordTimeOffUpstreamCallFailed', target, {
          requestId: request.requestId,
          action: request.action,
          attempt: failure.attempt,
          maxAttempts: failure.maxAttempts,
          code,
          message,
          nextAttemptAt: failure.nextAttemptAt,
        });
      },
      retry: ({ request, attempt: next }) =>
        hrOutcome('RetryTimeOffUpstreamCall', target, {
          requestId: request.requestId,
          action: request.action,
          attempt: next,
        }),
      retryTimerId: (request, failedAttempt) => `timeoff-hr-retry-${request.requestId}-${failedAttempt}`,
      record: (command) => options.dispatch(command),
    };
    await runUpstreamCall(spec, ctx, event, target);
  };

  return {
    id: TIME_OFF_HR_CALLS_PROCESSOR,
    filter: { streamPrefixes: [TIME_OFF_STREAM_PREFIX], eventTypes: [...HR_CALL_EVENTS] },
    handle,
  };
};

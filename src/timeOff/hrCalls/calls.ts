import type { TimeOffState } from '../../../machines/timeOff/decider.ts';
import type { TimeOffHrRequest } from '../../../machines/timeOff/machine.ts';
import { ChatOpsError, isChatOpsError } from '../../core/errors.ts';
import type { JsonObject } from '../../core/messages.ts';
import type { RetryPolicy } from '../../processors/retryPolicy.ts';
import type { ProcessorContext } from '../../processors/runner.ts';
import type { OutcomeCommand, UpstreamCallArgs } from '../../processors/upstreamCall.ts';
import type { HiBobClient } from '../../upstream/hibob.ts';
import type { TimeOffReadModel } from '../readModel.projection.ts';
import { AttemptFailure, mayHaveLanded } from './failures.ts';
import type { HrCallTarget } from './target.ts';

/**
 * The three HR calls a time-off request makes, one attempt each: submit (check first, post once,
 * then only look for the id), read back, cancel. Each returns the outcome to record, or throws: an
 * AttemptFailure of a known kind (which the reactor's retry policy reads), or the client's coded
 * error.
 */

/** HR's changes are searched from a little before our own clock said the POST left (clock skew). */
const SINCE_MARGIN_MS = 2 * 60_000;

export type HrCallArgs = UpstreamCallArgs<TimeOffState, TimeOffHrRequest, HrCallTarget>;

/** What one attempt of an HR call works with. */
export type HrCallAttempt = Readonly<{
  client: HiBobClient;
  readModel: TimeOffReadModel;
  ctx: ProcessorContext;
  target: HrCallTarget;
  /** Records a fact in the middle of the attempt (an id stable per request and `key`). */
  recordNow(command: OutcomeCommand, key: string): Promise<void>;
}>;

/** An outcome command about the target's request. */
export const hrOutcome = (type: string, target: HrCallTarget, data: object): OutcomeCommand => ({
  type,
  data: { timeOffId: target.timeOffId, ...data } as JsonObject,
});

/** The lag policy for a submission sent at attempt `sentAttempt`: its looks, from the first delay. */
export const lagPolicyAfter = (lagRetry: RetryPolicy, sentAttempt: number): RetryPolicy => ({
  ...lagRetry,
  baseMs: lagRetry.baseMs / 2 ** (sentAttempt - 1),
  maxAttempts: sentAttempt - 1 + lagRetry.maxAttempts,
});

/**
 * Submit: once sent, only looked for; else check first (an earlier attempt whose answer was lost),
 * wait out HR's lag when an earlier attempt may have landed, then post and look for the id.
 */
export const submit = async (
  attempt: HrCallAttempt,
  { request: r, state }: HrCallArgs,
): Promise<OutcomeCommand> => {
  const { client, ctx, target } = attempt;
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
    hrOutcome('RecordTimeOffSubmitted', target, {
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
    await attempt.readModel.catchUp();
    const owner = attempt.readModel.requestOfHrId(String(hit.requestId));
    if (!owner || owner.timeOffId === target.timeOffId) return found(hit.requestId);
  }
  if (ctx.redelivery || (r.lastFailureCode !== undefined && mayHaveLanded(r.lastFailureCode))) {
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
    if (isChatOpsError(e) && e.code === 'SB_VALIDATION' && e.details.status !== 401) {
      const words = e.details.forRequester;
      return hrOutcome('RecordTimeOffSubmissionRejected', target, {
        submitRequestId: r.requestId,
        reason:
          typeof words === 'string'
            ? words
            : 'HR refused the request as it stands. Check the dates and the policy and try again.',
      });
    }
    throw e;
  }
  await attempt.recordNow(
    hrOutcome('RecordTimeOffSubmissionSent', target, {
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

/** Read back: HR's status of the request; a 404 within HR's lag is looked for again on the lag policy. */
export const readBack = async (
  attempt: HrCallAttempt,
  { request: r, state }: HrCallArgs,
): Promise<OutcomeCommand> => {
  const details = state.context.request;
  if (!details || r.hrRequestId === null) throw new ChatOpsError('SB_ILLEGAL_STATE', 'nothing to read back');
  try {
    const got = await attempt.client.getTimeOffRequest(details.requester.hrId, Number(r.hrRequestId));
    return hrOutcome('RecordTimeOffReadBack', attempt.target, {
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

/** Cancel: the request in HR. */
export const cancel = async (
  attempt: HrCallAttempt,
  { request: r, state }: HrCallArgs,
): Promise<OutcomeCommand> => {
  const details = state.context.request;
  if (!details || r.hrRequestId === null) throw new ChatOpsError('SB_ILLEGAL_STATE', 'nothing to cancel');
  await attempt.client.cancelTimeOffRequest(details.requester.hrId, Number(r.hrRequestId));
  return hrOutcome('RecordTimeOffCancelledInHr', attempt.target, { cancelRequestId: r.requestId });
};

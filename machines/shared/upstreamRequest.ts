import { z } from 'zod';

// The rules every durable upstream call follows, in every lifecycle: a request recorded as a fact,
// attempts counted in the stream, failures and retries recorded as facts, a final failure that
// drops the request, a confirmation that ends it. Pure functions and types that a lifecycle's
// machine (`assign`s and guards) and decider call; the processor side that makes the calls is
// src/processors/upstreamCall.ts.
//
//   requested ──► attempt 1 in progress ──failed──► waiting for the retry (nextAttemptAt)
//                       ▲                                   │
//                       └──────────retried (attempt + 1)────┘
//   in progress ──failed, final (no nextAttemptAt)──► given up
//   in progress or waiting ──confirmed (the call's answer, or the vendor's webhook)──► done
//
// A failure report applies to the attempt in progress, once; a retry applies to a request waiting
// for it, for the next attempt only. So a late, repeated or superseded report or retry changes
// nothing, and the processor, which checks the attempt right before each call, never sends a
// request that is no longer pending at that attempt.

/** Where a request's attempts stand. Part of every pending request. */
export type UpstreamAttempts = Readonly<{
  /** The attempt in progress, 1-based: the one a call is (or is about to be) made for. */
  attempt: number;
  /** Attempts that have failed so far: equals `attempt` while waiting for the retry. */
  failedAttempts: number;
  /** When the retry after the last failure is due; null while an attempt is in progress or after a final failure. */
  nextAttemptAt: string | null;
}>;

/** A request just recorded: attempt 1 in progress. */
export const FIRST_ATTEMPT: UpstreamAttempts = { attempt: 1, failedAttempts: 0, nextAttemptAt: null };

/**
 * A call to an upstream service that a lifecycle recorded (`…Requested`) and has not yet seen
 * confirmed or given up. Lifecycles extend it with what the call needs (who asked, the payload).
 */
export type UpstreamRequest<Action extends string = string> = UpstreamAttempts &
  Readonly<{
    /** Unique per request (the command id of the input that asked for it). */
    requestId: string;
    /** Which call it is; the processor switches on it. */
    action: Action;
  }>;

/** Which request and attempt a failure report or a retry is about. */
export type AttemptRef = Readonly<{ requestId: string; action: string; attempt: number }>;

const requestId = z.string().min(1);
const isoTime = z.string().min(1);

/**
 * The data of a lifecycle's `<Subject>UpstreamCallFailed` fact, for the lifecycle's action enum.
 *
 * @example
 * IncidentUpstreamCallFailed: upstreamCallFailedSchema(upstreamActionSchema),
 */
export const upstreamCallFailedSchema = <A extends z.ZodType<string>>(action: A) =>
  z.object({
    requestId,
    action,
    /** 1-based attempt that failed. */
    attempt: z.number().int().min(1),
    maxAttempts: z.number().int().min(1),
    /** Coded error (`SB_UPSTREAM_UNAVAILABLE`, `SB_UPSTREAM_RATE_LIMITED`, …). */
    code: z.string().min(1),
    message: z.string(),
    /** When the retry is due; null when `final`. */
    nextAttemptAt: isoTime.nullable(),
    /** No more attempts: the request is dropped and the requester is told. */
    final: z.boolean(),
    at: isoTime,
  });

/** The data of a lifecycle's `<Subject>UpstreamCallRetried` fact: attempt `attempt` starts. */
export const upstreamCallRetriedSchema = <A extends z.ZodType<string>>(action: A) =>
  z.object({ requestId, action, attempt: z.number().int().min(2), at: isoTime });

/**
 * The data of `Record<Subject>UpstreamCallFailed`, the command the processor sends after a failed
 * attempt: the fact's data without what the decider derives (`final` from `nextAttemptAt`, `at`
 * from `metadata.now`).
 */
export const recordUpstreamCallFailedSchema = <A extends z.ZodType<string>>(action: A) =>
  upstreamCallFailedSchema(action).omit({ final: true, at: true });

/** The data of `Retry<Subject>UpstreamCall`, the command a retry timer dispatches when due. */
export const retryUpstreamCallSchema = <A extends z.ZodType<string>>(action: A) =>
  z.object({ requestId, action, attempt: z.number().int().min(1) });

export type UpstreamCallFailure<Action extends string = string> = Readonly<
  Omit<z.infer<ReturnType<typeof upstreamCallFailedSchema>>, 'action'> & { action: Action }
>;
export type UpstreamCallRetry<Action extends string = string> = Readonly<
  Omit<z.infer<ReturnType<typeof upstreamCallRetriedSchema>>, 'action'> & { action: Action }
>;
export type RecordUpstreamCallFailedData<Action extends string = string> = Readonly<
  Omit<UpstreamCallFailure<Action>, 'final' | 'at'>
>;
export type RetryUpstreamCallData<Action extends string = string> = Readonly<
  Omit<UpstreamCallRetry<Action>, 'at'>
>;

const sameRequest = (request: UpstreamRequest, ref: AttemptRef): boolean =>
  request.requestId === ref.requestId && request.action === ref.action;

/** True while the request waits for the retry after a failed attempt (not after a final one). */
export const isWaitingForRetry = (attempts: UpstreamAttempts): boolean =>
  attempts.failedAttempts === attempts.attempt && attempts.nextAttemptAt !== null;

/** A failure of attempt `attempt` applies to the attempt in progress, once. */
export const attemptFailureApplies = (attempts: UpstreamAttempts, attempt: number): boolean =>
  attempt === attempts.attempt && attempts.failedAttempts < attempts.attempt;

/** A retry for attempt `attempt` applies to attempts waiting for a retry, for the next attempt only. */
export const attemptRetryApplies = (attempts: UpstreamAttempts, attempt: number): boolean =>
  isWaitingForRetry(attempts) && attempt === attempts.attempt + 1;

/** A failure report applies to this request's attempt in progress, once. */
export const failureApplies = <R extends UpstreamRequest>(
  request: R | null | undefined,
  failure: AttemptRef,
): request is R =>
  !!request && sameRequest(request, failure) && attemptFailureApplies(request, failure.attempt);

/** A retry applies to this request while it waits for one (not after a final failure), for the next attempt. */
export const retryApplies = <R extends UpstreamRequest>(
  request: R | null | undefined,
  retry: AttemptRef,
): request is R => !!request && sameRequest(request, retry) && attemptRetryApplies(request, retry.attempt);

/**
 * The attempts after attempt `failure.attempt` failed: waiting for the retry at `nextAttemptAt`,
 * or (null `nextAttemptAt`) given up. A lifecycle usually drops a request given up; one that keeps
 * it (to show it) keeps it in this state, where no retry applies.
 */
export const withFailedAttempt = <R extends UpstreamAttempts>(
  request: R,
  failure: Readonly<{ attempt: number; nextAttemptAt: string | null }>,
): R => ({ ...request, failedAttempts: failure.attempt, nextAttemptAt: failure.nextAttemptAt });

/** The attempts once the retry started attempt `retry.attempt`. */
export const withRetry = <R extends UpstreamAttempts>(
  request: R,
  retry: Readonly<{ attempt: number }>,
): R => ({
  ...request,
  attempt: retry.attempt,
  nextAttemptAt: null,
});

// ---------------------------------------------------------------- lists of requests
// A lifecycle that keeps several calls in flight at once (verification, time off) keeps them as a
// list; these fold its facts into that list, so each lifecycle does not write the same three maps.

type Keyed = UpstreamAttempts & Readonly<{ requestId: string }>;

/** The list without `requestId` (unchanged for null). */
export const withoutRequest = <R extends Keyed>(
  requests: readonly R[],
  requestId: string | null,
): readonly R[] => (requestId === null ? requests : requests.filter((r) => r.requestId !== requestId));

/** The list after an `…UpstreamCallFailed`: a final failure drops the request, else it waits for its retry. */
export const afterFailedAttempt = <R extends Keyed>(
  requests: readonly R[],
  failure: Readonly<{ requestId: string; attempt: number; nextAttemptAt: string | null; final: boolean }>,
): readonly R[] =>
  failure.final
    ? withoutRequest(requests, failure.requestId)
    : requests.map((r) => (r.requestId === failure.requestId ? withFailedAttempt(r, failure) : r));

/** The list after an `…UpstreamCallRetried`. */
export const afterRetry = <R extends Keyed>(
  requests: readonly R[],
  retry: Readonly<{ requestId: string; attempt: number }>,
): readonly R[] => requests.map((r) => (r.requestId === retry.requestId ? withRetry(r, retry) : r));

/**
 * The failure fact to record for a report, or null when the report does not apply (the request was
 * confirmed or superseded meanwhile, or this attempt's failure is already recorded). `final` is
 * derived from `nextAttemptAt` (none: no more attempts), `at` from the command's time.
 *
 * @example
 * const fact = decideFailure(findPendingRequest(state, d.requestId), d, command.metadata.now);
 * return fact ? [{ type: 'IncidentUpstreamCallFailed', data: fact }] : [];
 */
export const decideFailure = <Action extends string>(
  request: UpstreamRequest<Action> | null | undefined,
  report: RecordUpstreamCallFailedData<Action>,
  now: string,
): UpstreamCallFailure<Action> | null => {
  const fact: UpstreamCallFailure<Action> = {
    requestId: report.requestId,
    action: report.action,
    attempt: report.attempt,
    maxAttempts: report.maxAttempts,
    code: report.code,
    message: report.message,
    nextAttemptAt: report.nextAttemptAt,
    final: report.nextAttemptAt === null,
    at: now,
  };
  return failureApplies(request, fact) ? fact : null;
};

/**
 * The retry fact to record when a retry timer fires, or null when it does not apply (the request
 * is no longer pending, was given up, or the timer is late or early): a retry that does not apply
 * is never sent.
 */
export const decideRetry = <Action extends string>(
  request: UpstreamRequest<Action> | null | undefined,
  retry: RetryUpstreamCallData<Action>,
  now: string,
): UpstreamCallRetry<Action> | null => {
  const fact: UpstreamCallRetry<Action> = {
    requestId: retry.requestId,
    action: retry.action,
    attempt: retry.attempt,
    at: now,
  };
  return retryApplies(request, fact) ? fact : null;
};

/**
 * Where attempt `attempt` of a request stands, for the processor about to call:
 * - `due`: that attempt is in progress and nothing is recorded for it yet: make the call;
 * - `failed`: its failure is recorded (a redelivery): only make sure its retry timer exists;
 * - `stale`: the request is no longer pending, or is at another attempt: send nothing.
 */
export const attemptStatus = (
  request: UpstreamAttempts | null | undefined,
  attempt: number,
): 'due' | 'failed' | 'stale' => {
  if (!request || request.attempt !== attempt) return 'stale';
  return request.failedAttempts >= attempt ? 'failed' : 'due';
};

/** The retry a request waits for (the attempt it will start and when), or null. */
export const retryDue = (
  request: UpstreamAttempts | null | undefined,
): Readonly<{ attempt: number; dueAt: string }> | null =>
  request && isWaitingForRetry(request) && request.nextAttemptAt !== null
    ? { attempt: request.attempt + 1, dueAt: request.nextAttemptAt }
    : null;

import { attemptStatus, retryDue, type UpstreamRequest } from '../../machines/shared/upstreamRequest.ts';
import { asError, hasCode } from '../core/errors.ts';
import { uuidv5 } from '../core/ids.ts';
import type { Command, JsonObject } from '../core/messages.ts';
import type { EventFilter, EventStore, RecordedEvent } from '../eventStore/eventStore.ts';
import { dispatchCommand } from './dispatchCommand.ts';
import {
  decideRetryOf,
  errorCodeOf,
  errorMessageOf,
  type FailureKind,
  type RetryPolicy,
  type RetryRule,
  type RetryRules,
  ruleFor,
} from './retryPolicy.ts';
import type { Processor, ProcessorContext } from './runner.ts';
import { scheduleTimer } from './scheduler.ts';

/** Which request, and which of its attempts, a recorded event asks to call for. */
export type UpstreamCallTarget = Readonly<{
  /** The stream the request lives in (its lifecycle's stream). */
  streamId: string;
  requestId: string;
  /** 1 for the request itself, n for the retry that started attempt n. */
  attempt: number;
}>;

/** What every step of a call gets. */
export type UpstreamCallArgs<State, R extends UpstreamRequest, T extends UpstreamCallTarget> = Readonly<{
  request: R;
  /** The request's stream, folded right before this attempt. */
  state: State;
  target: T;
  ctx: ProcessorContext;
}>;

/** A failed attempt as its retry policy sees it: the call's arguments and what the attempt threw. */
export type UpstreamFailure<
  State,
  R extends UpstreamRequest,
  T extends UpstreamCallTarget,
> = UpstreamCallArgs<State, R, T> & Readonly<{ error: unknown }>;

/**
 * How a call's failed attempts are retried, decided per failure (src/processors/retryPolicy.ts):
 * - one `RetryPolicy` for every failure (transient failures retried with backoff, a rate limit's
 *   reset honoured, auth failures and refusals final);
 * - `RetryRules`: a base policy with overrides per operation (`byAction`, the request's action) and
 *   per kind of failure (`byFailure`: rate_limited, unavailable, auth, refused);
 * - a function of the failure (the error, the request and its stream as folded before the
 *   attempt; it may read the store), for what only the lifecycle knows: HR's read-after-write lag
 *   counted from the attempt that sent a submission, its 401 circuit.
 */
export type UpstreamRetryPolicy<State, R extends UpstreamRequest, T extends UpstreamCallTarget> =
  | RetryPolicy
  | RetryRules<R['action']>
  | ((failure: UpstreamFailure<State, R, T>) => RetryRule | Promise<RetryRule>);

/** The rule a policy gives one failure. */
export const retryRuleFor = async <State, R extends UpstreamRequest, T extends UpstreamCallTarget>(
  policy: UpstreamRetryPolicy<State, R, T>,
  failure: UpstreamFailure<State, R, T>,
): Promise<RetryRule> => {
  if (typeof policy === 'function') return policy(failure);
  if ('base' in policy) return ruleFor(policy, { error: failure.error, action: failure.request.action });
  return policy;
};

/** A failed attempt, as the processor classified it: what to put in the lifecycle's failure command. */
export type FailedAttempt = Readonly<{
  attempt: number;
  /** What the policy allowed this failure (it may depend on the failure). */
  maxAttempts: number;
  /** The error's code (`SB_UPSTREAM_UNAVAILABLE`, …). */
  code: string;
  /** Its message, cut to `messageMaxLength`. */
  message: string;
  /** When the retry is due, or null: no more attempts (the failure is final). */
  nextAttemptAt: string | null;
  final: boolean;
  /** What the attempt threw (to word the failure), and its kind (retryPolicy.ts). */
  error: unknown;
  kind: FailureKind;
}>;

/** A command without its metadata: the processor adds time, a deterministic id, actor and cause. */
export type OutcomeCommand = Readonly<{ type: string; data: JsonObject }>;

/**
 * How one lifecycle's upstream calls are made and recorded. The processor (runUpstreamCall) does
 * the rest the same way for every lifecycle.
 */
export type UpstreamCallSpec<
  State,
  R extends UpstreamRequest,
  T extends UpstreamCallTarget,
  Result,
> = Readonly<{
  /** The processor's id: outcome command ids are derived from it (and so stay stable). */
  processorId: string;
  /** `metadata.actor` of the outcome and retry commands (`system:incident-upstream`). */
  actor: string;
  /** Attempts and backoff of durable retries, which may depend on the failure (UpstreamRetryPolicy). */
  policy: UpstreamRetryPolicy<State, R, T>;
  /** Longest error message kept in a failure (default 300). */
  messageMaxLength?: number;
  /** Reads and folds the request's stream. */
  readState(store: EventStore, streamId: string): Promise<State>;
  /** The request, while it is pending (neither confirmed nor given up); null otherwise. */
  pendingRequest(state: State, requestId: string): R | null;
  /**
   * "Check before repeating": looks at what the upstream already has, for a call without an
   * idempotency key whose earlier attempt may have landed with its answer lost. Runs before a retry
   * (attempt > 1) and before any attempt whose event may have been handled before (a redelivery
   * after a crash between the call and its recorded outcome). Returns the result the call would have
   * had when it landed, or null to make the call.
   */
  check?(args: UpstreamCallArgs<State, R, T>): Promise<Result | null>;
  /** Makes the call. Throws coded errors (see retryPolicy.ts: which are retried). */
  call(args: UpstreamCallArgs<State, R, T>): Promise<Result>;
  /** The command recording a success (or any outcome decided by the call that is not a failure). */
  succeeded(args: UpstreamCallArgs<State, R, T> & Readonly<{ result: Result }>): OutcomeCommand;
  /** The command recording a failed attempt (`nextAttemptAt` null: final). */
  failed(args: UpstreamCallArgs<State, R, T> & Readonly<{ failure: FailedAttempt }>): OutcomeCommand;
  /** The command the retry timer dispatches to start attempt `attempt`. */
  retry(args: UpstreamCallArgs<State, R, T> & Readonly<{ attempt: number }>): OutcomeCommand;
  /** Timer id of the retry after failed attempt `failedAttempt` (unique per request and attempt). */
  retryTimerId(request: R, failedAttempt: number): string;
  /**
   * Records an outcome command through the lifecycle's decider (the command bus's `dispatch`, or
   * handleCommand on the request's stream). Refusals (coded) are logged, not retried.
   */
  record(command: Command, ctx: ProcessorContext): Promise<unknown>;
}>;

/** What runUpstreamCall did with the event (for logs and tests). */
export type UpstreamCallOutcome =
  | 'stale'
  | 'retry_ensured'
  | 'already_landed'
  | 'succeeded'
  | 'failed_will_retry'
  | 'failed_final';

/** Command id of an outcome: the same on every redelivery of the same attempt, so it is recorded once. */
export const outcomeCommandId = (
  processorId: string,
  requestId: string,
  attempt: number,
  outcome: 'succeeded' | 'failed',
): string => uuidv5(`${processorId}:${requestId}:${attempt}:${outcome}`);

/**
 * Runs attempt `target.attempt` of a durable upstream call, the one way every lifecycle does it:
 *
 * 1. fold the request's stream; a request no longer pending, or at another attempt, is not sent
 *    (a retry that lost a race with a webhook, a superseded request, a stale timer);
 * 2. an attempt whose failure is already recorded (a redelivery) only gets its retry timer made sure of;
 * 3. "check before repeating": on a retry or a redelivery, `spec.check` looks at what the upstream
 *    already has, and a call that landed is recorded as succeeded without calling again;
 * 4. make the call and record the outcome through the decider: `succeeded`, or `failed` with
 *    `attempt` and `nextAttemptAt`: the spec's policy gives the failure its rule (by the error's
 *    kind, the operation, or what the lifecycle knows) and decideRetryOf applies it (a rate limit's
 *    reset honoured, an auth failure never retried blindly); a failure after the last attempt, or
 *    one no retry can fix, is final;
 * 5. schedule the retry as a durable timer (scheduleTimer), whose command starts the next attempt
 *    through the decider, which this function then handles like the first.
 *
 * Idempotent under redelivery: outcomes carry deterministic command ids, timers deterministic ids,
 * and the fold in step 1 sees what an earlier delivery recorded. SB_STORE_UNAVAILABLE, and an abort
 * because the runner is stopping, are thrown (the runner retries the event), never recorded as a
 * failed attempt.
 *
 * @example
 * await runUpstreamCall(spec, ctx, event, { streamId: event.streamId, requestId, attempt: 1 });
 */
export const runUpstreamCall = async <State, R extends UpstreamRequest, T extends UpstreamCallTarget, Result>(
  spec: UpstreamCallSpec<State, R, T, Result>,
  ctx: ProcessorContext,
  cause: RecordedEvent,
  target: T,
): Promise<UpstreamCallOutcome> => {
  const { requestId, attempt } = target;
  const log = ctx.logger.child({ requestId, attempt });
  const state = await spec.readState(ctx.store, target.streamId);
  const request = spec.pendingRequest(state, requestId);
  const status = attemptStatus(request, attempt);
  if (status === 'stale' || !request) {
    log.debug(
      { pendingAttempt: request?.attempt ?? null },
      'request no longer pending at this attempt: not sent',
    );
    return 'stale';
  }
  const args: UpstreamCallArgs<State, R, T> = { request, state, target, ctx };
  if (status === 'failed') {
    // This attempt's failure is recorded (a redelivery after a crash): make sure its retry exists.
    await ensureRetry(spec, args, cause);
    return 'retry_ensured';
  }

  const record = async (command: OutcomeCommand, outcome: 'succeeded' | 'failed', now = ctx.now()) => {
    const full: Command = {
      type: command.type,
      data: command.data,
      metadata: {
        now: now.toISOString(),
        commandId: outcomeCommandId(spec.processorId, requestId, attempt, outcome),
        actor: spec.actor,
        causationId: cause.id,
      },
    };
    const r = await dispatchCommand((c) => spec.record(c, ctx), full);
    if (r.outcome === 'rejected') {
      log.warn({ code: r.code, commandType: command.type }, `outcome not recorded: ${r.message}`);
    }
  };

  let result: Result;
  let landed = false;
  try {
    const found = spec.check && (attempt > 1 || ctx.redelivery) ? await spec.check(args) : null;
    landed = found !== null;
    result = found ?? (await spec.call(args));
  } catch (error) {
    if (hasCode(error, 'SB_STORE_UNAVAILABLE') || ctx.signal.aborted) throw error;
    // One instant for the failure and its retry's delay: the fact says "failed at T, retry at T + d"
    // with d at least what the vendor asked (a 429's reset), however long recording it takes.
    const failedAt = ctx.now();
    const rule = await retryRuleFor(spec.policy, { ...args, error });
    const decision = decideRetryOf(rule, error, attempt, failedAt);
    const at = decision.nextAttemptAt?.toISOString() ?? null;
    const retry = at !== null;
    const failure: FailedAttempt = {
      attempt,
      maxAttempts: decision.maxAttempts,
      code: errorCodeOf(error),
      message: errorMessageOf(error, spec.messageMaxLength ?? 300),
      nextAttemptAt: at,
      final: at === null,
      error,
      kind: decision.kind,
    };
    await record(spec.failed({ ...args, failure }), 'failed', failedAt);
    if (retry) {
      log.warn(
        { err: asError(error), action: request.action, failure: decision.kind, nextAttemptAt: at },
        'upstream call failed; retry scheduled',
      );
      const after = await spec.readState(ctx.store, target.streamId);
      const again = spec.pendingRequest(after, requestId);
      if (again) await ensureRetry(spec, { ...args, request: again, state: after }, cause);
      return 'failed_will_retry';
    }
    log.error(
      { err: asError(error), action: request.action, failure: decision.kind },
      'upstream call failed for good',
    );
    return 'failed_final';
  }
  await record(spec.succeeded({ ...args, result }), 'succeeded');
  log.debug(
    { action: request.action, landed },
    landed ? 'upstream call had landed: not repeated' : 'upstream call succeeded',
  );
  return landed ? 'already_landed' : 'succeeded';
};

/** Schedules the retry a request waits for (a no-op when its timer exists already). */
const ensureRetry = async <State, R extends UpstreamRequest, T extends UpstreamCallTarget, Result>(
  spec: UpstreamCallSpec<State, R, T, Result>,
  args: UpstreamCallArgs<State, R, T>,
  cause: RecordedEvent,
): Promise<void> => {
  const due = retryDue(args.request);
  if (!due) return;
  const command = spec.retry({ ...args, attempt: due.attempt });
  await scheduleTimer(args.ctx.store, {
    timerId: spec.retryTimerId(args.request, args.request.failedAttempts),
    dueAt: due.dueAt,
    now: args.ctx.now(),
    command: { ...command, metadata: { actor: spec.actor, causationId: cause.id } },
  });
};

/**
 * A processor whose every event is a request (or a retry) to call upstream: `target` says which
 * request and attempt an event stands for (null: not one), and runUpstreamCall does the rest.
 *
 * @example
 * export const createPagerReactor = (deps) =>
 *   createUpstreamCallProcessor({
 *     filter: { streamPrefixes: ['verification-'], eventTypes: ['PageRequested', 'PageRetried'] },
 *     target: (e) => ({ streamId: e.streamId, requestId: String(e.data.requestId), attempt: Number(e.data.attempt ?? 1) }),
 *     spec: { processorId: 'pager-upstream', … },
 *   });
 */
export const createUpstreamCallProcessor = <
  State,
  R extends UpstreamRequest,
  T extends UpstreamCallTarget,
  Result,
>(
  options: Readonly<{
    filter: EventFilter;
    target(event: RecordedEvent, ctx: ProcessorContext): T | null | Promise<T | null>;
    /** Its `processorId` is the processor's id. */
    spec: UpstreamCallSpec<State, R, T, Result>;
  }>,
): Processor => ({
  id: options.spec.processorId,
  filter: options.filter,
  async handle(event, ctx) {
    const target = await options.target(event, ctx);
    if (target) await runUpstreamCall(options.spec, ctx, event, target);
  },
});

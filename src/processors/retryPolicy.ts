import { scrubText } from '../core/scrub.ts';

/**
 * Retry decisions for reactors that call upstreams: a failed call is recorded as an event with
 * `attempt`, `nextAttemptAt` and `code` (never an in-memory retry loop, which a restart would lose),
 * and the scheduler brings it back when due. These pure helpers compute those fields, so every
 * lifecycle retries the same way; src/processors/upstreamCall.ts applies them for every durable
 * upstream call.
 *
 * @example
 * } catch (err) {
 *   const retry = shouldRetry(err, { attempt, maxAttempts: UPSTREAM_RETRY.maxAttempts });
 *   const at = retry ? nextAttemptAt(attempt, ctx.now(), { ...UPSTREAM_RETRY, error: err }) : null;
 *   // record PagerNotificationFailed { attempt, code: errorCodeOf(err), nextAttemptAt: at, final: !retry }
 *   // and, when `at`, scheduleTimer(store, { timerId, dueAt: at, command: RetryPagerNotification … })
 * }
 */
export type BackoffOptions = Readonly<{
  /** Delay after the first failed attempt (ms); doubles per attempt. */
  baseMs: number;
  /** Cap on the computed delay (ms). A vendor's own `retryAfterMs` is honoured even above it. */
  maxMs: number;
  /**
   * Fraction of the delay that is random, 0..1 (default 0.2): the delay is drawn from
   * `[cap × (1 − jitter), cap]`, so it never exceeds the cap and retries of many failures spread out.
   * 1 is "full jitter".
   */
  jitter?: number;
  /** Random source in [0, 1) (tests pass a fixed one). */
  random?: () => number;
}>;

export type RetryPolicy = BackoffOptions & Readonly<{ maxAttempts: number }>;

/** Durable upstream retries: 5 attempts, 2 s, 4 s, 8 s, 16 s (± jitter), never more than 5 min apart. */
export const UPSTREAM_RETRY: RetryPolicy = { baseMs: 2_000, maxMs: 5 * 60_000, jitter: 0.2, maxAttempts: 5 };

/**
 * Codes that will fail the same way however often they are retried: bad input, a refusal by a
 * lifecycle, a missing thing, a rejected credential (never hammer an auth failure: HR blocks the IP
 * after 50 in 10 s), a request the upstream refused for good, a broken config or store.
 */
export const PERMANENT_ERROR_CODES: ReadonlySet<string> = new Set([
  'SB_VALIDATION',
  'SB_ILLEGAL_STATE',
  'SB_NOT_FOUND',
  'SB_FORBIDDEN',
  'SB_UNMAPPED_USER',
  'SB_UPSTREAM_AUTH',
  'SB_UPSTREAM_REJECTED',
  'SB_CONFIG',
  'SB_STORE_CORRUPT',
]);

/** Codes that mean "not now": worth another attempt later. */
export const TRANSIENT_ERROR_CODES: ReadonlySet<string> = new Set([
  'SB_UPSTREAM_UNAVAILABLE',
  'SB_UPSTREAM_RATE_LIMITED',
  'SB_TIMEOUT',
  'SB_STORE_UNAVAILABLE',
  'SB_CONCURRENCY',
]);

/** Node and undici network failures (`ECONNRESET`, `UND_ERR_SOCKET`, …): transient. */
const NETWORK_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ETIMEDOUT',
  'EPIPE',
  'EAI_AGAIN',
  'ENETUNREACH',
]);

const field = (e: unknown, key: string): unknown =>
  e !== null && typeof e === 'object' ? (e as Record<string, unknown>)[key] : undefined;

/** The error's `code` (`SB_*`, `UND_ERR_*`, `ECONNRESET`), or `'UNCODED'`. Goes in `…Failed.code`. */
export const errorCodeOf = (e: unknown): string => {
  const code = field(e, 'code');
  return typeof code === 'string' && code.length > 0 ? code : 'UNCODED';
};

/**
 * The error's message as it may be stored and shown: scrubbed of secrets and credential-shaped
 * values (src/core/scrub.ts; before cutting, so no half secret escapes), then cut to a size that
 * belongs in an event. Every failure and parked event takes its text from here.
 */
export const errorMessageOf = (e: unknown, max = 2_000): string => {
  const message = scrubText(e instanceof Error ? e.message : String(e));
  return message.length > max ? `${message.slice(0, max)}…` : message;
};

/** HTTP status carried by a coded upstream error (`details.status`) or a vendor error (`statusCode`). */
export const httpStatusOf = (e: unknown): number | undefined => {
  const details = field(e, 'details');
  for (const v of [field(details, 'status'), field(e, 'statusCode'), field(e, 'status')]) {
    if (typeof v === 'number' && Number.isInteger(v) && v >= 100 && v <= 599) return v;
  }
  return undefined;
};

/**
 * How long the upstream asked us to wait (`details.retryAfterMs` of a rate-limit error, filled by
 * each client from its vendor's header: `ratelimit-reset`, `X-RateLimit-Reset`, `Retry-After`).
 */
export const retryAfterMsOf = (e: unknown): number | undefined => {
  if (errorCodeOf(e) !== 'SB_UPSTREAM_RATE_LIMITED' && httpStatusOf(e) !== 429) return undefined;
  const v = field(field(e, 'details'), 'retryAfterMs');
  return typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : undefined;
};

/**
 * True for errors that cannot succeed on a retry (see PERMANENT_ERROR_CODES; also any 401/403).
 * The processor runner parks these at once; unknown errors get the in-process retries first.
 */
export const isPermanentError = (e: unknown): boolean => {
  const status = httpStatusOf(e);
  return PERMANENT_ERROR_CODES.has(errorCodeOf(e)) || status === 401 || status === 403;
};

/**
 * Whether a failed upstream call deserves another (durable) attempt. Only known-transient failures
 * are retried: transient codes, network errors, HTTP 408/425/429/5xx. Never SB_UPSTREAM_AUTH or a
 * 401/403, never a coded refusal, never an uncoded error (a bug does not fix itself). With
 * `attempt`/`maxAttempts`, also false once `attempt` (the one that just failed) reaches the maximum.
 */
export const shouldRetry = (
  error: unknown,
  limits: Readonly<{ attempt: number; maxAttempts: number }> | undefined = undefined,
): boolean => {
  if (limits && limits.attempt >= limits.maxAttempts) return false;
  if (isPermanentError(error)) return false;
  const code = errorCodeOf(error);
  if (TRANSIENT_ERROR_CODES.has(code) || NETWORK_CODES.has(code) || code.startsWith('UND_ERR_')) return true;
  const status = httpStatusOf(error);
  if (status !== undefined) return status === 408 || status === 425 || status === 429 || status >= 500;
  return false;
};

// ---------------------------------------------------------------- policies that depend on the failure

/**
 * What kind of failure an attempt met, for a retry policy that depends on it:
 * - `rate_limited`: the upstream said "slow down" (SB_UPSTREAM_RATE_LIMITED, a 429): retried no
 *   earlier than the reset it named (`retryAfterMs`, read from the error);
 * - `unavailable`: down, slow or unreachable (5xx, 408/425, timeouts, network errors, a store
 *   conflict): retried with backoff;
 * - `auth`: our credentials or permissions refused (SB_UPSTREAM_AUTH, a 401/403): never retried
 *   blindly, only with a wait that is known to change something (a circuit that reopens);
 * - `refused`: anything no retry can fix (bad input, a refusal, not found, an uncoded bug).
 */
export type FailureKind = 'rate_limited' | 'unavailable' | 'auth' | 'refused';

export const failureKindOf = (error: unknown): FailureKind => {
  const code = errorCodeOf(error);
  const status = httpStatusOf(error);
  if (code === 'SB_UPSTREAM_AUTH' || status === 401 || status === 403) return 'auth';
  if (code === 'SB_UPSTREAM_RATE_LIMITED' || status === 429) return 'rate_limited';
  return shouldRetry(error) ? 'unavailable' : 'refused';
};

/** How one failed attempt is retried: a policy, and what this failure changes about it. */
export type RetryRule = RetryPolicy &
  Readonly<{
    /**
     * Whether this failure is retried at all (within `maxAttempts`). Default: `shouldRetry` (the
     * `rate_limited` and `unavailable` kinds). An `auth` failure is retried only with a
     * `retryAfterMs`, whatever this says.
     */
    retry?: boolean;
    /** The next attempt no earlier than this (ms): a circuit that reopens, a lag to wait out. */
    retryAfterMs?: number;
  }>;

/**
 * A retry policy as declared: one for every failure, or per kind of failure and per operation.
 *
 * @example
 * const rules: RetryRules<'sms' | 'call' | 'hang_up'> = {
 *   base: { maxAttempts: 5, baseMs: 500, maxMs: 4_000 },
 *   byAction: { hang_up: { maxAttempts: 3 } },     // per operation
 *   byFailure: { rate_limited: { maxAttempts: 8 } }, // per kind of failure, over the operation's
 * };
 */
export type RetryRules<Action extends string = string> = Readonly<{
  base: RetryPolicy;
  byAction?: Readonly<Partial<Record<Action, Partial<RetryRule>>>>;
  byFailure?: Readonly<Partial<Record<FailureKind, Partial<RetryRule>>>>;
}>;

/** The rule for one failure of operation `action` under `rules` (the operation's, then the kind's overrides). */
export const ruleFor = <Action extends string>(
  rules: RetryRules<Action>,
  failure: Readonly<{ error: unknown; action: Action }>,
): RetryRule => ({
  ...rules.base,
  ...rules.byAction?.[failure.action],
  ...rules.byFailure?.[failureKindOf(failure.error)],
});

/** What one failed attempt comes to: its kind, the attempts allowed, and when the next is due (null: final). */
export type RetryDecision = Readonly<{ kind: FailureKind; maxAttempts: number; nextAttemptAt: Date | null }>;

/**
 * Decides the retry of attempt `attempt` (1-based, the one that just failed at `now`) under `rule`:
 * final once `attempt` reaches `maxAttempts`, for a failure the rule does not retry, and for an
 * `auth` failure without a `retryAfterMs`; otherwise due after the backoff, and no earlier than
 * the rule's `retryAfterMs` or the rate limit's reset the error names.
 */
export const decideRetryOf = (rule: RetryRule, error: unknown, attempt: number, now: Date): RetryDecision => {
  const kind = failureKindOf(error);
  const { maxAttempts } = rule;
  const wanted =
    kind === 'auth'
      ? rule.retry !== false && rule.retryAfterMs !== undefined
      : (rule.retry ?? shouldRetry(error));
  if (!wanted || attempt >= maxAttempts) return { kind, maxAttempts, nextAttemptAt: null };
  const vendorWait = retryAfterMsOf(error);
  const waits = [rule.retryAfterMs, vendorWait].filter((w): w is number => w !== undefined);
  const retryAfterMs = waits.length > 0 ? Math.max(...waits) : undefined;
  return {
    kind,
    maxAttempts,
    nextAttemptAt: nextAttemptAt(attempt, now, {
      ...rule,
      ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
    }),
  };
};

/**
 * Delay before the attempt after `attempt` (1-based: the attempt that just failed), in ms:
 * `min(maxMs, baseMs × 2^(attempt−1))` with jitter below the cap. A rate-limit error's
 * `retryAfterMs` wins when given: the delay is at least that (plus up to `jitter × baseMs`), even
 * above `maxMs`, so we never call before the vendor said we may.
 */
export const backoffDelayMs = (
  attempt: number,
  options: BackoffOptions & Readonly<{ error?: unknown; retryAfterMs?: number }>,
): number => {
  const jitter = Math.min(1, Math.max(0, options.jitter ?? 0.2));
  const random = options.random ?? Math.random;
  const retryAfterMs = options.retryAfterMs ?? retryAfterMsOf(options.error);
  if (retryAfterMs !== undefined) return Math.ceil(retryAfterMs + random() * jitter * options.baseMs);
  const exponent = Math.max(0, Math.min(attempt - 1, 52));
  const cap = Math.min(options.maxMs, options.baseMs * 2 ** exponent);
  return Math.round(cap * (1 - jitter * random()));
};

/**
 * When to try again after `attempt` failed at `now`: `now + backoffDelayMs(attempt, options)`.
 * Put it in the failure event (`nextAttemptAt`) and schedule a timer for it.
 *
 * @example nextAttemptAt(2, clock.now(), { baseMs: 1000, maxMs: 60_000, jitter: 0.2 }) // ≈ now + 1.6–2 s
 */
export const nextAttemptAt = (
  attempt: number,
  now: Date,
  options: BackoffOptions & Readonly<{ error?: unknown; retryAfterMs?: number }>,
): Date => new Date(now.getTime() + backoffDelayMs(attempt, options));

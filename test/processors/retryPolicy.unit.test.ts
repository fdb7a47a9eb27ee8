import { describe, expect, it } from 'vitest';
import {
  ChatOpsError,
  IllegalStateError,
  StoreUnavailableError,
  ValidationError,
} from '../../src/core/errors.ts';
import {
  backoffDelayMs,
  decideRetryOf,
  errorCodeOf,
  failureKindOf,
  httpStatusOf,
  isPermanentError,
  nextAttemptAt,
  type RetryRules,
  retryAfterMsOf,
  ruleFor,
  shouldRetry,
  UPSTREAM_RETRY,
} from '../../src/processors/retryPolicy.ts';

const NOW = new Date('2026-11-22T02:00:00.000Z');
const fixed = (r: number) => () => r;

describe('backoff', () => {
  it('doubles from baseMs per attempt and stops at maxMs', () => {
    const o = { baseMs: 100, maxMs: 1_000, jitter: 0 };
    expect([1, 2, 3, 4, 5, 6, 50].map((a) => backoffDelayMs(a, o))).toEqual([
      100, 200, 400, 800, 1000, 1000, 1000,
    ]);
  });

  it('jitters below the cap, never above it', () => {
    const o = { baseMs: 1_000, maxMs: 60_000, jitter: 0.5 };
    expect(backoffDelayMs(3, { ...o, random: fixed(0) })).toBe(4_000);
    expect(backoffDelayMs(3, { ...o, random: fixed(0.999999) })).toBe(2_000);
    for (let i = 0; i < 200; i++) {
      const d = backoffDelayMs(3, o);
      expect(d).toBeGreaterThanOrEqual(2_000);
      expect(d).toBeLessThanOrEqual(4_000);
    }
    // Full jitter spreads over [0, cap].
    expect(backoffDelayMs(1, { baseMs: 1_000, maxMs: 1_000, jitter: 1, random: fixed(0.75) })).toBe(250);
  });

  it('waits at least what a rate-limit error asked for, even above maxMs', () => {
    const limited = new ChatOpsError('SB_UPSTREAM_RATE_LIMITED', 'slow down', {
      details: { status: 429, retryAfterMs: 7_000 },
    });
    const o = { baseMs: 100, maxMs: 1_000, jitter: 0.2 };
    expect(backoffDelayMs(1, { ...o, error: limited, random: fixed(0) })).toBe(7_000);
    expect(backoffDelayMs(1, { ...o, error: limited, random: fixed(0.5) })).toBe(7_010);
    expect(nextAttemptAt(1, NOW, { ...o, error: limited, random: fixed(0) })).toEqual(
      new Date(NOW.getTime() + 7_000),
    );
    expect(backoffDelayMs(1, { ...o, retryAfterMs: 3_000, random: fixed(0) })).toBe(3_000);
  });

  it('computes the next attempt time from now', () => {
    expect(nextAttemptAt(2, NOW, { baseMs: 2_000, maxMs: 300_000, jitter: 0 })).toEqual(
      new Date('2026-11-22T02:00:04.000Z'),
    );
  });
});

describe('shouldRetry', () => {
  const upstream = (code: ConstructorParameters<typeof ChatOpsError>[0], status?: number) =>
    new ChatOpsError(code, 'x', { details: status === undefined ? {} : { status } });

  it('retries transient upstream and store failures', () => {
    expect(shouldRetry(upstream('SB_UPSTREAM_UNAVAILABLE', 503))).toBe(true);
    expect(shouldRetry(upstream('SB_UPSTREAM_RATE_LIMITED', 429))).toBe(true);
    expect(shouldRetry(upstream('SB_TIMEOUT'))).toBe(true);
    expect(shouldRetry(new StoreUnavailableError('closed'))).toBe(true);
    expect(shouldRetry(Object.assign(new Error('socket'), { code: 'UND_ERR_SOCKET' }))).toBe(true);
    expect(shouldRetry(Object.assign(new Error('reset'), { code: 'ECONNRESET' }))).toBe(true);
    expect(shouldRetry({ statusCode: 502 })).toBe(true);
  });

  it('never retries auth failures, 401/403, refusals or uncoded bugs', () => {
    expect(shouldRetry(upstream('SB_UPSTREAM_AUTH', 401))).toBe(false);
    expect(shouldRetry(upstream('SB_UPSTREAM_UNAVAILABLE', 403))).toBe(false);
    expect(shouldRetry({ statusCode: 401 })).toBe(false);
    expect(shouldRetry(upstream('SB_UPSTREAM_REJECTED', 404))).toBe(false);
    expect(shouldRetry(new ValidationError('bad'))).toBe(false);
    expect(shouldRetry(new IllegalStateError('no'))).toBe(false);
    expect(shouldRetry(new TypeError('x is undefined'))).toBe(false);
    expect(shouldRetry({ statusCode: 400 })).toBe(false);
  });

  it('stops at the maximum number of attempts', () => {
    const e = upstream('SB_UPSTREAM_UNAVAILABLE', 500);
    expect(shouldRetry(e, { attempt: 4, maxAttempts: 5 })).toBe(true);
    expect(shouldRetry(e, { attempt: 5, maxAttempts: 5 })).toBe(false);
    expect(UPSTREAM_RETRY.maxAttempts).toBeGreaterThan(1);
  });
});

describe('error helpers', () => {
  it('reads codes, statuses and retry-after hints', () => {
    expect(errorCodeOf(new ValidationError('x'))).toBe('SB_VALIDATION');
    expect(errorCodeOf(new Error('x'))).toBe('UNCODED');
    expect(errorCodeOf('string thrown')).toBe('UNCODED');
    expect(httpStatusOf(new ChatOpsError('SB_UPSTREAM_UNAVAILABLE', 'x', { details: { status: 503 } }))).toBe(
      503,
    );
    expect(httpStatusOf({ statusCode: 'nope' })).toBeUndefined();
    expect(
      retryAfterMsOf(new ChatOpsError('SB_UPSTREAM_UNAVAILABLE', 'x', { details: { retryAfterMs: 5 } })),
    ).toBe(undefined);
    expect(
      retryAfterMsOf(new ChatOpsError('SB_UPSTREAM_RATE_LIMITED', 'x', { details: { retryAfterMs: 1500 } })),
    ).toBe(1500);
  });

  it('classifies permanent errors for the runner', () => {
    expect(isPermanentError(new ValidationError('x'))).toBe(true);
    expect(isPermanentError(new ChatOpsError('SB_UPSTREAM_AUTH', 'x'))).toBe(true);
    expect(isPermanentError({ statusCode: 403 })).toBe(true);
    expect(isPermanentError(new Error('flaky'))).toBe(false);
    expect(isPermanentError(new StoreUnavailableError('x'))).toBe(false);
  });
});

describe('retry policies that depend on the failure', () => {
  const rule = { maxAttempts: 5, baseMs: 1_000, maxMs: 60_000, jitter: 0 } as const;
  const err = (code: ConstructorParameters<typeof ChatOpsError>[0], details: Record<string, unknown> = {}) =>
    new ChatOpsError(code, 'x', { details });
  const at = (ms: number) => new Date(NOW.getTime() + ms);

  it('names the kind of each failure', () => {
    expect(failureKindOf(err('SB_UPSTREAM_RATE_LIMITED', { status: 429 }))).toBe('rate_limited');
    expect(failureKindOf({ statusCode: 429 })).toBe('rate_limited');
    expect(failureKindOf(err('SB_UPSTREAM_UNAVAILABLE', { status: 503 }))).toBe('unavailable');
    expect(failureKindOf(Object.assign(new Error('reset'), { code: 'ECONNRESET' }))).toBe('unavailable');
    expect(failureKindOf(err('SB_TIMEOUT'))).toBe('unavailable');
    expect(failureKindOf(err('SB_UPSTREAM_AUTH', { status: 401 }))).toBe('auth');
    expect(failureKindOf({ statusCode: 403 })).toBe('auth');
    expect(failureKindOf(new ValidationError('bad number'))).toBe('refused');
    expect(failureKindOf(new TypeError('a bug'))).toBe('refused');
  });

  it('backs off on an outage, waits for a rate limit’s reset, and stops at the attempts allowed', () => {
    const down = err('SB_UPSTREAM_UNAVAILABLE', { status: 503 });
    expect(decideRetryOf(rule, down, 3, NOW)).toEqual({
      kind: 'unavailable',
      maxAttempts: 5,
      nextAttemptAt: at(4_000),
    });
    expect(decideRetryOf(rule, down, 5, NOW).nextAttemptAt).toBeNull();
    const limited = err('SB_UPSTREAM_RATE_LIMITED', { status: 429, retryAfterMs: 120_000 });
    expect(decideRetryOf(rule, limited, 1, NOW).nextAttemptAt).toEqual(at(120_000));
    // A rule's own wait and the vendor's: the later one.
    expect(decideRetryOf({ ...rule, retryAfterMs: 30_000 }, limited, 1, NOW).nextAttemptAt).toEqual(
      at(120_000),
    );
    expect(decideRetryOf({ ...rule, retryAfterMs: 30_000 }, down, 1, NOW).nextAttemptAt).toEqual(at(30_000));
  });

  it('never retries an auth failure blindly, nor a refusal unless the rule says so', () => {
    const auth = err('SB_UPSTREAM_AUTH', { status: 401 });
    expect(decideRetryOf(rule, auth, 1, NOW)).toEqual({ kind: 'auth', maxAttempts: 5, nextAttemptAt: null });
    expect(decideRetryOf({ ...rule, retry: true }, auth, 1, NOW).nextAttemptAt).toBeNull();
    expect(decideRetryOf({ ...rule, retryAfterMs: 300_000 }, auth, 1, NOW).nextAttemptAt).toEqual(
      at(300_000),
    );
    expect(
      decideRetryOf({ ...rule, retry: false, retryAfterMs: 300_000 }, auth, 1, NOW).nextAttemptAt,
    ).toBeNull();
    const refused = new ValidationError('bad number');
    expect(decideRetryOf(rule, refused, 1, NOW).nextAttemptAt).toBeNull();
    expect(decideRetryOf({ ...rule, retry: true }, refused, 1, NOW).nextAttemptAt).toEqual(at(1_000));
    expect(decideRetryOf({ ...rule, retry: false }, err('SB_TIMEOUT'), 1, NOW).nextAttemptAt).toBeNull();
  });

  it('declared rules: per operation, then per kind of failure, over the base', () => {
    const rules: RetryRules<'sms' | 'hang_up'> = {
      base: rule,
      byAction: { hang_up: { maxAttempts: 3 } },
      byFailure: { rate_limited: { maxAttempts: 8 } },
    };
    const down = err('SB_UPSTREAM_UNAVAILABLE', { status: 503 });
    const limited = err('SB_UPSTREAM_RATE_LIMITED', { status: 429 });
    expect(ruleFor(rules, { error: down, action: 'sms' }).maxAttempts).toBe(5);
    expect(ruleFor(rules, { error: down, action: 'hang_up' }).maxAttempts).toBe(3);
    expect(ruleFor(rules, { error: limited, action: 'hang_up' }).maxAttempts).toBe(8);
  });
});

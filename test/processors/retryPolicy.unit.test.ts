import { describe, expect, it } from 'vitest';
import {
  ChatOpsError,
  IllegalStateError,
  StoreUnavailableError,
  ValidationError,
} from '../../src/core/errors.ts';
import {
  backoffDelayMs,
  errorCodeOf,
  httpStatusOf,
  isPermanentError,
  nextAttemptAt,
  retryAfterMsOf,
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

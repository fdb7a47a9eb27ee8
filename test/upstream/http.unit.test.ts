import { describe, expect, it } from 'vitest';
import { ChatOpsError } from '../../src/core/errors.ts';
import { rateLimitDelayMs, upstreamHttpError, upstreamNetworkError } from '../../src/upstream/http.ts';
import { classifyPagerDutyError, parsePagerDutyError } from '../../src/upstream/pagerduty.ts';

const NOW = Date.parse('2026-11-22T02:00:00.000Z');

describe('rateLimitDelayMs', () => {
  it('reads PagerDuty ratelimit-reset as seconds to wait, not an epoch', () => {
    expect(rateLimitDelayMs({ 'ratelimit-reset': '7' }, 'pagerduty', NOW)).toBe(7_000);
    expect(rateLimitDelayMs(new Headers({ 'RateLimit-Reset': '0' }), 'pagerduty', NOW)).toBe(0);
  });

  it('falls back to Retry-After for PagerDuty and says nothing when no header is usable', () => {
    expect(rateLimitDelayMs({ 'retry-after': '3' }, 'pagerduty', NOW)).toBe(3_000);
    expect(rateLimitDelayMs({}, 'pagerduty', NOW)).toBeUndefined();
    expect(rateLimitDelayMs({ 'ratelimit-reset': 'soon' }, 'pagerduty-events', NOW)).toBeUndefined();
  });

  it('reads HiBob X-RateLimit-Reset as a Unix time', () => {
    const reset = String(NOW / 1000 + 42);
    expect(rateLimitDelayMs({ 'X-RateLimit-Reset': reset }, 'hibob', NOW)).toBe(42_000);
    // A reset in the past means "go now", never a negative wait.
    expect(rateLimitDelayMs({ 'x-ratelimit-reset': String(NOW / 1000 - 5) }, 'hibob', NOW)).toBe(0);
  });

  it('prefers Vonage Retry-After, else an epoch-milliseconds X-RateLimit-Reset', () => {
    expect(
      rateLimitDelayMs({ 'retry-after': '2', 'x-ratelimit-reset': String(NOW + 60_000) }, 'vonage', NOW),
    ).toBe(2_000);
    expect(rateLimitDelayMs({ 'x-ratelimit-reset': String(NOW + 1_500) }, 'vonage', NOW)).toBe(1_500);
  });

  it('reads Slack Retry-After seconds and HTTP-dates', () => {
    expect(rateLimitDelayMs({ 'Retry-After': '30' }, 'slack', NOW)).toBe(30_000);
    const date = new Date(NOW + 10_000).toUTCString();
    expect(rateLimitDelayMs({ 'retry-after': date }, 'slack', NOW)).toBe(10_000);
    expect(rateLimitDelayMs({ 'retry-after': ['5', '9'] }, 'slack', NOW)).toBe(5_000);
  });
});

const base = {
  vendor: 'pagerduty' as const,
  operation: 'updateIncident',
  method: 'PUT' as const,
  path: '/incidents/Q1',
  headers: {},
  nowMs: NOW,
};

describe('upstreamHttpError (status mapping)', () => {
  it.each([
    [401, 'SB_UPSTREAM_AUTH', false],
    [403, 'SB_UPSTREAM_AUTH', false],
    [404, 'SB_NOT_FOUND', false],
    [400, 'SB_VALIDATION', false],
    [422, 'SB_VALIDATION', false],
    [409, 'SB_UPSTREAM_REJECTED', false],
    [413, 'SB_UPSTREAM_REJECTED', false],
    [408, 'SB_UPSTREAM_UNAVAILABLE', true],
    [500, 'SB_UPSTREAM_UNAVAILABLE', true],
    [502, 'SB_UPSTREAM_UNAVAILABLE', true],
    [503, 'SB_UPSTREAM_UNAVAILABLE', true],
    [429, 'SB_UPSTREAM_RATE_LIMITED', true],
  ])('HTTP %i → %s (retryable %s)', (status, code, retryable) => {
    const err = upstreamHttpError({ ...base, status });
    expect(err).toBeInstanceOf(ChatOpsError);
    expect(err.code).toBe(code);
    expect(err.details.retryable).toBe(retryable);
    expect(err.details.status).toBe(status);
  });

  it('puts retryAfterMs from the vendor headers on a 429, or a default when they say nothing', () => {
    const fromHeaders = upstreamHttpError({ ...base, status: 429, headers: { 'ratelimit-reset': '12' } });
    expect(fromHeaders.details).toMatchObject({
      retryAfterMs: 12_000,
      retryAfterSource: 'headers',
      retryable: true,
    });
    const bare = upstreamHttpError({ ...base, status: 429, defaultRetryAfterMs: 4_000 });
    expect(bare.details).toMatchObject({ retryAfterMs: 4_000, retryAfterSource: 'default' });
  });

  it('carries the vendor error code, message and errors', () => {
    const err = upstreamHttpError({
      ...base,
      status: 400,
      vendorError: { code: 2001, message: 'Invalid Input Provided', errors: ['Title cannot be empty'] },
    });
    expect(err.details).toMatchObject({
      vendorCode: 2001,
      vendorMessage: 'Invalid Input Provided',
      vendorErrors: ['Title cannot be empty'],
    });
    expect(err.message).toContain('Title cannot be empty');
  });

  it('never lets a classifier make 401/403 anything but SB_UPSTREAM_AUTH', () => {
    const err = upstreamHttpError({
      ...base,
      status: 403,
      vendorError: { code: 2010, message: 'Access Denied' },
      classify: () => ({ code: 'SB_VALIDATION', reason: 'x' }),
    });
    expect(err.code).toBe('SB_UPSTREAM_AUTH');
    expect(err.details.retryable).toBe(false);
  });

  it('marks a failed write as maybe applied, except on 503 and for reads', () => {
    expect(upstreamHttpError({ ...base, status: 500 }).details.maybeApplied).toBe(true);
    expect(upstreamHttpError({ ...base, status: 503 }).details.maybeApplied).toBe(false);
    expect(upstreamHttpError({ ...base, method: 'GET', status: 500 }).details.maybeApplied).toBe(false);
  });
});

describe('PagerDuty error codes', () => {
  const pd = (status: number, json: unknown) =>
    upstreamHttpError({
      ...base,
      status,
      vendorError: parsePagerDutyError(json),
      classify: classifyPagerDutyError,
    });

  it.each([
    [
      400,
      { error: { message: 'Invalid Input Provided', code: 2001, errors: ['bad'] } },
      'SB_VALIDATION',
      'invalid_input',
    ],
    [
      400,
      { error: { message: 'Arguments Caused Error', code: 2002, errors: [] } },
      'SB_UPSTREAM_REJECTED',
      'arguments_caused_error',
    ],
    [403, { error: { message: 'Access Denied', code: 2010 } }, 'SB_UPSTREAM_AUTH', 'access_denied'],
    [402, { error: { message: 'Account Expired', code: 2012 } }, 'SB_UPSTREAM_REJECTED', 'account_expired'],
    [404, { error: { message: 'Not Found', code: 2100 } }, 'SB_NOT_FOUND', 'not_found'],
    [
      400,
      { error: { message: 'Requester User Not Found', code: 1008 } },
      'SB_UNMAPPED_USER',
      'requester_not_found',
    ],
    [
      400,
      { error: { message: 'Incident Already Resolved', code: 1001 } },
      'SB_UPSTREAM_REJECTED',
      'already_resolved',
    ],
    [
      400,
      { error: { message: 'You must specify a user\'s email address in the "From" header', code: 2016 } },
      'SB_VALIDATION',
      'from_header_missing',
    ],
    [
      400,
      {
        error: {
          message: 'Invalid Input Provided',
          code: 2001,
          errors: ['Open incident with matching dedup key already exists on this service'],
        },
      },
      'SB_UPSTREAM_REJECTED',
      'duplicate_incident_key',
    ],
    [413, { error: { message: 'Request Entity Too Large' } }, 'SB_UPSTREAM_REJECTED', 'too_many_incidents'],
    [401, { error: { message: 'Unauthorized', code: 2006 } }, 'SB_UPSTREAM_AUTH', undefined],
    [429, { error: { message: 'Rate Limit Exceeded', code: 2020 } }, 'SB_UPSTREAM_RATE_LIMITED', undefined],
  ])('HTTP %i %j → %s', (status, json, code, reason) => {
    const err = pd(status, json);
    expect(err.code).toBe(code);
    expect(err.details.reason).toBe(reason);
  });

  it('parses the Events API error shape and newer field→messages errors objects', () => {
    expect(
      parsePagerDutyError({ status: 'invalid event', message: 'Event object is invalid', errors: ['x'] }),
    ).toEqual({
      message: 'Event object is invalid',
      errors: ['x'],
    });
    expect(
      parsePagerDutyError({
        error: { message: 'Invalid Request', code: 2001, errors: { since: ['too old'] } },
      }),
    ).toEqual({
      code: 2001,
      message: 'Invalid Request',
      errors: ['since: too old'],
    });
    expect(parsePagerDutyError('<html>')).toBeUndefined();
  });
});

describe('upstreamNetworkError', () => {
  const ctx = {
    vendor: 'pagerduty' as const,
    operation: 'createIncident',
    method: 'POST' as const,
    path: '/incidents',
  };
  const undiciError = (code: string) => Object.assign(new Error(code), { code });

  it.each([
    ['UND_ERR_CONNECT_TIMEOUT', 'timeout', false],
    ['UND_ERR_HEADERS_TIMEOUT', 'timeout', true],
    ['UND_ERR_BODY_TIMEOUT', 'timeout', true],
    ['UND_ERR_SOCKET', 'network', true],
    ['ECONNREFUSED', 'network', false],
    ['ECONNRESET', 'network', true],
  ])('%s → SB_UPSTREAM_UNAVAILABLE (%s, maybeApplied %s)', (code, reason, maybeApplied) => {
    const err = upstreamNetworkError(undiciError(code), ctx);
    expect(err.code).toBe('SB_UPSTREAM_UNAVAILABLE');
    expect(err.details).toMatchObject({ retryable: true, reason, transportCode: code, maybeApplied });
  });

  it('treats our own deadline (AbortSignal.timeout) as a timeout', () => {
    const err = upstreamNetworkError(new DOMException('The operation timed out', 'TimeoutError'), {
      ...ctx,
      method: 'GET',
    });
    expect(err.details).toMatchObject({
      reason: 'timeout',
      transportCode: 'DEADLINE_EXCEEDED',
      maybeApplied: false,
    });
  });
});

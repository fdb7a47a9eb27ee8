import { describe, expect, it } from 'vitest';
import { ChatOpsError } from '../../src/core/errors.ts';
import { lagPolicyAfter } from '../../src/timeOff/hrCalls/calls.ts';
import { failureText, hrRefusalOf, mayHaveLanded } from '../../src/timeOff/hrCalls/failures.ts';
import { newestPerRequest, pollSince } from '../../src/timeOff/hrSync/changesPoll.ts';
import { directoryEmployeeOf, hrEntryOf } from '../../src/timeOff/hrSync/entries.ts';
import type { TimeOffChange } from '../../src/upstream/hibob.ts';

const NOW = new Date('2026-11-23T09:00:00.000Z');

describe('HR calls: what a failure was and how it reads', () => {
  it('a POST may have landed after a timeout, a lost connection or a 5xx, not after a refusal', () => {
    for (const code of ['SB_TIMEOUT', 'SB_UPSTREAM_UNAVAILABLE', 'UNCODED', 'UND_ERR_SOCKET', 'ECONNRESET']) {
      expect(mayHaveLanded(code)).toBe(true);
    }
    for (const code of ['SB_VALIDATION', 'SB_UPSTREAM_RATE_LIMITED', 'SB_UPSTREAM_AUTH']) {
      expect(mayHaveLanded(code)).toBe(false);
    }
  });

  it('reads the credentials circuit and a missing permission from the client’s errors', () => {
    const open = new ChatOpsError('SB_UPSTREAM_AUTH', 'x', {
      details: { reason: 'auth_circuit_open', retryAt: '2026-11-23T09:05:00.000Z' },
    });
    expect(hrRefusalOf(open, NOW)).toEqual({ kind: 'auth_circuit', waitMs: 5 * 60_000 });
    const denied = new ChatOpsError('SB_UPSTREAM_AUTH', 'x', {
      details: { status: 403, reason: 'permission_missing', permission: 'timeoff.write' },
    });
    expect(hrRefusalOf(denied, NOW)).toEqual({ kind: 'permission', permission: 'timeoff.write' });
    expect(hrRefusalOf(new ChatOpsError('SB_TIMEOUT', 'x'), NOW)).toEqual({ kind: 'other' });
  });

  it('words each failure for people, never with HR’s text', () => {
    const failure = (final: boolean, code = 'SB_UPSTREAM_UNAVAILABLE') => ({
      code,
      final,
      nextAttemptAt: final ? null : '2026-11-23T09:05:00.000Z',
    });
    expect(failureText('not_visible', 'submit', failure(false), NOW)).toEqual([
      'SB_HR_NOT_VISIBLE',
      'HR took the request but has not shown it yet',
    ]);
    expect(failureText('not_visible', 'read_back', failure(true), NOW)[1]).toBe(
      'HR has not shown the request yet; Switchboard confirms it as soon as HR does',
    );
    expect(failureText('auth_circuit', 'cancel', failure(false), NOW)).toEqual([
      'SB_UPSTREAM_AUTH',
      "HR refused Switchboard's credentials; HR calls wait until <!date^1795424700^{date_short_pretty} at {time}|Nov 23, 09:05 UTC>, and an admin has been told",
    ]);
    expect(failureText('permission', 'submit', failure(true), NOW)[1]).toBe(
      "HR refused Switchboard's permission to record time off; an admin has been told.",
    );
    expect(failureText('other', 'submit', failure(false, 'SB_UPSTREAM_RATE_LIMITED'), NOW)).toEqual([
      'SB_UPSTREAM_RATE_LIMITED',
      'HR asked Switchboard to slow down',
    ]);
  });

  it('a submission sent at a later attempt keeps the lag policy’s looks and delays from its first', () => {
    const lag = { baseMs: 5_000, maxMs: 10_000, jitter: 0.1, maxAttempts: 26 };
    expect(lagPolicyAfter(lag, 1)).toEqual(lag);
    expect(lagPolicyAfter(lag, 3)).toEqual({ ...lag, baseMs: 1_250, maxAttempts: 28 });
  });
});

const change = (requestId: number, status: string, over: Partial<TimeOffChange> = {}): TimeOffChange => ({
  changeType: 'Created',
  requestId,
  employeeId: 'E1',
  policyTypeDisplayName: 'Holiday',
  startDate: '2026-12-03',
  endDate: '2026-12-04',
  status,
  ...over,
});

describe('HR sync: HR’s answers as facts', () => {
  it('polls from the last poll less HR’s lag, or a day back the first time', () => {
    expect(pollSince(null, NOW, 30_000).toISOString()).toBe('2026-11-22T09:00:00.000Z');
    expect(pollSince({ until: '2026-11-23T08:55:00.000Z' }, NOW, 30_000).toISOString()).toBe(
      '2026-11-23T08:54:30.000Z',
    );
  });

  it('keeps the newest change of each request', () => {
    const newest = newestPerRequest([change(1, 'pending'), change(2, 'approved'), change(1, 'canceled')]);
    expect(newest.map((c) => [c.requestId, c.status])).toEqual([
      [1, 'canceled'],
      [2, 'approved'],
    ]);
  });

  it('an entry only when the ids and dates check out', () => {
    expect(hrEntryOf(change(7, 'approved'))).toMatchObject({
      hrRequestId: '7',
      employeeId: 'E1',
      policyType: 'Holiday',
      startPortion: 'all_day',
    });
    expect(hrEntryOf(change(7, 'approved', { startDate: '3 Dec' }))).toBeNull();
    expect(hrEntryOf(change(7, 'approved', { employeeId: '../x' }))).toBeNull();
  });

  it('a directory entry only with an email; a manager only when their id checks out', () => {
    expect(
      directoryEmployeeOf({
        id: 'E1',
        email: ' Ana@Example.org ',
        firstName: 'Ana',
        surname: 'Silva',
        managerId: 'E2',
      }),
    ).toEqual({
      hrId: 'E1',
      email: 'ana@example.org',
      displayName: 'Ana Silva',
      managerHrId: 'E2',
      site: null,
      status: 'active',
    });
    expect(
      directoryEmployeeOf({ id: 'E1', email: 'ana@example.org', managerId: 'bad id', status: 'Terminated' }),
    ).toMatchObject({ managerHrId: null, status: 'left' });
    expect(directoryEmployeeOf({ id: 'E1' })).toBeNull();
  });

  it('names too long for the directory are cut between characters, never inside an emoji (issue 19)', () => {
    const family = '👨‍👩‍👧‍👦';
    const employee = directoryEmployeeOf({
      id: 'E1',
      email: 'ana@example.org',
      displayName: `A${family.repeat(40)}`,
      site: `S${family.repeat(40)}`,
    });
    for (const text of [employee?.displayName ?? '', employee?.site ?? '']) {
      expect(text.length).toBeLessThanOrEqual(200);
      expect(text).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/);
      expect(
        text
          .replace(/…$/, '')
          .slice(1)
          .split(family)
          .every((part) => part === ''),
      ).toBe(true);
    }
    const entry = hrEntryOf(change(7, 'approved', { policyTypeDisplayName: `Holiday ${'🏖️'.repeat(40)}` }));
    expect(entry?.policyType).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])/);
    expect(entry?.policyType.length).toBeLessThanOrEqual(100);
  });
});

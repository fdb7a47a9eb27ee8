import { describe, expect, it } from 'vitest';
import { parseTimeOffText, parseWhosOutText, todayIn } from '../../handlers/timeOff/parse.ts';
import { readRequestSubmission, TIME_OFF_REQUEST_FIELD } from '../../src/timeOff/blocks/requestModal.ts';
import { timeOffRejectionText } from '../../src/timeOff/rejections.ts';
import { mergeWhosOut } from '../../src/timeOff/whosOut.ts';

const POLICIES = ['Holiday', 'Sick', 'Parental leave'];
const TODAY = '2026-11-23'; // a Monday

const ok = <T>(r: { ok: true; value: T } | { ok: false; problem: string }): T => {
  if (!r.ok) throw new Error(`expected a parse, got: ${r.problem}`);
  return r.value;
};
const problem = (r: { ok: true } | { ok: false; problem: string }): string => {
  if (r.ok) throw new Error('expected a problem');
  return r.problem;
};

describe('today is the person’s (issue 19)', () => {
  it('the same instant is a different today in Singapore and in New York; an unknown zone is UTC', () => {
    const now = new Date('2026-11-27T20:00:00.000Z');
    expect(todayIn(now, 'Asia/Singapore')).toBe('2026-11-28');
    expect(todayIn(now, 'America/New_York')).toBe('2026-11-27');
    expect(todayIn(now, 'Not/AZone')).toBe('2026-11-27');
    expect(
      ok(parseTimeOffText('sick tomorrow', POLICIES, todayIn(now, 'Asia/Singapore'))).ask.startDate,
    ).toBe('2026-11-29');
    expect(todayIn(new Date('2026-11-28T04:30:00.000Z'), 'America/New_York')).toBe('2026-11-27');
  });
});

describe('/timeoff text', () => {
  it('reads a policy in any case, dates, today/tomorrow, half days and a note', () => {
    expect(ok(parseTimeOffText('HOLIDAY 2026-12-03 2026-12-04 Family visit', POLICIES, TODAY)).ask).toEqual({
      policyType: 'Holiday',
      startDate: '2026-12-03',
      endDate: '2026-12-04',
      startPortion: 'all_day',
      endPortion: 'all_day',
      description: 'Family visit',
    });
    expect(ok(parseTimeOffText('sick today', POLICIES, TODAY)).ask).toMatchObject({
      startDate: TODAY,
      endDate: TODAY,
      startPortion: 'all_day',
      endPortion: 'all_day',
      description: '',
    });
    expect(ok(parseTimeOffText('sick tomorrow pm', POLICIES, TODAY)).ask).toMatchObject({
      startDate: '2026-11-24',
      endDate: '2026-11-24',
      startPortion: 'afternoon',
      endPortion: 'afternoon',
    });
    expect(
      ok(parseTimeOffText('holiday 2026-12-03 pm to 2026-12-07 am back on Tuesday', POLICIES, TODAY)).ask,
    ).toEqual({
      policyType: 'Holiday',
      startDate: '2026-12-03',
      endDate: '2026-12-07',
      startPortion: 'afternoon',
      endPortion: 'morning',
      description: 'back on Tuesday',
    });
    expect(ok(parseTimeOffText('parental LEAVE 2027-01-04 - 2027-03-31', POLICIES, TODAY)).policyType).toBe(
      'Parental leave',
    );
    expect(ok(parseTimeOffText('holiday 2026-12-3', POLICIES, TODAY)).ask.startDate).toBe('2026-12-03');
  });

  it('names what is wrong, escaped', () => {
    expect(problem(parseTimeOffText('vacation 2026-12-03', POLICIES, TODAY))).toBe(
      '`vacation` is not a time-off policy in HR. HR knows: `Holiday`, `Sick`, `Parental leave`.',
    );
    expect(problem(parseTimeOffText('<!here> 2026-12-03', POLICIES, TODAY))).toContain('`&lt;!here&gt;`');
    expect(problem(parseTimeOffText('holiday', POLICIES, TODAY))).toContain('Say when');
    expect(problem(parseTimeOffText('holiday soon', POLICIES, TODAY))).toContain('`soon` is not a date');
    expect(problem(parseTimeOffText('holiday 2026-02-30', POLICIES, TODAY))).toContain('is not a real date');
    expect(problem(parseTimeOffText('holiday 3/12/2026', POLICIES, TODAY))).toContain('YYYY-MM-DD');
    expect(problem(parseTimeOffText('holiday 2026-12-03 to', POLICIES, TODAY))).toContain(
      'an end date should follow',
    );
    expect(problem(parseTimeOffText(`holiday 2026-12-03 ${'x'.repeat(1001)}`, POLICIES, TODAY))).toContain(
      'at most 1000',
    );
  });

  it('takes the first word as the policy when HR could not be asked', () => {
    expect(ok(parseTimeOffText('Sabbatical 2026-12-03', null, TODAY)).ask.policyType).toBe('Sabbatical');
  });
});

describe('/whosout text', () => {
  it('reads today, tomorrow, weeks, a date and a range', () => {
    expect(ok(parseWhosOutText('', TODAY))).toMatchObject({ from: TODAY, to: TODAY });
    expect(ok(parseWhosOutText('tomorrow', TODAY))).toMatchObject({ from: '2026-11-24', to: '2026-11-24' });
    expect(ok(parseWhosOutText('This Week', '2026-11-26'))).toMatchObject({
      from: '2026-11-23',
      to: '2026-11-29',
    });
    expect(ok(parseWhosOutText('next week', '2026-11-29'))).toMatchObject({
      from: '2026-11-30',
      to: '2026-12-06',
    });
    expect(ok(parseWhosOutText('2026-12-01', TODAY))).toMatchObject({ from: '2026-12-01', to: '2026-12-01' });
    expect(ok(parseWhosOutText('2026-12-01 to 2026-12-04', TODAY))).toMatchObject({
      from: '2026-12-01',
      to: '2026-12-04',
    });
  });

  it('refuses what it cannot read, in words', () => {
    expect(problem(parseWhosOutText('someday', TODAY))).toContain('`someday` is not a day');
    expect(problem(parseWhosOutText('2026-12-04 2026-12-01', TODAY))).toContain('before the start date');
    expect(problem(parseWhosOutText('2026-01-01 2026-12-31', TODAY))).toContain('more than 92 days');
    expect(problem(parseWhosOutText('a b c', TODAY))).toContain('more than a date or two');
  });
});

describe('the request form', () => {
  const F = TIME_OFF_REQUEST_FIELD;
  const values = (policy: string, start: string, end: string | null) => ({
    [F.policy.blockId]: {
      [F.policy.actionId]: { type: 'static_select', selected_option: { value: policy } },
    },
    [F.start.blockId]: { [F.start.actionId]: { type: 'datepicker', selected_date: start } },
    [F.startPortion.blockId]: {
      [F.startPortion.actionId]: { type: 'static_select', selected_option: { value: 'morning' } },
    },
    [F.end.blockId]: { [F.end.actionId]: { type: 'datepicker', selected_date: end } },
    [F.endPortion.blockId]: {
      [F.endPortion.actionId]: { type: 'static_select', selected_option: { value: 'all_day' } },
    },
  });

  it('a one-day form takes the first day’s portion; a forged policy or portion is refused on its field', () => {
    expect(readRequestSubmission(values('holiday', '2026-12-03', null) as never, POLICIES)).toEqual({
      ok: true,
      value: {
        policyType: 'Holiday',
        startDate: '2026-12-03',
        endDate: '2026-12-03',
        startPortion: 'morning',
        endPortion: 'morning',
        description: '',
      },
    });
    const forged = values('Bonus days', '2026-12-03', null);
    (
      forged[F.endPortion.blockId]![F.endPortion.actionId] as { selected_option: { value: string } }
    ).selected_option.value = 'evening';
    const r = readRequestSubmission(forged as never, POLICIES);
    expect(r.ok).toBe(false);
    expect(!r.ok && Object.keys(r.errors).sort()).toEqual([F.endPortion.blockId, F.policy.blockId].sort());
  });
});

describe("/whosout's merge", () => {
  it('lists a request once, by HR id or by person and dates, and HR-only leave with the directory name', () => {
    const known = [
      {
        employeeHrId: '3',
        slackUserId: 'U0ANA',
        displayName: 'Ana Silva',
        policyType: 'Holiday',
        startDate: '2026-12-01',
        endDate: '2026-12-02',
        startPortion: 'all_day' as const,
        endPortion: 'all_day' as const,
        status: 'approved' as const,
        timeOffId: 'x',
        hrRequestId: '55',
      },
    ];
    const rows = mergeWhosOut(
      known,
      [
        {
          employeeId: '3',
          requestId: 55,
          startDate: '2026-12-01',
          endDate: '2026-12-02',
          status: 'approved',
        },
        { employeeId: '3', startDate: '2026-12-01', endDate: '2026-12-02', status: 'approved' },
        {
          employeeId: '4',
          requestId: 56,
          startDate: '2026-12-02',
          endDate: '2026-12-02',
          status: 'pending',
          policyTypeDisplayName: 'Sick',
          startPortion: 'afternoon',
        },
        { employeeId: '4', requestId: 56, startDate: '2026-12-02', endDate: '2026-12-02', status: 'pending' },
        {
          employeeId: '5',
          requestId: 57,
          startDate: '2026-12-02',
          endDate: '2026-12-02',
          status: 'canceled',
        },
      ],
      { slackUserOf: () => null, nameOf: (id) => (id === '4' ? 'Ben Okafor' : null) },
    );
    expect(rows).toHaveLength(2);
    expect(rows[1]).toMatchObject({
      displayName: 'Ben Okafor',
      policyType: 'Sick',
      status: 'requested',
      startPortion: 'afternoon',
      slackUserId: null,
    });
  });
});

describe('refusals', () => {
  const base = {
    commandId: 'c',
    code: 'SB_ILLEGAL_STATE',
    actor: 'U0BEN',
    inputId: 'i',
    rejectedAt: '2026-11-23T09:00:00.000Z',
  };
  it('read as the decider worded them, with an emoji by what went wrong; other lifecycles untouched', () => {
    expect(
      timeOffRejectionText({
        ...base,
        commandType: 'ApproveTimeOff',
        message: 'Only Dana Lee can approve or deny this request.',
        details: { reason: 'not_approver' },
      }),
    ).toEqual({ text: ':no_entry: Only Dana Lee can approve or deny this request.' });
    expect(
      timeOffRejectionText({
        ...base,
        code: 'SB_VALIDATION',
        commandType: 'DenyTimeOff',
        message: 'DenyTimeOff names no time-off request',
        details: { reason: 'unknown_request' },
      })?.text,
    ).toMatch(/^:mag: That doesn't name a time-off request/);
    expect(
      timeOffRejectionText({
        ...base,
        code: 'SB_UNMAPPED_USER',
        commandType: 'RequestTimeOff',
        message: 'HR has no manager for you.',
        details: {},
      }),
    ).toEqual({ text: ':bust_in_silhouette: HR has no manager for you.' });
    expect(
      timeOffRejectionText({ ...base, commandType: 'AcknowledgeIncident', message: 'x', details: {} }),
    ).toBeUndefined();
  });
});

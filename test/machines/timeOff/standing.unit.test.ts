import { describe, expect, it } from 'vitest';
import type { OwnLeave, TimeOffCommand } from '../../../machines/timeOff/commands.ts';
import { approvalSchedule, leavesOverlap, timeOffDecider } from '../../../machines/timeOff/decider.ts';
import type { TimeOffAsk, TimeOffEvent } from '../../../machines/timeOff/events.ts';
import { deciderSpec } from '../../support/deciderSpec.ts';

/**
 * Issue 20 item 6, "leave that cannot be wrong", in the decider: an ask overlapping the
 * requester's own leave is refused naming it; past days are refused unless the policy may be
 * recorded after the fact (then the request says so); expiry never falls after the leave's first day.
 */
const spec = deciderSpec(timeOffDecider);
const ID = '7d3c2a10-5b6e-4f8a-9c1d-2e3f4a5b6c7d';
const OTHER = '3f9a2c44-1111-4222-8333-444455556666';
const ANA = { hrId: '3332883884017713238', slackUserId: 'U0ANA', displayName: 'Ana Lima' };
const BEN = { hrId: '3332883884017713001', slackUserId: 'U0BEN', displayName: 'Ben Okafor' };
// Monday 23 November 2026, 10:00 UTC.
const T0 = '2026-11-23T10:00:00.000Z';

const ASK: TimeOffAsk = {
  policyType: 'Holiday',
  startDate: '2026-12-03',
  endDate: '2026-12-07',
  startPortion: 'all_day',
  endPortion: 'all_day',
  description: '',
};

const request = (
  ask: Partial<TimeOffAsk> = {},
  extra: Record<string, unknown> = {},
  now = T0,
): TimeOffCommand =>
  ({
    type: 'RequestTimeOff',
    data: {
      timeOffId: ID,
      ...ASK,
      ...ask,
      requester: ANA,
      approver: BEN,
      holidays: [],
      approvalRules: null,
      ...extra,
    },
    metadata: { commandId: 'cmd-request', now, actor: ANA.slackUserId },
  }) as TimeOffCommand;

const approvedHoliday: OwnLeave = {
  timeOffId: OTHER,
  hrRequestId: '4471',
  policyType: 'Holiday',
  startDate: '2026-12-01',
  endDate: '2026-12-04',
  startPortion: 'all_day',
  endPortion: 'all_day',
  status: 'approved',
};

/** Lisbon is UTC in winter: local days are UTC days. */
const dayOf = (today: string, first: string) => ({
  today,
  firstDayStartsAt: `${first}T00:00:00.000Z`,
  firstDayEndsAt: new Date(Date.parse(`${first}T00:00:00.000Z`) + 86_400_000).toISOString(),
});

const rejection = (command: TimeOffCommand): { reason: unknown; message: string } => {
  try {
    timeOffDecider.decide(command, timeOffDecider.initialState());
  } catch (e) {
    return { reason: (e as { details: { reason: unknown } }).details.reason, message: (e as Error).message };
  }
  throw new Error('not refused');
};

describe('an ask overlapping the requester’s own leave (issue 20)', () => {
  it('is refused, naming the leave: its days, Switchboard’s id with HR’s, and its state', () => {
    spec
      .given([])
      .when(request({}, { overlapping: [approvedHoliday] }))
      .then({
        code: 'SB_ILLEGAL_STATE',
        details: { reason: 'overlaps_own_leave', leave: { timeOffId: OTHER } },
      });
    const r = rejection(request({}, { overlapping: [approvedHoliday] }));
    expect(r.message).toContain('Holiday 2026-12-01 to 2026-12-04');
    expect(r.message).toContain('request `3f9a2c` · HR 4471, approved');
    expect(r.message).toContain('/timeoff cancel 3f9a2c');
  });

  it('names pending leave as waiting, and leave known only from HR by HR’s id', () => {
    const pending = { ...approvedHoliday, hrRequestId: null, status: 'requested' as const };
    expect(rejection(request({}, { overlapping: [pending] })).message).toContain(
      'request `3f9a2c`, waiting for approval',
    );
    const hrOnly = { ...approvedHoliday, timeOffId: null, hrRequestId: '9001' };
    const r = rejection(request({}, { overlapping: [hrOnly] }));
    expect(r.reason).toBe('overlaps_own_leave');
    expect(r.message).toContain('in HR as 9001, approved');
    expect(r.message).not.toContain('/timeoff cancel');
  });

  it('a morning and an afternoon of the same day do not overlap; a whole day and a half do', () => {
    const morning = {
      startDate: '2026-12-03',
      endDate: '2026-12-03',
      startPortion: 'morning',
      endPortion: 'morning',
    } as const;
    const afternoon = { ...morning, startPortion: 'afternoon', endPortion: 'afternoon' } as const;
    const whole = { ...morning, startPortion: 'all_day', endPortion: 'all_day' } as const;
    expect(leavesOverlap(morning, afternoon)).toBe(false);
    expect(leavesOverlap(whole, afternoon)).toBe(true);
    // Wed pm – Thu am and Thu pm – Fri: they meet at Thursday noon, no half day shared.
    expect(
      leavesOverlap(
        { startDate: '2026-12-02', endDate: '2026-12-03', startPortion: 'afternoon', endPortion: 'morning' },
        { startDate: '2026-12-03', endDate: '2026-12-04', startPortion: 'afternoon', endPortion: 'all_day' },
      ),
    ).toBe(false);
    const { events } = spec
      .given([])
      .when(
        request(
          {
            startDate: '2026-12-03',
            endDate: '2026-12-03',
            startPortion: 'afternoon',
            endPortion: 'afternoon',
          },
          { overlapping: [{ ...approvedHoliday, ...morning }] },
        ),
      )
      .events();
    expect(events.map((e) => e.type)).toEqual(['TimeOffRequested']);
  });
});

describe('past days (issue 20)', () => {
  it('a request starting before the requester’s today is refused when its policy is not recorded after the fact', () => {
    spec
      .given([])
      .when(
        request(
          { startDate: '2026-10-26', endDate: '2026-10-27' },
          { calendarDay: dayOf('2026-11-23', '2026-10-26'), pastAllowed: false },
        ),
      )
      .then({ code: 'SB_ILLEGAL_STATE', details: { reason: 'past_dates', today: '2026-11-23' } });
    expect(
      rejection(
        request(
          { startDate: '2026-10-26', endDate: '2026-10-27' },
          { calendarDay: dayOf('2026-11-23', '2026-10-26') },
        ),
      ).message,
    ).toContain('2026-10-26 is in the past (today is 2026-11-23 where you are)');
  });

  it('sick leave on past days is recorded after the fact, and expires by the rules alone', () => {
    const { events } = spec
      .given([])
      .when(
        request(
          { policyType: 'Sick', startDate: '2026-11-19', endDate: '2026-11-20' },
          { calendarDay: dayOf('2026-11-23', '2026-11-19'), pastAllowed: true },
        ),
      )
      .events();
    const requested = events[0] as Extract<TimeOffEvent, { type: 'TimeOffRequested' }>;
    expect(requested.data.afterTheFact).toBe(true);
    expect(requested.data.expiresAt).toBe('2026-12-02T10:00:00.000Z');
  });

  it('today is not the past: a request for today is asked as usual', () => {
    const { events } = spec
      .given([])
      .when(
        request(
          { startDate: '2026-11-23', endDate: '2026-11-23' },
          { calendarDay: dayOf('2026-11-23', '2026-11-23'), pastAllowed: false },
        ),
      )
      .events();
    expect(events.map((e) => e.type)).toEqual(['TimeOffRequested']);
    expect(
      (events[0] as Extract<TimeOffEvent, { type: 'TimeOffRequested' }>).data.afterTheFact,
    ).toBeUndefined();
  });
});

describe('expiry never falls after the leave’s first day (issue 20)', () => {
  it('a request for next Monday expires at the start of Monday in the requester’s zone, not after 7 working days', () => {
    // Asked Thursday 26 Nov for Monday 30 Nov in New York (UTC−5): Monday starts at 05:00 UTC.
    const { events } = spec
      .given([])
      .when(
        request(
          { startDate: '2026-11-30', endDate: '2026-11-30' },
          {
            calendarDay: {
              today: '2026-11-26',
              firstDayStartsAt: '2026-11-30T05:00:00.000Z',
              firstDayEndsAt: '2026-12-01T05:00:00.000Z',
            },
            zone: 'America/New_York',
          },
          '2026-11-26T15:00:00.000Z',
        ),
      )
      .events();
    const data = (events[0] as Extract<TimeOffEvent, { type: 'TimeOffRequested' }>).data;
    expect(data.expiresAt).toBe('2026-11-30T05:00:00.000Z');
    // Reminded Friday; the second reminder (Tuesday) would come after it expired: dropped.
    expect(data.remindAt).toEqual(['2026-11-27T15:00:00.000Z']);
  });

  it('a request for today expires at the end of today at the latest', () => {
    const s = approvalSchedule('2026-11-23T10:00:00.000Z', null, [], {
      firstDayStartsAt: '2026-11-23T00:00:00.000Z',
      firstDayEndsAt: '2026-11-24T00:00:00.000Z',
    });
    expect(s).toEqual({ remindAt: [], expiresAt: '2026-11-24T00:00:00.000Z' });
  });

  it('a request far ahead keeps the rules’ expiry', () => {
    const s = approvalSchedule('2026-11-23T10:00:00.000Z', null, [], {
      firstDayStartsAt: '2027-01-04T00:00:00.000Z',
      firstDayEndsAt: '2027-01-05T00:00:00.000Z',
    });
    expect(s.expiresAt).toBe('2026-12-02T10:00:00.000Z');
    expect(s.remindAt).toHaveLength(2);
  });
});

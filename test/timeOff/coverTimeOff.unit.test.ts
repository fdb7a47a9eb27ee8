import { describe, expect, it } from 'vitest';
import type { TimeOffCommand } from '../../machines/timeOff/commands.ts';
import { timeOffDecider } from '../../machines/timeOff/decider.ts';
import type { TimeOffAsk, TimeOffEvent } from '../../machines/timeOff/events.ts';
import { deciderSpec } from '../support/deciderSpec.ts';

/** The time-off request's side of issue 12: its on-call conflicts, Approve with cover, the cover's slots. */
const spec = deciderSpec(timeOffDecider);
const ID = '7d3c2a10-5b6e-4f8a-9c1d-2e3f4a5b6c7d';
const CHECK = `${ID}:conflicts:1`;
const ANA = { hrId: '3332883884017713238', slackUserId: 'U0ANA', displayName: 'Ana Silva' };
const DANA = { hrId: '3332883884017713001', slackUserId: 'U0DANA', displayName: 'Dana Lee' };
const SYSTEM = 'system:timeoff-cover-conflicts';
const T0 = '2026-11-23T10:00:00.000Z';
const T1 = '2026-11-23T10:00:05.000Z';
const ASK: TimeOffAsk = {
  policyType: 'Holiday',
  startDate: '2026-11-30',
  endDate: '2026-12-04',
  startPortion: 'all_day',
  endPortion: 'all_day',
  description: '',
};
const meta = (commandId: string, actor: string, now = T1) => ({ commandId, actor, now });
const requested: TimeOffEvent = {
  type: 'TimeOffRequested',
  data: {
    timeOffId: ID,
    ...ASK,
    requester: ANA,
    approver: DANA,
    workingDays: 5,
    remindAt: [],
    expiresAt: '2026-12-02T10:00:00.000Z',
    at: T0,
  },
};
const SHIFT = {
  scheduleId: 'PSCHPAY',
  scheduleName: 'Payments primary',
  escalationPolicyId: 'PEPPAY',
  escalationPolicyName: 'Payments',
  level: 1,
  start: '2026-11-30T00:00:00.000Z',
  end: '2026-12-05T00:00:00.000Z',
};
const BEN = { slackUserId: 'U0BEN', displayName: 'Ben Okafor', firstName: 'Ben', nightPages: 0 };
const found = { shifts: [SHIFT], knownUntil: '2026-12-05T00:00:00.000Z', candidates: [BEN], unmapped: false };
const record = (checkId = CHECK, data = found): TimeOffCommand => ({
  type: 'RecordTimeOffConflictsChecked',
  data: { timeOffId: ID, checkId, ...data },
  metadata: meta('c-checked', SYSTEM),
});
const checked: TimeOffEvent = {
  type: 'TimeOffConflictsChecked',
  data: { timeOffId: ID, checkId: CHECK, ...found, at: T1 },
};
const approveWith = (slackUserId: string | null, actor = DANA.slackUserId): TimeOffCommand => ({
  type: 'ApproveTimeOff',
  data: { timeOffId: ID, card: null, cover: slackUserId ? { slackUserId } : null },
  metadata: meta('c-approve', actor),
});

describe('issue 20: Approve and ask for cover', () => {
  it('records askForCover on the approval (a cover picked wins over it); plain Approve records neither', () => {
    const ask: TimeOffCommand = {
      type: 'ApproveTimeOff',
      data: { timeOffId: ID, card: null, askForCover: true },
      metadata: meta('c-approve', DANA.slackUserId),
    };
    const [approved] = spec.given([requested, checked]).when(ask).events().events;
    expect(approved?.type).toBe('TimeOffApproved');
    expect(approved?.data).toMatchObject({ askForCover: true });
    expect(approved?.data).not.toHaveProperty('cover');
    const [plain] = spec.given([requested, checked]).when(approveWith(null)).events().events;
    expect(plain?.data).not.toHaveProperty('askForCover');
  });
});

describe('on-call conflicts on a time-off request', () => {
  it('asks one lookup per version of the request and records its answer once', () => {
    const state = spec.given([requested]).when(record()).then([checked]);
    expect(state.context.conflicts?.shifts).toEqual([SHIFT]);
    expect(state.context.conflictCheck).toBeNull();
    spec.given([requested, checked]).when(record()).then([]);
    spec
      .given([requested])
      .when(record(`${ID}:conflicts:9`))
      .then([]);
  });

  it('a failed lookup waits for its retry; the last one gives up, said on the card', () => {
    const fail = (attempt: number, nextAttemptAt: string | null): TimeOffCommand => ({
      type: 'RecordTimeOffConflictsCheckFailed',
      data: {
        timeOffId: ID,
        requestId: CHECK,
        action: 'check_conflicts',
        attempt,
        maxAttempts: 2,
        code: 'SB_UPSTREAM_UNAVAILABLE',
        message: 'the incident service answered 503',
        nextAttemptAt,
      },
      metadata: meta(`c-fail-${attempt}`, SYSTEM),
    });
    const failed1: TimeOffEvent = {
      type: 'TimeOffConflictsCheckFailed',
      data: {
        timeOffId: ID,
        requestId: CHECK,
        action: 'check_conflicts',
        attempt: 1,
        maxAttempts: 2,
        code: 'SB_UPSTREAM_UNAVAILABLE',
        message: 'the incident service answered 503',
        nextAttemptAt: '2026-11-23T10:00:07.000Z',
        final: false,
        at: T1,
      },
    };
    const waiting = spec.given([requested]).when(fail(1, '2026-11-23T10:00:07.000Z')).then([failed1]);
    expect(waiting.context.conflictCheckFailure).toMatchObject({ final: false });
    const retried: TimeOffEvent = {
      type: 'TimeOffConflictsCheckRetried',
      data: { timeOffId: ID, requestId: CHECK, action: 'check_conflicts', attempt: 2, at: T1 },
    };
    spec
      .given([requested, failed1])
      .when({
        type: 'RetryTimeOffConflictsCheck',
        data: { timeOffId: ID, requestId: CHECK, action: 'check_conflicts', attempt: 2 },
        metadata: meta('c-retry', SYSTEM),
      })
      .then([retried]);
    const gaveUp = spec
      .given([requested, failed1, retried])
      .when(fail(2, null))
      .then([
        {
          ...failed1,
          data: { ...failed1.data, attempt: 2, nextAttemptAt: null, final: true },
        } as TimeOffEvent,
      ]);
    expect(gaveUp.context.conflictCheck).toBeNull();
    expect(gaveUp.context.conflictCheckFailure).toMatchObject({ final: true });
  });

  it('a request that ended records no more lookups', () => {
    const cancelled: TimeOffEvent = {
      type: 'TimeOffCancelled',
      data: { timeOffId: ID, cancelRequestId: null, by: 'requester', at: T1 },
    };
    spec.given([requested, cancelled]).when(record()).then([]);
  });
});

describe('Approve and cover with …', () => {
  it('approves and names the cover, whose stream is named after the command', () => {
    const state = spec
      .given([requested, checked])
      .when(approveWith('U0BEN'))
      .then([
        {
          type: 'TimeOffApproved',
          data: {
            timeOffId: ID,
            by: DANA,
            submitRequestId: 'c-approve',
            at: T1,
            cover: { coverId: 'c-approve', slackUserId: 'U0BEN' },
          },
        },
      ]);
    expect(state.context.cover).toEqual({
      coverId: 'c-approve',
      slackUserId: 'U0BEN',
      slots: null,
      withdrawn: false,
    });
  });

  it('a repeat of the same click is nothing new; a cover after a plain approval is refused, not dropped', () => {
    const approvedWithBen: TimeOffEvent = {
      type: 'TimeOffApproved',
      data: {
        timeOffId: ID,
        by: DANA,
        submitRequestId: 'c-approve',
        at: T1,
        cover: { coverId: 'c-approve', slackUserId: 'U0BEN' },
      },
    };
    spec.given([requested, checked, approvedWithBen]).when(approveWith('U0BEN')).then([]);
    const plain: TimeOffEvent = {
      type: 'TimeOffApproved',
      data: { timeOffId: ID, by: DANA, submitRequestId: 'c-approve', at: T1 },
    };
    spec
      .given([requested, checked, plain])
      .when(approveWith('U0BEN'))
      .then({ code: 'SB_ILLEGAL_STATE', details: { reason: 'already_decided' } });
    spec.given([requested, checked, plain]).when(approveWith(null)).then([]);
  });

  it('only the approver; not before conflicts are known or with none to cover; never the requester', () => {
    spec
      .given([requested, checked])
      .when(approveWith('U0BEN', 'U0CHEN'))
      .then({ code: 'SB_ILLEGAL_STATE', details: { reason: 'not_approver' } });
    spec
      .given([requested])
      .when(approveWith('U0BEN'))
      .then({ code: 'SB_ILLEGAL_STATE', details: { reason: 'nothing_to_cover' } });
    const direct: TimeOffEvent = {
      ...checked,
      data: { ...checked.data, shifts: [{ ...SHIFT, scheduleId: null, scheduleName: null }] },
    } as TimeOffEvent;
    spec
      .given([requested, direct])
      .when(approveWith('U0BEN'))
      .then({ code: 'SB_ILLEGAL_STATE', details: { reason: 'nothing_to_cover' } });
    spec
      .given([requested, checked])
      .when(approveWith('U0ANA'))
      .then({ code: 'SB_ILLEGAL_STATE', details: { reason: 'self_cover' } });
  });

  it('refuses a cover the enrich step found away during the shifts, in words', () => {
    const away: TimeOffCommand = {
      type: 'ApproveTimeOff',
      data: {
        timeOffId: ID,
        card: null,
        cover: {
          slackUserId: 'U0BEN',
          away: { name: 'Ben Okafor', why: 'Holiday, approved, until 2026-12-04' },
        },
      },
      metadata: meta('c-approve', DANA.slackUserId),
    };
    const given = spec.given([requested, checked]);
    given.when(away).then({ code: 'SB_ILLEGAL_STATE', details: { reason: 'cover_away', cover: 'U0BEN' } });
    expect(() => timeOffDecider.decide(away, given.state)).toThrow(
      'Ben Okafor is away during the shifts to cover (Holiday, approved, until 2026-12-04), so nothing was changed: pick someone else, or Approve and cover the shifts in the incident service.',
    );
    // Not away (or not looked up): approved with the cover.
    given.when(approveWith('U0BEN')).events();
  });

  it('records where the cover’s slots stand, once per change', () => {
    const approved: TimeOffEvent = {
      type: 'TimeOffApproved',
      data: {
        timeOffId: ID,
        by: DANA,
        submitRequestId: 'c-approve',
        at: T1,
        cover: { coverId: 'c-approve', slackUserId: 'U0BEN' },
      },
    };
    const slots = [
      { ...SHIFT, scheduleId: 'PSCHPAY', status: 'created' as const, overrideId: 'PO1', problem: null },
    ].map(({ escalationPolicyId: _a, escalationPolicyName: _b, level: _c, ...s }) => s);
    const command = (coverId = 'c-approve'): TimeOffCommand => ({
      type: 'RecordTimeOffCover',
      data: { timeOffId: ID, coverId, slots, withdrawn: false },
      metadata: meta('c-cover', 'system:timeoff-cover'),
    });
    const recorded: TimeOffEvent = {
      type: 'TimeOffCoverRecorded',
      data: { timeOffId: ID, coverId: 'c-approve', slots, withdrawn: false, at: T1 },
    };
    const state = spec.given([requested, checked, approved]).when(command()).then([recorded]);
    expect(state.context.cover?.slots).toEqual(slots);
    spec.given([requested, checked, approved, recorded]).when(command()).then([]);
    spec.given([requested, checked, approved]).when(command('another')).then([]);
  });
});

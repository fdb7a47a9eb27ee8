import { describe, expect, it } from 'vitest';
import type { TimeOffCommand } from '../../../machines/timeOff/commands.ts';
import { timeOffDecider, timeOffPhaseOf } from '../../../machines/timeOff/decider.ts';
import { hrChannelApprover, type TimeOffEvent } from '../../../machines/timeOff/events.ts';
import { handOnSweepDecider } from '../../../machines/timeOff/handOnSweep.ts';
import { deciderSpec } from '../../support/deciderSpec.ts';

/** Issue 12: handing a waiting request on, the HR channel's members deciding, a leaver's cancel. */
const spec = deciderSpec(timeOffDecider);
const ID = '7d3c2a10-5b6e-4f8a-9c1d-2e3f4a5b6c7d';
const ANA = { hrId: '3', slackUserId: 'U0ANA', displayName: 'Ana Silva' };
const DANA = { hrId: '2', slackUserId: 'U0DANA', displayName: 'Dana Lee' };
const FRANK = { hrId: '1', slackUserId: 'U0FRANK', displayName: 'Frank Moreau' };
const HR = hrChannelApprover('C0PEOPLE');
const SYSTEM = 'system:timeoff-hand-on';
const T0 = '2026-11-23T10:00:00.000Z';
const T1 = '2026-11-24T00:00:00.000Z';
const T2 = '2026-11-24T09:00:00.000Z';
const CARD = { channel: 'D0DANA', ts: '1763892000.000100' };
const CARD2 = { channel: 'D0FRANK', ts: '1763942400.000100' };

const meta = (commandId: string, now: string, actor: string) => ({ commandId, now, actor });

const requested: TimeOffEvent = {
  type: 'TimeOffRequested',
  data: {
    timeOffId: ID,
    policyType: 'Holiday',
    startDate: '2026-12-03',
    endDate: '2026-12-07',
    startPortion: 'all_day',
    endPortion: 'all_day',
    description: '',
    requester: ANA,
    approver: DANA,
    workingDays: 3,
    remindAt: ['2026-11-24T10:00:00.000Z'],
    expiresAt: '2026-12-02T10:00:00.000Z',
    at: T0,
  },
};
const asked: TimeOffEvent = { type: 'TimeOffApprovalAsked', data: { timeOffId: ID, card: CARD, at: T0 } };
const skipDana = {
  hrId: '2',
  slackUserId: 'U0DANA',
  displayName: 'Dana Lee',
  reason: 'away' as const,
  until: '2026-12-04',
};

const handOn = (to = FRANK, actor = SYSTEM): TimeOffCommand => ({
  type: 'HandOnTimeOff',
  data: { timeOffId: ID, to, reason: 'away', until: '2026-12-04', skipped: [skipDana] },
  metadata: meta('cmd-hand-on', T1, actor),
});
const handedOn = (to = FRANK): TimeOffEvent => ({
  type: 'TimeOffHandedOn',
  data: { timeOffId: ID, from: DANA, to, reason: 'away', until: '2026-12-04', skipped: [skipDana], at: T1 },
});
const approve = (
  actor: string,
  card: typeof CARD | null,
  asHr?: { channel: string; by: typeof ANA },
): TimeOffCommand => ({
  type: 'ApproveTimeOff',
  data: { timeOffId: ID, card, ...(asHr ? { asHr } : {}) },
  metadata: meta(`cmd-approve-${actor}`, T2, actor),
});

describe('time off: handing a waiting request on (issue 12)', () => {
  it('hands it on from the away approver; the new approver decides, a click on the old card is refused', () => {
    const state = spec.given([requested, asked]).when(handOn()).then([handedOn()]);
    expect(timeOffPhaseOf(state)).toBe('requested');
    expect(state.context.request?.approver).toEqual(FRANK);
    expect(state.context.card).toBeNull();
    expect(state.context.staleCards).toEqual([CARD]);
    // Dana's old card: she is told it was handed on, and it is recorded as a refusal.
    spec
      .given([requested, asked, handedOn()])
      .when(approve(DANA.slackUserId, CARD))
      .then({ code: 'SB_ILLEGAL_STATE', details: { reason: 'not_approver', handedOn: true } });
    // Frank's new card decides.
    const frankCard: TimeOffEvent = {
      type: 'TimeOffApprovalAsked',
      data: { timeOffId: ID, card: CARD2, at: T1 },
    };
    spec
      .given([requested, asked, handedOn(), frankCard])
      .when(approve(FRANK.slackUserId, CARD2))
      .then([
        {
          type: 'TimeOffApproved',
          data: { timeOffId: ID, by: FRANK, submitRequestId: `cmd-approve-${FRANK.slackUserId}`, at: T2 },
        },
      ]);
    // Frank clicking the old card (if he could see it) is refused as another card.
    spec
      .given([requested, asked, handedOn(), frankCard])
      .when(approve(FRANK.slackUserId, CARD))
      .then({ code: 'SB_ILLEGAL_STATE', details: { reason: 'other_card' } });
  });

  it('does not record a card posted to the old approver after it was handed on', () => {
    const record = (card: typeof CARD, postedTo: string): TimeOffCommand => ({
      type: 'RecordTimeOffApprovalAsked',
      data: { timeOffId: ID, card, postedTo },
      metadata: meta(`cmd-asked-${postedTo}`, T1, 'system:timeoff-notices'),
    });
    spec.given([requested, handedOn()]).when(record(CARD, DANA.slackUserId)).then([]);
    spec
      .given([requested, handedOn()])
      .when(record(CARD2, FRANK.slackUserId))
      .then([{ type: 'TimeOffApprovalAsked', data: { timeOffId: ID, card: CARD2, at: T1 } }]);
  });

  it('hands nothing on once decided, nor to the same approver, and never from a person', () => {
    const approved: TimeOffEvent = {
      type: 'TimeOffApproved',
      data: { timeOffId: ID, by: DANA, submitRequestId: 'x', at: T0 },
    };
    spec.given([requested, asked, approved]).when(handOn()).then([]);
    spec.given([requested, asked, handedOn()]).when(handOn()).then([]);
    spec.given([requested, asked]).when(handOn(FRANK, 'U0FRANK')).then({ code: 'SB_ILLEGAL_STATE' });
    spec
      .given([requested, asked])
      .when(handOn(ANA))
      .then({ code: 'SB_ILLEGAL_STATE', details: { reason: 'self_approval' } });
  });

  it('in the HR channel only a member the edge vouched for decides, and becomes the approver', () => {
    const toHr = handedOn(HR);
    const vouched = { channel: 'C0PEOPLE', by: FRANK };
    spec
      .given([requested, asked, toHr])
      .when(approve(FRANK.slackUserId, null))
      .then({ code: 'SB_ILLEGAL_STATE', details: { reason: 'not_approver' } });
    // A vouch for someone else, or for another channel, is refused.
    spec
      .given([requested, asked, toHr])
      .when(approve('U0BEN', null, vouched))
      .then({ code: 'SB_ILLEGAL_STATE', details: { reason: 'not_approver' } });
    spec
      .given([requested, asked, toHr])
      .when(approve(FRANK.slackUserId, null, { channel: 'C0OTHER', by: FRANK }))
      .then({ code: 'SB_ILLEGAL_STATE', details: { reason: 'not_approver' } });
    // The requester, even a member, cannot.
    spec
      .given([requested, asked, toHr])
      .when(approve(ANA.slackUserId, null, { channel: 'C0PEOPLE', by: ANA }))
      .then({ code: 'SB_ILLEGAL_STATE', details: { reason: 'own_request' } });
    const state = spec
      .given([requested, asked, toHr])
      .when(approve(FRANK.slackUserId, null, vouched))
      .then([
        {
          type: 'TimeOffApproved',
          data: { timeOffId: ID, by: FRANK, submitRequestId: `cmd-approve-${FRANK.slackUserId}`, at: T2 },
        },
      ]);
    // HR is given the member who decided as approver.
    expect(state.context.request?.approver).toEqual(FRANK);
  });

  it("cancels a leaver's waiting request (the event says why), leaves approved leave alone", () => {
    const cancelOfLeaver = (actor = SYSTEM): TimeOffCommand => ({
      type: 'CancelTimeOffOfLeaver',
      data: { timeOffId: ID },
      metadata: meta('cmd-leaver', T1, actor),
    });
    const state = spec
      .given([requested, asked])
      .when(cancelOfLeaver())
      .then([
        { type: 'TimeOffCancelled', data: { timeOffId: ID, cancelRequestId: null, by: 'left', at: T1 } },
      ]);
    expect(timeOffPhaseOf(state)).toBe('cancelled');
    const approved: TimeOffEvent = {
      type: 'TimeOffApproved',
      data: { timeOffId: ID, by: DANA, submitRequestId: 'x', at: T0 },
    };
    spec.given([requested, asked, approved]).when(cancelOfLeaver()).then([]);
    spec.given([requested, asked]).when(cancelOfLeaver('U0DANA')).then({ code: 'SB_ILLEGAL_STATE' });
  });
});

describe('time off: an approver gone with nobody to take over', () => {
  it('is recorded once per approver, only while the request waits, only by Switchboard', () => {
    const gone = (actor = SYSTEM): TimeOffCommand => ({
      type: 'RecordTimeOffApproverGone',
      data: { timeOffId: ID },
      metadata: meta('cmd-gone', T1, actor),
    });
    const event: TimeOffEvent = {
      type: 'TimeOffApproverGone',
      data: { timeOffId: ID, approver: DANA, at: T1 },
    };
    const state = spec.given([requested, asked]).when(gone()).then([event]);
    expect(timeOffPhaseOf(state)).toBe('awaitingApproval');
    spec.given([requested, asked, event]).when(gone()).then([]);
    // Handed on to Frank, who leaves too: told again, about Frank.
    spec
      .given([requested, asked, event, handedOn()])
      .when(gone())
      .then([{ type: 'TimeOffApproverGone', data: { timeOffId: ID, approver: FRANK, at: T1 } }]);
    spec.given([requested, asked]).when(gone('U0ANA')).then({ code: 'SB_ILLEGAL_STATE' });
  });
});

describe('time off: the daily approver sweep', () => {
  const sweeps = deciderSpec(handOnSweepDecider);
  const sweep = (now: string): Parameters<typeof handOnSweepDecider.decide>[0] => ({
    type: 'SweepTimeOffApprovers',
    data: { day: '2026-11-24' },
    metadata: meta('cmd-sweep', now, 'system:scheduler'),
  });
  it('sweeps once per day, not before the day starts', () => {
    sweeps
      .given([])
      .when(sweep(T1))
      .then([{ type: 'TimeOffApproversSwept', data: { day: '2026-11-24', at: T1 } }]);
    sweeps
      .given([{ type: 'TimeOffApproversSwept', data: { day: '2026-11-24', at: T1 } }])
      .when(sweep(T2))
      .then([]);
    sweeps
      .given([])
      .when(sweep(T0))
      .then({ code: 'SB_ILLEGAL_STATE', details: { reason: 'not_due' } });
  });
});

import { describe, expect, it } from 'vitest';
import type { TimeOffCommand } from '../../../machines/timeOff/commands.ts';
import { approvalSchedule, timeOffDecider, timeOffPhaseOf } from '../../../machines/timeOff/decider.ts';
import type { TimeOffAsk, TimeOffEvent } from '../../../machines/timeOff/events.ts';
import { parseTimeOffRequestId, timeOffStreamId } from '../../../machines/timeOff/streams.ts';
import { deciderSpec } from '../../support/deciderSpec.ts';

const spec = deciderSpec(timeOffDecider);
const ID = '7d3c2a10-5b6e-4f8a-9c1d-2e3f4a5b6c7d';
const ANA = { hrId: '3332883884017713238', slackUserId: 'U0ANA', displayName: 'Ana Lima' };
const BEN = { hrId: '3332883884017713001', slackUserId: 'U0BEN', displayName: 'Ben Okafor' };
const EVE = 'U0EVE';
const SYSTEM = 'system:timeoff-hr';
// Monday 23 November 2026, 10:00 UTC.
const T0 = '2026-11-23T10:00:00.000Z';
const CARD = { channel: 'D0BEN', ts: '1763892000.000100' };

const meta = (commandId: string, now = T0, actor = ANA.slackUserId) => ({ commandId, now, actor });

const ASK: TimeOffAsk = {
  policyType: 'Holiday',
  startDate: '2026-12-03',
  endDate: '2026-12-07',
  startPortion: 'all_day',
  endPortion: 'all_day',
  description: 'Family visit',
};

const request = (
  ask: Partial<TimeOffAsk> = {},
  extra: Partial<TimeOffCommand['data']> = {},
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
    metadata: meta('cmd-request'),
  }) as TimeOffCommand;

// Thu 3, Fri 4, Mon 7 December: 3 working days. Reminders Tue 24 and Thu 26 Nov, expiry Wed 2 Dec.
const requested: TimeOffEvent = {
  type: 'TimeOffRequested',
  data: {
    timeOffId: ID,
    ...ASK,
    requester: ANA,
    approver: BEN,
    workingDays: 3,
    remindAt: ['2026-11-24T10:00:00.000Z', '2026-11-26T10:00:00.000Z'],
    expiresAt: '2026-12-02T10:00:00.000Z',
    at: T0,
  },
};
const asked: TimeOffEvent = { type: 'TimeOffApprovalAsked', data: { timeOffId: ID, card: CARD, at: T0 } };
const T1 = '2026-11-23T11:00:00.000Z';
const approve = (
  actor = BEN.slackUserId,
  card: typeof CARD | null = CARD,
  commandId = 'cmd-approve',
): TimeOffCommand => ({
  type: 'ApproveTimeOff',
  data: { timeOffId: ID, card },
  metadata: meta(commandId, T1, actor),
});
const deny = (
  reason: string | null,
  actor = BEN.slackUserId,
  card: typeof CARD | null = CARD,
): TimeOffCommand => ({
  type: 'DenyTimeOff',
  data: { timeOffId: ID, card, reason },
  metadata: meta('cmd-deny', T1, actor),
});
const approved: TimeOffEvent = {
  type: 'TimeOffApproved',
  data: { timeOffId: ID, by: BEN, submitRequestId: 'cmd-approve', at: T1 },
};
const T2 = '2026-11-23T11:00:02.000Z';
const submitted: TimeOffEvent = {
  type: 'TimeOffSubmitted',
  data: {
    timeOffId: ID,
    submitRequestId: 'cmd-approve',
    hrRequestId: 'hr-991',
    readBackRequestId: 'cmd-submitted',
    at: T2,
  },
};
const recordSubmitted = (submitRequestId = 'cmd-approve'): TimeOffCommand => ({
  type: 'RecordTimeOffSubmitted',
  data: { timeOffId: ID, submitRequestId, hrRequestId: 'hr-991' },
  metadata: meta('cmd-submitted', T2, SYSTEM),
});
const T3 = '2026-11-23T11:00:25.000Z';
const confirmed: TimeOffEvent = {
  type: 'TimeOffConfirmed',
  data: { timeOffId: ID, readBackRequestId: 'cmd-submitted', hrStatus: 'approved', at: T3 },
};
const cancel = (actor = ANA.slackUserId, now = T3): TimeOffCommand => ({
  type: 'CancelTimeOff',
  data: { timeOffId: ID },
  metadata: meta('cmd-cancel', now, actor),
});
const failed = (
  action: 'submit' | 'read_back' | 'cancel',
  requestId: string,
  nextAttemptAt: string | null,
  message = 'HR answered 503',
) =>
  ({
    type: 'RecordTimeOffUpstreamCallFailed',
    data: {
      timeOffId: ID,
      requestId,
      action,
      attempt: 1,
      maxAttempts: 5,
      code: 'SB_UPSTREAM_UNAVAILABLE',
      message,
      nextAttemptAt,
    },
    metadata: meta(`fail-${requestId}`, T2, SYSTEM),
  }) as TimeOffCommand;

const phaseAfter = (history: TimeOffEvent[]) => timeOffPhaseOf(spec.given(history).state);

describe('time off: requesting', () => {
  it('records the request with its working days and the approval schedule (1 and 3 working days, expiry after 7)', () => {
    const state = spec.given([]).when(request()).then([requested]);
    expect(timeOffPhaseOf(state)).toBe('requested');
  });

  it('counts holidays out of the working days and pushes reminders past them', () => {
    const { events } = spec
      .given([])
      .when(
        request(
          {},
          {
            holidays: ['2026-11-24', '2026-12-04'],
            approvalRules: { reminderWorkingDays: [2], expiryWorkingDays: 4 },
          },
        ),
      )
      .events();
    expect(events[0]?.data).toMatchObject({
      workingDays: 2,
      remindAt: ['2026-11-26T10:00:00.000Z'],
      expiresAt: '2026-11-30T10:00:00.000Z',
    });
  });

  it('counts half days at either end', () => {
    const { events } = spec
      .given([])
      .when(request({ startPortion: 'afternoon', endPortion: 'morning' }))
      .events();
    expect(events[0]?.data).toMatchObject({ workingDays: 2 });
  });

  it.each([
    [{ startDate: '2026-12-07', endDate: '2026-12-03' }, 'invalid_dates'],
    [{ startDate: '2026-02-30', endDate: '2026-03-02' }, 'invalid_dates'],
    [{ startDate: '2026-12-05', endDate: '2026-12-06' }, 'no_working_days'],
    [{ startPortion: 'morning' as const }, 'invalid_portion'],
    [{ endPortion: 'afternoon' as const }, 'invalid_portion'],
    [
      {
        startDate: '2026-12-03',
        endDate: '2026-12-03',
        startPortion: 'morning' as const,
        endPortion: 'all_day' as const,
      },
      'invalid_portion',
    ],
  ])('refuses %o (%s)', (ask, reason) => {
    spec.given([]).when(request(ask)).then({ code: 'SB_ILLEGAL_STATE', details: { reason } });
  });

  it('refuses a request made for someone else', () => {
    const command = { ...request(), metadata: meta('cmd-request', T0, EVE) };
    spec
      .given([])
      .when(command)
      .then({ code: 'SB_ILLEGAL_STATE', details: { reason: 'not_requester' } });
  });

  it('refuses a request whose approver is the requester', () => {
    spec
      .given([])
      .when(request({}, { approver: ANA }))
      .then({ code: 'SB_ILLEGAL_STATE', details: { reason: 'self_approval' } });
  });

  it('records a redelivered request once; a different ask on the same id is refused', () => {
    spec.given([requested]).when(request()).then([]);
    spec
      .given([requested])
      .when(request({ policyType: 'Sick' }))
      .then({ code: 'SB_ILLEGAL_STATE', details: { reason: 'already_requested' } });
  });

  it('records the approver’s card once', () => {
    const record: TimeOffCommand = {
      type: 'RecordTimeOffApprovalAsked',
      data: { timeOffId: ID, card: CARD },
      metadata: meta('cmd-card', T0, SYSTEM),
    };
    expect(timeOffPhaseOf(spec.given([requested]).when(record).then([asked]))).toBe('awaitingApproval');
    spec.given([requested, asked]).when(record).then([]);
  });
});

describe('time off: approving and denying', () => {
  it('the approver approves from their DM: the submission to HR is requested', () => {
    const state = spec.given([requested, asked]).when(approve()).then([approved]);
    expect(timeOffPhaseOf(state)).toBe('approved');
    expect(state.context.requests).toEqual([
      {
        requestId: 'cmd-approve',
        action: 'submit',
        attempt: 1,
        failedAttempts: 0,
        nextAttemptAt: null,
        hrRequestId: null,
      },
    ]);
  });

  it('a click that beats the recording of its card is checked by person only', () => {
    spec.given([requested]).when(approve()).then([approved]);
  });

  it('after a resubmission that changed the dates, the approver decides again on a new card', () => {
    const failedEvent: TimeOffEvent = {
      type: 'TimeOffSubmissionFailed',
      data: { timeOffId: ID, submitRequestId: 'cmd-approve', reason: 'overlaps', at: T2 },
    };
    const resubmitted: TimeOffEvent = {
      type: 'TimeOffResubmitted',
      data: {
        timeOffId: ID,
        ...ASK,
        endDate: '2026-12-08',
        workingDays: 4,
        reapproval: true,
        submitRequestId: null,
        remindAt: ['2026-11-24T11:00:25.000Z'],
        expiresAt: '2026-12-02T11:00:25.000Z',
        at: T3,
      },
    };
    const history = [requested, asked, approved, failedEvent, resubmitted];
    spec
      .given(history)
      .when(approve())
      .then({ code: 'SB_ILLEGAL_STATE', details: { reason: 'other_card' } });
    const newCard = { channel: 'D0BEN', ts: '1763899000.000300' };
    const askedAgain: TimeOffEvent = {
      type: 'TimeOffApprovalAsked',
      data: { timeOffId: ID, card: newCard, at: T3 },
    };
    const state = spec
      .given([...history, askedAgain])
      .when(approve(BEN.slackUserId, newCard, 'cmd-approve-2'))
      .then([
        {
          type: 'TimeOffApproved',
          data: { timeOffId: ID, by: BEN, submitRequestId: 'cmd-approve-2', at: T1 },
        },
      ]);
    expect(state.context.request).toMatchObject({ endDate: '2026-12-08', workingDays: 4 });
    expect(state.context.requests.map((r) => r.requestId)).toEqual(['cmd-approve-2']);
  });

  it('the approver approves from App Home (no card): only the person is checked', () => {
    spec.given([requested, asked]).when(approve(BEN.slackUserId, null)).then([approved]);
  });

  it('a second Approve click changes nothing', () => {
    spec
      .given([requested, asked, approved])
      .when(approve(BEN.slackUserId, CARD, 'cmd-approve-2'))
      .then([]);
  });

  it('the requester cannot approve or deny their own request', () => {
    spec
      .given([requested, asked])
      .when(approve(ANA.slackUserId))
      .then({ code: 'SB_ILLEGAL_STATE', details: { reason: 'own_request', actor: ANA.slackUserId } });
    spec
      .given([requested, asked])
      .when(deny(null, ANA.slackUserId))
      .then({ code: 'SB_ILLEGAL_STATE', details: { reason: 'own_request' } });
  });

  it('someone other than the approver is refused', () => {
    spec
      .given([requested, asked])
      .when(approve(EVE))
      .then({ code: 'SB_ILLEGAL_STATE', details: { reason: 'not_approver', actor: EVE } });
    spec
      .given([requested, asked])
      .when(deny('no', EVE))
      .then({ code: 'SB_ILLEGAL_STATE', details: { reason: 'not_approver' } });
  });

  it('a click on another request’s card naming this request is refused', () => {
    const other = { channel: 'D0BEN', ts: '1763892999.000200' };
    spec
      .given([requested, asked])
      .when(approve(BEN.slackUserId, other))
      .then({ code: 'SB_ILLEGAL_STATE', details: { reason: 'other_card' } });
  });

  it('a forged request id (no such request) is refused', () => {
    spec
      .given([])
      .when(approve())
      .then({ code: 'SB_ILLEGAL_STATE', details: { reason: 'unknown_request' } });
    spec
      .given([])
      .when(cancel())
      .then({ code: 'SB_ILLEGAL_STATE', details: { reason: 'unknown_request' } });
  });

  it('a click naming another request id than the stream’s is refused', () => {
    const command: TimeOffCommand = {
      type: 'ApproveTimeOff',
      data: { timeOffId: 'e1e2e3e4-0000-4000-8000-000000000000', card: CARD },
      metadata: meta('x', T1, BEN.slackUserId),
    };
    spec
      .given([requested, asked])
      .when(command)
      .then({ code: 'SB_ILLEGAL_STATE', details: { reason: 'unknown_request' } });
  });

  it('deny with a reason keeps the reason; an empty reason is none', () => {
    const state = spec
      .given([requested, asked])
      .when(deny('  Release week, sorry  '))
      .then([
        { type: 'TimeOffDenied', data: { timeOffId: ID, by: BEN, reason: 'Release week, sorry', at: T1 } },
      ]);
    expect(timeOffPhaseOf(state)).toBe('denied');
    spec
      .given([requested, asked])
      .when(deny('   '))
      .then([{ type: 'TimeOffDenied', data: { timeOffId: ID, by: BEN, reason: null, at: T1 } }]);
  });

  it('a request already decided, expired or cancelled cannot be decided again', () => {
    const denied: TimeOffEvent = {
      type: 'TimeOffDenied',
      data: { timeOffId: ID, by: BEN, reason: null, at: T1 },
    };
    spec
      .given([requested, asked, denied])
      .when(approve())
      .then({ code: 'SB_ILLEGAL_STATE', details: { reason: 'already_decided' } });
    spec
      .given([requested, asked, approved])
      .when(deny(null))
      .then({ code: 'SB_ILLEGAL_STATE', details: { reason: 'already_decided' } });
    const expired: TimeOffEvent = {
      type: 'TimeOffExpired',
      data: { timeOffId: ID, at: '2026-12-02T10:00:00.000Z' },
    };
    spec
      .given([requested, asked, expired])
      .when(approve())
      .then({ code: 'SB_ILLEGAL_STATE', details: { reason: 'expired' } });
    const cancelled: TimeOffEvent = {
      type: 'TimeOffCancelled',
      data: { timeOffId: ID, cancelRequestId: null, by: 'requester', at: T1 },
    };
    spec
      .given([requested, asked, cancelled])
      .when(approve())
      .then({ code: 'SB_ILLEGAL_STATE', details: { reason: 'cancelled' } });
  });
});

describe('time off: reminders and expiry', () => {
  const remind = (reminder: number, now: string): TimeOffCommand => ({
    type: 'RemindTimeOffApprover',
    data: { timeOffId: ID, reminder },
    metadata: meta(`remind-${reminder}`, now, 'system:scheduler'),
  });
  const expire = (now: string): TimeOffCommand => ({
    type: 'ExpireTimeOff',
    data: { timeOffId: ID },
    metadata: meta('expire', now, 'system:scheduler'),
  });

  it('reminds the approver after 1 then 3 working days, each once and in order', () => {
    const r1: TimeOffEvent = {
      type: 'TimeOffApproverReminded',
      data: { timeOffId: ID, reminder: 1, at: '2026-11-24T10:00:00.000Z' },
    };
    spec.given([requested, asked]).when(remind(1, '2026-11-24T10:00:00.000Z')).then([r1]);
    spec.given([requested, asked, r1]).when(remind(1, '2026-11-24T10:00:05.000Z')).then([]);
    spec.given([requested, asked]).when(remind(2, '2026-11-26T10:00:00.000Z')).then([]);
    spec
      .given([requested, asked, r1])
      .when(remind(2, '2026-11-26T10:00:00.000Z'))
      .then([
        {
          type: 'TimeOffApproverReminded',
          data: { timeOffId: ID, reminder: 2, at: '2026-11-26T10:00:00.000Z' },
        },
      ]);
  });

  it('refuses a reminder before it is due, and reminds nobody once decided', () => {
    spec
      .given([requested, asked])
      .when(remind(1, '2026-11-24T09:59:59.000Z'))
      .then({ code: 'SB_ILLEGAL_STATE', details: { reason: 'not_due' } });
    spec.given([requested, asked, approved]).when(remind(1, '2026-11-24T10:00:00.000Z')).then([]);
  });

  it('expires after 7 working days unless decided', () => {
    const at = '2026-12-02T10:00:00.000Z';
    const state = spec
      .given([requested, asked])
      .when(expire(at))
      .then([{ type: 'TimeOffExpired', data: { timeOffId: ID, at } }]);
    expect(timeOffPhaseOf(state)).toBe('expired');
    spec
      .given([requested, asked])
      .when(expire('2026-12-02T09:59:00.000Z'))
      .then({ code: 'SB_ILLEGAL_STATE', details: { reason: 'not_due' } });
    spec.given([requested, asked, approved]).when(expire(at)).then([]);
  });

  it('the schedule skips weekends: a Friday request is reminded on Monday', () => {
    expect(approvalSchedule('2026-11-27T16:00:00.000Z', null, [])).toEqual({
      remindAt: ['2026-11-30T16:00:00.000Z', '2026-12-02T16:00:00.000Z'],
      expiresAt: '2026-12-08T16:00:00.000Z',
    });
  });
});

describe('time off: recording in HR', () => {
  it('HR accepts the submission: its id is kept and the read-back is requested', () => {
    const state = spec.given([requested, asked, approved]).when(recordSubmitted()).then([submitted]);
    expect(timeOffPhaseOf(state)).toBe('submitted');
    expect(state.context.requests.map((r) => [r.action, r.hrRequestId])).toEqual([['read_back', 'hr-991']]);
  });

  it('an answer to a submission that is not pending changes nothing', () => {
    spec.given([requested, asked, approved, submitted]).when(recordSubmitted()).then([]);
    spec.given([requested, asked, approved]).when(recordSubmitted('forged')).then([]);
  });

  it('the read-back within the lag confirms it; a read-back not yet visible is retried', () => {
    const readBack: TimeOffCommand = {
      type: 'RecordTimeOffReadBack',
      data: { timeOffId: ID, readBackRequestId: 'cmd-submitted', hrStatus: 'approved' },
      metadata: meta('cmd-read', T3, SYSTEM),
    };
    expect(
      timeOffPhaseOf(spec.given([requested, asked, approved, submitted]).when(readBack).then([confirmed])),
    ).toBe('confirmed');
    const notYet = failed('read_back', 'cmd-submitted', '2026-11-23T11:00:07.000Z', 'not visible yet');
    const { events, state } = spec.given([requested, asked, approved, submitted]).when(notYet).events();
    expect(events.map((e) => e.type)).toEqual(['TimeOffUpstreamCallFailed']);
    expect(timeOffPhaseOf(state)).toBe('submitted');
    const retried: TimeOffCommand = {
      type: 'RetryTimeOffUpstreamCall',
      data: { timeOffId: ID, requestId: 'cmd-submitted', action: 'read_back', attempt: 2 },
      metadata: meta('retry', '2026-11-23T11:00:07.000Z', 'system:scheduler'),
    };
    spec
      .given([requested, asked, approved, submitted, ...events])
      .when(retried)
      .then([
        {
          type: 'TimeOffUpstreamCallRetried',
          data: {
            requestId: 'cmd-submitted',
            action: 'read_back',
            attempt: 2,
            at: '2026-11-23T11:00:07.000Z',
          },
        },
      ]);
  });

  it('HR refusing the submission (400) keeps the reason in words; the requester resubmits a fixed policy without a new approval', () => {
    const rejected: TimeOffCommand = {
      type: 'RecordTimeOffSubmissionRejected',
      data: {
        timeOffId: ID,
        submitRequestId: 'cmd-approve',
        reason: 'Policy type "Holliday" does not exist',
      },
      metadata: meta('cmd-rejected', T2, SYSTEM),
    };
    const failedEvent: TimeOffEvent = {
      type: 'TimeOffSubmissionFailed',
      data: {
        timeOffId: ID,
        submitRequestId: 'cmd-approve',
        reason: 'Policy type "Holliday" does not exist',
        at: T2,
      },
    };
    const state = spec.given([requested, asked, approved]).when(rejected).then([failedEvent]);
    expect(timeOffPhaseOf(state)).toBe('submissionFailed');
    expect(state.context.failure).toBe('Policy type "Holliday" does not exist');

    const resubmit = (ask: Partial<TimeOffAsk>, actor = ANA.slackUserId): TimeOffCommand => ({
      type: 'ResubmitTimeOff',
      data: { timeOffId: ID, ...ASK, ...ask, holidays: [], approvalRules: null },
      metadata: meta('cmd-resubmit', T3, actor),
    });
    const same = spec
      .given([requested, asked, approved, failedEvent])
      .when(resubmit({ policyType: 'Vacation' }))
      .events();
    expect(same.events).toEqual([
      {
        type: 'TimeOffResubmitted',
        data: {
          timeOffId: ID,
          ...ASK,
          policyType: 'Vacation',
          workingDays: 3,
          reapproval: false,
          submitRequestId: 'cmd-resubmit',
          remindAt: requested.data.remindAt,
          expiresAt: (requested as Extract<TimeOffEvent, { type: 'TimeOffRequested' }>).data.expiresAt,
          at: T3,
        },
      },
    ]);
    expect(timeOffPhaseOf(same.state)).toBe('approved');
    expect(same.state.context.requests.map((r) => r.requestId)).toEqual(['cmd-resubmit']);

    const moved = spec
      .given([requested, asked, approved, failedEvent])
      .when(resubmit({ endDate: '2026-12-08' }))
      .events();
    expect(moved.events[0]?.data).toMatchObject({ reapproval: true, submitRequestId: null, workingDays: 4 });
    expect(timeOffPhaseOf(moved.state)).toBe('requested');
    expect(moved.state.context.card).toBeNull();

    spec
      .given([requested, asked, approved, failedEvent])
      .when(resubmit({}, BEN.slackUserId))
      .then({ code: 'SB_ILLEGAL_STATE', details: { reason: 'not_requester' } });
    spec
      .given([requested, asked, approved, submitted])
      .when(resubmit({}))
      .then({ code: 'SB_ILLEGAL_STATE', details: { reason: 'nothing_to_resubmit' } });
  });

  it('a submission HR could not take after every attempt fails in words, and can be sent again', () => {
    const { events, state } = spec
      .given([requested, asked, approved])
      .when(failed('submit', 'cmd-approve', null, 'HR answered 503'))
      .events();
    expect(events.map((e) => e.type)).toEqual(['TimeOffUpstreamCallFailed', 'TimeOffSubmissionFailed']);
    expect(events[1]?.data).toMatchObject({ reason: expect.stringContaining('HR could not be reached') });
    expect(timeOffPhaseOf(state)).toBe('submissionFailed');
  });

  it('a retryable submit failure waits for its retry', () => {
    const { events, state } = spec
      .given([requested, asked, approved])
      .when(failed('submit', 'cmd-approve', '2026-11-23T11:00:10.000Z'))
      .events();
    expect(events.map((e) => e.type)).toEqual(['TimeOffUpstreamCallFailed']);
    expect(timeOffPhaseOf(state)).toBe('approved');
  });
});

describe('time off: cancelling', () => {
  it('before approval: cancelled at once, nothing in HR', () => {
    const state = spec
      .given([requested, asked])
      .when(cancel())
      .then([
        { type: 'TimeOffCancelled', data: { timeOffId: ID, cancelRequestId: null, by: 'requester', at: T3 } },
      ]);
    expect(timeOffPhaseOf(state)).toBe('cancelled');
  });

  it('only the requester can cancel', () => {
    spec
      .given([requested, asked])
      .when(cancel(BEN.slackUserId))
      .then({ code: 'SB_ILLEGAL_STATE', details: { reason: 'not_requester' } });
  });

  it('after submission: a pending cancel in HR, then cancelled when HR confirms', () => {
    const cancelRequested: TimeOffEvent = {
      type: 'TimeOffCancelRequested',
      data: { timeOffId: ID, cancelRequestId: 'cmd-cancel', hrRequestId: 'hr-991', at: T3 },
    };
    const state = spec
      .given([requested, asked, approved, submitted, confirmed])
      .when(cancel())
      .then([cancelRequested]);
    expect(timeOffPhaseOf(state)).toBe('cancelling');
    expect(state.context.requests.map((r) => [r.action, r.hrRequestId])).toEqual([['cancel', 'hr-991']]);
    spec.given([requested, asked, approved, submitted, confirmed, cancelRequested]).when(cancel()).then([]);
    const done: TimeOffCommand = {
      type: 'RecordTimeOffCancelledInHr',
      data: { timeOffId: ID, cancelRequestId: 'cmd-cancel' },
      metadata: meta('cmd-cancelled', T3, SYSTEM),
    };
    expect(
      timeOffPhaseOf(
        spec
          .given([requested, asked, approved, submitted, confirmed, cancelRequested])
          .when(done)
          .then([
            {
              type: 'TimeOffCancelled',
              data: { timeOffId: ID, cancelRequestId: 'cmd-cancel', by: 'requester', at: T3 },
            },
          ]),
      ),
    ).toBe('cancelled');
    spec.given([requested, asked, approved, submitted, confirmed, cancelRequested]).when(cancel()).then([]);
  });

  it('HR refusing the cancel for good puts the request back as it stood, with the reason', () => {
    const cancelRequested: TimeOffEvent = {
      type: 'TimeOffCancelRequested',
      data: { timeOffId: ID, cancelRequestId: 'cmd-cancel', hrRequestId: 'hr-991', at: T3 },
    };
    const { events, state } = spec
      .given([requested, asked, approved, submitted, confirmed, cancelRequested])
      .when(failed('cancel', 'cmd-cancel', null, 'Time off already taken cannot be cancelled'))
      .events();
    expect(events.map((e) => e.type)).toEqual(['TimeOffUpstreamCallFailed', 'TimeOffCancelFailed']);
    expect(timeOffPhaseOf(state)).toBe('confirmed');
    expect(state.context.failure).toBe('Time off already taken cannot be cancelled');
  });

  it('after approval, before HR answered the submission: HR’s new request is cancelled once its id is known', () => {
    const cancelRequested: TimeOffEvent = {
      type: 'TimeOffCancelRequested',
      data: { timeOffId: ID, cancelRequestId: 'cmd-cancel', hrRequestId: null, at: T1 },
    };
    const state = spec
      .given([requested, asked, approved])
      .when(cancel(ANA.slackUserId, T1))
      .then([cancelRequested]);
    expect(timeOffPhaseOf(state)).toBe('cancelling');
    const { state: after } = spec
      .given([requested, asked, approved, cancelRequested])
      .when(recordSubmitted())
      .events();
    expect(timeOffPhaseOf(after)).toBe('cancelling');
    expect(after.context.requests.map((r) => [r.requestId, r.action, r.hrRequestId])).toEqual([
      ['cmd-cancel', 'cancel', 'hr-991'],
    ]);
  });

  it('after approval, when HR then refuses the submission: cancelled, nothing in HR', () => {
    const cancelRequested: TimeOffEvent = {
      type: 'TimeOffCancelRequested',
      data: { timeOffId: ID, cancelRequestId: 'cmd-cancel', hrRequestId: null, at: T1 },
    };
    const rejected: TimeOffCommand = {
      type: 'RecordTimeOffSubmissionRejected',
      data: { timeOffId: ID, submitRequestId: 'cmd-approve', reason: 'overlaps another request' },
      metadata: meta('cmd-rejected', T2, SYSTEM),
    };
    const state = spec
      .given([requested, asked, approved, cancelRequested])
      .when(rejected)
      .then([
        { type: 'TimeOffCancelled', data: { timeOffId: ID, cancelRequestId: null, by: 'requester', at: T2 } },
      ]);
    expect(timeOffPhaseOf(state)).toBe('cancelled');
  });

  it('cancelled in the HR web app: seen as cancelled by HR', () => {
    const seen: TimeOffCommand = {
      type: 'RecordTimeOffCancelledInHr',
      data: { timeOffId: ID, cancelRequestId: null },
      metadata: meta('webhook-1', T3, 'hibob:webhook'),
    };
    spec
      .given([requested, asked, approved, submitted, confirmed])
      .when(seen)
      .then([{ type: 'TimeOffCancelled', data: { timeOffId: ID, cancelRequestId: null, by: 'hr', at: T3 } }]);
  });

  it('denied or expired requests have nothing to cancel; cancelled ones say so', () => {
    const denied: TimeOffEvent = {
      type: 'TimeOffDenied',
      data: { timeOffId: ID, by: BEN, reason: null, at: T1 },
    };
    spec
      .given([requested, asked, denied])
      .when(cancel())
      .then({ code: 'SB_ILLEGAL_STATE', details: { reason: 'nothing_to_cancel' } });
    const cancelled: TimeOffEvent = {
      type: 'TimeOffCancelled',
      data: { timeOffId: ID, cancelRequestId: null, by: 'requester', at: T1 },
    };
    spec
      .given([requested, asked, cancelled])
      .when(cancel())
      .then({ code: 'SB_ILLEGAL_STATE', details: { reason: 'cancelled' } });
  });
});

describe('time off: streams and replay', () => {
  it('names streams by request id, and refuses ids that are not ours', () => {
    expect(timeOffStreamId(ID)).toBe(`timeoff-${ID}`);
    expect(parseTimeOffRequestId(ID)).toBe(ID);
    expect(parseTimeOffRequestId('../../etc')).toBeNull();
    expect(parseTimeOffRequestId(42)).toBeNull();
    expect(() => timeOffStreamId('directory')).toThrow(TypeError);
  });

  it('a history the machine cannot accept is refused on replay', () => {
    expect(() => phaseAfter([requested, submitted])).toThrow(/does not accept replayed TimeOffSubmitted/);
  });
});

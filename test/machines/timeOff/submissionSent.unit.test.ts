import { describe, expect, it } from 'vitest';
import type { TimeOffCommand } from '../../../machines/timeOff/commands.ts';
import { timeOffDecider, timeOffPhaseOf } from '../../../machines/timeOff/decider.ts';
import type { TimeOffEvent } from '../../../machines/timeOff/events.ts';
import { deciderSpec } from '../../support/deciderSpec.ts';

/**
 * A submission HR took (`TimeOffSubmissionSent`: its POST answered 200, with no id) is never
 * posted again, and never becomes "submission failed": when the lookups for its id run out, the
 * request stays approved, and a later sighting (webhook, changes poll) still records it.
 */
const spec = deciderSpec(timeOffDecider);
const ID = '7d3c2a10-5b6e-4f8a-9c1d-2e3f4a5b6c7d';
const ANA = { hrId: '3332883884017713238', slackUserId: 'U0ANA', displayName: 'Ana Lima' };
const BEN = { hrId: '3332883884017713001', slackUserId: 'U0BEN', displayName: 'Ben Okafor' };
const SYSTEM = 'system:timeoff-hr-calls';
const T0 = '2026-11-23T10:00:00.000Z';
const T1 = '2026-11-23T11:00:00.000Z';
const T2 = '2026-11-23T11:00:01.000Z';
const T3 = '2026-11-23T11:05:00.000Z';
const meta = (commandId: string, now: string, actor = SYSTEM) => ({ commandId, now, actor });

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
    approver: BEN,
    workingDays: 3,
    remindAt: ['2026-11-24T10:00:00.000Z'],
    expiresAt: '2026-12-02T10:00:00.000Z',
    at: T0,
  },
};
const approved: TimeOffEvent = {
  type: 'TimeOffApproved',
  data: { timeOffId: ID, by: BEN, submitRequestId: 'cmd-approve', at: T1 },
};
const recordSent = (submitRequestId = 'cmd-approve'): TimeOffCommand => ({
  type: 'RecordTimeOffSubmissionSent',
  data: { timeOffId: ID, submitRequestId, since: T1 },
  metadata: meta('cmd-sent', T2),
});
const sent: TimeOffEvent = {
  type: 'TimeOffSubmissionSent',
  data: { timeOffId: ID, submitRequestId: 'cmd-approve', since: T1, at: T2 },
};
const lookFailed = (attempt: number, nextAttemptAt: string | null): TimeOffCommand => ({
  type: 'RecordTimeOffUpstreamCallFailed',
  data: {
    timeOffId: ID,
    requestId: 'cmd-approve',
    action: 'submit',
    attempt,
    maxAttempts: 1,
    code: 'SB_HR_NOT_VISIBLE',
    message: 'HR took the request but has not shown it yet',
    nextAttemptAt,
  },
  metadata: meta(`cmd-fail-${attempt}`, T3),
});
const finalLook: TimeOffEvent = {
  type: 'TimeOffUpstreamCallFailed',
  data: {
    requestId: 'cmd-approve',
    action: 'submit',
    attempt: 1,
    maxAttempts: 1,
    code: 'SB_HR_NOT_VISIBLE',
    message: 'HR took the request but has not shown it yet',
    nextAttemptAt: null,
    final: true,
    at: T3,
  },
};
const recordSubmitted: TimeOffCommand = {
  type: 'RecordTimeOffSubmitted',
  data: { timeOffId: ID, submitRequestId: 'cmd-approve', hrRequestId: '55500001' },
  metadata: meta('cmd-found', T3, 'system:timeoff-hr-sync'),
};

describe('time off: a submission HR took', () => {
  it('is recorded once, only for the pending submission', () => {
    spec.given([requested, approved]).when(recordSent()).then([sent]);
    spec.given([requested, approved, sent]).when(recordSent()).then([]);
    spec.given([requested, approved]).when(recordSent('cmd-other')).then([]);
  });

  it('when the lookups for its id run out it stays approved: never "submission failed"', () => {
    const { events, state } = spec.given([requested, approved, sent]).when(lookFailed(1, null)).events();
    expect(events).toEqual([finalLook]);
    expect(timeOffPhaseOf(state)).toBe('approved');
    expect(state.context.submissionSent).toMatchObject({ submitRequestId: 'cmd-approve', since: T1 });
  });

  it('a submission that was never sent fails as before, and can be resubmitted', () => {
    const { events, state } = spec.given([requested, approved]).when(lookFailed(1, null)).events();
    expect(events.map((e) => e.type)).toEqual(['TimeOffUpstreamCallFailed', 'TimeOffSubmissionFailed']);
    expect(timeOffPhaseOf(state)).toBe('submissionFailed');
  });

  it('a later sighting still records it submitted, and its read-back can be answered after it ran out', () => {
    const { events, state } = spec
      .given([requested, approved, sent, finalLook])
      .when(recordSubmitted)
      .events();
    expect(events).toEqual([
      {
        type: 'TimeOffSubmitted',
        data: {
          timeOffId: ID,
          submitRequestId: 'cmd-approve',
          hrRequestId: '55500001',
          readBackRequestId: 'cmd-found',
          at: T3,
        },
      },
    ]);
    expect(timeOffPhaseOf(state)).toBe('submitted');
    const submitted = events[0]!;
    const readBackGaveUp: TimeOffEvent = {
      type: 'TimeOffUpstreamCallFailed',
      data: { ...finalLook.data, requestId: 'cmd-found', action: 'read_back' },
    };
    const later = spec
      .given([requested, approved, sent, finalLook, submitted, readBackGaveUp])
      .when({
        type: 'RecordTimeOffReadBack',
        data: { timeOffId: ID, readBackRequestId: 'cmd-found', hrStatus: 'approved' },
        metadata: meta('cmd-rb', T3, 'system:timeoff-hr-sync'),
      })
      .events();
    expect(later.events.map((e) => e.type)).toEqual(['TimeOffConfirmed']);
    expect(timeOffPhaseOf(later.state)).toBe('confirmed');
    // Once submitted, another sighting changes nothing.
    spec.given([requested, approved, sent, finalLook, submitted]).when(recordSubmitted).then([]);
  });

  it('a 403 fails in the words the processor gave, not wrapped as "could not be reached"', () => {
    const words = "HR refused Switchboard's permission to record time off; an admin has been told.";
    const { events } = spec
      .given([requested, approved])
      .when({
        type: 'RecordTimeOffUpstreamCallFailed',
        data: {
          timeOffId: ID,
          requestId: 'cmd-approve',
          action: 'submit',
          attempt: 1,
          maxAttempts: 5,
          code: 'SB_UPSTREAM_AUTH',
          message: words,
          nextAttemptAt: null,
        },
        metadata: meta('cmd-403', T2),
      })
      .events();
    expect(events[1]).toMatchObject({ type: 'TimeOffSubmissionFailed', data: { reason: words } });
  });
});

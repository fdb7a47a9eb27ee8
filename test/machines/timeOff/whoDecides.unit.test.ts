import { describe, expect, it } from 'vitest';
import {
  decisionRefusal,
  resubmitRefusal,
  timeOffDecider,
  timeOffPhaseOf,
} from '../../../machines/timeOff/decider.ts';
import { hrChannelApprover, type TimeOffEvent } from '../../../machines/timeOff/events.ts';
import { deciderSpec } from '../../support/deciderSpec.ts';

/**
 * Who may decide and who may resubmit: the decider's rules, which the edge also asks (through the
 * time-off queries) before it opens the deny form or the resubmit form.
 */
const spec = deciderSpec(timeOffDecider);
const ID = '7d3c2a10-5b6e-4f8a-9c1d-2e3f4a5b6c7d';
const ANA = { hrId: '3332883884017713238', slackUserId: 'U0ANA', displayName: 'Ana Lima' };
const DANA = { hrId: '3332883884017713001', slackUserId: 'U0DANA', displayName: 'Dana Lee' };
const CHEN = { hrId: '3332883884017713005', slackUserId: 'U0CHEN', displayName: 'Chen Wei' };
const T0 = '2026-11-23T10:00:00.000Z';
const requestedOf = (approver: typeof DANA): TimeOffEvent => ({
  type: 'TimeOffRequested',
  data: {
    timeOffId: ID,
    policyType: 'Holiday',
    startDate: '2026-12-03',
    endDate: '2026-12-04',
    startPortion: 'all_day',
    endPortion: 'all_day',
    description: '',
    requester: ANA,
    approver,
    workingDays: 2,
    remindAt: [],
    expiresAt: '2026-12-02T10:00:00.000Z',
    at: T0,
  },
});
const requestOf = (events: TimeOffEvent[]) => {
  const { state } = spec.given(events);
  return { request: state.context.request!, phase: timeOffPhaseOf(state) };
};
const refusalOf = (r: ReturnType<typeof decisionRefusal>) => r && { message: r.message, ...r.details };

describe('who may approve or deny', () => {
  it('the approver; never the requester; anyone else is told who decides', () => {
    const { request } = requestOf([requestedOf(DANA)]);
    expect(decisionRefusal(request, 'U0DANA')).toBeNull();
    expect(refusalOf(decisionRefusal(request, 'U0ANA'))).toMatchObject({
      reason: 'own_request',
      message: "You can't approve or deny your own time off.",
    });
    expect(refusalOf(decisionRefusal(request, 'U0BEN'))).toMatchObject({
      reason: 'not_approver',
      message: 'Only Dana Lee can approve or deny this request.',
    });
  });

  it('sent to the HR channel: a member Slack vouched for, not the requester in HR; others are told the channel', () => {
    const { request } = requestOf([requestedOf(hrChannelApprover('C0PEOPLE'))]);
    expect(decisionRefusal(request, 'U0CHEN', { channel: 'C0PEOPLE', by: CHEN })).toBeNull();
    expect(refusalOf(decisionRefusal(request, 'U0BEN'))).toMatchObject({
      reason: 'not_approver',
      hrChannel: true,
      message: 'Only members of <#C0PEOPLE> can approve or deny time off sent to HR.',
    });
    // Vouched for another person, or in another channel: not this click's.
    expect(decisionRefusal(request, 'U0BEN', { channel: 'C0PEOPLE', by: CHEN })?.details.reason).toBe(
      'not_approver',
    );
    expect(decisionRefusal(request, 'U0CHEN', { channel: 'C0OTHER', by: CHEN })?.details.reason).toBe(
      'not_approver',
    );
    expect(
      decisionRefusal(request, 'U0ANA2', { channel: 'C0PEOPLE', by: { ...ANA, slackUserId: 'U0ANA2' } })
        ?.details.reason,
    ).toBe('own_request');
  });
});

describe('who may fix and send again', () => {
  it('the requester, once HR refused the submission', () => {
    const approved: TimeOffEvent = {
      type: 'TimeOffApproved',
      data: { timeOffId: ID, by: DANA, submitRequestId: 's1', at: T0 },
    };
    const refused: TimeOffEvent = {
      type: 'TimeOffSubmissionFailed',
      data: { timeOffId: ID, submitRequestId: 's1', reason: 'HR refused the dates', at: T0 },
    };
    const failed = requestOf([requestedOf(DANA), approved, refused]);
    expect(resubmitRefusal(failed.request, failed.phase, 'U0ANA')).toBeNull();
    expect(resubmitRefusal(failed.request, failed.phase, 'U0DANA')?.details.reason).toBe('not_requester');
    const waiting = requestOf([requestedOf(DANA)]);
    expect(resubmitRefusal(waiting.request, waiting.phase, 'U0ANA')?.details.reason).toBe(
      'nothing_to_resubmit',
    );
  });
});

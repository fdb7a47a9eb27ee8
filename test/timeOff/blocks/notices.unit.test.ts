import { describe, expect, it } from 'vitest';
import type { TimeOffEvent } from '../../../machines/timeOff/events.ts';
import { slackDatesAsFallback } from '../../../src/slack/time.ts';
import {
  approvedDm,
  askText,
  cancelFailedDm,
  cancelledDm,
  deniedDm,
  hrFailureWords,
  notShownDm,
  reminderDm,
  replacedCard,
  requesterStatusDm,
  submissionFailedDm,
} from '../../../src/timeOff/blocks/notices.ts';
import { TIME_OFF_ACTION } from '../../../src/timeOff/blocks/timeOffIds.ts';
import type { TimeOffView } from '../../../src/timeOff/blocks/timeOffView.ts';
import { hrOnlyTimeOffBlocks } from '../../../src/timeOff/home.ts';
import { shownView, statusNote } from '../../../src/timeOff/notices.reactor.ts';
import type { AbsenceEntry } from '../../../src/timeOff/readModel.projection.ts';

const ID = '7d3c2a10-5b6e-4f8a-9c1d-2e3f4a5b6c7d';
const ANA = { hrId: '101', slackUserId: 'U0ANA', displayName: 'Ana Silva' };
const DANA = { hrId: '100', slackUserId: 'U0DANA', displayName: 'Dana Lee' };

const VIEW: TimeOffView = {
  timeOffId: ID,
  phase: 'awaitingApproval',
  requester: ANA,
  approver: DANA,
  policyType: 'Holiday <b>',
  startDate: '2026-12-07',
  endDate: '2026-12-09',
  startPortion: 'all_day',
  endPortion: 'all_day',
  description: '',
  workingDays: 3,
  requestedAt: '2026-11-23T09:00:00.000Z',
  expiresAt: '2026-12-02T09:00:00.000Z',
  remindersSent: 0,
  denyReason: null,
  failure: null,
  retrying: false,
};

type Block = {
  type: string;
  elements?: { action_id?: string; value?: string; type?: string; text?: unknown }[];
};
const actionsOf = (blocks: readonly unknown[]) =>
  (blocks as Block[]).filter((b) => b.type === 'actions').flatMap((b) => b.elements ?? []);
/** What a reader without Slack's date rendering sees: each date token's fallback, its zone named (issue 19). */
const seen = (text: string) => slackDatesAsFallback(text);
const all = (m: { text: string; blocks: readonly unknown[] }) =>
  seen(`${m.text}\n${JSON.stringify(m.blocks)}`);

describe('the requester’s status message', () => {
  it('names the approver and the short id, with Cancel while there is something to cancel', () => {
    const m = requesterStatusDm(VIEW);
    expect(all(m)).toContain('Request `7d3c2a` · approver <@U0DANA> · asked Nov 23, 09:00 UTC');
    expect(all(m)).toContain('/timeoff cancel 7d3c2a');
    const shown = JSON.stringify(m.blocks.filter((b) => b.type !== 'actions'));
    expect(shown).not.toContain(ID.slice(8));
    expect(actionsOf(m.blocks)).toEqual([
      expect.objectContaining({ action_id: TIME_OFF_ACTION.cancel, value: ID }),
    ]);
    for (const phase of ['approved', 'submitted', 'confirmed', 'submissionFailed'] as const) {
      expect(actionsOf(requesterStatusDm({ ...VIEW, phase }).blocks)).toHaveLength(1);
    }
    for (const phase of ['denied', 'expired', 'cancelled', 'cancelling'] as const) {
      expect(actionsOf(requesterStatusDm({ ...VIEW, phase }).blocks)).toEqual([]);
    }
  });
});

describe('the requester’s DMs', () => {
  it('escape what people typed and what HR said', () => {
    expect(askText(VIEW)).toBe('*Holiday &lt;b&gt;*: Mon 7 Dec – Wed 9 Dec 2026 (3 working days)');
    expect(deniedDm(VIEW, 'Release <!channel> & on call').text).toContain(
      '“Release &lt;!channel&gt; &amp; on call”',
    );
    expect(deniedDm(VIEW, null).text).toBe(
      '<@U0DANA> denied your Holiday &lt;b&gt;: Mon 7 Dec – Wed 9 Dec 2026 (3 working days).'.replace(
        /^/,
        ':no_entry: ',
      ),
    );
    const refused = submissionFailedDm(VIEW, { kind: 'refusal', reason: 'Unknown policy <Holiday b>' });
    expect(all(refused)).toContain('HR refused to record it: *Unknown policy &lt;Holiday b&gt;*');
    expect(actionsOf(refused.blocks).map((b) => [b.action_id, b.value])).toEqual([
      [TIME_OFF_ACTION.resubmit, ID],
      [TIME_OFF_ACTION.cancel, ID],
    ]);
  });

  it('say HR’s failures in words, never its text', () => {
    const down = submissionFailedDm(VIEW, { kind: 'unreachable', code: 'SB_UPSTREAM_UNAVAILABLE' });
    expect(down.text).toContain('but HR could not be reached, so it is not recorded in HR');
    expect(hrFailureWords('SB_UPSTREAM_AUTH')).toContain('an admin has been alerted');
    expect(hrFailureWords('SB_SOMETHING_NEW')).toBe('HR did not answer as expected');
    expect(cancelFailedDm(VIEW, 'HR said: <nope>').text).toContain('HR said: &lt;nope&gt;');
  });

  it('approved says who and that HR is next; cancelled says where', () => {
    expect(approvedDm(VIEW, DANA).text).toContain('<@U0DANA> approved your Holiday &lt;b&gt;');
    expect(approvedDm(VIEW, DANA).text).toContain('Recording it in HR');
    expect(cancelledDm(VIEW, 'hr', true).text).toContain('was cancelled in HR');
    expect(cancelledDm(VIEW, 'requester', true).text).toContain('is cancelled, in HR too');
    expect(cancelledDm(VIEW, 'requester', false).text).toContain('no longer waits for <@U0DANA>');
  });

  it('times are Slack date tokens (each reader’s zone) whose fallback names its zone', () => {
    const sent = notShownDm(VIEW, '2026-11-23T10:02:00.000Z').text;
    expect(sent).toContain(
      `sent it to HR <!date^${Date.parse('2026-11-23T10:02:00.000Z') / 1000}^{date_short_pretty} at {time}|Nov 23, 10:02 UTC> but`,
    );
    expect(seen(sent)).toContain("sent it to HR Nov 23, 10:02 UTC but HR hasn't shown it yet");
    const r = seen(reminderDm(VIEW, 2).text);
    expect(r).toContain('Reminder 2');
    expect(r).toContain('waiting for you since Nov 23, 09:00 UTC');
    expect(r).toContain('expires Dec 2, 09:00 UTC');
  });

  it('an earlier card, replaced, has no buttons', () => {
    expect(actionsOf(replacedCard(VIEW).blocks)).toEqual([]);
  });
});

describe('what people are shown of a failure', () => {
  const failed = (action: 'submit' | 'cancel', requestId: string, code: string): TimeOffEvent => ({
    type: 'TimeOffUpstreamCallFailed',
    data: {
      requestId,
      action,
      attempt: 5,
      maxAttempts: 5,
      code,
      message: 'connect ECONNREFUSED 10.1.2.3:443',
      nextAttemptAt: null,
      final: true,
      at: '2026-11-23T10:00:00.000Z',
    },
  });
  it('a failure from HR not answering is said in words; a refusal as HR worded it', () => {
    const view = {
      ...VIEW,
      phase: 'submissionFailed' as const,
      failure: 'HR could not be reached (connect ECONNREFUSED 10.1.2.3:443)',
    };
    const submissionFailed: TimeOffEvent = {
      type: 'TimeOffSubmissionFailed',
      data: { timeOffId: ID, submitRequestId: 's1', reason: view.failure, at: '2026-11-23T10:00:00.000Z' },
    };
    expect(shownView(view, [failed('submit', 's1', 'SB_TIMEOUT'), submissionFailed]).failure).toBe(
      'HR could not be reached',
    );
    const refused = { ...view, failure: 'Unknown policy' };
    expect(
      shownView(refused, [
        { ...submissionFailed, data: { ...submissionFailed.data, reason: 'Unknown policy' } },
      ]),
    ).toBe(refused);
    expect(shownView(VIEW, [])).toBe(VIEW);
  });

  it('a submission HR took but has not shown is noted on the status message until HR shows it', () => {
    const at = '2026-11-23T10:02:00.000Z';
    const approved: TimeOffEvent = {
      type: 'TimeOffApproved',
      data: { timeOffId: ID, by: DANA, submitRequestId: 's1', at: '2026-11-23T10:01:00.000Z' },
    };
    const sent: TimeOffEvent = {
      type: 'TimeOffSubmissionSent',
      data: { timeOffId: ID, submitRequestId: 's1', since: at, at },
    };
    const view = { ...VIEW, phase: 'approved' as const };
    const gaveUp = failed('submit', 's1', 'SB_HR_NOT_VISIBLE');
    expect(seen(statusNote(view, [approved, sent, gaveUp]) ?? '')).toBe(
      ":hourglass_flowing_sand: Sent to HR Nov 23, 10:02 UTC; HR hasn't shown it yet. Switchboard keeps watching HR.",
    );
    expect(statusNote(view, [approved, sent])).toBeNull();
    const found: TimeOffEvent = {
      type: 'TimeOffSubmitted',
      data: { timeOffId: ID, submitRequestId: 's1', hrRequestId: '9', readBackRequestId: 'r1', at },
    };
    expect(statusNote({ ...view, phase: 'submitted' }, [approved, sent, gaveUp, found])).toBeNull();
    // Not sent: HR never answered the POST; that is a failed submission, said elsewhere.
    expect(statusNote(view, [approved, failed('submit', 's1', 'SB_UPSTREAM_UNAVAILABLE')])).toBeNull();
  });
});

describe('App Home: HR’s own entries', () => {
  const entry = (over: Partial<AbsenceEntry>): AbsenceEntry => ({
    employeeHrId: '101',
    slackUserId: 'U0ANA',
    displayName: 'Ana Silva',
    policyType: 'Sick',
    startDate: '2026-12-01',
    endDate: '2026-12-01',
    startPortion: 'all_day',
    endPortion: 'all_day',
    status: 'approved',
    timeOffId: null,
    hrRequestId: '77',
    ...over,
  });
  it('lists only what Switchboard did not handle, without buttons', () => {
    expect(hrOnlyTimeOffBlocks([entry({ timeOffId: ID })])).toEqual([]);
    const blocks = hrOnlyTimeOffBlocks([
      entry({}),
      entry({ policyType: 'Holiday <x>', status: 'requested' }),
    ]);
    const text = JSON.stringify(blocks);
    expect(text).toContain('*Sick*: Tue 1 Dec 2026 — approved in HR');
    expect(text).toContain('*Holiday &lt;x&gt;*');
    expect(text).toContain('waiting for approval in HR');
    expect(actionsOf(blocks)).toEqual([]);
  });
});

import { describe, expect, it } from 'vitest';
import { timeOffDecider } from '../../../machines/timeOff/decider.ts';
import type { TimeOffEvent } from '../../../machines/timeOff/events.ts';
import { approvalCard, teammatesOutText } from '../../../src/timeOff/blocks/approvalCard.ts';
import { denyWithReasonModal, readDenySubmission } from '../../../src/timeOff/blocks/denyModal.ts';
import { pendingApprovalsSection, upcomingTimeOffSection } from '../../../src/timeOff/blocks/home.ts';
import { requesterStatusMessage, requesterStatusText } from '../../../src/timeOff/blocks/requesterStatus.ts';
import {
  TIME_OFF_ACTION,
  TIME_OFF_FIELD,
  timeOffActionsBlockId,
  timeOffIdFromActionsBlockId,
  timeOffIdFromValue,
} from '../../../src/timeOff/blocks/timeOffIds.ts';
import {
  formatRange,
  formatWorkingDays,
  type TimeOffView,
  toTimeOffView,
} from '../../../src/timeOff/blocks/timeOffView.ts';

const ID = '7d3c2a10-5b6e-4f8a-9c1d-2e3f4a5b6c7d';
const ANA = { hrId: '101', slackUserId: 'U0ANA', displayName: 'Ana <Lima> & co' };
const BEN = { hrId: '102', slackUserId: 'U0BEN', displayName: 'Ben Okafor' };
const T0 = '2026-11-23T10:00:00.000Z';

const VIEW: TimeOffView = {
  timeOffId: ID,
  phase: 'awaitingApproval',
  requester: ANA,
  approver: BEN,
  policyType: 'Holiday <b>',
  startDate: '2026-12-03',
  endDate: '2026-12-07',
  startPortion: 'all_day',
  endPortion: 'all_day',
  description: 'Visiting <@U0BOSS> & <!channel>',
  workingDays: 3,
  requestedAt: T0,
  expiresAt: '2026-12-02T10:00:00.000Z',
  remindersSent: 0,
  denyReason: null,
  failure: null,
  retrying: false,
};

const json = (value: unknown): string => JSON.stringify(value);
type Block = { type: string; block_id?: string; elements?: { action_id?: string; value?: string }[] };
const actionsOf = (blocks: readonly unknown[]) =>
  (blocks as Block[]).filter((b) => b.type === 'actions').flatMap((b) => b.elements ?? []);

describe('time-off formatting', () => {
  it('ranges, half days and working days in words', () => {
    expect(formatRange(VIEW)).toBe('Thu 3 Dec – Mon 7 Dec 2026');
    expect(
      formatRange({ ...VIEW, endDate: '2027-01-04', startPortion: 'afternoon', endPortion: 'morning' }),
    ).toBe('Thu 3 Dec 2026 (afternoon) – Mon 4 Jan 2027 (morning)');
    expect(
      formatRange({ ...VIEW, endDate: VIEW.startDate, startPortion: 'morning', endPortion: 'morning' }),
    ).toBe('Thu 3 Dec 2026 (morning)');
    expect(formatWorkingDays(3)).toBe('3 working days');
    expect(formatWorkingDays(1)).toBe('1 working day');
    expect(formatWorkingDays(0.5)).toBe('½ working day');
    expect(formatWorkingDays(2.5)).toBe('2½ working days');
  });
});

describe('the approver’s DM', () => {
  const extras = {
    balanceAfter: { policyType: 'Holiday', days: 12 },
    teammatesOut: [
      { slackUserId: null, displayName: 'Eve <script>', startDate: '2026-12-04', endDate: '2026-12-04' },
    ],
  };

  it('says who, what, when, working days, balance after and who else is out, with the three buttons carrying the request id', () => {
    const message = approvalCard(VIEW, extras);
    const text = json(message.blocks);
    expect(text).toContain(
      '<@U0ANA> asks for *Holiday &lt;b&gt;*: Thu 3 Dec – Mon 7 Dec 2026 (3 working days)',
    );
    expect(text).toContain('12 days of Holiday left');
    expect(text).toContain('Also out in <@U0ANA>’s team then: Eve &lt;script&gt; (Fri 4 Dec 2026)');
    expect(text).toContain('Expires');
    expect(actionsOf(message.blocks)).toEqual([
      expect.objectContaining({ action_id: TIME_OFF_ACTION.approve, value: ID }),
      expect.objectContaining({ action_id: TIME_OFF_ACTION.deny, value: ID }),
      expect.objectContaining({ action_id: TIME_OFF_ACTION.denyWithReason, value: ID }),
    ]);
    expect((message.blocks as Block[]).find((b) => b.type === 'actions')?.block_id).toBe(
      timeOffActionsBlockId(ID),
    );
    // The notification's text is mrkdwn as well (as the requester's DMs, notices.unit.test.ts): escaped.
    expect(message.text).toContain('Ana &lt;Lima&gt; &amp; co asks for Holiday &lt;b&gt;');
  });

  it('escapes the note and names no one through it', () => {
    const text = json(approvalCard(VIEW, extras).blocks);
    expect(text).toContain('Visiting &lt;@U0BOSS&gt; &amp; &lt;!channel&gt;');
    expect(text).not.toContain('<@U0BOSS>');
    expect(text).not.toContain('<!channel>');
  });

  it('says when HR could not tell the balance, warns when over, and when nobody else is out', () => {
    const text = json(approvalCard(VIEW, { balanceAfter: null, teammatesOut: [] }).blocks);
    expect(text).toContain('HR could not tell');
    expect(text).toContain('Nobody else in <@U0ANA>’s team is out then.');
    expect(
      json(
        approvalCard(VIEW, { balanceAfter: { policyType: 'Holiday', days: -1.5 }, teammatesOut: [] }).blocks,
      ),
    ).toContain('over the allowance');
  });

  it('lists a few teammates and counts the rest', () => {
    const many = Array.from({ length: 11 }, (_, n) => ({
      slackUserId: `U0T${n}`,
      displayName: `T${n}`,
      startDate: '2026-12-03',
      endDate: '2026-12-03',
    }));
    expect(teammatesOutText('<@U0ANA>', many)).toMatch(/and 3 more\.$/);
  });

  it('once decided, the buttons give way to what happened', () => {
    const denied = approvalCard({ ...VIEW, phase: 'denied', denyReason: 'Release <week>' }, extras);
    expect(actionsOf(denied.blocks)).toEqual([]);
    expect(json(denied.blocks)).toContain('Denied by <@U0BEN>: “Release &lt;week&gt;”');
    expect(json(approvalCard({ ...VIEW, phase: 'confirmed' }, extras).blocks)).toContain('recorded in HR');
  });
});

describe('the requester’s status, at each step', () => {
  it.each([
    ['awaitingApproval', 'Waiting for <@U0BEN> to approve'],
    ['approved', 'Recording it in HR'],
    ['submitted', 'waiting for it to show in HR'],
    ['confirmed', 'recorded in HR'],
    ['denied', '<@U0BEN> denied it.'],
    ['expired', 'It expired'],
    ['cancelling', 'Cancelling it in HR'],
    ['cancelled', 'Cancelled.'],
  ] as const)('%s', (phase, words) => {
    expect(requesterStatusText({ ...VIEW, phase })).toContain(words);
  });

  it('HR’s refusal is shown in its words, escaped, with how to fix it', () => {
    const text = requesterStatusText({
      ...VIEW,
      phase: 'submissionFailed',
      failure: 'Policy type "Holliday" <unknown>',
    });
    expect(text).toContain('Policy type "Holliday" &lt;unknown&gt;');
    expect(text).toContain('send it again');
  });

  it('a denial with a reason quotes it; a failed cancel says the time off still stands', () => {
    expect(requesterStatusText({ ...VIEW, phase: 'denied', denyReason: 'Busy week' })).toContain(
      '“Busy week”',
    );
    const message = requesterStatusMessage({ ...VIEW, phase: 'confirmed', failure: 'already taken' });
    expect(json(message.blocks)).toContain('It still stands');
    expect(message.text).not.toContain('*');
  });

  it('keeps emoji names whole in the notification text and ends a quoted reason with one full stop', () => {
    const waiting = requesterStatusMessage({ ...VIEW, phase: 'awaitingApproval' });
    expect(waiting.text).toContain(':hourglass_flowing_sand:');
    const refused = requesterStatusText({
      ...VIEW,
      phase: 'submissionFailed',
      failure: 'The policy "Holliday" is not one HR offers.',
    });
    expect(refused).toContain('HR offers*. Fix it');
    expect(refused).not.toContain('..');
  });

  it('is built from a folded request', () => {
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
        remindAt: [],
        expiresAt: '2026-12-02T10:00:00.000Z',
        at: T0,
      },
    };
    const state = [requested].reduce(timeOffDecider.evolve, timeOffDecider.initialState());
    expect(toTimeOffView(state)).toMatchObject({ timeOffId: ID, phase: 'requested', workingDays: 3 });
    expect(toTimeOffView(timeOffDecider.initialState())).toBeNull();
  });
});

describe('deny with reason', () => {
  const values = (reason: string) => ({
    [TIME_OFF_FIELD.denyReason.blockId]: {
      [TIME_OFF_FIELD.denyReason.actionId]: { type: 'plain_text_input', value: reason },
    },
  });

  it('round-trips the request id and reads the reason', () => {
    const modal = denyWithReasonModal({ timeOffId: ID, label: 'Ana: Thu 3 Dec' });
    expect(readDenySubmission(values('  Release week  '), modal.private_metadata ?? '')).toEqual({
      ok: true,
      value: { timeOffId: ID, reason: 'Release week' },
    });
  });

  it('refuses an empty reason and a forged or lost request id, naming the field', () => {
    const modal = denyWithReasonModal({ timeOffId: ID, label: 'x' });
    const blockId = TIME_OFF_FIELD.denyReason.blockId;
    expect(readDenySubmission(values('  '), modal.private_metadata ?? '')).toEqual({
      ok: false,
      errors: { [blockId]: expect.stringContaining('Say why') },
    });
    expect(readDenySubmission(values('no'), json({ timeOffId: '../etc' }))).toEqual({
      ok: false,
      errors: { [blockId]: expect.stringContaining('lost its request') },
    });
    expect(readDenySubmission(values('no'), 'not json')).toMatchObject({ ok: false });
  });
});

describe('button values are checked before they name a request', () => {
  it('only our ids are read back', () => {
    expect(timeOffIdFromValue(ID)).toBe(ID);
    expect(timeOffIdFromValue('incident-1')).toBeNull();
    expect(timeOffIdFromValue({ id: ID })).toBeNull();
    expect(timeOffIdFromActionsBlockId(timeOffActionsBlockId(ID))).toBe(ID);
    expect(timeOffIdFromActionsBlockId('timeoff.actions:nope')).toBeNull();
    expect(timeOffIdFromActionsBlockId(undefined)).toBeNull();
  });
});

describe('App Home sections', () => {
  const other = { ...VIEW, timeOffId: 'aaaaaaaa-5b6e-4f8a-9c1d-2e3f4a5b6c7d', approver: ANA, requester: BEN };

  it('the approver sees their pending approvals with buttons, nobody else’s', () => {
    const blocks = pendingApprovalsSection('U0BEN', [VIEW, other, { ...VIEW, phase: 'denied' }]);
    expect(actionsOf(blocks).map((e) => [e.action_id, e.value])).toEqual([
      [TIME_OFF_ACTION.approve, ID],
      [TIME_OFF_ACTION.denyWithReason, ID],
    ]);
    expect(json(pendingApprovalsSection('U0EVE', [VIEW]))).toContain('Nothing waiting for you.');
  });

  it('the requester sees their upcoming time off, not past or ended ones', () => {
    const past = {
      ...VIEW,
      timeOffId: 'bbbbbbbb-5b6e-4f8a-9c1d-2e3f4a5b6c7d',
      startDate: '2026-11-02',
      endDate: '2026-11-03',
      phase: 'confirmed' as const,
    };
    const blocks = upcomingTimeOffSection(
      'U0ANA',
      [{ ...VIEW, phase: 'confirmed' }, past, { ...VIEW, phase: 'cancelled' }],
      '2026-11-23',
    );
    const text = json(blocks);
    expect(text).toContain('Thu 3 Dec – Mon 7 Dec 2026');
    expect(text).toContain('approved and in HR');
    expect(text).not.toContain('Mon 2 Nov');
    expect((text.match(/timeoff\.cancel/g) ?? []).length).toBe(1);
    expect(json(upcomingTimeOffSection('U0ANA', [], '2026-11-23'))).toContain('None booked');
  });
});

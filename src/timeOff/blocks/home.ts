import { escapeMrkdwn, type KnownBlock, mrkdwn, plain } from '../../slack/blocks/format.ts';
import { TIME_OFF_ACTION, timeOffButton } from './timeOffIds.ts';
import {
  formatRange,
  formatWorkingDays,
  personText,
  STANDING_PHASES,
  type TimeOffView,
} from './timeOffView.ts';

/**
 * The time-off sections of the App Home tab: the approver's pending approvals (with the same
 * buttons as the DM; a click from Home carries no card, so the decider checks the person only)
 * and the requester's upcoming time off. Pure: the caller picks the views (from read models) and
 * passes `today` (a `YYYY-MM-DD` read at the edge).
 */
const MAX_ROWS = 15;

const PENDING: ReadonlySet<TimeOffView['phase']> = new Set(['requested', 'awaitingApproval']);

const STATUS_WORD: Readonly<Partial<Record<TimeOffView['phase'], string>>> = {
  requested: 'waiting for approval',
  awaitingApproval: 'waiting for approval',
  approved: 'approved, recording in HR',
  submitted: 'approved, recording in HR',
  confirmed: 'approved and in HR',
  submissionFailed: ':warning: HR refused it',
};

const more = (blocks: KnownBlock[], total: number): KnownBlock[] =>
  total > MAX_ROWS
    ? [...blocks, { type: 'context', elements: [mrkdwn(`…and ${total - MAX_ROWS} more.`)] }]
    : blocks;

export const pendingApprovalsSection = (
  approverSlackUserId: string,
  views: readonly TimeOffView[],
): KnownBlock[] => {
  const mine = views
    .filter((v) => PENDING.has(v.phase) && v.approver.slackUserId === approverSlackUserId)
    .sort((a, b) => a.requestedAt.localeCompare(b.requestedAt));
  const header: KnownBlock = { type: 'header', text: plain('Time off to approve') };
  if (mine.length === 0) return [header, { type: 'context', elements: [mrkdwn('Nothing waiting for you.')] }];
  const rows: KnownBlock[] = mine.slice(0, MAX_ROWS).flatMap((v): KnownBlock[] => [
    {
      type: 'section',
      text: mrkdwn(
        `${personText(v.requester)} — *${escapeMrkdwn(v.policyType)}*: ${formatRange(v)} (${formatWorkingDays(v.workingDays)})`,
      ),
    },
    {
      type: 'actions',
      elements: [
        timeOffButton('Approve', TIME_OFF_ACTION.approve, v.timeOffId, { style: 'primary' }),
        timeOffButton('Deny with reason…', TIME_OFF_ACTION.denyWithReason, v.timeOffId),
      ],
    },
  ]);
  return more([header, ...rows], mine.length);
};

export const upcomingTimeOffSection = (
  requesterSlackUserId: string,
  views: readonly TimeOffView[],
  today: string,
): KnownBlock[] => {
  const mine = views
    .filter(
      (v) =>
        STANDING_PHASES.has(v.phase) &&
        v.requester.slackUserId === requesterSlackUserId &&
        v.endDate >= today,
    )
    .sort((a, b) => a.startDate.localeCompare(b.startDate) || a.requestedAt.localeCompare(b.requestedAt));
  const header: KnownBlock = { type: 'header', text: plain('Your upcoming time off') };
  if (mine.length === 0) {
    return [header, { type: 'context', elements: [mrkdwn('None booked. Ask for some with `/timeoff`.')] }];
  }
  const rows: KnownBlock[] = mine.slice(0, MAX_ROWS).map((v) => ({
    type: 'section',
    text: mrkdwn(
      `*${escapeMrkdwn(v.policyType)}*: ${formatRange(v)} (${formatWorkingDays(v.workingDays)}) — ${STATUS_WORD[v.phase] ?? ''}`,
    ),
    accessory: {
      ...timeOffButton('Cancel', TIME_OFF_ACTION.cancel, v.timeOffId),
      confirm: {
        title: plain('Cancel this time off?'),
        text: plain(v.phase === 'confirmed' ? 'It is cancelled in HR too.' : 'Your approver is told.'),
        confirm: plain('Cancel it'),
        deny: plain('Keep it'),
      },
    },
  }));
  return more([header, ...rows], mine.length);
};

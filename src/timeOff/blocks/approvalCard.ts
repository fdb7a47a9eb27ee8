import type { types } from '@slack/bolt';
import {
  escapeMrkdwn,
  type KnownBlock,
  mrkdwn,
  plain,
  SLACK_LIMITS,
  type SlackMessage,
  truncate,
} from '../../slack/blocks/format.ts';
import { slackDate } from '../../slack/time.ts';
import { type CardOnCall, onCallBlocks, uncoveredConfirm } from '../coverCard.ts';
import { requestIdText, TIME_OFF_ACTION, timeOffActionsBlockId, timeOffButton } from './timeOffIds.ts';
import { formatRange, formatWorkingDays, personText, type TimeOffView } from './timeOffView.ts';

/** The requester's balance of the policy once this request is taken; null when HR could not tell. */
export type BalanceAfter = Readonly<{ policyType: string; days: number }> | null;

/** Someone else in the requester's team who is out during the request. */
export type TeammateOut = Readonly<{
  slackUserId: string | null;
  displayName: string;
  startDate: string;
  endDate: string;
}>;

export type ApprovalCardExtras = Readonly<{
  balanceAfter: BalanceAfter;
  /** From the directory and HR's who's out; at most a few are listed. */
  teammatesOut: readonly TeammateOut[];
  /** Issue 12: the requester's on-call conflicts and the cover (coverCard.ts); absent or null with incidents off. */
  onCall?: CardOnCall | null;
}>;

const MAX_TEAMMATES = 8;
const MAX_NOTE = 1000;

const formatBalance = (balance: BalanceAfter): string => {
  if (!balance) return '_HR could not tell_';
  const days = Math.round(balance.days * 10) / 10;
  const text = `${days} day${Math.abs(days) === 1 ? '' : 's'} of ${escapeMrkdwn(balance.policyType)} left`;
  return days < 0 ? `:warning: ${text} (over the allowance)` : text;
};

/** `Ben Okafor (Thu 3 Dec – Fri 4 Dec 2026), …`, or that nobody else is out. */
export const teammatesOutText = (requester: string, teammates: readonly TeammateOut[]): string => {
  if (teammates.length === 0) return `Nobody else in ${requester}’s team is out then.`;
  const listed = teammates
    .slice(0, MAX_TEAMMATES)
    .map(
      (t) =>
        `${personText(t)} (${formatRange({ startDate: t.startDate, endDate: t.endDate, startPortion: 'all_day', endPortion: 'all_day' })})`,
    );
  const more = teammates.length - listed.length;
  return `Also out in ${requester}’s team then: ${listed.join(', ')}${more > 0 ? ` and ${more} more` : ''}.`;
};

/** What happened to the request, in place of the buttons once it is decided. */
export const decisionLine = (view: TimeOffView): string | null => {
  const approver = personText(view.approver);
  switch (view.phase) {
    case 'requested':
    case 'awaitingApproval':
      return null;
    case 'approved':
      return `:white_check_mark: Approved by ${approver}. Recording it in HR…`;
    case 'submitted':
      return `:white_check_mark: Approved by ${approver}. Sent to HR, waiting for HR to show it…`;
    case 'confirmed':
      return `:white_check_mark: Approved by ${approver} and recorded in HR.`;
    case 'submissionFailed':
      return `:warning: Approved by ${approver}, but HR refused it: ${escapeMrkdwn(view.failure ?? 'no reason given')}. ${personText(view.requester)} can fix it and send it again.`;
    case 'denied':
      return `:no_entry: Denied by ${approver}${view.denyReason ? `: “${escapeMrkdwn(truncate(view.denyReason, 1000))}”` : '.'}`;
    case 'expired':
      return ':hourglass: Expired: nobody decided it in time.';
    case 'cancelling':
      return `:wastebasket: ${personText(view.requester)} is cancelling this request; cancelling it in HR…`;
    case 'cancelled':
      return `:wastebasket: Cancelled.`;
    default:
      return null;
  }
};

const approveConfirm = (onCall: CardOnCall | null): Partial<types.Button> => {
  const c = uncoveredConfirm(onCall);
  return c
    ? {
        confirm: {
          title: plain(c.title),
          text: plain(c.text),
          confirm: plain('Approve; ask the channel'),
          deny: plain('Back'),
        },
      }
    : {};
};

/**
 * The approver's DM: who, what, when, working days, the balance after this request and who else
 * in the requester's team is out then, with Approve / Deny / Deny with reason while undecided (each
 * carries only the request id; see timeOffIds.ts). Once decided the buttons give way to what
 * happened, so the same card can be updated in place.
 */
export const approvalCard = (view: TimeOffView, extras: ApprovalCardExtras): SlackMessage => {
  const requester = personText(view.requester);
  const policy = escapeMrkdwn(view.policyType);
  const when = formatRange(view);
  const days = formatWorkingDays(view.workingDays);
  const blocks: KnownBlock[] = [
    { type: 'header', text: plain('Time off request') },
    { type: 'section', text: mrkdwn(`${requester} asks for *${policy}*: ${when} (${days}).`) },
    // Issue 20: past days of a policy that may be recorded afterwards (sick), said before anything else.
    ...(view.afterTheFact
      ? [
          {
            type: 'context' as const,
            elements: [mrkdwn(':memo: Recorded after the fact: these days are already past.')],
          },
        ]
      : []),
    {
      type: 'section',
      fields: [
        mrkdwn(`*When*\n${when}`),
        mrkdwn(`*Working days*\n${days}`),
        mrkdwn(`*Balance after this request*\n${formatBalance(extras.balanceAfter)}`),
        mrkdwn(`*Policy*\n${policy}`),
      ],
    },
  ];
  if (view.description.trim() !== '') {
    blocks.push({
      type: 'section',
      text: mrkdwn(`*Note*\n${escapeMrkdwn(truncate(view.description.trim(), MAX_NOTE))}`),
    });
  }
  blocks.push({
    type: 'context',
    elements: [mrkdwn(truncate(teammatesOutText(requester, extras.teammatesOut), SLACK_LIMITS.sectionText))],
  });
  const decided = decisionLine(view);
  blocks.push(
    ...onCallBlocks(
      view.timeOffId,
      requester,
      extras.onCall ?? null,
      decided === null,
      view.phase === 'cancelled' || view.phase === 'cancelling',
    ),
  );
  if (decided === null) {
    blocks.push({
      type: 'actions',
      block_id: timeOffActionsBlockId(view.timeOffId),
      elements: [
        timeOffButton('Approve', TIME_OFF_ACTION.approve, view.timeOffId, {
          style: 'primary',
          // Issue 20: approving over an uncovered shift asks first, naming it.
          ...approveConfirm(extras.onCall ?? null),
        }),
        timeOffButton('Deny', TIME_OFF_ACTION.deny, view.timeOffId, {
          style: 'danger',
          confirm: {
            title: plain('Deny this request?'),
            text: plain('The requester is told it was denied, without a reason.'),
            confirm: plain('Deny'),
            deny: plain('Back'),
          },
        }),
        timeOffButton('Deny with reason…', TIME_OFF_ACTION.denyWithReason, view.timeOffId),
      ],
    });
    const reminder = view.remindersSent > 0 ? `Reminder ${view.remindersSent}. ` : '';
    blocks.push({
      type: 'context',
      elements: [mrkdwn(`${reminder}Expires ${slackDate(view.expiresAt)} unless you decide.`)],
    });
  } else {
    blocks.push({ type: 'section', text: mrkdwn(decided) });
  }
  // Issue 20: the request's one id (Switchboard's, then HR's once known), as every message names it.
  blocks.push({ type: 'context', elements: [mrkdwn(requestIdText(view))] });
  // The notification's text is mrkdwn too: the requester's name and HR's policy name escaped (issue 19).
  const text = `${escapeMrkdwn(view.requester.displayName || 'Someone')} asks for ${policy}: ${when.replace(/[*_]/g, '')} (${days})`;
  return { text: truncate(text, 3000), blocks };
};

import { type ApproverSkip, isHrChannelApprover, type TimeOffPerson } from '../../machines/timeOff/events.ts';
import {
  escapeMrkdwn,
  type KnownBlock,
  mrkdwn,
  type SlackMessage,
  truncate,
} from '../slack/blocks/format.ts';
import { askText } from './blocks/notices.ts';
import { formatDay, personText, type TimeOffView } from './blocks/timeOffView.ts';

/**
 * What people are told when a request's approver is found around someone away or gone, or a
 * waiting request is handed on (issue 12, capability 2), or cancelled because its requester left
 * (capability 3). Pure; dates are calendar days (no time of day, so no zone to name).
 */

const message = (text: string, extra: KnownBlock[] = []): SlackMessage => ({
  text: truncate(text.replace(/[*`]/g, ''), 3000),
  blocks: [{ type: 'section', text: mrkdwn(truncate(text, 3000)) }, ...extra],
});

const who = (p: Readonly<{ slackUserId: string | null; displayName: string; hrId?: string }>) =>
  personText(p);

/** `Dana Lee is on leave until Fri 4 Dec 2026`, `Dana Lee has left`, `… has no Slack account`. */
export const skipWords = (s: ApproverSkip): string => {
  const name = escapeMrkdwn(s.displayName || 'someone');
  switch (s.reason) {
    case 'away':
      return s.until ? `${name} is on leave until ${formatDay(s.until)}` : `${name} is on leave`;
    case 'left':
      return `${name} has left`;
    default:
      return `${name} has no Slack account Switchboard can reach`;
  }
};

const joinWords = (parts: readonly string[]): string =>
  parts.length <= 1 ? (parts[0] ?? '') : `${parts.slice(0, -1).join(', ')} and ${parts[parts.length - 1]}`;

/** `so Frank Moreau will decide`, `so HR (#people) will decide`. */
const decides = (approver: TimeOffPerson): string =>
  isHrChannelApprover(approver)
    ? `so it went to ${personText(approver)}, where anyone but you can decide`
    : `so ${who(approver)} will decide`;

/** To the requester, when their request went past someone: who, why, and who decides. */
export const routedRequesterDm = (view: TimeOffView, skipped: readonly ApproverSkip[]): SlackMessage =>
  message(
    `:twisted_rightwards_arrows: Your ${askText(view)}: ${joinWords(skipped.map(skipWords))}, ${decides(view.approver)}.`,
  );

/** To the requester, when everyone who could approve is away and no HR channel is set. */
export const waitsForAwayDm = (
  view: TimeOffView,
  until: string,
  skipped: readonly ApproverSkip[],
): SlackMessage =>
  message(
    `:hourglass_flowing_sand: Your ${askText(view)} waits for ${who(view.approver)}, who is on leave until ${formatDay(until)}${skipped.length > 0 ? `; ${joinWords(skipped.map(skipWords))}` : ''}. Nobody else in your reporting line can approve it now and Switchboard has no HR channel to send it to, so nothing is lost: it stays with ${who(view.approver)}. Ask them or HR if it cannot wait.`,
  );

/** To a manager passed over because they are away: FYI, nothing to do. */
export const skippedApproverDm = (view: TimeOffView, skip: ApproverSkip): SlackMessage =>
  message(
    `:palm_tree: ${who(view.requester)}'s ${askText(view)} went to ${who(view.approver)} instead of you, as you are on leave${skip.until ? ` until ${formatDay(skip.until)}` : ''}. Nothing for you to do.`,
  );

/** To the requester: the request waiting for someone was handed on. */
export const handedOnRequesterDm = (
  view: TimeOffView,
  from: TimeOffPerson,
  reason: 'away' | 'left',
  until: string | null,
): SlackMessage =>
  message(
    `:twisted_rightwards_arrows: Your ${askText(view)} was waiting for ${who(from)}, who ${reason === 'left' ? 'has left' : `is on leave${until ? ` until ${formatDay(until)}` : ''}`}: it was handed on, ${decides(view.approver)}.`,
  );

/** To the requester: their approver left and nobody else can approve (no HR channel). */
export const approverGoneDm = (view: TimeOffView, approver: TimeOffPerson): SlackMessage =>
  message(
    `:warning: Your ${askText(view)} was waiting for ${escapeMrkdwn(approver.displayName || 'your approver')}, who has left, and nobody else in your reporting line can approve it (Switchboard has no HR channel to send it to). It stays open: ask HR to set who you report to now, and Switchboard hands it on as soon as HR has.`,
  );

/** The old approver's card once the request was handed on: no buttons, says to whom and why. */
export const handedOnCard = (
  view: TimeOffView,
  to: TimeOffPerson,
  reason: 'away' | 'left',
  until: string | null,
): SlackMessage =>
  message(
    `:twisted_rightwards_arrows: ${who(view.requester)}'s ${askText(view)} was handed on to ${personText(to)}: ${reason === 'left' ? 'you are no longer in the company directory' : `you are on leave${until ? ` until ${formatDay(until)}` : ''}`}. Nothing for you to do.`,
  );

/** The approver's card once the request was cancelled because its requester left. */
export const leaverCancelledCard = (view: TimeOffView): SlackMessage =>
  message(
    `:wastebasket: Cancelled: ${escapeMrkdwn(view.requester.displayName || 'the requester')} left. Their ${askText(view)} no longer needs a decision.`,
  );

/** A line on the HR channel's card: why it is here and who may decide. */
export const hrChannelNote = (view: TimeOffView, skipped: readonly ApproverSkip[]): KnownBlock => ({
  type: 'context',
  elements: [
    mrkdwn(
      truncate(
        `:office: Sent to HR: nobody in ${who(view.requester)}'s reporting line can decide it${skipped.length > 0 ? ` (${joinWords(skipped.map(skipWords))})` : ''}. Any member of this channel but ${who(view.requester)} may approve or deny it.`,
        3000,
      ),
    ),
  ],
});

import type { types } from '@slack/bolt';
import {
  escapeMrkdwn,
  type KnownBlock,
  mrkdwn,
  plain,
  type SlackMessage,
  truncate,
} from '../../slack/blocks/format.ts';
import { slackDate } from '../../slack/time.ts';
import { requesterStatusMessage } from './requesterStatus.ts';
import { requestIdText, shortTimeOffId, TIME_OFF_ACTION, timeOffButton } from './timeOffIds.ts';
import {
  formatRange,
  formatWorkingDays,
  personText,
  STANDING_PHASES,
  type TimeOffView,
  withoutFullStop,
} from './timeOffView.ts';

/**
 * What Switchboard DMs about a time-off request besides the approver's card (approvalCard.ts):
 * the requester's status message (one per request, updated in place, with Cancel while there is
 * something to cancel) and the notifications of the steps that deserve one (decided, recorded in
 * HR, refused, failed, expired, cancelled), and the approver's reminders. Pure: every time shown
 * comes from a recorded fact and names its zone (UTC).
 */

const cancelButton = (view: TimeOffView): types.Button =>
  timeOffButton('Cancel request', TIME_OFF_ACTION.cancel, view.timeOffId, {
    confirm: {
      title: plain('Cancel this time off?'),
      text: plain(
        view.phase === 'requested' || view.phase === 'awaitingApproval' || view.phase === 'submissionFailed'
          ? 'Your approver is told.'
          : 'It is cancelled in HR too.',
      ),
      confirm: plain('Cancel it'),
      deny: plain('Keep it'),
    },
  });

/** `*Holiday*: Mon 7 Dec – Wed 9 Dec 2026 (3 working days)`, escaped. */
export const askText = (view: TimeOffView): string =>
  `*${escapeMrkdwn(view.policyType)}*: ${formatRange(view)} (${formatWorkingDays(view.workingDays)})`;

/** The notification text: the same words without bold and code marks (emoji names keep their `_`). */
const plainText = (text: string): string => truncate(text.replace(/[*`]/g, ''), 3000);

const message = (text: string, extra: KnownBlock[] = []): SlackMessage => ({
  text: plainText(text),
  blocks: [{ type: 'section', text: mrkdwn(truncate(text, 3000)) }, ...extra],
});

/**
 * The requester's status message: what they asked for, where it stands, to whom it went, its
 * short id, and a Cancel button while there is something to cancel. Posted once when the request
 * is made, then updated in place at every step.
 */
export const requesterStatusDm = (view: TimeOffView, note: string | null = null): SlackMessage => {
  const base = requesterStatusMessage(view);
  // The renderer's last block names the request; here it is said with the approver and when asked.
  const blocks = base.blocks.slice(0, -1);
  if (note) blocks.push({ type: 'section', text: mrkdwn(truncate(note, 3000)) });
  blocks.push({
    type: 'context',
    elements: [
      mrkdwn(
        `${requestIdText(view)} · approver ${personText(view.approver)} · asked ${slackDate(view.requestedAt)}`,
      ),
    ],
  });
  if (STANDING_PHASES.has(view.phase)) {
    blocks.push({ type: 'actions', elements: [cancelButton(view)] });
  }
  return { text: base.text, blocks };
};

/** Approved: sent at once, before HR has it (HR shows writes up to ~20 s late). */
export const approvedDm = (view: TimeOffView, by: Readonly<{ slackUserId: string; displayName: string }>) =>
  message(
    `:white_check_mark: ${personText(by)} approved your ${askText(view)}. Recording it in HR — you'll get a message when HR has it.`,
  );

export const confirmedDm = (view: TimeOffView) =>
  message(`:white_check_mark: Your ${askText(view)} is recorded in HR. Enjoy your time off!`);

export const deniedDm = (view: TimeOffView, reason: string | null) =>
  message(
    reason
      ? `:no_entry: ${personText(view.approver)} denied your ${askText(view)}: “${escapeMrkdwn(truncate(reason, 1000))}”`
      : `:no_entry: ${personText(view.approver)} denied your ${askText(view)}.`,
  );

export const expiredRequesterDm = (view: TimeOffView) =>
  message(
    `:hourglass: Your ${askText(view)} expired: ${personText(view.approver)} did not decide it in time. Ask again with \`/timeoff\` if you still need it.`,
  );

export const expiredApproverDm = (view: TimeOffView) =>
  message(
    `:hourglass: ${personText(view.requester)}'s ${askText(view)} expired before anyone decided it. They can ask again if they still need it.`,
  );

/** Cancelled by the requester (`hadHr`: it was in HR and is cancelled there too), or in HR. */
export const cancelledDm = (view: TimeOffView, by: 'requester' | 'hr', hadHr: boolean) =>
  message(
    by === 'hr'
      ? `:wastebasket: Your ${askText(view)} was cancelled in HR (someone cancelled it in the HR web app). It no longer counts as time off; talk to HR if that is a mistake, or ask again with \`/timeoff\`.`
      : hadHr
        ? `:wastebasket: Your ${askText(view)} is cancelled, in HR too.`
        : `:wastebasket: Your ${askText(view)} is cancelled; it no longer waits for ${personText(view.approver)}.`,
  );

/** HR's failures in words for people (the code, never HR's text as it came). */
export const hrFailureWords = (code: string): string => {
  switch (code) {
    case 'SB_UPSTREAM_UNAVAILABLE':
    case 'SB_TIMEOUT':
      return 'HR could not be reached';
    case 'SB_UPSTREAM_RATE_LIMITED':
      return 'HR kept asking Switchboard to slow down';
    case 'SB_UPSTREAM_AUTH':
      return "HR refused Switchboard's credentials (an admin has been alerted)";
    default:
      return 'HR did not answer as expected';
  }
};

/**
 * HR refused the submission (`refusal`: what HR said was wrong, in words) or could not be reached
 * (`unreachable`: the failure's code, in words): with "Fix and send again" and Cancel.
 */
export const submissionFailedDm = (
  view: TimeOffView,
  why: Readonly<{ kind: 'refusal'; reason: string }> | Readonly<{ kind: 'unreachable'; code: string }>,
) => {
  const text =
    why.kind === 'refusal'
      ? `:warning: ${personText(view.approver)} approved your ${askText(view)}, but HR refused to record it: *${escapeMrkdwn(withoutFullStop(truncate(why.reason, 1000)))}*. Fix it and send it again, or cancel the request.`
      : `:warning: ${personText(view.approver)} approved your ${askText(view)}, but ${hrFailureWords(why.code)}, so it is not recorded in HR. Send it again when HR is back, or cancel the request.`;
  return message(text, [
    {
      type: 'actions',
      elements: [
        timeOffButton(
          why.kind === 'refusal' ? 'Fix and send again' : 'Send again',
          TIME_OFF_ACTION.resubmit,
          view.timeOffId,
          { style: 'primary' },
        ),
        cancelButton(view),
      ],
    },
  ]);
};

/** On the status message while HR has not shown a submission it took (`sentAt`). */
export const notShownNote = (sentAt: string): string =>
  `:hourglass_flowing_sand: Sent to HR ${slackDate(sentAt)}; HR hasn't shown it yet. Switchboard keeps watching HR.`;

/** Sent, but HR never showed it within the read-after-write retries: it is still being watched. */
export const notShownDm = (view: TimeOffView, sentAt: string) =>
  message(
    `:hourglass_flowing_sand: Your ${askText(view)}: Switchboard sent it to HR ${slackDate(sentAt)} but HR hasn't shown it yet. Switchboard keeps watching HR and will tell you; check HR if it matters now.`,
  );

export const cancelFailedDm = (view: TimeOffView, words: string) =>
  message(
    `:warning: Cancelling your ${askText(view)} failed: ${escapeMrkdwn(truncate(words, 1000))}. It still stands in HR; try \`/timeoff cancel ${shortTimeOffId(view.timeOffId)}\` again later, or cancel it in HR.`,
  );

/** To the approver: the request still waits for them (its card has the buttons). */
export const reminderDm = (view: TimeOffView, reminder: number) =>
  message(
    `:bell: Reminder${reminder > 1 ? ` ${reminder}` : ''}: ${personText(view.requester)}'s ${askText(view)} has been waiting for you since ${slackDate(view.requestedAt)}. Decide on the request's message above (Approve / Deny) or from Switchboard's Home tab; it expires ${slackDate(view.expiresAt)} unless you decide.`,
  );

/** An earlier card of a request whose dates changed after HR refused it: no buttons, points to the new one. */
export const replacedCard = (view: TimeOffView): SlackMessage =>
  message(
    `:arrows_counterclockwise: ${personText(view.requester)} changed this request after HR refused it; it is now ${askText(view)}. Decide on the newer message.`,
  );

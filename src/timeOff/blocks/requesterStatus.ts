import {
  escapeMrkdwn,
  type KnownBlock,
  mrkdwn,
  type SlackMessage,
  truncate,
} from '../../slack/blocks/format.ts';
import { slackDate } from '../../slack/time.ts';
import { requestIdText, shortTimeOffId } from './timeOffIds.ts';
import {
  formatRange,
  formatWorkingDays,
  personText,
  type TimeOffView,
  withoutFullStop,
} from './timeOffView.ts';

/**
 * The requester's DM, one message updated at each step: what they asked for and where it
 * stands, in words. HR's refusals are shown as HR worded them (escaped), since the requester is
 * the one who can fix them; operator-only problems (missing permissions) never reach here.
 */
export const requesterStatusText = (view: TimeOffView): string => {
  const approver = personText(view.approver);
  switch (view.phase) {
    case 'requested':
    case 'awaitingApproval':
      return `:hourglass_flowing_sand: Waiting for ${approver} to approve. It expires ${slackDate(view.expiresAt)} if nobody decides; \`/timeoff cancel ${shortTimeOffId(view.timeOffId)}\` withdraws it.`;
    case 'approved':
      return view.retrying
        ? `:white_check_mark: ${approver} approved it. HR is not answering yet; Switchboard keeps trying to record it.`
        : `:white_check_mark: ${approver} approved it. Recording it in HR…`;
    case 'submitted':
      return `:white_check_mark: ${approver} approved it and HR has it; waiting for it to show in HR (this can take about 20 seconds).`;
    case 'confirmed':
      return `:white_check_mark: ${approver} approved it and it is recorded in HR. Enjoy your time off!`;
    case 'submissionFailed':
      return `:warning: ${approver} approved it, but HR refused to record it: *${escapeMrkdwn(withoutFullStop(view.failure ?? 'no reason given'))}*. Fix it and send it again, or cancel it with \`/timeoff cancel ${shortTimeOffId(view.timeOffId)}\`.`;
    case 'denied':
      return view.denyReason
        ? `:no_entry: ${approver} denied it: “${escapeMrkdwn(truncate(view.denyReason, 1000))}”`
        : `:no_entry: ${approver} denied it.`;
    case 'expired':
      return `:hourglass: It expired: ${approver} did not decide in time. Ask again with \`/timeoff\` if you still need it.`;
    case 'cancelling':
      return ':wastebasket: Cancelling it in HR…';
    case 'cancelled':
      return ':wastebasket: Cancelled.';
    default:
      return '';
  }
};

export const requesterStatusMessage = (view: TimeOffView): SlackMessage => {
  const ask = `*${escapeMrkdwn(view.policyType)}*: ${formatRange(view)} (${formatWorkingDays(view.workingDays)})`;
  let status = requesterStatusText(view);
  // A cancel HR refused puts the request back as it stood; say both.
  if ((view.phase === 'confirmed' || view.phase === 'submitted') && view.failure) {
    status = `${status}\n:warning: Cancelling failed, HR said: *${escapeMrkdwn(withoutFullStop(view.failure))}*. It still stands.`;
  }
  const blocks: KnownBlock[] = [
    { type: 'section', text: mrkdwn(`Your time off request — ${ask}`) },
    { type: 'section', text: mrkdwn(status) },
    { type: 'context', elements: [mrkdwn(requestIdText(view))] },
  ];
  // Notification text: mrkdwn's bold and code marks dropped; emoji names (`:hourglass_flowing_sand:`) kept whole.
  return { text: `Your time off request: ${status.replace(/[*`]/g, '')}`.slice(0, 3000), blocks };
};

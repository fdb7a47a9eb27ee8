import type { TimeOffPhase } from '../../../machines/timeOff/machine.ts';
import type { DayPortion } from '../../../machines/timeOff/workingDays.ts';
import {
  escapeMrkdwn,
  type KnownBlock,
  mrkdwn,
  type SlackMessage,
  truncate,
} from '../../slack/blocks/format.ts';
import { shortTimeOffId } from './timeOffIds.ts';
import { formatDay, formatRange, formatWorkingDays, personText, type TimeOffView } from './timeOffView.ts';

/**
 * The answers of `/timeoff` and `/whosout` people read (ephemeral): help, the ack of a request,
 * status, balance, who's out. Pure: everything comes in as arguments; anything typed or from HR is
 * escaped.
 */

export const timeOffHelp = (): string =>
  [
    '*Time off*: ask from Slack, your manager in HR approves in a DM, Switchboard records it in HR and tells you each step.',
    '• `/timeoff`: a form (type, first and last day, half days, a note).',
    '• `/timeoff &lt;policy&gt; &lt;start&gt; [&lt;end&gt;] [note]`: the same from the keyboard, e.g. `/timeoff holiday 2026-12-03 2026-12-04 Family visit`. The policy is HR’s name in any case; a day is `YYYY-MM-DD`, `today` or `tomorrow`; add `am` or `pm` after a day for its morning or afternoon only (`/timeoff holiday 2026-12-03 pm`). No end date: one day.',
    '• `/timeoff status`: your requests (short id, what, when, where each stands).',
    '• `/timeoff cancel &lt;id&gt;`: withdraw one by the short id `status` shows (after approval it is cancelled in HR too).',
    '• `/timeoff balance [policy]`: what HR says you have left, for each policy or the one named.',
    '• `/whosout [today | tomorrow | this week | next week | &lt;date&gt; | &lt;date&gt; &lt;date&gt;]`: who is out, approved and waiting apart. The kind of leave shows only for you and the people you manage.',
    'Dates are calendar days in your Slack time zone: `today` is your today.',
  ].join('\n');

/** `⏳ Asking Dana Lee to approve Holiday, Thu 3 Dec 2026 (1 working day) (id 3f9a2c)…` */
export const requestAckText = (
  input: Readonly<{
    approverName: string;
    policyType: string;
    startDate: string;
    endDate: string;
    startPortion: DayPortion;
    endPortion: DayPortion;
    workingDays: number;
    timeOffId: string;
    policyUnchecked?: boolean;
  }>,
): string =>
  `:hourglass_flowing_sand: Asking ${escapeMrkdwn(input.approverName)} to approve *${escapeMrkdwn(input.policyType)}*, ${formatRange(input)} (${formatWorkingDays(input.workingDays)}) (id \`${shortTimeOffId(input.timeOffId)}\`). Switchboard will DM you at each step; \`/timeoff cancel ${shortTimeOffId(input.timeOffId)}\` withdraws it.` +
  (input.policyUnchecked
    ? '\n:warning: HR is not answering just now, so the policy name could not be checked; HR checks it when the request is recorded.'
    : '');

const PHASE_WORDS: Readonly<Record<TimeOffPhase, string>> = {
  none: '',
  requested: 'waiting for approval',
  awaitingApproval: 'waiting for approval',
  approved: 'approved, being recorded in HR',
  submitted: 'approved, HR has it',
  confirmed: 'approved and recorded in HR',
  submissionFailed: 'HR refused to record it',
  cancelling: 'being cancelled in HR',
  denied: 'denied',
  expired: 'expired undecided',
  cancelled: 'cancelled',
};

const phaseLine = (v: TimeOffView): string => {
  const words = PHASE_WORDS[v.phase];
  switch (v.phase) {
    case 'requested':
    case 'awaitingApproval':
      return `:hourglass_flowing_sand: ${words} by ${personText(v.approver)}`;
    case 'approved':
    case 'submitted':
    case 'confirmed':
      return `:white_check_mark: ${words}`;
    case 'submissionFailed':
      return `:warning: ${words}: ${escapeMrkdwn(truncate(v.failure ?? 'no reason given', 300))}`;
    case 'denied':
      return v.denyReason
        ? `:no_entry: ${words}: “${escapeMrkdwn(truncate(v.denyReason, 300))}”`
        : `:no_entry: ${words}`;
    default:
      return `:wastebasket: ${words}`;
  }
};

const ENDED: ReadonlySet<TimeOffPhase> = new Set(['denied', 'expired', 'cancelled']);

/** How many ended requests `/timeoff status` lists besides the open ones. */
export const STATUS_RECENT_ENDED = 5;

/** `/timeoff status`: the person's open requests, then the last few that ended. */
export const timeOffStatusMessage = (requests: readonly TimeOffView[]): SlackMessage => {
  if (requests.length === 0) {
    return {
      text: 'You have no time-off requests through Switchboard yet. `/timeoff` asks for some.',
      blocks: [
        {
          type: 'section',
          text: mrkdwn('You have no time-off requests through Switchboard yet. `/timeoff` asks for some.'),
        },
      ],
    };
  }
  const open = requests.filter((r) => !ENDED.has(r.phase));
  const ended = requests.filter((r) => ENDED.has(r.phase)).slice(0, STATUS_RECENT_ENDED);
  const line = (v: TimeOffView) =>
    `\`${shortTimeOffId(v.timeOffId)}\` *${escapeMrkdwn(v.policyType)}*, ${formatRange(v)} (${formatWorkingDays(v.workingDays)}): ${phaseLine(v)}`;
  const blocks: KnownBlock[] = [];
  blocks.push({
    type: 'section',
    text: mrkdwn(
      open.length
        ? `*Your open time-off requests*\n${open.slice(0, 20).map(line).join('\n')}`
        : '*No open time-off requests.*',
    ),
  });
  if (ended.length) {
    blocks.push({ type: 'section', text: mrkdwn(`*Recently ended*\n${ended.map(line).join('\n')}`) });
  }
  blocks.push({
    type: 'context',
    elements: [mrkdwn('`/timeoff cancel &lt;id&gt;` withdraws one, by the short id in front of it.')],
  });
  const text = `Your time-off requests: ${open.length} open${ended.length ? `, ${ended.length} recently ended` : ''}.`;
  return { text, blocks };
};

export type BalanceRow = Readonly<{
  policyType: string;
  days: number | null;
  allowance?: number | undefined;
  taken?: number | undefined;
}>;

const days = (n: number): string => {
  const r = Math.round(n * 10) / 10;
  return `${r} day${Math.abs(r) === 1 ? '' : 's'}`;
};

/** `/timeoff balance [policy]`: HR's balance on `date` (the person's today in `zone`) for each policy asked. */
export const balanceMessage = (rows: readonly BalanceRow[], date: string, zone: string): SlackMessage => {
  const lines = rows.map((r) =>
    r.days === null
      ? `• *${escapeMrkdwn(r.policyType)}*: HR could not tell just now.`
      : `• *${escapeMrkdwn(r.policyType)}*: ${days(r.days)} left${r.allowance !== undefined ? ` of ${days(r.allowance)} a year` : ''}${r.taken !== undefined ? `, ${days(r.taken)} taken` : ''}.`,
  );
  const head = `*Your time-off balance in HR* (as of ${formatDay(date)}, your today in ${escapeMrkdwn(zone)})`;
  const text = `${head}\n${lines.join('\n') || 'HR lists no policy types.'}`;
  return { text: text.replace(/\*/g, ''), blocks: [{ type: 'section', text: mrkdwn(truncate(text, 3000)) }] };
};

/** One person out (or asking), from Switchboard's requests or HR. */
export type WhosOutRow = Readonly<{
  employeeHrId: string;
  slackUserId: string | null;
  displayName: string;
  /** Null: not shown to this reader (what kind of leave is the person's and their managers' business). */
  policyType: string | null;
  startDate: string;
  endDate: string;
  startPortion: DayPortion;
  endPortion: DayPortion;
  status: 'approved' | 'requested';
}>;

const MAX_ROWS = 40;

/** `/whosout`: approved and requested apart; a line when HR could not be asked. */
export const whosOutMessage = (
  input: Readonly<{
    /** The reader's days, in their Slack time zone `zone`. */
    range: Readonly<{ from: string; to: string; label: string; zone: string }>;
    rows: readonly WhosOutRow[];
    hrUnreachable: boolean;
  }>,
): SlackMessage => {
  const { range } = input;
  const when =
    range.from === range.to
      ? `${range.label === 'today' || range.label === 'tomorrow' ? `${range.label}, ` : ''}${formatDay(range.from)}`
      : `${range.label === 'this week' || range.label === 'next week' ? `${range.label}, ` : ''}${formatRange({ startDate: range.from, endDate: range.to, startPortion: 'all_day', endPortion: 'all_day' })}`;
  const line = (r: WhosOutRow) =>
    `• ${personText(r)}: ${r.policyType === null ? '' : `${escapeMrkdwn(r.policyType)}, `}${formatRange(r)}`;
  const approved = input.rows.filter((r) => r.status === 'approved');
  const requested = input.rows.filter((r) => r.status === 'requested');
  const section = (title: string, rows: readonly WhosOutRow[]) => {
    const shown = rows.slice(0, MAX_ROWS).map(line);
    const more = rows.length - shown.length;
    return `*${title}*\n${shown.join('\n')}${more > 0 ? `\n…and ${more} more` : ''}`;
  };
  const blocks: KnownBlock[] = [
    { type: 'section', text: mrkdwn(`*Who's out ${when}* (your days, ${escapeMrkdwn(range.zone)})`) },
  ];
  if (approved.length === 0 && requested.length === 0) {
    blocks.push({ type: 'section', text: mrkdwn('Nobody is out or asking to be.') });
  }
  if (approved.length)
    blocks.push({ type: 'section', text: mrkdwn(truncate(section('Out (approved)', approved), 3000)) });
  if (requested.length) {
    blocks.push({
      type: 'section',
      text: mrkdwn(truncate(section('Asked, not approved yet', requested), 3000)),
    });
  }
  if (input.hrUnreachable) {
    blocks.push({
      type: 'context',
      elements: [
        mrkdwn(
          ':warning: HR could not be asked just now: this is what Switchboard knows, which may miss time off recorded only in HR.',
        ),
      ],
    });
  }
  const text = `Who's out ${when}: ${approved.length} approved, ${requested.length} waiting for approval.${input.hrUnreachable ? ' HR could not be asked just now.' : ''}`;
  return { text: text.replace(/\*/g, ''), blocks };
};

import type { types } from '@slack/bolt';
import type { TimeOffConflicts, TimeOffContext, TimeOffCover } from '../../machines/timeOff/machine.ts';
import { escapeMrkdwn, type KnownBlock, mention, mrkdwn, plain, truncate } from '../slack/blocks/format.ts';
import { rangeOfRequest } from './absences.ts';
import { coverValue, TIME_OFF_COVER_ACTION, timeOffCoverBlockId } from './coverIds.ts';
import { formatInstant, formatSpan, scheduleText } from './coverText.ts';

/**
 * The approval card's on-call section (issue 12): the requester's shifts during the request, in
 * the approver's Slack time zone (named), and, while undecided, "Approve and cover with <First
 * name>" (the top-ranked colleague), the other ranked colleagues in a select and anyone else in a
 * users_select (with a confirm). Once approved with a cover, where each override stands.
 */
export type CardOnCall = Readonly<{
  /** The approver's time zone (IANA; UTC when Slack does not say). */
  tz: string;
  checking: 'in_progress' | 'retrying' | 'failed' | 'done';
  failure: string | null;
  conflicts: TimeOffConflicts | null;
  cover: TimeOffCover | null;
  /** When the request's last day ends (ISO), to say when the service's answer stopped short of it. */
  requestEnd: string | null;
}>;

/** The card's on-call facts, from the request's folded context. */
export const cardOnCallOf = (context: TimeOffContext, tz: string): CardOnCall => {
  const failure = context.conflictCheckFailure ?? null;
  const conflicts = context.conflicts ?? null;
  return {
    tz,
    checking: conflicts ? 'done' : failure?.final ? 'failed' : failure ? 'retrying' : 'in_progress',
    failure: failure ? failure.message || failure.code : null,
    conflicts,
    cover: context.cover ?? null,
    requestEnd: context.request ? rangeOfRequest(context.request).until.toISOString() : null,
  };
};

const MAX_SHIFTS = 10;

const shiftLine = (s: TimeOffConflicts['shifts'][number], tz: string): string => {
  const policy = s.escalationPolicyName
    ? `${escapeMrkdwn(s.escalationPolicyName)}, level ${s.level}`
    : `level ${s.level}`;
  const when = formatSpan(s.start, s.end, tz);
  return s.scheduleId === null
    ? `• The *${escapeMrkdwn(s.escalationPolicyName ?? s.escalationPolicyId)}* escalation policy names them directly (level ${s.level}), ${when}: no override can cover that; change the policy.`
    : `• ${scheduleText(s)} (${policy}): ${when}`;
};

const coverLines = (cover: TimeOffCover, tz: string, cancelled: boolean): string[] => {
  const who = mention(cover.slackUserId);
  if (cover.declinedBy && !cancelled) {
    // The cover said they can't (issue 20): the shifts are uncovered again.
    return [
      `:warning: *The cover fell through*: ${who} can’t cover, so these shifts are *uncovered again*:`,
      ...(cover.slots ?? []).map((s) => `• ${scheduleText(s)}, ${formatSpan(s.start, s.end, tz)}`),
    ];
  }
  if (!cover.slots) return [`:hourglass: ${who} covers: creating the overrides in the incident service…`];
  const lines = cover.slots.map((s) => {
    const when = formatSpan(s.start, s.end, tz);
    switch (s.status) {
      case 'created':
        return `:white_check_mark: ${scheduleText(s)}, ${when}: covered by ${who}${s.overrideId ? ` (override \`${escapeMrkdwn(s.overrideId)}\`)` : ''}`;
      case 'failed':
        return `:warning: ${scheduleText(s)}, ${when}: *still uncovered*: ${escapeMrkdwn(truncate(s.problem ?? 'refused', 200))}`;
      case 'dropped':
        return `:heavy_minus_sign: ${scheduleText(s)}, ${when}: not created (the time off was cancelled)`;
      default:
        return `:hourglass: ${scheduleText(s)}, ${when}: creating the override for ${who}…`;
    }
  });
  return cover.withdrawn || cancelled
    ? [
        ...lines,
        ':wastebasket: No longer needed: Switchboard removes its overrides from the incident service and tells the schedules’ channels.',
      ]
    : lines;
};

/** The section's blocks (none when `onCall` is null: incidents are switched off). */
export const onCallBlocks = (
  timeOffId: string,
  requester: string,
  onCall: CardOnCall | null,
  undecided: boolean,
  /** The request is cancelled (or being cancelled): its cover is withdrawn. */
  cancelled = false,
): KnownBlock[] => {
  if (!onCall) return [];
  const lines: string[] = ['*On-call conflicts*'];
  const c = onCall.conflicts;
  switch (onCall.checking) {
    case 'in_progress':
      lines.push(`:hourglass: Checking ${requester}’s on-call shifts…`);
      break;
    case 'retrying':
      lines.push(':warning: On-call conflicts could not be checked yet; Switchboard will try again.');
      break;
    case 'failed':
      lines.push(
        `:warning: On-call conflicts could not be checked (${escapeMrkdwn(truncate(onCall.failure ?? 'the incident service did not answer', 200))}). Check the rota before approving.`,
      );
      break;
    default:
      break;
  }
  const blocks: KnownBlock[] = [];
  if (c) {
    if (c.unmapped) lines.push(`${requester} has no user in the incident service: no on-call shifts known.`);
    else if (c.shifts.length === 0)
      lines.push(`:white_check_mark: ${requester} is not on call during this time off.`);
    else {
      lines.push(`${requester} is on call during this time off (times in ${escapeMrkdwn(onCall.tz)}):`);
      for (const s of c.shifts.slice(0, MAX_SHIFTS)) lines.push(shiftLine(s, onCall.tz));
      if (c.shifts.length > MAX_SHIFTS) lines.push(`…and ${c.shifts.length - MAX_SHIFTS} more.`);
    }
    if (
      !c.unmapped &&
      onCall.requestEnd !== null &&
      Date.parse(c.knownUntil) < Date.parse(onCall.requestEnd)
    ) {
      lines.push(
        `The incident service publishes on-call shifts only until ${formatInstant(c.knownUntil, onCall.tz)}: later ones are not known yet.`,
      );
    }
  }
  blocks.push({ type: 'section', text: mrkdwn(truncate(lines.join('\n'), 3000)) });
  if (onCall.cover) {
    blocks.push({
      type: 'section',
      text: mrkdwn(truncate(coverLines(onCall.cover, onCall.tz, cancelled).join('\n'), 3000)),
    });
  }
  const coverable = c?.shifts.some((s) => s.scheduleId !== null) ?? false;
  if (undecided && c && coverable) {
    const elements: (types.Button | types.StaticSelect | types.UsersSelect)[] = [];
    const [top, ...others] = c.candidates;
    if (top) {
      elements.push({
        type: 'button',
        text: plain(truncate(`Approve and cover with ${top.firstName}`, 75)),
        action_id: TIME_OFF_COVER_ACTION.approveCover,
        value: coverValue(timeOffId, top.slackUserId),
      });
    }
    if (others.length > 0) {
      elements.push({
        type: 'static_select',
        action_id: TIME_OFF_COVER_ACTION.approveCoverPick,
        placeholder: plain('Approve and cover with…'),
        options: others.slice(0, 100).map((o) => ({
          text: plain(
            truncate(
              `${o.displayName}${o.nightPages === null ? '' : ` (${o.nightPages} night page${o.nightPages === 1 ? '' : 's'} in 30 days)`}`,
              75,
            ),
          ),
          value: coverValue(timeOffId, o.slackUserId),
        })),
      });
    }
    if (c.candidates.length > 0) {
      // Issue 20: every ranked colleague asked by DM; the first to accept covers.
      elements.push({
        type: 'button',
        text: plain('Approve and ask for cover'),
        action_id: TIME_OFF_COVER_ACTION.approveAsk,
        value: timeOffId,
      });
    }
    elements.push({
      type: 'users_select',
      action_id: TIME_OFF_COVER_ACTION.approveCoverUser,
      placeholder: plain('Approve; someone else covers…'),
      confirm: {
        title: plain('Approve with this cover?'),
        text: plain('Approves the time off and puts the person you picked on call for these shifts.'),
        confirm: plain('Approve and cover'),
        deny: plain('Back'),
      },
    });
    blocks.push({ type: 'actions', block_id: timeOffCoverBlockId(timeOffId), elements });
    if (!top) {
      blocks.push({
        type: 'context',
        elements: [
          mrkdwn('No colleague on these schedules is free then (away, or on call themselves): pick someone.'),
        ],
      });
    }
  }
  return blocks;
};

/**
 * Issue 20: plain Approve over shifts nobody covers asks first, naming them (in the approver's
 * zone): once approved, each is posted as a hole in its schedule's channel. Null: nothing to confirm.
 */
export const uncoveredConfirm = (
  onCall: CardOnCall | null,
): Readonly<{ title: string; text: string }> | null => {
  const shifts = onCall?.conflicts?.shifts.filter((s) => s.scheduleId !== null) ?? [];
  if (!onCall || onCall.cover || shifts.length === 0) return null;
  const [first] = shifts;
  if (!first) return null;
  const more = shifts.length > 1 ? ` and ${shifts.length - 1} more` : '';
  const name = first.scheduleName ?? first.scheduleId ?? 'an on-call schedule';
  return {
    title: 'Approve with no cover?',
    text: truncate(
      `They are on call: ${name}, ${formatSpan(first.start, first.end, onCall.tz)}${more}. Nobody covers it: the schedule's channel is asked to.`,
      300,
    ),
  };
};

import type { CoverSlotState, CoverState } from '../../machines/timeOff/cover.ts';
import {
  escapeMrkdwn,
  type KnownBlock,
  mention,
  mrkdwn,
  plain,
  type SlackMessage,
  truncate,
} from '../slack/blocks/format.ts';
import { knownZone } from '../slack/time.ts';
import { TIME_OFF_COVER_ACTION } from './coverIds.ts';

/**
 * Words and times of the cover (issue 12): on-call shifts and overrides, in the reader's Slack time
 * zone, named (`Mon 30 Nov 09:00 – Fri 4 Dec 17:00 CET`); in a channel, UTC (named too).
 */

const partsOf = (iso: string, tz: string) => {
  const parts = new Intl.DateTimeFormat('en-GB', {
    timeZone: tz,
    weekday: 'short',
    day: 'numeric',
    month: 'short',
    year: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
    timeZoneName: 'short',
  }).formatToParts(new Date(iso));
  const get = (type: string) => parts.find((p) => p.type === type)?.value ?? '';
  return {
    day: `${get('weekday')} ${get('day')} ${get('month')}`,
    year: get('year'),
    time: `${get('hour')}:${get('minute')}`,
    zone: get('timeZoneName'),
  };
};

/** `Mon 30 Nov 09:00 – Fri 4 Dec 17:00 CET (Europe/Berlin)`; the zone is always named. */
export const formatSpan = (start: string, end: string, tz: string): string => {
  const zone = knownZone(tz);
  if (Number.isNaN(Date.parse(start)) || Number.isNaN(Date.parse(end))) {
    return `${escapeMrkdwn(start)} – ${escapeMrkdwn(end)}`;
  }
  const a = partsOf(start, zone);
  const b = partsOf(end, zone);
  const sameZoneName = a.zone === b.zone;
  const left = `${a.day} ${a.time}${sameZoneName ? '' : ` ${a.zone}`}`;
  const right = a.day === b.day ? `${b.time} ${b.zone}` : `${b.day} ${b.year} ${b.time} ${b.zone}`;
  const named = zone === 'UTC' || b.zone === zone ? '' : ` (${zone})`;
  return `${left} – ${right}${named}`;
};

/** `Mon 1 Mar 2027 01:00 CET (Europe/Warsaw)`: one instant, its zone named. */
export const formatInstant = (iso: string, tz: string): string => {
  const zone = knownZone(tz);
  if (Number.isNaN(Date.parse(iso))) return escapeMrkdwn(iso);
  const a = partsOf(iso, zone);
  return `${a.day} ${a.year} ${a.time} ${a.zone}${zone === 'UTC' || a.zone === zone ? '' : ` (${zone})`}`;
};

/** A schedule for people to read. */
export const scheduleText = (
  s: Readonly<{ scheduleName: string | null; scheduleId: string | null }>,
): string =>
  s.scheduleName
    ? `*${escapeMrkdwn(s.scheduleName)}*`
    : s.scheduleId
      ? `schedule \`${escapeMrkdwn(s.scheduleId)}\``
      : 'the escalation policy';

/** The Slack time zone of each person: the kernel's cached look-up (src/slack/time.ts `readerZones`); UTC when Slack does not say. */
export type TimeZones = Readonly<{ of(slackUserId: string): Promise<string> }>;

const slotLine = (slot: CoverSlotState, who: string, tz: string): string => {
  const when = formatSpan(slot.start, slot.end, tz);
  switch (slot.status) {
    case 'created':
      return `:white_check_mark: ${scheduleText(slot)}, ${when}: covered by ${who}${slot.overrideId ? ` (override \`${escapeMrkdwn(slot.overrideId)}\`)` : slot.alreadyThere ? ' (already on call then)' : ''}`;
    case 'failed':
      return `:warning: ${scheduleText(slot)}, ${when}: *still uncovered*: ${escapeMrkdwn(truncate(slot.problem ?? 'the incident service refused it', 300))}`;
    case 'dropped':
      return `:heavy_minus_sign: ${scheduleText(slot)}, ${when}: not created (the cover was withdrawn)`;
    default:
      return `:hourglass: ${scheduleText(slot)}, ${when}: being created…`;
  }
};

const message = (lines: readonly string[]): SlackMessage => {
  const text = truncate(lines.join('\n'), 3000);
  return {
    text: truncate(text.replace(/[*`]/g, ''), 3000),
    blocks: [{ type: 'section', text: mrkdwn(text) }],
  };
};

/** The outcome of a cover, for the approver and the absent person: exactly which shifts are covered and which are not. */
export const coverOutcomeDm = (state: CoverState, tz: string): SlackMessage => {
  const d = state.details;
  if (!d) return message(['Cover: nothing recorded.']);
  const who = mention(d.cover.slackUserId);
  const failed = state.slots.filter((s) => s.status === 'failed');
  const created = state.slots.filter((s) => s.status === 'created');
  const headline =
    failed.length === 0
      ? `:white_check_mark: ${who} now covers ${mention(d.absent.slackUserId)}’s on-call shifts (${created.length} override${created.length === 1 ? '' : 's'} in the incident service).`
      : created.length === 0
        ? `:warning: ${mention(d.absent.slackUserId)}’s on-call shifts are *still uncovered*: the incident service took none of the overrides for ${who}.`
        : `:warning: ${who} covers only part of ${mention(d.absent.slackUserId)}’s on-call shifts: ${failed.length} of ${state.slots.length} *still uncovered*.`;
  const tail =
    failed.length > 0 ? ['Cover the uncovered shifts in the incident service, or ask someone else to.'] : [];
  return message([headline, ...state.slots.map((s) => slotLine(s, who, tz)), ...tail]);
};

/** What became of a withdrawn cover's override (issue 20: Switchboard removes it; by hand when it cannot). */
export const removalWords = (s: CoverSlotState): string => {
  const id = s.overrideId ? `override \`${escapeMrkdwn(s.overrideId)}\`` : null;
  if (!id) {
    return 'override id not known (Switchboard found them already on call then): remove their override for that span if there is one';
  }
  switch (s.removal?.status) {
    case 'removed':
      return s.removal.outcome === 'truncated'
        ? `${id} ended now (it had started)`
        : s.removal.outcome === 'gone'
          ? `${id} was already removed`
          : `${id} removed`;
    case 'failed':
      return `${id} *could not be removed* (${escapeMrkdwn(truncate(s.removal.problem ?? 'refused', 200))}): please remove it in the incident service`;
    case 'pending':
      return `${id} being removed…`;
    default:
      return `${id}: please remove it in the incident service`;
  }
};

/** In a schedule's channel: what became of the overrides now that the cover was withdrawn. */
export const coverWithdrawnNotice = (
  state: CoverState,
  slots: readonly CoverSlotState[],
  late = false,
): SlackMessage => {
  const d = state.details;
  const absent = d ? mention(d.absent.slackUserId) : 'someone';
  const who = d ? mention(d.cover.slackUserId) : 'the cover';
  const why = `${absent}’s cover is no longer needed (${escapeMrkdwn(state.withdrawnReason ?? 'withdrawn')})`;
  const lines = slots.map(
    (s) => `• ${scheduleText(s)}: ${who}, ${formatSpan(s.start, s.end, 'UTC')}, ${removalWords(s)}`,
  );
  return message([
    late
      ? `:wastebasket: One more override: it was created just as ${why}.`
      : `:wastebasket: ${why}: ${who} no longer covers. Their overrides in the incident service:`,
    ...lines,
  ]);
};

/** To whoever asked for the cover: what the channels were told (or, with no channel, the list itself). */
export const coverWithdrawnDm = (
  state: CoverState,
  channels: readonly string[],
  noChannel: readonly CoverSlotState[],
  tz: string,
): SlackMessage => {
  const d = state.details;
  const absent = d ? mention(d.absent.slackUserId) : 'someone';
  const created = state.slots.filter((s) => s.status === 'created');
  const dropped = state.slots.filter((s) => s.status === 'dropped');
  const lines = [
    `:wastebasket: The cover of ${absent}’s on-call shifts by ${d ? mention(d.cover.slackUserId) : 'someone'} is no longer needed: ${escapeMrkdwn(state.withdrawnReason ?? 'it was withdrawn')}.`,
  ];
  if (created.length === 0) lines.push('No override had been created: nothing to remove.');
  if (channels.length > 0)
    lines.push(`Told ${channels.map((c) => `<#${c}>`).join(', ')} what became of the overrides.`);
  if (noChannel.length > 0) {
    lines.push('No channel follows these schedules; their overrides:');
    for (const s of noChannel) {
      lines.push(`• ${scheduleText(s)}, ${formatSpan(s.start, s.end, tz)}, ${removalWords(s)}`);
    }
  }
  if (dropped.length > 0)
    lines.push(`${dropped.length} override${dropped.length === 1 ? ' was' : 's were'} not created.`);
  return message(lines);
};

/** Whose shifts, and why they are free: `<@Ana>’s on-call shifts during their leave`. */
const whoseShifts = (state: CoverState): string => {
  const d = state.details;
  if (!d) return 'someone’s on-call shifts';
  return d.reason.kind === 'leaver'
    ? `${mention(d.absent.slackUserId)}’s on-call shifts (they left)`
    : `${mention(d.absent.slackUserId)}’s on-call shifts during their leave`;
};

const toldLine = (slot: CoverSlotState, tz: string, withdrawn: boolean): string => {
  const when = formatSpan(slot.start, slot.end, tz);
  const policy = slot.escalationPolicyName
    ? ` (${escapeMrkdwn(slot.escalationPolicyName)}${slot.level === null ? '' : `, level ${slot.level}`})`
    : '';
  const head = `• ${scheduleText(slot)}${policy}, ${when}`;
  if (withdrawn) return `${head}: not yours`;
  switch (slot.status) {
    case 'created':
      return `${head}: you are on call (the override is in the incident service)`;
    case 'failed':
      return `${head}: :warning: the incident service refused the override, so you are *not* on call for it`;
    case 'dropped':
      return `${head}: not created`;
    default:
      return `${head}: the override is being created…`;
  }
};

/**
 * The cover's own DM (issue 20): told at once which shifts they now cover, whose, in their zone,
 * with a **Can't cover** button (value: the cover id; only they may press it, the decider checks).
 * Updated in place as the overrides land, and once the cover is withdrawn or declined.
 */
export const coverToldDm = (state: CoverState, tz: string): SlackMessage => {
  const d = state.details;
  if (!d) return message(['Cover: nothing recorded.']);
  const withdrawn = state.withdrawnAt !== null;
  const asker = mention(d.requestedBy);
  const head = state.declinedBy
    ? `:ok_hand: You said you can’t cover ${whoseShifts(state)}. ${asker} was told, and the shifts are open again:`
    : withdrawn
      ? `:wastebasket: You no longer cover ${whoseShifts(state)}: ${escapeMrkdwn(state.withdrawnReason ?? 'the cover was withdrawn')}.`
      : `:calendar: You now cover ${whoseShifts(state)} (asked by ${asker}). Times in ${escapeMrkdwn(knownZone(tz))}:`;
  const lines = [head, ...state.slots.slice(0, 20).map((s) => toldLine(s, tz, withdrawn))];
  if (state.slots.length > 20) lines.push(`…and ${state.slots.length - 20} more.`);
  const text = truncate(lines.join('\n'), 3000);
  const blocks: KnownBlock[] = [{ type: 'section', text: mrkdwn(text) }];
  const open = !withdrawn && state.slots.some((s) => s.status !== 'failed');
  if (open) {
    blocks.push({
      type: 'actions',
      elements: [
        {
          type: 'button',
          text: plain('Can’t cover'),
          style: 'danger',
          action_id: TIME_OFF_COVER_ACTION.cant,
          value: d.coverId,
          confirm: {
            title: plain('You can’t cover these shifts?'),
            text: plain(
              'The shifts go back to being uncovered, and whoever asked you is told so they can find someone else.',
            ),
            confirm: plain('I can’t cover'),
            deny: plain('Back'),
          },
        },
      ],
    });
  }
  return { text: truncate(text.replace(/[*`]/g, ''), 3000), blocks };
};

/** To whoever asked: the cover can't, the shifts are uncovered again (in the reader's zone). */
export const coverDeclinedDm = (state: CoverState, channels: readonly string[], tz: string): SlackMessage => {
  const d = state.details;
  if (!d) return message(['Cover: nothing recorded.']);
  const created = state.slots.filter((s) => s.status === 'created');
  const lines = [
    `:warning: ${mention(d.cover.slackUserId)} can’t cover ${whoseShifts(state)} after all: they are *uncovered again*:`,
    ...state.slots.slice(0, 20).map((s) => `• ${scheduleText(s)}, ${formatSpan(s.start, s.end, tz)}`),
  ];
  for (const s of created) lines.push(`${mention(d.cover.slackUserId)}’s ${removalWords(s)}.`);
  if (channels.length > 0)
    lines.push(
      `Posted in ${channels.map((c) => `<#${c}>`).join(', ')} with a *Cover…* button: the first colleague to take it covers it.`,
    );
  lines.push(
    d.reason.kind === 'time_off'
      ? 'Pick someone else on the request’s card above, or cover the shifts in the incident service.'
      : 'Pick someone else with the leaver report’s *Cover…* button, or cover the shifts in the incident service.',
  );
  return message(lines);
};

import {
  escapeMrkdwn,
  type KnownBlock,
  type ModalView,
  mrkdwn,
  plain,
  type SlackMessage,
  truncate,
} from '../../slack/blocks/format.ts';
import { slackDate } from '../../slack/time.ts';
import type { LeaverReport, LeaverShift } from '../leavers.events.ts';

/**
 * The leaver report (issue 12, capability 3) in a channel subscribed to an affected service: the
 * leaver's upcoming on-call shifts there, each with a **Cover…** button, and the escalation
 * policies still naming them; and the cover form (a `users_select`).
 *
 * Times are Slack date tokens, which every reader sees in their own time zone; the fallback text
 * (notifications, old clients) names UTC.
 */
export const LEAVER_ACTION = { cover: 'timeoff_leaver_cover' } as const;
export const LEAVER_VIEW = { cover: 'timeoff_leaver_cover_form' } as const;
export const LEAVER_FIELD = { block: 'leaver_cover_who', action: 'leaver_cover_who_select' } as const;

const WEEKDAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** `Mon 30 Nov 00:00 UTC`. */
export const utcText = (iso: string): string => {
  const d = new Date(iso);
  const hh = String(d.getUTCHours()).padStart(2, '0');
  const mm = String(d.getUTCMinutes()).padStart(2, '0');
  return `${WEEKDAYS[d.getUTCDay()]} ${d.getUTCDate()} ${MONTHS[d.getUTCMonth()]} ${hh}:${mm} UTC`;
};

/** A Slack date token: the reader's own time zone, UTC in the fallback (src/slack/time.ts). */
const when = (iso: string): string => slackDate(iso);

export const shiftLine = (s: LeaverShift): string =>
  `*${escapeMrkdwn(s.scheduleName ?? s.scheduleId)}*${s.escalationPolicyName ? ` (${escapeMrkdwn(s.escalationPolicyName)}${s.level ? `, level ${s.level}` : ''})` : ''}: ${when(s.start)} → ${when(s.end)}`;

/** The button's value: which report and which of its shifts. Checked against the record on click. */
export const coverButtonValue = (hrId: string, index: number): string => JSON.stringify({ hrId, index });

export const readCoverButtonValue = (value: unknown): { hrId: unknown; index: unknown } | null => {
  if (typeof value !== 'string' || value.length > 200) return null;
  try {
    const v = JSON.parse(value) as unknown;
    return typeof v === 'object' && v !== null ? (v as { hrId: unknown; index: unknown }) : null;
  } catch {
    return null;
  }
};

/** The report as one channel sees it: only its shifts and policies. */
/** Issue 20: who covers a reported shift (its ask was taken), by index; shown instead of its Cover… button. */
export type LeaverShiftCovers = ReadonlyMap<
  number,
  Readonly<{ cover: string; by: string } | { closed: 'expired' | 'cancelled' }>
>;

export const leaverReportMessage = (
  report: LeaverReport,
  part: Readonly<{ shifts: readonly number[]; policies: readonly string[]; incidents?: readonly number[] }>,
  covers: LeaverShiftCovers = new Map(),
): SlackMessage => {
  const who = report.slackUserId ? `<@${report.slackUserId}>` : escapeMrkdwn(report.displayName);
  const name = escapeMrkdwn(report.displayName || report.hrId);
  const shifts = report.shifts.filter((s) => part.shifts.includes(s.index));
  const policies = report.policies.filter((p) => part.policies.includes(p.id));
  const head = `:wave: *${name}* (${who}) has left, says HR.${report.phoneForgotten ? ' Switchboard forgot their phone and no longer pages them.' : ''}`;
  const blocks: KnownBlock[] = [{ type: 'section', text: mrkdwn(head) }];
  const lines = [head];
  if (shifts.length > 0) {
    const title = `*Their upcoming on-call shifts* (until ${utcText(report.until)}): cover each, or the rota has a hole.`;
    blocks.push({ type: 'section', text: mrkdwn(title) });
    lines.push(title);
    for (const s of shifts) {
      const covered = covers.get(s.index);
      if (covered && 'cover' in covered) {
        const by = covered.by === covered.cover ? '' : ` (picked by <@${covered.by}>)`;
        blocks.push({
          type: 'section',
          text: mrkdwn(`• ${shiftLine(s)}\n:white_check_mark: Covered by <@${covered.cover}>${by}.`),
        });
      } else if (covered) {
        blocks.push({
          type: 'section',
          text: mrkdwn(`• ${shiftLine(s)}\n:warning: Nobody covered it before it started.`),
        });
      } else {
        blocks.push({
          type: 'section',
          text: mrkdwn(`• ${shiftLine(s)}`),
          accessory: {
            type: 'button',
            action_id: LEAVER_ACTION.cover,
            text: plain('Cover…'),
            value: coverButtonValue(report.hrId, s.index),
          },
        });
      }
      lines.push(`• ${s.scheduleName ?? s.scheduleId}: ${utcText(s.start)} → ${utcText(s.end)}`);
    }
  }
  if (policies.length > 0) {
    const list = policies.map((p) => `• *${escapeMrkdwn(p.name ?? p.id)}*, level ${p.level}`).join('\n');
    const text = `*Escalation policies still naming them* (edit them in the incident service):\n${list}`;
    blocks.push({ type: 'section', text: mrkdwn(text) });
    lines.push(text);
  }
  const incidents = (report.incidents ?? []).filter((i) => part.incidents?.includes(i.index));
  if (incidents.length > 0) {
    const list = incidents
      .map((i) =>
        i.number === null
          ? `• ${escapeMrkdwn(i.title)} (${i.status})`
          : `• #${i.number} ${escapeMrkdwn(i.title)} (${i.status}): \`/incident reassign ${i.number}\``,
      )
      .join('\n');
    const text = `*Open incidents still assigned to them*: hand each on to someone on call:\n${list}`;
    blocks.push({ type: 'section', text: mrkdwn(text) });
    lines.push(text);
  }
  return { text: lines.join('\n'), blocks };
};

/** The cover form: who covers the shift. `private_metadata` names the report and the shift. */
export const leaverCoverModal = (
  report: LeaverReport,
  shift: LeaverShift,
  channel: string,
  /**
   * Issue 20: who may be picked (the schedule's colleagues, never the leaver nor anyone who left):
   * a select of them; none known: a users_select (the form still refuses the leaver).
   */
  colleagues: readonly Readonly<{ slackUserId: string; displayName: string }>[] = [],
): ModalView => ({
  type: 'modal',
  callback_id: LEAVER_VIEW.cover,
  title: plain('Cover a shift'),
  submit: plain('Cover'),
  close: plain('Cancel'),
  private_metadata: JSON.stringify({ hrId: report.hrId, index: shift.index, channel }),
  blocks: [
    {
      type: 'section',
      text: mrkdwn(
        `${escapeMrkdwn(report.displayName || report.hrId)} has left. Who covers this shift?\n${shiftLine(shift)}`,
      ),
    },
    {
      type: 'input',
      block_id: LEAVER_FIELD.block,
      label: plain('Covered by'),
      element:
        colleagues.length > 0
          ? {
              type: 'static_select',
              action_id: LEAVER_FIELD.action,
              placeholder: plain('Pick someone'),
              options: colleagues.slice(0, 100).map((c) => ({
                text: plain(truncate(c.displayName || c.slackUserId, 75)),
                value: c.slackUserId,
              })),
            }
          : { type: 'users_select', action_id: LEAVER_FIELD.action, placeholder: plain('Pick someone') },
    },
  ],
});

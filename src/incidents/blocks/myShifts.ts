import type { OnCallShift } from '../../lifecycles/ports.ts';
import { type KnownBlock, mrkdwn, plain } from '../../slack/blocks/format.ts';
import { escapeMrkdwn, truncate } from '../../slack/text.ts';
import { slackDate } from '../../slack/time.ts';
import { INCIDENT_ACTION } from './incidentIds.ts';

/**
 * Issue 20 item 4: **My shifts** in App Home (the viewer's on-call shifts over the next 14 days,
 * covers included: the incident service's final rota) with "Ask for cover" on each, and what the
 * button opens. The button's value names the shift (`v1|<start>|<end>|<first day>|<last day>`,
 * the days in the viewer's zone); the listener parses it as hostile and shows it only to the one
 * who clicked.
 */
export const MY_SHIFTS_DAYS = 14;
const MAX_SHIFTS = 12;

/** `YYYY-MM-DD` of an instant in a zone (UTC when the zone is unknown). */
export const dayIn = (at: Date, timeZone: string): string => {
  const format = (tz: string) =>
    new Intl.DateTimeFormat('en-CA', { timeZone: tz, year: 'numeric', month: '2-digit', day: '2-digit' });
  try {
    return format(timeZone).format(at);
  } catch {
    return format('UTC').format(at);
  }
};

export type AskCoverValue = Readonly<{ start: Date; end: Date; firstDay: string; lastDay: string }>;

export const askCoverValue = (shift: Readonly<{ start: Date; end: Date }>, timeZone: string): string =>
  [
    'v1',
    shift.start.toISOString(),
    shift.end.toISOString(),
    dayIn(shift.start, timeZone),
    dayIn(new Date(shift.end.getTime() - 1), timeZone),
  ].join('|');

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const DAY = /^\d{4}-\d{2}-\d{2}$/;

/** The button's value, or null when it is not one this surface wrote. */
export const parseAskCoverValue = (raw: unknown): AskCoverValue | null => {
  if (typeof raw !== 'string' || raw.length > 200) return null;
  const [v, start, end, firstDay, lastDay, ...rest] = raw.split('|');
  if (v !== 'v1' || rest.length > 0 || !start || !end || !firstDay || !lastDay) return null;
  if (!ISO.test(start) || !ISO.test(end) || !DAY.test(firstDay) || !DAY.test(lastDay)) return null;
  const s = new Date(start);
  const e = new Date(end);
  if (Number.isNaN(s.getTime()) || Number.isNaN(e.getTime()) || e <= s || lastDay < firstDay) return null;
  return { start: s, end: e, firstDay, lastDay };
};

type Dated = OnCallShift & Readonly<{ start: Date; end: Date }>;

/** The viewer's shifts, one row each (a schedule named at several levels shown once). */
export const myShiftsBlocks = (
  input: Readonly<{ shifts: readonly OnCallShift[] | null; timeZone: string; unreadable?: boolean }>,
): KnownBlock[] => {
  const blocks: KnownBlock[] = [
    { type: 'section', text: mrkdwn(`*My shifts* (next ${MY_SHIFTS_DAYS} days, covers included)`) },
  ];
  if (input.shifts === null) {
    blocks.push({
      type: 'context',
      elements: [mrkdwn('The incident service did not answer just now: open this tab again in a minute.')],
    });
    return blocks;
  }
  const seen = new Set<string>();
  const dated = input.shifts.filter((s): s is Dated => {
    if (!s.schedule || !s.start || !s.end) return false;
    const key = `${s.schedule.id}|${s.start.toISOString()}|${s.end.toISOString()}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  if (dated.length === 0) {
    blocks.push({ type: 'context', elements: [mrkdwn('No on-call shifts for you in the next 14 days.')] });
    return blocks;
  }
  for (const s of dated.slice(0, MAX_SHIFTS)) {
    const name = escapeMrkdwn(truncate(s.schedule?.name ?? 'A schedule', 100));
    blocks.push({
      type: 'section',
      text: mrkdwn(`*${name}* (level ${s.level}): ${slackDate(s.start)} to ${slackDate(s.end)}`),
      accessory: {
        type: 'button',
        action_id: INCIDENT_ACTION.askCover,
        text: plain('Ask for cover'),
        value: askCoverValue(s, input.timeZone),
      },
    } as KnownBlock);
  }
  if (dated.length > MAX_SHIFTS) {
    blocks.push({ type: 'context', elements: [mrkdwn(`…and ${dated.length - MAX_SHIFTS} more.`)] });
  }
  return blocks;
};

/**
 * What "Ask for cover" shows the one who clicked (App Home has no response_url): a modal, opened at
 * once while the colleagues are asked, then updated with the answer in words (`text`: mrkdwn, its
 * user-supplied parts already escaped).
 */
export const askCoverModal = (text: string) => ({
  type: 'modal' as const,
  title: plain('Ask for cover'),
  close: plain('OK'),
  blocks: [{ type: 'section', text: mrkdwn(truncate(text, 3000)) }] as KnownBlock[],
});

/** The modal's first words, while the colleagues are being asked. */
export const askingForCoverText = (value: AskCoverValue): string =>
  `:hourglass_flowing_sand: Asking your colleagues to cover your shift ${slackDate(value.start)} to ${slackDate(value.end)}…`;

import type { TimeOffAsk } from '../../machines/timeOff/events.ts';
import { isIsoDate } from '../../machines/timeOff/workingDays.ts';
import { escapeMrkdwn, truncate } from '../../src/slack/blocks/format.ts';
import { dayIn } from '../../src/timeOff/localDays.ts';

/**
 * Pure parsing of what people type after `/timeoff` and `/whosout`. Dates are the person's own
 * calendar days: `today` is the date of the command in their Slack time zone (`todayIn`, computed
 * by the caller from the clock and the zone; src/timeOff/localDays.ts). Every problem comes back in
 * words naming what was wrong, with anything the person typed escaped for mrkdwn.
 *
 * `/timeoff <policy> <start> [<end>] [note]`:
 * - `<policy>`: one of HR's policy types, any case (`holiday`, `Sick`); several words allowed;
 * - a day: `YYYY-MM-DD`, `today` or `tomorrow`, optionally followed by `am` (the morning only) or
 *   `pm` (the afternoon only): `2026-12-03 pm`;
 * - `<end>` may follow `to` or `-`; without it the request is one day;
 * - anything after the dates is the note for the approver.
 *
 * `/whosout [when]`: nothing or `today`, `tomorrow`, `this week`, `next week` (Monday to Sunday),
 * a day, or two days (`2026-12-01 2026-12-04`, also with `to` or `-` between).
 */

export type Parsed<T> = Readonly<{ ok: true; value: T }> | Readonly<{ ok: false; problem: string }>;

export const TIMEOFF_USAGE =
  '/timeoff [<policy> <start> [<end>] [note]] | status | cancel <id> | balance [policy] | help';
export const WHOSOUT_USAGE = '/whosout [today | tomorrow | this week | next week | <date> | <date> <date>]';

/** Longest note kept (HR's description). */
export const MAX_NOTE = 1000;

const DAY_MS = 86_400_000;

export const addDays = (date: string, days: number): string =>
  new Date(Date.parse(`${date}T00:00:00.000Z`) + days * DAY_MS).toISOString().slice(0, 10);

/** The person's calendar day at `now` in their zone (`Asia/Singapore` at 2026-11-27T20:00Z: 2026-11-28). */
export const todayIn = (now: Date, tz: string): string => dayIn(now, tz);

const shown = (word: string): string => `\`${escapeMrkdwn(truncate(word, 40))}\``;

type Day = Readonly<{ date: string; portion: 'all_day' | 'morning' | 'afternoon' }>;

const PORTION_WORDS: Readonly<Record<string, 'morning' | 'afternoon'>> = {
  am: 'morning',
  morning: 'morning',
  pm: 'afternoon',
  afternoon: 'afternoon',
};

/** A date word (`2026-12-03`, `today`, `tomorrow`), or a problem; null when the word is no date at all. */
const dateOf = (word: string, today: string): Parsed<string> | null => {
  const w = word.toLowerCase();
  if (w === 'today') return { ok: true, value: today };
  if (w === 'tomorrow') return { ok: true, value: addDays(today, 1) };
  if (/^\d{4}-\d{1,2}-\d{1,2}$/.test(w)) {
    const [y, m, d] = w.split('-');
    const iso = `${y}-${m!.padStart(2, '0')}-${d!.padStart(2, '0')}`;
    return isIsoDate(iso)
      ? { ok: true, value: iso }
      : { ok: false, problem: `${shown(word)} is not a real date.` };
  }
  if (/^\d{1,4}[-/.]\d{1,2}([-/.]\d{1,4})?$/.test(w)) {
    return { ok: false, problem: `${shown(word)} is not a date Switchboard reads: write it as YYYY-MM-DD.` };
  }
  return null;
};

/** Reads a day (and its optional am/pm) at `tokens[i]`; how many tokens it took. */
const dayAt = (
  tokens: readonly string[],
  i: number,
  today: string,
): Parsed<Day & { used: number }> | null => {
  const word = tokens[i];
  if (word === undefined) return null;
  const date = dateOf(word, today);
  if (date === null) return null;
  if (!date.ok) return date;
  const portion = PORTION_WORDS[tokens[i + 1]?.toLowerCase() ?? ''];
  return { ok: true, value: { date: date.value, portion: portion ?? 'all_day', used: portion ? 2 : 1 } };
};

export type TimeOffTextAsk = Readonly<{
  /** The policy as HR names it (matched), or as typed when HR's names are unknown. */
  policyType: string;
  ask: TimeOffAsk;
}>;

/**
 * Matches the start of `text` against HR's policy names (longest first, any case). With
 * `policies` null (HR could not be asked) the first word is taken as the policy.
 */
const matchPolicy = (
  text: string,
  policies: readonly string[] | null,
): Parsed<Readonly<{ policy: string; rest: string }>> => {
  const lower = text.toLowerCase();
  if (policies) {
    const sorted = [...policies].sort((a, b) => b.length - a.length);
    for (const p of sorted) {
      const pl = p.toLowerCase();
      if (lower.startsWith(pl) && (lower.length === pl.length || /\s/.test(lower[pl.length]!))) {
        return { ok: true, value: { policy: p, rest: text.slice(p.length).trim() } };
      }
    }
    const first = text.split(/\s+/)[0] ?? '';
    const known = policies.length
      ? ` HR knows: ${policies.map((p) => `\`${escapeMrkdwn(p)}\``).join(', ')}.`
      : ' HR lists no policy types.';
    return { ok: false, problem: `${shown(first)} is not a time-off policy in HR.${known}` };
  }
  const [first = '', ...rest] = text.split(/\s+/);
  return { ok: true, value: { policy: first, rest: rest.join(' ') } };
};

/** `/timeoff <policy> <start> [<end>] [note]` (the subcommands are handled before). */
export const parseTimeOffText = (
  text: string,
  policies: readonly string[] | null,
  today: string,
): Parsed<TimeOffTextAsk> => {
  const trimmed = text.trim().replace(/\s+/g, ' ');
  const policy = matchPolicy(trimmed, policies);
  if (!policy.ok) return policy;
  const tokens = policy.value.rest === '' ? [] : policy.value.rest.split(' ');
  const start = dayAt(tokens, 0, today);
  if (start === null) {
    return {
      ok: false,
      problem:
        tokens.length === 0
          ? `Say when: a start date after the policy, e.g. \`/timeoff ${escapeMrkdwn(policy.value.policy)} 2026-12-03\`.`
          : `${shown(tokens[0]!)} is not a date: write it as YYYY-MM-DD, \`today\` or \`tomorrow\`.`,
    };
  }
  if (!start.ok) return start;
  let i = start.value.used;
  const separator = tokens[i]?.toLowerCase();
  const hasSeparator = separator === 'to' || separator === '-' || separator === '–' || separator === 'until';
  if (hasSeparator) i += 1;
  const end = dayAt(tokens, i, today);
  if (end !== null && !end.ok) return end;
  if (end === null && hasSeparator) {
    return {
      ok: false,
      problem: `${shown(tokens[i] ?? tokens[i - 1]!)}: an end date should follow, as YYYY-MM-DD, \`today\` or \`tomorrow\`.`,
    };
  }
  if (end !== null) i += end.value.used;
  const note = tokens.slice(i).join(' ').trim();
  if (note.length > MAX_NOTE) {
    return { ok: false, problem: `The note is ${note.length} characters long; at most ${MAX_NOTE}.` };
  }
  const s = start.value;
  const e = end?.value ?? null;
  const ask: TimeOffAsk = {
    policyType: policy.value.policy,
    startDate: s.date,
    endDate: e?.date ?? s.date,
    // One day: its one portion is both ends (`2026-12-03 pm` is the afternoon of one day).
    startPortion: s.portion,
    endPortion: e ? e.portion : s.portion,
    description: note,
  };
  return { ok: true, value: { policyType: policy.value.policy, ask } };
};

export type DayRange = Readonly<{ from: string; to: string; label: string }>;

/** Monday of the week `date` is in (weeks run Monday to Sunday). */
const mondayOf = (date: string): string => {
  const weekday = new Date(`${date}T00:00:00.000Z`).getUTCDay();
  return addDays(date, -((weekday + 6) % 7));
};

/** At most this many days are asked of HR at once. */
export const MAX_WHOSOUT_DAYS = 92;

/** `/whosout [when]`. */
export const parseWhosOutText = (text: string, today: string): Parsed<DayRange> => {
  const t = text.trim().replace(/\s+/g, ' ').toLowerCase();
  if (t === '' || t === 'today') return { ok: true, value: { from: today, to: today, label: 'today' } };
  if (t === 'tomorrow') {
    const d = addDays(today, 1);
    return { ok: true, value: { from: d, to: d, label: 'tomorrow' } };
  }
  if (t === 'this week' || t === 'week') {
    const m = mondayOf(today);
    return { ok: true, value: { from: m, to: addDays(m, 6), label: 'this week' } };
  }
  if (t === 'next week') {
    const m = addDays(mondayOf(today), 7);
    return { ok: true, value: { from: m, to: addDays(m, 6), label: 'next week' } };
  }
  const words = t.split(' ').filter((w) => !['to', '-', '–', 'until'].includes(w));
  if (words.length > 2) {
    return { ok: false, problem: `${shown(text.trim())} is more than a date or two dates.` };
  }
  const dates: string[] = [];
  for (const w of words) {
    const d = dateOf(w, today);
    if (d === null) {
      return {
        ok: false,
        problem: `${shown(w)} is not a day \`/whosout\` knows: try \`today\`, \`tomorrow\`, \`this week\`, \`next week\` or a date as YYYY-MM-DD.`,
      };
    }
    if (!d.ok) return d;
    dates.push(d.value);
  }
  const from = dates[0]!;
  const to = dates[1] ?? from;
  if (to < from) return { ok: false, problem: `The end date (${to}) is before the start date (${from}).` };
  if ((Date.parse(to) - Date.parse(from)) / DAY_MS + 1 > MAX_WHOSOUT_DAYS) {
    return { ok: false, problem: `That is more than ${MAX_WHOSOUT_DAYS} days: ask for a shorter range.` };
  }
  return { ok: true, value: { from, to, label: from === to ? from : `${from} to ${to}` } };
};

/** The policy named (any case) among HR's, or null. */
export const findPolicy = (name: string, policies: readonly string[]): string | null =>
  policies.find((p) => p.toLowerCase() === name.trim().toLowerCase()) ?? null;

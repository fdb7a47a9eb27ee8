import { type SlackDateFormat, slackDateToken } from '../../machines/shared/slackDate.ts';
import { escapeMrkdwn } from './text.ts';
import type { SwitchboardWebClient } from './webClient.ts';

/**
 * Every time as its reader sees it (issue 19 item 3). One place decides how Switchboard writes an
 * instant for people:
 *
 * - **In Slack** (cards, DMs, ephemerals, App Home, timelines): `slackDate()` writes Slack's date
 *   token, `<!date^UNIX^{date_short_pretty} at {time}|fallback>`. Slack renders it in each reader's
 *   own time zone, locale and clock preference: "today at 14:58", "yesterday at 09:12",
 *   "Nov 24, 2026 at 21:58" (`{date_short_pretty}` says today/yesterday/tomorrow itself, so a date
 *   is always shown unless it is today for that reader). The fallback (notification previews,
 *   clients that cannot render the token) names its zone: `Nov 27, 13:58 UTC` in a channel, the
 *   recipient's own zone in a DM when it is known.
 *   Syntax from Slack's "Formatting text for app surfaces" (date formatting):
 *   `<!date^timestamp^token_string^optional_link|fallback_text>`, tokens `{date_num}`, `{date}`,
 *   `{date_short}`, `{date_long}`, `{date_pretty}`, `{date_short_pretty}`, `{date_long_pretty}`,
 *   `{time}`, `{time_secs}`; a token inside a code span is not rendered, so never put one in
 *   backticks.
 * - **Where Slack cannot format** (SMS, voice, modal inputs' initial values, the `text` of a
 *   notification): `formatInZone()` in the recipient's zone from their Slack profile
 *   (`readerZones`), naming the zone by its IANA name (`today, 21:58 Asia/Singapore`), and
 *   `spokenInZone()` for a voice to read (`today at 21:58 Singapore time`).
 *
 * One clock style everywhere we write the digits ourselves: 24-hour, `HH:MM` (00:00-23:59, `h23`).
 * The team sits in Lisbon, Warsaw, Singapore and New York; a 24-hour time cannot be misread at
 * 3 a.m. on a lock screen (no AM/PM to drop), is how three of those four places write times, and a
 * voice reads "21:58" unambiguously. Inside Slack's tokens `{time}` follows each reader's own
 * 12/24-hour preference, which is the point of the token.
 *
 * Zones are named by their IANA name rather than an abbreviation: `Intl` gives "WET" for Lisbon but
 * "GMT+8" for Singapore and "GMT-5" for New York, and abbreviations are ambiguous (CST); the IANA
 * name is what the person's Slack profile holds and names one place.
 *
 * Formatting happens at the surface only: events record instants (ISO strings), never a
 * formatted time.
 */

/** A Slack date token's shape: a date and a time (default), a date and a time with seconds, or a date alone. */
export type { SlackDateFormat };

/** A zone Intl knows, else UTC. */
export const knownZone = (tz: string | null | undefined): string => {
  if (!tz) return 'UTC';
  try {
    new Intl.DateTimeFormat('en-GB', { timeZone: tz });
    return tz;
  } catch {
    return 'UTC';
  }
};

const toDate = (at: Date | string): Date | null => {
  const d = typeof at === 'string' ? new Date(at) : at;
  return Number.isNaN(d.getTime()) ? null : d;
};

const formats = new Map<string, Intl.DateTimeFormat>();
const formatOf = (tz: string): Intl.DateTimeFormat => {
  let f = formats.get(tz);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: tz,
      year: 'numeric',
      month: 'short',
      day: 'numeric',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      hourCycle: 'h23',
    });
    formats.set(tz, f);
  }
  return f;
};

type Parts = Readonly<{ year: string; month: string; day: string; hh: string; mm: string; ss: string }>;

const partsIn = (d: Date, tz: string): Parts => {
  const parts = formatOf(tz).formatToParts(d);
  const get = (type: Intl.DateTimeFormatPartTypes) => parts.find((p) => p.type === type)?.value ?? '';
  return {
    year: get('year'),
    month: get('month'),
    day: get('day'),
    hh: get('hour'),
    mm: get('minute'),
    ss: get('second'),
  };
};

const dayKey = (p: Parts): string => `${p.year}-${p.month}-${p.day}`;

/** today / yesterday / tomorrow in `tz`, else null. */
const relativeDay = (d: Date, now: Date, tz: string): 'today' | 'yesterday' | 'tomorrow' | null => {
  const key = dayKey(partsIn(d, tz));
  if (key === dayKey(partsIn(now, tz))) return 'today';
  // A day either side of `now` (36 h covers every offset change; the day key decides).
  if (key === dayKey(partsIn(new Date(now.getTime() - 86_400_000), tz))) return 'yesterday';
  if (key === dayKey(partsIn(new Date(now.getTime() + 86_400_000), tz))) return 'tomorrow';
  return null;
};

/** The words Slack's fallback and our own texts use for the day: `Nov 27` (`Nov 27 2027` in another year than `now`'s). */
const dayText = (p: Parts, now: Date | null, tz: string): string =>
  now && partsIn(now, tz).year !== p.year ? `${p.month} ${p.day} ${p.year}` : `${p.month} ${p.day}`;

export type FormatInZoneOptions = Readonly<{
  /** The clock's now: a time today in `tz` says "today" (and yesterday / tomorrow); without it the date is always shown. */
  now?: Date;
  /** Seconds too (`21:58:48`). */
  seconds?: boolean;
}>;

/**
 * An instant in a zone, for text Slack does not format (SMS, modal initial values, notification
 * text): `Nov 27, 21:58 Asia/Singapore`, `today, 21:58 Asia/Singapore`, `Nov 27, 13:58 UTC`.
 * 24-hour; the zone always named (an unknown zone is UTC). Unparseable input comes back as is.
 */
export const formatInZone = (at: Date | string, tz: string, options: FormatInZoneOptions = {}): string => {
  const d = toDate(at);
  if (!d) return String(at);
  const zone = knownZone(tz);
  const p = partsIn(d, zone);
  const time = `${p.hh}:${p.mm}${options.seconds ? `:${p.ss}` : ''}`;
  const day = (options.now && relativeDay(d, options.now, zone)) || dayText(p, options.now ?? null, zone);
  return `${day}, ${time} ${zone}`;
};

/** A zone as a voice says it: `Singapore time`, `New York time`, `UTC`. */
export const spokenZone = (tz: string): string => {
  const zone = knownZone(tz);
  if (zone === 'UTC' || zone === 'Etc/UTC') return 'UTC';
  const city = zone.split('/').pop() ?? zone;
  return `${city.replace(/_/g, ' ')} time`;
};

const MONTHS_LONG: Readonly<Record<string, string>> = {
  Jan: 'January',
  Feb: 'February',
  Mar: 'March',
  Apr: 'April',
  May: 'May',
  Jun: 'June',
  Jul: 'July',
  Aug: 'August',
  Sep: 'September',
  Oct: 'October',
  Nov: 'November',
  Dec: 'December',
};

/**
 * An instant for a voice to read in the listener's zone: `today at 21:58 Singapore time`,
 * `on November 26 at 21:58 Singapore time`. No digits run together, no offsets, no ISO dates.
 */
export const spokenInZone = (at: Date | string, tz: string, now?: Date): string => {
  const d = toDate(at);
  if (!d) return String(at);
  const zone = knownZone(tz);
  const p = partsIn(d, zone);
  const relative = now ? relativeDay(d, now, zone) : null;
  const day = relative ?? `on ${MONTHS_LONG[p.month] ?? p.month} ${p.day}`;
  return `${day} at ${p.hh}:${p.mm} ${spokenZone(zone)}`;
};

export type SlackDateOptions = Readonly<{
  /** What the token shows (default `dateTime`: "today at 13:58", "Nov 26, 2026 at 13:58"). */
  format?: SlackDateFormat;
  /** The zone the fallback text is written in and names (default UTC; a DM: its recipient's). */
  fallbackZone?: string;
}>;

/**
 * Slack's date token for an instant: every reader sees it in their own zone and clock style, with
 * the date unless it is today for them; the fallback names its zone (`Nov 27, 13:58 UTC`).
 * Unparseable input is shown escaped, as is.
 *
 * @example
 * slackDate(new Date('2026-11-27T13:58:48Z'))
 * // '<!date^1795787928^{date_short_pretty} at {time}|Nov 27, 13:58 UTC>'
 */
export const slackDate = (at: Date | string, options: SlackDateOptions = {}): string => {
  const d = toDate(at);
  if (!d) return escapeMrkdwn(String(at));
  const format = options.format ?? 'dateTime';
  const zone = knownZone(options.fallbackZone);
  const p = partsIn(d, zone);
  const fallback =
    format === 'date'
      ? `${p.month} ${p.day} ${p.year} (${zone})`
      : `${p.month} ${p.day}, ${p.hh}:${p.mm}${format === 'dateTimeSecs' ? `:${p.ss}` : ''} ${zone}`;
  return slackDateToken(d, format, fallback);
};

// ---------------------------------------------------------------- the reader's zone

/** A person's zone as their Slack profile gives it (`users.info`: `tz`, `tz_label`, `tz_offset`). */
export type ReaderZone = Readonly<{
  /** IANA name Intl knows (`Asia/Singapore`); UTC when Slack does not say or the lookup failed. */
  tz: string;
  /** Slack's label (`Singapore Standard Time`), when it gives one. */
  label: string | null;
  /** Seconds east of UTC now, as Slack gives it (null: not said). */
  offsetSeconds: number | null;
}>;

export const UTC_ZONE: ReaderZone = { tz: 'UTC', label: null, offsetSeconds: null };

/**
 * Each person's Slack time zone, looked up once per `ttlMs` (an hour by default) and shared by
 * every caller: concurrent callers share one lookup, so a page storm to one person costs one
 * `users.info`. A failed lookup answers UTC (the zone is named, so nobody is misled) and is asked
 * again after `retryMs` (a minute), not per message. `forget` drops a person (a profile changed).
 * Switchboard does not subscribe to `user_change`, so a zone changed in Slack is seen within the TTL.
 */
export type ReaderZones = Readonly<{
  of(slackUserId: string): Promise<ReaderZone>;
  /**
   * A profile `users.info` already answered for something else (the identity resolver's lookup):
   * kept as if looked up now, so the same person is not asked for twice.
   */
  remember(slackUserId: string, user: SlackProfileZone | undefined): void;
  forget(slackUserId: string): void;
}>;

/** The zone fields of a `users.info` user. */
export type SlackProfileZone = Readonly<{ tz?: unknown; tz_label?: unknown; tz_offset?: unknown }>;

/** The zone a `users.info` user names (UTC when it names none Intl knows). */
export const zoneOfProfile = (user: SlackProfileZone | undefined): ReaderZone => ({
  tz: knownZone(typeof user?.tz === 'string' ? user.tz : null),
  label: typeof user?.tz_label === 'string' ? user.tz_label : null,
  offsetSeconds: typeof user?.tz_offset === 'number' ? user.tz_offset : null,
});

export type ReaderZonesOptions = Readonly<{
  slack: Pick<SwitchboardWebClient, 'users'>;
  /** The clock (ms): the TTL runs on it, never on the wall clock in tests. */
  now: () => number;
  ttlMs?: number;
  retryMs?: number;
  /** Most people kept; the oldest entry goes first. */
  maxEntries?: number;
}>;

const SLACK_USER = /^[UW][A-Z0-9]{2,}$/;

export const createReaderZones = (options: ReaderZonesOptions): ReaderZones => {
  const ttlMs = options.ttlMs ?? 60 * 60_000;
  const retryMs = options.retryMs ?? 60_000;
  const maxEntries = options.maxEntries ?? 10_000;
  const entries = new Map<string, { until: number; zone: Promise<ReaderZone> }>();

  const lookUp = async (slackUserId: string): Promise<{ zone: ReaderZone; ok: boolean }> => {
    try {
      const r = await options.slack.users.info({ user: slackUserId });
      return { ok: true, zone: zoneOfProfile(r.user as SlackProfileZone | undefined) };
    } catch {
      return { ok: false, zone: UTC_ZONE };
    }
  };

  const keep = (slackUserId: string, entry: { until: number; zone: Promise<ReaderZone> }) => {
    entries.delete(slackUserId);
    entries.set(slackUserId, entry);
    if (entries.size > maxEntries) {
      const oldest = entries.keys().next().value;
      if (oldest !== undefined) entries.delete(oldest);
    }
  };

  return {
    of(slackUserId) {
      // A channel (a request waiting in the HR channel) has no zone of its own.
      if (!SLACK_USER.test(slackUserId)) return Promise.resolve(UTC_ZONE);
      const now = options.now();
      const hit = entries.get(slackUserId);
      if (hit && hit.until > now) return hit.zone;
      const entry = { until: now + ttlMs, zone: Promise.resolve(UTC_ZONE) };
      entry.zone = lookUp(slackUserId).then(({ zone, ok }) => {
        if (!ok) entry.until = Math.min(entry.until, options.now() + retryMs);
        return zone;
      });
      keep(slackUserId, entry);
      return entry.zone;
    },
    remember(slackUserId, user) {
      if (!SLACK_USER.test(slackUserId) || !user) return;
      keep(slackUserId, { until: options.now() + ttlMs, zone: Promise.resolve(zoneOfProfile(user)) });
    },
    forget(slackUserId) {
      entries.delete(slackUserId);
    },
  };
};

/**
 * Text meant for Slack turned into text for elsewhere (an SMS answer): each date token becomes its
 * fallback, which names its zone. Entities stay as they are (the caller decodes them).
 */
export const slackDatesAsFallback = (text: string): string =>
  text.replace(/<!date\^\d+\^[^|>]*\|([^>]*)>/g, '$1');

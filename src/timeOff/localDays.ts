import type { DayPortion } from '../../machines/timeOff/workingDays.ts';
import { knownZone } from '../slack/time.ts';

/**
 * Time-off dates are the person's own calendar days (issue 19 item 4). A date (`2026-12-03`) means
 * that day where the person is, in their Slack time zone (`users.info` `tz`, through
 * `readerZones`); `today` is the date of the clock's now in that zone, not in UTC.
 *
 * The convention every absence follows, in the requester's zone:
 *
 * - a full day is `[00:00, 24:00)` local (local midnight to the next local midnight);
 * - a morning half (`am`) is `[00:00, 12:00)` local;
 * - an afternoon half (`pm`) is `[12:00, 24:00)` local.
 *
 * So `Wed pm – Thu am` is `[Wed 12:00, Thu 12:00)` in the requester's zone. On-call conflicts,
 * cover, leave-aware paging and `/whosout` all read absences through `absenceInterval` below.
 * A day with a daylight-saving change is as long as the zone makes it (23 or 25 hours); a local
 * midnight or noon that does not exist (a zone skipping that hour) is the first instant after it.
 *
 * Requests recorded before zones were (events without a zone) meant UTC days: their zone is UTC.
 */

const DAY_MS = 86_400_000;

const partsFormats = new Map<string, Intl.DateTimeFormat>();
const partsFormat = (tz: string): Intl.DateTimeFormat => {
  let f = partsFormats.get(tz);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: tz,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      hourCycle: 'h23',
    });
    partsFormats.set(tz, f);
  }
  return f;
};

/** The wall-clock reading of `instant` in `tz`, as if it were UTC (ms). */
const wallClock = (instant: number, tz: string): number => {
  const parts = partsFormat(tz).formatToParts(new Date(instant));
  const n = (type: Intl.DateTimeFormatPartTypes) => Number(parts.find((p) => p.type === type)?.value ?? 0);
  return Date.UTC(n('year'), n('month') - 1, n('day'), n('hour'), n('minute'), n('second'));
};

/** The calendar date (`YYYY-MM-DD`) of an instant in `tz` (an unknown zone is UTC). */
export const dayIn = (at: Date, tz: string | null | undefined): string =>
  new Date(wallClock(at.getTime(), knownZone(tz))).toISOString().slice(0, 10);

/**
 * The instant a local time of day (`hour`:00) on `date` is in `tz`. When the zone skips that time
 * (a daylight-saving gap), the first instant after the gap.
 */
export const localInstant = (date: string, hour: number, tz: string | null | undefined): Date => {
  const zone = knownZone(tz);
  const wanted = Date.parse(`${date}T00:00:00.000Z`) + hour * 3_600_000;
  // Two rounds settle the offset (it can differ between the guess and the answer near a change).
  let guess = wanted - (wallClock(wanted, zone) - wanted);
  guess = wanted - (wallClock(guess, zone) - guess);
  const wall = wallClock(guess, zone);
  if (wall < wanted) {
    // In a gap: the wall clock jumps over `wanted` at the instant it would have read it.
    return new Date(guess + (wanted - wall));
  }
  return new Date(guess);
};

/** `YYYY-MM-DD` plus `days`. */
export const addDays = (date: string, days: number): string =>
  new Date(Date.parse(`${date}T00:00:00.000Z`) + days * DAY_MS).toISOString().slice(0, 10);

/** An absence's days and halves, as requested. */
export type AbsenceDays = Readonly<{
  startDate: string;
  endDate: string;
  /** Absent: the whole day (requests and entries recorded before half days were read). */
  startPortion?: DayPortion;
  endPortion?: DayPortion;
}>;

/**
 * The instants an absence takes in the requester's zone, `[since, until)`: from local midnight of
 * its first day (local noon when it starts with an afternoon) to local midnight after its last day
 * (local noon when it ends with a morning). A one-day morning is `[00:00, 12:00)`, a one-day
 * afternoon `[12:00, 24:00)`.
 */
export const absenceInterval = (
  days: AbsenceDays,
  tz: string | null | undefined,
): Readonly<{ since: Date; until: Date }> => {
  const since = localInstant(days.startDate, days.startPortion === 'afternoon' ? 12 : 0, tz);
  const until =
    days.endPortion === 'morning'
      ? localInstant(days.endDate, 12, tz)
      : localInstant(addDays(days.endDate, 1), 0, tz);
  return {
    since,
    until: until.getTime() > since.getTime() ? until : localInstant(addDays(days.endDate, 1), 0, tz),
  };
};

/**
 * The calendar days (UTC-keyed dates, as the read model stores them) an instant range may touch
 * in some zone: widened by 14 hours either side, the most any zone is from UTC. The caller then
 * keeps the absences whose own interval overlaps the range.
 */
export const candidateDays = (
  range: Readonly<{ since: Date; until: Date }>,
): Readonly<{ from: string; to: string }> => ({
  from: new Date(range.since.getTime() - 14 * 3_600_000).toISOString().slice(0, 10),
  to: new Date(Math.max(range.since.getTime(), range.until.getTime() - 1) + 14 * 3_600_000)
    .toISOString()
    .slice(0, 10),
});

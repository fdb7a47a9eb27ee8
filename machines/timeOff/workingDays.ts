// Working days, pure: Monday to Friday, less a holiday list the caller passes in (dates as
// `YYYY-MM-DD`, in the calendar the organisation's HR service uses). No clock, no time zone
// guessing: dates are calendar dates, instants are ISO strings read at the edge and carried on
// the command.

/** `YYYY-MM-DD` that is a real calendar date. */
export const isIsoDate = (value: string): boolean => {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value)) return false;
  const d = new Date(`${value}T00:00:00.000Z`);
  return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === value;
};

/** Which part of a day is taken: the whole day, or the morning or afternoon (half a day). */
export type DayPortion = 'all_day' | 'morning' | 'afternoon';

const DAY_MS = 86_400_000;
const dayOf = (date: string): number => Date.parse(`${date}T00:00:00.000Z`) / DAY_MS;
const dateOf = (day: number): string => new Date(day * DAY_MS).toISOString().slice(0, 10);

/** Monday to Friday and not on the holiday list. */
export const isWorkingDay = (date: string, holidays: ReadonlySet<string>): boolean => {
  const weekday = new Date(`${date}T00:00:00.000Z`).getUTCDay();
  return weekday !== 0 && weekday !== 6 && !holidays.has(date);
};

/** The holiday list as a set (ignores anything that is not a date). */
export const holidaySet = (holidays: readonly string[]): ReadonlySet<string> =>
  new Set(holidays.filter(isIsoDate));

/** A range longer than this is refused before counting (a year and a bit of leave at most). */
export const MAX_RANGE_DAYS = 400;

/**
 * The working days a request from `start` to `end` (inclusive) takes: whole working days, with a
 * half day at either end when that end's portion is a morning or an afternoon. A one-day request
 * counts half a day when its start portion is not `all_day`. Non-working days count 0 whatever
 * their portion.
 *
 * @example
 * workingDaysRequested({ start: '2026-11-27', end: '2026-11-30', holidays: new Set() }) // Fri + Mon = 2
 */
export const workingDaysRequested = (
  range: Readonly<{
    start: string;
    end: string;
    startPortion?: DayPortion;
    endPortion?: DayPortion;
    holidays: ReadonlySet<string>;
  }>,
): number => {
  const first = dayOf(range.start);
  const last = dayOf(range.end);
  if (!(last >= first) || last - first > MAX_RANGE_DAYS) return 0;
  let total = 0;
  for (let day = first; day <= last; day++) {
    const date = dateOf(day);
    if (!isWorkingDay(date, range.holidays)) continue;
    const portion = day === first ? range.startPortion : day === last ? range.endPortion : 'all_day';
    total += portion === undefined || portion === 'all_day' ? 1 : 0.5;
  }
  return total;
};

/**
 * The instant `count` working days after `from`: the same time of day on the `count`-th working
 * day after `from`'s date. A request made on Friday afternoon with a 1-working-day reminder is
 * reminded on Monday afternoon (or Tuesday when Monday is a holiday).
 */
export const addWorkingDays = (from: string, count: number, holidays: ReadonlySet<string>): string => {
  const instant = Date.parse(from);
  if (Number.isNaN(instant)) throw new RangeError(`not a time: ${JSON.stringify(from)}`);
  const startDay = Math.floor(instant / DAY_MS);
  const timeOfDay = instant - startDay * DAY_MS;
  let day = startDay;
  let left = Math.max(0, Math.floor(count));
  // At most one year of skipped days per working day asked for, so a holiday list covering
  // every day cannot loop for ever.
  let guard = 0;
  while (left > 0 && guard < 366 * (count + 1)) {
    day++;
    guard++;
    if (isWorkingDay(dateOf(day), holidays)) left--;
  }
  return new Date(day * DAY_MS + timeOfDay).toISOString();
};

/** Whether the ranges `[aStart, aEnd]` and `[bStart, bEnd]` (inclusive dates) share a day. */
export const rangesOverlap = (aStart: string, aEnd: string, bStart: string, bEnd: string): boolean =>
  aStart <= bEnd && bStart <= aEnd;

import { type OwnLeave, ownLeaveSchema } from '../../machines/timeOff/commands.ts';
import { leavesOverlap, overlapRefusalText } from '../../machines/timeOff/decider.ts';
import type { TimeOffAsk } from '../../machines/timeOff/events.ts';
import { escapeMrkdwn } from '../slack/blocks/format.ts';
import { formatDay, formatRange } from './blocks/timeOffView.ts';
import { addDays, dayIn, localInstant } from './localDays.ts';
import type { TimeOffReadModel } from './readModel.projection.ts';

/**
 * Issue 20 item 6, "leave that cannot be wrong": what an ask is judged against besides itself,
 * as `RequestTimeOff` / `ResubmitTimeOff` carry it (machines/timeOff/commands.ts `standing`). The
 * edge asks it first, to answer in words within the ack; the enrich step (enrich.ts) asks it again
 * right before the decider, which judges (`checkStanding`), so two asks recorded one after the other
 * cannot both pass: the inbox dispatcher hands commands to the decider one at a time, and the read
 * model is caught up before each. The race left: leave entered in HR's web app whose webhook has not
 * arrived yet, and two app instances dispatching at once (the service runs one).
 */

type Days = Pick<TimeOffAsk, 'startDate' | 'endDate' | 'startPortion' | 'endPortion'>;

/**
 * The requester's own leave standing over the ask's days: Switchboard's requests approved or waiting
 * (not denied, expired, cancelled, or refused by HR) and leave known only from HR, each once.
 * `exclude`: the request being fixed (a resubmission is not its own overlap).
 */
export const ownLeaveOverlapping = (
  readModel: TimeOffReadModel,
  employeeHrId: string,
  ask: Days,
  exclude: string | null = null,
): OwnLeave[] =>
  readModel
    .absences({ from: ask.startDate, to: ask.endDate }, employeeHrId)
    .filter((a) => a.timeOffId === null || a.timeOffId !== exclude)
    .filter((a) => leavesOverlap(ask, a))
    .slice(0, 20)
    .map((a) => ({
      timeOffId: a.timeOffId,
      hrRequestId: a.hrRequestId,
      policyType: a.policyType.slice(0, 100),
      startDate: a.startDate,
      endDate: a.endDate,
      startPortion: a.startPortion,
      endPortion: a.endPortion,
      status: a.status,
    }));

/** The requester's day at `now`, and when the ask's first day (its afternoon, if so) starts and ends, in `zone`. */
export const calendarDayOf = (
  ask: Days,
  zone: string | null | undefined,
  now: Date,
): Readonly<{ today: string; firstDayStartsAt: string; firstDayEndsAt: string }> => ({
  today: dayIn(now, zone),
  firstDayStartsAt: localInstant(
    ask.startDate,
    ask.startPortion === 'afternoon' ? 12 : 0,
    zone,
  ).toISOString(),
  firstDayEndsAt: localInstant(addDays(ask.startDate, 1), 0, zone).toISOString(),
});

/** Whether a policy may be recorded for past days (names compared without case). */
export const pastAllowedFor = (policyType: string, pastPolicies: readonly string[]): boolean =>
  pastPolicies.some((p) => p.trim().toLowerCase() === policyType.trim().toLowerCase());

/**
 * The refusal of an ask by `checkStanding`, in words for the requester (days as people read them,
 * HR's policy names escaped), from the refusal's details; null for any other refusal. The edge
 * answers with it at once, and rejections.ts when the decider refused it at dispatch.
 */
export const standingRefusalWords = (
  details: Readonly<Record<string, unknown>>,
  pastPolicies: readonly string[] | null = null,
): string | null => {
  const reason = details['reason'];
  if (reason === 'overlaps_own_leave') {
    const leave = ownLeaveSchema.safeParse(details['leave']);
    if (!leave.success) return null;
    return `:calendar: ${overlapRefusalText({ ...leave.data, policyType: `*${escapeMrkdwn(leave.data.policyType)}*` }, formatRange)}`;
  }
  if (reason === 'past_dates') {
    const startDate = details['startDate'];
    const today = details['today'];
    if (typeof startDate !== 'string' || typeof today !== 'string') return null;
    const allowed =
      pastPolicies && pastPolicies.length > 0
        ? ` Only ${pastPolicies.map((p) => `*${escapeMrkdwn(p)}*`).join(', ')} can be recorded for past days.`
        : '';
    return `:calendar: ${formatDay(startDate)} is in the past (today is ${formatDay(today)} where you are), so nothing was asked: time off starts today or later.${allowed}`;
  }
  return null;
};

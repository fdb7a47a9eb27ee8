import type { TimeOffState } from '../../../machines/timeOff/decider.ts';
import { timeOffPhaseOf } from '../../../machines/timeOff/decider.ts';
import { HR_CHANNEL_APPROVER_ID, type TimeOffPerson } from '../../../machines/timeOff/events.ts';
import type { TimeOffPhase } from '../../../machines/timeOff/machine.ts';
import type { DayPortion } from '../../../machines/timeOff/workingDays.ts';
import { escapeMrkdwn, mention } from '../../slack/blocks/format.ts';

/**
 * The phases in which a request still stands (asked, approved, in HR, or refused by HR and waiting
 * to be fixed): the requester can cancel it, and it is upcoming time off.
 */
export const STANDING_PHASES: ReadonlySet<TimeOffPhase> = new Set([
  'requested',
  'awaitingApproval',
  'approved',
  'submitted',
  'confirmed',
  'submissionFailed',
]);

/** What the renderers show of one request: read from its folded stream, nothing else. */
export type TimeOffView = Readonly<{
  timeOffId: string;
  phase: TimeOffPhase;
  requester: TimeOffPerson;
  approver: TimeOffPerson;
  policyType: string;
  startDate: string;
  endDate: string;
  startPortion: DayPortion;
  endPortion: DayPortion;
  description: string;
  workingDays: number;
  requestedAt: string;
  expiresAt: string;
  remindersSent: number;
  denyReason: string | null;
  /** HR's reason for refusing the submission, or the cancel, in words. */
  failure: string | null;
  /** True while an HR call HR has not taken yet is retrying after a failure (not while HR's lag passes). */
  retrying: boolean;
  /** The requester's time zone its days are in (issue 19); absent on requests from before: UTC. */
  zone?: string;
  /** Issue 20: HR's id for it once known (shown after Switchboard's, `requestIdText`). */
  hrRequestId?: string | null;
  /** Issue 20: past days of a policy recorded after the fact (the approver's card says so). */
  afterTheFact?: boolean;
}>;

/** The view of a folded request, or null before it was requested. */
export const toTimeOffView = (state: TimeOffState): TimeOffView | null => {
  const { context } = state;
  const r = context.request;
  if (!r) return null;
  return {
    timeOffId: r.timeOffId,
    phase: timeOffPhaseOf(state),
    requester: r.requester,
    approver: r.approver,
    policyType: r.policyType,
    startDate: r.startDate,
    endDate: r.endDate,
    startPortion: r.startPortion,
    endPortion: r.endPortion,
    description: r.description,
    workingDays: r.workingDays,
    requestedAt: r.requestedAt,
    expiresAt: r.expiresAt,
    remindersSent: context.remindersSent,
    denyReason: context.decision?.reason ?? null,
    failure: context.failure,
    // Waiting for HR to show what it took (the submission's lookups once its POST was answered, the
    // read-back) is HR's lag, not HR failing: only a call HR has not taken yet counts as retrying.
    retrying: context.requests.some(
      (q) =>
        q.failedAttempts > 0 &&
        q.nextAttemptAt !== null &&
        q.action !== 'read_back' &&
        !(q.action === 'submit' && context.submissionSent?.submitRequestId === q.requestId),
    ),
    ...(r.zone ? { zone: r.zone } : {}),
    ...(context.hrRequestId ? { hrRequestId: context.hrRequestId } : {}),
    ...(r.afterTheFact ? { afterTheFact: true } : {}),
  };
};

const WEEKDAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** `Thu 3 Dec 2026` (the year only when `withYear`); anything not a date is shown escaped. */
export const formatDay = (date: string, withYear = true): string => {
  const d = new Date(`${date}T00:00:00.000Z`);
  if (!/^\d{4}-\d{2}-\d{2}$/.test(date) || Number.isNaN(d.getTime())) return escapeMrkdwn(date);
  const day = `${WEEKDAYS[d.getUTCDay()]} ${d.getUTCDate()} ${MONTHS[d.getUTCMonth()]}`;
  return withYear ? `${day} ${d.getUTCFullYear()}` : day;
};

const PORTION_TEXT: Readonly<Record<DayPortion, string>> = {
  all_day: '',
  morning: ' (morning)',
  afternoon: ' (afternoon)',
};

/** `Thu 3 Dec – Mon 7 Dec 2026`, `Thu 3 Dec 2026 (afternoon)`, with half days named. */
export const formatRange = (
  range: Readonly<{ startDate: string; endDate: string; startPortion: DayPortion; endPortion: DayPortion }>,
): string => {
  if (range.startDate === range.endDate)
    return `${formatDay(range.startDate)}${PORTION_TEXT[range.startPortion]}`;
  const sameYear = range.startDate.slice(0, 4) === range.endDate.slice(0, 4);
  return `${formatDay(range.startDate, !sameYear)}${PORTION_TEXT[range.startPortion]} – ${formatDay(range.endDate)}${PORTION_TEXT[range.endPortion]}`;
};

/** `3 working days`, `½ working day`, `2½ working days`. */
export const formatWorkingDays = (days: number): string => {
  const whole = Math.floor(days);
  const half = days - whole >= 0.5;
  const number = whole === 0 && half ? '½' : `${whole}${half ? '½' : ''}`;
  return `${number} working day${days === 1 || (whole === 0 && half) ? '' : 's'}`;
};

/**
 * A person as a mention when they have a Slack user, else their name, escaped. The HR channel a
 * request was sent to (issue 12, `hrChannelApprover`) reads as that channel.
 */
export const personText = (
  person: Readonly<{ slackUserId: string | null; displayName: string; hrId?: string }>,
): string =>
  person.hrId === HR_CHANNEL_APPROVER_ID
    ? /^[CG][A-Z0-9]{2,30}$/.test(person.slackUserId ?? '')
      ? `HR (<#${person.slackUserId}>)`
      : 'HR'
    : person.slackUserId
      ? mention(person.slackUserId)
      : escapeMrkdwn(person.displayName || 'someone');

/** A reason without its closing full stop, for a sentence that goes on after it ("…: *reason*. Fix it"). */
export const withoutFullStop = (text: string): string => text.replace(/[\s.]+$/, '');

import {
  type DirectoryEmployee,
  type DirectoryState,
  employeeById,
} from '../../machines/timeOff/directory.ts';
import type { ApproverSkip } from '../../machines/timeOff/events.ts';

/**
 * Who approves a time-off request (issue 12, capability 2), as a pure rule over what the lifecycle
 * already knows (the directory and the absences of its read model; no HR call):
 *
 * the requester's manager in HR, unless they are away (approved leave, HR's or Switchboard's,
 * covering today or the request's first day), have left, or have no Slack account; then their own
 * manager, and on up the reporting line. A loop in HR's data (A reports to B reports to A) or the
 * requester met again ends the walk, as does a line longer than {@link MAX_CHAIN}. When the line
 * ends, the configured HR channel decides; with none, the request waits for the nearest manager
 * who is only away (they find it when back), and when everyone in the line has left (or there is
 * no manager at all) nobody can: the caller says so and nothing is recorded.
 */
export const MAX_CHAIN = 50;

/** The managers above an employee, nearest first: loop-safe, never the employee themself. */
export const reportingLine = (directory: DirectoryState, employeeHrId: string): DirectoryEmployee[] => {
  const line: DirectoryEmployee[] = [];
  const seen = new Set<string>([employeeHrId]);
  let next = employeeById(directory, employeeHrId)?.managerHrId ?? null;
  while (next !== null && !seen.has(next) && line.length < MAX_CHAIN) {
    seen.add(next);
    const manager = employeeById(directory, next);
    if (!manager) break;
    line.push(manager);
    next = manager.managerHrId;
  }
  return line;
};

export type ApproverFacts = Readonly<{
  /** The last day of approved leave covering today or the request's first day; null when not away. */
  awayUntil(hrId: string): string | null;
  /** The employee's Slack user, or null when they have none (Switchboard cannot ask them). */
  slackOf(hrId: string): string | null;
  /** The configured HR channel (`TIME_OFF_HR_CHANNEL`), or null. */
  hrChannel: string | null;
}>;

export type ApproverRoute =
  | Readonly<{
      kind: 'person';
      approver: DirectoryEmployee;
      slackUserId: string;
      skipped: readonly ApproverSkip[];
      /** Set when the approver is away too and nobody else could take it: the request waits for them. */
      awayUntil: string | null;
    }>
  | Readonly<{ kind: 'hr_channel'; channel: string; skipped: readonly ApproverSkip[] }>
  | Readonly<{ kind: 'nobody'; skipped: readonly ApproverSkip[]; why: 'no_manager' | 'nobody_left' }>;

const skip = (
  e: DirectoryEmployee,
  slackUserId: string | null,
  reason: ApproverSkip['reason'],
  until: string | null,
): ApproverSkip => ({ hrId: e.hrId, slackUserId, displayName: e.displayName, reason, until });

/** The approver of the requester's time off, and who was passed over on the way. */
export const routeApprover = (line: readonly DirectoryEmployee[], facts: ApproverFacts): ApproverRoute => {
  const skipped: ApproverSkip[] = [];
  let waitFor: Readonly<{ at: number; e: DirectoryEmployee; slackUserId: string; until: string }> | null =
    null;
  for (const e of line) {
    const slackUserId = facts.slackOf(e.hrId);
    if (e.status === 'left') {
      skipped.push(skip(e, slackUserId, 'left', null));
      continue;
    }
    const until = facts.awayUntil(e.hrId);
    if (until !== null) {
      // Only someone Switchboard can reach may be waited for.
      if (slackUserId !== null) waitFor ??= { at: skipped.length, e, slackUserId, until };
      skipped.push(skip(e, slackUserId, 'away', until));
      continue;
    }
    if (slackUserId === null) {
      skipped.push(skip(e, null, 'no_slack', null));
      continue;
    }
    return { kind: 'person', approver: e, slackUserId, skipped, awayUntil: null };
  }
  if (facts.hrChannel !== null) return { kind: 'hr_channel', channel: facts.hrChannel, skipped };
  if (waitFor !== null) {
    return {
      kind: 'person',
      approver: waitFor.e,
      slackUserId: waitFor.slackUserId,
      skipped: skipped.filter((_, i) => i !== waitFor.at),
      awayUntil: waitFor.until,
    };
  }
  return { kind: 'nobody', skipped, why: line.length === 0 ? 'no_manager' : 'nobody_left' };
};

/**
 * Absences as the rule reads them: the last day of the approved leave (inclusive dates) that
 * covers `today` or `firstDay`, or null.
 */
export const awayUntilOf = (
  approved: readonly Readonly<{ startDate: string; endDate: string }>[],
  today: string,
  firstDay: string,
): string | null => {
  let until: string | null = null;
  for (const a of approved) {
    const covers = (d: string) => a.startDate <= d && a.endDate >= d;
    if ((covers(today) || covers(firstDay)) && (until === null || a.endDate > until)) until = a.endDate;
  }
  return until;
};

/**
 * Issue 19: the same rule on absences as intervals of instants in their own zone
 * (src/timeOff/localDays.ts `absenceInterval`): away now when `now` falls inside one (someone off
 * on Tuesday in Singapore is away from 00:00 Tuesday to 00:00 Wednesday there, not for the UTC
 * date), or when one of its dates covers the request's `firstDay`. The last day of the latest
 * such leave, or null.
 */
export const awayUntilAt = (
  approved: readonly Readonly<{ startDate: string; endDate: string; since: Date; until: Date }>[],
  now: Date,
  firstDay: string,
): string | null => {
  let until: string | null = null;
  const t = now.getTime();
  for (const a of approved) {
    const coversNow = a.since.getTime() <= t && t < a.until.getTime();
    const coversFirstDay = a.startDate <= firstDay && a.endDate >= firstDay;
    if ((coversNow || coversFirstDay) && (until === null || a.endDate > until)) until = a.endDate;
  }
  return until;
};

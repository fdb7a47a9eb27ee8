import { employeeById } from '../../machines/timeOff/directory.ts';
import type { Absence, Absences, PersonRef, TimeRange } from '../lifecycles/ports.ts';
import type { TimeOffPeople } from './people.ts';
import type { AbsenceEntry, TimeOffReadModel } from './readModel.projection.ts';

/**
 * The `absences` port (src/lifecycles/ports.ts) the time-off lifecycle offers: approved leave and
 * requests waiting, from Switchboard's requests and HR's calendar (requests made in the HR web
 * app), read from the read model (no HR call per question).
 *
 * Dates are calendar days; a range of instants is turned into days in UTC, and an absence covers
 * its days from 00:00 to 24:00 UTC (half days are whole days here: someone off for the afternoon is
 * not paged that day).
 */
const DAY_MS = 86_400_000;
/** The end of a leaver's absence: the largest date JavaScript has. */
const LEFT_UNTIL = new Date(8.64e15);
const dayOf = (d: Date): string => d.toISOString().slice(0, 10);
const startOf = (date: string): Date => new Date(`${date}T00:00:00.000Z`);
const endOf = (date: string): Date => new Date(startOf(date).getTime() + DAY_MS);

const toAbsence = (entry: AbsenceEntry, person: PersonRef): Absence => ({
  person,
  start: rangeOfDays(entry).since,
  end: rangeOfDays(entry).until,
  kind: entry.policyType,
  status: entry.status,
});

/**
 * The instants a request's days take, `[start of its first day, end of its last day)` in UTC: the
 * one definition the absences port and the on-call conflicts (src/timeOff/coverConflicts.reactor.ts) share.
 */
export const rangeOfDays = (days: Readonly<{ startDate: string; endDate: string }>): TimeRange => ({
  since: startOf(days.startDate),
  until: endOf(days.endDate),
});

/** The days a [since, until) range touches, as an inclusive date range. */
export const daysOf = (range: TimeRange): Readonly<{ from: string; to: string }> => ({
  from: dayOf(range.since),
  to: dayOf(new Date(Math.max(range.since.getTime(), range.until.getTime() - 1))),
});

export const createAbsences = (
  deps: Readonly<{ readModel: TimeOffReadModel; people: TimeOffPeople }>,
): Absences => ({
  async absencesOf(person, range) {
    await deps.readModel.catchUp();
    let employee = deps.readModel.employeeOfSlackUser(person.slackUserId);
    if (employee === null) {
      try {
        employee = (await deps.people.employee(person.slackUserId)).hrId;
      } catch {
        return [];
      }
    }
    const absences = deps.readModel.absences(daysOf(range), employee).map((e) => toAbsence(e, person));
    // Someone HR says left is away for good: never paged, never asked to cover (issue 12).
    const known = employeeById(deps.readModel.directory(), employee);
    return known?.status === 'left'
      ? [
          { person, start: range.since, end: LEFT_UNTIL, kind: 'Left the company', status: 'left' },
          ...absences,
        ]
      : absences;
  },
  async whoIsOut(range) {
    await deps.readModel.catchUp();
    const out: Absence[] = [];
    for (const entry of deps.readModel.absences(daysOf(range))) {
      const slackUserId = entry.slackUserId ?? (await deps.people.slackUserOfEmployee(entry.employeeHrId));
      if (slackUserId) out.push(toAbsence(entry, { slackUserId }));
    }
    return out;
  },
});

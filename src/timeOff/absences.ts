import { employeeById } from '../../machines/timeOff/directory.ts';
import type { Absence, Absences, PersonRef, TimeRange } from '../lifecycles/ports.ts';
import { type AbsenceDays, absenceInterval, candidateDays } from './localDays.ts';
import type { TimeOffPeople } from './people.ts';
import type { AbsenceEntry, TimeOffReadModel } from './readModel.projection.ts';

/**
 * The `absences` port (src/lifecycles/ports.ts) the time-off lifecycle offers: approved leave and
 * requests waiting, from Switchboard's requests and HR's calendar (requests made in the HR web
 * app), read from the read model (no HR call per question).
 *
 * An absence is an interval of instants in its requester's time zone (src/timeOff/localDays.ts, issue 19):
 * a full day from local midnight to local midnight, a morning half [00:00, 12:00) and an afternoon
 * half [12:00, 24:00) local. A Switchboard request's zone is the one recorded when it was asked
 * (UTC for requests recorded before zones were); leave known only from HR is in the person's Slack
 * zone (`zoneOf`). So someone off on Wednesday in Singapore is not paged from Wednesday 00:00 to
 * 24:00 Singapore time, and is paged at 23:30 on Tuesday evening there.
 */
/** The end of a leaver's absence: the largest date JavaScript has. */
const LEFT_UNTIL = new Date(8.64e15);

/** The zone of a read-model entry: recorded on the request, else the person's Slack zone. */
type ZoneOf = (slackUserId: string) => Promise<string>;

const entryZone = async (entry: AbsenceEntry, slackUserId: string | null, zoneOf: ZoneOf | undefined) => {
  if (entry.zone) return entry.zone;
  if (!slackUserId || !zoneOf) return 'UTC';
  return zoneOf(slackUserId).catch(() => 'UTC');
};

const overlapping = (a: TimeRange, b: TimeRange): boolean =>
  a.since.getTime() < b.until.getTime() && b.since.getTime() < a.until.getTime();

/**
 * The instants a request takes in `zone` (its requester's), `[since, until)`: its days and halves
 * by the convention above. The one definition the absences port, the on-call conflicts
 * (src/timeOff/coverConflicts.reactor.ts) and the cover card share. No zone: UTC (requests
 * recorded before issue 19 meant UTC days).
 */
export const rangeOfRequest = (
  request: AbsenceDays & Readonly<{ zone?: string | null | undefined }>,
): TimeRange => absenceInterval(request, request.zone ?? 'UTC');

/** The days (as stored dates) that may hold an absence overlapping the range, in any zone. */
export const daysOf = (range: TimeRange): Readonly<{ from: string; to: string }> => candidateDays(range);

export const createAbsences = (
  deps: Readonly<{ readModel: TimeOffReadModel; people: TimeOffPeople; zoneOf?: ZoneOf }>,
): Absences => {
  /** The entry as an absence in its zone, or null when its interval misses `range`. */
  const toAbsence = async (
    entry: AbsenceEntry,
    person: PersonRef,
    range: TimeRange,
  ): Promise<Absence | null> => {
    const interval = rangeOfRequest({
      ...entry,
      zone: await entryZone(entry, person.slackUserId, deps.zoneOf),
    });
    if (!overlapping(interval, range)) return null;
    return {
      person,
      start: interval.since,
      end: interval.until,
      kind: entry.policyType,
      status: entry.status,
      lastDay: entry.endDate,
    };
  };
  return {
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
      const absences: Absence[] = [];
      for (const entry of deps.readModel.absences(daysOf(range), employee)) {
        const absence = await toAbsence(entry, person, range);
        if (absence) absences.push(absence);
      }
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
        const absence = slackUserId ? await toAbsence(entry, { slackUserId }, range) : null;
        if (absence) out.push(absence);
      }
      return out;
    },
  };
};

import { type TimeOffState, timeOffDecider } from '../../machines/timeOff/decider.ts';
import { type DirectoryState, directoryDecider, employeeById } from '../../machines/timeOff/directory.ts';
import {
  HR_TIME_OFF_STREAM_PREFIX,
  type HrTimeOffEntry,
  hrCalendarDecider,
  hrRequestIdOfStream,
} from '../../machines/timeOff/hrCalendar.ts';
import type { TimeOffPhase } from '../../machines/timeOff/machine.ts';
import {
  requestIdOfStream,
  TIME_OFF_DIRECTORY_STREAM,
  TIME_OFF_STREAM_PREFIX,
} from '../../machines/timeOff/streams.ts';
import type { DayPortion } from '../../machines/timeOff/workingDays.ts';
import { storedEvent } from '../application/fold.ts';
import type { EventFilter, EventStore, RecordedEvent } from '../eventStore/eventStore.ts';
import { PERSON_LINKED, PERSON_STREAM_PREFIX } from '../people/events.ts';
import type { Processor } from '../processors/runner.ts';
import { shortTimeOffId } from './blocks/timeOffIds.ts';
import { type TimeOffView, toTimeOffView } from './blocks/timeOffView.ts';

/**
 * Everything the time-off lifecycle reads without asking HR, in memory (rebuilt from the store at
 * every start, `resumeFrom: 'start'`): every request Switchboard handles (`timeoff-<id>`, folded
 * with the decider), the employee directory (`timeoff-directory`), HR's own side of time off
 * (`hrtimeoff-<HR id>`: requests made in the HR web app, and ours as HR has them) and which Slack
 * user is which HR employee (`PersonLinked { system: 'hr' }` in `identity-<user>`).
 *
 * Read-your-writes: a listener that just recorded a command calls `catchUp()` before reading.
 *
 * @example
 * await readModel.catchUp();
 * readModel.pendingApprovalsOf('U0DANA'); // the requests waiting for Dana, oldest first
 */

/** Someone out (or asking to be) on some days, from Switchboard's requests and HR's calendar. */
export type AbsenceEntry = Readonly<{
  employeeHrId: string;
  /** Known when the person is linked (they used Switchboard, or asked for time off through it). */
  slackUserId: string | null;
  displayName: string;
  policyType: string;
  startDate: string;
  endDate: string;
  startPortion: DayPortion;
  endPortion: DayPortion;
  /** Approved (in HR, or approved in Switchboard and being recorded), or requested and waiting. */
  status: 'approved' | 'requested';
  /** Where it is known from: a Switchboard request (`timeOffId`) or only HR (`hrRequestId`). */
  timeOffId: string | null;
  hrRequestId: string | null;
}>;

export type TimeOffReadModel = Readonly<{
  processor: Processor;
  /** Applies what is in the store and not yet applied (read-your-writes for the caller). */
  catchUp(): Promise<void>;
  /** The employee directory as folded (machines/timeOff/directory.ts has its queries). */
  directory(): DirectoryState;
  /** A request's folded state, or null for an id with no stream. */
  state(timeOffId: string): TimeOffState | null;
  view(timeOffId: string): TimeOffView | null;
  /** HR's side of a request Switchboard submitted (its HR id), or null. */
  hrRequestIdOf(timeOffId: string): string | null;
  /** The Switchboard request HR knows as `hrRequestId`, or null. */
  requestOfHrId(hrRequestId: string): TimeOffView | null;
  /**
   * Approved requests of this employee whose HR id is not known yet, matching an HR entry's policy
   * and dates (a submission HR has not shown yet). Newest first.
   */
  awaitingHrId(
    employeeHrId: string,
    match: Readonly<{ policyType: string; startDate: string; endDate: string }>,
  ): TimeOffView[];
  /** The requester's requests, newest first (every phase). */
  requestsOf(slackUserId: string): TimeOffView[];
  /** The requests waiting for this approver's decision, oldest first. */
  pendingApprovalsOf(slackUserId: string): TimeOffView[];
  /**
   * The requester's own requests whose short id (`shortTimeOffId`) starts with `prefix` (case
   * does not matter): how `/timeoff cancel 3f9a2c` finds one.
   */
  findByShortId(slackUserId: string, prefix: string): TimeOffView[];
  /** HR's entry for one of its request ids, or null. */
  hrEntry(hrRequestId: string): HrTimeOffEntry | null;
  /**
   * Everyone out (or asking) on some day of [from, to] (YYYY-MM-DD, inclusive), not cancelled,
   * denied or expired: Switchboard's requests and HR's entries, one row per request (a request
   * Switchboard submitted is listed once, as Switchboard's). Sorted by start date, then name.
   */
  absences(range: Readonly<{ from: string; to: string }>, employeeHrId?: string): AbsenceEntry[];
  /** The Slack user linked to an HR employee, or null. */
  slackUserOfEmployee(employeeHrId: string): string | null;
  /** The HR employee linked to a Slack user, or null. */
  employeeOfSlackUser(slackUserId: string): string | null;
}>;

const FILTER: EventFilter = {
  streamPrefixes: [TIME_OFF_STREAM_PREFIX, HR_TIME_OFF_STREAM_PREFIX, PERSON_STREAM_PREFIX],
};

/** Phases in which a request holds days: approved or on its way to be. */
const HOLDS_DAYS: ReadonlySet<TimeOffPhase> = new Set([
  'requested',
  'awaitingApproval',
  'approved',
  'submitted',
  'confirmed',
  'submissionFailed',
  'cancelling',
]);
const APPROVED: ReadonlySet<TimeOffPhase> = new Set(['approved', 'submitted', 'confirmed', 'cancelling']);

const overlaps = (a: Readonly<{ startDate: string; endDate: string }>, from: string, to: string) =>
  a.startDate <= to && a.endDate >= from;

export const createTimeOffReadModel = (deps: Readonly<{ store: EventStore }>): TimeOffReadModel => {
  let applied: bigint | undefined;
  let requests = new Map<string, TimeOffState>();
  let hrIdOfRequest = new Map<string, string>();
  let requestOfHr = new Map<string, string>();
  let directory: DirectoryState = directoryDecider.initialState();
  let hr = new Map<string, HrTimeOffEntry>();
  let slackOfEmployee = new Map<string, string>();
  let employeeOfSlack = new Map<string, string>();

  const reset = () => {
    applied = undefined;
    requests = new Map();
    hrIdOfRequest = new Map();
    requestOfHr = new Map();
    directory = directoryDecider.initialState();
    hr = new Map();
    slackOfEmployee = new Map();
    employeeOfSlack = new Map();
  };

  const link = (slackUserId: string, employeeHrId: string) => {
    const before = employeeOfSlack.get(slackUserId);
    if (before !== undefined && before !== employeeHrId && slackOfEmployee.get(before) === slackUserId) {
      slackOfEmployee.delete(before);
    }
    employeeOfSlack.set(slackUserId, employeeHrId);
    slackOfEmployee.set(employeeHrId, slackUserId);
  };

  const apply = (e: RecordedEvent) => {
    if (applied !== undefined && e.position <= applied) return;
    applied = e.position;
    if (e.kind !== 'event') return;
    if (e.streamId === TIME_OFF_DIRECTORY_STREAM) {
      directory = directoryDecider.evolve(directory, storedEvent(directoryDecider, e));
      return;
    }
    const timeOffId = requestIdOfStream(e.streamId);
    if (timeOffId !== null) {
      const event = storedEvent(timeOffDecider, e);
      const state = timeOffDecider.evolve(requests.get(timeOffId) ?? timeOffDecider.initialState(), event);
      requests.set(timeOffId, state);
      const r = state.context.request;
      if (r) link(r.requester.slackUserId, r.requester.hrId);
      const hrId = state.context.hrRequestId;
      if (hrId !== null && hrIdOfRequest.get(timeOffId) !== hrId) {
        hrIdOfRequest.set(timeOffId, hrId);
        requestOfHr.set(hrId, timeOffId);
      }
      return;
    }
    const hrRequestId = hrRequestIdOfStream(e.streamId);
    if (hrRequestId !== null) {
      const event = storedEvent(hrCalendarDecider, e);
      const next = hrCalendarDecider.evolve({ entry: hr.get(hrRequestId) ?? null }, event).entry;
      if (next) hr.set(hrRequestId, next);
      return;
    }
    if (e.streamId.startsWith(PERSON_STREAM_PREFIX) && e.type === PERSON_LINKED) {
      const d = e.data as { slackUserId?: unknown; system?: unknown; externalId?: unknown };
      if (d.system === 'hr' && typeof d.slackUserId === 'string' && typeof d.externalId === 'string') {
        link(d.slackUserId, d.externalId);
      }
    }
  };

  let catching: Promise<void> = Promise.resolve();
  const catchUp = (): Promise<void> => {
    const run = async () => {
      for (;;) {
        const page = await deps.store.readAll({
          ...(applied === undefined ? {} : { after: applied }),
          filter: FILTER,
          maxCount: 1_000,
        });
        for (const e of page) apply(e);
        if (page.length < 1_000) return;
      }
    };
    catching = catching.then(run, run);
    return catching;
  };

  const views = (): TimeOffView[] => {
    const out: TimeOffView[] = [];
    for (const state of requests.values()) {
      const v = toTimeOffView(state);
      if (v) out.push(v);
    }
    return out;
  };

  const nameOf = (employeeHrId: string): string =>
    employeeById(directory, employeeHrId)?.displayName || `HR employee ${employeeHrId}`;

  return {
    processor: {
      id: 'timeoff-read-model',
      filter: FILTER,
      resumeFrom: 'start',
      everyReplica: true,
      onStart() {
        reset();
      },
      async handle(event) {
        apply(event);
      },
    },
    catchUp,
    directory: () => directory,
    state: (id) => requests.get(id) ?? null,
    view: (id) => {
      const s = requests.get(id);
      return s ? toTimeOffView(s) : null;
    },
    hrRequestIdOf: (id) => hrIdOfRequest.get(id) ?? null,
    requestOfHrId(hrRequestId) {
      const id = requestOfHr.get(hrRequestId);
      const s = id === undefined ? undefined : requests.get(id);
      return s ? toTimeOffView(s) : null;
    },
    awaitingHrId(employeeHrId, match) {
      return views()
        .filter(
          (v) =>
            v.requester.hrId === employeeHrId &&
            (v.phase === 'approved' || v.phase === 'cancelling') &&
            !hrIdOfRequest.has(v.timeOffId) &&
            v.policyType === match.policyType &&
            v.startDate === match.startDate &&
            v.endDate === match.endDate,
        )
        .sort((a, b) => b.requestedAt.localeCompare(a.requestedAt));
    },
    requestsOf: (slackUserId) =>
      views()
        .filter((v) => v.requester.slackUserId === slackUserId)
        .sort((a, b) => b.requestedAt.localeCompare(a.requestedAt)),
    pendingApprovalsOf: (slackUserId) =>
      views()
        .filter(
          (v) =>
            v.approver.slackUserId === slackUserId &&
            (v.phase === 'requested' || v.phase === 'awaitingApproval'),
        )
        .sort((a, b) => a.requestedAt.localeCompare(b.requestedAt)),
    findByShortId(slackUserId, prefix) {
      const p = prefix.trim().toLowerCase();
      if (p.length < 4) return [];
      return views().filter(
        (v) => v.requester.slackUserId === slackUserId && shortTimeOffId(v.timeOffId).startsWith(p),
      );
    },
    hrEntry: (id) => hr.get(id) ?? null,
    absences(range, employeeHrId) {
      const out: AbsenceEntry[] = [];
      for (const v of views()) {
        if (!HOLDS_DAYS.has(v.phase) || v.phase === 'submissionFailed') continue;
        if (employeeHrId !== undefined && v.requester.hrId !== employeeHrId) continue;
        if (!overlaps(v, range.from, range.to)) continue;
        const hrRequestId = hrIdOfRequest.get(v.timeOffId) ?? null;
        // Cancelled in HR while Switchboard has not heard of it yet: HR is the truth.
        if (hrRequestId !== null && hr.get(hrRequestId)?.status === 'cancelled') continue;
        out.push({
          employeeHrId: v.requester.hrId,
          slackUserId: v.requester.slackUserId,
          displayName: v.requester.displayName,
          policyType: v.policyType,
          startDate: v.startDate,
          endDate: v.endDate,
          startPortion: v.startPortion,
          endPortion: v.endPortion,
          status: APPROVED.has(v.phase) ? 'approved' : 'requested',
          timeOffId: v.timeOffId,
          hrRequestId,
        });
      }
      for (const entry of hr.values()) {
        if (entry.status === 'cancelled' || requestOfHr.has(entry.hrRequestId)) continue;
        if (employeeHrId !== undefined && entry.employeeId !== employeeHrId) continue;
        if (!overlaps(entry, range.from, range.to)) continue;
        out.push({
          employeeHrId: entry.employeeId,
          slackUserId: slackOfEmployee.get(entry.employeeId) ?? null,
          displayName: nameOf(entry.employeeId),
          policyType: entry.policyType,
          startDate: entry.startDate,
          endDate: entry.endDate,
          startPortion: entry.startPortion,
          endPortion: entry.endPortion,
          status: entry.status === 'approved' ? 'approved' : 'requested',
          timeOffId: null,
          hrRequestId: entry.hrRequestId,
        });
      }
      return out.sort(
        (a, b) => a.startDate.localeCompare(b.startDate) || a.displayName.localeCompare(b.displayName),
      );
    },
    slackUserOfEmployee: (id) => slackOfEmployee.get(id) ?? null,
    employeeOfSlackUser: (id) => employeeOfSlack.get(id) ?? null,
  };
};

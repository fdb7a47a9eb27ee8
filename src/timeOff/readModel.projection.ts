import { type TimeOffState, timeOffDecider } from '../../machines/timeOff/decider.ts';
import {
  type DirectoryEmployee,
  type DirectoryState,
  directoryDecider,
  directoryEmployees,
  employeeById,
} from '../../machines/timeOff/directory.ts';
import {
  HR_TIME_OFF_STREAM_PREFIX,
  type HrTimeOffEntry,
  hrCalendarDecider,
  hrRequestIdOfStream,
} from '../../machines/timeOff/hrCalendar.ts';
import type { TimeOffPhase } from '../../machines/timeOff/machine.ts';
import { type TimeOffContext, timeOffMachine } from '../../machines/timeOff/machine.ts';
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
import {
  createResumableState,
  type ReadModelRegistration,
  type ResumableState,
  readModelProcessor,
} from '../processors/snapshots.ts';
import { shortTimeOffId } from './blocks/timeOffIds.ts';
import { type TimeOffView, toTimeOffView } from './blocks/timeOffView.ts';

/**
 * Everything the time-off lifecycle reads without asking HR, in memory, resumed from a snapshot
 * (`snapshot-timeoff-read-model`, src/processors/snapshots.ts; each request kept as its machine
 * state, value and context): every request Switchboard handles (`timeoff-<id>`, folded
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
  /**
   * The time zone its days are in (issue 19): a Switchboard request's requester's zone when asked
   * (UTC for requests recorded before zones were: that is what their dates meant);
   * absent for leave known only from HR (the person's own days: the absences port uses their Slack zone).
   */
  zone?: string;
  /** Where it is known from: a Switchboard request (`timeOffId`) or only HR (`hrRequestId`). */
  timeOffId: string | null;
  hrRequestId: string | null;
}>;

export type TimeOffReadModel = Readonly<{
  processor: Processor;
  /** Its snapshots (`snapshot-timeoff-read-model`) and `npm run events -- rebuild timeoff-read-model`. */
  resumable: ResumableState;
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

/** Version of the snapshotted state and of `apply`: bump it when either changes (rebuilds from zero). */
export const TIME_OFF_READ_MODEL_VERSION = 2; // 2: on-call conflicts and cover (issue 12)
export const TIME_OFF_READ_MODEL_ID = 'timeoff-read-model';

/** The snapshot's JSON: each request as its machine state (value and context), the rest as lists. */
type Saved = Readonly<{
  requests: ReadonlyArray<readonly [string, Readonly<{ value: unknown; context: TimeOffContext }>]>;
  directory: readonly DirectoryEmployee[];
  hr: readonly HrTimeOffEntry[];
  links: ReadonlyArray<readonly [string, string]>;
}>;

export const createTimeOffReadModel = (deps: Readonly<{ store: EventStore }>): TimeOffReadModel => {
  let requests = new Map<string, TimeOffState>();
  let hrIdOfRequest = new Map<string, string>();
  let requestOfHr = new Map<string, string>();
  let directory: DirectoryState = directoryDecider.initialState();
  let hr = new Map<string, HrTimeOffEntry>();
  let slackOfEmployee = new Map<string, string>();
  let employeeOfSlack = new Map<string, string>();

  const reset = () => {
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
      rememberHrId(timeOffId, state);
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

  const rememberHrId = (timeOffId: string, state: TimeOffState) => {
    const hrId = state.context.hrRequestId;
    if (hrId !== null && hrIdOfRequest.get(timeOffId) !== hrId) {
      hrIdOfRequest.set(timeOffId, hrId);
      requestOfHr.set(hrId, timeOffId);
    }
  };

  const save = (): Saved => ({
    requests: [...requests].map(
      ([id, state]) => [id, { value: state.value, context: state.context }] as const,
    ),
    directory: [...directoryEmployees(directory)],
    hr: [...hr.values()],
    links: [...employeeOfSlack],
  });

  const load = (raw: unknown) => {
    const saved = raw as Saved;
    for (const [id, { value, context }] of saved.requests) {
      const state = timeOffMachine.resolveState({ value: value as never, context });
      requests.set(id, state);
      rememberHrId(id, state);
    }
    for (const employee of saved.directory) {
      directory = directoryDecider.evolve(directory, {
        type: 'DirectoryEmployeeAdded',
        data: { ...employee, at: '' },
      });
    }
    for (const entry of saved.hr) hr.set(entry.hrRequestId, entry);
    for (const [slackUserId, employeeHrId] of saved.links) link(slackUserId, employeeHrId);
  };

  const resumable = createResumableState({
    name: TIME_OFF_READ_MODEL_ID,
    version: TIME_OFF_READ_MODEL_VERSION,
    filter: FILTER,
    store: deps.store,
    apply,
    save,
    load,
    reset,
  });
  const catchUp = resumable.catchUp;

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
    processor: readModelProcessor(TIME_OFF_READ_MODEL_ID, FILTER, resumable),
    resumable,
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
          // Requests recorded before issue 19 carry no zone: their dates were UTC days.
          zone: v.zone ?? 'UTC',
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

/** Registered by its module's declaration (`readModels`). */
export const TIME_OFF_READ_MODEL: ReadModelRegistration = {
  name: TIME_OFF_READ_MODEL_ID,
  create: (store) => createTimeOffReadModel({ store }).resumable,
};

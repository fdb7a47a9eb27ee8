import { z } from 'zod';
import { eventParser } from '../shared/eventSchemas.ts';
import { type Decider, DecisionRejected } from '../shared/machineDecider.ts';
import { type Command, type Event, exhaustive } from '../shared/messages.ts';

/**
 * The employee directory as events, one stream (`timeoff-directory`, streams.ts), so requests,
 * approvals and `/whosout` read who is who without spending an HR people search each (searches
 * are limited to 50 a minute and answer every match at once).
 *
 * It is fed by full searches (`RecordDirectorySnapshot`, periodic) and by single employees re-read
 * after an HR webhook (`RecordEmployeeUpdate`, `RecordEmployeeLeft`). Only differences are
 * recorded, one small fact per person: a snapshot of 5,000 people that changes nothing records
 * nothing, one manager change records one fact.
 *
 * Not an XState machine: the directory has no lifecycle states, only a set of people, and folding
 * it through a machine's `assign` would copy every person per event. `evolve` never mutates the
 * state it is given; the state's maps are bucketed so a change copies little (see Buckets).
 */

export const employeeStatusSchema = z.enum(['active', 'inactive', 'left']);
export type EmployeeStatus = z.infer<typeof employeeStatusSchema>;

const hrId = z.string().min(1).max(64);
const at = z.string().min(1);

export const directoryEmployeeSchema = z.object({
  hrId,
  /** Lower-cased: how Slack users are matched to employees. */
  email: z.string().min(3).max(320),
  displayName: z.string().max(200),
  managerHrId: hrId.nullable(),
  site: z.string().max(200).nullable(),
  status: employeeStatusSchema,
});
export type DirectoryEmployee = z.infer<typeof directoryEmployeeSchema>;

/** The fields of a person that can change (everything but the HR id), as a change set. */
const employeeChangesSchema = directoryEmployeeSchema.omit({ hrId: true }).partial();
export type EmployeeChanges = z.infer<typeof employeeChangesSchema>;

export const directoryEventDataSchemas = {
  DirectoryEmployeeAdded: directoryEmployeeSchema.extend({ at }),
  /** Only the fields that changed. */
  DirectoryEmployeeChanged: z.object({ hrId, changes: employeeChangesSchema, at }),
  /** Left the company (HR's employee left / deleted, or gone from a full search). */
  DirectoryEmployeeLeft: z.object({ hrId, at }),
} as const;

type EventSchemas = typeof directoryEventDataSchemas;
export type DirectoryEvent = {
  [T in keyof EventSchemas]: Event<T, z.infer<EventSchemas[T]>>;
}[keyof EventSchemas];

export const DIRECTORY_MAX_EMPLOYEES = 50_000;

export const directoryCommandDataSchemas = {
  /**
   * A full people search (inactive people included): everyone HR has. People we know who are not
   * in it have left.
   */
  RecordDirectorySnapshot: z.object({
    employees: z.array(directoryEmployeeSchema).max(DIRECTORY_MAX_EMPLOYEES),
  }),
  /** One employee re-read after a webhook (created, updated, joined). */
  RecordEmployeeUpdate: z.object({ employee: directoryEmployeeSchema }),
  /** HR said the employee left or was deleted. */
  RecordEmployeeLeft: z.object({ hrId }),
} as const;

type CommandSchemas = typeof directoryCommandDataSchemas;
export type DirectoryCommand = {
  [T in keyof CommandSchemas]: Command<T, z.infer<CommandSchemas[T]>>;
}[keyof CommandSchemas];

/**
 * A map that is never mutated but cheap to change: keys spread over a fixed number of buckets, and
 * a change copies the bucket array and one bucket (about n/256 entries) instead of the whole map.
 * Folding the 5,000 first-load facts one `evolve` at a time stays linear.
 */
const BUCKETS = 256;
type Buckets<V> = readonly ReadonlyMap<string, V>[];
const EMPTY_BUCKET: ReadonlyMap<string, never> = new Map<string, never>();
const emptyBuckets = <V>(): Buckets<V> => Array.from({ length: BUCKETS }, () => EMPTY_BUCKET);
const bucketOf = (key: string): number => {
  let h = 0;
  for (let i = 0; i < key.length; i++) h = (Math.imul(h, 31) + key.charCodeAt(i)) | 0;
  return (h >>> 0) % BUCKETS;
};
const getIn = <V>(buckets: Buckets<V>, key: string): V | undefined => buckets[bucketOf(key)]?.get(key);
const setIn = <V>(buckets: Buckets<V>, key: string, value: V | undefined): Buckets<V> => {
  const i = bucketOf(key);
  const bucket = new Map(buckets[i]);
  if (value === undefined) bucket.delete(key);
  else bucket.set(key, value);
  const next = buckets.slice();
  next[i] = bucket;
  return next;
};
function* valuesOf<V>(buckets: Buckets<V>): Generator<V> {
  for (const bucket of buckets) yield* bucket.values();
}

export type DirectoryState = Readonly<{
  employees: Buckets<DirectoryEmployee>;
  /** Lower-cased email → HR id. */
  byEmail: Buckets<string>;
  size: number;
}>;

export const normaliseEmail = (email: string): string => email.trim().toLowerCase();

const normalise = (e: DirectoryEmployee): DirectoryEmployee => ({
  hrId: e.hrId,
  email: normaliseEmail(e.email),
  displayName: e.displayName.trim(),
  managerHrId: e.managerHrId === '' ? null : e.managerHrId,
  site: e.site === '' ? null : e.site,
  status: e.status,
});

const CHANGEABLE = ['email', 'displayName', 'managerHrId', 'site', 'status'] as const;

/** The fields of `next` that differ from `known`; null when none do. */
export const employeeChanges = (
  known: DirectoryEmployee,
  next: DirectoryEmployee,
): EmployeeChanges | null => {
  const changes: Record<string, unknown> = {};
  for (const field of CHANGEABLE) {
    if (known[field] !== next[field]) changes[field] = next[field];
  }
  return Object.keys(changes).length === 0 ? null : (changes as EmployeeChanges);
};

/** The facts that bring `known` (possibly unknown) to `next`. */
const diffOne = (
  known: DirectoryEmployee | undefined,
  next: DirectoryEmployee,
  now: string,
): DirectoryEvent[] => {
  if (!known) return [{ type: 'DirectoryEmployeeAdded', data: { ...next, at: now } }];
  if (next.status === 'left' && known.status !== 'left') {
    const { status: _status, ...rest } = next;
    const others = employeeChanges({ ...known, status: 'left' }, { ...rest, status: 'left' });
    return [
      ...(others
        ? [{ type: 'DirectoryEmployeeChanged' as const, data: { hrId: next.hrId, changes: others, at: now } }]
        : []),
      { type: 'DirectoryEmployeeLeft', data: { hrId: next.hrId, at: now } },
    ];
  }
  const changes = employeeChanges(known, next);
  return changes ? [{ type: 'DirectoryEmployeeChanged', data: { hrId: next.hrId, changes, at: now } }] : [];
};

const refuse = (reason: string, message: string, details: Record<string, unknown> = {}) =>
  new DecisionRejected(message, { reason, ...details });

const decide = (command: DirectoryCommand, state: DirectoryState): DirectoryEvent[] => {
  const now = command.metadata.now;
  switch (command.type) {
    case 'RecordDirectorySnapshot': {
      const seen = new Set<string>();
      const events: DirectoryEvent[] = [];
      for (const raw of command.data.employees) {
        if (seen.has(raw.hrId)) {
          throw refuse('duplicate_employee', `The snapshot lists employee ${raw.hrId} twice.`, {
            hrId: raw.hrId,
          });
        }
        seen.add(raw.hrId);
        events.push(...diffOne(getIn(state.employees, raw.hrId), normalise(raw), now));
      }
      for (const known of valuesOf(state.employees)) {
        if (!seen.has(known.hrId) && known.status !== 'left') {
          events.push({ type: 'DirectoryEmployeeLeft', data: { hrId: known.hrId, at: now } });
        }
      }
      return events;
    }
    case 'RecordEmployeeUpdate': {
      const next = normalise(command.data.employee);
      return diffOne(getIn(state.employees, next.hrId), next, now);
    }
    case 'RecordEmployeeLeft': {
      const known = getIn(state.employees, command.data.hrId);
      return known && known.status !== 'left'
        ? [{ type: 'DirectoryEmployeeLeft', data: { hrId: known.hrId, at: now } }]
        : [];
    }
    default:
      return exhaustive(command, 'directory command');
  }
};

const withEmployee = (
  state: DirectoryState,
  previous: DirectoryEmployee | undefined,
  next: DirectoryEmployee,
): DirectoryState => {
  const employees = setIn(state.employees, next.hrId, next);
  const size = previous ? state.size : state.size + 1;
  if (previous?.email === next.email) return { employees, byEmail: state.byEmail, size };
  let byEmail = state.byEmail;
  if (previous && getIn(byEmail, previous.email) === previous.hrId)
    byEmail = setIn(byEmail, previous.email, undefined);
  byEmail = setIn(byEmail, next.email, next.hrId);
  return { employees, byEmail, size };
};

const evolve = (state: DirectoryState, event: DirectoryEvent): DirectoryState => {
  switch (event.type) {
    case 'DirectoryEmployeeAdded': {
      const { at: _at, ...employee } = event.data;
      return withEmployee(state, getIn(state.employees, employee.hrId), employee);
    }
    case 'DirectoryEmployeeChanged': {
      const known = getIn(state.employees, event.data.hrId);
      if (!known) return state;
      return withEmployee(state, known, { ...known, ...event.data.changes });
    }
    case 'DirectoryEmployeeLeft': {
      const known = getIn(state.employees, event.data.hrId);
      if (!known) return state;
      return withEmployee(state, known, { ...known, status: 'left' });
    }
    default:
      return exhaustive(event, 'directory event');
  }
};

export const directoryDecider: Decider<DirectoryState, DirectoryCommand, DirectoryEvent> = {
  decide,
  evolve,
  initialState: () => ({ employees: emptyBuckets(), byEmail: emptyBuckets(), size: 0 }),
  parseEvent: eventParser<DirectoryEvent>('directory', { schemas: directoryEventDataSchemas }),
  commandSchemas: directoryCommandDataSchemas,
};

// Queries: what requests, approvals and /whosout ask of the directory.

export const employeeByEmail = (state: DirectoryState, email: string): DirectoryEmployee | null => {
  const id = getIn(state.byEmail, normaliseEmail(email));
  return id === undefined ? null : (getIn(state.employees, id) ?? null);
};

export const employeeById = (state: DirectoryState, id: string): DirectoryEmployee | null =>
  getIn(state.employees, id) ?? null;

export const isActive = (state: DirectoryState, id: string): boolean =>
  getIn(state.employees, id)?.status === 'active';

/** The employee's manager (who approves their time off), or null when none is recorded or known. */
export const managerOf = (state: DirectoryState, id: string): DirectoryEmployee | null => {
  const managerId = getIn(state.employees, id)?.managerHrId;
  return managerId ? (getIn(state.employees, managerId) ?? null) : null;
};

/** The active people who report to a manager, by display name. */
export const teamOf = (state: DirectoryState, managerHrId: string): DirectoryEmployee[] =>
  [...valuesOf(state.employees)]
    .filter((e) => e.managerHrId === managerHrId && e.status === 'active')
    .sort((a, b) => a.displayName.localeCompare(b.displayName) || a.hrId.localeCompare(b.hrId));

/** The requester's teammates: the other active people with the same manager. */
export const teammatesOf = (state: DirectoryState, id: string): DirectoryEmployee[] => {
  const managerId = getIn(state.employees, id)?.managerHrId;
  return managerId ? teamOf(state, managerId).filter((e) => e.hrId !== id) : [];
};

/** Everyone the directory holds (leavers included). */
export const directoryEmployees = (state: DirectoryState): Iterable<DirectoryEmployee> =>
  valuesOf(state.employees);

import { z } from 'zod';
import { eventParser } from '../shared/eventSchemas.ts';
import type { Decider } from '../shared/machineDecider.ts';
import { type Command, type Event, exhaustive } from '../shared/messages.ts';

/**
 * Time off as HR has it, one stream per HR request (`hrtimeoff-<HR request id>`): what people
 * requested or cancelled in the HR web app, and HR's side of the requests Switchboard submitted.
 * `/whosout`, App Home and the `absences` port read it, so a request made in HR shows up in Slack.
 *
 * Fed by a processor that re-reads what HR's webhooks (`timeoff.request.*`) and the changes poll
 * point at (a webhook is a notification, never the data itself). Only differences are recorded:
 * the same entry seen again (a redelivered webhook, the poll after the webhook) records nothing.
 */
export const HR_TIME_OFF_STREAM_PREFIX = 'hrtimeoff-';

const HR_REQUEST_ID = /^[0-9]{1,18}$/;

/** HR request ids are whole numbers; anything else from a payload is refused before naming a stream. */
export const parseHrRequestId = (value: unknown): string | null => {
  const text = typeof value === 'number' && Number.isSafeInteger(value) ? String(value) : value;
  return typeof text === 'string' && HR_REQUEST_ID.test(text) ? text : null;
};

export const hrTimeOffStreamId = (hrRequestId: string): string => {
  if (parseHrRequestId(hrRequestId) === null) {
    throw new TypeError(`not an HR request id: ${JSON.stringify(hrRequestId)}`);
  }
  return HR_TIME_OFF_STREAM_PREFIX + hrRequestId;
};

export const hrRequestIdOfStream = (streamId: string): string | null =>
  streamId.startsWith(HR_TIME_OFF_STREAM_PREFIX)
    ? parseHrRequestId(streamId.slice(HR_TIME_OFF_STREAM_PREFIX.length))
    : null;

const isoDate = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'must be a YYYY-MM-DD date');
const portion = z.enum(['all_day', 'morning', 'afternoon']);

/** HR's statuses, folded: pending (waiting in HR), approved, or cancelled (also declined, deleted). */
export const hrTimeOffStatusSchema = z.enum(['pending', 'approved', 'cancelled']);
export type HrTimeOffStatus = z.infer<typeof hrTimeOffStatusSchema>;

/** HR's status word as one of ours (`canceled`, `declined`, `rejected`, `deleted` are cancelled). */
export const hrTimeOffStatusOf = (status: string | undefined, approved?: boolean): HrTimeOffStatus => {
  const s = (status ?? '').toLowerCase();
  if (['canceled', 'cancelled', 'declined', 'rejected', 'deleted'].includes(s)) return 'cancelled';
  if (s === 'approved' || approved === true) return 'approved';
  return 'pending';
};

export const hrTimeOffEntrySchema = z.object({
  hrRequestId: z.string().regex(HR_REQUEST_ID),
  employeeId: z.string().min(1).max(64),
  /** The policy type's display name ("Holiday"). */
  policyType: z.string().max(100),
  startDate: isoDate,
  endDate: isoDate,
  startPortion: portion,
  endPortion: portion,
  status: hrTimeOffStatusSchema,
});
export type HrTimeOffEntry = z.infer<typeof hrTimeOffEntrySchema>;

const at = z.string().min(1);

export const hrCalendarEventDataSchemas = {
  /** First seen, or seen changed (dates, portions, status other than cancelled). */
  HrTimeOffRecorded: hrTimeOffEntrySchema.extend({ at }),
  /** Cancelled, declined or deleted in HR. */
  HrTimeOffCancelled: z.object({ hrRequestId: z.string().regex(HR_REQUEST_ID), at }),
} as const;

type EventSchemas = typeof hrCalendarEventDataSchemas;
export type HrCalendarEvent = {
  [T in keyof EventSchemas]: Event<T, z.infer<EventSchemas[T]>>;
}[keyof EventSchemas];

export const hrCalendarCommandDataSchemas = {
  /** What HR answered when the entry was re-read (after a webhook, the changes poll or a read-back). */
  RecordHrTimeOff: z.object({ entry: hrTimeOffEntrySchema }),
} as const;

type CommandSchemas = typeof hrCalendarCommandDataSchemas;
export type HrCalendarCommand = {
  [T in keyof CommandSchemas]: Command<T, z.infer<CommandSchemas[T]>>;
}[keyof CommandSchemas];

export type HrCalendarState = Readonly<{ entry: HrTimeOffEntry | null }>;

const same = (a: HrTimeOffEntry, b: HrTimeOffEntry): boolean =>
  a.employeeId === b.employeeId &&
  a.policyType === b.policyType &&
  a.startDate === b.startDate &&
  a.endDate === b.endDate &&
  a.startPortion === b.startPortion &&
  a.endPortion === b.endPortion &&
  a.status === b.status;

const decide = (command: HrCalendarCommand, state: HrCalendarState): HrCalendarEvent[] => {
  const now = command.metadata.now;
  switch (command.type) {
    case 'RecordHrTimeOff': {
      const next = command.data.entry;
      const known = state.entry;
      if (known && same(known, next)) return [];
      if (next.status === 'cancelled') {
        // Never seen before and already cancelled: record it, so a poll does not keep asking.
        if (known?.status === 'cancelled') return [];
        return known
          ? [{ type: 'HrTimeOffCancelled', data: { hrRequestId: next.hrRequestId, at: now } }]
          : [{ type: 'HrTimeOffRecorded', data: { ...next, at: now } }];
      }
      // A cancelled request does not come back (HR has no un-cancel); a late read of the old state is ignored.
      if (known?.status === 'cancelled') return [];
      return [{ type: 'HrTimeOffRecorded', data: { ...next, at: now } }];
    }
    default:
      return exhaustive(command.type, 'HR calendar command');
  }
};

const evolve = (state: HrCalendarState, event: HrCalendarEvent): HrCalendarState => {
  switch (event.type) {
    case 'HrTimeOffRecorded': {
      const { at: _at, ...entry } = event.data;
      return { entry };
    }
    case 'HrTimeOffCancelled':
      return state.entry ? { entry: { ...state.entry, status: 'cancelled' } } : state;
    default:
      return exhaustive(event, 'HR calendar event');
  }
};

export const hrCalendarDecider: Decider<HrCalendarState, HrCalendarCommand, HrCalendarEvent> = {
  decide,
  evolve,
  initialState: () => ({ entry: null }),
  parseEvent: eventParser<HrCalendarEvent>('HR time off', { schemas: hrCalendarEventDataSchemas }),
  commandSchemas: hrCalendarCommandDataSchemas,
};

export const HR_CALENDAR_EVENT_TYPES = Object.keys(hrCalendarEventDataSchemas) as HrCalendarEvent['type'][];

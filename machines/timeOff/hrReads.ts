import { z } from 'zod';
import { eventParser } from '../shared/eventSchemas.ts';
import type { Decider } from '../shared/machineDecider.ts';
import { type Command, type Event, exhaustive } from '../shared/messages.ts';
import {
  afterFailedAttempt,
  afterRetry,
  decideFailure,
  decideRetry,
  recordUpstreamCallFailedSchema,
  retryUpstreamCallSchema,
  type UpstreamRequest,
  upstreamCallFailedSchema,
  withoutRequest,
} from '../shared/upstreamRequest.ts';
import { parseHrRequestId } from './hrCalendar.ts';

/**
 * Re-reads of what HR's webhooks point at, durable and lag-aware, one stream per thing read:
 * `hrread-timeoff-<HR request id>` and `hrread-employee-<HR employee id>`.
 *
 * A webhook is a notification, never the data: it records `RequestHrReRead`, and the HR sync
 * processor (src/timeOff/hrSync.ts) reads the thing through the API and records what it found
 * (`RecordHrTimeOff`, `RecordEmployeeUpdate`, `RecordEmployeeLeft`, on their own streams).
 *
 * HR shows a write up to ~20 s late, and the webhook comes at once: so a re-read is due only
 * `notBefore` (the delivery's arrival plus HR's lag), never earlier, and a read that still does not
 * show what the notification said (a 404, a cancel not shown yet, an employee who left still
 * employed) is a failed attempt retried on the lag policy. A read taken after the lag cannot be
 * older than the notification, so it never undoes a newer fact.
 *
 * Each re-read is a pending request (machines/shared/upstreamRequest.ts) that starts WAITING for
 * its first attempt: `attempt` 0, `nextAttemptAt` = `notBefore`; the processor's retry timer starts
 * attempt 1 then, exactly like a retry. The same notification again while one is still waiting (a
 * redelivery with other bytes, the requested and the joined event of one hire) adds nothing.
 */
export const HR_READ_STREAM_PREFIX = 'hrread-';

export const hrReadActionSchema = z.enum(['read_timeoff', 'read_employee']);
export type HrReadAction = z.infer<typeof hrReadActionSchema>;

/** What the notification said, and so what a read must show before it counts. */
export const hrReadExpectSchema = z.enum(['present', 'cancelled', 'left', 'any']);
export type HrReadExpect = z.infer<typeof hrReadExpectSchema>;

const EMPLOYEE_ID = /^[A-Za-z0-9_-]{1,64}$/;

/** An HR employee id from a (hostile) payload, or null. */
export const parseHrEmployeeId = (value: unknown): string | null => {
  const text = typeof value === 'number' && Number.isSafeInteger(value) ? String(value) : value;
  return typeof text === 'string' && EMPLOYEE_ID.test(text) ? text : null;
};

export const hrReadStreamId = (action: HrReadAction, id: string): string => {
  const ok = action === 'read_timeoff' ? parseHrRequestId(id) !== null : parseHrEmployeeId(id) !== null;
  if (!ok) throw new TypeError(`not an HR id to read: ${JSON.stringify(id)}`);
  return `${HR_READ_STREAM_PREFIX}${action === 'read_timeoff' ? 'timeoff' : 'employee'}-${id}`;
};

/** Which thing a re-read stream reads, or null. */
export const hrReadOfStream = (streamId: string): Readonly<{ action: HrReadAction; id: string }> | null => {
  const m = /^hrread-(timeoff|employee)-(.+)$/.exec(streamId);
  if (!m) return null;
  const action: HrReadAction = m[1] === 'timeoff' ? 'read_timeoff' : 'read_employee';
  const id = action === 'read_timeoff' ? parseHrRequestId(m[2]) : parseHrEmployeeId(m[2]);
  return id === null ? null : { action, id };
};

const id = z.string().min(1).max(200);
const at = z.string().min(1);
const employeeId = z.string().regex(EMPLOYEE_ID);
const thingId = z.string().min(1).max(64);

export const hrReadEventDataSchemas = {
  /** A re-read asked for (`readId`), due from `notBefore`. */
  HrReReadRequested: z.object({
    readId: id,
    action: hrReadActionSchema,
    /** The HR request id (read_timeoff) or employee id (read_employee). */
    id: thingId,
    /** The employee whose request or record it is. */
    employeeId,
    expect: hrReadExpectSchema,
    /** The webhook type (or `poll`) that asked. */
    reason: z.string().max(100),
    notBefore: at,
    at,
  }),
  /** Read, and what it found recorded where it belongs. */
  HrReReadDone: z.object({ readId: id, at }),
  HrReReadFailed: upstreamCallFailedSchema(hrReadActionSchema),
  /** Attempt `attempt` starts (1 for the first, due at `notBefore`). */
  HrReReadRetried: z.object({
    requestId: id,
    action: hrReadActionSchema,
    attempt: z.number().int().min(1),
    at,
  }),
} as const;

type EventSchemas = typeof hrReadEventDataSchemas;
export type HrReadEvent = {
  [T in keyof EventSchemas]: Event<T, z.infer<EventSchemas[T]>>;
}[keyof EventSchemas];

export const hrReadCommandDataSchemas = {
  RequestHrReRead: z.object({
    action: hrReadActionSchema,
    id: thingId,
    employeeId,
    expect: hrReadExpectSchema,
    reason: z.string().max(100),
    notBefore: at,
  }),
  RecordHrReReadDone: z.object({ action: hrReadActionSchema, id: thingId, readId: id }),
  RecordHrReReadFailed: recordUpstreamCallFailedSchema(hrReadActionSchema).extend({ id: thingId }),
  RetryHrReRead: retryUpstreamCallSchema(hrReadActionSchema).extend({ id: thingId }),
} as const;

type CommandSchemas = typeof hrReadCommandDataSchemas;
export type HrReadCommand = {
  [T in keyof CommandSchemas]: Command<T, z.infer<CommandSchemas[T]>>;
}[keyof CommandSchemas];

export type HrRead = UpstreamRequest<HrReadAction> &
  Readonly<{ id: string; employeeId: string; expect: HrReadExpect; reason: string }>;

export type HrReadState = Readonly<{ reads: readonly HrRead[] }>;

const decide = (command: HrReadCommand, state: HrReadState): HrReadEvent[] => {
  const now = command.metadata.now;
  switch (command.type) {
    case 'RequestHrReRead': {
      const d = command.data;
      // One waiting for its first attempt, expecting the same, covers this notification too.
      if (state.reads.some((r) => r.attempt === 0 && r.expect === d.expect)) return [];
      return [
        {
          type: 'HrReReadRequested',
          data: {
            readId: command.metadata.commandId,
            action: d.action,
            id: d.id,
            employeeId: d.employeeId,
            expect: d.expect,
            reason: d.reason,
            notBefore: d.notBefore,
            at: now,
          },
        },
      ];
    }
    case 'RecordHrReReadDone': {
      const read = state.reads.find((r) => r.requestId === command.data.readId);
      return read && read.attempt >= 1
        ? [{ type: 'HrReReadDone', data: { readId: read.requestId, at: now } }]
        : [];
    }
    case 'RecordHrReReadFailed': {
      const { id: _id, ...report } = command.data;
      const fact = decideFailure(
        state.reads.find((r) => r.requestId === report.requestId),
        report,
        now,
      );
      return fact ? [{ type: 'HrReReadFailed', data: fact }] : [];
    }
    case 'RetryHrReRead': {
      const { id: _id, ...retry } = command.data;
      const fact = decideRetry(
        state.reads.find((r) => r.requestId === retry.requestId),
        retry,
        now,
      );
      return fact ? [{ type: 'HrReReadRetried', data: fact }] : [];
    }
    default:
      return exhaustive(command, 'HR re-read command');
  }
};

const evolve = (state: HrReadState, event: HrReadEvent): HrReadState => {
  switch (event.type) {
    case 'HrReReadRequested': {
      const d = event.data;
      const read: HrRead = {
        requestId: d.readId,
        action: d.action,
        attempt: 0,
        failedAttempts: 0,
        nextAttemptAt: d.notBefore,
        id: d.id,
        employeeId: d.employeeId,
        expect: d.expect,
        reason: d.reason,
      };
      return { reads: [...state.reads, read] };
    }
    case 'HrReReadDone':
      return { reads: withoutRequest(state.reads, event.data.readId) };
    case 'HrReReadFailed':
      return { reads: afterFailedAttempt(state.reads, event.data) };
    case 'HrReReadRetried':
      return { reads: afterRetry(state.reads, event.data) };
    default:
      return exhaustive(event, 'HR re-read event');
  }
};

export const hrReadDecider: Decider<HrReadState, HrReadCommand, HrReadEvent> = {
  decide,
  evolve,
  initialState: () => ({ reads: [] }),
  parseEvent: eventParser<HrReadEvent>('HR re-read', { schemas: hrReadEventDataSchemas }),
  commandSchemas: hrReadCommandDataSchemas,
};

export const HR_READ_EVENT_TYPES = Object.keys(hrReadEventDataSchemas) as HrReadEvent['type'][];

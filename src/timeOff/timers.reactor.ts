import { requestIdOfStream, TIME_OFF_STREAM_PREFIX } from '../../machines/timeOff/streams.ts';
import type { Processor } from '../processors/runner.ts';
import { scheduleTimer } from '../processors/scheduler.ts';

/**
 * `timeoff-timers`: when a request is made (`TimeOffRequested`), or resubmitted with dates that
 * need the approver again (`TimeOffResubmitted { reapproval: true }`), schedules the reminders to
 * its approver (`RemindTimeOffApprover` at each `remindAt`, 1-based) and its expiry
 * (`ExpireTimeOff` at `expiresAt`) as durable timers (the scheduler fires them on its clock).
 *
 * Timer ids are deterministic (request, which timer, its due time), so a redelivered event
 * schedules nothing twice, and a resubmission's new schedule gets new timers. A timer that fires
 * after the request was decided, or one of an earlier schedule, is answered by the decider (nothing
 * to do, or not due), never by this processor.
 */
export const TIME_OFF_TIMERS_PROCESSOR = 'timeoff-timers';
const ACTOR = 'system:timeoff-timers';

const stamp = (iso: string): string => iso.replace(/[^0-9]/g, '').slice(0, 17);

export const createTimeOffTimersReactor = (): Processor => ({
  id: TIME_OFF_TIMERS_PROCESSOR,
  filter: {
    streamPrefixes: [TIME_OFF_STREAM_PREFIX],
    eventTypes: ['TimeOffRequested', 'TimeOffResubmitted'],
  },
  async handle(event, ctx) {
    if (event.kind !== 'event') return;
    const timeOffId = requestIdOfStream(event.streamId);
    if (timeOffId === null) return;
    const d = event.data as { remindAt?: unknown; expiresAt?: unknown; reapproval?: unknown };
    if (event.type === 'TimeOffResubmitted' && d.reapproval !== true) return;
    const remindAt = Array.isArray(d.remindAt)
      ? d.remindAt.filter((t): t is string => typeof t === 'string')
      : [];
    const metadata = { actor: ACTOR, causationId: event.id };
    for (const [i, dueAt] of remindAt.entries()) {
      await scheduleTimer(ctx.store, {
        timerId: `timeoff-remind-${timeOffId}-${i + 1}-${stamp(dueAt)}`,
        dueAt,
        now: ctx.now(),
        command: { type: 'RemindTimeOffApprover', data: { timeOffId, reminder: i + 1 }, metadata },
      });
    }
    if (typeof d.expiresAt === 'string') {
      await scheduleTimer(ctx.store, {
        timerId: `timeoff-expire-${timeOffId}-${stamp(d.expiresAt)}`,
        dueAt: d.expiresAt,
        now: ctx.now(),
        command: { type: 'ExpireTimeOff', data: { timeOffId }, metadata },
      });
    }
  },
});

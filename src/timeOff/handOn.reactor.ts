import { employeeById } from '../../machines/timeOff/directory.ts';
import { hrChannelApprover, isHrChannelApprover, type TimeOffPerson } from '../../machines/timeOff/events.ts';
import { HAND_ON_SWEEP_STREAM_PREFIX } from '../../machines/timeOff/handOnSweep.ts';
import { HR_TIME_OFF_STREAM_PREFIX } from '../../machines/timeOff/hrCalendar.ts';
import {
  requestIdOfStream,
  TIME_OFF_DIRECTORY_STREAM,
  TIME_OFF_STREAM_PREFIX,
} from '../../machines/timeOff/streams.ts';
import { uuidv5 } from '../core/ids.ts';
import type { RecordedEvent } from '../eventStore/eventStore.ts';
import type { Logger } from '../logger.ts';
import { type Dispatch, dispatchCommand } from '../processors/dispatchCommand.ts';
import type { Processor, ProcessorContext } from '../processors/runner.ts';
import { scheduleTimer } from '../processors/scheduler.ts';
import type { TimeOffView } from './blocks/timeOffView.ts';
import type { TimeOffPeople } from './people.ts';
import type { TimeOffReadModel } from './readModel.projection.ts';

/**
 * `timeoff-hand-on` (issue 12, capabilities 2 and 3, the time-off half): a request waiting for an
 * approver who goes away or leaves is handed on (`HandOnTimeOff`) to the next one up the
 * requester's reporting line who can decide, or the HR channel (the rule: approvers.ts), and the
 * waiting requests of someone who left are cancelled (`CancelTimeOffOfLeaver`). What triggers a
 * re-check of the requests waiting for someone:
 *
 * - `DirectoryEmployeeLeft`: the requests waiting for the leaver are handed on, their own requests
 *   still waiting for approval are cancelled (approved leave of a leaver is left alone: HR owns it);
 * - `HrTimeOffRecorded` (HR's calendar, approved) and `TimeOffApproved` (Switchboard's): the
 *   person's new leave may cover today or the first day of requests waiting for them;
 * - the daily sweep (`TimeOffApproversSwept`, a durable timer at 00:00 UTC, scheduled while
 *   requests wait): leave that starts today;
 * - `DirectoryEmployeeChanged` with a new manager: the employee's own requests waiting for
 *   someone gone can now go to them.
 *
 * When the approver left and nobody can take it (no HR channel), `RecordTimeOffApproverGone` tells
 * the requester (once) and an operator is warned in the logs.
 *
 * A request is handed on only when its approver is away (approved leave covering today or the
 * request's first day) or has left, and only to someone who can decide now: a request already
 * waiting for an away approver because nobody else could is not moved to another away one. When
 * nobody can take a leaver's requests (no HR channel), they stay and an operator is warned in the
 * logs. Commands have deterministic ids (the triggering event and the request), so a redelivery
 * hands nothing on twice; the decider ignores a request that was decided meanwhile.
 */
export const TIME_OFF_HAND_ON_PROCESSOR = 'timeoff-hand-on';
const ACTOR = 'system:timeoff-hand-on';

const WAITING = new Set(['requested', 'awaitingApproval']);
const EVERYTHING = { from: '0000-01-01', to: '9999-12-31' } as const;

const nextDay = (now: Date): string => new Date(now.getTime() + 86_400_000).toISOString().slice(0, 10);

export const approverSweepTimerId = (day: string): string => `timeoff-approver-sweep-${day}`;

export type TimeOffHandOnOptions = Readonly<{
  dispatch: Dispatch;
  readModel: TimeOffReadModel;
  people: TimeOffPeople;
  logger: Logger;
}>;

export const createTimeOffHandOnReactor = (options: TimeOffHandOnOptions): Processor => {
  const { readModel, people, logger } = options;

  const send = async (
    ctx: ProcessorContext,
    cause: RecordedEvent,
    type: 'HandOnTimeOff' | 'CancelTimeOffOfLeaver' | 'RecordTimeOffApproverGone',
    data: Readonly<Record<string, unknown>> & { timeOffId: string },
  ) => {
    const outcome = await dispatchCommand(options.dispatch, {
      type,
      data: data as never,
      metadata: {
        now: ctx.now().toISOString(),
        commandId: uuidv5(`timeoff-hand-on:${type}:${cause.id}:${data.timeOffId}`),
        actor: ACTOR,
        causationId: cause.id,
      },
    });
    if (outcome.outcome === 'rejected') {
      ctx.logger.warn(
        { code: outcome.code, message: outcome.message, timeOffId: data.timeOffId },
        `time off: ${type} was refused`,
      );
    }
  };

  /** Hands the request on when its approver is away or left and someone else can decide. */
  const recheck = async (ctx: ProcessorContext, cause: RecordedEvent, view: TimeOffView) => {
    if (!WAITING.has(view.phase)) return;
    const approver = view.approver;
    if (isHrChannelApprover(approver)) return;
    const left = employeeById(readModel.directory(), approver.hrId)?.status === 'left';
    const until = left ? null : await people.awayUntil(approver.hrId, view.startDate);
    if (!left && until === null) return;
    const route = await people.approverRoute(view.requester.hrId, view.startDate);
    let to: TimeOffPerson;
    switch (route.kind) {
      case 'person':
        if (route.approver.hrId === approver.hrId) return;
        // Everyone is away: an away approver keeps it (moving it to another away one helps nobody).
        if (route.awayUntil !== null && !left) return;
        to = {
          hrId: route.approver.hrId,
          slackUserId: route.slackUserId,
          displayName: route.approver.displayName,
        };
        break;
      case 'hr_channel':
        to = hrChannelApprover(route.channel);
        break;
      default:
        if (!left) return;
        logger.warn(
          { timeOffId: view.timeOffId, approverHrId: approver.hrId },
          'time off: a request waits for an approver who left, and nobody in the reporting line can take it; set TIME_OFF_HR_CHANNEL or fix the reporting line in HR',
        );
        await send(ctx, cause, 'RecordTimeOffApproverGone', { timeOffId: view.timeOffId });
        return;
    }
    await send(ctx, cause, 'HandOnTimeOff', {
      timeOffId: view.timeOffId,
      to,
      reason: left ? 'left' : 'away',
      until,
      skipped: [...route.skipped],
    });
  };

  const waitingFor = (slackUserId: string | null, hrId: string): TimeOffView[] =>
    slackUserId === null
      ? []
      : readModel.pendingApprovalsOf(slackUserId).filter((v) => v.approver.hrId === hrId);

  const allWaiting = (): TimeOffView[] => {
    const ids = new Set<string>();
    for (const a of readModel.absences(EVERYTHING)) {
      if (a.status === 'requested' && a.timeOffId !== null) ids.add(a.timeOffId);
    }
    return [...ids]
      .map((id) => readModel.view(id))
      .filter((v): v is TimeOffView => v !== null && WAITING.has(v.phase))
      .sort((a, b) => a.requestedAt.localeCompare(b.requestedAt));
  };

  const scheduleSweep = async (ctx: ProcessorContext, cause: RecordedEvent) => {
    const day = nextDay(ctx.now());
    await scheduleTimer(ctx.store, {
      timerId: approverSweepTimerId(day),
      dueAt: `${day}T00:00:00.000Z`,
      now: ctx.now(),
      command: {
        type: 'SweepTimeOffApprovers',
        data: { day },
        metadata: { actor: ACTOR, causationId: cause.id },
      },
    });
  };

  return {
    id: TIME_OFF_HAND_ON_PROCESSOR,
    filter: {
      streamPrefixes: [TIME_OFF_STREAM_PREFIX, HR_TIME_OFF_STREAM_PREFIX, HAND_ON_SWEEP_STREAM_PREFIX],
      eventTypes: [
        'DirectoryEmployeeLeft',
        'DirectoryEmployeeChanged',
        'HrTimeOffRecorded',
        'TimeOffApproved',
        'TimeOffRequested',
        'TimeOffHandedOn',
        'TimeOffApproversSwept',
      ],
    },
    async handle(event, ctx) {
      if (event.kind !== 'event') return;
      await readModel.catchUp();
      const data = event.data as Record<string, unknown>;
      switch (event.type) {
        case 'DirectoryEmployeeLeft': {
          if (event.streamId !== TIME_OFF_DIRECTORY_STREAM || typeof data['hrId'] !== 'string') return;
          const hrId = data['hrId'];
          const slackUserId = readModel.slackUserOfEmployee(hrId);
          if (slackUserId === null) return;
          for (const own of readModel.requestsOf(slackUserId)) {
            if (own.requester.hrId === hrId && WAITING.has(own.phase)) {
              await send(ctx, event, 'CancelTimeOffOfLeaver', { timeOffId: own.timeOffId });
            }
          }
          for (const view of waitingFor(slackUserId, hrId)) await recheck(ctx, event, view);
          return;
        }
        case 'DirectoryEmployeeChanged': {
          // A new manager in HR: requests of theirs waiting for someone gone or away look again.
          const changes = data['changes'] as { managerHrId?: unknown } | undefined;
          if (event.streamId !== TIME_OFF_DIRECTORY_STREAM || typeof data['hrId'] !== 'string') return;
          if (changes?.managerHrId === undefined) return;
          const slackUserId = readModel.slackUserOfEmployee(data['hrId']);
          if (slackUserId === null) return;
          for (const own of readModel.requestsOf(slackUserId)) await recheck(ctx, event, own);
          return;
        }
        case 'HrTimeOffRecorded': {
          if (data['status'] !== 'approved' || typeof data['employeeId'] !== 'string') return;
          const hrId = data['employeeId'];
          for (const view of waitingFor(readModel.slackUserOfEmployee(hrId), hrId)) {
            await recheck(ctx, event, view);
          }
          return;
        }
        case 'TimeOffApproved': {
          const timeOffId = requestIdOfStream(event.streamId);
          const approved = timeOffId === null ? null : readModel.view(timeOffId);
          if (!approved) return;
          const { slackUserId, hrId } = approved.requester;
          for (const view of waitingFor(slackUserId, hrId)) await recheck(ctx, event, view);
          return;
        }
        case 'TimeOffRequested':
        case 'TimeOffHandedOn':
          if (requestIdOfStream(event.streamId) !== null) await scheduleSweep(ctx, event);
          return;
        case 'TimeOffApproversSwept': {
          if (!event.streamId.startsWith(HAND_ON_SWEEP_STREAM_PREFIX)) return;
          const waiting = allWaiting();
          for (const view of waiting) await recheck(ctx, event, view);
          if (allWaiting().length > 0) await scheduleSweep(ctx, event);
          return;
        }
        default:
          return;
      }
    },
  };
};

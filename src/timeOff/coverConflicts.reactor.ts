import type { UpstreamRequest } from '../../machines/shared/upstreamRequest.ts';
import { type TimeOffState, timeOffDecider, timeOffPhaseOf } from '../../machines/timeOff/decider.ts';
import type { ConflictCheckAction, ConflictShift, CoverCandidate } from '../../machines/timeOff/events.ts';
import { requestIdOfStream, TIME_OFF_STREAM_PREFIX } from '../../machines/timeOff/streams.ts';
import { foldHistory } from '../application/fold.ts';
import { ChatOpsError, hasCode } from '../core/errors.ts';
import type { JsonObject } from '../core/messages.ts';
import type { Absences, OnCallLookups, OnCallShift } from '../lifecycles/ports.ts';
import type { Dispatch } from '../processors/dispatchCommand.ts';
import type { RetryPolicy } from '../processors/retryPolicy.ts';
import type { Processor, ProcessorContext } from '../processors/runner.ts';
import {
  runUpstreamCall,
  type UpstreamCallSpec,
  type UpstreamCallTarget,
} from '../processors/upstreamCall.ts';
import { rangeOfRequest } from './absences.ts';
import { clipShift, coverCandidates } from './coverRanking.ts';

/**
 * `timeoff-cover-conflicts` (issue 12): when a request is asked (and again when a resubmission
 * changes its dates), the requester's on-call shifts over its interval (`onCall.shiftsOf`; its days and
 * half days in the requester's zone as the absences port turns them into instants: `rangeOfRequest`,
 * so `Wed pm – Thu am` is Wed 12:00 to Thu 12:00 where they are), each clipped to the request, and who
 * could cover them (coverRanking.ts), recorded on the request as `TimeOffConflictsChecked`. The
 * approval card, "Approve and cover with …" and a restart all read that fact.
 *
 * On the durable upstream-call mechanism: a lookup that fails is recorded with its retry
 * (`TimeOffConflictsCheckFailed`; the card says the conflicts could not be checked yet) and tried
 * again from a timer; after the last attempt the card says they could not be checked. A requester
 * with no incident-service user has no shifts (`unmapped`). With incidents switched off (no
 * `onCall` port) nothing is looked up and the card has no conflicts section.
 */
export const TIME_OFF_COVER_CONFLICTS_PROCESSOR = 'timeoff-cover-conflicts';
const ACTOR = 'system:timeoff-cover-conflicts';

type Target = UpstreamCallTarget & Readonly<{ timeOffId: string }>;
type Check = UpstreamRequest<ConflictCheckAction>;
type Found = Readonly<{
  shifts: ConflictShift[];
  knownUntil: string;
  candidates: CoverCandidate[];
  unmapped: boolean;
}>;

export type CoverConflictsOptions = Readonly<{
  onCall(): OnCallLookups | undefined;
  absences: Absences;
  nameOf(slackUserId: string): Promise<string>;
  dispatch: Dispatch;
  retry: RetryPolicy;
}>;

const FINAL = new Set(['denied', 'expired', 'cancelled']);

export const createCoverConflictsReactor = (options: CoverConflictsOptions): Processor => {
  const readState = async (store: ProcessorContext['store'], streamId: string): Promise<TimeOffState> =>
    foldHistory(timeOffDecider, await store.readStream(streamId));

  const spec: UpstreamCallSpec<TimeOffState, Check, Target, Found> = {
    processorId: TIME_OFF_COVER_CONFLICTS_PROCESSOR,
    actor: ACTOR,
    policy: options.retry,
    readState,
    pendingRequest: (state, requestId) =>
      !FINAL.has(timeOffPhaseOf(state)) && state.context.conflictCheck?.requestId === requestId
        ? state.context.conflictCheck
        : null,
    async call({ state, ctx }) {
      const onCall = options.onCall();
      const request = state.context.request;
      if (!onCall || !request) {
        throw new ChatOpsError('SB_NOT_FOUND', 'incidents are switched off: no on-call lookups');
      }
      const range = rangeOfRequest(request);
      const requester = { slackUserId: request.requester.slackUserId };
      let answer: Awaited<ReturnType<OnCallLookups['shiftsOf']>>;
      try {
        answer = await onCall.shiftsOf(requester, range);
      } catch (error) {
        if (!hasCode(error, 'SB_UNMAPPED_USER')) throw error;
        return { shifts: [], knownUntil: range.until.toISOString(), candidates: [], unmapped: true };
      }
      const clipped: { shift: OnCallShift; slot: ConflictShift }[] = [];
      for (const shift of answer.shifts) {
        const slot = clipShift(shift, range);
        if (slot) clipped.push({ shift, slot });
      }
      const candidates = await coverCandidates(
        { onCall, absences: options.absences, nameOf: options.nameOf, logger: ctx.logger },
        { requester, shifts: clipped, now: ctx.now() },
      );
      return {
        shifts: clipped.slice(0, 50).map((c) => c.slot),
        knownUntil: answer.knownUntil.toISOString(),
        candidates,
        unmapped: false,
      };
    },
    succeeded: ({ target, result }) => ({
      type: 'RecordTimeOffConflictsChecked',
      data: { timeOffId: target.timeOffId, checkId: target.requestId, ...result } as unknown as JsonObject,
    }),
    failed: ({ target, failure }) => ({
      type: 'RecordTimeOffConflictsCheckFailed',
      data: {
        timeOffId: target.timeOffId,
        requestId: target.requestId,
        action: 'check_conflicts',
        attempt: failure.attempt,
        maxAttempts: failure.maxAttempts,
        code: failure.code,
        message: failure.message,
        nextAttemptAt: failure.nextAttemptAt,
      },
    }),
    retry: ({ target, attempt }) => ({
      type: 'RetryTimeOffConflictsCheck',
      data: { timeOffId: target.timeOffId, requestId: target.requestId, action: 'check_conflicts', attempt },
    }),
    retryTimerId: (request, failedAttempt) => `timeoff-conflicts:${request.requestId}:${failedAttempt}`,
    record: (command) => options.dispatch(command),
  };

  return {
    id: TIME_OFF_COVER_CONFLICTS_PROCESSOR,
    filter: {
      streamPrefixes: [TIME_OFF_STREAM_PREFIX],
      eventTypes: ['TimeOffRequested', 'TimeOffResubmitted', 'TimeOffConflictsCheckRetried'],
    },
    async handle(event, ctx) {
      const timeOffId = requestIdOfStream(event.streamId);
      if (timeOffId === null || event.kind !== 'event') return;
      // Incidents switched off: nothing to look up (the card has no conflicts section).
      if (!options.onCall()) return;
      const d = event.data as Record<string, unknown>;
      if (event.type === 'TimeOffConflictsCheckRetried') {
        if (typeof d.requestId !== 'string' || typeof d.attempt !== 'number') return;
        await runUpstreamCall(spec, ctx, event, {
          streamId: event.streamId,
          timeOffId,
          requestId: d.requestId,
          attempt: d.attempt,
        });
        return;
      }
      if (event.type === 'TimeOffResubmitted' && d.reapproval !== true) return;
      // The check this version of the request asked: the n-th request or re-approval of the stream.
      const history = await ctx.store.readStream(event.streamId);
      const upTo = history.slice(0, history.findIndex((m) => m.id === event.id) + 1);
      const n = upTo.filter(
        (m) =>
          m.kind === 'event' &&
          (m.type === 'TimeOffRequested' ||
            (m.type === 'TimeOffResubmitted' && (m.data as { reapproval?: unknown }).reapproval === true)),
      ).length;
      await runUpstreamCall(spec, ctx, event, {
        streamId: event.streamId,
        timeOffId,
        requestId: `${timeOffId}:conflicts:${n}`,
        attempt: 1,
      });
    },
  };
};

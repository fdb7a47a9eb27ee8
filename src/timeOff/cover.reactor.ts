import type { UpstreamRequest } from '../../machines/shared/upstreamRequest.ts';
import {
  COVER_EVENT_TYPES,
  COVER_STREAM_PREFIX,
  type CoverAction,
  type CoverSlotState,
  type CoverState,
  coverDecider,
  coverIdOfStream,
  coverSettled,
  coverStreamId,
  pendingCoverCall,
  removalsSettled,
} from '../../machines/timeOff/cover.ts';
import { type CoverAskReason, coverAskStreamId } from '../../machines/timeOff/coverAsk.ts';
import { type TimeOffState, timeOffDecider } from '../../machines/timeOff/decider.ts';
import type { CoverSlotOutcome } from '../../machines/timeOff/events.ts';
import { requestIdOfStream, TIME_OFF_STREAM_PREFIX } from '../../machines/timeOff/streams.ts';
import { foldHistory } from '../application/fold.ts';
import { ChatOpsError } from '../core/errors.ts';
import { uuidv5 } from '../core/ids.ts';
import type { Command, JsonObject } from '../core/messages.ts';
import type { EventStore, RecordedEvent } from '../eventStore/eventStore.ts';
import type { OnCallLookups, ScheduleOverride, ScheduleOverrides } from '../lifecycles/ports.ts';
import { type Dispatch, dispatchCommand } from '../processors/dispatchCommand.ts';
import { errorCodeOf, type RetryPolicy } from '../processors/retryPolicy.ts';
import type { Processor, ProcessorContext } from '../processors/runner.ts';
import {
  type OutcomeCommand,
  runUpstreamCall,
  type UpstreamCallSpec,
  type UpstreamCallTarget,
} from '../processors/upstreamCall.ts';
import type { SlackMessage } from '../slack/blocks/format.ts';
import type { SlackOutbox } from '../slack/outbox.ts';
import { coverAskIdFor, openCoverAskCommand } from './coverAskIds.ts';
import {
  coverDeclinedDm,
  coverOutcomeDm,
  coverToldDm,
  coverWithdrawnDm,
  coverWithdrawnNotice,
  type TimeZones,
} from './coverText.ts';
import { timeOffNoticeLedger } from './notices.reactor.ts';

/**
 * The cover (issue 12, machines/timeOff/cover.ts), in two processors:
 *
 * `timeoff-cover-calls`: one schedule override per slot through the `scheduleOverrides` port, on
 * the durable upstream-call mechanism. The service has no idempotency key, so EVERY attempt checks
 * first (`covered`: the cover is on call on that schedule for the whole slot already) and creates
 * only when not: a retry, a redelivery or a crash between the create and its record never makes a
 * second override. A per-item refusal is final (`RecordCoverSlotRefused`, the service's words);
 * transient errors are retried from timers; the last failure is recorded in words.
 *
 * `timeoff-cover`: what follows from the facts:
 * - a request approved with a cover (`TimeOffApproved.cover`) → `RequestCover` with one slot per
 *   conflicting shift on a schedule (from `TimeOffConflictsChecked`), the approver and the
 *   requester to be told;
 * - every change of a time-off cover → `RecordTimeOffCover` on the request (its card shows it);
 * - a cover settled (every slot created or failed) → one DM to each person in `notify`: exactly
 *   which shifts are covered and which are still uncovered;
 * - the leave cancelled (by the requester or in HR) → `WithdrawCover`; withdrawn → each created
 *   override is removed (issue 20: `scheduleOverrides.remove`, a durable call, action
 *   `delete_override`); once every removal has its answer, the channels that follow each created
 *   override's schedule (`onCall.channelsFor`) are told what was removed and what is left to remove
 *   by hand, and whoever asked for the cover gets a DM; an override with no channel is listed in
 *   that DM instead. One created after the withdrawal (its call was in flight) is removed too and
 *   gets its own notice.
 *
 * - the cover is told at once by DM (issue 20; a time-off cover and a leaver report's alike): the
 *   shifts in their zone, whose, and a **Can't cover** button; the DM is updated in place as the
 *   overrides land and when the cover is withdrawn. Can't (`CoverWithdrawn.declinedBy`): whoever
 *   asked is told by DM that the shifts are uncovered again (and what became of the overrides), and
 *   each slot not over yet is re-opened as a hole (a cover ask posted in its schedule's channels
 *   with a Cover… button; never offered to the one who said can't, nor to the absent person).
 *
 * Every message is sent once through the outbox (recorded as `TimeOffNoticeSent` under its key, as
 * the notices do).
 */
export const TIME_OFF_COVER_CALLS_PROCESSOR = 'timeoff-cover-calls';
export const TIME_OFF_COVER_PROCESSOR = 'timeoff-cover';
const CALLS_ACTOR = 'system:timeoff-cover-calls';
const ACTOR = 'system:timeoff-cover';

type Target = UpstreamCallTarget & Readonly<{ coverId: string }>;
type Call = UpstreamRequest<CoverAction> & Readonly<{ slot: CoverSlotState }>;
type Made =
  | Readonly<{ kind: 'created'; overrideId: string | null; alreadyThere: boolean }>
  | Readonly<{ kind: 'refused'; problem: string }>
  | Readonly<{ kind: 'removed'; outcome: 'deleted' | 'truncated' | 'gone' }>
  | Readonly<{ kind: 'remove_refused'; problem: string }>;

export type CoverReactorOptions = Readonly<{
  overrides(): ScheduleOverrides | undefined;
  onCall(): OnCallLookups | undefined;
  dispatch: Dispatch;
  retry: RetryPolicy;
  /** Sends the cover's messages (a channel, or a user id: the app's DM with them). */
  outbox: SlackOutbox;
  timeZones: TimeZones;
  nameOf(slackUserId: string): Promise<string>;
}>;

/** Why a time-off cover is withdrawn, by who cancelled the leave (`TimeOffCancelled.by`). */
const WITHDRAWN_BECAUSE: Readonly<Record<string, string>> = {
  requester: 'the requester cancelled the time off',
  hr: 'the time off was cancelled in HR',
  left: 'the requester left, and their time off was cancelled',
};

/** The reason and round of the asks a cover's "can't" re-opens (one per still-future slot). */
const reopening = (
  d: NonNullable<CoverState['details']>,
): Readonly<{ reason: CoverAskReason; round: number }> => ({
  reason:
    (d.reason.kind === 'time_off' || d.reason.kind === 'sick_today') && d.reason.timeOffId
      ? { kind: 'time_off', timeOffId: d.reason.timeOffId }
      : { kind: 'on_call' },
  round: 1 + Number.parseInt(uuidv5(`reopen:${d.coverId}`).slice(0, 7), 16),
});

const readCover = async (store: EventStore, streamId: string): Promise<CoverState> =>
  foldHistory(coverDecider, await store.readStream(streamId));

const overrideOf = (state: CoverState, slot: CoverSlotState): ScheduleOverride => ({
  scheduleId: slot.scheduleId,
  person: { slackUserId: state.details?.cover.slackUserId ?? '' },
  start: new Date(slot.start),
  end: new Date(slot.end),
});

export const createCoverCallsReactor = (options: CoverReactorOptions): Processor => {
  const spec: UpstreamCallSpec<CoverState, Call, Target, Made> = {
    processorId: TIME_OFF_COVER_CALLS_PROCESSOR,
    actor: CALLS_ACTOR,
    policy: options.retry,
    readState: readCover,
    pendingRequest: pendingCoverCall,
    async call({ state, request }) {
      const overrides = options.overrides();
      if (request.action === 'delete_override') {
        const overrideId = request.slot.overrideId;
        if (!overrides?.remove || overrideId === null) {
          return { kind: 'remove_refused', problem: 'Switchboard cannot remove overrides here' };
        }
        const removed = await overrides.remove({ scheduleId: request.slot.scheduleId, overrideId });
        return removed.ok
          ? { kind: 'removed', outcome: removed.outcome }
          : { kind: 'remove_refused', problem: removed.problem };
      }
      if (!overrides) return { kind: 'refused', problem: 'incidents are switched off in Switchboard' };
      const override = overrideOf(state, request.slot);
      // Check first, every attempt: the service has no idempotency key.
      if (await overrides.covered(override)) return { kind: 'created', overrideId: null, alreadyThere: true };
      const [result] = await overrides.create([override]);
      if (!result) throw new ChatOpsError('SB_UPSTREAM_UNAVAILABLE', 'the incident service answered nothing');
      return result.ok
        ? { kind: 'created', overrideId: result.id, alreadyThere: false }
        : { kind: 'refused', problem: result.problem };
    },
    succeeded: ({ target, result }): OutcomeCommand =>
      result.kind === 'removed'
        ? {
            type: 'RecordCoverOverrideRemoved',
            data: { coverId: target.coverId, requestId: target.requestId, outcome: result.outcome },
          }
        : result.kind === 'remove_refused'
          ? {
              type: 'RecordCoverOverrideRemoveRefused',
              data: {
                coverId: target.coverId,
                requestId: target.requestId,
                problem: result.problem.slice(0, 1000),
              },
            }
          : result.kind === 'created'
            ? {
                type: 'RecordCoverSlotCreated',
                data: {
                  coverId: target.coverId,
                  requestId: target.requestId,
                  overrideId: result.overrideId,
                  alreadyThere: result.alreadyThere,
                },
              }
            : {
                type: 'RecordCoverSlotRefused',
                data: {
                  coverId: target.coverId,
                  requestId: target.requestId,
                  problem: result.problem.slice(0, 1000),
                },
              },
    failed: ({ target, failure }) => ({
      type: 'RecordCoverUpstreamCallFailed',
      data: {
        coverId: target.coverId,
        requestId: target.requestId,
        action: target.requestId.endsWith(':remove') ? 'delete_override' : 'create_override',
        attempt: failure.attempt,
        maxAttempts: failure.maxAttempts,
        code: failure.code,
        message: failure.message,
        nextAttemptAt: failure.nextAttemptAt,
      },
    }),
    retry: ({ target, attempt }) => ({
      type: 'RetryCoverUpstreamCall',
      data: {
        coverId: target.coverId,
        requestId: target.requestId,
        action: target.requestId.endsWith(':remove') ? 'delete_override' : 'create_override',
        attempt,
      },
    }),
    retryTimerId: (request, failedAttempt) => `timeoff-cover:${request.requestId}:${failedAttempt}`,
    record: (command) => options.dispatch(command),
  };

  return {
    id: TIME_OFF_COVER_CALLS_PROCESSOR,
    filter: {
      streamPrefixes: [COVER_STREAM_PREFIX],
      eventTypes: ['CoverRequested', 'CoverUpstreamCallRetried', 'CoverWithdrawn', 'CoverSlotCreated'],
    },
    async handle(event, ctx) {
      const coverId = coverIdOfStream(event.streamId);
      if (coverId === null || event.kind !== 'event') return;
      const d = event.data as Record<string, unknown>;
      if (event.type === 'CoverUpstreamCallRetried') {
        if (typeof d.requestId !== 'string' || typeof d.attempt !== 'number') return;
        await runUpstreamCall(spec, ctx, event, {
          streamId: event.streamId,
          coverId,
          requestId: d.requestId,
          attempt: d.attempt,
        });
        return;
      }
      const state = await readCover(ctx.store, event.streamId);
      if (event.type === 'CoverWithdrawn' || event.type === 'CoverSlotCreated') {
        // Issue 20: a withdrawn cover's overrides are removed (a late one too, once it is recorded).
        for (const slot of state.slots) {
          if (slot.removal?.status !== 'pending') continue;
          await runUpstreamCall(spec, ctx, event, {
            streamId: event.streamId,
            coverId,
            requestId: slot.removal.requestId,
            attempt: 1,
          });
        }
        return;
      }
      for (const slot of state.slots) {
        await runUpstreamCall(spec, ctx, event, {
          streamId: event.streamId,
          coverId,
          requestId: slot.requestId,
          attempt: 1,
        });
      }
    },
  };
};

const outcomesOf = (state: CoverState): CoverSlotOutcome[] =>
  state.slots.map((s) => ({
    scheduleId: s.scheduleId,
    scheduleName: s.scheduleName,
    start: s.start,
    end: s.end,
    status: s.status,
    overrideId: s.overrideId,
    problem: s.problem,
  }));

export const createCoverReactor = (options: CoverReactorOptions): Processor => {
  const command = (
    type: string,
    data: object,
    key: string,
    cause: RecordedEvent,
    ctx: ProcessorContext,
  ): Command => ({
    type,
    data: data as JsonObject,
    metadata: {
      now: ctx.now().toISOString(),
      commandId: uuidv5(`${TIME_OFF_COVER_PROCESSOR}:${key}`),
      actor: ACTOR,
      causationId: cause.id,
    },
  });

  const send = async (ctx: ProcessorContext, command: Command) => {
    const outcome = await dispatchCommand(options.dispatch, command);
    if (outcome.outcome === 'rejected') {
      ctx.logger.warn(
        { code: outcome.code, type: command.type },
        `cover command refused: ${outcome.message}`,
      );
    }
  };

  /** Posts once per key (recorded as TimeOffNoticeSent); Slack refusing for good is logged, not retried. */
  const postOnce = async (
    ctx: ProcessorContext,
    key: string,
    channel: string,
    build: () => Promise<SlackMessage>,
  ) => {
    const result = await options.outbox.post(ctx, {
      ledger: timeOffNoticeLedger,
      key,
      channel,
      message: async () => ({ message: await build() }),
    });
    if (result.outcome !== 'refused') return;
    ctx.logger.error(
      { key, code: errorCodeOf(result.error), slackError: result.slackError },
      'Slack refused a cover message',
    );
  };

  const onTimeOff = async (event: RecordedEvent, ctx: ProcessorContext, timeOffId: string) => {
    if (event.type === 'TimeOffResubmitted') {
      // New dates to approve again: the cover of the earlier approval no longer fits them.
      if ((event.data as { reapproval?: unknown }).reapproval !== true) return;
      const history = await ctx.store.readStream(event.streamId);
      const before = history.slice(
        0,
        history.findIndex((m) => m.id === event.id),
      );
      const earlier = foldHistory(timeOffDecider, before).context.cover;
      if (!earlier) return;
      await send(
        ctx,
        command(
          'WithdrawCover',
          { coverId: earlier.coverId, reason: 'the requester changed the dates, to be approved again' },
          `withdraw:${event.id}`,
          event,
          ctx,
        ),
      );
      await cancelReopened(ctx, earlier.coverId, event);
      return;
    }
    if (event.type !== 'TimeOffApproved' && event.type !== 'TimeOffCancelled') return;
    const state: TimeOffState = foldHistory(timeOffDecider, await ctx.store.readStream(event.streamId));
    const { context } = state;
    const cover = context.cover;
    const request = context.request;
    if (!cover || !request) return;
    if (event.type === 'TimeOffCancelled') {
      await send(
        ctx,
        command(
          'WithdrawCover',
          {
            coverId: cover.coverId,
            reason:
              WITHDRAWN_BECAUSE[String((event.data as { by?: unknown }).by)] ?? 'the time off was cancelled',
          },
          `withdraw:${event.id}`,
          event,
          ctx,
        ),
      );
      await cancelReopened(ctx, cover.coverId, event);
      return;
    }
    const approvedCover = (event.data as { cover?: { coverId?: unknown } }).cover;
    if (approvedCover?.coverId !== cover.coverId) return;
    // One override per schedule and span, however many policies or levels name that schedule.
    const seen = new Set<string>();
    const slots = (context.conflicts?.shifts ?? []).filter((s) => {
      if (s.scheduleId === null) return false;
      const key = `${s.scheduleId}|${s.start}|${s.end}`;
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    });
    if (slots.length === 0) return;
    await send(
      ctx,
      command(
        'RequestCover',
        {
          coverId: cover.coverId,
          absent: { slackUserId: request.requester.slackUserId, displayName: request.requester.displayName },
          cover: { slackUserId: cover.slackUserId, displayName: await options.nameOf(cover.slackUserId) },
          slots: slots.slice(0, 50),
          requestedBy: request.approver.slackUserId,
          reason: { kind: 'time_off', timeOffId },
          notify: [request.approver.slackUserId, request.requester.slackUserId],
        },
        `request:${event.id}`,
        event,
        ctx,
      ),
    );
  };

  /** The channels following a schedule; none (said in the DM instead) when the lookup fails. */
  const channelsOf = async (ctx: ProcessorContext, scheduleId: string): Promise<readonly string[]> => {
    const onCall = options.onCall();
    if (!onCall) return [];
    try {
      return await onCall.channelsFor({ scheduleId });
    } catch (error) {
      ctx.logger.warn(
        { err: error, scheduleId },
        'channels of a schedule unknown; the approver is told instead',
      );
      return [];
    }
  };

  /** The cover's own DM: posted once, then redrawn in place as the cover's stream moves on. */
  const tellCover = async (ctx: ProcessorContext, state: CoverState) => {
    const d = state.details;
    if (!d) return;
    const key = `cover-told:${d.coverId}`;
    const build = async () => coverToldDm(state, await options.timeZones.of(d.cover.slackUserId));
    await postOnce(ctx, key, d.cover.slackUserId, build);
    const updated = await options.outbox.update(ctx, { ledger: timeOffNoticeLedger, key }, await build());
    if (updated.outcome === 'gone') {
      ctx.logger.warn({ key, slackError: updated.slackError }, 'the cover’s DM is gone: not redrawn');
    }
  };

  /**
   * The cover can't (issue 20: "re-opens the hole"): each still-future slot is asked again as a hole
   * in its schedule's channels with a Cover… button (a cover ask, src/timeOff/coverAsk.reactor.ts:
   * first click wins), never offered to the one who said can't nor to the absent person. Its id is
   * the slot's with a round derived from this cover, so a redelivery opens it once and a later
   * can't on the re-opened hole's cover opens another. Whoever asked is told by DM.
   */
  /**
   * The leave cancelled after its cover said "can't": the holes that re-opened (onDeclined) are no
   * longer needed. Each re-opened ask that exists is cancelled (its post and DMs say so; a click
   * after is refused), with ids derived from the event so a redelivery cancels once.
   */
  const cancelReopened = async (ctx: ProcessorContext, coverId: string, event: RecordedEvent) => {
    const state = await readCover(ctx.store, coverStreamId(coverId));
    const d = state.details;
    if (!d) return;
    const { reason, round } = reopening(d);
    for (const slot of state.slots) {
      const askId = coverAskIdFor(reason, slot, round);
      const stream = coverAskStreamId(askId);
      if ((await ctx.store.readStream(stream, { maxCount: 1 })).length === 0) continue;
      await send(
        ctx,
        command(
          'CancelCoverAsk',
          { askId, reason: 'the time off was cancelled' },
          `cancel-reopened:${event.id}:${askId}`,
          event,
          ctx,
        ),
      );
    }
  };

  const onDeclined = async (ctx: ProcessorContext, then: CoverState, late: ReadonlySet<unknown>) => {
    const d = then.details;
    if (!d) return;
    const now = ctx.now();
    const { reason, round } = reopening(d);
    const byChannel = new Map<string, CoverSlotState[]>();
    for (const slot of then.slots.filter((s) => !late.has(s.index))) {
      if (Date.parse(slot.end) <= now.getTime()) continue;
      for (const c of await channelsOf(ctx, slot.scheduleId)) {
        byChannel.set(c, [...(byChannel.get(c) ?? []), slot]);
      }
      const { command: open } = openCoverAskCommand(
        {
          slot: {
            scheduleId: slot.scheduleId,
            scheduleName: slot.scheduleName,
            escalationPolicyId: slot.escalationPolicyId,
            escalationPolicyName: slot.escalationPolicyName,
            level: slot.level,
            start: slot.start,
            end: slot.end,
          },
          absent: d.absent,
          asked: [],
          anyone: true,
          announce: true,
          openedBy: d.requestedBy,
          notify: [d.requestedBy],
          reason,
          now,
          round,
          excluded: [d.cover.slackUserId],
        },
        {
          now: now.toISOString(),
          commandId: uuidv5(`${TIME_OFF_COVER_PROCESSOR}:reopen:${d.coverId}:${slot.index}`),
          actor: ACTOR,
        },
      );
      await send(ctx, open);
    }
    await postOnce(ctx, `cover-declined-dm:${d.coverId}`, d.requestedBy, async () =>
      coverDeclinedDm(then, [...byChannel.keys()], await options.timeZones.of(d.requestedBy)),
    );
  };

  const onCover = async (event: RecordedEvent, ctx: ProcessorContext, coverId: string) => {
    const history = await ctx.store.readStream(event.streamId);
    const state = foldHistory(coverDecider, history);
    // As the stream stood at this event: what a withdrawal or a late override announces.
    const position = history.findIndex((m) => m.id === event.id);
    const then = foldHistory(coverDecider, history.slice(0, position + 1));
    const d = state.details;
    if (!d) return;
    if (d.reason.kind === 'time_off') {
      await send(
        ctx,
        command(
          'RecordTimeOffCover',
          {
            timeOffId: d.reason.timeOffId,
            coverId,
            slots: outcomesOf(state),
            withdrawn: state.withdrawnAt !== null,
            ...(state.declinedBy ? { declinedBy: state.declinedBy } : {}),
          },
          `recorded:${event.id}`,
          event,
          ctx,
        ),
      );
    }
    await tellCover(ctx, state);
    if (state.withdrawnAt === null) {
      if (coverSettled(state)) {
        for (const user of d.notify) {
          await postOnce(ctx, `cover-outcome:${coverId}:${user}`, user, async () =>
            coverOutcomeDm(state, await options.timeZones.of(user)),
          );
        }
      }
      return;
    }
    const withdrawnAt = history.findIndex((m) => m.type === 'CoverWithdrawn');
    const settling =
      event.type === 'CoverWithdrawn' ||
      event.type === 'CoverOverrideRemoved' ||
      event.type === 'CoverOverrideRemoveFailed';
    // Told once every removal asked at the withdrawal has its answer (issue 20: removed, or not).
    if (!settling || withdrawnAt < 0 || withdrawnAt > position || !removalsSettled(then)) return;
    /** Slots whose override was created after the withdrawal (their call was in flight). */
    const late = new Set(
      history
        .slice(withdrawnAt)
        .filter((m) => m.type === 'CoverSlotCreated')
        .map((m) => (m.data as { index?: unknown }).index),
    );
    const index = (event.data as { index?: unknown }).index;
    if (event.type !== 'CoverWithdrawn' && late.has(index)) {
      // Created after the withdrawal (its call was in flight), then removed (or not): said on its own.
      const slot = then.slots.find((s) => s.index === index);
      if (!slot) return;
      const channels = await channelsOf(ctx, slot.scheduleId);
      for (const c of channels.length > 0 ? channels : [d.requestedBy]) {
        await postOnce(ctx, `cover-late:${coverId}:${slot.index}:${c}`, c, async () =>
          coverWithdrawnNotice(then, [slot], true),
        );
      }
    }
    if (then.declinedBy !== null) {
      await onDeclined(ctx, then, late);
      return;
    }
    const created = then.slots.filter((s) => s.status === 'created' && !late.has(s.index));
    const byChannel = new Map<string, CoverSlotState[]>();
    const noChannel: CoverSlotState[] = [];
    for (const slot of created) {
      const channels = await channelsOf(ctx, slot.scheduleId);
      if (channels.length === 0) noChannel.push(slot);
      for (const c of channels) byChannel.set(c, [...(byChannel.get(c) ?? []), slot]);
    }
    for (const [channel, slots] of byChannel) {
      await postOnce(ctx, `cover-withdrawn:${coverId}:${channel}`, channel, async () =>
        coverWithdrawnNotice(then, slots),
      );
    }
    await postOnce(ctx, `cover-withdrawn-dm:${coverId}`, d.requestedBy, async () =>
      coverWithdrawnDm(then, [...byChannel.keys()], noChannel, await options.timeZones.of(d.requestedBy)),
    );
  };

  return {
    id: TIME_OFF_COVER_PROCESSOR,
    filter: {
      streamPrefixes: [TIME_OFF_STREAM_PREFIX, COVER_STREAM_PREFIX],
      eventTypes: ['TimeOffApproved', 'TimeOffCancelled', 'TimeOffResubmitted', ...COVER_EVENT_TYPES],
    },
    async handle(event, ctx) {
      if (event.kind !== 'event') return;
      const coverId = coverIdOfStream(event.streamId);
      if (coverId !== null) {
        await onCover(event, ctx, coverId);
        return;
      }
      const timeOffId = requestIdOfStream(event.streamId);
      if (timeOffId !== null) await onTimeOff(event, ctx, timeOffId);
    },
  };
};

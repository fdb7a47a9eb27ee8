import {
  COVER_ASK_EVENT_TYPES,
  COVER_ASK_STREAM_PREFIX,
  type CoverAskState,
  coverAskDecider,
  coverAskIdOfStream,
} from '../../machines/timeOff/coverAsk.ts';
import { type TimeOffState, timeOffDecider } from '../../machines/timeOff/decider.ts';
import { requestIdOfStream, TIME_OFF_STREAM_PREFIX } from '../../machines/timeOff/streams.ts';
import { foldHistory } from '../application/fold.ts';
import type { Command, JsonObject } from '../core/messages.ts';
import type { RecordedEvent } from '../eventStore/eventStore.ts';
import type { OnCallLookups } from '../lifecycles/ports.ts';
import { causedMetadata, type Dispatch, dispatchOrWarn } from '../processors/dispatchCommand.ts';
import { errorCodeOf } from '../processors/retryPolicy.ts';
import type { Processor, ProcessorContext } from '../processors/runner.ts';
import { scheduleTimer } from '../processors/scheduler.ts';
import type { SlackMessage } from '../slack/blocks/format.ts';
import type { SlackOutbox } from '../slack/outbox.ts';
import { COVER_ASK_LEAD_MS, openCoverAskCommand } from './coverAskIds.ts';
import { coverAskDm, coverAskExpiredDm, coverAskExpiredNotice, coverAskPost } from './coverAskText.ts';
import type { TimeZones } from './coverText.ts';
import { timeOffNoticeLedger } from './notices.reactor.ts';

/**
 * `timeoff-cover-asks` (issue 20): what follows from cover asks (machines/timeOff/coverAsk.ts).
 *
 * - A request approved without a cover over coverable on-call shifts (`TimeOffApproved`): one ask
 *   per slot. Plain Approve: a HOLE, open to anyone and posted in the schedule's channels with a
 *   Cover… button. "Approve and ask for cover" (`askForCover`): the ranked colleagues of the
 *   conflict check (never the requester, nobody away or on call then, nobody who left) asked by DM.
 *   Either way the approver is told if nobody takes it before the shift is near.
 * - The leave cancelled: its open asks are cancelled.
 * - Opened: the expiry timer (durable: a restart keeps it), a DM with Accept / Can't to each person
 *   asked, the post in each channel following the schedule (`onCall.channelsFor`) when announced.
 * - Taken: the cover is issued (`RequestCover` under the ask's recorded cover id: the override is
 *   the cover slice's durable upstream call), then every DM and post is updated in place.
 * - Declined: that DM updated. Expired: every DM and post updated; the opener and those to notify
 *   told by DM; the channels told (a new post when the ask was not posted there).
 *
 * Every message goes through the outbox once per key (`TimeOffNoticeSent`, as the cover's).
 */
export const TIME_OFF_COVER_ASKS_PROCESSOR = 'timeoff-cover-asks';
const ACTOR = 'system:timeoff-cover-asks';

export type CoverAskReactorOptions = Readonly<{
  onCall(): OnCallLookups | undefined;
  dispatch: Dispatch;
  outbox: SlackOutbox;
  timeZones: TimeZones;
  /** Whether HR says this Slack user left (never asked to cover). */
  hasLeft(slackUserId: string): Promise<boolean>;
  /** A leaver's report shows who covers each shift: redrawn when one of its asks moves on. */
  leaverAskChanged?(ctx: ProcessorContext, hrId: string): Promise<void>;
  /** How long before a shift an ask nobody took expires (default 1 hour). */
  leadMs?: number;
}>;

const stamp = (iso: string): string => iso.replace(/[^0-9]/g, '').slice(0, 17);

export const readCoverAsk = async (
  ctx: Pick<ProcessorContext, 'store'>,
  streamId: string,
): Promise<CoverAskState> => foldHistory(coverAskDecider, await ctx.store.readStream(streamId));

export const createCoverAskReactor = (options: CoverAskReactorOptions): Processor => {
  const leadMs = options.leadMs ?? COVER_ASK_LEAD_MS;
  const metadataOf = (key: string, cause: RecordedEvent, ctx: ProcessorContext) =>
    causedMetadata(TIME_OFF_COVER_ASKS_PROCESSOR, ACTOR, key, cause, ctx.now());
  const send = async (ctx: ProcessorContext, command: Command) => {
    await dispatchOrWarn(options.dispatch, command, ctx.logger, 'cover ask command refused');
  };
  const postOnce = async (
    ctx: ProcessorContext,
    key: string,
    channel: string,
    build: () => Promise<SlackMessage>,
    since: Date,
  ) => {
    const result = await options.outbox.post(ctx, {
      ledger: timeOffNoticeLedger,
      key,
      channel,
      since,
      message: async () => ({ message: await build() }),
    });
    if (result.outcome !== 'refused') return;
    ctx.logger.error(
      { key, code: errorCodeOf(result.error), slackError: result.slackError },
      'Slack refused a cover ask message',
    );
  };
  const updateByKey = async (ctx: ProcessorContext, key: string, build: () => Promise<SlackMessage>) => {
    const result = await options.outbox.update(ctx, { ledger: timeOffNoticeLedger, key }, () => build());
    if (result.outcome === 'gone') ctx.logger.info({ key }, 'a cover ask message is gone: not updated');
  };
  const channelsOf = async (ctx: ProcessorContext, scheduleId: string): Promise<readonly string[]> => {
    const onCall = options.onCall();
    if (!onCall) return [];
    try {
      return await onCall.channelsFor({ scheduleId });
    } catch (error) {
      ctx.logger.warn({ err: error, scheduleId }, 'channels of a schedule unknown: the hole is not posted');
      return [];
    }
  };

  const dmKey = (askId: string, user: string) => `ask-dm:${askId}:${user}`;
  const postKey = (askId: string, channel: string) => `ask-post:${askId}:${channel}`;

  /** The asks a request's approval opened (their ids are derived from the request and each slot). */
  const asksOfApproval = (state: TimeOffState, timeOffId: string) => {
    const seen = new Set<string>();
    return (state.context.conflicts?.shifts ?? []).flatMap((s) => {
      if (s.scheduleId === null) return [];
      const key = `${s.scheduleId}|${s.start}|${s.end}`;
      if (seen.has(key)) return [];
      seen.add(key);
      return [{ slot: { ...s, scheduleId: s.scheduleId }, reason: { kind: 'time_off' as const, timeOffId } }];
    });
  };

  const onTimeOff = async (event: RecordedEvent, ctx: ProcessorContext, timeOffId: string) => {
    const state = foldHistory(timeOffDecider, await ctx.store.readStream(event.streamId));
    const request = state.context.request;
    if (!request) return;
    const approved = [...(await ctx.store.readStream(event.streamId))]
      .reverse()
      .find((e) => e.type === 'TimeOffApproved');
    const data = (approved?.data ?? {}) as {
      cover?: unknown;
      askForCover?: unknown;
      by?: { slackUserId?: unknown };
    };
    if (!approved || data.cover) return;
    const opener =
      typeof data.by?.slackUserId === 'string' ? data.by.slackUserId : request.approver.slackUserId;
    const slots = asksOfApproval(state, timeOffId);
    if (event.type === 'TimeOffCancelled') {
      for (const { slot, reason } of slots) {
        const { command } = openCoverAskCommand(
          {
            slot,
            absent: request.requester,
            asked: [],
            anyone: true,
            announce: false,
            openedBy: opener,
            notify: [],
            reason,
            now: ctx.now(),
          },
          metadataOf(`cancel:${event.id}:${slot.scheduleId}:${slot.start}`, event, ctx),
        );
        const askId = (command.data as { askId: string }).askId;
        if (
          (await ctx.store.readStream(`${COVER_ASK_STREAM_PREFIX}${askId}`, { maxCount: 1 })).length === 0
        ) {
          continue;
        }
        await send(ctx, {
          ...command,
          type: 'CancelCoverAsk',
          data: { askId, reason: 'the time off was cancelled' },
        });
      }
      return;
    }
    if (event.id !== approved.id) return;
    const askForCover = data.askForCover === true;
    const asked = [];
    if (askForCover) {
      for (const c of state.context.conflicts?.candidates ?? []) {
        if (c.slackUserId === request.requester.slackUserId) continue;
        if (await options.hasLeft(c.slackUserId)) continue;
        asked.push({ slackUserId: c.slackUserId, displayName: c.displayName });
      }
    }
    for (const { slot, reason } of slots.slice(0, 50)) {
      if (Date.parse(slot.end) <= ctx.now().getTime()) continue;
      const { command } = openCoverAskCommand(
        {
          slot,
          absent: { slackUserId: request.requester.slackUserId, displayName: request.requester.displayName },
          asked,
          anyone: !askForCover,
          announce: !askForCover,
          openedBy: opener,
          notify: [opener],
          reason,
          now: ctx.now(),
          leadMs,
        },
        metadataOf(`open:${event.id}:${slot.scheduleId}:${slot.start}`, event, ctx),
      );
      await send(ctx, command);
    }
  };

  const onAsk = async (event: RecordedEvent, ctx: ProcessorContext, askId: string) => {
    const history = await ctx.store.readStream(event.streamId);
    const state = foldHistory(coverAskDecider, history);
    const d = state.details;
    if (!d) return;
    const since = new Date(d.openedAt);
    const dm = (user: string) => async () => coverAskDm(state, user, await options.timeZones.of(user));
    const channels =
      d.announce || event.type === 'CoverAskExpired' ? await channelsOf(ctx, d.slot.scheduleId) : [];
    if (d.reason.kind === 'leaver') await options.leaverAskChanged?.(ctx, d.reason.hrId);
    switch (event.type) {
      case 'CoverAskOpened': {
        await scheduleTimer(ctx.store, {
          timerId: `timeoff-coverask-expire-${askId}-${stamp(d.expiresAt)}`,
          dueAt: d.expiresAt,
          now: ctx.now(),
          command: {
            type: 'ExpireCoverAsk',
            data: { askId },
            metadata: { actor: ACTOR, causationId: event.id },
          },
        });
        for (const p of d.asked)
          await postOnce(ctx, dmKey(askId, p.slackUserId), p.slackUserId, dm(p.slackUserId), since);
        for (const c of channels)
          await postOnce(ctx, postKey(askId, c), c, async () => coverAskPost(state), since);
        return;
      }
      case 'CoverAskDeclined': {
        const who = (event.data as { slackUserId?: unknown }).slackUserId;
        if (typeof who === 'string') await updateByKey(ctx, dmKey(askId, who), dm(who));
        return;
      }
      case 'CoverAskTaken': {
        const t = state.taken;
        if (!t) return;
        await send(ctx, {
          type: 'RequestCover',
          data: {
            coverId: t.coverId,
            absent: d.absent,
            cover: t.cover,
            // A shift already under way is covered from when it was taken.
            slots: [
              {
                ...d.slot,
                start: new Date(Math.max(Date.parse(d.slot.start), Date.parse(t.at))).toISOString(),
              },
            ],
            requestedBy: t.by,
            reason:
              d.reason.kind === 'leaver' ? { kind: 'leaver', hrId: d.reason.hrId } : { kind: 'ask', askId },
            notify: [...new Set([t.cover.slackUserId, t.by, ...d.notify])].slice(0, 20),
          } as unknown as JsonObject,
          metadata: metadataOf(`cover:${askId}`, event, ctx),
        });
        break;
      }
      case 'CoverAskExpired': {
        for (const user of d.notify) {
          await postOnce(
            ctx,
            `ask-expired:${askId}:${user}`,
            user,
            async () => coverAskExpiredDm(state, await options.timeZones.of(user)),
            since,
          );
        }
        if (!d.announce) {
          for (const c of channels) {
            await postOnce(
              ctx,
              `ask-expired-post:${askId}:${c}`,
              c,
              async () => coverAskExpiredNotice(state),
              since,
            );
          }
        }
        break;
      }
      case 'CoverAskCancelled':
        break;
      default:
        return;
    }
    // Taken, expired or cancelled: every DM and post says so, in place.
    for (const p of d.asked) await updateByKey(ctx, dmKey(askId, p.slackUserId), dm(p.slackUserId));
    if (d.announce)
      for (const c of channels) await updateByKey(ctx, postKey(askId, c), async () => coverAskPost(state));
  };

  return {
    id: TIME_OFF_COVER_ASKS_PROCESSOR,
    filter: {
      streamPrefixes: [TIME_OFF_STREAM_PREFIX, COVER_ASK_STREAM_PREFIX],
      eventTypes: ['TimeOffApproved', 'TimeOffCancelled', ...COVER_ASK_EVENT_TYPES],
    },
    async handle(event, ctx) {
      if (event.kind !== 'event') return;
      const askId = coverAskIdOfStream(event.streamId);
      if (askId !== null) {
        await onAsk(event, ctx, askId);
        return;
      }
      const timeOffId = requestIdOfStream(event.streamId);
      if (timeOffId !== null) await onTimeOff(event, ctx, timeOffId);
    },
  };
};

import type { IncidentState } from '../../machines/incident/decider.ts';
import type { Actor, Assignee } from '../../machines/incident/events.ts';
import { hasCode, isChatOpsError } from '../core/errors.ts';
import { uuidv5 } from '../core/ids.ts';
import type { Command } from '../core/messages.ts';
import type { RecordedEvent } from '../eventStore/eventStore.ts';
import { abortableSleep } from '../processors/abortableSleep.ts';
import { type Dispatch, dispatchCommand } from '../processors/dispatchCommand.ts';
import { backoffDelayMs, retryAfterMsOf, shouldRetry } from '../processors/retryPolicy.ts';
import type { Processor, ProcessorContext } from '../processors/runner.ts';
import type { SlackMessage } from '../slack/blocks/format.ts';
import { incidentCard } from './blocks/incidentCard.ts';
import { type IncidentView, toIncidentView } from './blocks/incidentView.ts';
import { pagingSummary } from './blocks/pagingSummary.ts';
import { foldIncidentHistory, readIncidentState } from './incidentState.ts';
import type { SlackUserOf } from './pagerdutyMapping.ts';

/**
 * `incident-cards`: keeps one card per channel for each incident, in place.
 *
 * On any incident event (except the card bookkeeping itself) it folds the stream and renders the
 * card from the latest state: `chat.update` for every card already recorded, `chat.postMessage` in
 * channels that should have one and do not (the channel a trigger came from, and channels
 * subscribed to the incident's service), recording `RecordIncidentCardPosted` / `…Updated`.
 *
 * Coalescing: `chat.update` is Tier 3, about 50 calls a minute per workspace
 * (https://api.slack.com/methods/chat.update), so a storm of changes must not become a storm of
 * updates. When
 * several events of one incident are waiting, only the newest is rendered (last writer wins): an
 * event that is not the newest renderable one in its stream is skipped, because the newer one will
 * be delivered and render everything. A rate-limited call waits for Slack's `Retry-After` (the
 * processor waits; nothing else may call that method meanwhile) and then renders the state as it
 * is by then, so the final state is never lost. A render that keeps failing for a transient reason
 * is dropped after a few tries: the incident's next event renders again.
 *
 * A channel Slack refuses a card for (the bot is not invited, the channel is archived) is skipped;
 * when it is the channel the incident was triggered from, the card goes to the requester's DM
 * instead, saying why, so whoever triggered it always sees it.
 *
 * Duplicates: before posting in a channel the stream is read again, and a channel with a recorded
 * card gets an update instead.
 *
 * A post Slack may have taken without its `RecordIncidentCardPosted` being recorded (issue 9 item
 * 7, issue 18 item 9): `chat.postMessage` has no idempotency key, so nothing recorded says the post
 * was made. Every card is therefore posted with message metadata (https://api.slack.com/metadata/using)
 * `{ event_type: 'switchboard_incident_card', event_payload: { stream, postKey } }`, and before
 * posting for an incident IN DOUBT the channel's recent messages are read first
 * (`conversations.history` with `include_all_metadata`, `oldest` = the newest card bookkeeping of
 * the stream, or its first event, minus {@link HISTORY_MARGIN_MS} for clock skew, at most
 * {@link HISTORY_LIMIT} messages): a message carrying that marker is recorded instead of posting
 * again. An incident is in doubt, in this process, from the first time any of its events comes
 * with `ctx.redelivery` (it may have been handled before: a crash, `kill -9`, between a post and
 * its record; a replica taking over; an in-process retry), or once a post for it failed without a
 * definite answer from Slack (a 5xx or a network failure after Slack may have applied it: such
 * posts are never retried blind, `withoutRetries`), until a render of it completes. The doubt is
 * per incident, not per event: after a restart the events delivered again may be coalesced into a
 * newer one recorded since, or give up on a failing Slack, and the change that finally renders is
 * then not itself a redelivery (the window a `kill -9` during a burst of triggers and acknowledges
 * hit: 21 cards for 20 incidents). The read waits until the doubt is {@link HISTORY_SETTLE_MS} old
 * (once per incident: the post in doubt is at least that old by then), because Slack does not
 * promise that a read right after a post sees it. That needs `channels:history` (`groups:history`
 * for private channels); without it (`missing_scope` and the like) the card is posted as before and
 * that is logged once.
 *
 * What remains, and why (Slack offers nothing closer): a card the crashed process posted is
 * posted again when the read does not show it: a post still in flight inside Slack when the read
 * is made (the process died while Slack was applying it, and the restart and the settle time were
 * shorter than Slack took), a history read that lags the post by more than
 * {@link HISTORY_SETTLE_MS}, a card deleted by someone since, one pushed out of the page read by
 * more than {@link HISTORY_LIMIT} newer messages, a missing scope, and the DM the card goes to when
 * the trigger channel refuses it (not looked up: that would need `im:history`). A second card
 * costs a duplicate message; never a lost one.
 *
 * @example
 * const cards = createIncidentCardsReactor({ slack: cardsPort, dispatch: bus.dispatch, channelsFor, slackUserOf });
 */
export type CardsSlackPort = Readonly<{
  /** Posts with `marker` as the message's metadata (`event_type` {@link CARD_METADATA_EVENT_TYPE}). */
  postMessage(
    channel: string,
    message: SlackMessage,
    marker?: CardMarker,
  ): Promise<{ channel: string; ts: string }>;
  updateMessage(channel: string, ts: string, message: SlackMessage): Promise<void>;
  /**
   * The newest message of `channel` since `oldest` (at most `limit` read) whose metadata is
   * `marker`, or null (`conversations.history` with `include_all_metadata`). Throws Slack's errors
   * (`details.slackError`, e.g. `missing_scope`).
   */
  findPosted?(
    channel: string,
    marker: CardMarker,
    oldest: Date,
    limit: number,
  ): Promise<{ channel: string; ts: string } | null>;
}>;

/** What a card's message metadata carries (`event_payload`): the stream and the post's key. */
export type CardMarker = Readonly<{ stream: string; postKey: string }>;

/** The `event_type` of a card's message metadata. */
export const CARD_METADATA_EVENT_TYPE = 'switchboard_incident_card';
/** Page activity, recorded as commands in the incident's stream (src/incidents/paging.ts). */
const PAGE_ACTIVITY = 'RecordIncidentPageActivity';

/** How far before the post's intent the history read starts (clock skew between us and Slack). */
export const HISTORY_MARGIN_MS = 5 * 60_000;
/** Messages read when looking for a card posted before a crash. */
export const HISTORY_LIMIT = 200;
/**
 * How old a post in doubt must be before a history read that does not show it is believed (Slack
 * does not promise read-after-write). Waited once per incident in doubt, from when the doubt arose.
 */
export const HISTORY_SETTLE_MS = 2_000;
/** Slack answers that mean the history cannot be read with this token: post as before. */
const NO_HISTORY = new Set(['missing_scope', 'no_permission', 'not_allowed_token_type', 'not_in_channel']);

export type IncidentCardsOptions = Readonly<{
  slack: CardsSlackPort;
  dispatch: Dispatch;
  /** Channels subscribed to a service's incidents (caught up with the store). */
  channelsFor(serviceId: string): Promise<readonly string[]>;
  slackUserOf?: SlackUserOf;
  /**
   * Looks up Slack users for incident-service users the card names but `slackUserOf` does not know
   * yet (people acting in the web app, assignees), so the card mentions them. Bounded by the caller.
   */
  findSlackUsers?(upstreamUserIds: readonly string[]): Promise<void>;
  /** The last level of a service's escalation policy (Escalate is offered only below it). */
  lastEscalationLevel?(serviceId: string): Promise<number | null>;
  /** Attempts per render on transient Slack failures (not rate limits) before giving up. Default 5. */
  maxTransientTries?: number;
}>;

export const INCIDENT_CARDS_PROCESSOR = 'incident-cards';
const ACTOR = 'system:incident-cards';
const CARD_EVENTS = new Set(['IncidentCardPosted', 'IncidentCardUpdated']);
/** Slack answers that mean a card or its channel is gone for good: skip it, never retry. */
const GONE = new Set([
  'message_not_found',
  'channel_not_found',
  'not_in_channel',
  'is_archived',
  'cant_update_message',
  'edit_window_closed',
  'msg_too_long',
  'invalid_blocks',
]);

const SLACK_USER = /^[UW][A-Z0-9]{2,}$/;

/** The card as sent to the requester's DM when the channel it was triggered from refused it. */
const inDmInstead = (message: SlackMessage, channel: string): SlackMessage => ({
  text: message.text,
  blocks: [
    {
      type: 'context',
      elements: [
        {
          type: 'mrkdwn',
          text: `:warning: Switchboard can't post in <#${channel}> (invite it there with \`/invite @switchboard\`), so this incident's card is here.`,
        },
      ],
    },
    ...message.blocks,
  ],
});

const slackErrorOf = (e: unknown): string | undefined => {
  const v = isChatOpsError(e) ? e.details.slackError : undefined;
  return typeof v === 'string' ? v : undefined;
};

/** The view with Slack mentions for people the incident service names and we know. */
export const withSlackUsers = (view: IncidentView, slackUserOf: SlackUserOf): IncidentView => {
  const actor = (a: Actor | null): Actor | null =>
    a && !a.slackUserId && a.upstreamUserId ? { ...a, slackUserId: slackUserOf(a.upstreamUserId) } : a;
  const mark = <M extends { by: Actor | null } | null>(m: M): M => (m ? { ...m, by: actor(m.by) } : m);
  const assignee = (a: Assignee): Assignee => (a.slackUserId ? a : { ...a, slackUserId: slackUserOf(a.id) });
  return {
    ...view,
    assignees: view.assignees.map(assignee),
    triggered: mark(view.triggered),
    acknowledged: mark(view.acknowledged),
    resolved: mark(view.resolved),
    lastNote: mark(view.lastNote),
  };
};

/** Incident-service users the view names with no Slack user known for them. */
const unmentioned = (view: IncidentView, slackUserOf: SlackUserOf): string[] => {
  const ids = new Set<string>();
  const consider = (id: string | null | undefined, slack: string | null | undefined) => {
    if (id && !slack && !slackUserOf(id)) ids.add(id);
  };
  for (const a of view.assignees) consider(a.id, a.slackUserId);
  for (const m of [view.triggered, view.acknowledged, view.resolved, view.lastNote]) {
    consider(m?.by?.upstreamUserId, m?.by?.slackUserId);
  }
  return [...ids];
};

export const createIncidentCardsReactor = (options: IncidentCardsOptions): Processor => {
  const slackUserOf = options.slackUserOf ?? (() => null);
  const maxTransientTries = options.maxTransientTries ?? 5;
  /** Newest renderable revision already shown on every card of a stream (this process only). */
  const rendered = new Map<string, number>();
  /** `stream|channel` pairs Slack refused a card for (not invited, archived): not tried again. */
  const unpostable = new Set<string>();
  /** Set when the history cannot be read (a missing scope): logged once, then posts as before. */
  let historyRefused: string | undefined;
  /**
   * Incidents with a post Slack may have taken unrecorded, by stream, with when the doubt arose
   * (`performance.now()`): from a redelivered event, or a post that failed without Slack's answer.
   * Cleared when a render of the incident completes (every card it needs is recorded by then).
   */
  const inDoubt = new Map<string, number>();
  const doubt = (streamId: string): void => {
    if (!inDoubt.has(streamId)) inDoubt.set(streamId, performance.now());
  };

  /** A card posted unrecorded in `channel`, found by its marker (only for an incident in doubt). */
  const findPosted = async (
    ctx: ProcessorContext,
    channel: string,
    marker: CardMarker,
    since: Date,
  ): Promise<{ channel: string; ts: string } | null> => {
    const doubtSince = inDoubt.get(marker.stream);
    if (doubtSince === undefined || !options.slack.findPosted || historyRefused) return null;
    // A post in doubt is older than the doubt: once this has passed, it is HISTORY_SETTLE_MS old.
    const settle = doubtSince + HISTORY_SETTLE_MS - performance.now();
    if (settle > 0) await abortableSleep(settle, ctx.signal);
    try {
      return await options.slack.findPosted(
        channel,
        marker,
        new Date(since.getTime() - HISTORY_MARGIN_MS),
        HISTORY_LIMIT,
      );
    } catch (error) {
      const refused = slackErrorOf(error);
      if (!refused || !NO_HISTORY.has(refused)) throw error;
      if (refused !== 'not_in_channel') {
        historyRefused = refused;
        ctx.logger.warn(
          { slackError: refused, channel },
          `card history unreadable (${refused}): after a crash a card may be posted twice; add the channels:history and groups:history scopes`,
        );
      }
      return null;
    }
  };

  /** Posts; a failure without Slack's answer (5xx, network, timeout) leaves the incident in doubt. */
  const postInDoubt = async (
    channel: string,
    message: SlackMessage,
    marker: CardMarker,
  ): Promise<{ channel: string; ts: string }> => {
    try {
      return await options.slack.postMessage(channel, message, marker);
    } catch (error) {
      if (slackErrorOf(error) === undefined && !hasCode(error, 'SB_UPSTREAM_RATE_LIMITED'))
        doubt(marker.stream);
      throw error;
    }
  };

  const record = async (
    ctx: ProcessorContext,
    cause: RecordedEvent,
    type: 'RecordIncidentCardPosted' | 'RecordIncidentCardUpdated',
    data: { channel: string; ts: string },
    key: string,
  ): Promise<void> => {
    const command: Command = {
      type,
      data: { ...data, streamId: cause.streamId },
      metadata: {
        now: ctx.now().toISOString(),
        commandId: uuidv5(`${INCIDENT_CARDS_PROCESSOR}:${key}`),
        actor: ACTOR,
        causationId: cause.id,
      },
    };
    const outcome = await dispatchCommand(options.dispatch, command);
    if (outcome.outcome === 'rejected') {
      ctx.logger.warn({ code: outcome.code, type }, `card not recorded: ${outcome.message}`);
    }
  };

  /** Renders `state`, the stream folded up to `revision` (the caller has just read it). */
  const render = async (
    ctx: ProcessorContext,
    cause: RecordedEvent,
    revision: number,
    state: IncidentState,
    since: Date,
    paging: string | null = null,
  ): Promise<'done' | 'newer'> => {
    const streamId = cause.streamId;
    const raw = toIncidentView(streamId, state);
    if (raw.phase === 'notTriggered') return 'done';
    const unknown = unmentioned(raw, slackUserOf);
    if (unknown.length > 0 && options.findSlackUsers) await options.findSlackUsers(unknown);
    const view = withSlackUsers(raw, slackUserOf);
    const lastLevel =
      view.service && options.lastEscalationLevel ? await options.lastEscalationLevel(view.service.id) : null;
    const message = incidentCard(view, { lastEscalationLevel: lastLevel, paging });
    const log = ctx.logger.child({ streamId });

    const trigger = state.context.trigger;
    const triggerChannelMissed =
      !!trigger?.channel && !state.context.cards.some((c) => c.channel === trigger.channel);
    for (const card of state.context.cards) {
      const body =
        triggerChannelMissed && card.channel.startsWith('D')
          ? inDmInstead(message, trigger!.channel!)
          : message;
      try {
        await options.slack.updateMessage(card.channel, card.ts, body);
      } catch (error) {
        const gone = slackErrorOf(error);
        if (gone && GONE.has(gone)) {
          log.warn({ channel: card.channel, slackError: gone }, 'card cannot be updated; skipped');
          continue;
        }
        throw error;
      }
      await record(
        ctx,
        cause,
        'RecordIncidentCardUpdated',
        card,
        `updated:${streamId}:${card.channel}:${card.ts}:${revision}`,
      );
    }

    const wanted = new Set<string>();
    if (trigger?.channel) wanted.add(trigger.channel);
    if (view.service) for (const c of await options.channelsFor(view.service.id)) wanted.add(c);
    // A card that went to the requester's DM because the trigger channel refused it.
    const inDm = state.context.cards.some((c) => c.channel.startsWith('D'));
    for (const channel of wanted) {
      if (state.context.cards.some((c) => c.channel === channel)) continue;
      if (unpostable.has(`${streamId}|${channel}`) || (channel === trigger?.channel && inDm)) continue;
      // Read again right before posting: a card recorded since (another delivery) is not posted twice.
      const again = await readIncidentState(ctx.store, streamId);
      if (again.state.context.cards.some((c) => c.channel === channel)) return 'newer';
      const marker: CardMarker = { stream: streamId, postKey: `posted:${streamId}:${channel}` };
      let posted: { channel: string; ts: string };
      try {
        const before = await findPosted(ctx, channel, marker, since);
        if (before) {
          // It shows what was true before the crash: bring it up to date, then record it.
          await options.slack.updateMessage(before.channel, before.ts, message);
          log.info({ channel, ts: before.ts }, 'card posted before a restart found; recorded');
        }
        posted = before ?? (await postInDoubt(channel, message, marker));
      } catch (error) {
        const gone = slackErrorOf(error);
        if (!gone || !GONE.has(gone)) throw error;
        unpostable.add(`${streamId}|${channel}`);
        log.warn({ channel, slackError: gone }, 'card cannot be posted in this channel');
        const requester = trigger?.request.by;
        if (channel !== trigger?.channel || !requester || !SLACK_USER.test(requester)) continue;
        // The requester would otherwise never see the incident they created: the card goes to them.
        posted = await postInDoubt(requester, inDmInstead(message, channel), marker);
      }
      await record(ctx, cause, 'RecordIncidentCardPosted', posted, marker.postKey);
      log.debug({ channel: posted.channel, ts: posted.ts }, 'card posted');
    }
    return 'done';
  };

  return {
    id: INCIDENT_CARDS_PROCESSOR,
    filter: { streamPrefixes: ['incident-'] },
    async handle(event, ctx) {
      // Page activity (src/incidents/paging.ts) is recorded as commands; the card shows its summary.
      // Any event of an incident that may have been handled before puts the incident in doubt,
      // whether or not this one renders (a newer one may, without being a redelivery itself).
      if (ctx.redelivery) doubt(event.streamId);
      if ((event.kind !== 'event' && event.type !== PAGE_ACTIVITY) || CARD_EVENTS.has(event.type)) return;
      const streamId = event.streamId;
      // When a post this event may have made could have happened at the earliest: after the stream's
      // last card bookkeeping, or its first event (read before this delivery records anything).
      let since: Date | undefined;
      for (let transient = 0; ; ) {
        const history = await ctx.store.readStream(streamId);
        since ??= (history.findLast((m) => m.kind === 'event' && CARD_EVENTS.has(m.type)) ?? history[0])
          ?.recordedAt;
        const newest = history.reduce(
          (max, m) =>
            (m.kind === 'event' && !CARD_EVENTS.has(m.type)) || m.type === PAGE_ACTIVITY
              ? Math.max(max, m.revision)
              : max,
          -1,
        );
        // Coalesce: a newer event of this incident is waiting and will render the latest state.
        if (event.revision < newest) return;
        if ((rendered.get(streamId) ?? -1) >= newest) return;
        try {
          const outcome = await render(
            ctx,
            event,
            newest,
            foldIncidentHistory(history),
            since ?? ctx.now(),
            pagingSummary(history),
          );
          if (outcome === 'done') {
            rendered.set(streamId, newest);
            inDoubt.delete(streamId);
          } else continue;
          return;
        } catch (error) {
          if (hasCode(error, 'SB_STORE_UNAVAILABLE') || !shouldRetry(error)) throw error;
          const waitMs = retryAfterMsOf(error);
          if (waitMs !== undefined) {
            ctx.logger.warn(
              { streamId, waitMs },
              'Slack rate limit: waiting before rendering the latest state',
            );
            await abortableSleep(waitMs, ctx.signal);
            continue;
          }
          transient += 1;
          if (transient >= maxTransientTries) {
            ctx.logger.error(
              { err: error, streamId },
              'card render kept failing; the next change renders again',
            );
            return;
          }
          await abortableSleep(backoffDelayMs(transient, { baseMs: 200, maxMs: 5_000 }), ctx.signal);
        }
      }
    },
  };
};

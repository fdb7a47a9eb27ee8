import { WORK_ACTIVITY } from '../../machines/incident/ackReminder.ts';
import type { IncidentState } from '../../machines/incident/decider.ts';
import type { Actor, Assignee, Priority } from '../../machines/incident/events.ts';
import { hasCode } from '../core/errors.ts';
import { uuidv5 } from '../core/ids.ts';
import type { Command } from '../core/messages.ts';
import type { RecordedEvent } from '../eventStore/eventStore.ts';
import { abortableSleep } from '../processors/abortableSleep.ts';
import { type Dispatch, dispatchCommand } from '../processors/dispatchCommand.ts';
import { backoffDelayMs, retryAfterMsOf, shouldRetry } from '../processors/retryPolicy.ts';
import type { Processor, ProcessorContext } from '../processors/runner.ts';
import type { SlackMessage } from '../slack/blocks/format.ts';
import { type OutboxLedger, type SlackOutbox, UPDATE_GONE } from '../slack/outbox.ts';
import { incidentCard } from './blocks/incidentCard.ts';
import { type IncidentView, toIncidentView } from './blocks/incidentView.ts';
import { pagedInstead, pagingSummary } from './blocks/pagingSummary.ts';
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
 * Duplicates: before posting in a channel the stream is read again (the ledger of cards is the
 * incident's own stream: `IncidentCardPosted`), and a channel with a recorded card gets an update
 * instead. The sending itself is the outbox's (src/slack/outbox.ts): each card is posted with message
 * metadata `{ event_type: 'switchboard_incident_card', event_payload: { stream, postKey } }`, and
 * after a crash between a post and its record (a redelivered event of the incident, or a post that
 * failed without Slack's answer) the channel's history is read for it first. The doubt is per
 * incident, not per event: after a restart the events delivered again may be coalesced into a
 * newer one recorded since, or give up on a failing Slack, and the change that finally renders is
 * then not itself a redelivery; it lasts until a render of the incident completes. The outbox also
 * skips a redraw that shows what the card already shows (the card's update is still recorded: the
 * card shows that revision), and waits out Slack's Retry-After.
 *
 * @example
 * const cards = createIncidentCardsReactor({ outbox, dispatch: bus.dispatch, channelsFor, slackUserOf });
 */

/** What a card's message metadata carries (`event_payload`): the stream and the post's key. */
export type CardMarker = Readonly<{ stream: string; postKey: string }>;

/** The `event_type` of a card's message metadata. */
export const CARD_METADATA_EVENT_TYPE = 'switchboard_incident_card';
/** Page activity, recorded as commands in the incident's stream (src/incidents/paging.ts). */
const PAGE_ACTIVITY = 'RecordIncidentPageActivity';
/** Recorded commands that change what the card shows: page activity, and work activity (its channel). */
const RENDERED_COMMANDS: ReadonlySet<string> = new Set([PAGE_ACTIVITY, WORK_ACTIVITY]);

/**
 * The incident's own channel as its timeline records it (issue 22 item 7,
 * src/incidents/incidentChannel.reactor.ts): the card is posted there too and kept in step.
 */
export const incidentChannelOf = (
  history: readonly RecordedEvent[],
): Readonly<{ channel: string | null; archived: boolean }> => {
  const lines = history.filter((m) => m.kind === 'command' && m.type === WORK_ACTIVITY);
  const created = lines.findLast((m) => m.data.kind === 'channel_created');
  const channel = typeof created?.data.channel === 'string' ? created.data.channel : null;
  return {
    channel,
    archived:
      channel !== null && lines.some((m) => m.data.kind === 'channel_archived' && m.data.channel === channel),
  };
};

export type IncidentCardsOptions = Readonly<{
  outbox: SlackOutbox;
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
  /**
   * The incident service's priorities for the card's priority select (the cached list; bounded by
   * the caller); null: no select.
   */
  priorities?(): Promise<readonly Priority[] | null>;
  /** Attempts per render on transient Slack failures (not rate limits) before giving up. Default 5. */
  maxTransientTries?: number;
}>;

export const INCIDENT_CARDS_PROCESSOR = 'incident-cards';
const ACTOR = 'system:incident-cards';
const CARD_EVENTS = new Set(['IncidentCardPosted', 'IncidentCardUpdated']);
/** Refusals that are about the card itself, not its place (besides the outbox's own). */
const CARD_REFUSED: ReadonlySet<string> = new Set(['msg_too_long', 'invalid_blocks']);
/** Slack answers that mean a card or its channel is gone for good: skip it, never retry. */
const GONE: ReadonlySet<string> = new Set([...UPDATE_GONE, ...CARD_REFUSED]);

const SLACK_USER = /^[UW][A-Z0-9]{2,}$/;
const postKeyOf = (streamId: string, channel: string) => `posted:${streamId}:${channel}`;

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
  const { outbox } = options;

  /**
   * The ledger of one incident's card in one channel: its stream (`IncidentCardPosted`, read again
   * right before posting), recorded with `RecordIncidentCardPosted` (a deterministic command id).
   */
  const cardLedger = (ctx: ProcessorContext, cause: RecordedEvent, channel: string): OutboxLedger => ({
    name: INCIDENT_CARDS_PROCESSOR,
    async find() {
      const { state } = await readIncidentState(ctx.store, cause.streamId);
      const card = state.context.cards.find((c) => c.channel === channel);
      return card ? { key: postKeyOf(cause.streamId, channel), channel: card.channel, ts: card.ts } : null;
    },
    async record(_ctx, key, sent) {
      if (!sent) throw new Error('a card is recorded with its message');
      await record(ctx, cause, 'RecordIncidentCardPosted', sent, key);
      return { key, channel: sent.channel, ts: sent.ts };
    },
    marker: (key) => ({
      event_type: CARD_METADATA_EVENT_TYPE,
      event_payload: { stream: cause.streamId, postKey: key } satisfies CardMarker,
    }),
  });

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
    own: Readonly<{ channel: string | null; archived: boolean }> = { channel: null, archived: false },
    pagedInsteadOf: ReturnType<typeof pagedInstead> = new Map(),
  ): Promise<'done' | 'newer'> => {
    const streamId = cause.streamId;
    const raw = toIncidentView(streamId, state);
    if (raw.phase === 'notTriggered') return 'done';
    const unknown = unmentioned(raw, slackUserOf);
    if (unknown.length > 0 && options.findSlackUsers) await options.findSlackUsers(unknown);
    const view = withSlackUsers(raw, slackUserOf);
    const lastLevel =
      view.service && options.lastEscalationLevel ? await options.lastEscalationLevel(view.service.id) : null;
    const priorities = options.priorities ? await options.priorities() : null;
    const message = incidentCard(view, {
      lastEscalationLevel: lastLevel,
      paging,
      priorities,
      incidentChannel: own,
      pagedInstead: pagedInsteadOf,
    });
    const log = ctx.logger.child({ streamId });

    const trigger = state.context.trigger;
    const triggerChannelMissed =
      !!trigger?.channel && !state.context.cards.some((c) => c.channel === trigger.channel);
    for (const card of state.context.cards) {
      const body =
        triggerChannelMissed && card.channel.startsWith('D')
          ? inDmInstead(message, trigger!.channel!)
          : message;
      const updated = await outbox.update(ctx, card, body, { gone: CARD_REFUSED, maxRateLimitWaits: 0 });
      if (updated.outcome === 'gone') {
        log.warn(
          { channel: card.channel, slackError: updated.slackError },
          'card cannot be updated; skipped',
        );
        continue;
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
    // Its own channel (issue 22 item 7), until archived.
    if (own.channel && !own.archived) wanted.add(own.channel);
    // A card that went to the requester's DM because the trigger channel refused it.
    const inDm = state.context.cards.some((c) => c.channel.startsWith('D'));
    for (const channel of wanted) {
      if (state.context.cards.some((c) => c.channel === channel)) continue;
      if (unpostable.has(`${streamId}|${channel}`) || (channel === trigger?.channel && inDm)) continue;
      const requester = trigger?.request.by;
      // The requester would otherwise never see the incident they created: the card goes to them.
      const toRequester = channel === trigger?.channel && !!requester && SLACK_USER.test(requester);
      const posted = await outbox.post(ctx, {
        ledger: cardLedger(ctx, cause, channel),
        key: postKeyOf(streamId, channel),
        channel,
        message,
        since,
        doubtScope: streamId,
        fallback: toRequester
          ? { channel: requester, message: inDmInstead(message, channel), on: GONE }
          : undefined,
        maxRateLimitWaits: 0,
      });
      // Recorded since this render read the stream (another delivery): render the newer state.
      if (posted.outcome === 'recorded') return 'newer';
      if (posted.outcome === 'refused') {
        if (!posted.slackError || !GONE.has(posted.slackError) || posted.fallback) throw posted.error;
        unpostable.add(`${streamId}|${channel}`);
        log.warn({ channel, slackError: posted.slackError }, 'card cannot be posted in this channel');
        continue;
      }
      if (posted.fallback) {
        unpostable.add(`${streamId}|${channel}`);
        log.warn({ channel }, 'card cannot be posted in this channel');
      }
      log.debug({ channel: posted.record.channel, ts: posted.record.ts }, 'card posted');
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
      outbox.suspect(ctx, event.streamId);
      if ((event.kind !== 'event' && !RENDERED_COMMANDS.has(event.type)) || CARD_EVENTS.has(event.type))
        return;
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
            (m.kind === 'event' && !CARD_EVENTS.has(m.type)) || RENDERED_COMMANDS.has(m.type)
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
            incidentChannelOf(history),
            pagedInstead(history),
          );
          if (outcome === 'done') {
            rendered.set(streamId, newest);
            outbox.resolve(streamId);
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

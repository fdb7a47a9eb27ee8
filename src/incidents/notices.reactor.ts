import type { Actor, UpstreamAction } from '../../machines/incident/events.ts';
import { INCIDENT_PAGING_STREAM_PREFIX, incidentOfPagingStream } from '../../machines/incident/paging.ts';
import { INCIDENT_ROUTING_STREAM_PREFIX } from '../../machines/incidentRouting/streams.ts';
import { isChatOpsError } from '../core/errors.ts';
import type { RecordedEvent } from '../eventStore/eventStore.ts';
import type { SlackReplyMessage } from '../processors/ports.ts';
import type { Processor, ProcessorContext } from '../processors/runner.ts';
import { escapeMrkdwn, mention, type SlackMessage, truncate } from '../slack/blocks/format.ts';
import { noticeLedger, type PostResult, type SlackOutbox } from '../slack/outbox.ts';
import { incidentLabel, vendorReason } from './blocks/incidentCard.ts';
import { toIncidentView } from './blocks/incidentView.ts';
import { foldIncidentHistory, readIncidentState } from './incidentState.ts';

/**
 * `incident-notices`: messages to people about what happened, once each.
 *
 * - A request that failed for good (`IncidentUpstreamCallFailed { final: true }`): the requester
 *   gets a DM, "Couldn't acknowledge #42 after 5 attempts: the incident service could not be
 *   reached. …". The card shows it too (incident-cards); the DM reaches them wherever they are.
 * - A request overtaken by a resolve (someone resolved the incident, in Slack or the web app, while
 *   an acknowledge, escalate or reassign was in progress): the requester gets a DM, "#42 … was
 *   resolved by <@U2> while your acknowledge was in progress, so it was not applied".
 * - An acknowledge or resolve a person typed in a channel where the incident's card is not posted
 *   (a click comes from a card, which shows the outcome): once the incident service has it, they
 *   get an ephemeral confirmation there, naming the channel the card is in ("#42 … is acknowledged
 *   in the incident service. Its card is in #ops."); by DM if the bot cannot post there.
 * - A channel subscribed to a service (`IncidentChannelSubscribed`): the channel is told, and who
 *   subscribed it gets a DM if the bot cannot post there (not invited).
 * - `/incident trigger …` typed as text answers "⏳ Creating the incident…" at once; once the
 *   incident exists upstream (`IncidentLinked`) and has a card, that answer is replaced in place, through the command's
 *   sealed `response_url`, by "✅ Created #12 … its card is in #ops", and when the create fails for
 *   good by "❌ Not created: …", so the person is left with one truthful message. A `response_url`
 *   that has expired (30 minutes) or been used up leaves the old answer: the card and the DM say it.
 *
 * - A page that could not reach someone because of their phone (`IncidentPageUndeliverable`: no
 *   verified phone, a number that must be verified again, opted out by STOP; issue 18): they get a
 *   DM, once per incident whatever the retries, saying what to do with `/verify`. The card and the
 *   timeline say it to everyone; someone else was paged.
 *
 * Each notice is recorded as `IncidentNoticeSent` in `incidentNotice-<uuid>` (UUIDv5 of what it is
 * about) and sent through the outbox (src/slack/outbox.ts): checked before sending, so a redelivery
 * does not send it again, and looked for in Slack's history when a crash may have lost its record.
 *
 * @example
 * const notices = createIncidentNoticesReactor({ outbox, respond: replies.respond });
 */
export type IncidentNoticesOptions = Readonly<{
  outbox: SlackOutbox;
  /**
   * Posts through a recorded (sealed) `response_url`; with `replaceOriginal` it replaces the answer
   * the slash command got. Without it, "⏳ Creating the incident…" stays as it was.
   */
  respond?(responseUrl: string, message: SlackReplyMessage): Promise<void>;
}>;

export const INCIDENT_NOTICES_PROCESSOR = 'incident-notices';

export const INCIDENT_NOTICE_STREAM_PREFIX = 'incidentNotice-';
const SLACK_USER = /^[UW][A-Z0-9]{2,}$/;

/** Where incident notices are recorded (as they always were: `IncidentNoticeSent`, one stream per key). */
export const incidentNoticeLedger = noticeLedger({
  name: 'incident-notices',
  streamPrefix: INCIDENT_NOTICE_STREAM_PREFIX,
  streamSeed: 'notice',
  eventSeed: 'notice-sent',
  eventType: 'IncidentNoticeSent',
});

/** Facts worth confirming to a requester away from the card, with the request they confirm. */
const CONFIRMED: Readonly<Record<string, { requested: string; word: string }>> = {
  IncidentAcknowledged: { requested: 'IncidentAcknowledgeRequested', word: 'acknowledged' },
  IncidentResolved: { requested: 'IncidentResolveRequested', word: 'resolved' },
};

/** A subscribed channel the bot cannot post in: who subscribed it is told by DM. */
const CANNOT_POST_THERE: ReadonlySet<string> = new Set(['not_in_channel', 'channel_not_found']);

/** Slack refused a notice for good: thrown, so the processor retries and then parks it, as before. */
const orThrow = (result: PostResult): void => {
  if (result.outcome === 'refused') throw result.error;
};

const VERB: Readonly<Record<UpstreamAction, string>> = {
  trigger: 'create',
  acknowledge: 'acknowledge',
  resolve: 'resolve',
  escalate: 'escalate',
  reassign: 'reassign',
  note: 'add your note to',
  set_priority: 'change the priority of',
  set_urgency: 'change the urgency of',
};

/** Why the last attempt failed, for people. */
export const failureReasonText = (code: string, message: string): string => {
  switch (code) {
    case 'SB_UPSTREAM_UNAVAILABLE':
    case 'SB_TIMEOUT':
      return 'the incident service could not be reached';
    case 'SB_UPSTREAM_RATE_LIMITED':
      return 'the incident service kept asking Switchboard to slow down';
    case 'SB_UPSTREAM_AUTH':
      return "the incident service refused Switchboard's credentials (an admin needs to check PAGERDUTY_TOKEN)";
    case 'SB_UNMAPPED_USER':
      return 'the incident service does not know your user';
    default: {
      const said = vendorReason(message);
      return said ? `the incident service refused it (${said})` : 'the incident service refused it';
    }
  }
};

/** Why someone could not be paged and what they can do about it, by reason; other reasons are not theirs to fix. */
const FIX_BY_VERIFYING: Readonly<Record<string, Readonly<{ because: string; fix: string }>>> = {
  no_verified_phone: {
    because: 'you have no verified phone',
    fix: 'Use `/verify &lt;your phone number&gt;` (international form, e.g. `+44 7700 900123`) so Switchboard can page you by SMS and call.',
  },
  must_verify_again: {
    because: 'your number must be verified again (Switchboard can no longer use the one you verified)',
    fix: 'Use `/verify &lt;your phone number&gt;`: the same number is fine.',
  },
  opted_out: {
    because: 'you replied STOP to a page',
    fix: 'To be paged again, verify your number again with `/verify &lt;your phone number&gt;`; `/verify status` shows where it stands.',
  },
};

export const createIncidentNoticesReactor = (options: IncidentNoticesOptions): Processor => {
  const { outbox } = options;
  const ledger = incidentNoticeLedger;
  const dm = (text: string): SlackMessage => ({
    text,
    blocks: [{ type: 'section', text: { type: 'mrkdwn', text } }],
  });

  /**
   * Replaces the slash command's "⏳ Creating…" answer, once per request. A URL Slack no longer
   * takes (expired, used up) is given up quietly: the card and the DM tell the same story.
   */
  const answerTrigger = async (
    ctx: ProcessorContext,
    request: { data: Record<string, unknown>; metadata: Record<string, unknown> } | undefined,
    text: string,
  ) => {
    const responseUrl = request?.metadata.responseUrl;
    const requestId = request?.data.requestId;
    if (!options.respond || typeof responseUrl !== 'string' || typeof requestId !== 'string') return;
    const respond = options.respond;
    await outbox.deliverOnce(ctx, { ledger, key: `trigger-answer:${requestId}` }, async () => {
      try {
        await respond(responseUrl, {
          text,
          blocks: [{ type: 'section', text: { type: 'mrkdwn', text } }],
          replaceOriginal: true,
        });
      } catch (error) {
        if (!isChatOpsError(error) || error.details.retryable === true) throw error;
        if (error.code === 'SB_UPSTREAM_UNAVAILABLE' || error.code === 'SB_TIMEOUT') throw error;
        ctx.logger.info(
          { code: error.code },
          'the trigger answer could not be replaced (response_url refused)',
        );
      }
      return null;
    });
  };

  /**
   * An incident triggered by a typed `/incident trigger`, once it exists upstream (linked) and has a
   * card (either may come first; the card is posted "Creating…" before the create is answered):
   * "✅ Created #12 …: its card is in #ops".
   */
  const created = async (ctx: ProcessorContext, event: RecordedEvent) => {
    const { state, history } = await readIncidentState(ctx.store, event.streamId);
    const card = state.context.cards[0];
    if (!state.context.link || !card) return;
    const request = history.find((m) => m.kind === 'event' && m.type === 'IncidentTriggerRequested');
    if (!request) return;
    const view = toIncidentView(event.streamId, state);
    const channel = card.channel;
    const where =
      channel === request.metadata.channelId
        ? 'its card is in this channel'
        : /^[CG][A-Z0-9]{2,}$/.test(channel)
          ? `its card is in <#${channel}>`
          : 'its card is in your DM with Switchboard';
    await answerTrigger(ctx, request, `:white_check_mark: Created ${incidentLabel(view)}: ${where}.`);
  };

  const finalFailure = async (ctx: ProcessorContext, event: RecordedEvent) => {
    const streamId = event.streamId;
    const data = event.data as Record<string, unknown>;
    const requestId = String(data.requestId);
    const { state, history } = await readIncidentState(ctx.store, streamId);
    const request = history.find(
      (m) => m.kind === 'event' && m.type.endsWith('Requested') && m.data.requestId === requestId,
    );
    const by = typeof request?.data.by === 'string' ? request.data.by : null;
    if (!by || !SLACK_USER.test(by)) return;
    const view = toIncidentView(streamId, state);
    const action = String(data.action) as UpstreamAction;
    const attempts = Number(data.attempt);
    const label =
      action === 'trigger'
        ? `the incident “${escapeMrkdwn(truncate(view.title, 150))}”`
        : incidentLabel(view);
    const text =
      `:x: Couldn't ${VERB[action] ?? action} ${label} after ${attempts} attempt${attempts === 1 ? '' : 's'}: ` +
      `${failureReasonText(String(data.code), String(data.message ?? ''))}. ` +
      'Try again from the card, or use the incident service directly.';
    orThrow(
      await outbox.post(ctx, {
        ledger,
        key: `final-failure:${requestId}`,
        channel: by,
        message: dm(text),
        since: event.recordedAt,
      }),
    );
    if (action === 'trigger') {
      await answerTrigger(
        ctx,
        request,
        `:x: Not created: ${failureReasonText(String(data.code), String(data.message ?? ''))}. ` +
          `Tried ${attempts} time${attempts === 1 ? '' : 's'}; the details are in your DM with Switchboard.`,
      );
    }
  };

  /** Requests the resolve `event` overtook: pending just before it, not its own. */
  const overtaken = async (ctx: ProcessorContext, event: RecordedEvent) => {
    const { state, history } = await readIncidentState(ctx.store, event.streamId);
    const at = history.findIndex((m) => m.id === event.id);
    if (at < 0) return;
    const before = foldIncidentHistory(history.slice(0, at)).context;
    const data = event.data as { requestId?: unknown; by?: Actor | null };
    const lost = [before.statusRequest, before.assignmentRequest].filter(
      (r): r is NonNullable<typeof r> =>
        r !== null &&
        r.requestId !== data.requestId &&
        SLACK_USER.test(r.by) &&
        r.by !== data.by?.slackUserId, // whoever resolved it knows
    );
    if (lost.length === 0) return;
    const view = toIncidentView(event.streamId, state);
    const by = data.by;
    const who = by?.slackUserId
      ? mention(by.slackUserId)
      : by?.name
        ? escapeMrkdwn(truncate(by.name, 80))
        : 'someone';
    for (const r of lost) {
      const text =
        `:information_source: ${incidentLabel(view)} was resolved by ${who} while your ${VERB[r.action] ?? r.action} ` +
        'was in progress, so it was not applied. The card shows the incident as it is now.';
      orThrow(
        await outbox.post(ctx, {
          ledger,
          key: `overtaken:${r.requestId}`,
          channel: r.by,
          message: dm(text),
          since: event.recordedAt,
        }),
      );
    }
  };

  /** A confirmed acknowledge or resolve whose request came from a channel without the card. */
  const confirmed = async (ctx: ProcessorContext, event: RecordedEvent) => {
    const data = event.data as { requestId?: unknown };
    if (typeof data.requestId !== 'string') return;
    const requestId = data.requestId;
    const done = CONFIRMED[event.type];
    if (!done) return;
    const { state, history } = await readIncidentState(ctx.store, event.streamId);
    const request = history.find(
      (m) => m.kind === 'event' && m.type === done.requested && m.data.requestId === requestId,
    );
    const by = typeof request?.data.by === 'string' ? request.data.by : null;
    const channel = typeof request?.metadata.channelId === 'string' ? request.metadata.channelId : null;
    if (!by || !SLACK_USER.test(by) || !channel) return;
    const cards = state.context.cards;
    if (cards.some((c) => c.channel === channel)) return;
    const view = toIncidentView(event.streamId, state);
    const where = cards.find((c) => /^[CG][A-Z0-9]{2,}$/.test(c.channel));
    const text =
      `:white_check_mark: ${incidentLabel(view)} is ${done.word} in the incident service.` +
      (where ? ` Its card is in <#${where.channel}>.` : '');
    // Ephemeral where they typed it; by DM when Slack cannot show it there (not a member).
    orThrow(
      await outbox.ephemeral(ctx, {
        ledger,
        key: `confirmed:${requestId}`,
        channel,
        user: by,
        message: dm(text),
        dmFallback: true,
        since: event.recordedAt,
      }),
    );
  };

  const subscribed = async (ctx: ProcessorContext, event: RecordedEvent) => {
    const data = event.data as Record<string, unknown>;
    const channel = String(data.channel);
    const by = String(data.by);
    const name = escapeMrkdwn(String(data.serviceName ?? data.serviceId));
    const text =
      `:bell: This channel now gets a card for every *${name}* incident, updated in place (set up by ${mention(by)}). ` +
      `\`/incident unsubscribe ${name}\` stops it.`;
    const tell = `:warning: <#${channel}> is subscribed to *${name}* incidents, but Switchboard can't post there yet: invite it with \`/invite @switchboard\` in that channel.`;
    const key = `subscribed:${event.id}`;
    const result = await outbox.post(ctx, {
      ledger,
      key,
      channel,
      message: dm(text),
      since: event.recordedAt,
      // The bot is not in the channel: who subscribed it is told.
      fallback: SLACK_USER.test(by) ? { channel: by, message: dm(tell), on: CANNOT_POST_THERE } : undefined,
    });
    if (result.outcome !== 'refused') return;
    // Nobody to tell (subscribed from outside Slack): recorded, so it is not tried again.
    if (!result.fallback && CANNOT_POST_THERE.has(result.slackError ?? '')) {
      await ledger.record(ctx, key, null);
      return;
    }
    throw result.error;
  };

  /** Someone could not be paged for a reason they can fix: told once per incident. */
  const notPaged = async (ctx: ProcessorContext, event: RecordedEvent) => {
    const d = event.data as { slackUserId?: unknown; reason?: unknown };
    const said = typeof d.reason === 'string' ? FIX_BY_VERIFYING[d.reason] : undefined;
    if (!said || typeof d.slackUserId !== 'string' || !SLACK_USER.test(d.slackUserId)) return;
    const person = d.slackUserId;
    const incident = incidentOfPagingStream(event.streamId);
    const { state } = await readIncidentState(ctx.store, incident);
    if (!state.context.incident) return;
    const view = toIncidentView(incident, state);
    const text =
      `:no_bell: Switchboard could not page you about ${incidentLabel(view)}, because ${said.because}. ` +
      `${said.fix} The next person on call is paged instead.`;
    orThrow(
      await outbox.post(ctx, {
        ledger,
        key: `not-paged:${incident}:${person}`,
        channel: person,
        message: dm(text),
        since: event.recordedAt,
      }),
    );
  };

  return {
    id: INCIDENT_NOTICES_PROCESSOR,
    filter: {
      streamPrefixes: ['incident-', INCIDENT_ROUTING_STREAM_PREFIX, INCIDENT_PAGING_STREAM_PREFIX],
      eventTypes: [
        'IncidentPageUndeliverable',
        'IncidentUpstreamCallFailed',
        'IncidentChannelSubscribed',
        'IncidentAcknowledged',
        'IncidentResolved',
        'IncidentCardPosted',
        'IncidentLinked',
      ],
    },
    async handle(event, ctx) {
      if (event.kind !== 'event') return;
      const data = event.data as Record<string, unknown>;
      if (event.type === 'IncidentPageUndeliverable') {
        if (event.streamId.startsWith(INCIDENT_PAGING_STREAM_PREFIX)) await notPaged(ctx, event);
        return;
      }
      if (
        event.type === 'IncidentUpstreamCallFailed' &&
        data.final === true &&
        event.streamId.startsWith('incident-')
      ) {
        await finalFailure(ctx, event);
      } else if (event.type === 'IncidentResolved' && event.streamId.startsWith('incident-')) {
        await overtaken(ctx, event);
        await confirmed(ctx, event);
      } else if (event.type === 'IncidentAcknowledged' && event.streamId.startsWith('incident-')) {
        await confirmed(ctx, event);
      } else if (
        (event.type === 'IncidentCardPosted' || event.type === 'IncidentLinked') &&
        event.streamId.startsWith('incident-')
      ) {
        await created(ctx, event);
      } else if (event.type === 'IncidentChannelSubscribed') {
        await subscribed(ctx, event);
      }
    },
  };
};

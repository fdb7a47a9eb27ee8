import { WORK_ACTIVITY, type WorkActivityKind } from '../../machines/incident/ackReminder.ts';
import { incidentStatus } from '../../machines/incident/decider.ts';
import {
  channelArchiveTimerId,
  INCIDENT_CHANNEL_STREAM_PREFIX,
  type IncidentChannelState,
  incidentChannelDecider,
  incidentChannelName,
  incidentChannelStreamId,
} from '../../machines/incident/incidentChannel.ts';
import { foldHistory } from '../application/fold.ts';
import { isChatOpsError } from '../core/errors.ts';
import type { Command } from '../core/messages.ts';
import type { RecordedEvent } from '../eventStore/eventStore.ts';
import { causedMetadata, type Dispatch, dispatchOrWarn } from '../processors/dispatchCommand.ts';
import type { Processor, ProcessorContext } from '../processors/runner.ts';
import { scheduleTimer } from '../processors/scheduler.ts';
import { mention, type SlackMessage } from '../slack/blocks/format.ts';
import { noticeLedger, type PostResult, type SlackOutbox } from '../slack/outbox.ts';
import { incidentLabel } from './blocks/incidentCard.ts';
import { toIncidentView } from './blocks/incidentView.ts';
import { readIncidentState } from './incidentState.ts';
import type { SlackUserOf } from './pagerdutyMapping.ts';
import type { WorkingSettings } from './workingConfig.ts';

/**
 * The Slack calls an incident channel needs (conversations.create / invite / archive); errors are
 * ChatOpsErrors with `details.slackError` (src/slack/webClient.ts).
 */
export type ChannelsApi = Readonly<{
  create(name: string): Promise<{ id: string; name: string }>;
  invite(channel: string, user: string): Promise<void>;
  archive(channel: string): Promise<void>;
}>;

export type IncidentChannelOptions = Readonly<{
  channels: ChannelsApi;
  outbox: SlackOutbox;
  dispatch: Dispatch;
  settings: WorkingSettings;
  slackUserOf?: SlackUserOf;
}>;

/**
 * `incident-channels` (issue 22 item 7): an incident's own channel, on demand, once.
 *
 * - `IncidentChannelRequested`: `conversations.create` `#inc-<n>-<slug of the title>` (Slack's
 *   rules: lowercase, at most 80 characters, no spaces or periods), `-2`, `-3`… while the name is
 *   taken; then `RecordIncidentChannelCreated`. Slack refusing it for good (`missing_scope`: the app
 *   lacks `channels:manage`; `restricted_action`: the workspace lets only some people create
 *   channels) is recorded (`RecordIncidentChannelFailed`, so it may be asked again) and the person
 *   who asked is told in words by DM. A create has no idempotency key: it is made once per
 *   delivery without quick retries; a crash between Slack creating it and its record makes the
 *   next try take the next free name (the earlier channel stays, empty).
 * - `IncidentChannelCreated`: invites the assignees, the responders (everyone who acted on it from
 *   Slack) and the person who asked, one by one (`already_in_channel` is fine); records the
 *   channel on the timeline (`RecordIncidentWorkActivity`), which has the card reactor post the card
 *   there and keep it in step with the others; says so in the thread of the original card.
 * - `IncidentResolved` with a channel (or a channel created after the resolve): the durable timer
 *   `ArchiveIncidentChannel` `channelArchiveMs` later; when it fires and the incident is still
 *   resolved by that resolve (not reopened), `conversations.archive`, recorded on the timeline.
 */
export const INCIDENT_CHANNELS_PROCESSOR = 'incident-channels';
const ACTOR = 'system:incident-channels';
const SLACK_USER = /^[UW][A-Z0-9]{2,}$/;
const MAX_NAME_TRIES = 20;

export const incidentChannelLedger = noticeLedger({
  name: 'incident-channels',
  streamPrefix: 'incidentChannelNotice-',
  streamSeed: 'incident-channel-notice',
  eventSeed: 'incident-channel-notice-sent',
  eventType: 'IncidentNoticeSent',
});

const slackErrorOf = (error: unknown): string | undefined =>
  isChatOpsError(error) && typeof error.details.slackError === 'string'
    ? error.details.slackError
    : undefined;

const say = (text: string): SlackMessage => ({
  text,
  blocks: [{ type: 'section', text: { type: 'mrkdwn', text } }],
});

const orThrow = (result: PostResult): void => {
  if (result.outcome === 'refused') throw result.error;
};

/** Why a channel could not be made, in words for the person who asked. */
const FAILED: Readonly<Record<string, string>> = {
  missing_scope:
    "its Slack app isn't allowed to create channels: it needs the `channels:manage` permission. A Slack admin adds it (the app's *OAuth & Permissions* page, or its manifest) and reinstalls the app; then ask again",
  restricted:
    'this workspace lets only some people create channels, and Switchboard is not one of them. A Slack admin can change that, or create the channel by hand',
  refused: 'Slack refused to create it. Try again, or create the channel by hand',
};

export const createIncidentChannelReactor = (options: IncidentChannelOptions): Processor => {
  const { outbox, channels, settings } = options;
  const slackUserOf = options.slackUserOf ?? (() => null);
  const ledger = incidentChannelLedger;

  const send = async (
    ctx: ProcessorContext,
    cause: RecordedEvent,
    command: Omit<Command, 'metadata'>,
    key: string,
  ) => {
    await dispatchOrWarn(
      options.dispatch,
      { ...command, metadata: causedMetadata(INCIDENT_CHANNELS_PROCESSOR, ACTOR, key, cause, ctx.now()) },
      ctx.logger,
      'not recorded',
    );
  };

  const activity = (
    ctx: ProcessorContext,
    cause: RecordedEvent,
    incident: string,
    kind: WorkActivityKind,
    data: Readonly<{ slackUserIds: readonly string[]; channel: string | null; detail: string | null }>,
    key: string,
  ) =>
    send(
      ctx,
      cause,
      {
        type: WORK_ACTIVITY,
        data: { streamId: incident, kind, ...data, slackUserIds: [...data.slackUserIds] },
      },
      `activity:${key}`,
    );

  const channelState = async (ctx: ProcessorContext, incident: string): Promise<IncidentChannelState> =>
    foldHistory(incidentChannelDecider, await ctx.store.readStream(incidentChannelStreamId(incident)));

  const requested = async (ctx: ProcessorContext, event: RecordedEvent) => {
    const d = event.data as { streamId: string; requestId: string; by: string };
    const state = await channelState(ctx, d.streamId);
    if (state.phase !== 'requested' || state.requestId !== d.requestId) return;
    const { state: incident } = await readIncidentState(ctx.store, d.streamId);
    const view = toIncidentView(d.streamId, incident);
    for (let suffix = 1; suffix <= MAX_NAME_TRIES; suffix++) {
      const name = incidentChannelName(view.number ?? 0, view.title, suffix);
      try {
        const created = await channels.create(name);
        await send(
          ctx,
          event,
          {
            type: 'RecordIncidentChannelCreated',
            data: { streamId: d.streamId, requestId: d.requestId, channel: created.id, name: created.name },
          },
          `created:${d.requestId}`,
        );
        return;
      } catch (error) {
        const slackError = slackErrorOf(error);
        if (slackError === 'name_taken') continue;
        const reason =
          slackError === 'missing_scope' || slackError === 'no_permission'
            ? 'missing_scope'
            : slackError === 'restricted_action'
              ? 'restricted'
              : slackError !== undefined && !isTransient(error)
                ? 'refused'
                : null;
        if (reason === null) throw error;
        ctx.logger.warn({ slackError, streamId: d.streamId }, 'the incident channel could not be created');
        await fail(ctx, event, d, reason);
        return;
      }
    }
    await fail(ctx, event, d, 'refused');
  };

  const isTransient = (error: unknown): boolean =>
    isChatOpsError(error) &&
    (error.code === 'SB_UPSTREAM_UNAVAILABLE' ||
      error.code === 'SB_TIMEOUT' ||
      error.code === 'SB_UPSTREAM_RATE_LIMITED');

  const fail = async (
    ctx: ProcessorContext,
    event: RecordedEvent,
    d: { streamId: string; requestId: string; by: string },
    reason: 'missing_scope' | 'restricted' | 'refused',
  ) => {
    const { state } = await readIncidentState(ctx.store, d.streamId);
    const label = incidentLabel(toIncidentView(d.streamId, state));
    if (SLACK_USER.test(d.by)) {
      orThrow(
        await outbox.post(ctx, {
          ledger,
          key: `channel-failed:${d.requestId}`,
          channel: d.by,
          message: say(`:warning: Switchboard couldn't create a channel for ${label}: ${FAILED[reason]}.`),
          since: event.recordedAt,
        }),
      );
    }
    await send(
      ctx,
      event,
      { type: 'RecordIncidentChannelFailed', data: { streamId: d.streamId, requestId: d.requestId, reason } },
      `failed:${d.requestId}`,
    );
    await activity(
      ctx,
      event,
      d.streamId,
      'channel_failed',
      { slackUserIds: SLACK_USER.test(d.by) ? [d.by] : [], channel: null, detail: reason },
      `failed:${d.requestId}`,
    );
  };

  /** Everyone on the incident: assignees, whoever acted on it from Slack, and who asked. */
  const peopleOf = (
    history: readonly RecordedEvent[],
    assignees: readonly string[],
    by: string,
  ): string[] => {
    const responders = history
      .filter((m) => m.kind === 'event')
      .flatMap((m) => {
        const data = m.data as { by?: unknown };
        if (typeof data.by === 'string') return [data.by];
        const actor = data.by as { slackUserId?: unknown } | null | undefined;
        return typeof actor?.slackUserId === 'string' ? [actor.slackUserId] : [];
      });
    return [...new Set([...assignees, ...responders, by])].filter((u) => SLACK_USER.test(u)).slice(0, 100);
  };

  const created = async (ctx: ProcessorContext, event: RecordedEvent) => {
    const d = event.data as { streamId: string; requestId: string; channel: string; name: string };
    const state = await channelState(ctx, d.streamId);
    const by = state.by ?? '';
    const { state: incident, history } = await readIncidentState(ctx.store, d.streamId);
    const view = toIncidentView(d.streamId, incident);
    const assignees = view.assignees
      .map((a) => a.slackUserId ?? slackUserOf(a.id))
      .filter((u): u is string => typeof u === 'string');
    for (const user of peopleOf(history, assignees, by)) {
      try {
        await channels.invite(d.channel, user);
      } catch (error) {
        const slackError = slackErrorOf(error);
        if (slackError === undefined || isTransient(error)) throw error;
        // Already there, the bot itself, someone deactivated: nothing to do for them.
        if (slackError !== 'already_in_channel') {
          ctx.logger.info({ slackError, user }, 'not invited to the incident channel');
        }
      }
    }
    // On the timeline: the card reactor posts the card there and keeps it in step.
    await activity(
      ctx,
      event,
      d.streamId,
      'channel_created',
      { slackUserIds: SLACK_USER.test(by) ? [by] : [], channel: d.channel, detail: d.name },
      `created:${d.requestId}`,
    );
    const card = incident.context.cards.find(
      (c) => /^[CG][A-Z0-9]{2,}$/.test(c.channel) && c.channel !== d.channel,
    );
    if (card) {
      const text =
        `:hash: ${SLACK_USER.test(by) ? mention(by) : 'Someone'} opened a channel for this incident: <#${d.channel}>. ` +
        'Everyone on it is invited; the card there follows this one.';
      orThrow(
        await outbox.post(ctx, {
          ledger,
          key: `channel-created:${d.requestId}`,
          channel: card.channel,
          threadTs: card.ts,
          message: say(text),
          since: event.recordedAt,
        }),
      );
    }
    if (incidentStatus(incident) === 'resolved') {
      const resolved = history.findLast((m) => m.kind === 'event' && m.type === 'IncidentResolved');
      if (resolved) await scheduleArchive(ctx, event, d.streamId, resolved);
    }
  };

  const scheduleArchive = async (
    ctx: ProcessorContext,
    cause: RecordedEvent,
    incident: string,
    resolved: RecordedEvent,
  ) => {
    const at = (resolved.data as { at?: unknown }).at;
    const from = typeof at === 'string' ? new Date(at) : resolved.recordedAt;
    await scheduleTimer(ctx.store, {
      timerId: channelArchiveTimerId(incident, resolved.id),
      dueAt: new Date(from.getTime() + settings.channelArchiveMs),
      now: ctx.now(),
      command: {
        type: 'ArchiveIncidentChannel',
        data: { streamId: incident, resolved: resolved.id },
        metadata: { actor: ACTOR, causationId: cause.id },
      },
    });
  };

  const resolved = async (ctx: ProcessorContext, event: RecordedEvent) => {
    const state = await channelState(ctx, event.streamId);
    if (state.phase === 'created') await scheduleArchive(ctx, event, event.streamId, event);
  };

  const archiveDue = async (ctx: ProcessorContext, event: RecordedEvent) => {
    const d = event.data as { streamId: string; resolved: string; channel: string };
    const { state, history } = await readIncidentState(ctx.store, d.streamId);
    const last = history.findLast((m) => m.kind === 'event' && m.type === 'IncidentResolved');
    // Reopened since, or resolved again later (that resolve has its own timer): not this one.
    if (incidentStatus(state) !== 'resolved' || last?.id !== d.resolved) return;
    try {
      await channels.archive(d.channel);
    } catch (error) {
      const slackError = slackErrorOf(error);
      if (slackError === undefined || isTransient(error)) throw error;
      if (slackError !== 'already_archived') {
        ctx.logger.warn({ slackError, channel: d.channel }, 'the incident channel could not be archived');
        return;
      }
    }
    await send(
      ctx,
      event,
      { type: 'RecordIncidentChannelArchived', data: { streamId: d.streamId, channel: d.channel } },
      `archived:${d.channel}`,
    );
    await activity(
      ctx,
      event,
      d.streamId,
      'channel_archived',
      { slackUserIds: [], channel: d.channel, detail: null },
      `archived:${d.channel}`,
    );
  };

  return {
    id: INCIDENT_CHANNELS_PROCESSOR,
    filter: {
      streamPrefixes: ['incident-', INCIDENT_CHANNEL_STREAM_PREFIX],
      eventTypes: [
        'IncidentResolved',
        'IncidentChannelRequested',
        'IncidentChannelCreated',
        'IncidentChannelArchiveDue',
      ],
    },
    async handle(event, ctx) {
      if (event.kind !== 'event') return;
      if (event.streamId.startsWith('incident-')) {
        if (event.type === 'IncidentResolved') await resolved(ctx, event);
        return;
      }
      if (!event.streamId.startsWith(INCIDENT_CHANNEL_STREAM_PREFIX)) return;
      if (event.type === 'IncidentChannelRequested') await requested(ctx, event);
      else if (event.type === 'IncidentChannelCreated') await created(ctx, event);
      else if (event.type === 'IncidentChannelArchiveDue') await archiveDue(ctx, event);
    },
  };
};

/** The ChannelsApi over the Slack Web API client (creates are never retried blind: no idempotency key). */
export const slackChannelsApi = (
  slack: Readonly<{
    conversations: Readonly<{
      create(args: {
        name: string;
        is_private: boolean;
      }): Promise<{ channel?: { id?: string; name?: string } }>;
      invite(args: { channel: string; users: string }): Promise<unknown>;
      archive(args: { channel: string }): Promise<unknown>;
    }>;
  }>,
  once: Readonly<{
    conversations: Readonly<{
      create(args: {
        name: string;
        is_private: boolean;
      }): Promise<{ channel?: { id?: string; name?: string } }>;
    }>;
  }> = slack,
): ChannelsApi => ({
  async create(name) {
    const answer = await once.conversations.create({ name, is_private: false });
    const id = answer.channel?.id;
    if (typeof id !== 'string') throw new Error('conversations.create answered without a channel id');
    return { id, name: answer.channel?.name ?? name };
  },
  async invite(channel, user) {
    await slack.conversations.invite({ channel, users: user });
  },
  async archive(channel) {
    await slack.conversations.archive({ channel });
  },
});

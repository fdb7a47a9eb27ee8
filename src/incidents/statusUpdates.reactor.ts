import { incidentPhase } from '../../machines/incident/decider.ts';
import { uuidv5 } from '../core/ids.ts';
import type { RecordedEvent } from '../eventStore/eventStore.ts';
import type { Processor, ProcessorContext } from '../processors/runner.ts';
import { scheduleTimer } from '../processors/scheduler.ts';
import { escapeMrkdwn, mention, type SlackMessage, truncate } from '../slack/blocks/format.ts';
import { noticeLedger, type PostResult, type SlackOutbox } from '../slack/outbox.ts';
import { slackDate } from '../slack/time.ts';
import { incidentLabel } from './blocks/incidentCard.ts';
import { toIncidentView } from './blocks/incidentView.ts';
import { foldIncidentHistory, readIncidentState } from './incidentState.ts';

/**
 * `incident-status-updates` (issue 22 item 3): status updates for people who are not responders.
 *
 * - `RecordIncidentStatusUpdate` (`/incident update <n> <text>`, or its form): a formatted update
 *   goes to every channel where the incident has a card and to each channel subscribed to its
 *   service as stakeholders (`/incident subscribe <service> stakeholders`: the
 *   `incidentStakeholders-<service>` stream, the routing decider's events), once per channel
 *   (`incidentUpdate-<uuid>`). The timeline shows it (it is recorded in the incident's stream).
 * - Reminders: while the incident is open, when no update was posted for
 *   INCIDENT_UPDATE_REMINDER_MINUTES (since the trigger, the last update or the last reminder),
 *   the assignee gets a DM. Each quiet period is one durable timer
 *   (`incident-update-<uuid>-<since>`, src/processors/scheduler.ts: it survives a restart) that
 *   dispatches `RemindIncidentStatusUpdate`; when it fires the incident is read again: resolved, or
 *   an update posted since, means no DM. A reminder starts the next quiet period.
 * - A channel subscribed as stakeholders is told so once.
 */
export const INCIDENT_STATUS_UPDATES_PROCESSOR = 'incident-status-updates';
export const INCIDENT_UPDATE_STREAM_PREFIX = 'incidentUpdate-';
export const INCIDENT_STAKEHOLDERS_STREAM_PREFIX = 'incidentStakeholders-';
const ACTOR = 'system:incident-status-updates';
const SLACK_USER = /^[UW][A-Z0-9]{2,}$/;

/** `incidentStakeholders-<service id>`: the channels that get a service's status updates. */
export const incidentStakeholdersStreamId = (serviceId: string): string => {
  if (!/^[A-Za-z0-9]+$/.test(serviceId)) {
    throw new TypeError(`not an incident-service service id: ${JSON.stringify(serviceId)}`);
  }
  return INCIDENT_STAKEHOLDERS_STREAM_PREFIX + serviceId;
};

export const incidentUpdateLedger = noticeLedger({
  name: INCIDENT_STATUS_UPDATES_PROCESSOR,
  streamPrefix: INCIDENT_UPDATE_STREAM_PREFIX,
  streamSeed: 'update',
  eventSeed: 'update-posted',
  eventType: 'IncidentUpdateNoticeSent',
});

export type IncidentStatusUpdatesOptions = Readonly<{
  outbox: SlackOutbox;
  /** Minutes without an update before the assignee is reminded; 0 (or undefined): no reminders. */
  reminderMinutes?: number | undefined;
  /** The Slack user of an incident-service user (looked up by email when not known yet), or null. */
  slackUserOf?: (upstreamUserId: string) => Promise<string | null>;
}>;

const stamp = (iso: string): string => iso.replace(/[^0-9]/g, '').slice(0, 17);

/** The timer of the quiet period that started at `since`. */
export const updateReminderTimerId = (streamId: string, since: string): string =>
  `incident-update-${uuidv5(`incident-update-reminder:${streamId}`)}-${stamp(since)}`;

const orThrow = (result: PostResult): void => {
  if (result.outcome === 'refused') throw result.error;
};

const message = (text: string): SlackMessage => ({
  text,
  blocks: [{ type: 'section', text: { type: 'mrkdwn', text } }],
});

export const createIncidentStatusUpdatesReactor = (options: IncidentStatusUpdatesOptions): Processor => {
  const { outbox } = options;
  const ledger = incidentUpdateLedger;
  const minutes = options.reminderMinutes ?? 0;

  const stakeholderChannels = async (ctx: ProcessorContext, serviceId: string): Promise<string[]> => {
    const channels = new Set<string>();
    for (const e of await ctx.store.readStream(incidentStakeholdersStreamId(serviceId))) {
      const channel = (e.data as { channel?: unknown }).channel;
      if (typeof channel !== 'string') continue;
      if (e.type === 'IncidentChannelSubscribed') channels.add(channel);
      else if (e.type === 'IncidentChannelUnsubscribed') channels.delete(channel);
    }
    return [...channels];
  };

  const remindLater = async (ctx: ProcessorContext, event: RecordedEvent, since: string, round: number) => {
    if (minutes <= 0) return;
    const dueAt = new Date(new Date(since).getTime() + minutes * 60_000);
    if (Number.isNaN(dueAt.getTime())) return;
    await scheduleTimer(ctx.store, {
      timerId: updateReminderTimerId(event.streamId, since),
      dueAt,
      now: ctx.now(),
      command: {
        type: 'RemindIncidentStatusUpdate',
        data: { streamId: event.streamId, since, round },
        metadata: { actor: ACTOR, causationId: event.id },
      },
    });
  };

  const posted = async (ctx: ProcessorContext, event: RecordedEvent) => {
    const d = event.data as { by?: unknown; text?: unknown };
    const { state } = await readIncidentState(ctx.store, event.streamId);
    const view = toIncidentView(event.streamId, state);
    const at = String(event.metadata.now ?? event.recordedAt.toISOString());
    const by = typeof d.by === 'string' && SLACK_USER.test(d.by) ? mention(d.by) : 'a responder';
    const status = view.phase === 'resolved' ? 'Resolved' : view.acknowledged ? 'Acknowledged' : 'Triggered';
    const text =
      `:mega: *Status update on ${incidentLabel(view)}* (${status})\n` +
      `${escapeMrkdwn(truncate(String(d.text ?? ''), 2_500))}\n` +
      `_Posted by ${by}, ${slackDate(at, { format: 'dateTime' })}._`;
    const channels = new Set(state.context.cards.map((c) => c.channel).filter((c) => !c.startsWith('D')));
    if (view.service) for (const c of await stakeholderChannels(ctx, view.service.id)) channels.add(c);
    for (const channel of channels) {
      const result = await outbox.post(ctx, {
        ledger,
        key: `status-update:${event.id}:${channel}`,
        channel,
        message: message(text),
        since: event.recordedAt,
      });
      if (result.outcome === 'refused') {
        ctx.logger.warn({ channel, slackError: result.slackError }, 'status update refused in a channel');
      }
    }
    if (view.phase === 'open') await remindLater(ctx, event, at, 0);
  };

  const remind = async (ctx: ProcessorContext, event: RecordedEvent) => {
    const d = event.data as { since?: unknown; round?: unknown };
    const since = typeof d.since === 'string' ? d.since : null;
    if (!since) return;
    const history = await ctx.store.readStream(event.streamId);
    const upTo = history.filter((m) => m.revision < event.revision);
    const state = foldIncidentHistory(upTo);
    if (incidentPhase(state) !== 'open') return; // resolved: no reminder
    const newer = upTo.some(
      (m) =>
        m.kind === 'command' &&
        m.type === 'RecordIncidentStatusUpdate' &&
        String(m.metadata.now ?? m.recordedAt.toISOString()) > since,
    );
    if (newer) return; // an update since: its own quiet period has its own timer
    const view = toIncidentView(event.streamId, state);
    const people = new Set<string>();
    for (const a of view.assignees) {
      const slack = a.slackUserId ?? (await options.slackUserOf?.(a.id)) ?? null;
      if (slack && SLACK_USER.test(slack)) people.add(slack);
    }
    const number = view.number === null ? '' : String(view.number);
    const text =
      `:mega: No status update on ${incidentLabel(view)} for ${minutes} minute${minutes === 1 ? '' : 's'} ` +
      `(since ${slackDate(since, { format: 'dateTime' })}). People who are not responding are waiting to hear: ` +
      `\`/incident update ${number || '&lt;id&gt;'} &lt;what is happening&gt;\` posts one to its channels and stakeholders.`;
    for (const user of people) {
      orThrow(
        await outbox.post(ctx, {
          ledger,
          key: `update-reminder:${event.id}:${user}`,
          channel: user,
          message: message(text),
          since: event.recordedAt,
        }),
      );
    }
    const at = String(event.metadata.now ?? event.recordedAt.toISOString());
    await remindLater(ctx, event, at, (typeof d.round === 'number' ? d.round : 0) + 1);
  };

  const subscribed = async (ctx: ProcessorContext, event: RecordedEvent) => {
    const d = event.data as Record<string, unknown>;
    const channel = String(d.channel);
    const name = escapeMrkdwn(String(d.serviceName ?? d.serviceId));
    const text =
      `:mega: This channel now gets the status updates of every *${name}* incident (set up by ${mention(String(d.by))}). ` +
      `\`/incident unsubscribe ${name} stakeholders\` stops them.`;
    const result = await outbox.post(ctx, {
      ledger,
      key: `stakeholders-subscribed:${event.id}`,
      channel,
      message: message(text),
      since: event.recordedAt,
      fallback: {
        channel: String(d.by),
        message: message(
          `:warning: <#${channel}> is subscribed to the status updates of *${name}* incidents, but Switchboard can't post there yet: invite it with \`/invite @switchboard\` in that channel.`,
        ),
      },
    });
    orThrow(result);
  };

  return {
    id: INCIDENT_STATUS_UPDATES_PROCESSOR,
    filter: { streamPrefixes: ['incident-', INCIDENT_STAKEHOLDERS_STREAM_PREFIX] },
    async handle(event, ctx) {
      if (event.streamId.startsWith(INCIDENT_STAKEHOLDERS_STREAM_PREFIX)) {
        if (event.kind === 'event' && event.type === 'IncidentChannelSubscribed')
          await subscribed(ctx, event);
        return;
      }
      if (event.kind === 'event' && event.type === 'IncidentTriggered') {
        const at = (event.data as { at?: unknown }).at;
        await remindLater(ctx, event, typeof at === 'string' ? at : event.recordedAt.toISOString(), 0);
        return;
      }
      if (event.kind !== 'command') return;
      if (event.type === 'RecordIncidentStatusUpdate') await posted(ctx, event);
      else if (event.type === 'RemindIncidentStatusUpdate') await remind(ctx, event);
    },
  };
};

import {
  ACK_REMINDER_STREAM_PREFIX,
  type AckReminderState,
  ackAnswerTimerId,
  ackReminderDecider,
  ackReminderStreamId,
  ackReminderTimerId,
  WORK_ACTIVITY,
  type WorkActivityKind,
} from '../../machines/incident/ackReminder.ts';
import { incidentStatus } from '../../machines/incident/decider.ts';
import { foldHistory } from '../application/fold.ts';
import type { Command } from '../core/messages.ts';
import type { RecordedEvent } from '../eventStore/eventStore.ts';
import { causedMetadata, type Dispatch, dispatchOrWarn } from '../processors/dispatchCommand.ts';
import type { Processor, ProcessorContext } from '../processors/runner.ts';
import { cancelTimer, scheduleTimer } from '../processors/scheduler.ts';
import { mention, type SlackMessage } from '../slack/blocks/format.ts';
import { noticeLedger, type PostResult, type SlackOutbox } from '../slack/outbox.ts';
import { slackDate } from '../slack/time.ts';
import { incidentLabel } from './blocks/incidentCard.ts';
import { INCIDENT_ACTION } from './blocks/incidentIds.ts';
import { toIncidentView } from './blocks/incidentView.ts';
import { readIncidentState } from './incidentState.ts';
import type { SlackUserOf } from './pagerdutyMapping.ts';
import type { WorkingSettings } from './workingConfig.ts';

/**
 * `incident-ack-reminders` (issue 22 item 4): an incident left acknowledged and open reminds its
 * assignee, durably.
 *
 * - `IncidentAcknowledged`: schedules the durable timer `RemindIncidentAssignee { ack, round: 0 }`
 *   `ackReminderMs` after the acknowledgement (`ack` = that event's id), and cancels the timers of
 *   the acknowledgement before it.
 * - `IncidentAckReminderDue` (the timer fired, once): when that acknowledgement is still the
 *   incident's current one (acknowledged, not resolved, not acknowledged again since), DMs the
 *   assignees Switchboard knows in Slack (else whoever acknowledged it), through the outbox, with
 *   **Still working on it** (`incident.keep`) and **Resolve** (the card's own resolve button, the
 *   same command path); records who was asked (`RecordIncidentAckReminderSent`, the only people
 *   who may answer) and the timeline line, and schedules `CheckIncidentAckReminderAnswer` after
 *   `ackAnswerMs`.
 * - `IncidentAckReminderKept` ("Still working on it"): the timeline says so and the next round's
 *   timer starts from the answer.
 * - `IncidentAckReminderUnanswered`: the incident's channel is told in words, in the thread of its
 *   card, once.
 * - `IncidentResolved`: the pending timers of the current acknowledgement are cancelled (a timer
 *   that fires anyway is answered by the current-acknowledgement check: nothing is sent).
 *
 * Timers are events (src/processors/scheduler.ts), so a reminder pending when the app stops fires
 * after it starts again; ids are deterministic, so a redelivered event schedules nothing twice.
 */
export const INCIDENT_ACK_REMINDERS_PROCESSOR = 'incident-ack-reminders';
const ACTOR = 'system:incident-ack-reminders';
const SLACK_USER = /^[UW][A-Z0-9]{2,}$/;

export const incidentAckReminderLedger = noticeLedger({
  name: 'incident-ack-reminders',
  streamPrefix: 'incidentAckReminderNotice-',
  streamSeed: 'ack-reminder-notice',
  eventSeed: 'ack-reminder-notice-sent',
  eventType: 'IncidentNoticeSent',
});

/** The value of a reminder's "Still working on it" button: what the handler parses back. */
export const keepButtonValue = (incident: string, ack: string, round: number): string =>
  `${incident}|${ack}|${round}`;

export const parseKeepButtonValue = (
  value: unknown,
): Readonly<{ incident: string; ack: string; round: number }> | null => {
  if (typeof value !== 'string' || value.length > 200) return null;
  const m = /^(incident-[A-Za-z0-9-]{1,80})\|([0-9a-zA-Z-]{1,64})\|(0|[1-9][0-9]{0,4})$/.exec(value);
  return m ? { incident: m[1]!, ack: m[2]!, round: Number(m[3]) } : null;
};

export type AckRemindersOptions = Readonly<{
  outbox: SlackOutbox;
  dispatch: Dispatch;
  settings: WorkingSettings;
  slackUserOf?: SlackUserOf;
}>;

const orThrow = (result: PostResult): void => {
  if (result.outcome === 'refused') throw result.error;
};

export const createAckRemindersReactor = (options: AckRemindersOptions): Processor => {
  const { outbox, settings } = options;
  const slackUserOf = options.slackUserOf ?? (() => null);
  const ledger = incidentAckReminderLedger;

  const send = async (
    ctx: ProcessorContext,
    cause: RecordedEvent,
    command: Omit<Command, 'metadata'>,
    key: string,
  ) => {
    await dispatchOrWarn(
      options.dispatch,
      {
        ...command,
        metadata: causedMetadata(INCIDENT_ACK_REMINDERS_PROCESSOR, ACTOR, key, cause, ctx.now()),
      },
      ctx.logger,
      'not recorded',
    );
  };

  const activity = (
    ctx: ProcessorContext,
    cause: RecordedEvent,
    incident: string,
    kind: WorkActivityKind,
    slackUserIds: readonly string[],
    key: string,
  ) =>
    send(
      ctx,
      cause,
      {
        type: WORK_ACTIVITY,
        data: { streamId: incident, kind, slackUserIds: [...slackUserIds], channel: null, detail: null },
      },
      `activity:${key}`,
    );

  const reminderState = async (ctx: ProcessorContext, incident: string): Promise<AckReminderState> =>
    foldHistory(ackReminderDecider, await ctx.store.readStream(ackReminderStreamId(incident)));

  /** The incident, and whether acknowledgement `ack` is still its current one. */
  const current = async (ctx: ProcessorContext, incident: string, ack: string) => {
    const { state, history } = await readIncidentState(ctx.store, incident);
    const lastAck = history.findLast((m) => m.kind === 'event' && m.type === 'IncidentAcknowledged');
    const isCurrent = incidentStatus(state) === 'acknowledged' && lastAck?.id === ack;
    return { state, lastAck, isCurrent, view: toIncidentView(incident, state) };
  };

  const cancelAll = async (ctx: ProcessorContext, incident: string, ack: string, reason: string) => {
    const reminders = await reminderState(ctx, incident);
    const latest = reminders.latest[ack] ?? 0;
    const now = ctx.now();
    for (const id of [
      ackReminderTimerId(incident, ack, latest),
      ackReminderTimerId(incident, ack, latest + 1),
      ackAnswerTimerId(incident, ack, latest),
    ]) {
      await cancelTimer(ctx.store, id, { now, reason });
    }
  };

  const schedule = async (
    ctx: ProcessorContext,
    cause: RecordedEvent,
    incident: string,
    ack: string,
    round: number,
    from: string,
  ) => {
    await scheduleTimer(ctx.store, {
      timerId: ackReminderTimerId(incident, ack, round),
      dueAt: new Date(new Date(from).getTime() + settings.ackReminderMs),
      now: ctx.now(),
      command: {
        type: 'RemindIncidentAssignee',
        data: { incident, ack, round },
        metadata: { actor: ACTOR, causationId: cause.id },
      },
    });
  };

  const acknowledged = async (ctx: ProcessorContext, event: RecordedEvent) => {
    const incident = event.streamId;
    const history = await ctx.store.readStream(incident);
    const at = history.findIndex((m) => m.id === event.id);
    const before = history
      .slice(0, at < 0 ? history.length : at)
      .findLast((m) => m.kind === 'event' && m.type === 'IncidentAcknowledged');
    if (before) await cancelAll(ctx, incident, before.id, 'acknowledged again');
    await schedule(
      ctx,
      event,
      incident,
      event.id,
      0,
      String((event.data as { at?: unknown }).at ?? event.recordedAt.toISOString()),
    );
  };

  const resolved = async (ctx: ProcessorContext, event: RecordedEvent) => {
    const incident = event.streamId;
    const history = await ctx.store.readStream(incident);
    const lastAck = history.findLast(
      (m) => m.kind === 'event' && m.type === 'IncidentAcknowledged' && m.revision < event.revision,
    );
    if (lastAck) await cancelAll(ctx, incident, lastAck.id, 'resolved');
  };

  const reminderMessage = (
    incident: string,
    ack: string,
    round: number,
    label: string,
    since: string,
  ): SlackMessage => {
    const text =
      `:alarm_clock: ${label} is still open: it was acknowledged ${slackDate(since)}` +
      `${round > 0 ? ', and you said you were still working on it' : ''}. Still working on it, or can it be resolved?`;
    return {
      text,
      blocks: [
        { type: 'section', text: { type: 'mrkdwn', text } },
        {
          type: 'actions',
          block_id: `incident.ackreminder:${round}`,
          elements: [
            {
              type: 'button',
              action_id: INCIDENT_ACTION.keep,
              text: { type: 'plain_text', text: 'Still working on it', emoji: true },
              style: 'primary',
              value: keepButtonValue(incident, ack, round),
            },
            {
              type: 'button',
              action_id: INCIDENT_ACTION.resolve,
              text: { type: 'plain_text', text: 'Resolve', emoji: true },
              value: incident,
            },
          ],
        },
      ],
    };
  };

  const due = async (ctx: ProcessorContext, event: RecordedEvent) => {
    const d = event.data as { incident: string; ack: string; round: number };
    const { isCurrent, view, lastAck } = await current(ctx, d.incident, d.ack);
    if (!isCurrent || !lastAck) return;
    const assignees = view.assignees
      .map((a) => a.slackUserId ?? slackUserOf(a.id))
      .filter((u): u is string => typeof u === 'string' && SLACK_USER.test(u));
    const acker = (lastAck.data as { by?: { slackUserId?: unknown } | null }).by?.slackUserId;
    const fallback = typeof acker === 'string' && SLACK_USER.test(acker) ? [acker] : [];
    const to = [...new Set(assignees.length > 0 ? assignees : fallback)].slice(0, 20);
    const since = String((lastAck.data as { at?: unknown }).at ?? lastAck.recordedAt.toISOString());
    const label = incidentLabel(view);
    for (const user of to) {
      orThrow(
        await outbox.post(ctx, {
          ledger,
          key: `ack-reminder:${d.incident}:${d.ack}:${d.round}:${user}`,
          channel: user,
          message: reminderMessage(d.incident, d.ack, d.round, label, since),
          since: event.recordedAt,
        }),
      );
    }
    const key = `${d.incident}:${d.ack}:${d.round}`;
    await send(ctx, event, { type: 'RecordIncidentAckReminderSent', data: { ...d, to } }, `sent:${key}`);
    await activity(ctx, event, d.incident, 'ack_reminder_sent', to, `sent:${key}`);
    await scheduleTimer(ctx.store, {
      timerId: ackAnswerTimerId(d.incident, d.ack, d.round),
      dueAt: new Date(ctx.now().getTime() + settings.ackAnswerMs),
      now: ctx.now(),
      command: {
        type: 'CheckIncidentAckReminderAnswer',
        data: { ...d },
        metadata: { actor: ACTOR, causationId: event.id },
      },
    });
  };

  const kept = async (ctx: ProcessorContext, event: RecordedEvent) => {
    const d = event.data as { incident: string; ack: string; round: number; by: string; at: string };
    const key = `${d.incident}:${d.ack}:${d.round}`;
    await activity(ctx, event, d.incident, 'ack_reminder_kept', [d.by], `kept:${key}`);
    await cancelTimer(ctx.store, ackAnswerTimerId(d.incident, d.ack, d.round), {
      now: ctx.now(),
      reason: 'answered',
    });
    const { isCurrent, view } = await current(ctx, d.incident, d.ack);
    if (!isCurrent) return;
    await schedule(ctx, event, d.incident, d.ack, d.round + 1, d.at);
    const minutes = Math.round(settings.ackReminderMs / 60_000);
    const text = `:thumbsup: Noted: you are still working on ${incidentLabel(view)}. Switchboard asks again in ${minutes} minute${minutes === 1 ? '' : 's'} unless it is resolved by then.`;
    orThrow(
      await outbox.post(ctx, {
        ledger,
        key: `ack-kept:${key}`,
        channel: d.by,
        message: { text, blocks: [{ type: 'section', text: { type: 'mrkdwn', text } }] },
        since: event.recordedAt,
      }),
    );
  };

  const unanswered = async (ctx: ProcessorContext, event: RecordedEvent) => {
    const d = event.data as { incident: string; ack: string; round: number };
    const { isCurrent, view, state } = await current(ctx, d.incident, d.ack);
    if (!isCurrent) return;
    const reminders = await reminderState(ctx, d.incident);
    const to = reminders.sent[`${d.ack}:${d.round}`] ?? [];
    const key = `${d.incident}:${d.ack}:${d.round}`;
    const who = to.length > 0 ? to.map(mention).join(', ') : 'its assignee';
    const text =
      `:hourglass: ${incidentLabel(view)} has been acknowledged for a while and is still open: ` +
      `${who} ${to.length === 1 ? 'was' : 'were'} reminded by DM and has not answered. ` +
      'Can someone check on it?';
    const card = state.context.cards.find((c) => /^[CG][A-Z0-9]{2,}$/.test(c.channel));
    if (card) {
      orThrow(
        await outbox.post(ctx, {
          ledger,
          key: `ack-unanswered:${key}`,
          channel: card.channel,
          threadTs: card.ts,
          message: { text, blocks: [{ type: 'section', text: { type: 'mrkdwn', text } }] },
          since: event.recordedAt,
        }),
      );
    }
    await activity(ctx, event, d.incident, 'ack_reminder_unanswered', to, `unanswered:${key}`);
  };

  return {
    id: INCIDENT_ACK_REMINDERS_PROCESSOR,
    filter: {
      streamPrefixes: ['incident-', ACK_REMINDER_STREAM_PREFIX],
      eventTypes: [
        'IncidentAcknowledged',
        'IncidentResolved',
        'IncidentAckReminderDue',
        'IncidentAckReminderKept',
        'IncidentAckReminderUnanswered',
      ],
    },
    async handle(event, ctx) {
      if (event.kind !== 'event' || settings.ackReminderMs <= 0) return;
      if (event.streamId.startsWith('incident-')) {
        if (event.type === 'IncidentAcknowledged') await acknowledged(ctx, event);
        else if (event.type === 'IncidentResolved') await resolved(ctx, event);
        return;
      }
      if (!event.streamId.startsWith(ACK_REMINDER_STREAM_PREFIX)) return;
      if (event.type === 'IncidentAckReminderDue') await due(ctx, event);
      else if (event.type === 'IncidentAckReminderKept') await kept(ctx, event);
      else if (event.type === 'IncidentAckReminderUnanswered') await unanswered(ctx, event);
    },
  };
};

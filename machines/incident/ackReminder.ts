import { z } from 'zod';
import { eventParser } from '../shared/eventSchemas.ts';
import { type Decider, DecisionRejected } from '../shared/machineDecider.ts';
import type { Command, Event } from '../shared/messages.ts';
import { isIncidentStreamId } from './streams.ts';

/**
 * Acknowledge reminders (issue 22 item 4), the rules (pure). The effects (timers, the DM, the
 * channel's post) are in src/incidents/ackReminders.reactor.ts.
 *
 * An acknowledgement is named by the id of its `IncidentAcknowledged` event (`ack`); each reminder
 * of it has a `round` (0, then one more each time the assignee says "Still working on it").
 * `incidentackreminder-<incident id>` keeps, per `ack:round`:
 * - `IncidentAckReminderDue`: the durable timer `RemindIncidentAssignee` fired (once);
 * - `IncidentAckReminderSent { to }`: who was DMed (once): only they may answer it;
 * - `IncidentAckReminderKept { by }`: "Still working on it" (once; the next round's timer starts);
 * - `IncidentAckReminderUnanswered`: nobody answered within the further period (once; the
 *   incident's channel is told). An answer that comes after it still keeps the incident.
 * Whether the acknowledgement is still the incident's current one (not resolved, not
 * acknowledged again since) is the reactor's question, asked of the incident's own stream.
 */

export const ACK_REMINDER_STREAM_PREFIX = 'incidentackreminder-';
const INCIDENT_PREFIX = 'incident-';

export const ackReminderStreamId = (incidentStreamId: string): string => {
  if (!isIncidentStreamId(incidentStreamId))
    throw new TypeError(`not an incident stream: ${incidentStreamId}`);
  return ACK_REMINDER_STREAM_PREFIX + incidentStreamId.slice(INCIDENT_PREFIX.length);
};

export const incidentOfAckReminderStream = (streamId: string): string =>
  INCIDENT_PREFIX + streamId.slice(ACK_REMINDER_STREAM_PREFIX.length);

const rest = (incident: string) => incident.slice(INCIDENT_PREFIX.length);
/** The timer that reminds the assignee of acknowledgement `ack`, round `round`. */
export const ackReminderTimerId = (incident: string, ack: string, round: number): string =>
  `incident-ackremind-${rest(incident)}-${ack}-${round}`;
/** The timer after which an unanswered reminder is told to the incident's channel. */
export const ackAnswerTimerId = (incident: string, ack: string, round: number): string =>
  `incident-ackanswer-${rest(incident)}-${ack}-${round}`;

const streamId = z.string().refine(isIncidentStreamId, 'is not an incident stream');
const ackId = z.string().regex(/^[0-9a-zA-Z-]{1,64}$/, 'is not an acknowledgement id');
const round = z.number().int().min(0).max(10_000);
const slackUser = z.string().regex(/^[UW][A-Z0-9]{2,30}$/, 'is not a Slack user');
const at = z.string().min(1);

const base = { incident: streamId, ack: ackId, round };
export const remindIncidentAssigneeSchema = z.object(base);
export const recordAckReminderSentSchema = z.object({ ...base, to: z.array(slackUser).max(20) });
export const keepIncidentAcknowledgedSchema = z.object({ ...base, by: slackUser });
export const checkAckReminderAnswerSchema = z.object(base);

type Base = z.infer<typeof remindIncidentAssigneeSchema>;
export type RemindIncidentAssignee = Command<'RemindIncidentAssignee', Base>;
export type RecordIncidentAckReminderSent = Command<
  'RecordIncidentAckReminderSent',
  z.infer<typeof recordAckReminderSentSchema>
>;
export type KeepIncidentAcknowledged = Command<
  'KeepIncidentAcknowledged',
  z.infer<typeof keepIncidentAcknowledgedSchema>
>;
export type CheckIncidentAckReminderAnswer = Command<'CheckIncidentAckReminderAnswer', Base>;
export type AckReminderCommand =
  | RemindIncidentAssignee
  | RecordIncidentAckReminderSent
  | KeepIncidentAcknowledged
  | CheckIncidentAckReminderAnswer;

export type IncidentAckReminderDue = Event<'IncidentAckReminderDue', Base & { at: string }>;
export type IncidentAckReminderSent = Event<'IncidentAckReminderSent', Base & { to: string[]; at: string }>;
export type IncidentAckReminderKept = Event<'IncidentAckReminderKept', Base & { by: string; at: string }>;
export type IncidentAckReminderUnanswered = Event<'IncidentAckReminderUnanswered', Base & { at: string }>;
export type AckReminderEvent =
  | IncidentAckReminderDue
  | IncidentAckReminderSent
  | IncidentAckReminderKept
  | IncidentAckReminderUnanswered;

export type AckReminderState = Readonly<{
  due: readonly string[];
  sent: Readonly<Record<string, readonly string[]>>;
  kept: readonly string[];
  unanswered: readonly string[];
  /** The newest round reminded, per acknowledgement. */
  latest: Readonly<Record<string, number>>;
}>;

const keyOf = (d: Readonly<{ ack: string; round: number }>) => `${d.ack}:${d.round}`;

export const ackReminderDecider: Decider<AckReminderState, AckReminderCommand, AckReminderEvent> = {
  decide: (command, state) => {
    const d = command.data;
    const key = keyOf(d);
    const now = command.metadata.now;
    const ids = { incident: d.incident, ack: d.ack, round: d.round };
    switch (command.type) {
      case 'RemindIncidentAssignee':
        return state.due.includes(key) ? [] : [{ type: 'IncidentAckReminderDue', data: { ...ids, at: now } }];
      case 'RecordIncidentAckReminderSent':
        return state.sent[key]
          ? []
          : [{ type: 'IncidentAckReminderSent', data: { ...ids, to: [...command.data.to], at: now } }];
      case 'CheckIncidentAckReminderAnswer':
        return state.kept.includes(key) || state.unanswered.includes(key) || !state.sent[key]
          ? []
          : [{ type: 'IncidentAckReminderUnanswered', data: { ...ids, at: now } }];
      case 'KeepIncidentAcknowledged': {
        const to = state.sent[key];
        if (!to) {
          throw new DecisionRejected("That reminder isn't one Switchboard sent, so nothing was changed.", {
            reason: 'not_reminded',
          });
        }
        if (!to.includes(command.data.by)) {
          throw new DecisionRejected(
            'Only the person reminded can answer this reminder, so nothing was changed.',
            { reason: 'not_yours' },
          );
        }
        if (state.kept.includes(key)) return [];
        if ((state.latest[d.ack] ?? d.round) > d.round) {
          throw new DecisionRejected(
            'That reminder has been followed by a newer one: answer the newest, so nothing was changed.',
            { reason: 'stale_reminder' },
          );
        }
        return [{ type: 'IncidentAckReminderKept', data: { ...ids, by: command.data.by, at: now } }];
      }
    }
  },
  evolve: (state, event) => {
    const key = keyOf(event.data);
    switch (event.type) {
      case 'IncidentAckReminderDue':
        return {
          ...state,
          due: [...state.due, key],
          latest: {
            ...state.latest,
            [event.data.ack]: Math.max(state.latest[event.data.ack] ?? 0, event.data.round),
          },
        };
      case 'IncidentAckReminderSent':
        return { ...state, sent: { ...state.sent, [key]: event.data.to } };
      case 'IncidentAckReminderKept':
        return { ...state, kept: [...state.kept, key] };
      case 'IncidentAckReminderUnanswered':
        return { ...state, unanswered: [...state.unanswered, key] };
    }
  },
  initialState: () => ({ due: [], sent: {}, kept: [], unanswered: [], latest: {} }),
  parseEvent: eventParser<AckReminderEvent>('incident acknowledge reminder', {
    schemas: {
      IncidentAckReminderDue: remindIncidentAssigneeSchema.extend({ at }),
      IncidentAckReminderSent: recordAckReminderSentSchema.extend({ at }),
      IncidentAckReminderKept: keepIncidentAcknowledgedSchema.extend({ at }),
      IncidentAckReminderUnanswered: checkAckReminderAnswerSchema.extend({ at }),
    },
    upcasters: {},
  }),
  commandSchemas: {
    RemindIncidentAssignee: remindIncidentAssigneeSchema,
    RecordIncidentAckReminderSent: recordAckReminderSentSchema,
    KeepIncidentAcknowledged: keepIncidentAcknowledgedSchema,
    CheckIncidentAckReminderAnswer: checkAckReminderAnswerSchema,
  },
};

// ---------------------------------------------------------------- work activity on the timeline

/**
 * What working an incident adds to its timeline (issue 22 items 4 and 7), recorded in the
 * incident's own stream as a command (like page activity: the incident's decider never folds it;
 * the timeline and the card read it).
 */
export const WORK_ACTIVITY_KINDS = [
  'ack_reminder_sent',
  'ack_reminder_kept',
  'ack_reminder_unanswered',
  'channel_created',
  'channel_failed',
  'channel_archived',
] as const;
export type WorkActivityKind = (typeof WORK_ACTIVITY_KINDS)[number];

export const recordIncidentWorkActivitySchema = z.object({
  streamId,
  kind: z.enum(WORK_ACTIVITY_KINDS),
  /** Who it is about (reminded, answered, asked for the channel). */
  slackUserIds: z.array(slackUser).max(20),
  /** The incident channel, for `channel_*`. */
  channel: z
    .string()
    .regex(/^[CG][A-Z0-9]{2,30}$/)
    .nullable(),
  /** A short detail in words (a channel's name, why it failed). */
  detail: z.string().max(300).nullable(),
});
export type RecordIncidentWorkActivity = Command<
  'RecordIncidentWorkActivity',
  z.infer<typeof recordIncidentWorkActivitySchema>
>;
export const WORK_ACTIVITY = 'RecordIncidentWorkActivity';

/** Records work activity in an incident's stream, as a command only. Refused for a stream with no incident. */
export const workActivityDecider: Decider<number, RecordIncidentWorkActivity, Event> = {
  decide: (command, events) => {
    if (events === 0) {
      throw new DecisionRejected(`no incident in ${command.data.streamId}`, { reason: 'not_triggered' });
    }
    return [];
  },
  evolve: (events) => events + 1,
  initialState: () => 0,
  commandSchemas: { RecordIncidentWorkActivity: recordIncidentWorkActivitySchema },
};

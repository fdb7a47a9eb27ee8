import { z } from 'zod';
import { type Decider, DecisionRejected } from '../shared/machineDecider.ts';
import type { Command, Event } from '../shared/messages.ts';
import { isIncidentStreamId } from './streams.ts';

/**
 * Issue 22 items 2 and 3 (pure): what is recorded in an incident's own stream as commands, like
 * page activity (machines/incident/paging.ts): they change nothing the incident decider folds;
 * the timeline, the thread and the stakeholder updates read them.
 *
 * - `RecordIncidentStatusUpdate { streamId, by, text }`: `/incident update <n> <text>` (or its
 *   form): a status update for people who are not responders; posted to the incident's channels
 *   and its service's stakeholder channels (src/incidents/statusUpdates.reactor.ts).
 * - `RecordIncidentThreadNote { streamId, by, addedBy, content, channel, messageTs, at }`: a reply
 *   typed in a card's thread, added to the timeline with the "Add to timeline" message shortcut;
 *   `at` is the message's own time (its `ts`); the command id is derived from the message, so the
 *   same message added twice is one note.
 * - `RemindIncidentStatusUpdate { streamId, since, round }`: dispatched by a durable timer when no
 *   update was posted since `since` for the configured time; the reactor DMs the assignee.
 *
 * Each is refused for a stream with no incident in it.
 */

const streamId = z.string().refine(isIncidentStreamId, 'not an incident stream');

/** Characters a status update may have (a Slack section holds 3,000; the rest is framing). */
export const MAX_STATUS_UPDATE = 2_500;

export const recordIncidentStatusUpdateSchema = z.object({
  streamId,
  by: z.string().min(1),
  text: z.string().min(1).max(MAX_STATUS_UPDATE),
});
export const recordIncidentThreadNoteSchema = z.object({
  streamId,
  /** Who wrote the reply (a mapped Slack user). */
  by: z.string().min(1),
  /** Who used the shortcut. */
  addedBy: z.string().min(1),
  content: z.string().min(1),
  channel: z.string().min(1),
  messageTs: z.string().regex(/^\d{1,12}\.\d{1,6}$/),
  /** The message's own time (from its `ts`). */
  at: z.string().min(1),
});
export const remindIncidentStatusUpdateSchema = z.object({
  streamId,
  /** The quiet period started then (the trigger, the last update, or the last reminder). */
  since: z.string().min(1),
  round: z.number().int().min(0),
});

export type RecordIncidentStatusUpdate = Command<
  'RecordIncidentStatusUpdate',
  z.infer<typeof recordIncidentStatusUpdateSchema>
>;
export type RecordIncidentThreadNote = Command<
  'RecordIncidentThreadNote',
  z.infer<typeof recordIncidentThreadNoteSchema>
>;
export type RemindIncidentStatusUpdate = Command<
  'RemindIncidentStatusUpdate',
  z.infer<typeof remindIncidentStatusUpdateSchema>
>;
export type IncidentStoryCommand =
  | RecordIncidentStatusUpdate
  | RecordIncidentThreadNote
  | RemindIncidentStatusUpdate;

/** The time a Slack message `ts` stands for (`1767225600.000100` → its instant), ISO. */
export const slackTsTime = (ts: string): string | null => {
  const m = /^(\d{1,12})\.(\d{1,6})$/.exec(ts);
  if (!m) return null;
  const ms = Number(m[1]) * 1000 + Math.floor(Number(m[2]!.padEnd(6, '0')) / 1000);
  const d = new Date(ms);
  return Number.isNaN(d.getTime()) ? null : d.toISOString();
};

/** Records the command in the incident's stream (no events); refused when there is no incident. */
export const incidentStoryDecider: Decider<number, IncidentStoryCommand, Event> = {
  decide: (command, events) => {
    if (events === 0) {
      throw new DecisionRejected(`no incident in ${command.data.streamId}`, { reason: 'not_triggered' });
    }
    return [];
  },
  evolve: (events) => events + 1,
  initialState: () => 0,
  commandSchemas: {
    RecordIncidentStatusUpdate: recordIncidentStatusUpdateSchema,
    RecordIncidentThreadNote: recordIncidentThreadNoteSchema,
    RemindIncidentStatusUpdate: remindIncidentStatusUpdateSchema,
  },
};

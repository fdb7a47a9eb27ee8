import { z } from 'zod';
import { eventParser } from '../shared/eventSchemas.ts';
import { type Decider, DecisionRejected } from '../shared/machineDecider.ts';
import type { Command, Event } from '../shared/messages.ts';
import { isIncidentStreamId } from './streams.ts';

/**
 * An incident channel on demand (issue 22 item 7), the rules (pure). The Slack calls
 * (conversations.create / invite / archive), the card there and the notices are in
 * src/incidents/incidentChannel.reactor.ts.
 *
 * `incidentchannel-<incident id>`: once per incident. The first `CreateIncidentChannel` (the card's
 * "Create channel" button or `/incident channel <n>`) becomes `IncidentChannelRequested`; a second
 * one, while it is being made or once it exists, is refused in words that point at it (a double
 * click or a click racing the command: the stream's expected revision lets one through). A
 * creation that failed (`IncidentChannelFailed`, e.g. the app lacks `channels:manage`) may be
 * asked for again. After the incident is resolved, the durable timer `ArchiveIncidentChannel`
 * makes `IncidentChannelArchiveDue` once per resolve; the reactor archives it when the incident is
 * still resolved by that resolve.
 */

export const INCIDENT_CHANNEL_STREAM_PREFIX = 'incidentchannel-';
const INCIDENT_PREFIX = 'incident-';

export const incidentChannelStreamId = (incidentStreamId: string): string => {
  if (!isIncidentStreamId(incidentStreamId))
    throw new TypeError(`not an incident stream: ${incidentStreamId}`);
  return INCIDENT_CHANNEL_STREAM_PREFIX + incidentStreamId.slice(INCIDENT_PREFIX.length);
};
export const incidentOfChannelStream = (streamId: string): string =>
  INCIDENT_PREFIX + streamId.slice(INCIDENT_CHANNEL_STREAM_PREFIX.length);

/** The timer that archives the incident channel after the resolve `resolved` (its event id). */
export const channelArchiveTimerId = (incident: string, resolved: string): string =>
  `incident-chanarchive-${incident.slice(INCIDENT_PREFIX.length)}-${resolved}`;

const streamId = z.string().refine(isIncidentStreamId, 'is not an incident stream');
const slackUser = z.string().regex(/^[UW][A-Z0-9]{2,30}$/, 'is not a Slack user');
const channelId = z.string().regex(/^[CG][A-Z0-9]{2,30}$/, 'is not a channel id');
const at = z.string().min(1);

export const createIncidentChannelSchema = z.object({ streamId, by: slackUser });
export const recordIncidentChannelCreatedSchema = z.object({
  streamId,
  requestId: z.string().min(1),
  channel: channelId,
  name: z.string().min(1).max(80),
});
export const CHANNEL_FAILURES = ['missing_scope', 'restricted', 'refused'] as const;
export const recordIncidentChannelFailedSchema = z.object({
  streamId,
  requestId: z.string().min(1),
  reason: z.enum(CHANNEL_FAILURES),
});
export const archiveIncidentChannelSchema = z.object({ streamId, resolved: z.string().min(1).max(64) });
export const recordIncidentChannelArchivedSchema = z.object({ streamId, channel: channelId });

export type CreateIncidentChannel = Command<
  'CreateIncidentChannel',
  z.infer<typeof createIncidentChannelSchema>
>;
export type RecordIncidentChannelCreated = Command<
  'RecordIncidentChannelCreated',
  z.infer<typeof recordIncidentChannelCreatedSchema>
>;
export type RecordIncidentChannelFailed = Command<
  'RecordIncidentChannelFailed',
  z.infer<typeof recordIncidentChannelFailedSchema>
>;
export type ArchiveIncidentChannel = Command<
  'ArchiveIncidentChannel',
  z.infer<typeof archiveIncidentChannelSchema>
>;
export type RecordIncidentChannelArchived = Command<
  'RecordIncidentChannelArchived',
  z.infer<typeof recordIncidentChannelArchivedSchema>
>;
export type IncidentChannelCommand =
  | CreateIncidentChannel
  | RecordIncidentChannelCreated
  | RecordIncidentChannelFailed
  | ArchiveIncidentChannel
  | RecordIncidentChannelArchived;

type WithAt<T> = T & { at: string };
export type IncidentChannelRequested = Event<
  'IncidentChannelRequested',
  WithAt<{ streamId: string; requestId: string; by: string }>
>;
export type IncidentChannelCreated = Event<
  'IncidentChannelCreated',
  WithAt<z.infer<typeof recordIncidentChannelCreatedSchema>>
>;
export type IncidentChannelFailed = Event<
  'IncidentChannelFailed',
  WithAt<z.infer<typeof recordIncidentChannelFailedSchema>>
>;
export type IncidentChannelArchiveDue = Event<
  'IncidentChannelArchiveDue',
  WithAt<{ streamId: string; resolved: string; channel: string }>
>;
export type IncidentChannelArchived = Event<
  'IncidentChannelArchived',
  WithAt<z.infer<typeof recordIncidentChannelArchivedSchema>>
>;
export type IncidentChannelEvent =
  | IncidentChannelRequested
  | IncidentChannelCreated
  | IncidentChannelFailed
  | IncidentChannelArchiveDue
  | IncidentChannelArchived;

export type IncidentChannelState = Readonly<{
  phase: 'none' | 'requested' | 'created' | 'archived';
  requestId: string | null;
  by: string | null;
  channel: string | null;
  name: string | null;
  archiveDue: readonly string[];
}>;

export const incidentChannelDecider: Decider<
  IncidentChannelState,
  IncidentChannelCommand,
  IncidentChannelEvent
> = {
  decide: (command, state) => {
    const now = command.metadata.now;
    switch (command.type) {
      case 'CreateIncidentChannel': {
        if (state.phase === 'requested') {
          throw new DecisionRejected(
            `This incident's channel is being created (asked for by <@${state.by}>): it appears in a moment, and everyone on the incident is invited.`,
            { reason: 'channel_pending' },
          );
        }
        if (state.phase === 'created' || state.phase === 'archived') {
          throw new DecisionRejected(
            state.phase === 'created'
              ? `This incident already has its channel: <#${state.channel}>.`
              : `This incident's channel <#${state.channel}> was archived after it was resolved.`,
            { reason: 'channel_exists', channel: state.channel },
          );
        }
        return [
          {
            type: 'IncidentChannelRequested',
            data: {
              streamId: command.data.streamId,
              requestId: command.metadata.commandId,
              by: command.data.by,
              at: now,
            },
          },
        ];
      }
      case 'RecordIncidentChannelCreated':
        return state.phase === 'requested' && state.requestId === command.data.requestId
          ? [{ type: 'IncidentChannelCreated', data: { ...command.data, at: now } }]
          : [];
      case 'RecordIncidentChannelFailed':
        return state.phase === 'requested' && state.requestId === command.data.requestId
          ? [{ type: 'IncidentChannelFailed', data: { ...command.data, at: now } }]
          : [];
      case 'ArchiveIncidentChannel':
        return state.phase === 'created' && !state.archiveDue.includes(command.data.resolved)
          ? [
              {
                type: 'IncidentChannelArchiveDue',
                data: { ...command.data, channel: state.channel!, at: now },
              },
            ]
          : [];
      case 'RecordIncidentChannelArchived':
        return state.phase === 'created' && state.channel === command.data.channel
          ? [{ type: 'IncidentChannelArchived', data: { ...command.data, at: now } }]
          : [];
    }
  },
  evolve: (state, event) => {
    switch (event.type) {
      case 'IncidentChannelRequested':
        return { ...state, phase: 'requested', requestId: event.data.requestId, by: event.data.by };
      case 'IncidentChannelCreated':
        return { ...state, phase: 'created', channel: event.data.channel, name: event.data.name };
      case 'IncidentChannelFailed':
        return { ...state, phase: 'none', requestId: null };
      case 'IncidentChannelArchiveDue':
        return { ...state, archiveDue: [...state.archiveDue, event.data.resolved] };
      case 'IncidentChannelArchived':
        return { ...state, phase: 'archived' };
    }
  },
  initialState: () => ({
    phase: 'none',
    requestId: null,
    by: null,
    channel: null,
    name: null,
    archiveDue: [],
  }),
  parseEvent: eventParser<IncidentChannelEvent>('incident channel', {
    schemas: {
      IncidentChannelRequested: z.object({ streamId, requestId: z.string().min(1), by: slackUser, at }),
      IncidentChannelCreated: recordIncidentChannelCreatedSchema.extend({ at }),
      IncidentChannelFailed: recordIncidentChannelFailedSchema.extend({ at }),
      IncidentChannelArchiveDue: archiveIncidentChannelSchema.extend({ channel: channelId, at }),
      IncidentChannelArchived: recordIncidentChannelArchivedSchema.extend({ at }),
    },
    upcasters: {},
  }),
  commandSchemas: {
    CreateIncidentChannel: createIncidentChannelSchema,
    RecordIncidentChannelCreated: recordIncidentChannelCreatedSchema,
    RecordIncidentChannelFailed: recordIncidentChannelFailedSchema,
    ArchiveIncidentChannel: archiveIncidentChannelSchema,
    RecordIncidentChannelArchived: recordIncidentChannelArchivedSchema,
  },
};

/**
 * A Slack channel name for incident `number` titled `title` (Slack's rules: lowercase letters,
 * digits, hyphens and underscores, at most 80 characters, no spaces or periods):
 * `inc-42-database-on-fire`; `suffix` 2, 3… when the name is taken (`inc-42-database-on-fire-2`).
 */
export const incidentChannelName = (number: number, title: string, suffix = 1): string => {
  const tail = suffix > 1 ? `-${suffix}` : '';
  const head = `inc-${number}-`;
  const slug = title
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9_]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 80 - head.length - tail.length)
    .replace(/-+$/g, '');
  return `${head}${slug || 'incident'}${tail}`;
};

import type { IncidentCommand, RecordIncidentWebhook } from '../../machines/incident/commands.ts';
import { incidentDecider } from '../../machines/incident/decider.ts';
import { incidentStoryDecider } from '../../machines/incident/statusUpdates.ts';
import {
  incidentStreamId,
  incidentStreamIdForRequest,
  incidentStreamIdForUpstream,
  isIncidentStreamId,
} from '../../machines/incident/streams.ts';
import type { IncidentRoutingCommand } from '../../machines/incidentRouting/commands.ts';
import { incidentRoutingDecider } from '../../machines/incidentRouting/decider.ts';
import { incidentRoutingStreamId } from '../../machines/incidentRouting/streams.ts';
import type { CommandRoute } from '../application/dispatch.ts';
import { ValidationError } from '../core/errors.ts';
import type { Command } from '../core/messages.ts';
import { incidentStakeholdersStreamId } from './statusUpdates.reactor.ts';

/**
 * Where each incident command goes (the CommandBus's routes for the incident lifecycle).
 *
 * Commands about an existing incident carry the stream id in `data.streamId` (a button's value, a
 * resolved `/incident ack 42`, a reactor's own record). It is checked to be an incident stream, so
 * a tampered button value cannot reach any other stream (nor act as anyone: who acts comes from
 * the command's actor, see enrich.ts). A trigger's stream
 * is derived from its own command id (`incidentStreamIdForRequest`); a webhook's from its payload
 * (`incidentStreamIdForUpstream`), or from the incident index for note webhooks, which carry only
 * an incident reference (the enrichment step fills `data.streamId` for those).
 *
 * @example
 * const bus = createCommandBus(store, { ...commandReplyRoutes, ...incidentRoutes({ streamForUpstreamId }) });
 */

export const streamIdOf = (command: Command): string => {
  const streamId = (command.data as { streamId?: unknown }).streamId;
  if (typeof streamId !== 'string' || !isIncidentStreamId(streamId)) {
    throw new ValidationError(
      `${command.type} does not name an incident (${JSON.stringify(streamId ?? null)})`,
      {
        details: { reason: 'not_an_incident' },
      },
    );
  }
  return streamId;
};

/** The stream a webhook's incident lives in. */
export const webhookStreamId = (
  command: RecordIncidentWebhook,
  streamForUpstreamId: (upstreamId: string) => string | undefined,
): string => {
  const given = (command.data as { streamId?: unknown }).streamId;
  if (typeof given === 'string' && isIncidentStreamId(given)) return given;
  const incident = command.data.incident;
  if (incident) return incidentStreamIdForUpstream(incident);
  return streamForUpstreamId(command.data.incidentId) ?? incidentStreamId(command.data.incidentId);
};

const EXISTING_INCIDENT_COMMANDS: readonly IncidentCommand['type'][] = [
  'AcknowledgeIncident',
  'ResolveIncident',
  'EscalateIncident',
  'ReassignIncident',
  'AddIncidentNote',
  'SetIncidentPriority',
  'SetIncidentUrgency',
  'RecordIncidentUpstreamCallSucceeded',
  'RecordIncidentUpstreamCallFailed',
  'RetryIncidentUpstreamCall',
  'RecordIncidentUpstreamSnapshot',
  'RecordIncidentCardPosted',
  'RecordIncidentCardUpdated',
];

const decider = incidentDecider as unknown as CommandRoute['decider'];
const routingDecider = incidentRoutingDecider as unknown as CommandRoute['decider'];
const storyDecider = incidentStoryDecider as unknown as CommandRoute['decider'];

const routingStream = (command: Command): string => {
  const service = (command.data as IncidentRoutingCommand['data']).service as { id?: unknown } | undefined;
  if (typeof service?.id !== 'string') {
    throw new ValidationError(`${command.type} needs a resolved service`, {
      details: { reason: 'no_service' },
    });
  }
  // Issue 22 item 3: `/incident subscribe <service> stakeholders` is kept in its own stream.
  return (command.data as { kind?: unknown }).kind === 'stakeholders'
    ? incidentStakeholdersStreamId(service.id)
    : incidentRoutingStreamId(service.id);
};

export const incidentRoutes = (
  deps: Readonly<{ streamForUpstreamId: (upstreamId: string) => string | undefined }>,
): Readonly<Record<string, CommandRoute>> => ({
  TriggerIncident: { decider, streamId: (c) => incidentStreamIdForRequest(c.metadata.commandId) },
  RecordIncidentWebhook: {
    decider,
    streamId: (c) => webhookStreamId(c as unknown as RecordIncidentWebhook, deps.streamForUpstreamId),
  },
  ...Object.fromEntries(EXISTING_INCIDENT_COMMANDS.map((type) => [type, { decider, streamId: streamIdOf }])),
  SubscribeChannelToIncidents: { decider: routingDecider, streamId: routingStream },
  UnsubscribeChannelFromIncidents: { decider: routingDecider, streamId: routingStream },
  // Issue 22 items 2 and 3: recorded in the incident's stream as commands (no events).
  RecordIncidentStatusUpdate: { decider: storyDecider, streamId: streamIdOf },
  RecordIncidentThreadNote: { decider: storyDecider, streamId: streamIdOf },
  RemindIncidentStatusUpdate: { decider: storyDecider, streamId: streamIdOf },
});

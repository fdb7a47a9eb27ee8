import type {
  AcknowledgeIncident,
  AddIncidentNote,
  EscalateIncident,
  ReassignIncident,
  ResolveIncident,
  SetIncidentPriority,
  SetIncidentUrgency,
  TriggerIncident,
} from '../../machines/incident/commands.ts';
import type {
  SubscribeChannelToIncidents,
  UnsubscribeChannelFromIncidents,
} from '../../machines/incidentRouting/commands.ts';
import type { Command } from '../core/messages.ts';

/**
 * The incident commands the Slack edge records, typed from the machines' own commands
 * (machines/incident/commands.ts, machines/incidentRouting/commands.ts): the listeners build these,
 * the inbox records them as they are, and the enricher (enrich.ts) turns each into the machine's
 * command by filling in, through these typed fields, only what the edge cannot know within
 * Slack's 3 s:
 *
 * - `asUser` is `null`: who the Slack user is in the incident service (the email that goes in
 *   `From`) is looked up by the enricher, never taken from a payload; `by` is overwritten with the
 *   command's actor for the same reason.
 * - A command about an existing incident carries its `streamId` (the incident routes send it
 *   there; they check it is an incident stream).
 * - A trigger names its service as typed (`serviceQuery`, or `serviceAndTitle` when service and
 *   title are still one string) or as picked in the form (`service`, id only); the enricher
 *   resolves it to `{ id, name }` and unquotes the title.
 * - Reassignment targets are Slack users (`id: 'slack:<user>'`); the enricher maps each to their
 *   incident-service user.
 * - Channel subscriptions name the service as typed (`serviceQuery`).
 */

/** Filled in by the enricher. */
type AsUserPending = Readonly<{ asUser: null }>;
/** The incident a command is about. */
type OnIncident = Readonly<{ streamId: string }>;

/** A machine command as the edge records it: the same data, `asUser` pending, plus `Extra`. */
type FromSlack<C extends Command, Omitted extends string = never, Extra extends object = object> = Command<
  C['type'],
  Omit<C['data'], 'asUser' | Omitted> & AsUserPending & Extra
>;

export type TriggerIncidentFromSlack = FromSlack<
  TriggerIncident,
  'service',
  Readonly<{
    /** Picked in the trigger form (its name is looked up), or null when typed. */
    service: Readonly<{ id: string; name: null }> | null;
    serviceQuery: string | null;
    /** `/incident trigger Payments API card auth failing`: split by the enricher. */
    serviceAndTitle: string | null;
  }>
>;
export type AcknowledgeIncidentFromSlack = FromSlack<AcknowledgeIncident, never, OnIncident>;
export type ResolveIncidentFromSlack = FromSlack<ResolveIncident, never, OnIncident>;
export type EscalateIncidentFromSlack = FromSlack<EscalateIncident, never, OnIncident>;
export type AddIncidentNoteFromSlack = FromSlack<AddIncidentNote, never, OnIncident>;

/**
 * The priority as the person named it: the select's option value (an id) or the name they typed;
 * the enricher resolves it against the incident service's list (and refuses anything else).
 */
export type SetIncidentPriorityFromSlack = FromSlack<
  SetIncidentPriority,
  'priority',
  OnIncident & Readonly<{ priorityQuery: string }>
>;
export type SetIncidentUrgencyFromSlack = FromSlack<SetIncidentUrgency, never, OnIncident>;

/** A reassignment target picked in Slack. */
export type SlackAssignee = Readonly<{ id: `slack:${string}`; name: null; slackUserId: string }>;
export type ReassignIncidentFromSlack = FromSlack<
  ReassignIncident,
  'assignees',
  OnIncident & Readonly<{ assignees: SlackAssignee[] }>
>;

type ServiceTyped = Readonly<{ serviceQuery: string }>;
export type SubscribeChannelToIncidentsFromSlack = Command<
  SubscribeChannelToIncidents['type'],
  Omit<SubscribeChannelToIncidents['data'], 'service'> & ServiceTyped
>;
export type UnsubscribeChannelFromIncidentsFromSlack = Command<
  UnsubscribeChannelFromIncidents['type'],
  Omit<UnsubscribeChannelFromIncidents['data'], 'service'> & ServiceTyped
>;

export type IncidentSlackCommand =
  | TriggerIncidentFromSlack
  | AcknowledgeIncidentFromSlack
  | ResolveIncidentFromSlack
  | EscalateIncidentFromSlack
  | ReassignIncidentFromSlack
  | AddIncidentNoteFromSlack
  | SetIncidentPriorityFromSlack
  | SetIncidentUrgencyFromSlack
  | SubscribeChannelToIncidentsFromSlack
  | UnsubscribeChannelFromIncidentsFromSlack;

export type IncidentSlackCommandType = IncidentSlackCommand['type'];

/** The edge's command of one type. */
export type IncidentSlackCommandOf<T extends IncidentSlackCommandType> = Extract<
  IncidentSlackCommand,
  { type: T }
>;

/** A Slack user picked as a reassignment target. */
export const slackAssignee = (slackUserId: string): SlackAssignee => ({
  id: `slack:${slackUserId}`,
  name: null,
  slackUserId,
});

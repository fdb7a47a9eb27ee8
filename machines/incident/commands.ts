import type { Command } from '../shared/messages.ts';
import type {
  Actor,
  Assignee,
  IncidentUpstreamCallFailed,
  Priority,
  ServiceRef,
  UpstreamAction,
  UpstreamUser,
  Urgency,
} from './events.ts';

// Commands are requests (style.md §6: <Verb><Subject>). Their zod schemas live at the edge
// (handlers/), which is where untrusted input is parsed. Time comes from `metadata.now` and the
// request id of every user command is `metadata.commandId` (UUIDv5 of the Slack input).

/** A Slack user acting through their mapped incident-service user. */
type ByUser = Readonly<{ by: string; asUser: UpstreamUser }>;

/** Dispatch to `incidentStreamIdForRequest(metadata.commandId)` (see streams.ts). */
export type TriggerIncident = Command<
  'TriggerIncident',
  ByUser &
    Readonly<{
      service: ServiceRef;
      title: string;
      urgency: Urgency;
      details: string | null;
      channel: string | null;
    }>
>;
export type AcknowledgeIncident = Command<'AcknowledgeIncident', ByUser>;
export type ResolveIncident = Command<'ResolveIncident', ByUser & Readonly<{ resolution: string | null }>>;
/** `level` null means "the next level". */
export type EscalateIncident = Command<'EscalateIncident', ByUser & Readonly<{ level: number | null }>>;
export type ReassignIncident = Command<'ReassignIncident', ByUser & Readonly<{ assignees: Assignee[] }>>;
export type AddIncidentNote = Command<'AddIncidentNote', ByUser & Readonly<{ content: string }>>;

/** The incident as the incident service reports it (webhook `data`, or a REST response). */
export type UpstreamIncident = Readonly<{
  id: string;
  number: number;
  title: string;
  status: 'triggered' | 'acknowledged' | 'resolved';
  urgency: Urgency;
  priority: Priority | null;
  service: ServiceRef;
  assignees: Assignee[];
  htmlUrl: string | null;
  createdAt: string;
  incidentKey: string | null;
  /** Present in REST responses; V3 webhooks do not carry it. */
  escalationLevel: number | null;
  resolveReason: string | null;
}>;

/** Recorded by the upstream-calls reactor when a call made for a pending request succeeded. */
export type RecordIncidentUpstreamCallSucceeded = Command<
  'RecordIncidentUpstreamCallSucceeded',
  Readonly<{
    requestId: string;
    action: UpstreamAction;
    /** Which route carried the call; `events_api` facts get source `events_api`. */
    via: 'rest' | 'events_api';
    /** The incident from the response; required for `trigger`. */
    incident: UpstreamIncident | null;
    /** The created note's id, for `note`. */
    noteId: string | null;
  }>
>;

/** Recorded by the upstream-calls reactor when an attempt failed. `nextAttemptAt` null = final. */
export type RecordIncidentUpstreamCallFailed = Command<
  'RecordIncidentUpstreamCallFailed',
  // The fact's data without what the decider derives: `final` (from nextAttemptAt) and `at` (metadata.now).
  Readonly<Omit<IncidentUpstreamCallFailed['data'], 'final' | 'at'>>
>;

/** Dispatched by the scheduler at a failure's `nextAttemptAt`. */
export type RetryIncidentUpstreamCall = Command<
  'RetryIncidentUpstreamCall',
  Readonly<{ requestId: string; action: UpstreamAction; attempt: number }>
>;

/** Incident webhook event types the machine applies (the seed's six plus three vendor ones). */
export const INCIDENT_WEBHOOK_TYPES = [
  'incident.triggered',
  'incident.acknowledged',
  'incident.unacknowledged',
  'incident.resolved',
  'incident.reopened',
  'incident.escalated',
  'incident.reassigned',
  'incident.annotated',
  'incident.priority_updated',
] as const;
export type IncidentWebhookType = (typeof INCIDENT_WEBHOOK_TYPES)[number];

/** One V3 webhook delivery, parsed at the edge; for the stream see `incidentStreamIdForUpstream`. */
export type RecordIncidentWebhook = Command<
  'RecordIncidentWebhook',
  Readonly<{
    /** `event.id` of the payload (unique per event; X-Webhook-Id dedupes deliveries earlier). */
    webhookEventId: string;
    eventType: IncidentWebhookType;
    occurredAt: string;
    /** `event.agent`, mapped to a Slack user where we know one; null for automation. */
    agent: Actor | null;
    /** Upstream incident id (for `incident.annotated`, `data.incident.id`). */
    incidentId: string;
    /**
     * The incident snapshot (`event.data`). Required for every type except `incident.annotated`,
     * whose `data` is the note and carries only an incident reference.
     */
    incident: UpstreamIncident | null;
    /** For `incident.annotated`: the note. */
    note: Readonly<{ id: string; content: string }> | null;
  }>
>;

export type RecordIncidentCardPosted = Command<
  'RecordIncidentCardPosted',
  Readonly<{ channel: string; ts: string }>
>;
export type RecordIncidentCardUpdated = Command<
  'RecordIncidentCardUpdated',
  Readonly<{ channel: string; ts: string }>
>;

export type IncidentCommand =
  | TriggerIncident
  | AcknowledgeIncident
  | ResolveIncident
  | EscalateIncident
  | ReassignIncident
  | AddIncidentNote
  | RecordIncidentUpstreamCallSucceeded
  | RecordIncidentUpstreamCallFailed
  | RetryIncidentUpstreamCall
  | RecordIncidentWebhook
  | RecordIncidentCardPosted
  | RecordIncidentCardUpdated;

export type IncidentCommandType = IncidentCommand['type'];

/** The commands a Slack user issues (each records a request); the others come from reactors and webhooks. */
export const INCIDENT_USER_COMMANDS: ReadonlySet<string> = new Set<IncidentCommandType>([
  'TriggerIncident',
  'AcknowledgeIncident',
  'ResolveIncident',
  'EscalateIncident',
  'ReassignIncident',
  'AddIncidentNote',
]);

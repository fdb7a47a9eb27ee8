import { z } from 'zod';
import type { Command } from '../shared/messages.ts';
import { recordUpstreamCallFailedSchema, retryUpstreamCallSchema } from '../shared/upstreamRequest.ts';
import {
  actorSchema,
  assigneeSchema,
  bulkRequestSchema,
  monitoringAlertSchema,
  prioritySchema,
  serviceRefSchema,
  upstreamActionSchema,
  upstreamUserSchema,
  urgencySchema,
} from './events.ts';

// Commands are requests, named <Verb><Subject> (`AcknowledgeIncident`). Each command's `data` has
// a zod schema below, the source of its type: the command bus checks a command against it before
// the decider sees it (a command that does not match is refused as SB_VALIDATION naming the field).
// The schemas check what the decider reads; routing fields a command may carry besides
// (`data.streamId`, see src/incidents/routes.ts) are the route's business. Time comes from
// `metadata.now` and the request id of every user command is `metadata.commandId` (UUIDv5 of the
// Slack input).

/** A Slack user acting through their mapped incident-service user. */
const byUser = { by: z.string().min(1), asUser: upstreamUserSchema };

export const triggerIncidentSchema = z.object({
  ...byUser,
  service: serviceRefSchema,
  title: z.string(),
  urgency: urgencySchema,
  details: z.string().nullable(),
  channel: z.string().nullable(),
});
/** `bulk`: one of several asked for at once (see `bulkRequestSchema`). */
export const acknowledgeIncidentSchema = z.object({ ...byUser, bulk: bulkRequestSchema.optional() });
export const resolveIncidentSchema = z.object({
  ...byUser,
  resolution: z.string().nullable(),
  bulk: bulkRequestSchema.optional(),
});
/** `level` null means "the next level". */
export const escalateIncidentSchema = z.object({ ...byUser, level: z.number().int().min(1).nullable() });
export const reassignIncidentSchema = z.object({ ...byUser, assignees: z.array(assigneeSchema) });
export const addIncidentNoteSchema = z.object({ ...byUser, content: z.string() });
/** The priority as listed by the incident service (`GET /priorities`): its id and name. */
export const setIncidentPrioritySchema = z.object({ ...byUser, priority: prioritySchema });
export const setIncidentUrgencySchema = z.object({ ...byUser, urgency: urgencySchema });

/** Dispatch to `incidentStreamIdForRequest(metadata.commandId)` (see streams.ts). */
export type TriggerIncident = Command<'TriggerIncident', z.infer<typeof triggerIncidentSchema>>;
export type AcknowledgeIncident = Command<'AcknowledgeIncident', z.infer<typeof acknowledgeIncidentSchema>>;
export type ResolveIncident = Command<'ResolveIncident', z.infer<typeof resolveIncidentSchema>>;
export type EscalateIncident = Command<'EscalateIncident', z.infer<typeof escalateIncidentSchema>>;
export type ReassignIncident = Command<'ReassignIncident', z.infer<typeof reassignIncidentSchema>>;
export type AddIncidentNote = Command<'AddIncidentNote', z.infer<typeof addIncidentNoteSchema>>;
export type SetIncidentPriority = Command<'SetIncidentPriority', z.infer<typeof setIncidentPrioritySchema>>;
export type SetIncidentUrgency = Command<'SetIncidentUrgency', z.infer<typeof setIncidentUrgencySchema>>;

/** The incident as the incident service reports it (webhook `data`, or a REST response). */
export const upstreamIncidentSchema = z.object({
  id: z.string().min(1),
  number: z.number().int(),
  title: z.string(),
  status: z.enum(['triggered', 'acknowledged', 'resolved']),
  urgency: urgencySchema,
  priority: prioritySchema.nullable(),
  service: serviceRefSchema,
  assignees: z.array(assigneeSchema),
  htmlUrl: z.string().nullable(),
  createdAt: z.string().min(1),
  incidentKey: z.string().nullable(),
  /** Present in REST responses; V3 webhooks do not carry it. */
  escalationLevel: z.number().int().nullable(),
  resolveReason: z.string().nullable(),
  /**
   * REST only: `last_status_change_at`, the vendor's time of its last status change (on the
   * vendor's clock), which orders a response or a read-back against webhooks' `occurred_at`.
   */
  statusChangedAt: z.string().nullable().optional(),
  /**
   * REST only: `updated_at`, the vendor's time of its last change of any kind (its clock), which
   * orders the priority and urgency of a response or a read-back against webhooks' `occurred_at`.
   */
  updatedAt: z.string().nullable().optional(),
  /** The severity and source of the alert that opened it (monitoring incidents), when read. */
  alert: monitoringAlertSchema.nullable().optional(),
});
export type UpstreamIncident = Readonly<z.infer<typeof upstreamIncidentSchema>>;

/** Recorded by the upstream-calls reactor when a call made for a pending request succeeded. */
export const recordIncidentUpstreamCallSucceededSchema = z.object({
  requestId: z.string().min(1),
  action: upstreamActionSchema,
  /** Which route carried the call; `events_api` facts get source `events_api`. */
  via: z.enum(['rest', 'events_api']),
  /** The incident from the response; required for `trigger`. */
  incident: upstreamIncidentSchema.nullable(),
  /** The created note's id, for `note`. */
  noteId: z.string().nullable(),
});
export type RecordIncidentUpstreamCallSucceeded = Command<
  'RecordIncidentUpstreamCallSucceeded',
  z.infer<typeof recordIncidentUpstreamCallSucceededSchema>
>;

/**
 * Recorded by the upstream-calls reactor when an attempt failed. `nextAttemptAt` null = final.
 * (The fact's data without what the decider derives: `final` and `at`.)
 */
export const recordIncidentUpstreamCallFailedSchema = recordUpstreamCallFailedSchema(upstreamActionSchema);
export type RecordIncidentUpstreamCallFailed = Command<
  'RecordIncidentUpstreamCallFailed',
  z.infer<typeof recordIncidentUpstreamCallFailedSchema>
>;

/** Dispatched by the scheduler at a failure's `nextAttemptAt`. */
export const retryIncidentUpstreamCallSchema = retryUpstreamCallSchema(upstreamActionSchema);
export type RetryIncidentUpstreamCall = Command<
  'RetryIncidentUpstreamCall',
  z.infer<typeof retryIncidentUpstreamCallSchema>
>;

/**
 * Incident webhook event types the machine applies: the six status and assignment changes
 * (triggered, acknowledged, unacknowledged, resolved, escalated, reassigned) plus reopened,
 * annotated (a note) and priority_updated.
 */
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
export const recordIncidentWebhookSchema = z.object({
  /** `event.id` of the payload (unique per event; X-Webhook-Id dedupes deliveries earlier). */
  webhookEventId: z.string().min(1),
  eventType: z.enum(INCIDENT_WEBHOOK_TYPES),
  occurredAt: z.string().min(1),
  /** `event.agent`, mapped to a Slack user where we know one; null for automation. */
  agent: actorSchema.nullable(),
  /** Upstream incident id (for `incident.annotated`, `data.incident.id`). */
  incidentId: z.string().min(1),
  /**
   * The incident snapshot (`event.data`). Required for every type except `incident.annotated`,
   * whose `data` is the note and carries only an incident reference.
   */
  incident: upstreamIncidentSchema.nullable(),
  /** For `incident.annotated`: the note. */
  note: z.object({ id: z.string(), content: z.string() }).nullable(),
});
export type RecordIncidentWebhook = Command<
  'RecordIncidentWebhook',
  z.infer<typeof recordIncidentWebhookSchema>
>;

/**
 * The incident as read back from the incident service (`GET /incidents/{id}`), recorded by the
 * upstream-calls reactor after a status fact, so the card converges on the vendor's state even when
 * a webhook is late, lost or out of order. Applied only when the vendor's `statusChangedAt` is newer
 * than the vendor time of the status we hold (a lagging read changes nothing).
 */
export const recordIncidentUpstreamSnapshotSchema = z.object({
  incident: upstreamIncidentSchema,
  /** `last_status_change_by`, mapped to a Slack user where we know one; null for automation. */
  statusChangedBy: actorSchema.nullable(),
});
export type RecordIncidentUpstreamSnapshot = Command<
  'RecordIncidentUpstreamSnapshot',
  z.infer<typeof recordIncidentUpstreamSnapshotSchema>
>;

const cardSchema = z.object({ channel: z.string().min(1), ts: z.string().min(1) });
export const recordIncidentCardPostedSchema = cardSchema;
export const recordIncidentCardUpdatedSchema = cardSchema;
export type RecordIncidentCardPosted = Command<'RecordIncidentCardPosted', z.infer<typeof cardSchema>>;
export type RecordIncidentCardUpdated = Command<'RecordIncidentCardUpdated', z.infer<typeof cardSchema>>;

export type IncidentCommand =
  | TriggerIncident
  | AcknowledgeIncident
  | ResolveIncident
  | EscalateIncident
  | ReassignIncident
  | AddIncidentNote
  | SetIncidentPriority
  | SetIncidentUrgency
  | RecordIncidentUpstreamCallSucceeded
  | RecordIncidentUpstreamCallFailed
  | RetryIncidentUpstreamCall
  | RecordIncidentWebhook
  | RecordIncidentUpstreamSnapshot
  | RecordIncidentCardPosted
  | RecordIncidentCardUpdated;

export type IncidentCommandType = IncidentCommand['type'];

/** The schema of each incident command's `data`, by command type (for the decider's declaration). */
export const incidentCommandDataSchemas = {
  TriggerIncident: triggerIncidentSchema,
  AcknowledgeIncident: acknowledgeIncidentSchema,
  ResolveIncident: resolveIncidentSchema,
  EscalateIncident: escalateIncidentSchema,
  ReassignIncident: reassignIncidentSchema,
  AddIncidentNote: addIncidentNoteSchema,
  SetIncidentPriority: setIncidentPrioritySchema,
  SetIncidentUrgency: setIncidentUrgencySchema,
  RecordIncidentUpstreamCallSucceeded: recordIncidentUpstreamCallSucceededSchema,
  RecordIncidentUpstreamCallFailed: recordIncidentUpstreamCallFailedSchema,
  RetryIncidentUpstreamCall: retryIncidentUpstreamCallSchema,
  RecordIncidentWebhook: recordIncidentWebhookSchema,
  RecordIncidentUpstreamSnapshot: recordIncidentUpstreamSnapshotSchema,
  RecordIncidentCardPosted: recordIncidentCardPostedSchema,
  RecordIncidentCardUpdated: recordIncidentCardUpdatedSchema,
} as const satisfies Readonly<Record<IncidentCommandType, z.ZodType>>;

/** The commands a Slack user issues (each records a request); the others come from reactors and webhooks. */
export const INCIDENT_USER_COMMANDS: ReadonlySet<string> = new Set<IncidentCommandType>([
  'TriggerIncident',
  'AcknowledgeIncident',
  'ResolveIncident',
  'EscalateIncident',
  'ReassignIncident',
  'AddIncidentNote',
  'SetIncidentPriority',
  'SetIncidentUrgency',
]);

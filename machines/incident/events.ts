import { z } from 'zod';
import { eventParser, type StoredEvent, type Upcaster } from '../shared/eventSchemas.ts';
import type { Event } from '../shared/messages.ts';
import { serviceRefSchema } from '../shared/serviceRef.ts';
import { upstreamCallFailedSchema, upstreamCallRetriedSchema } from '../shared/upstreamRequest.ts';

// The schemas are the single source of the event shapes: the types below are inferred from them,
// and every fold checks each stored event against them (incidentDecider.parseEvent) before it
// reaches the machine. A shape that changes gets an upcaster in `incidentEventUpcasters`; stored
// events are never rewritten.

const isoTime = z.string().min(1);
const slackUserId = z.string().min(1);

export const urgencySchema = z.enum(['high', 'low']);
export type Urgency = z.infer<typeof urgencySchema>;

/** Where a fact was learnt: our own upstream call made for a Slack user, a V3 webhook, the events route. */
export const factSourceSchema = z.enum(['slack', 'webhook', 'events_api']);
export type FactSource = z.infer<typeof factSourceSchema>;

/** The upstream call a request stands for; the upstream-calls reactor switches on it. */
export const upstreamActionSchema = z.enum([
  'trigger',
  'acknowledge',
  'resolve',
  'escalate',
  'reassign',
  'note',
  'set_priority',
  'set_urgency',
]);
export type UpstreamAction = z.infer<typeof upstreamActionSchema>;

/** The incident-service user a Slack user acts as (mapped by email; `email` goes in `From`). */
export const upstreamUserSchema = z.object({
  id: z.string().min(1),
  email: z.string().min(1),
  name: z.string().nullable(),
});
export type UpstreamUser = z.infer<typeof upstreamUserSchema>;

/** Who did something, as far as we know: a Slack user, an incident-service user, or both. */
export const actorSchema = z.object({
  slackUserId: z.string().nullable(),
  upstreamUserId: z.string().nullable(),
  name: z.string().nullable(),
});
export type Actor = z.infer<typeof actorSchema>;

export const assigneeSchema = z.object({
  id: z.string().min(1),
  name: z.string().nullable(),
  slackUserId: z.string().nullable(),
});
export type Assignee = z.infer<typeof assigneeSchema>;

export { type ServiceRef, serviceRefSchema } from '../shared/serviceRef.ts';

export const prioritySchema = z.object({ id: z.string().min(1), name: z.string() });
export type Priority = z.infer<typeof prioritySchema>;

/**
 * One of several acknowledges (resolves) asked for at once (`/incident ack mine`, `/incident
 * resolve 41 42 43`): the requests of one chunk, at most the vendor's per-call limit, go upstream
 * in one `PUT /incidents` on their first attempt. `members` names each request of the chunk.
 */
export const bulkRequestSchema = z.object({
  batchId: z.string().min(1),
  members: z
    .array(z.object({ streamId: z.string().min(1), requestId: z.string().min(1) }))
    .min(1)
    .max(250),
});
export type BulkRequest = z.infer<typeof bulkRequestSchema>;

/** Common to every `…Requested` event: the request id is the command id of the Slack input. */
const requestBase = {
  requestId: z.string().min(1),
  by: slackUserId,
  asUser: upstreamUserSchema,
  requestedAt: isoTime,
};

/** Common to facts that may come from a webhook or confirm one of our requests. */
const factBase = {
  at: isoTime,
  source: factSourceSchema,
  requestId: z.string().nullable(),
  webhookEventId: z.string().nullable(),
  /**
   * When the incident service says this happened, on ITS clock: a webhook's `occurred_at`, or the
   * `last_status_change_at` of the incident a call answered or a read-back returned. Only ever
   * compared with other vendor times (never with ours). Absent on facts recorded before it existed
   * and when the vendor gave no time.
   */
  upstreamAt: isoTime.nullable().optional(),
};

/** What a monitoring alert (the events route's `payload`) says about its incident. */
export const monitoringAlertSchema = z.object({
  severity: z.string().min(1).max(50),
  source: z.string().max(1000).nullable(),
});
export type MonitoringAlert = z.infer<typeof monitoringAlertSchema>;

export const incidentEventDataSchemas = {
  IncidentTriggerRequested: z.object({
    ...requestBase,
    title: z.string().min(1),
    service: serviceRefSchema,
    urgency: urgencySchema,
    details: z.string().nullable(),
    /** Sent upstream as `incident_key` / `dedup_key`; see streams.ts. */
    incidentKey: z.string().min(1),
    /** Channel the trigger came from (the first card goes there). */
    channel: z.string().nullable(),
  }),
  /** This stream is upstream incident `upstreamId`: the fact the upstream-id index follows. */
  IncidentLinked: z.object({
    upstreamId: z.string().min(1),
    number: z.number().int(),
    incidentKey: z.string().nullable(),
    htmlUrl: z.string().nullable(),
  }),
  IncidentTriggered: z.object({
    ...factBase,
    id: z.string().min(1),
    number: z.number().int(),
    title: z.string(),
    service: serviceRefSchema,
    urgency: urgencySchema,
    priority: prioritySchema.nullable(),
    assignees: z.array(assigneeSchema),
    escalationLevel: z.number().int(),
    htmlUrl: z.string().nullable(),
    createdAt: isoTime,
    by: actorSchema.nullable(),
    /** The monitoring alert that opened it (events route); absent on events stored before it existed. */
    alert: monitoringAlertSchema.nullable().optional(),
  }),
  IncidentAcknowledgeRequested: z.object({ ...requestBase, bulk: bulkRequestSchema.optional() }),
  IncidentAcknowledged: z.object({ ...factBase, by: actorSchema.nullable() }),
  IncidentUnacknowledged: z.object({
    ...factBase,
    by: actorSchema.nullable(),
    reason: z.string().nullable(),
  }),
  IncidentResolveRequested: z.object({
    ...requestBase,
    resolution: z.string().nullable(),
    bulk: bulkRequestSchema.optional(),
  }),
  IncidentResolved: z.object({ ...factBase, by: actorSchema.nullable(), resolution: z.string().nullable() }),
  /** Upstream reopened a resolved incident (`incident.reopened`); the only way out of resolved. */
  IncidentReopened: z.object({ ...factBase, by: actorSchema.nullable() }),
  IncidentEscalateRequested: z.object({ ...requestBase, level: z.number().int().min(1) }),
  IncidentEscalated: z.object({
    ...factBase,
    by: actorSchema.nullable(),
    level: z.number().int().min(1),
    assignees: z.array(assigneeSchema),
  }),
  IncidentReassignRequested: z.object({ ...requestBase, assignees: z.array(assigneeSchema).min(1) }),
  IncidentReassigned: z.object({
    ...factBase,
    by: actorSchema.nullable(),
    assignees: z.array(assigneeSchema),
  }),
  IncidentNoteRequested: z.object({ ...requestBase, content: z.string().min(1) }),
  IncidentNoteAdded: z.object({
    ...factBase,
    by: actorSchema.nullable(),
    noteId: z.string().nullable(),
    content: z.string(),
  }),
  IncidentPriorityChanged: z.object({
    ...factBase,
    by: actorSchema.nullable(),
    priority: prioritySchema.nullable(),
    /**
     * The vendor took our change, but a later one (already recorded, newer on the vendor's clock)
     * replaced it: this fact only confirms our request and changes nothing shown.
     */
    superseded: z.boolean().optional(),
  }),
  IncidentUrgencyChanged: z.object({
    ...factBase,
    by: actorSchema.nullable(),
    urgency: urgencySchema,
    superseded: z.boolean().optional(),
  }),
  /** A Slack user asked to set the priority (one of the service's priorities, as listed). */
  IncidentPriorityChangeRequested: z.object({ ...requestBase, priority: prioritySchema }),
  /** A Slack user asked to set the urgency. */
  IncidentUrgencyChangeRequested: z.object({ ...requestBase, urgency: urgencySchema }),
  /** An attempt of a pending request failed (see machines/shared/upstreamRequest.ts). */
  IncidentUpstreamCallFailed: upstreamCallFailedSchema(upstreamActionSchema),
  /** The scheduler started attempt `attempt` of a still-pending request (the reactor calls again). */
  IncidentUpstreamCallRetried: upstreamCallRetriedSchema(upstreamActionSchema),
  /**
   * A webhook that arrived out of order (older than what we know, or after resolve): recorded for
   * the timeline, with no effect on the incident.
   */
  IncidentWebhookIgnored: z.object({
    webhookEventId: z.string().min(1),
    eventType: z.string().min(1),
    occurredAt: isoTime,
    reason: z.enum(['already_resolved', 'stale']),
    at: isoTime,
  }),
  IncidentCardPosted: z.object({ channel: z.string().min(1), ts: z.string().min(1), at: isoTime }),
  IncidentCardUpdated: z.object({ channel: z.string().min(1), ts: z.string().min(1), at: isoTime }),
} as const;

type Schemas = typeof incidentEventDataSchemas;
export type IncidentEventType = keyof Schemas;
type DataOf<T extends IncidentEventType> = z.infer<Schemas[T]>;

export type IncidentTriggerRequested = Event<'IncidentTriggerRequested', DataOf<'IncidentTriggerRequested'>>;
export type IncidentLinked = Event<'IncidentLinked', DataOf<'IncidentLinked'>>;
export type IncidentTriggered = Event<'IncidentTriggered', DataOf<'IncidentTriggered'>>;
export type IncidentAcknowledgeRequested = Event<
  'IncidentAcknowledgeRequested',
  DataOf<'IncidentAcknowledgeRequested'>
>;
export type IncidentAcknowledged = Event<'IncidentAcknowledged', DataOf<'IncidentAcknowledged'>>;
export type IncidentUnacknowledged = Event<'IncidentUnacknowledged', DataOf<'IncidentUnacknowledged'>>;
export type IncidentResolveRequested = Event<'IncidentResolveRequested', DataOf<'IncidentResolveRequested'>>;
export type IncidentResolved = Event<'IncidentResolved', DataOf<'IncidentResolved'>>;
export type IncidentReopened = Event<'IncidentReopened', DataOf<'IncidentReopened'>>;
export type IncidentEscalateRequested = Event<
  'IncidentEscalateRequested',
  DataOf<'IncidentEscalateRequested'>
>;
export type IncidentEscalated = Event<'IncidentEscalated', DataOf<'IncidentEscalated'>>;
export type IncidentReassignRequested = Event<
  'IncidentReassignRequested',
  DataOf<'IncidentReassignRequested'>
>;
export type IncidentReassigned = Event<'IncidentReassigned', DataOf<'IncidentReassigned'>>;
export type IncidentNoteRequested = Event<'IncidentNoteRequested', DataOf<'IncidentNoteRequested'>>;
export type IncidentNoteAdded = Event<'IncidentNoteAdded', DataOf<'IncidentNoteAdded'>>;
export type IncidentPriorityChanged = Event<'IncidentPriorityChanged', DataOf<'IncidentPriorityChanged'>>;
export type IncidentUrgencyChanged = Event<'IncidentUrgencyChanged', DataOf<'IncidentUrgencyChanged'>>;
export type IncidentPriorityChangeRequested = Event<
  'IncidentPriorityChangeRequested',
  DataOf<'IncidentPriorityChangeRequested'>
>;
export type IncidentUrgencyChangeRequested = Event<
  'IncidentUrgencyChangeRequested',
  DataOf<'IncidentUrgencyChangeRequested'>
>;
export type IncidentUpstreamCallFailed = Event<
  'IncidentUpstreamCallFailed',
  DataOf<'IncidentUpstreamCallFailed'>
>;
export type IncidentUpstreamCallRetried = Event<
  'IncidentUpstreamCallRetried',
  DataOf<'IncidentUpstreamCallRetried'>
>;
export type IncidentWebhookIgnored = Event<'IncidentWebhookIgnored', DataOf<'IncidentWebhookIgnored'>>;
export type IncidentCardPosted = Event<'IncidentCardPosted', DataOf<'IncidentCardPosted'>>;
export type IncidentCardUpdated = Event<'IncidentCardUpdated', DataOf<'IncidentCardUpdated'>>;

export type IncidentEvent =
  | IncidentTriggerRequested
  | IncidentLinked
  | IncidentTriggered
  | IncidentAcknowledgeRequested
  | IncidentAcknowledged
  | IncidentUnacknowledged
  | IncidentResolveRequested
  | IncidentResolved
  | IncidentReopened
  | IncidentEscalateRequested
  | IncidentEscalated
  | IncidentReassignRequested
  | IncidentReassigned
  | IncidentNoteRequested
  | IncidentNoteAdded
  | IncidentPriorityChanged
  | IncidentUrgencyChanged
  | IncidentPriorityChangeRequested
  | IncidentUrgencyChangeRequested
  | IncidentUpstreamCallFailed
  | IncidentUpstreamCallRetried
  | IncidentWebhookIgnored
  | IncidentCardPosted
  | IncidentCardUpdated;

export const isIncidentEventType = (type: string): type is IncidentEventType =>
  Object.hasOwn(incidentEventDataSchemas, type);

/**
 * Upcasters of incident events stored in an older shape, by stored type (see
 * machines/shared/eventSchemas.ts). None yet: every incident event is still stored as first shaped.
 */
export const incidentEventUpcasters: Readonly<Record<string, Upcaster>> = {};

/**
 * A stored incident event in today's shape: upcast, then parsed with its schema. Throws
 * MalformedEvent (SB_STORE_CORRUPT) naming the type and the fields that do not match.
 *
 * @example
 * const events = history.filter((m) => m.kind === 'event').map(parseIncidentEvent);
 */
export const parseIncidentEvent: (stored: StoredEvent) => IncidentEvent = eventParser<IncidentEvent>(
  'incident',
  { schemas: incidentEventDataSchemas, upcasters: incidentEventUpcasters },
);

import { z } from 'zod';
import type { IncidentWebhookType, UpstreamIncident } from '../../machines/incident/commands.ts';
import { INCIDENT_WEBHOOK_TYPES } from '../../machines/incident/commands.ts';
import type { Actor, Assignee } from '../../machines/incident/events.ts';
import type { PagerDutyIncident } from '../upstream/pagerduty.ts';

/**
 * The incident service's objects (REST responses and V3 webhook payloads) in the shapes the incident
 * decider takes. Two readers because the vendor uses two shapes for one incident: REST says
 * `incident_number` and `assignments[].assignee`, webhooks say `number` and `assignees[]`.
 *
 * `slackUserOf` maps an incident-service user id to the Slack user we know for it (the identity
 * read model), so cards mention people; null when we know none.
 */
export type SlackUserOf = (upstreamUserId: string) => string | null;

const noSlackUsers: SlackUserOf = () => null;

const resolveReasonText = (value: unknown): string | null => {
  if (typeof value === 'string' && value.trim() !== '') return value;
  return null;
};

/** A REST incident (`GET/PUT/POST /incidents`) as the decider's UpstreamIncident. */
export const upstreamIncidentFromRest = (
  pd: PagerDutyIncident,
  slackUserOf: SlackUserOf = noSlackUsers,
): UpstreamIncident => ({
  id: pd.id,
  number: pd.incident_number,
  title: pd.title,
  status: pd.status,
  urgency: pd.urgency ?? 'high',
  priority: pd.priority
    ? { id: pd.priority.id, name: pd.priority.name ?? pd.priority.summary ?? pd.priority.id }
    : null,
  service: { id: pd.service.id, name: pd.service.summary ?? null },
  assignees: pd.assignments.map(
    (a): Assignee => ({
      id: a.assignee.id,
      name: a.assignee.summary ?? null,
      slackUserId: slackUserOf(a.assignee.id),
    }),
  ),
  htmlUrl: pd.html_url ?? null,
  createdAt: pd.created_at,
  incidentKey: pd.incident_key ?? null,
  // The REST incident object (GET/PUT /incidents/{id}) carries no escalation level; only updates take one.
  escalationLevel: null,
  resolveReason: resolveReasonText((pd as { resolve_reason?: unknown }).resolve_reason),
});

const reference = z.looseObject({ id: z.string().min(1), type: z.string(), summary: z.string().nullish() });

const webhookIncident = z.looseObject({
  id: z.string().min(1),
  number: z.number().int(),
  title: z.string(),
  status: z.enum(['triggered', 'acknowledged', 'resolved']),
  urgency: z.enum(['high', 'low']).nullish(),
  incident_key: z.string().nullish(),
  created_at: z.string().min(1),
  html_url: z.string().nullish(),
  service: reference,
  assignees: z.array(reference).nullish(),
  priority: reference.nullish(),
  resolve_reason: z.unknown().optional(),
});

const webhookNote = z.looseObject({
  id: z.string().min(1),
  content: z.string(),
  incident: reference,
});

/** The V3 envelope: one event per delivery. */
export const pagerDutyWebhookEnvelopeSchema = z.looseObject({
  event: z.looseObject({
    id: z.string().min(1),
    event_type: z.string().min(1),
    resource_type: z.string().min(1),
    occurred_at: z.string().min(1),
    agent: z.unknown().optional(),
    client: z.unknown().optional(),
    data: z.unknown(),
  }),
});
export type PagerDutyWebhookEnvelope = z.infer<typeof pagerDutyWebhookEnvelopeSchema>;

/** A webhook's `data` for incident events as the decider's UpstreamIncident; throws a ZodError when malformed. */
export const upstreamIncidentFromWebhook = (
  data: unknown,
  slackUserOf: SlackUserOf = noSlackUsers,
): UpstreamIncident => {
  const d = webhookIncident.parse(data);
  return {
    id: d.id,
    number: d.number,
    title: d.title,
    status: d.status,
    urgency: d.urgency ?? 'high',
    priority: d.priority ? { id: d.priority.id, name: d.priority.summary ?? d.priority.id } : null,
    service: { id: d.service.id, name: d.service.summary ?? null },
    assignees: (d.assignees ?? []).map(
      (a): Assignee => ({ id: a.id, name: a.summary ?? null, slackUserId: slackUserOf(a.id) }),
    ),
    htmlUrl: d.html_url ?? null,
    createdAt: d.created_at,
    incidentKey: d.incident_key ?? null,
    escalationLevel: null,
    resolveReason: resolveReasonText(d.resolve_reason),
  };
};

/** `incident.annotated` data: the note and the incident it belongs to. */
export const noteFromWebhook = (
  data: unknown,
): { incidentId: string; note: { id: string; content: string } } => {
  const d = webhookNote.parse(data);
  return { incidentId: d.incident.id, note: { id: d.id, content: d.content } };
};

/**
 * `event.agent` as an Actor: a user (with the Slack user we know for them), a service (the events
 * route or an integration: no incident-service user), or null for the system (timeouts, rules).
 */
export const actorFromWebhookAgent = (
  agent: unknown,
  slackUserOf: SlackUserOf = noSlackUsers,
): Actor | null => {
  const parsed = reference.safeParse(agent);
  if (!parsed.success) return null;
  const a = parsed.data;
  if (a.type === 'user_reference' || a.type === 'user') {
    return { slackUserId: slackUserOf(a.id), upstreamUserId: a.id, name: a.summary ?? null };
  }
  return { slackUserId: null, upstreamUserId: null, name: a.summary ?? a.id };
};

/**
 * The decider's webhook type for a vendor event type, or null for types it does not apply
 * (recorded in the inbox only). `incident.delegated` (reassigned to an escalation policy) is a
 * reassignment as far as the card is concerned.
 */
export const incidentWebhookTypeOf = (eventType: string): IncidentWebhookType | null => {
  if (eventType === 'incident.delegated') return 'incident.reassigned';
  return (INCIDENT_WEBHOOK_TYPES as readonly string[]).includes(eventType)
    ? (eventType as IncidentWebhookType)
    : null;
};

import { z } from 'zod';

/**
 * The incident service's answers, zod-checked on the fields Switchboard uses and passed through
 * otherwise (`looseObject`), so webhook payloads and API results look alike.
 */

export const reference = z.looseObject({
  id: z.string(),
  type: z.string(),
  summary: z.string().nullish(),
  self: z.string().nullish(),
  html_url: z.string().nullish(),
});
export type PagerDutyReference = z.infer<typeof reference>;

export const incidentStatus = z.enum(['triggered', 'acknowledged', 'resolved']);
export type PagerDutyIncidentStatus = z.infer<typeof incidentStatus>;
export const urgency = z.enum(['high', 'low']);
export type PagerDutyUrgency = z.infer<typeof urgency>;

export const pagerDutyIncidentSchema = z.looseObject({
  id: z.string(),
  type: z.string(),
  incident_number: z.number().int(),
  title: z.string(),
  status: incidentStatus,
  urgency: urgency.optional(),
  incident_key: z.string().nullish(),
  created_at: z.string(),
  updated_at: z.string().nullish(),
  last_status_change_at: z.string().nullish(),
  resolved_at: z.string().nullish(),
  html_url: z.string().nullish(),
  service: reference,
  escalation_policy: reference.nullish(),
  priority: reference.extend({ name: z.string().optional() }).nullish(),
  teams: z.array(reference).default([]),
  assignments: z.array(z.looseObject({ at: z.string(), assignee: reference })).default([]),
  acknowledgements: z.array(z.looseObject({ at: z.string(), acknowledger: reference })).default([]),
  last_status_change_by: reference.nullish(),
});
export type PagerDutyIncident = z.infer<typeof pagerDutyIncidentSchema>;

export const noteSchema = z.looseObject({
  id: z.string(),
  content: z.string(),
  created_at: z.string(),
  user: reference.nullish(),
  channel: z.looseObject({ summary: z.string() }).nullish(),
});
export type PagerDutyNote = z.infer<typeof noteSchema>;

export const prioritySchema = z.looseObject({
  id: z.string(),
  name: z.string(),
  description: z.string().nullish(),
});
export type PagerDutyPriority = z.infer<typeof prioritySchema>;

export const alertSchema = z.looseObject({
  id: z.string(),
  type: z.string(),
  status: z.enum(['triggered', 'resolved']),
  summary: z.string().nullish(),
  alert_key: z.string().nullish(),
  created_at: z.string(),
  severity: z.string().nullish(),
  service: reference.nullish(),
  incident: reference.nullish(),
  body: z.looseObject({ details: z.unknown().optional() }).nullish(),
});
export type PagerDutyAlert = z.infer<typeof alertSchema>;

export const serviceSchema = z.looseObject({
  id: z.string(),
  type: z.string(),
  name: z.string(),
  summary: z.string().nullish(),
  status: z.string().nullish(),
  description: z.string().nullish(),
  html_url: z.string().nullish(),
  escalation_policy: reference,
  teams: z.array(reference).default([]),
});
export type PagerDutyService = z.infer<typeof serviceSchema>;

export const userSchema = z.looseObject({
  id: z.string(),
  type: z.string(),
  name: z.string(),
  email: z.string(),
  time_zone: z.string().nullish(),
  role: z.string().nullish(),
  html_url: z.string().nullish(),
});
export type PagerDutyUser = z.infer<typeof userSchema>;

export const oncallSchema = z.looseObject({
  user: reference.extend({ email: z.string().optional(), name: z.string().optional() }),
  schedule: reference.nullish(),
  escalation_policy: reference,
  escalation_level: z.number().int(),
  start: z.string().nullish(),
  end: z.string().nullish(),
});
export type PagerDutyOnCall = z.infer<typeof oncallSchema>;

export const renderedEntry = z.looseObject({ start: z.string(), end: z.string(), user: reference.nullish() });
export type PagerDutyScheduleEntry = z.infer<typeof renderedEntry>;

export const scheduleSchema = z.looseObject({
  id: z.string(),
  type: z.string(),
  name: z.string().nullish(),
  summary: z.string().nullish(),
  time_zone: z.string(),
  html_url: z.string().nullish(),
  final_schedule: z.looseObject({ rendered_schedule_entries: z.array(renderedEntry).default([]) }).nullish(),
  /** The rotation layers, each with its users in turn order. */
  schedule_layers: z
    .array(z.looseObject({ id: z.string().nullish(), users: z.array(z.looseObject({ user: reference })) }))
    .nullish(),
  users: z.array(reference).default([]),
  /** Every escalation policy that uses the schedule (read-only). */
  escalation_policies: z.array(reference).nullish(),
});
export type PagerDutySchedule = z.infer<typeof scheduleSchema>;

export const escalationPolicySchema = z.looseObject({
  id: z.string(),
  type: z.string(),
  name: z.string(),
  num_loops: z.number().int().nullish(),
  escalation_rules: z.array(
    z.looseObject({
      id: z.string().nullish(),
      escalation_delay_in_minutes: z.number().int(),
      targets: z.array(reference),
    }),
  ),
  services: z.array(reference).default([]),
  teams: z.array(reference).default([]),
});
export type PagerDutyEscalationPolicy = z.infer<typeof escalationPolicySchema>;

export const overrideResult = z.looseObject({
  status: z.number().int(),
  override: z
    .looseObject({ id: z.string().nullish(), start: z.string(), end: z.string(), user: reference })
    .nullish(),
  errors: z.array(z.string()).nullish(),
});
export type PagerDutyOverrideResult = z.infer<typeof overrideResult>;

export const pageFields = {
  limit: z.number().int(),
  offset: z.number().int(),
  more: z.boolean(),
  total: z.number().int().nullish(),
};

export type Page<T> = {
  readonly items: readonly T[];
  readonly limit: number;
  readonly offset: number;
  readonly more: boolean;
  /** Only when the request asked for `total: true`. */
  readonly total: number | null;
};

export const eventsAccepted = z.looseObject({
  status: z.string(),
  message: z.string(),
  dedup_key: z.string(),
});
export const changeAccepted = z.looseObject({ status: z.string(), message: z.string() });

/** A V3 webhook subscription (https://developer.pagerduty.com/api-reference/ — Webhooks). */
export const webhookSubscriptionSchema = z.looseObject({
  id: z.string(),
  active: z.boolean().optional(),
  description: z.string().nullable().optional(),
  events: z.array(z.string()),
  filter: z.looseObject({ type: z.string(), id: z.string().nullable().optional() }),
  delivery_method: z.looseObject({
    type: z.string(),
    url: z.string(),
    /** Returned only by the create call; null when listed. */
    secret: z.string().nullable().optional(),
    temporarily_disabled: z.boolean().optional(),
  }),
});
export type PagerDutyWebhookSubscription = z.infer<typeof webhookSubscriptionSchema>;

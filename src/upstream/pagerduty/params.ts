import type { PagerDutyIncidentStatus, PagerDutyUrgency } from './schemas.ts';

/** What the incident service's calls take: camelCase parameters, mapped to the vendor's fields by each call. */

export type PageParams = {
  /** 1..100 (default 25 upstream). */
  readonly limit?: number;
  readonly offset?: number;
  /** Ask for the `total` count (slower upstream). */
  readonly total?: boolean;
};

export type ListIncidentsParams = PageParams & {
  readonly statuses?: readonly PagerDutyIncidentStatus[];
  readonly serviceIds?: readonly string[];
  readonly teamIds?: readonly string[];
  /** Incidents currently assigned to these users (never resolved ones). */
  readonly userIds?: readonly string[];
  readonly urgencies?: readonly PagerDutyUrgency[];
  /** ISO 8601; upstream default window is the last month, at most 6 months. */
  readonly since?: string;
  readonly until?: string;
  /** `all` ignores since/until. */
  readonly dateRange?: 'all';
  readonly incidentKey?: string;
  /** e.g. `['created_at:desc']`; at most two fields. */
  readonly sortBy?: readonly string[];
  readonly include?: readonly string[];
};

export type CreateIncidentParams = {
  readonly from: string;
  readonly serviceId: string;
  readonly title: string;
  readonly urgency?: PagerDutyUrgency;
  readonly priorityId?: string;
  /** Free text shown as the incident body. */
  readonly details?: string;
  /** Idempotency: a second create with the same key while the first is open is refused. */
  readonly incidentKey?: string;
  /** Direct assignment (only one assignee is honoured upstream). Excludes `escalationPolicyId`. */
  readonly assigneeIds?: readonly string[];
  readonly escalationPolicyId?: string;
  readonly conferenceBridge?: { readonly conferenceNumber?: string; readonly conferenceUrl?: string };
};

export type UpdateIncidentParams = {
  readonly from: string;
  /** Acknowledging or triggering a *resolved* incident reopens it upstream. */
  readonly status?: 'acknowledged' | 'resolved' | 'triggered';
  /** Goes into the resolve log entry; only with status resolved. */
  readonly resolution?: string;
  readonly title?: string;
  readonly urgency?: PagerDutyUrgency;
  /** A priority id, or a priority name (the highest priority with that name is used upstream). */
  readonly priority?: { readonly id: string } | string;
  /** Escalate to this level (1-based) of the incident's escalation policy. */
  readonly escalationLevel?: number;
  /** Reassign to these users. Excludes `escalationPolicyId`. */
  readonly assigneeIds?: readonly string[];
  /** Reassign (delegate) to this escalation policy. */
  readonly escalationPolicyId?: string;
};

export type BulkStatusParams = {
  readonly from: string;
  readonly incidentIds: readonly string[];
  readonly status: 'acknowledged' | 'resolved';
  readonly resolution?: string;
};

export type ListOnCallsParams = PageParams & {
  readonly userIds?: readonly string[];
  readonly scheduleIds?: readonly string[];
  readonly escalationPolicyIds?: readonly string[];
  /** ISO 8601; both default to now upstream. */
  readonly since?: string;
  readonly until?: string;
  /** One entry per (policy, level, user): the next shift. */
  readonly earliest?: boolean;
  readonly include?: readonly ('users' | 'schedules' | 'escalation_policies')[];
  readonly timeZone?: string;
};

export type OverrideInput = {
  readonly start: string;
  readonly end: string;
  readonly userId: string;
  readonly timeZone?: string;
};

export type EventsLink = { readonly href: string; readonly text?: string };
export type EventsImage = { readonly src: string; readonly href?: string; readonly alt?: string };

export type TriggerEventPayload = {
  readonly summary: string;
  readonly source: string;
  readonly severity: 'critical' | 'error' | 'warning' | 'info';
  readonly timestamp?: string;
  readonly component?: string;
  readonly group?: string;
  readonly class?: string;
  readonly customDetails?: Readonly<Record<string, unknown>>;
};

/** Events API v2. `dedupKey` correlates trigger/acknowledge/resolve of one alert. */
export type EnqueueEventParams =
  | {
      readonly routingKey: string;
      readonly eventAction: 'trigger';
      /** Generated upstream when omitted (and returned). */
      readonly dedupKey?: string;
      readonly payload: TriggerEventPayload;
      readonly client?: string;
      readonly clientUrl?: string;
      readonly links?: readonly EventsLink[];
      readonly images?: readonly EventsImage[];
    }
  | {
      readonly routingKey: string;
      readonly eventAction: 'acknowledge' | 'resolve';
      readonly dedupKey: string;
    };

export type ChangeEventParams = {
  readonly routingKey: string;
  readonly summary: string;
  readonly source?: string;
  readonly timestamp?: string;
  readonly customDetails?: Readonly<Record<string, unknown>>;
  readonly links?: readonly EventsLink[];
  readonly images?: readonly EventsImage[];
};

export type WebhookFilterType = 'account_reference' | 'service_reference' | 'team_reference';

export type CreateWebhookSubscriptionParams = Readonly<{
  url: string;
  events: readonly string[];
  filter: Readonly<{ type: WebhookFilterType; id?: string }>;
  description?: string;
}>;

import type { Dispatcher } from 'undici';
import { z } from 'zod';
import type { Clock } from '../core/clock.ts';
import { ChatOpsError, ValidationError } from '../core/errors.ts';
import {
  createUpstreamHttp,
  type ErrorClassifier,
  type UpstreamHttp,
  type UpstreamTimeouts,
  type VendorErrorInfo,
} from './http.ts';

/**
 * Typed client for the incident-management service (PagerDuty REST API v2 + Events API v2).
 * Parameters are camelCase; results are the vendor's own snake_case objects, zod-checked on the
 * fields we use and passed through otherwise (so webhook payloads and API results look alike).
 *
 * Every write takes `from`: the acting user's email, sent as the `From` header. Errors are coded
 * (see `http.ts`); PagerDuty specifics land in `details.reason`:
 * `requester_not_found` (SB_UNMAPPED_USER: the From email is no user), `already_resolved`,
 * `duplicate_incident_key`, `too_many_incidents`, `account_expired` (SB_UPSTREAM_REJECTED).
 *
 * @example
 * const pd = createPagerDutyClient({ apiUrl, eventsUrl, token, dispatcher });
 * const incident = await pd.createIncident({ from: 'ana@example.org', serviceId: 'PSVC001', title: 'db down' });
 * await pd.updateIncident(incident.id, { from: 'ben@example.org', status: 'acknowledged' });
 */

// ---------------------------------------------------------------- response shapes (fields we use)

const reference = z.looseObject({
  id: z.string(),
  type: z.string(),
  summary: z.string().nullish(),
  self: z.string().nullish(),
  html_url: z.string().nullish(),
});
export type PagerDutyReference = z.infer<typeof reference>;

const incidentStatus = z.enum(['triggered', 'acknowledged', 'resolved']);
export type PagerDutyIncidentStatus = z.infer<typeof incidentStatus>;
const urgency = z.enum(['high', 'low']);
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

const noteSchema = z.looseObject({
  id: z.string(),
  content: z.string(),
  created_at: z.string(),
  user: reference.nullish(),
  channel: z.looseObject({ summary: z.string() }).nullish(),
});
export type PagerDutyNote = z.infer<typeof noteSchema>;

const alertSchema = z.looseObject({
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

const serviceSchema = z.looseObject({
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

const userSchema = z.looseObject({
  id: z.string(),
  type: z.string(),
  name: z.string(),
  email: z.string(),
  time_zone: z.string().nullish(),
  role: z.string().nullish(),
  html_url: z.string().nullish(),
});
export type PagerDutyUser = z.infer<typeof userSchema>;

const oncallSchema = z.looseObject({
  user: reference.extend({ email: z.string().optional(), name: z.string().optional() }),
  schedule: reference.nullish(),
  escalation_policy: reference,
  escalation_level: z.number().int(),
  start: z.string().nullish(),
  end: z.string().nullish(),
});
export type PagerDutyOnCall = z.infer<typeof oncallSchema>;

const renderedEntry = z.looseObject({ start: z.string(), end: z.string(), user: reference.nullish() });
export type PagerDutyScheduleEntry = z.infer<typeof renderedEntry>;

const scheduleSchema = z.looseObject({
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

const escalationPolicySchema = z.looseObject({
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

const overrideResult = z.looseObject({
  status: z.number().int(),
  override: z
    .looseObject({ id: z.string().nullish(), start: z.string(), end: z.string(), user: reference })
    .nullish(),
  errors: z.array(z.string()).nullish(),
});
export type PagerDutyOverrideResult = z.infer<typeof overrideResult>;

const pageFields = {
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

const eventsAccepted = z.looseObject({ status: z.string(), message: z.string(), dedup_key: z.string() });
const changeAccepted = z.looseObject({ status: z.string(), message: z.string() });

// ---------------------------------------------------------------- request parameters

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

export type PagerDutyClientOptions = {
  /** REST base, e.g. `https://api.pagerduty.com`. */
  readonly apiUrl: string;
  /** Events base, e.g. `https://events.pagerduty.com` (paths `/v2/enqueue`, `/v2/change/enqueue`). */
  readonly eventsUrl: string;
  /** Account or user API key; sent as `Token token=…`, never logged or put in errors. */
  readonly token: string;
  readonly dispatcher?: Dispatcher;
  readonly clock?: Clock;
  readonly timeouts?: UpstreamTimeouts;
  /** REST requests a minute this client may send (default 960, the service's limit per key). */
  readonly requestsPerMinute?: number;
  /** A budget shared with other clients of the same key (default: one of its own). */
  readonly budget?: RequestBudget;
};

// ---------------------------------------------------------------- limits

/**
 * Classic pagination limits: `limit` at most 100, and `limit + offset` at most 10,000 (beyond that
 * the API answers 400). PagerDuty's pagination docs:
 * https://github.com/PagerDuty/developer-docs/blob/94224391aa3eac8fa73ea6a6af542dee0613d3e8/docs/REST-API/09-Pagination.md
 */
export const PAGERDUTY_MAX_PAGE_LIMIT = 100;
export const PAGERDUTY_MAX_OFFSET_PLUS_LIMIT = 10_000;
/** `PUT /incidents` refuses more than this many with 413. */
export const PAGERDUTY_BULK_UPDATE_MAX = 250;
export const PAGERDUTY_ROUTING_KEY_LENGTH = 32;
export const PAGERDUTY_DEDUP_KEY_MAX = 255;

const ACCEPT = 'application/vnd.pagerduty+json;version=2';

// ---------------------------------------------------------------- errors

const asStringArray = (v: unknown): string[] | undefined => {
  if (Array.isArray(v)) return v.filter((x): x is string => typeof x === 'string');
  // Newer endpoints return `errors` as an object of field → messages.
  if (v && typeof v === 'object') {
    return Object.entries(v).flatMap(([k, msgs]) =>
      Array.isArray(msgs) ? msgs.map((m) => `${k}: ${String(m)}`) : [`${k}: ${String(msgs)}`],
    );
  }
  return undefined;
};

/** `{ error: { code, message, errors } }` (REST) or `{ status, message, errors }` (Events API). */
export const parsePagerDutyError = (json: unknown): VendorErrorInfo | undefined => {
  if (!json || typeof json !== 'object') return undefined;
  const body = json as { error?: unknown; message?: unknown; errors?: unknown; status?: unknown };
  if (body.error && typeof body.error === 'object') {
    const e = body.error as { code?: unknown; message?: unknown; errors?: unknown };
    return {
      code: typeof e.code === 'number' || typeof e.code === 'string' ? e.code : undefined,
      message: typeof e.message === 'string' ? e.message : undefined,
      errors: asStringArray(e.errors),
    };
  }
  if (typeof body.message === 'string') {
    return { message: body.message, errors: asStringArray(body.errors) };
  }
  return undefined;
};

const mentions = (info: VendorErrorInfo | undefined, re: RegExp) =>
  [info?.message, ...(info?.errors ?? [])].some((s) => typeof s === 'string' && re.test(s));

/**
 * PagerDuty's numeric error codes (`error.code` in the body) refined beyond the status-based
 * mapping. The list is PagerDuty's:
 * https://github.com/PagerDuty/developer-docs/blob/94224391aa3eac8fa73ea6a6af542dee0613d3e8/docs/REST-API/14-Errors.md
 */
export const classifyPagerDutyError: ErrorClassifier = (status, info) => {
  const code = info?.code === undefined ? undefined : Number(info.code);
  if (code === 1008 || code === 2013 || mentions(info, /requester user not found/i)) {
    return { code: 'SB_UNMAPPED_USER', reason: 'requester_not_found' };
  }
  if (code === 1001 || mentions(info, /already resolved/i)) {
    return { code: 'SB_UPSTREAM_REJECTED', reason: 'already_resolved' };
  }
  if (mentions(info, /matching dedup key already exists|incident key.*already/i)) {
    return { code: 'SB_UPSTREAM_REJECTED', reason: 'duplicate_incident_key' };
  }
  if (status === 413) return { code: 'SB_UPSTREAM_REJECTED', reason: 'too_many_incidents' };
  if (code === 2012 || status === 402) return { code: 'SB_UPSTREAM_REJECTED', reason: 'account_expired' };
  if (code === 2002) return { code: 'SB_UPSTREAM_REJECTED', reason: 'arguments_caused_error' };
  if (code === 2016) return { code: 'SB_VALIDATION', reason: 'from_header_missing' };
  if (code === 2001) return { code: 'SB_VALIDATION', reason: 'invalid_input' };
  if (code === 2100) return { code: 'SB_NOT_FOUND', reason: 'not_found' };
  if (code === 2010) return { reason: 'access_denied' };
  return undefined;
};

// ---------------------------------------------------------------- client-side checks

const checkPage = (p: PageParams, operation: string) => {
  const limit = p.limit;
  const offset = p.offset ?? 0;
  if (limit !== undefined && (!Number.isInteger(limit) || limit < 1 || limit > PAGERDUTY_MAX_PAGE_LIMIT)) {
    throw new ValidationError(
      `${operation}: limit must be an integer from 1 to ${PAGERDUTY_MAX_PAGE_LIMIT}`,
      {
        details: { limit },
      },
    );
  }
  if (!Number.isInteger(offset) || offset < 0) {
    throw new ValidationError(`${operation}: offset must be a non-negative integer`, { details: { offset } });
  }
  if (offset + (limit ?? 25) > PAGERDUTY_MAX_OFFSET_PLUS_LIMIT) {
    throw new ValidationError(
      `${operation}: limit + offset may not exceed ${PAGERDUTY_MAX_OFFSET_PLUS_LIMIT} (PagerDuty classic pagination); narrow the filters or the date range`,
      { details: { limit: limit ?? 25, offset } },
    );
  }
};

const checkFrom = (from: string, operation: string) => {
  if (!/^[^\s@]+@[^\s@]+$/.test(from)) {
    throw new ValidationError(`${operation}: From must be the acting user's email address`);
  }
};

const userRef = (id: string) => ({ assignee: { id, type: 'user_reference' } });

const pageQuery = (p: PageParams) => ({
  limit: p.limit,
  offset: p.offset,
  total: p.total === undefined ? undefined : String(p.total),
});

// ---------------------------------------------------------------- the client

/** Walks `more` pages from `start.offset`, stopping at `maxItems` or the 10,000 window. */
export async function* paginate<T>(
  fetchPage: (page: { limit: number; offset: number }) => Promise<Page<T>>,
  start: { limit?: number; offset?: number; maxItems?: number } = {},
): AsyncGenerator<T, void, undefined> {
  const limit = start.limit ?? PAGERDUTY_MAX_PAGE_LIMIT;
  let offset = start.offset ?? 0;
  let yielded = 0;
  const max = start.maxItems ?? Number.POSITIVE_INFINITY;
  for (;;) {
    const room = PAGERDUTY_MAX_OFFSET_PLUS_LIMIT - offset;
    if (room <= 0) return;
    const page = await fetchPage({ limit: Math.min(limit, room), offset });
    for (const item of page.items) {
      if (yielded >= max) return;
      yield item;
      yielded += 1;
    }
    if (!page.more || page.items.length === 0 || yielded >= max) return;
    offset += page.items.length;
  }
}

// ---------------------------------------------------------------- webhook subscriptions

export type WebhookFilterType = 'account_reference' | 'service_reference' | 'team_reference';

/** A V3 webhook subscription (https://developer.pagerduty.com/api-reference/ — Webhooks). */
const webhookSubscriptionSchema = z.looseObject({
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

export type CreateWebhookSubscriptionParams = Readonly<{
  url: string;
  events: readonly string[];
  filter: Readonly<{ type: WebhookFilterType; id?: string }>;
  description?: string;
}>;

// ---------------------------------------------------------------- request budget

/**
 * The REST API's rate limit: 960 requests a minute per API key
 * (https://developer.pagerduty.com/docs/rest-api-rate-limits). Every caller of one client (identity
 * lookups, the service directory, `/oncall`, the reactors) draws on the same budget.
 */
export const PAGERDUTY_REQUESTS_PER_MINUTE = 960;
const BUDGET_WINDOW_MS = 60_000;

export type RequestBudget = Readonly<{
  /**
   * Takes one request from the budget, or throws SB_UPSTREAM_RATE_LIMITED (nothing sent) with
   * `details.retryAfterMs` and `details.retryAt`: when the budget frees. The durable upstream-call
   * mechanism schedules its retry then; a user's query says when to try again.
   */
  take(operation: string): void;
  /** The service answered 429 anyway (another client on the key): nothing more until `untilMs`. */
  exhaustUntil(untilMs: number): void;
}>;

/**
 * A sliding one-minute window of the requests sent. `now` is the clock to count on (pass the app's;
 * tests pass a manual one).
 *
 * @example
 * const budget = createRequestBudget({ perMinute: PAGERDUTY_REQUESTS_PER_MINUTE, now: () => clock.now().getTime() });
 */
export const createRequestBudget = (
  options: Readonly<{ perMinute: number; now: () => number }>,
): RequestBudget => {
  const perMinute = Math.max(1, Math.floor(options.perMinute));
  const sent: number[] = [];
  let blockedUntil = 0;
  return {
    take(operation) {
      const now = options.now();
      while (sent.length > 0 && sent[0]! <= now - BUDGET_WINDOW_MS) sent.shift();
      const freeAt = Math.max(
        blockedUntil,
        sent.length >= perMinute ? sent[sent.length - perMinute]! + BUDGET_WINDOW_MS : 0,
      );
      if (freeAt > now) {
        throw new ChatOpsError(
          'SB_UPSTREAM_RATE_LIMITED',
          `pagerduty ${operation} not sent: the request budget (${perMinute} a minute) is spent until ${new Date(freeAt).toISOString()}`,
          {
            details: {
              vendor: 'pagerduty',
              operation,
              retryable: true,
              retryAfterMs: freeAt - now,
              retryAfterSource: 'budget',
              retryAt: new Date(freeAt).toISOString(),
            },
          },
        );
      }
      sent.push(now);
    },
    exhaustUntil(untilMs) {
      blockedUntil = Math.max(blockedUntil, untilMs);
    },
  };
};

export const createPagerDutyClient = (options: PagerDutyClientOptions) => {
  const common = {
    ...(options.dispatcher ? { dispatcher: options.dispatcher } : {}),
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.timeouts ? { timeouts: options.timeouts } : {}),
    parseVendorError: parsePagerDutyError,
    classify: classifyPagerDutyError,
  };
  const budget =
    options.budget ??
    createRequestBudget({
      perMinute: options.requestsPerMinute ?? PAGERDUTY_REQUESTS_PER_MINUTE,
      now: () => (options.clock ? options.clock.now().getTime() : Date.now()),
    });
  const nowMs = () => (options.clock ? options.clock.now().getTime() : Date.now());
  const unbudgeted: UpstreamHttp = createUpstreamHttp({
    ...common,
    vendor: 'pagerduty',
    baseUrl: options.apiUrl,
    defaultHeaders: {
      authorization: `Token token=${options.token}`,
      accept: ACCEPT,
      'content-type': 'application/json',
    },
  });
  /** Every REST request goes through the budget; a 429 the service answers anyway closes it too. */
  const rest: UpstreamHttp = {
    async request(req) {
      budget.take(req.operation);
      try {
        return await unbudgeted.request(req);
      } catch (e) {
        const retryAfterMs = (e as { code?: unknown; details?: { retryAfterMs?: unknown } }).details
          ?.retryAfterMs;
        if ((e as { code?: unknown }).code === 'SB_UPSTREAM_RATE_LIMITED' && typeof retryAfterMs === 'number')
          budget.exhaustUntil(nowMs() + retryAfterMs);
        throw e;
      }
    },
  };
  const events: UpstreamHttp = createUpstreamHttp({
    ...common,
    vendor: 'pagerduty-events',
    baseUrl: options.eventsUrl,
    defaultHeaders: { 'content-type': 'application/json' },
    // The events route has no documented reset header; retry with backoff.
    defaultRetryAfterMs: 5_000,
  });

  const toPage = <T>(
    data: { limit: number; offset: number; more: boolean; total?: number | null | undefined },
    items: T[],
  ): Page<T> => ({
    items,
    limit: data.limit,
    offset: data.offset,
    more: data.more,
    total: data.total ?? null,
  });

  const listIncidents = async (params: ListIncidentsParams = {}): Promise<Page<PagerDutyIncident>> => {
    checkPage(params, 'listIncidents');
    const { data } = await rest.request({
      operation: 'listIncidents',
      method: 'GET',
      path: '/incidents',
      query: {
        ...pageQuery(params),
        'statuses[]': params.statuses,
        'service_ids[]': params.serviceIds,
        'team_ids[]': params.teamIds,
        'user_ids[]': params.userIds,
        'urgencies[]': params.urgencies,
        since: params.since,
        until: params.until,
        date_range: params.dateRange,
        incident_key: params.incidentKey,
        sort_by: params.sortBy && params.sortBy.length > 0 ? params.sortBy.join(',') : undefined,
        'include[]': params.include,
      },
      schema: z.looseObject({ ...pageFields, incidents: z.array(pagerDutyIncidentSchema) }),
    });
    return toPage(data, data.incidents);
  };

  const getIncident = async (idOrNumber: string | number): Promise<PagerDutyIncident> => {
    const id = String(idOrNumber).trim();
    if (!/^[A-Za-z0-9]+$/.test(id))
      throw new ValidationError('getIncident: an incident id or number is required');
    const { data } = await rest.request({
      operation: 'getIncident',
      method: 'GET',
      path: `/incidents/${encodeURIComponent(id)}`,
      schema: z.looseObject({ incident: pagerDutyIncidentSchema }),
    });
    return data.incident;
  };

  const createIncident = async (params: CreateIncidentParams): Promise<PagerDutyIncident> => {
    checkFrom(params.from, 'createIncident');
    if (params.title.trim() === '') throw new ValidationError('createIncident: title is required');
    if (params.assigneeIds && params.assigneeIds.length > 0 && params.escalationPolicyId) {
      throw new ValidationError('createIncident: assignees and an escalation policy are mutually exclusive');
    }
    const incident: Record<string, unknown> = {
      type: 'incident',
      title: params.title,
      service: { id: params.serviceId, type: 'service_reference' },
    };
    if (params.urgency) incident.urgency = params.urgency;
    if (params.priorityId) incident.priority = { id: params.priorityId, type: 'priority_reference' };
    if (params.details !== undefined) incident.body = { type: 'incident_body', details: params.details };
    if (params.incidentKey !== undefined) incident.incident_key = params.incidentKey;
    if (params.assigneeIds && params.assigneeIds.length > 0)
      incident.assignments = params.assigneeIds.map(userRef);
    if (params.escalationPolicyId) {
      incident.escalation_policy = { id: params.escalationPolicyId, type: 'escalation_policy_reference' };
    }
    if (params.conferenceBridge) {
      incident.conference_bridge = {
        conference_number: params.conferenceBridge.conferenceNumber,
        conference_url: params.conferenceBridge.conferenceUrl,
      };
    }
    const { data } = await rest.request({
      operation: 'createIncident',
      method: 'POST',
      path: '/incidents',
      headers: { from: params.from },
      body: { incident },
      schema: z.looseObject({ incident: pagerDutyIncidentSchema }),
    });
    return data.incident;
  };

  const incidentChanges = (params: Omit<UpdateIncidentParams, 'from'>): Record<string, unknown> => {
    const out: Record<string, unknown> = {};
    if (params.status) out.status = params.status;
    if (params.resolution !== undefined) {
      if (params.status !== 'resolved')
        throw new ValidationError('resolution is only allowed when resolving');
      out.resolution = params.resolution;
    }
    if (params.title !== undefined) out.title = params.title;
    if (params.urgency) out.urgency = params.urgency;
    if (params.priority !== undefined) {
      out.priority =
        typeof params.priority === 'string'
          ? params.priority
          : { id: params.priority.id, type: 'priority_reference' };
    }
    if (params.escalationLevel !== undefined) {
      if (!Number.isInteger(params.escalationLevel) || params.escalationLevel < 1) {
        throw new ValidationError('escalationLevel must be an integer ≥ 1');
      }
      out.escalation_level = params.escalationLevel;
    }
    if (params.assigneeIds && params.assigneeIds.length > 0 && params.escalationPolicyId) {
      throw new ValidationError('assignees and an escalation policy are mutually exclusive');
    }
    if (params.assigneeIds && params.assigneeIds.length > 0)
      out.assignments = params.assigneeIds.map(userRef);
    if (params.escalationPolicyId) {
      out.escalation_policy = { id: params.escalationPolicyId, type: 'escalation_policy_reference' };
    }
    return out;
  };

  const updateIncident = async (id: string, params: UpdateIncidentParams): Promise<PagerDutyIncident> => {
    checkFrom(params.from, 'updateIncident');
    const { from, ...fields } = params;
    const changes = incidentChanges(fields);
    if (Object.keys(changes).length === 0) throw new ValidationError('updateIncident: nothing to change');
    const { data } = await rest.request({
      operation: 'updateIncident',
      method: 'PUT',
      path: `/incidents/${encodeURIComponent(id)}`,
      headers: { from },
      body: { incident: { type: 'incident_reference', ...changes } },
      schema: z.looseObject({ incident: pagerDutyIncidentSchema }),
    });
    return data.incident;
  };

  /**
   * Acknowledges or resolves many incidents, `PAGERDUTY_BULK_UPDATE_MAX` per call, in order. If a
   * chunk fails, the error's `details.updatedIds` lists the incidents earlier chunks did update.
   */
  const bulkUpdateStatus = async (params: BulkStatusParams): Promise<PagerDutyIncident[]> => {
    checkFrom(params.from, 'bulkUpdateIncidents');
    if (params.resolution !== undefined && params.status !== 'resolved') {
      throw new ValidationError('bulkUpdateIncidents: resolution is only allowed when resolving');
    }
    const ids = [...new Set(params.incidentIds)];
    const updated: PagerDutyIncident[] = [];
    for (let i = 0; i < ids.length; i += PAGERDUTY_BULK_UPDATE_MAX) {
      const chunk = ids.slice(i, i + PAGERDUTY_BULK_UPDATE_MAX);
      try {
        const { data } = await rest.request({
          operation: 'bulkUpdateIncidents',
          method: 'PUT',
          path: '/incidents',
          headers: { from: params.from },
          body: {
            incidents: chunk.map((id) => ({
              id,
              type: 'incident_reference',
              status: params.status,
              ...(params.resolution === undefined ? {} : { resolution: params.resolution }),
            })),
          },
          schema: z.looseObject({ incidents: z.array(pagerDutyIncidentSchema) }),
        });
        updated.push(...data.incidents);
      } catch (err) {
        if (err instanceof ChatOpsError && updated.length > 0) {
          throw new ChatOpsError(err.code, err.message, {
            cause: err,
            details: { ...err.details, updatedIds: updated.map((x) => x.id) },
          });
        }
        throw err;
      }
    }
    return updated;
  };

  const listIncidentNotes = async (incidentId: string): Promise<PagerDutyNote[]> => {
    const { data } = await rest.request({
      operation: 'listIncidentNotes',
      method: 'GET',
      path: `/incidents/${encodeURIComponent(incidentId)}/notes`,
      schema: z.looseObject({ notes: z.array(noteSchema) }),
    });
    return data.notes;
  };

  const addIncidentNote = async (incidentId: string, params: { from: string; content: string }) => {
    checkFrom(params.from, 'addIncidentNote');
    if (params.content.trim() === '') throw new ValidationError('addIncidentNote: content is required');
    const { data } = await rest.request({
      operation: 'addIncidentNote',
      method: 'POST',
      path: `/incidents/${encodeURIComponent(incidentId)}/notes`,
      headers: { from: params.from },
      body: { note: { content: params.content } },
      schema: z.looseObject({ note: noteSchema }),
    });
    return data.note;
  };

  const listIncidentAlerts = async (
    incidentId: string,
    params: PageParams & { statuses?: readonly ('triggered' | 'resolved')[]; alertKey?: string } = {},
  ): Promise<Page<PagerDutyAlert>> => {
    checkPage(params, 'listIncidentAlerts');
    const { data } = await rest.request({
      operation: 'listIncidentAlerts',
      method: 'GET',
      path: `/incidents/${encodeURIComponent(incidentId)}/alerts`,
      query: { ...pageQuery(params), 'statuses[]': params.statuses, alert_key: params.alertKey },
      schema: z.looseObject({ ...pageFields, alerts: z.array(alertSchema) }),
    });
    return toPage(data, data.alerts);
  };

  const listServices = async (
    params: PageParams & { query?: string; teamIds?: readonly string[]; name?: string } = {},
  ): Promise<Page<PagerDutyService>> => {
    checkPage(params, 'listServices');
    const { data } = await rest.request({
      operation: 'listServices',
      method: 'GET',
      path: '/services',
      query: { ...pageQuery(params), query: params.query, 'team_ids[]': params.teamIds, name: params.name },
      schema: z.looseObject({ ...pageFields, services: z.array(serviceSchema) }),
    });
    return toPage(data, data.services);
  };

  const getService = async (id: string): Promise<PagerDutyService> => {
    const { data } = await rest.request({
      operation: 'getService',
      method: 'GET',
      path: `/services/${encodeURIComponent(id)}`,
      schema: z.looseObject({ service: serviceSchema }),
    });
    return data.service;
  };

  const listOnCalls = async (params: ListOnCallsParams = {}): Promise<Page<PagerDutyOnCall>> => {
    checkPage(params, 'listOnCalls');
    const { data } = await rest.request({
      operation: 'listOnCalls',
      method: 'GET',
      path: '/oncalls',
      query: {
        ...pageQuery(params),
        'user_ids[]': params.userIds,
        'schedule_ids[]': params.scheduleIds,
        'escalation_policy_ids[]': params.escalationPolicyIds,
        since: params.since,
        until: params.until,
        earliest: params.earliest === undefined ? undefined : String(params.earliest),
        'include[]': params.include,
        time_zone: params.timeZone,
      },
      schema: z.looseObject({ ...pageFields, oncalls: z.array(oncallSchema) }),
    });
    return toPage(data, data.oncalls);
  };

  /** A schedule with `final_schedule.rendered_schedule_entries` for [since, until]. */
  const getSchedule = async (
    id: string,
    params: { since?: string; until?: string; timeZone?: string; overflow?: boolean } = {},
  ): Promise<PagerDutySchedule> => {
    const { data } = await rest.request({
      operation: 'getSchedule',
      method: 'GET',
      path: `/schedules/${encodeURIComponent(id)}`,
      query: {
        since: params.since,
        until: params.until,
        time_zone: params.timeZone,
        overflow: params.overflow === undefined ? undefined : String(params.overflow),
      },
      schema: z.looseObject({ schedule: scheduleSchema }),
    });
    return data.schedule;
  };

  /** Creates overrides; the answer has one status per item (some may fail while others succeed). */
  const createScheduleOverrides = async (
    scheduleId: string,
    overrides: readonly OverrideInput[],
  ): Promise<PagerDutyOverrideResult[]> => {
    if (overrides.length === 0) throw new ValidationError('createScheduleOverrides: no overrides given');
    for (const o of overrides) {
      if (
        Number.isNaN(Date.parse(o.start)) ||
        Number.isNaN(Date.parse(o.end)) ||
        Date.parse(o.end) <= Date.parse(o.start)
      ) {
        throw new ValidationError('createScheduleOverrides: each override needs ISO start < end', {
          details: { start: o.start, end: o.end },
        });
      }
    }
    const { data } = await rest.request({
      operation: 'createScheduleOverrides',
      method: 'POST',
      path: `/schedules/${encodeURIComponent(scheduleId)}/overrides`,
      body: {
        overrides: overrides.map((o) => ({
          start: o.start,
          end: o.end,
          user: { id: o.userId, type: 'user_reference' },
          ...(o.timeZone ? { time_zone: o.timeZone } : {}),
        })),
      },
      schema: z.array(overrideResult),
    });
    return data;
  };

  const getEscalationPolicy = async (id: string): Promise<PagerDutyEscalationPolicy> => {
    const { data } = await rest.request({
      operation: 'getEscalationPolicy',
      method: 'GET',
      path: `/escalation_policies/${encodeURIComponent(id)}`,
      schema: z.looseObject({ escalation_policy: escalationPolicySchema }),
    });
    return data.escalation_policy;
  };

  /** Escalation policies; `userIds`: only those on which any of the users is a target. */
  const listEscalationPolicies = async (
    params: PageParams & { userIds?: readonly string[]; query?: string } = {},
  ): Promise<Page<PagerDutyEscalationPolicy>> => {
    checkPage(params, 'listEscalationPolicies');
    const { data } = await rest.request({
      operation: 'listEscalationPolicies',
      method: 'GET',
      path: '/escalation_policies',
      query: { ...pageQuery(params), query: params.query, 'user_ids[]': params.userIds },
      schema: z.looseObject({ ...pageFields, escalation_policies: z.array(escalationPolicySchema) }),
    });
    return toPage(data, data.escalation_policies);
  };

  const listUsers = async (
    params: PageParams & { query?: string; teamIds?: readonly string[]; include?: readonly string[] } = {},
  ): Promise<Page<PagerDutyUser>> => {
    checkPage(params, 'listUsers');
    const { data } = await rest.request({
      operation: 'listUsers',
      method: 'GET',
      path: '/users',
      query: {
        ...pageQuery(params),
        query: params.query,
        'team_ids[]': params.teamIds,
        'include[]': params.include,
      },
      schema: z.looseObject({ ...pageFields, users: z.array(userSchema) }),
    });
    return toPage(data, data.users);
  };

  const getUser = async (id: string): Promise<PagerDutyUser> => {
    const { data } = await rest.request({
      operation: 'getUser',
      method: 'GET',
      path: `/users/${encodeURIComponent(id)}`,
      schema: z.looseObject({ user: userSchema }),
    });
    return data.user;
  };

  /**
   * The user whose email is exactly `email` (case-insensitive), or undefined. The API's `query`
   * is a substring match over names and emails, so results are filtered here, across pages.
   */
  const findUserByEmail = async (email: string): Promise<PagerDutyUser | undefined> => {
    const wanted = email.trim().toLowerCase();
    if (!/^[^\s@]+@[^\s@]+$/.test(wanted)) throw new ValidationError('findUserByEmail: not an email address');
    for await (const user of paginate((p) => listUsers({ ...p, query: wanted }), { maxItems: 1_000 })) {
      if (user.email.trim().toLowerCase() === wanted) return user;
    }
    return undefined;
  };

  /** Every incident matching the filters, following `more` (bounded by the 10,000 window). */
  const listAllIncidents = async (
    params: Omit<ListIncidentsParams, 'limit' | 'offset'> = {},
    opts: { maxItems?: number } = {},
  ): Promise<PagerDutyIncident[]> => {
    const out: PagerDutyIncident[] = [];
    for await (const i of paginate((p) => listIncidents({ ...params, ...p }), opts)) out.push(i);
    return out;
  };

  const enqueueEvent = async (
    params: EnqueueEventParams,
  ): Promise<{ dedupKey: string; status: string; message: string }> => {
    if (params.routingKey.length !== PAGERDUTY_ROUTING_KEY_LENGTH) {
      throw new ValidationError(
        `enqueueEvent: routing key must be ${PAGERDUTY_ROUTING_KEY_LENGTH} characters`,
      );
    }
    if (
      params.dedupKey !== undefined &&
      (params.dedupKey.length === 0 || params.dedupKey.length > PAGERDUTY_DEDUP_KEY_MAX)
    ) {
      throw new ValidationError(`enqueueEvent: dedup_key must be 1..${PAGERDUTY_DEDUP_KEY_MAX} characters`);
    }
    let body: Record<string, unknown>;
    if (params.eventAction === 'trigger') {
      const p = params.payload;
      if (p.summary.length === 0 || p.summary.length > 1024) {
        throw new ValidationError('enqueueEvent: payload.summary must be 1..1024 characters');
      }
      body = {
        routing_key: params.routingKey,
        event_action: 'trigger',
        ...(params.dedupKey === undefined ? {} : { dedup_key: params.dedupKey }),
        payload: {
          summary: p.summary,
          source: p.source,
          severity: p.severity,
          ...(p.timestamp ? { timestamp: p.timestamp } : {}),
          ...(p.component ? { component: p.component } : {}),
          ...(p.group ? { group: p.group } : {}),
          ...(p.class ? { class: p.class } : {}),
          ...(p.customDetails ? { custom_details: p.customDetails } : {}),
        },
        ...(params.client ? { client: params.client } : {}),
        ...(params.clientUrl ? { client_url: params.clientUrl } : {}),
        ...(params.links ? { links: params.links } : {}),
        ...(params.images ? { images: params.images } : {}),
      };
    } else {
      body = { routing_key: params.routingKey, event_action: params.eventAction, dedup_key: params.dedupKey };
    }
    const { data } = await events.request({
      operation: 'enqueueEvent',
      method: 'POST',
      path: '/v2/enqueue',
      body,
      schema: eventsAccepted,
    });
    return { dedupKey: data.dedup_key, status: data.status, message: data.message };
  };

  const sendChangeEvent = async (params: ChangeEventParams): Promise<{ status: string; message: string }> => {
    if (params.routingKey.length !== PAGERDUTY_ROUTING_KEY_LENGTH) {
      throw new ValidationError(
        `sendChangeEvent: routing key must be ${PAGERDUTY_ROUTING_KEY_LENGTH} characters`,
      );
    }
    const { data } = await events.request({
      operation: 'sendChangeEvent',
      method: 'POST',
      path: '/v2/change/enqueue',
      body: {
        routing_key: params.routingKey,
        payload: {
          summary: params.summary,
          ...(params.source ? { source: params.source } : {}),
          ...(params.timestamp ? { timestamp: params.timestamp } : {}),
          ...(params.customDetails ? { custom_details: params.customDetails } : {}),
        },
        ...(params.links ? { links: params.links } : {}),
        ...(params.images ? { images: params.images } : {}),
      },
      schema: changeAccepted,
    });
    return { status: data.status, message: data.message };
  };

  const createWebhookSubscription = async (
    params: CreateWebhookSubscriptionParams,
  ): Promise<PagerDutyWebhookSubscription> => {
    if (!/^https?:\/\//.test(params.url))
      throw new ValidationError('createWebhookSubscription: url must be http(s)');
    if (params.events.length === 0)
      throw new ValidationError('createWebhookSubscription: at least one event type');
    if (params.filter.type !== 'account_reference' && !params.filter.id)
      throw new ValidationError(`createWebhookSubscription: a ${params.filter.type} filter needs an id`);
    const { data } = await rest.request({
      operation: 'createWebhookSubscription',
      method: 'POST',
      path: '/webhook_subscriptions',
      body: {
        webhook_subscription: {
          type: 'webhook_subscription',
          delivery_method: { type: 'http_delivery_method', url: params.url },
          events: [...params.events],
          filter:
            params.filter.type === 'account_reference'
              ? { type: 'account_reference' }
              : { type: params.filter.type, id: params.filter.id },
          ...(params.description ? { description: params.description } : {}),
        },
      },
      schema: z.looseObject({ webhook_subscription: webhookSubscriptionSchema }),
    });
    return data.webhook_subscription;
  };

  const listWebhookSubscriptions = async (
    params: PageParams & Readonly<{ filterType?: 'account' | 'service' | 'team'; filterId?: string }> = {},
  ): Promise<Page<PagerDutyWebhookSubscription>> => {
    checkPage(params, 'listWebhookSubscriptions');
    const { data } = await rest.request({
      operation: 'listWebhookSubscriptions',
      method: 'GET',
      path: '/webhook_subscriptions',
      query: { ...pageQuery(params), filter_type: params.filterType, filter_id: params.filterId },
      schema: z.looseObject({ ...pageFields, webhook_subscriptions: z.array(webhookSubscriptionSchema) }),
    });
    return toPage(data, data.webhook_subscriptions);
  };

  return {
    listIncidents,
    listAllIncidents,
    getIncident,
    createIncident,
    updateIncident,
    acknowledgeIncident: (id: string, from: string) => updateIncident(id, { from, status: 'acknowledged' }),
    resolveIncident: (id: string, from: string, resolution?: string) =>
      updateIncident(id, { from, status: 'resolved', ...(resolution === undefined ? {} : { resolution }) }),
    escalateIncident: (id: string, from: string, escalationLevel: number) =>
      updateIncident(id, { from, escalationLevel }),
    reassignIncident: (
      id: string,
      from: string,
      to: { userIds: readonly string[] } | { escalationPolicyId: string },
    ) =>
      updateIncident(
        id,
        'userIds' in to
          ? { from, assigneeIds: to.userIds }
          : { from, escalationPolicyId: to.escalationPolicyId },
      ),
    bulkUpdateStatus,
    listIncidentNotes,
    addIncidentNote,
    listIncidentAlerts,
    listServices,
    getService,
    listOnCalls,
    getSchedule,
    createScheduleOverrides,
    getEscalationPolicy,
    listEscalationPolicies,
    listUsers,
    getUser,
    findUserByEmail,
    enqueueEvent,
    sendChangeEvent,
    createWebhookSubscription,
    listWebhookSubscriptions,
  };
};

export type PagerDutyClient = ReturnType<typeof createPagerDutyClient>;

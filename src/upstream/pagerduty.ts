import type { Dispatcher } from 'undici';
import type { Clock } from '../core/clock.ts';
import { createUpstreamHttp, type UpstreamHttp, type UpstreamTimeouts } from './http.ts';
import {
  budgeted,
  createRequestBudget,
  PAGERDUTY_REQUESTS_PER_MINUTE,
  type RequestBudget,
} from './pagerduty/budget.ts';
import { createDirectoryCalls } from './pagerduty/directory.ts';
import { classifyPagerDutyError, parsePagerDutyError } from './pagerduty/errors.ts';
import { createEventsApiCalls } from './pagerduty/eventsApi.ts';
import { createIncidentCalls } from './pagerduty/incidents.ts';
import { createScheduleCalls } from './pagerduty/schedules.ts';
import { createWebhookSubscriptionCalls } from './pagerduty/webhookSubscriptions.ts';

export {
  createRequestBudget,
  PAGERDUTY_REQUESTS_PER_MINUTE,
  type RequestBudget,
} from './pagerduty/budget.ts';
export { classifyPagerDutyError, parsePagerDutyError } from './pagerduty/errors.ts';
export { PAGERDUTY_DEDUP_KEY_MAX, PAGERDUTY_ROUTING_KEY_LENGTH } from './pagerduty/eventsApi.ts';
export { PAGERDUTY_BULK_UPDATE_MAX } from './pagerduty/incidents.ts';
export {
  PAGERDUTY_MAX_OFFSET_PLUS_LIMIT,
  PAGERDUTY_MAX_PAGE_LIMIT,
  paginate,
} from './pagerduty/pagination.ts';
export type {
  BulkStatusParams,
  ChangeEventParams,
  CreateIncidentParams,
  CreateWebhookSubscriptionParams,
  EnqueueEventParams,
  EventsImage,
  EventsLink,
  ListIncidentsParams,
  ListOnCallsParams,
  OverrideInput,
  PageParams,
  TriggerEventPayload,
  UpdateIncidentParams,
  WebhookFilterType,
} from './pagerduty/params.ts';
export {
  type Page,
  type PagerDutyAlert,
  type PagerDutyEscalationPolicy,
  type PagerDutyIncident,
  type PagerDutyIncidentStatus,
  type PagerDutyNote,
  type PagerDutyOnCall,
  type PagerDutyOverrideResult,
  type PagerDutyPriority,
  type PagerDutyReference,
  type PagerDutySchedule,
  type PagerDutyScheduleEntry,
  type PagerDutyService,
  type PagerDutyUrgency,
  type PagerDutyUser,
  type PagerDutyWebhookSubscription,
  pagerDutyIncidentSchema,
} from './pagerduty/schemas.ts';

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
 * The calls are grouped by what they are about, one file each under `pagerduty/`: incidents
 * (`incidents.ts`), services and users (`directory.ts`), on-call, schedules and escalation policies
 * (`schedules.ts`), the Events API (`eventsApi.ts`), webhook subscriptions
 * (`webhookSubscriptions.ts`); with the answers' shapes (`schemas.ts`), the parameters
 * (`params.ts`), the errors (`errors.ts`), pagination (`pagination.ts`) and the shared request
 * budget (`budget.ts`). This file builds the two transports and puts the groups together.
 *
 * @example
 * const pd = createPagerDutyClient({ apiUrl, eventsUrl, token, dispatcher });
 * const incident = await pd.createIncident({ from: 'ana@example.org', serviceId: 'PSVC001', title: 'db down' });
 * await pd.updateIncident(incident.id, { from: 'ben@example.org', status: 'acknowledged' });
 */

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

const ACCEPT = 'application/vnd.pagerduty+json;version=2';

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
  /** The REST API: every request goes through the budget. */
  const rest: UpstreamHttp = budgeted(
    createUpstreamHttp({
      ...common,
      vendor: 'pagerduty',
      baseUrl: options.apiUrl,
      defaultHeaders: {
        authorization: `Token token=${options.token}`,
        accept: ACCEPT,
        'content-type': 'application/json',
      },
    }),
    budget,
    nowMs,
  );
  const events: UpstreamHttp = createUpstreamHttp({
    ...common,
    vendor: 'pagerduty-events',
    baseUrl: options.eventsUrl,
    defaultHeaders: { 'content-type': 'application/json' },
    // The events route has no documented reset header; retry with backoff.
    defaultRetryAfterMs: 5_000,
  });
  const incidents = createIncidentCalls(rest);
  const directory = createDirectoryCalls(rest);
  const schedules = createScheduleCalls(rest);
  const eventsApi = createEventsApiCalls(events);
  const webhookSubscriptions = createWebhookSubscriptionCalls(rest);

  return {
    listIncidents: incidents.listIncidents,
    listAllIncidents: incidents.listAllIncidents,
    getIncident: incidents.getIncident,
    createIncident: incidents.createIncident,
    updateIncident: incidents.updateIncident,
    acknowledgeIncident: incidents.acknowledgeIncident,
    resolveIncident: incidents.resolveIncident,
    escalateIncident: incidents.escalateIncident,
    reassignIncident: incidents.reassignIncident,
    bulkUpdateStatus: incidents.bulkUpdateStatus,
    listIncidentNotes: incidents.listIncidentNotes,
    addIncidentNote: incidents.addIncidentNote,
    listIncidentAlerts: incidents.listIncidentAlerts,
    listPriorities: incidents.listPriorities,
    listServices: directory.listServices,
    getService: directory.getService,
    listOnCalls: schedules.listOnCalls,
    getSchedule: schedules.getSchedule,
    createScheduleOverrides: schedules.createScheduleOverrides,
    deleteScheduleOverride: schedules.deleteScheduleOverride,
    getEscalationPolicy: schedules.getEscalationPolicy,
    listEscalationPolicies: schedules.listEscalationPolicies,
    listUsers: directory.listUsers,
    getUser: directory.getUser,
    findUserByEmail: directory.findUserByEmail,
    enqueueEvent: eventsApi.enqueueEvent,
    sendChangeEvent: eventsApi.sendChangeEvent,
    createWebhookSubscription: webhookSubscriptions.createWebhookSubscription,
    listWebhookSubscriptions: webhookSubscriptions.listWebhookSubscriptions,
  };
};

export type PagerDutyClient = ReturnType<typeof createPagerDutyClient>;

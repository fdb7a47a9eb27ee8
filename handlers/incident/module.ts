import { INCIDENT_USER_COMMANDS } from '../../machines/incident/commands.ts';
import type { Clock } from '../../src/core/clock.ts';
import { createAckRemindersReactor } from '../../src/incidents/ackReminders.reactor.ts';
import { incidentRejectionText } from '../../src/incidents/blocks/incidentReplies.ts';
import { createIncidentCardsReactor } from '../../src/incidents/cards.reactor.ts';
import { type IncidentsConfig, incidentsDeclaration } from '../../src/incidents/config.ts';
import { createIncidentEnricher } from '../../src/incidents/enrich.ts';
import { createEscalationLevels } from '../../src/incidents/escalationLevels.ts';
import { createIncidentHomeSection } from '../../src/incidents/home.ts';
import {
  createIncidentChannelReactor,
  slackChannelsApi,
} from '../../src/incidents/incidentChannel.reactor.ts';
import { createIncidentNoticesReactor } from '../../src/incidents/notices.reactor.ts';
import { createOnCallLookups, createScheduleOverridesPort } from '../../src/incidents/onCall.ts';
import { createIncidentPagingReactor, createPagingRota } from '../../src/incidents/paging.reactor.ts';
import { createIncidentResponses, pagingRoutes } from '../../src/incidents/paging.ts';
import { incidentParkedNotices } from '../../src/incidents/parkedNotices.ts';
import { createPriorityDirectory } from '../../src/incidents/priorities.ts';
import { createIncidentQueries } from '../../src/incidents/queries.ts';
import {
  createIncidentReadModels,
  INCIDENT_READ_MODELS,
  type IncidentReadModels,
} from '../../src/incidents/readModels.projection.ts';
import { incidentRoutes } from '../../src/incidents/routes.ts';
import { createServiceDirectory } from '../../src/incidents/services.ts';
import { createShiftNoticesReactor, shiftWatchRoutes } from '../../src/incidents/shiftNotices.reactor.ts';
import { createIncidentStatusUpdatesReactor } from '../../src/incidents/statusUpdates.reactor.ts';
import { createIncidentThreadReactor } from '../../src/incidents/thread.reactor.ts';
import {
  createIncidentReadBackReactor,
  createIncidentUpstreamReactor,
} from '../../src/incidents/upstreamCalls.reactor.ts';
import { DEFAULT_WORKING } from '../../src/incidents/workingConfig.ts';
import { workingRoutes } from '../../src/incidents/workingRoutes.ts';
import {
  defineLifecycle,
  type LifecycleDeps,
  type LifecycleInstance,
} from '../../src/lifecycles/lifecycle.ts';
import { createIdentityResolver } from '../../src/people/identity.ts';
import { slackUserLookups } from '../../src/people/slackUsers.ts';
import { type RetryPolicy, UPSTREAM_RETRY } from '../../src/processors/retryPolicy.ts';
import {
  createPagerDutyClient,
  createRequestBudget,
  PAGERDUTY_REQUESTS_PER_MINUTE,
  type PagerDutyClient,
  paginate,
} from '../../src/upstream/pagerduty.ts';
import { register as registerIncidentListeners } from './index.ts';
import { pagerDutyWebhookVerifier } from './webhooks.ts';

/**
 * The incident lifecycle (PagerDuty-shaped incident service): `/incident`, `/oncall`, the cards
 * and their buttons, `POST /webhooks/pagerduty`, its App Home section, and the on-call lookups and
 * schedule overrides it offers the other lifecycles. On when PAGERDUTY_TOKEN and
 * PAGERDUTY_WEBHOOK_SECRET are set.
 *
 * Where things are: rules in `machines/incident/` and `machines/incidentRouting/`; the client
 * wiring, reactors, read models and Block Kit in `src/incidents/`; the Slack and webhook edge here
 * in `handlers/incident/`, with this module, which wires them together.
 *
 * @example
 * const sb = await createSwitchboard({ config, logger, lifecycleOptions: { incidents: { retry: { baseMs: 30 } } } });
 * await sb.lifecycle('incidents')?.readModels.catchUp();
 */

/** What tests and the sandbox reach through `sb.lifecycle('incidents')`. */
export type IncidentsApi = Readonly<{ pagerduty: PagerDutyClient; readModels: IncidentReadModels }>;

export type IncidentsOptions = Readonly<{
  /** Durable retries of incident-service calls (default UPSTREAM_RETRY: 5 attempts from 2 s). */
  retry?: Partial<RetryPolicy>;
  /** REST requests a minute all incident-service callers share (default 960, the service's limit). */
  requestsPerMinute?: number;
  /** The clock the request budget counts on (default the app's; tests pass a manual one). */
  budgetClock?: Clock;
  /** Alerts asked per page by `/incident show` (default 100, the vendor's maximum; tests page smaller). */
  alertsPageSize?: number;
  /**
   * Incidents per bulk `PUT /incidents` (default and maximum 250, the vendor's limit: more is
   * refused with 413); tests set it lower to see the chunks.
   */
  bulkLimit?: number;
}>;

/** Cards name people the incident service knows; looking up their Slack users waits at most this long. */
const MENTION_LOOKUP_MS = 2_000;

const createIncidents = (
  config: IncidentsConfig,
  deps: LifecycleDeps,
  options: IncidentsOptions | undefined,
): LifecycleInstance<IncidentsApi> => {
  const { store, clock, slack, dispatch } = deps;
  // One client, so one request budget, for every caller: identity lookups, the service directory,
  // `/oncall`, the on-call ports and the reactors.
  const budgetClock = options?.budgetClock ?? clock;
  const pagerduty = createPagerDutyClient({
    apiUrl: config.apiUrl,
    eventsUrl: config.eventsUrl,
    token: config.token,
    clock,
    budget: createRequestBudget({
      perMinute: options?.requestsPerMinute ?? config.requestsPerMinute ?? PAGERDUTY_REQUESTS_PER_MINUTE,
      now: () => budgetClock.now().getTime(),
    }),
  });
  const readModels = createIncidentReadModels({ store });
  const services = createServiceDirectory({
    now: () => clock.now().getTime(),
    listServices: async () => {
      const out: { id: string; name: string; escalationPolicyId: string | null }[] = [];
      for await (const s of paginate((p) => pagerduty.listServices(p), { maxItems: 1_000 })) {
        out.push({ id: s.id, name: s.name, escalationPolicyId: s.escalation_policy.id });
      }
      return out;
    },
  });
  // Read once and cached (see priorities.ts); an account has a handful, one page holds them all.
  const priorities = createPriorityDirectory({
    now: () => clock.now().getTime(),
    listPriorities: async () => {
      const out: { id: string; name: string }[] = [];
      for await (const p of paginate((q) => pagerduty.listPriorities(q), { maxItems: 500 })) {
        out.push({ id: p.id, name: p.name });
      }
      return out;
    },
  });
  /** The list for a card: at most MENTION_LOOKUP_MS on a first read, then the card goes without. */
  const prioritiesForCard = async () => {
    const known = priorities.cached();
    if (known) return known;
    return Promise.race([
      priorities.all().catch(() => null),
      new Promise<null>((r) => setTimeout(() => r(null), MENTION_LOOKUP_MS).unref()),
    ]);
  };
  const escalationLevels = createEscalationLevels({
    services,
    getEscalationPolicy: (id) => pagerduty.getEscalationPolicy(id),
    now: () => clock.now().getTime(),
  });
  const identity = createIdentityResolver({
    directory: deps.people,
    system: 'incidents',
    systemName: 'the incident service',
    now: () => clock.now(),
    findUpstreamUser: (email) => pagerduty.findUserByEmail(email),
    upstreamUser: (id) => pagerduty.getUser(id),
    ...slackUserLookups(slack, deps.readerZones),
  });
  // Who is on call and who could stand in: paging's, and `/oncall`'s truth during leave (issue 20).
  const pagingRota = createPagingRota({
    pagerduty,
    services,
    identity,
    slackUserOf: readModels.slackUserOf,
    now: () => clock.now(),
  });
  // Issue 18: pages that could not be delivered (the next person is paged), and incidents where
  // nobody at all could be: operators' alerts beside the coded log lines.
  const pagesUndeliverable = deps.metrics.registry.counter(
    'switchboard_pages_undeliverable_total',
    'Pages that could not reach their person (the next person was paged instead), by reason',
    ['reason'],
  );
  const nobodyReachable = deps.metrics.registry.counter(
    'switchboard_pages_nobody_reachable_total',
    'Incidents where nobody on call at any level could be paged',
    [],
  );
  const onCall = createOnCallLookups({
    pagerduty,
    identity,
    readModels,
    services,
    store,
    now: () => clock.now(),
  });
  return {
    routes: {
      ...incidentRoutes({ streamForUpstreamId: readModels.streamForUpstreamId }),
      ...pagingRoutes(),
      ...workingRoutes(),
      ...shiftWatchRoutes,
    },
    processors: [
      readModels.processor,
      createIncidentUpstreamReactor({
        pagerduty,
        dispatch,
        slackUserOf: readModels.slackUserOf,
        retry: { ...UPSTREAM_RETRY, ...options?.retry },
      }),
      createIncidentReadBackReactor({ pagerduty, dispatch, slackUserOf: readModels.slackUserOf }),
      createIncidentCardsReactor({
        dispatch,
        slackUserOf: readModels.slackUserOf,
        // Mentions for people named by the incident service: at most 2 s per render, then the card
        // goes out with names (and mentions them on a later change).
        findSlackUsers: async (ids) => {
          const lookups = Promise.all(ids.slice(0, 10).map((id) => identity.slackUserFor(id)));
          const found = await Promise.race([
            lookups,
            new Promise<null>((r) => setTimeout(() => r(null), MENTION_LOOKUP_MS).unref()),
          ]);
          if (found?.some((id) => id !== null)) await readModels.catchUp();
        },
        lastEscalationLevel: escalationLevels.lastLevel,
        priorities: prioritiesForCard,
        channelsFor: async (serviceId) => {
          await readModels.catchUp();
          return readModels.channelsForService(serviceId);
        },
        outbox: deps.outbox,
      }),
      createIncidentPagingReactor({
        metrics: {
          undeliverable: (reason) => pagesUndeliverable.inc({ reason }),
          nobodyReachable: () => nobodyReachable.inc(),
        },
        settings: config.paging,
        dispatch: () => dispatch,
        pager: () => deps.ports.get('pager'),
        absences: () => deps.ports.get('absences'),
        rota: pagingRota,
      }),
      createIncidentNoticesReactor({
        outbox: deps.outbox,
        respond: (responseUrl, m) => deps.replies.respond(responseUrl, m),
      }),
      // Issue 22 items 4 and 7: acknowledge reminders, and an incident channel on demand.
      createAckRemindersReactor({
        outbox: deps.outbox,
        dispatch,
        settings: config.working ?? DEFAULT_WORKING,
        slackUserOf: readModels.slackUserOf,
      }),
      createIncidentChannelReactor({
        channels: slackChannelsApi(slack, slack.variant({ retries: 0 })),
        outbox: deps.outbox,
        dispatch,
        settings: config.working ?? DEFAULT_WORKING,
        slackUserOf: readModels.slackUserOf,
      }),
      // Issue 22 items 2 and 3: the card's thread tells the story; status updates and their reminders.
      createIncidentThreadReactor({ outbox: deps.outbox, clock }),
      createIncidentStatusUpdatesReactor({
        outbox: deps.outbox,
        reminderMinutes: config.updateReminderMinutes,
        slackUserOf: async (id) => readModels.slackUserOf(id) ?? (await identity.slackUserFor(id)),
      }),
      // Issue 20 item 4: the DM before each shift and the handoff posts.
      createShiftNoticesReactor({
        pagerduty,
        services,
        readModels,
        identity,
        outbox: deps.outbox,
        phoneStanding: () => deps.ports.get('phoneStanding'),
        noticeMs: config.shiftNoticeHours * 3_600_000,
      }),
    ],
    listeners: (app, handlerDeps) =>
      registerIncidentListeners(app, {
        ...handlerDeps,
        incidents: {
          queries: createIncidentQueries({
            store,
            readModels,
            services,
            identity,
            pagerduty,
            priorities: prioritiesForCard,
            ...(options?.alertsPageSize ? { alertsPageSize: options.alertsPageSize } : {}),
            // `/oncall` says who is on leave and who is paged instead (issue 20): paging's own rule.
            leave: { absences: () => deps.ports.get('absences'), rota: pagingRota, logger: deps.logger },
          }),
          ...(options?.bulkLimit ? { bulkLimit: options.bulkLimit } : {}),
          openView: async (triggerId, view) => {
            const opened = await slack.views.open({ trigger_id: triggerId, view });
            return opened.view?.id;
          },
          updateView: async (viewId, view) => {
            await slack.views.update({ view_id: viewId, view });
          },
          coverAsks: () => deps.ports.get('coverAsks'),
        },
      }),
    webhooks: [
      pagerDutyWebhookVerifier({
        secrets: config.webhookSecrets,
        logger: deps.logger,
        slackUserOf: readModels.slackUserOf,
      }),
    ],
    home: createIncidentHomeSection({
      readModels,
      identity,
      myShifts: {
        shiftsOf: async (slackUserId, range) => (await onCall.shiftsOf({ slackUserId }, range)).shifts,
        zoneOf: async (slackUserId) => (await deps.readerZones.of(slackUserId)).tz,
      },
    }),
    enrich: createIncidentEnricher({
      identity,
      services,
      readModels,
      priorities,
      lastEscalationLevel: escalationLevels.lastLevel,
      firstAlertOf: async (incidentId) => {
        const first = (await pagerduty.listIncidentAlerts(incidentId, { limit: 1 })).items[0];
        if (!first?.severity) return null;
        // The event's `payload.source` comes back as `body.cef_details.source_origin`.
        const cef = (first.body as { cef_details?: { source_origin?: unknown } } | null | undefined)
          ?.cef_details;
        const source = typeof cef?.source_origin === 'string' ? cef.source_origin : null;
        return { severity: first.severity.slice(0, 50), source: source?.slice(0, 1000) ?? null };
      },
    }),
    // A refused move says who got there first ("Already acknowledged by <@U1> at 02:04 UTC.").
    rejectionText: (r) =>
      r.code === 'SB_ILLEGAL_STATE' &&
      INCIDENT_USER_COMMANDS.has(r.commandType) &&
      typeof r.details.reason === 'string'
        ? { text: `:warning: ${incidentRejectionText(r.details, r.actor)}` }
        : undefined,
    provides: {
      onCall,
      scheduleOverrides: createScheduleOverridesPort({ pagerduty, identity, now: () => clock.now() }),
      incidentResponse: createIncidentResponses({
        store,
        dispatch: () => dispatch,
        identity,
        now: () => clock.now(),
      }),
    },
    parkedNotices: incidentParkedNotices,
    api: { pagerduty, readModels },
  };
};

export const incidents = defineLifecycle({
  ...incidentsDeclaration,
  readModels: [INCIDENT_READ_MODELS],
  create: (config: IncidentsConfig, deps: LifecycleDeps, options: IncidentsOptions | undefined) =>
    createIncidents(config, deps, options),
});

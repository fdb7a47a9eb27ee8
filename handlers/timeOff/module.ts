import { employeeById } from '../../machines/timeOff/directory.ts';
import {
  defineLifecycle,
  type LifecycleDeps,
  type LifecycleInstance,
} from '../../src/lifecycles/lifecycle.ts';
import { type RetryPolicy, UPSTREAM_RETRY } from '../../src/processors/retryPolicy.ts';
import { createAbsences } from '../../src/timeOff/absences.ts';
import { handOnRoutes } from '../../src/timeOff/approversRoutes.ts';
import { type TimeOffConfig, timeOffDeclaration } from '../../src/timeOff/config.ts';
import { createCoverCallsReactor, createCoverReactor } from '../../src/timeOff/cover.reactor.ts';
import { createCoverAskReactor } from '../../src/timeOff/coverAsk.reactor.ts';
import { createCoverAskPort } from '../../src/timeOff/coverAskPort.ts';
import { cardOnCallOf } from '../../src/timeOff/coverCard.ts';
import { createCoverConflictsReactor } from '../../src/timeOff/coverConflicts.reactor.ts';
import { nameOfSlackUser } from '../../src/timeOff/coverRanking.ts';
import { coverRoutes } from '../../src/timeOff/coverRoutes.ts';
import { createTimeOffEnricher } from '../../src/timeOff/enrich.ts';
import { createTimeOffHandOnReactor } from '../../src/timeOff/handOn.reactor.ts';
import { createTimeOffHomeSection } from '../../src/timeOff/home.ts';
import { createTimeOffHrCallsReactor } from '../../src/timeOff/hrCalls.reactor.ts';
import { slackChannelMembers } from '../../src/timeOff/hrChannel.ts';
import { createTimeOffHrSync, type TimeOffHrSync } from '../../src/timeOff/hrSync.ts';
import {
  createLeaversReactor,
  redrawLeaverReport,
  reportedShift,
} from '../../src/timeOff/leavers.reactor.ts';
import { createTimeOffNoticesReactor } from '../../src/timeOff/notices.reactor.ts';
import { timeOffParkedNotices } from '../../src/timeOff/parkedNotices.ts';
import { createTimeOffPeople, type TimeOffPeople } from '../../src/timeOff/people.ts';
import { createTimeOffQueries } from '../../src/timeOff/queries.ts';
import {
  createTimeOffReadModel,
  TIME_OFF_READ_MODEL,
  type TimeOffReadModel,
} from '../../src/timeOff/readModel.projection.ts';
import { timeOffRejectionText } from '../../src/timeOff/rejections.ts';
import { timeOffRoutes } from '../../src/timeOff/routes.ts';
import { createSickTodayReactor } from '../../src/timeOff/sickToday.reactor.ts';
import { createTimeOffTimersReactor } from '../../src/timeOff/timers.reactor.ts';
import { createWhosOutDailyReactor, whosOutDailyRoutes } from '../../src/timeOff/whosOutDaily.reactor.ts';
import { createHiBobClient, type HiBobAuthAlert, type HiBobClient } from '../../src/upstream/hibob.ts';
import { hibobWebhookVerify } from '../../src/upstream/hibobSignature.ts';
import { registerCoverAskListeners } from './coverAsk.ts';
import { register as registerTimeOffListeners } from './index.ts';
import { registerLeaverCoverListeners } from './leaverCover.ts';
import { hibobWebhookVerifier } from './webhooks.ts';

/**
 * The time-off lifecycle (HiBob-shaped HR service): `/timeoff`, `/whosout`, the approver's DM and
 * its buttons, `POST /webhooks/hibob`, its App Home section and the `absences` port. On when the
 * HIBOB_* credentials are set.
 *
 * HR has no "approve" call: Switchboard runs the approval (machines/timeOff/), then submits the
 * approved request with approval bypassed and the approver named, finds its HR id (the submit
 * answers none), reads it back through HR's read-after-write lag (up to ~20 s) and only then calls
 * it confirmed. Who is who comes from the employee directory kept as events (one people search
 * an hour, webhooks in between), never from a search per request.
 *
 * Where things are: rules in `machines/timeOff/`; the client wiring, reactors, read model and Block
 * Kit in `src/timeOff/`; the Slack and webhook edge here, with this module, which wires them.
 *
 * @example
 * const sb = await createSwitchboard({ config, logger, lifecycleOptions: { timeOff: { retry: { baseMs: 30 } } } });
 * await sb.lifecycle('timeOff')?.sync.refreshDirectory();
 */

export type TimeOffApi = Readonly<{
  client: HiBobClient;
  readModel: TimeOffReadModel;
  people: TimeOffPeople;
  sync: TimeOffHrSync;
}>;

export type TimeOffOptions = Readonly<{
  /** Durable retries of failed HR calls (default UPSTREAM_RETRY: 5 attempts from 2 s). */
  retry?: Partial<RetryPolicy>;
  /** Retries while a write is not visible in HR yet (default 8 attempts from 2 s, about 4 minutes). */
  lagRetry?: Partial<RetryPolicy>;
  /** The HR client (default: the real one, built from the configuration). */
  client?: HiBobClient;
  /** Full directory reads and changes polls, in ms (default from the configuration; 0: never on a timer). */
  directoryRefreshMs?: number;
  changesPollMs?: number;
  /** How long HR may take to show a write (default 30 s: the vendor's ~20 s and a margin). */
  hrLagMs?: number;
}>;

/**
 * While HR has not shown a write yet: after 5 s, then every 10 s, 26 looks (about 4 minutes in all).
 * HR usually shows a write within ~20 s, so a look every 10 s finds it within ~10 s of showing
 * (doubling delays, 2-6-14-30 s, found a write shown at 20 s only at 30 s: bench/timeOff.bench.ts).
 */
export const HR_LAG_RETRY: RetryPolicy = { baseMs: 5_000, maxMs: 10_000, jitter: 0.1, maxAttempts: 26 };

const createTimeOff = (
  config: TimeOffConfig,
  deps: LifecycleDeps,
  options: TimeOffOptions | undefined,
): LifecycleInstance<TimeOffApi> => {
  const { store, clock, slack, dispatch } = deps;
  const logger = deps.logger.child({ lifecycle: 'timeOff' });
  const authFailures = deps.metrics.registry.counter(
    'switchboard_hibob_auth_refused_total',
    'Times HR refused the service user credentials (401): every HR call then stops for 5 minutes; an operator alert',
    ['operation'],
  );
  const client =
    options?.client ??
    createHiBobClient({
      baseUrl: config.apiUrl,
      serviceUserId: config.serviceUserId,
      token: config.serviceUserToken,
      clock,
      logger,
      onAuthAlert: (alert: HiBobAuthAlert) => authFailures.inc({ operation: alert.operation }),
    });
  const verifySignature = hibobWebhookVerify({ secrets: config.webhookSecrets });
  const readModel = createTimeOffReadModel({ store });
  const people = createTimeOffPeople({
    readModel,
    people: deps.people,
    slack,
    now: () => clock.now(),
    hrChannel: config.hrChannel ?? null,
    zones: deps.readerZones,
  });
  const retry = { ...UPSTREAM_RETRY, ...options?.retry };
  const lagRetry = { ...HR_LAG_RETRY, ...options?.lagRetry };
  const hrLagMs = options?.hrLagMs ?? 30_000;
  const permissionMissing = deps.metrics.registry.counter(
    'switchboard_hibob_permission_refused_total',
    'HR calls refused for a permission the service user lacks (403): an operator alert',
    ['operation', 'permission'],
  );
  const sync = createTimeOffHrSync({
    store,
    hrLagMs,
    client,
    dispatch,
    readModel,
    clock,
    logger,
    retry,
    lagRetry,
    directoryRefreshMs: options?.directoryRefreshMs ?? config.directoryRefreshMinutes * 60_000,
    changesPollMs: options?.changesPollMs ?? config.changesPollMinutes * 60_000,
  });
  const timeZones = { of: async (slackUserId: string) => (await deps.readerZones.of(slackUserId)).tz };
  // Absences are intervals in each requester's zone (issue 19): leave known only from HR in the person's.
  const absences = createAbsences({ readModel, people, zoneOf: timeZones.of });
  // Issue 12: on-call conflicts and cover, through the incident module's ports (looked up when used).
  const nameOf = nameOfSlackUser({ readModel, slack });
  const coverOptions = {
    overrides: () => deps.ports.get('scheduleOverrides'),
    onCall: () => deps.ports.get('onCall'),
    dispatch,
    retry,
    outbox: deps.outbox,
    timeZones,
    nameOf,
  };
  const channelMembers = slackChannelMembers(slack);
  /** Issue 20: whom HR says left (never asked or picked to cover). */
  const hasLeft = async (slackUserId: string): Promise<boolean> => {
    await readModel.catchUp();
    const hrId = readModel.employeeOfSlackUser(slackUserId);
    return hrId !== null && employeeById(readModel.directory(), hrId)?.status === 'left';
  };
  const queries = createTimeOffQueries({ readModel, people, client, clock, logger, channelMembers });

  return {
    routes: { ...timeOffRoutes, ...coverRoutes, ...handOnRoutes, ...whosOutDailyRoutes },
    processors: [
      readModel.processor,
      createTimeOffHrCallsReactor({
        client,
        dispatch,
        retry,
        lagRetry,
        readModel,
        logger,
        hrLagMs,
        onPermissionMissing: (alert) => permissionMissing.inc(alert),
      }),
      ...sync.processors,
      createTimeOffTimersReactor(),
      // Issue 20 item 7: who's out, daily, in the configured channels.
      ...(config.whosOutDaily
        ? [
            createWhosOutDailyReactor({
              config: config.whosOutDaily,
              client,
              readModel,
              outbox: deps.outbox,
            }),
          ]
        : []),
      createTimeOffHandOnReactor({ dispatch, readModel, people, logger }),
      createCoverConflictsReactor({
        onCall: () => deps.ports.get('onCall'),
        absences,
        nameOf,
        dispatch,
        retry,
      }),
      createCoverCallsReactor(coverOptions),
      createCoverReactor(coverOptions),
      // Issue 20 item 5: sick today while on call: the rest of the shift covered at once.
      createSickTodayReactor({
        dispatch,
        outbox: deps.outbox,
        onCall: () => deps.ports.get('onCall'),
        incidents: () => deps.ports.get('incidentResponse'),
        pager: () => deps.ports.get('pager'),
        pastPolicies: config.pastPolicies,
        hr: () => ({
          readModel,
          slackUserOfEmployee: people.slackUserOfEmployee,
          absences,
          zoneOf: timeZones.of,
          nameOf,
        }),
      }),
      // Issue 20: cover asks (holes posted, colleagues asked by DM, the first to take one covers it).
      createCoverAskReactor({
        onCall: () => deps.ports.get('onCall'),
        dispatch,
        outbox: deps.outbox,
        timeZones,
        hasLeft,
        leaverAskChanged: (ctx, hrId) => redrawLeaverReport({ outbox: deps.outbox }, ctx, hrId),
      }),
      // Issue 12 (slice j-leaver): a leaver's phone forgotten, their shifts and policies reported.
      createLeaversReactor({ ports: deps.ports, people, readModel, outbox: deps.outbox, dispatch }),
      createTimeOffNoticesReactor({
        outbox: deps.outbox,
        dispatch,
        readModel,
        client,
        holidays: config.holidays,
        logger,
        // Issue 12: no section with incidents switched off; times in the approver's Slack zone.
        onCall: async (state, approver) =>
          deps.ports.get('onCall') ? cardOnCallOf(state.context, await timeZones.of(approver)) : null,
      }),
    ],
    listeners: (app, handlerDeps) => {
      // Issue 20: Accept / Can't on a cover ask's DM, Cover… on a hole posted in a channel.
      registerCoverAskListeners(app, { ...handlerDeps, coverAsks: { nameOf } });
      // Issue 12 (slice j-leaver): the leaver report's Cover… buttons and form.
      registerLeaverCoverListeners(app, {
        ...handlerDeps,
        leavers: {
          shift: (raw, channel) => reportedShift(store, raw, channel),
          openView: async (triggerId, view) => {
            await slack.views.open({ trigger_id: triggerId, view });
          },
          displayName: async (user) => (await slack.users.info({ user })).user?.real_name ?? null,
          colleagues: async (report, shift) => {
            const onCall = deps.ports.get('onCall');
            if (!onCall || !report.slackUserId) return [];
            const found = await onCall.colleaguesOf({
              person: { slackUserId: report.slackUserId },
              escalationPolicy: { id: shift.escalationPolicyId ?? '', name: shift.escalationPolicyName },
              level: shift.level ?? 1,
              schedule: { id: shift.scheduleId, name: shift.scheduleName },
              start: new Date(shift.start),
              end: new Date(shift.end),
            });
            const out: { slackUserId: string; displayName: string }[] = [];
            for (const p of found) {
              if (p.slackUserId === report.slackUserId || (await hasLeft(p.slackUserId))) continue;
              if (out.some((o) => o.slackUserId === p.slackUserId)) continue;
              out.push({ slackUserId: p.slackUserId, displayName: await nameOf(p.slackUserId) });
            }
            return out;
          },
          now: () => clock.now(),
        },
      });
      registerTimeOffListeners(app, {
        ...handlerDeps,
        timeOff: {
          queries,
          openView: async (triggerId, view) => {
            await slack.views.open({ trigger_id: triggerId, view });
          },
          holidays: config.holidays,
          approvalRules: config.approvalRules,
          pastPolicies: config.pastPolicies,
          clock,
          zoneOf: timeZones.of,
        },
      });
    },
    webhooks: [hibobWebhookVerifier({ verifySignature, logger, hrLagMs })],
    home: createTimeOffHomeSection({
      readModel,
      people,
      zoneOf: timeZones.of,
    }),
    rejectionText: timeOffRejectionText,
    enrich: createTimeOffEnricher({ readModel, absences, hrChannel: { channelMembers, people, logger } }),
    provides: {
      absences,
      // Issue 20: `/oncall cover` (the incident lifecycle's command) opens cover asks here.
      coverAsks: createCoverAskPort({
        onCall: () => deps.ports.get('onCall'),
        absences,
        nameOf,
        hasLeft,
        dispatch,
        timeZones,
        now: () => clock.now(),
        logger,
      }),
    },
    parkedNotices: timeOffParkedNotices,
    api: { client, readModel, people, sync },
  };
};

export const timeOff = defineLifecycle({
  ...timeOffDeclaration,
  readModels: [TIME_OFF_READ_MODEL],
  create: (config: TimeOffConfig, deps: LifecycleDeps, options: TimeOffOptions | undefined) =>
    createTimeOff(config, deps, options),
});

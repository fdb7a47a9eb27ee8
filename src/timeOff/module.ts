import { register as registerTimeOffListeners } from '../../handlers/timeOff/index.ts';
import { registerLeaverCoverListeners } from '../../handlers/timeOff/leaverCover.ts';
import { hibobWebhookVerifier } from '../../handlers/timeOff/webhooks.ts';
import { defineLifecycle, type LifecycleDeps, type LifecycleInstance } from '../lifecycles/lifecycle.ts';
import { type RetryPolicy, UPSTREAM_RETRY } from '../processors/retryPolicy.ts';
import type { SlackMessage } from '../slack/blocks/format.ts';
import { createHiBobClient, type HiBobAuthAlert, type HiBobClient } from '../upstream/hibob.ts';
import { hibobWebhookVerify } from '../upstream/hibobSignature.ts';
import { createAbsences } from './absences.ts';
import { handOnRoutes } from './approversRoutes.ts';
import { type TimeOffConfig, timeOffConfig } from './config.ts';
import { createCoverCallsReactor, createCoverReactor } from './cover.reactor.ts';
import { cardOnCallOf } from './coverCard.ts';
import { createCoverConflictsReactor } from './coverConflicts.reactor.ts';
import { coverAway, nameOfSlackUser } from './coverRanking.ts';
import { coverRoutes } from './coverRoutes.ts';
import { createTimeZones } from './coverText.ts';
import { createTimeOffHandOnReactor } from './handOn.reactor.ts';
import { createTimeOffHomeSection } from './home.ts';
import { createTimeOffHrCallsReactor } from './hrCalls.reactor.ts';
import { createTimeOffHrSync, type TimeOffHrSync } from './hrSync.ts';
import { createLeaversReactor, reportedShift } from './leavers.reactor.ts';
import { createTimeOffNoticesReactor } from './notices.reactor.ts';
import { createTimeOffPeople, type TimeOffPeople } from './people.ts';
import {
  createTimeOffReadModel,
  TIME_OFF_READ_MODEL,
  type TimeOffReadModel,
} from './readModel.projection.ts';
import { timeOffRejectionText } from './rejections.ts';
import { timeOffRoutes } from './routes.ts';
import { createTimeOffTimersReactor } from './timers.reactor.ts';

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
 * Where things are: rules in `machines/timeOff/`; the Slack and webhook edge in `handlers/timeOff/`;
 * the client wiring, reactors, read model and Block Kit here.
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
  const absences = createAbsences({ readModel, people });
  // Issue 12: on-call conflicts and cover, through the incident module's ports (looked up when used).
  const timeZones = createTimeZones(slack);
  const nameOf = nameOfSlackUser({ readModel, slack });
  const coverOptions = {
    overrides: () => deps.ports.get('scheduleOverrides'),
    onCall: () => deps.ports.get('onCall'),
    dispatch,
    retry,
    post: (channel: string, m: SlackMessage) => post(channel, m),
    timeZones,
    nameOf,
  };
  const post = async (channel: string, m: SlackMessage) => {
    const r = await slack.chat.postMessage({ channel, text: m.text, blocks: m.blocks });
    return { channel: r.channel ?? channel, ts: String(r.ts) };
  };

  return {
    routes: { ...timeOffRoutes, ...coverRoutes, ...handOnRoutes },
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
      // Issue 12 (slice j-leaver): a leaver's phone forgotten, their shifts and policies reported.
      createLeaversReactor({ ports: deps.ports, people, readModel, postMessage: post }),
      createTimeOffNoticesReactor({
        slack: {
          postMessage: post,
          updateMessage: async (channel, ts, m) => {
            await slack.chat.update({ channel, ts, text: m.text, blocks: m.blocks });
          },
        },
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
      // Issue 12 (slice j-leaver): the leaver report's Cover… buttons and form.
      registerLeaverCoverListeners(app, {
        ...handlerDeps,
        leavers: {
          shift: (raw, channel) => reportedShift(store, raw, channel),
          openView: async (triggerId, view) => {
            await slack.views.open({ trigger_id: triggerId, view });
          },
          displayName: async (user) => (await slack.users.info({ user })).user?.real_name ?? null,
          now: () => clock.now(),
        },
      });
      registerTimeOffListeners(app, {
        ...handlerDeps,
        timeOff: {
          readModel,
          people,
          client,
          openView: async (triggerId, view) => {
            await slack.views.open({ trigger_id: triggerId, view });
          },
          holidays: config.holidays,
          approvalRules: config.approvalRules,
          clock,
          hrChannel: config.hrChannel ?? null,
          coverAway: (timeOffId, slackUserId) => coverAway({ readModel, absences }, timeOffId, slackUserId),
          channelMembers: async (channel) => {
            const members: string[] = [];
            let cursor: string | undefined;
            for (let page = 0; page < 50; page++) {
              const r = await slack.conversations.members({
                channel,
                limit: 1000,
                ...(cursor ? { cursor } : {}),
              });
              members.push(...(r.members ?? []));
              cursor = r.response_metadata?.next_cursor || undefined;
              if (!cursor) break;
            }
            return members;
          },
        },
      });
    },
    webhooks: [hibobWebhookVerifier({ verifySignature, logger, hrLagMs })],
    home: createTimeOffHomeSection({ readModel, people }),
    rejectionText: timeOffRejectionText,
    provides: { absences },
    api: { client, readModel, people, sync },
  };
};

export const timeOff = defineLifecycle({
  name: 'timeOff',
  title: 'Time off',
  slashCommands: ['/timeoff', '/whosout'],
  config: timeOffConfig,
  readModels: [TIME_OFF_READ_MODEL],
  create: (config: TimeOffConfig, deps: LifecycleDeps, options: TimeOffOptions | undefined) =>
    createTimeOff(config, deps, options),
});

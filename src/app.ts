import { type App, type Receiver, SocketModeReceiver } from '@slack/bolt';
import { type HandlerDeps, registerSlackHandlers, webhookVerifiers } from '../handlers/index.ts';
import { webhookRoutes } from '../handlers/webhooks/routes.ts';
import { INCIDENT_USER_COMMANDS } from '../machines/incident/commands.ts';
import { type CommandBus, type CommandRoute, createCommandBus } from './application/dispatch.ts';
import { createInbox, type Inbox } from './application/inbox.ts';
import { type Config, describeSwitchedOff } from './config.ts';
import { type Clock, systemClock } from './core/clock.ts';
import { asError, ChatOpsError } from './core/errors.ts';
import type { EventStore } from './eventStore/eventStore.ts';
import { openEventStore } from './eventStore/openEventStore.ts';
import { createReadiness, opsRoutes, type Readiness, storeProbe } from './http/ops.ts';
import { createHttpServer, type HttpServer, type Route } from './http/server.ts';
import { SwitchboardBoltApp } from './http/slackApp.ts';
import { SlackHttpReceiver } from './http/slackReceiver.ts';
import { incidentRejectionText } from './incidents/blocks/incidentReplies.ts';
import { createIncidentCardsReactor } from './incidents/cards.reactor.ts';
import { createIncidentEnricher } from './incidents/enrich.ts';
import { createIncidentHomeReactor } from './incidents/home.reactor.ts';
import { createIncidentNoticesReactor } from './incidents/notices.reactor.ts';
import { createIncidentQueries, type IncidentHandlerDeps } from './incidents/queries.ts';
import { createIncidentReadModels, type IncidentReadModels } from './incidents/readModels.projection.ts';
import { incidentRoutes } from './incidents/routes.ts';
import { createServiceDirectory } from './incidents/services.ts';
import { createIncidentUpstreamReactor } from './incidents/upstreamCalls.reactor.ts';
import type { Logger } from './logger.ts';
import { createMetrics, type Metrics } from './metrics.ts';
import { createPeopleDirectory } from './people/directory.ts';
import { createIdentityResolver } from './people/identity.ts';
import { slackUserLookups } from './people/slackUsers.ts';
import { commandReplyRoutes } from './processors/commandReplies.decider.ts';
import { createCommandRepliesReactor, defaultRejectionText } from './processors/commandReplies.reactor.ts';
import { type CommandRejectedData, createInboxDispatchReactor } from './processors/inboxDispatch.reactor.ts';
import type { SlackReplies, SlackReplyMessage } from './processors/ports.ts';
import { createResponseUrlPoster } from './processors/responseUrl.ts';
import { type RetryPolicy, UPSTREAM_RETRY } from './processors/retryPolicy.ts';
import { createProcessorRunner, type Processor, type ProcessorRunner } from './processors/runner.ts';
import { createScheduler } from './processors/scheduler.ts';
import type { SlackMessage } from './slack/blocks/format.ts';
import { createBoltLogger } from './slack/boltLogger.ts';
import { createSlackWebClient, type SwitchboardWebClient, slackClientOptions } from './slack/webClient.ts';
import { createPagerDutyClient, type PagerDutyClient, paginate } from './upstream/pagerduty.ts';

/**
 * THE composition root (style.md rule 7): the only place that builds things and wires them.
 * Everything else receives its dependencies as arguments.
 *
 * Start order: store → services (processors, scheduler) → Bolt (auth.test against Slack) → HTTP.
 * Stop order (SIGTERM): HTTP stops taking requests and finishes those in flight → Socket Mode
 * disconnects → services stop in reverse order (each finishes the event in hand and
 * checkpoints) → the store closes.
 *
 * @example
 * const sb = await createSwitchboard({ config: loadConfig(processEnv()), logger });
 * const { url } = await sb.start();
 * ...; await sb.stop();
 */

/** Something with a lifetime: processors, the scheduler, pollers. */
export type Service = Readonly<{
  name: string;
  start(): Promise<void>;
  /** Finish the work in hand, checkpoint, and stop. */
  stop(): Promise<void>;
}>;

export type SwitchboardOptions = Readonly<{
  config: Config;
  logger: Logger;
  clock?: Clock;
  /** An open store to use instead of opening `config.eventStoreUrl` (the sandbox shares one). It is closed on stop. */
  store?: EventStore;
  /** Interface to bind; all interfaces when omitted. Tests pass 127.0.0.1. */
  host?: string;
  /** How long stop() waits for requests in flight before cutting connections. Default 5 s. */
  httpGraceMs?: number;
  /** /readyz fails while a processor is more than this many events behind. Default 1000. */
  maxProcessorLag?: number;
  /** How often the scheduler looks for due timers (ms). Default 1000; tests shorten it. */
  schedulerPollMs?: number;
  /** Durable retries of incident-service calls (default UPSTREAM_RETRY: 5 attempts from 2 s). */
  incidentRetry?: Partial<RetryPolicy>;
  /**
   * Longest Slack `Retry-After` the Web API client waits out inside one call (default 10 s); longer
   * ones fail the call with SB_UPSTREAM_RATE_LIMITED for the processor to wait or retry durably.
   */
  slackMaxInlineWaitMs?: number;
}>;

export type Switchboard = Readonly<{
  config: Config;
  logger: Logger;
  clock: Clock;
  store: EventStore;
  inbox: Inbox;
  metrics: Metrics;
  readiness: Readiness;
  bolt: App;
  /** Web API client for processors (bounded retries, coded errors, metrics). */
  slack: SwitchboardWebClient;
  /** Command type → lifecycle decider; what the inbox dispatcher and the scheduler dispatch to. */
  bus: CommandBus;
  /** The processors (inbox dispatch, command replies, scheduler, lifecycle reactors). */
  processors: ProcessorRunner;
  /** The incident lifecycle's client and read models; undefined when incidents are switched off. */
  incidents: Readonly<{ pagerduty: PagerDutyClient; readModels: IncidentReadModels }> | undefined;
  http: HttpServer;
  /** Adds a service; started by start() (or at once if already started), stopped by stop(). */
  addService(service: Service): Promise<void>;
  /** Starts services, checks the Slack token, listens. Resolves with the bound port and base URL. */
  start(): Promise<{ port: number; url: string }>;
  /** Graceful stop; idempotent. */
  stop(): Promise<void>;
}>;

/** A refused incident move says who got there first ("Already acknowledged by <@U1> at 02:04 UTC."). */
const formatRejection = (r: CommandRejectedData): SlackReplyMessage =>
  r.code === 'SB_ILLEGAL_STATE' &&
  INCIDENT_USER_COMMANDS.has(r.commandType) &&
  typeof r.details.reason === 'string'
    ? { text: `:warning: ${incidentRejectionText(r.details, r.actor)}` }
    : defaultRejectionText(r);

export const createSwitchboard = async (options: SwitchboardOptions): Promise<Switchboard> => {
  const { config, logger } = options;
  const clock = options.clock ?? systemClock;
  const metrics = createMetrics();
  const readiness = createReadiness();

  const store = options.store ?? (await openEventStore(config.eventStoreUrl));
  readiness.add(storeProbe(store));
  const inbox = createInbox({ store, metrics });
  const people = createPeopleDirectory({ store, now: () => clock.now() });

  const clientOptions = { slack: config.slack, logger, metrics };
  const slack = createSlackWebClient({
    ...clientOptions,
    ...(options.slackMaxInlineWaitMs === undefined ? {} : { maxInlineWaitMs: options.slackMaxInlineWaitMs }),
  });

  const boltLogger = createBoltLogger(logger);
  let receiver: Receiver;
  let httpReceiver: SlackHttpReceiver | undefined;
  if (config.slack.socketMode) {
    receiver = new SocketModeReceiver({ appToken: config.slack.appToken ?? '', logger: boltLogger });
  } else {
    httpReceiver = new SlackHttpReceiver({
      signingSecret: config.slack.signingSecret ?? '',
      logger: logger.child({ component: 'slack-receiver' }),
      metrics,
      clock,
    });
    receiver = httpReceiver;
  }
  const bolt = new SwitchboardBoltApp({
    receiver,
    token: config.slack.botToken,
    logger: boltLogger,
    clientOptions: slackClientOptions(clientOptions),
    // Conversation state would live in memory; ours lives in the store.
    convoStore: false,
    // auth.test runs in start(), so a bad token stops the start with a clear error.
    deferInitialization: true,
  });
  // Errors reach the receiver, which answers and logs them (a 5xx makes Slack redeliver events).
  bolt.error(async (error) => {
    throw error;
  });

  // Lifecycles add their command routes here when switched on.
  const lifecycleRoutes: Record<string, CommandRoute> = {};
  const lifecycleProcessors: Processor[] = [];
  let enrich: Parameters<typeof createInboxDispatchReactor>[0]['enrich'];
  let incidentHandlers: IncidentHandlerDeps | undefined;
  let incidents: Switchboard['incidents'];
  // The bus is built below from every route; reactors dispatch through it once it exists.
  const dispatch = (command: Parameters<CommandBus['dispatch']>[0]) => bus.dispatch(command);

  if (config.lifecycles.incidents && config.pagerduty) {
    const pd = config.pagerduty;
    const pagerduty = createPagerDutyClient({
      apiUrl: pd.apiUrl,
      eventsUrl: pd.eventsUrl,
      token: pd.token,
      clock,
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
    const identity = createIdentityResolver({
      directory: people,
      system: 'incidents',
      systemName: 'the incident service',
      now: () => clock.now(),
      findUpstreamUser: (email) => pagerduty.findUserByEmail(email),
      upstreamUser: (id) => pagerduty.getUser(id),
      ...slackUserLookups(slack),
    });
    const post = async (channel: string, m: SlackMessage) => {
      const r = await slack.chat.postMessage({ channel, text: m.text, blocks: m.blocks });
      return { channel: r.channel ?? channel, ts: String(r.ts) };
    };
    Object.assign(lifecycleRoutes, incidentRoutes({ streamForUpstreamId: readModels.streamForUpstreamId }));
    lifecycleProcessors.push(
      readModels.processor,
      createIncidentUpstreamReactor({
        pagerduty,
        dispatch,
        slackUserOf: readModels.slackUserOf,
        retry: { ...UPSTREAM_RETRY, ...options.incidentRetry },
      }),
      createIncidentCardsReactor({
        dispatch,
        slackUserOf: readModels.slackUserOf,
        // Mentions for people named by the incident service: at most 2 s per render, then the card
        // goes out with names (and mentions them on a later change).
        findSlackUsers: async (ids) => {
          const lookups = Promise.all(ids.slice(0, 10).map((id) => identity.slackUserFor(id)));
          const found = await Promise.race([
            lookups,
            new Promise<null>((r) => setTimeout(() => r(null), 2_000).unref()),
          ]);
          if (found?.some((id) => id !== null)) await readModels.catchUp();
        },
        channelsFor: async (serviceId) => {
          await readModels.catchUp();
          return readModels.channelsForService(serviceId);
        },
        slack: {
          postMessage: post,
          updateMessage: async (channel, ts, m) => {
            await slack.chat.update({ channel, ts, text: m.text, blocks: m.blocks });
          },
        },
      }),
      createIncidentNoticesReactor({ slack: { postMessage: post } }),
      createIncidentHomeReactor({
        readModels,
        identity,
        slack: {
          publishHome: async (userId, view) => {
            await slack.views.publish({ user_id: userId, view });
          },
        },
      }),
    );
    enrich = createIncidentEnricher({ identity, services, readModels });
    incidentHandlers = {
      queries: createIncidentQueries({ store, readModels, services, identity, pagerduty }),
      openView: async (triggerId, view) => {
        await slack.views.open({ trigger_id: triggerId, view });
      },
    };
    incidents = { pagerduty, readModels };
  }
  const bus = createCommandBus(store, { ...commandReplyRoutes, ...lifecycleRoutes });

  const slackReplies: SlackReplies = {
    // response_urls come from request bodies: only Slack's host (and the fake Slack when
    // SLACK_API_URL points at one, in tests and the sandbox) may be posted to.
    respond: createResponseUrlPoster({
      allowedOrigins: [
        'https://hooks.slack.com',
        ...(config.slack.apiUrl ? [new URL(config.slack.apiUrl).origin] : []),
      ],
    }),
    postEphemeral: async (channel, user, message) => {
      await slack.chat.postEphemeral({
        channel,
        user,
        text: message.text,
        ...(message.blocks ? { blocks: [...message.blocks] as never } : {}),
      });
    },
  };
  const processors = createProcessorRunner({
    store,
    clock,
    logger: logger.child({ component: 'processors' }),
    processors: [
      createInboxDispatchReactor({ dispatch: bus.dispatch, ...(enrich ? { enrich } : {}) }),
      createCommandRepliesReactor({ replies: slackReplies, formatRejection }),
      createScheduler({ dispatch: bus.dispatch, pollIntervalMs: options.schedulerPollMs ?? 1_000 }),
      // Lifecycle reactors (cards, upstream calls, read models, notices).
      ...lifecycleProcessors,
    ],
  });
  const maxLag = options.maxProcessorLag ?? 1_000;
  const refreshProcessorMetrics = async () => {
    const statuses = await processors.status();
    for (const s of statuses) metrics.processorLag.set({ processor: s.id }, s.lag);
    return statuses;
  };
  readiness.add({
    name: 'processors',
    check: async () => {
      const behind = (await refreshProcessorMetrics()).filter((s) => !s.running || s.lag > maxLag);
      return behind.length === 0
        ? { ok: true }
        : {
            ok: false,
            detail: behind.map((s) => `${s.id}: ${s.running ? `${s.lag} behind` : 'stopped'}`).join('; '),
          };
    },
  });

  const handlerDeps: HandlerDeps = {
    inbox,
    clock,
    logger,
    config,
    ...(incidentHandlers ? { incidents: incidentHandlers } : {}),
  };
  registerSlackHandlers(bolt, handlerDeps);

  const routes: Route[] = [
    ...(httpReceiver ? [httpReceiver.route()] : []),
    ...webhookRoutes(
      webhookVerifiers(handlerDeps, incidents ? { slackUserOf: incidents.readModels.slackUserOf } : {}),
      { inbox, clock, logger },
    ),
    ...opsRoutes({ readiness, metrics, beforeMetrics: async () => void (await refreshProcessorMetrics()) }),
  ];
  const server = createHttpServer({ routes, logger: logger.child({ component: 'http' }), metrics });

  for (const line of describeSwitchedOff(config)) logger.info({ lifecycle: 'off' }, line);

  // The processor runner is the first service: started before Slack traffic, stopped after it.
  const services: Service[] = [{ name: 'processors', start: processors.start, stop: processors.stop }];
  let started = false;
  let stopping: Promise<void> | undefined;

  const startService = async (service: Service) => {
    await service.start();
    logger.debug({ service: service.name }, 'service started');
  };

  return {
    config,
    logger,
    clock,
    store,
    inbox,
    metrics,
    readiness,
    bolt,
    slack,
    bus,
    processors,
    incidents,
    http: server,
    async addService(service) {
      services.push(service);
      if (started) await startService(service);
    },
    async start() {
      if (started) throw new Error('Switchboard already started');
      started = true;
      for (const service of services) await startService(service);
      try {
        await bolt.init();
      } catch (e) {
        const slackError = (e as { data?: { error?: string } }).data?.error;
        throw new ChatOpsError(
          'SB_UPSTREAM_AUTH',
          `Slack did not accept SLACK_BOT_TOKEN (auth.test: ${slackError ?? asError(e).message})`,
          { cause: e },
        );
      }
      if (config.slack.socketMode) await receiver.start();
      const port = await server.listen(config.port, options.host);
      const url = `http://${options.host ?? '127.0.0.1'}:${port}`;
      logger.info(
        { port, store: store.kind, socketMode: config.slack.socketMode, lifecycles: config.lifecycles },
        'Switchboard is listening',
      );
      return { port, url };
    },
    stop() {
      stopping ??= (async () => {
        logger.info('Switchboard is stopping');
        await server.close(options.httpGraceMs);
        if (config.slack.socketMode && started) await receiver.stop().catch(() => undefined);
        for (const service of [...services].reverse()) {
          try {
            await service.stop();
          } catch (e) {
            logger.error({ err: asError(e), service: service.name }, 'service failed to stop cleanly');
          }
        }
        await store.close();
        logger.info('Switchboard stopped; store closed');
      })();
      return stopping;
    },
  };
};

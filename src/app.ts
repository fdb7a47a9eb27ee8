import { type App, type Receiver, SocketModeReceiver } from '@slack/bolt';
import { registerSlackHandlers } from '../handlers/index.ts';
import { type CommandBus, createCommandBus } from './application/dispatch.ts';
import { createInbox, type Inbox } from './application/inbox.ts';
import { type Config, describeSwitchedOff } from './config.ts';
import { type Clock, systemClock } from './core/clock.ts';
import { asError } from './core/errors.ts';
import { createKeyRing } from './core/keyRing.ts';
import { knowSecrets } from './core/scrub.ts';
import { RESPONSE_URL_PURPOSE } from './core/sealed.ts';
import type { EventStore } from './eventStore/eventStore.ts';
import { openEventStore } from './eventStore/openEventStore.ts';
import { createReadiness, opsRoutes, type Readiness, storeProbe } from './http/ops.ts';
import { responseUrlOrigins } from './http/responseUrlGuard.ts';
import { createHttpServer, type HttpServer, type Route } from './http/server.ts';
import { SwitchboardBoltApp } from './http/slackApp.ts';
import { SlackHttpReceiver } from './http/slackReceiver.ts';
import { webhookRoutes } from './http/webhookRoutes.ts';
import {
  ALL_LIFECYCLES,
  LIFECYCLES,
  type LifecycleApi,
  type LifecycleName,
  type LifecycleOptions,
} from './lifecycleList.ts';
import {
  checkReadModels,
  claimCommandRoutes,
  enrichByOwner,
  parkedNoticeOwners,
  type RunningLifecycle,
  rejectionTextByOwner,
  slashCommandOwners,
} from './lifecycles/compose.ts';
import type { LifecycleDeclaration } from './lifecycles/config.ts';
import { createAppHomeReactor } from './lifecycles/home.reactor.ts';
import {
  type HandlerDeps,
  type LifecycleDeps,
  type ListedLifecycle,
  moduleOf,
} from './lifecycles/lifecycle.ts';
import { createPortDirectory, type PortDirectory, type PortOffer } from './lifecycles/ports.ts';
import type { Logger } from './logger.ts';
import { createMetrics, type Metrics } from './metrics.ts';
import { createPeopleDirectory, type PeopleDirectory } from './people/directory.ts';
import { createClaims } from './processors/claims.ts';
import { commandReplyRoutes } from './processors/commandReplies.decider.ts';
import { createCommandRepliesReactor, defaultRejectionText } from './processors/commandReplies.reactor.ts';
import { createInboxDispatchReactor } from './processors/inboxDispatch.reactor.ts';
import type { SlackReplies } from './processors/ports.ts';
import { createResponseUrlPoster } from './processors/responseUrl.ts';
import { createProcessorRunner, type ProcessorRunner } from './processors/runner.ts';
import { createScheduler, SCHEDULER_READ_MODEL, type Scheduler } from './processors/scheduler.ts';
import { slackAuthCheckError } from './slack/authCheck.ts';
import { createBoltLogger } from './slack/boltLogger.ts';
import { createSlackOutbox } from './slack/outbox.ts';
import { slackOutboxTransport } from './slack/outboxTransport.ts';
import { createParkedNoticesReactor } from './slack/parkedNotices.reactor.ts';
import { createReaderZones } from './slack/time.ts';
import { createSlackWebClient, type SwitchboardWebClient, slackClientOptions } from './slack/webClient.ts';

/**
 * THE composition root: the only place that builds the shared machinery and wires it. Everything
 * else receives its dependencies as arguments. It names no lifecycle and no vendor: it loops over
 * the lifecycle modules (src/lifecycleList.ts) that are switched on, creates each, and plugs in
 * what it returns (command routes, processors, Slack listeners, webhook routes, App Home section,
 * refusal texts, enrich step, ports). A slash command, command type or port claimed twice stops
 * the start with an SB_CONFIG error naming both claimants.
 *
 * Start order: store → each lifecycle's preflight (person keys checked against the data key ring,
 * re-wrapped) → services (processors, scheduler) → Bolt (auth.test against Slack) → HTTP.
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
  /** Each lifecycle's own knobs, by name: `{ incidents: { retry: { baseMs: 30 } } }`. */
  lifecycleOptions?: LifecycleOptions;
  /** The lifecycles to run (default: the list in src/lifecycleList.ts); tests pass other modules. */
  lifecycles?: readonly ListedLifecycle[];
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
  /** The durable scheduler among them (`tick()` fires what is due now; tests settle with it). */
  scheduler: Scheduler;
  /** Who people are in every system, shared by the lifecycles. */
  people: PeopleDirectory;
  /** A running lifecycle's `api` (`sb.lifecycle('incidents')?.readModels`); undefined when it is off. */
  lifecycle<N extends LifecycleName>(name: N): LifecycleApi<N> | undefined;
  /** What the switched-on lifecycles offer each other (on-call lookups, …). */
  ports: PortDirectory;
  http: HttpServer;
  /** Adds a service; started by start() (or at once if already started), stopped by stop(). */
  addService(service: Service): Promise<void>;
  /** Starts services, checks the Slack token, listens. Resolves with the bound port and base URL. */
  start(): Promise<{ port: number; url: string }>;
  /** Graceful stop; idempotent. */
  stop(): Promise<void>;
}>;

export const createSwitchboard = async (options: SwitchboardOptions): Promise<Switchboard> => {
  const { config, logger } = options;
  knowSecrets(config.secrets); // error text is scrubbed of them before it is stored or shown
  const clock = options.clock ?? systemClock;
  const metrics = createMetrics();
  const readiness = createReadiness();

  // Every declared lifecycle (run here or planned) owns its slash commands, on or off.
  const modules = options.lifecycles ?? LIFECYCLES;
  const declared: readonly LifecycleDeclaration[] = [
    ...modules,
    ...ALL_LIFECYCLES.filter((l) => !modules.some((m) => m.name === l.name)),
  ];
  const commandOwners = slashCommandOwners(declared, config.lifecycles);
  // Only the switched-on lifecycles' code is loaded, beside the store's opening; each is created
  // below, in list order. (Handled here so a failed load is not an unhandled rejection meanwhile.)
  const loading = Promise.all(modules.filter((m) => config.lifecycles[m.name] === true).map(moduleOf));
  loading.catch(() => undefined);

  const store = options.store ?? (await openEventStore(config.eventStoreUrl));
  readiness.add(storeProbe(store));
  // What is kept sealed at rest is sealed on the data key ring (SWITCHBOARD_DATA_KEYS); values
  // sealed before it open through its legacy entries (the vendor secrets they were sealed under).
  const keyRing = createKeyRing(config.dataKeys.ring, config.dataKeys.legacy);
  // response_urls are bearer capabilities: stored sealed, opened only by the reply poster.
  const responseUrls = keyRing.sealer(RESPONSE_URL_PURPOSE);
  const inbox = createInbox({ store, metrics, sealResponseUrl: responseUrls.seal });
  const people = createPeopleDirectory({ store, now: () => clock.now() });

  const clientOptions = { slack: config.slack, logger, metrics };
  const slack = createSlackWebClient({
    ...clientOptions,
    ...(options.slackMaxInlineWaitMs === undefined ? {} : { maxInlineWaitMs: options.slackMaxInlineWaitMs }),
  });

  // Each reader's Slack time zone (issue 19), looked up once an hour per person for every lifecycle.
  const readerZones = createReaderZones({ slack, now: () => clock.now().getTime() });

  // Every notice, card, report and DM goes through one outbox: post once, update in place, Retry-After.
  const outbox = createSlackOutbox({
    transport: slackOutboxTransport(slack),
    logger: logger.child({ component: 'slack-outbox' }),
    // A DM's times in its recipient's zone (issue 19 item 3); a channel's stay in UTC.
    zoneOf: async (user) => (await readerZones.of(user)).tz,
  });

  const boltLogger = createBoltLogger(logger);
  let receiver: Receiver;
  let httpReceiver: SlackHttpReceiver | undefined;
  if (config.slack.socketMode) {
    receiver = new SocketModeReceiver({ appToken: config.slack.appToken ?? '', logger: boltLogger });
  } else {
    httpReceiver = new SlackHttpReceiver({
      signingSecret: config.slack.signingSecrets,
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
    responseUrlOrigins: responseUrlOrigins(config.slack.apiUrl),
  });
  // Errors reach the receiver, which answers and logs them (a 5xx makes Slack redeliver events).
  bolt.error(async (error) => {
    throw error;
  });

  const slackReplies: SlackReplies = {
    // response_urls come from request bodies: only Slack's host (and the fake Slack when
    // SLACK_API_URL points at one, in tests and the sandbox) may be posted to.
    respond: createResponseUrlPoster({
      allowedOrigins: responseUrlOrigins(config.slack.apiUrl),
      open: responseUrls.open,
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
  // The switched-on lifecycles, created in list order. Ports and the bus exist once all of them are.
  let offers: PortOffer[] | undefined;
  const ports = createPortDirectory(() => offers);
  // The bus is built below from every route; reactors dispatch through it once it exists.
  const dispatch = (command: Parameters<CommandBus['dispatch']>[0]) => bus.dispatch(command);
  const lifecycleDeps: LifecycleDeps = {
    store,
    clock,
    logger,
    slack,
    outbox,
    people,
    dispatch,
    ports,
    replies: slackReplies,
    metrics,
    keyRing,
    readerZones,
  };
  const lifecycleOptions = (options.lifecycleOptions ?? {}) as Readonly<Record<string, unknown>>;
  const createLifecycles = async () => {
    const running: RunningLifecycle[] = (await loading).map((module) => ({
      module,
      instance: module.create(
        config.slices[module.name],
        { ...lifecycleDeps, logger: logger.child({ lifecycle: module.name }) },
        lifecycleOptions[module.name],
      ),
    }));
    offers = running.map((r) => ({ lifecycle: r.module.name, provides: r.instance.provides ?? {} }));
    ports.check();
    checkReadModels(running, [SCHEDULER_READ_MODEL.name]);
    const claimed = claimCommandRoutes(
      { name: 'Switchboard (command replies)', routes: commandReplyRoutes },
      running,
    );
    return { running, ...claimed, parkedOwnerOf: parkedNoticeOwners(running) };
  };
  let lifecycles: Awaited<ReturnType<typeof createLifecycles>>;
  try {
    lifecycles = await createLifecycles();
  } catch (e) {
    // A module failed to load, or claimed what another one has: nothing started, so only the store
    // needs closing.
    if (!options.store) await store.close();
    throw e;
  }
  const { running, routes: commandRoutes, ownerOf, parkedOwnerOf } = lifecycles;
  const bus = createCommandBus(store, commandRoutes);
  const instances = running.map((r) => r.instance);
  const homeSections = instances.flatMap((i) => (i.home ? [i.home] : []));

  const enrich = enrichByOwner(ownerOf);
  // Several replicas may share the store: effectful processors run where their claim is held.
  const claims = createClaims({
    store,
    clock,
    replicaId: config.replica.id,
    expiryMs: config.replica.claimExpiryMs,
  });
  const scheduler = createScheduler({
    dispatch: bus.dispatch,
    pollIntervalMs: options.schedulerPollMs ?? 1_000,
  });
  const processors = createProcessorRunner({
    store,
    clock,
    claims,
    logger: logger.child({ component: 'processors' }),
    processors: [
      createInboxDispatchReactor({ dispatch: bus.dispatch, ...(enrich ? { enrich } : {}) }),
      createCommandRepliesReactor({
        replies: slackReplies,
        formatRejection: rejectionTextByOwner(ownerOf, defaultRejectionText),
      }),
      scheduler,
      // Issue 18: a parked event is said, in words, to whoever waited on it (and to operators).
      createParkedNoticesReactor({
        outbox,
        ownerOf: parkedOwnerOf,
        operatorsChannel: config.operatorsChannel,
      }),
      ...(homeSections.length
        ? [
            createAppHomeReactor({
              sections: homeSections,
              slack: {
                publishHome: (userId, view) => outbox.publishHome(userId, view),
              },
            }),
          ]
        : []),
      // Lifecycle reactors (cards, upstream calls, read models, notices, …).
      ...instances.flatMap((i) => i.processors ?? []),
    ],
  });
  const maxLag = options.maxProcessorLag ?? 1_000;
  const refreshProcessorMetrics = async () => {
    const statuses = await processors.status();
    for (const s of statuses) {
      // A processor another replica runs is that replica's lag to report.
      metrics.processorLag.set({ processor: s.id }, s.claim && !s.claim.held ? 0 : s.lag);
      metrics.processorParked.set({ processor: s.id }, s.parked);
      if (s.claim)
        metrics.processorClaimHeld.set({ processor: s.id, replica: claims.replicaId }, s.claim.held ? 1 : 0);
    }
    return statuses;
  };
  readiness.add({
    name: 'processors',
    check: async () => {
      const statuses = await refreshProcessorMetrics();
      // A processor another replica holds is not this replica's to run.
      const behind = statuses.filter(
        (s) => (s.claim === undefined || s.claim.held) && (!s.running || s.lag > maxLag),
      );
      const problems = behind.map((s) => `${s.id}: ${s.running ? `${s.lag} behind` : 'stopped'}`);
      // When this replica does not run every claimed processor, say who does (one replica: nothing).
      const elsewhere = new Map<string, string[]>();
      for (const s of statuses) {
        if (!s.claim || s.claim.held) continue;
        const owner = s.claim.owner ?? 'nobody (being claimed)';
        elsewhere.set(owner, [...(elsewhere.get(owner) ?? []), s.id]);
      }
      const holders = [...elsewhere].map(([owner, ids]) => `held by ${owner}: ${ids.join(', ')}`);
      const detail = [
        ...problems,
        ...(holders.length > 0 ? [`replica ${claims.replicaId} runs the others`, ...holders] : []),
      ].join('; ');
      return { ok: behind.length === 0, ...(detail ? { detail } : {}) };
    },
  });

  const handlerDeps: HandlerDeps = { inbox, clock, logger };
  registerSlackHandlers(bolt, handlerDeps, {
    commandOwners,
    helpCommands: declared.flatMap((l) => l.slashCommands.slice(0, 1)),
    sensitiveActionIds: new Set(instances.flatMap((i) => i.sensitiveActionIds ?? [])),
    sensitiveSlashCommands: new Set(instances.flatMap((i) => i.sensitiveSlashCommands ?? [])),
    appHome: homeSections.length > 0,
  });
  for (const i of instances) i.listeners?.(bolt, handlerDeps);

  const routes: Route[] = [
    ...(httpReceiver ? [httpReceiver.route()] : []),
    ...webhookRoutes(
      instances.flatMap((i) => i.webhooks ?? []),
      { inbox, clock, logger },
    ),
    ...opsRoutes({ readiness, metrics, beforeMetrics: async () => void (await refreshProcessorMetrics()) }),
  ];
  const server = createHttpServer({ routes, logger: logger.child({ component: 'http' }), metrics });

  for (const line of describeSwitchedOff(config, declared)) logger.info({ lifecycle: 'off' }, line);

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
    scheduler,
    people,
    lifecycle: <N extends LifecycleName>(name: N) =>
      running.find((r) => r.module.name === name)?.instance.api as LifecycleApi<N> | undefined,
    ports,
    http: server,
    async addService(service) {
      services.push(service);
      if (started) await startService(service);
    },
    async start() {
      if (started) throw new Error('Switchboard already started');
      started = true;
      // Before any processor or request: a module that cannot serve (a data key ring that cannot
      // open the person keys in the store) refuses the start here, not by parking events later.
      for (const instance of instances) await instance.preflight?.();
      for (const service of services) await startService(service);
      try {
        await bolt.init();
      } catch (e) {
        throw slackAuthCheckError(e, config.slack.apiUrl);
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

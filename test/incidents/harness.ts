import { join } from 'node:path';
import type { IncidentsOptions } from '../../handlers/incident/module.ts';
import {
  type PagerDutySimulator,
  type PagerDutySimulatorOptions,
  startPagerDutySimulator,
} from '../../sandbox/simulators/pagerduty/index.ts';
import { connectAll, type Simulator, simulatorEnv } from '../../sandbox/simulators/simulator.ts';
import type { FakeMessage, FakeSlack } from '../../sandbox/simulators/slack/fakeSlack.ts';
import { nowSeconds } from '../../sandbox/simulators/slack/signing.ts';
import { createSwitchboard, type Switchboard } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import type { Clock } from '../../src/core/clock.ts';
import type { RecordedEvent } from '../../src/eventStore/eventStore.ts';
import { openEventStore } from '../../src/eventStore/openEventStore.ts';
import { ALL_LIFECYCLES } from '../../src/lifecycleList.ts';
import { createLogger } from '../../src/logger.ts';
import { createLogSink, type LogSink } from '../support/logSink.ts';
import { settle } from '../support/settle.ts';
import { slackDriver, startTestSlack } from '../support/slackHarness.ts';
import { type SignedPostOptions, tempDir, testEnv } from '../support/startApp.ts';
import { waitFor } from '../support/waitFor.ts';

/**
 * The incident lifecycle end to end: the real app (createSwitchboard on a temp SQLite file, real
 * HTTP), the fake Slack Web API and the PagerDuty simulator subscribed to the app's webhook route.
 * Slack users and incident-service users share emails, as the identity mapping expects: Ana,
 * Ben and Chen exist in both; Nora only in Slack.
 */
export const WEBHOOK_SECRET = 'whsec-incident-e2e-7c1d';
export const ANA = { slack: 'U0ANA', email: 'ana.silva@example.org', pd: 'PUSR001' } as const;
export const BEN = { slack: 'U0BEN', email: 'ben.okafor@example.org', pd: 'PUSR002' } as const;
export const CHEN = { slack: 'U0CHEN', email: 'chen.wei@example.org', pd: 'PUSR003' } as const;
export const NORA = { slack: 'U0NORA', email: 'nora@example.com' } as const;
export const OPS = 'C0OPS';
export const PAYMENTS_CHANNEL = 'C0PAYMENTS';
export const PAYMENTS_API = {
  id: 'PSVC001',
  name: 'Payments API',
  routingKey: 'a1b2c3d4e5f60718293a4b5c6d7e8f90',
};

export type IncidentHarness = Readonly<{
  /** The app as running now (a new one after `restart`). */
  readonly sb: Switchboard;
  url: string;
  /** The app's SQLite file (for the store CLI). */
  dbPath: string;
  fake: FakeSlack;
  sim: PagerDutySimulator;
  logs: LogSink;
  post(body: string, kind: 'form' | 'json', options?: SignedPostOptions): Promise<Response>;
  /** `/incident <text>` (or another command) as `user` in `channel`; returns the HTTP answer's JSON. */
  slash(
    text: string,
    options?: Readonly<{
      user?: string;
      channel?: string;
      command?: string;
      triggerId?: string;
      headers?: Record<string, string>;
    }>,
  ): Promise<{ status: number; body: Record<string, unknown> | null; responseUrl: string }>;
  /**
   * A query's answer as the user sees it: the ack's body, or (when the app answered "Looking up…"
   * because the query took over its 3 s budget) what it then posted to the response_url.
   */
  answer(res: Readonly<{ body: Record<string, unknown> | null; responseUrl: string }>): Promise<string>;
  /** Clicks a button of a card (as Slack posts it). */
  click(
    actionId: string,
    value: string,
    options?: Readonly<{
      user?: string;
      channel?: string;
      actionTs?: string;
      triggerId?: string;
      extra?: Record<string, unknown>;
      /** The message the button is on (`container.message_ts`). */
      messageTs?: string;
    }>,
  ): Promise<{ status: number; responseUrl: string; payload: Record<string, unknown> }>;
  submitView(
    callbackId: string,
    values: Record<string, unknown>,
    privateMetadata: string,
    user?: string,
  ): Promise<{ status: number; body: Record<string, unknown> | null }>;
  /** Every message of an incident stream. */
  stream(streamId: string): Promise<RecordedEvent[]>;
  /** The incident stream holding upstream incident `number`. */
  streamOfNumber(number: number): Promise<string>;
  /** Cards (bot messages with blocks) in a channel. */
  cards(channel: string): FakeMessage[];
  /** `/incident trigger Payments API <title>` as Ana in #ops; resolves once its card shows it triggered. */
  trigger(
    title: string,
  ): Promise<{ streamId: string; incidentId: string; number: number; card: FakeMessage }>;
  /** The card of an incident in a channel (by its number), as it is now. */
  cardOf(channel: string, number: number): FakeMessage | undefined;
  /** Ephemeral messages a user got through response_url or chat.postEphemeral (from index `from` on). */
  ephemeralsFor(user: string, from?: number): string[];
  /** The bot's messages in a person's DM, oldest first. */
  dms(user: string): FakeMessage[];
  /** Warnings, processor states and the last requests: printed when a wait times out. */
  diagnose(): Promise<string>;
  idle(): Promise<void>;
  /**
   * Stops the app and starts it again on the same store and port, as after a crash or a deploy;
   * `replay` sets those processors' checkpoints back to the start, so they see everything again.
   */
  restart(options?: Readonly<{ replay?: readonly string[] }>): Promise<void>;
  stop(): Promise<void>;
}>;

export const startIncidentHarness = async (
  options: Readonly<{
    schedulerPollMs?: number;
    incidentRetryBaseMs?: number;
    slackMaxInlineWaitMs?: number;
    /** Extra simulator options (a seed, `requestsPerMinute`, a clock). */
    simulator?: Omit<PagerDutySimulatorOptions, 'webhookSecret' | 'webhooks'>;
    /** The incident lifecycle's other knobs (`retry` comes from `incidentRetryBaseMs`). */
    incidents?: Omit<IncidentsOptions, 'retry'>;
    /** The app's clock (default: the system's). */
    clock?: Clock;
    /** The incident-service simulator's clock, e.g. skewed from the app's (default: the system's). */
    simClock?: Clock;
    /** More environment for the app (e.g. INCIDENT_ACK_REMINDER_MINUTES). */
    env?: Readonly<Record<string, string>>;
    /** The fake Slack's bot token scopes (default: every scope). */
    slackScopes?: readonly string[];
  }> = {},
): Promise<IncidentHarness> => {
  const sim = await startPagerDutySimulator({
    ...options.simulator,
    ...(options.simClock ? { clock: options.simClock } : {}),
    webhookSecret: WEBHOOK_SECRET,
    webhooks: { retryDelaysMs: [20, 50, 100, 200], timeoutMs: 3_000 },
  });
  const fake = await startTestSlack({
    users: [
      { id: ANA.slack, name: 'ana', real_name: 'Ana Silva', email: ANA.email },
      { id: BEN.slack, name: 'ben', real_name: 'Ben Okafor', email: BEN.email },
      { id: CHEN.slack, name: 'chen', real_name: 'Chen Wei', email: CHEN.email },
      { id: NORA.slack, name: 'nora', real_name: 'Nora Nobody', email: NORA.email },
    ],
    channels: [
      { id: OPS, name: 'ops', is_im: false },
      { id: PAYMENTS_CHANNEL, name: 'payments', is_im: false },
    ],
    ...(options.slackScopes ? { scopes: options.slackScopes } : {}),
  });
  const tmp = tempDir('switchboard-incident-');
  const dbPath = join(tmp.dir, 'switchboard.db');
  const simulators: readonly Simulator[] = [fake, sim];
  const env = (port: number) =>
    testEnv(fake, dbPath, { ...simulatorEnv(simulators), PORT: String(port), ...options.env });
  const logs = createLogSink();
  const boot = async (port: number) => {
    const config = loadConfig(env(port), ALL_LIFECYCLES);
    const logger = createLogger({ level: 'debug', destination: logs.stream, secrets: config.secrets });
    const app = await createSwitchboard({
      config,
      logger,
      ...(options.clock ? { clock: options.clock } : {}),
      host: '127.0.0.1',
      httpGraceMs: 1_000,
      schedulerPollMs: options.schedulerPollMs ?? 20,
      lifecycleOptions: {
        incidents: {
          ...options.incidents,
          retry: { baseMs: options.incidentRetryBaseMs ?? 30, maxMs: 2_000 },
        },
      },
      ...(options.slackMaxInlineWaitMs === undefined
        ? {}
        : { slackMaxInlineWaitMs: options.slackMaxInlineWaitMs }),
    });
    const started = await app.start();
    return { app, ...started };
  };
  const first = await boot(0);
  let sb = first.app;
  const { url, port } = first;
  await connectAll(simulators, url);

  // Slack signs with its own time, which agrees with the app's: the skew these tests set up is
  // between the app and the incident service (signed 5 minutes off, a request is rightly refused).
  const slack = slackDriver(fake, { url: () => url, ...(options.clock ? { clock: options.clock } : {}) });
  const post = (body: string, kind: 'form' | 'json', o: SignedPostOptions = {}) => slack.post(body, kind, o);

  const harness: IncidentHarness = {
    get sb() {
      return sb;
    },
    url,
    dbPath,
    fake,
    sim,
    logs,
    post,
    async slash(text, o = {}) {
      const { status, body, responseUrl } = await slack.slash(o.command ?? '/incident', text, {
        user: o.user ?? ANA.slack,
        channel: o.channel ?? OPS,
        ...(o.triggerId ? { triggerId: o.triggerId } : {}),
        ...(o.headers ? { headers: o.headers } : {}),
      });
      return { status, body, responseUrl };
    },
    async answer(res) {
      const acked = JSON.stringify(res.body ?? {});
      if (!String(res.body?.text ?? '').includes('Looking up')) return acked;
      const id = res.responseUrl.slice(res.responseUrl.lastIndexOf('/') + 1);
      const posted = await waitFor(() => fake.responsePosts.find((p) => p.responseUrlId === id), {
        what: 'the answer through the response_url',
        timeoutMs: 15_000,
      });
      return JSON.stringify(posted.body);
    },
    async click(actionId, value, o = {}) {
      const { status, responseUrl, payload } = await slack.click(actionId, value, {
        ...o,
        user: o.user ?? ANA.slack,
        channel: o.channel ?? OPS,
      });
      return { status, responseUrl, payload };
    },
    submitView: (callbackId, values, privateMetadata, user = ANA.slack) =>
      slack.submitView(callbackId, values, privateMetadata, user),
    stream: (streamId) => sb.store.readStream(streamId),
    async streamOfNumber(number) {
      return waitFor(
        async () => {
          await sb.lifecycle('incidents')!.readModels.catchUp();
          return sb.lifecycle('incidents')!.readModels.streamForNumber(number);
        },
        { what: `the stream of incident #${number}` },
      );
    },
    // A card is never a thread reply (the card's thread tells the story: issue 22).
    cards: (channel) =>
      fake
        .messages(channel)
        .filter(
          (m) =>
            m.bot_id !== '' && Array.isArray(m.blocks) && (m.thread_ts === undefined || m.thread_ts === m.ts),
        ),
    cardOf: (channel, number) => harness.cards(channel).find((m) => m.text.startsWith(`#${number} `)),
    ephemeralsFor: (user, from = 0) =>
      fake.ephemerals
        .slice(from)
        .filter((e) => e.user === user)
        .map((e) => e.text),
    async trigger(title) {
      const before = new Set(sim.state.incidents.keys());
      const typed = await harness.slash(`trigger Payments API ${title}`);
      if (typed.status !== 200)
        throw new Error(`/incident trigger answered ${typed.status}: ${JSON.stringify(typed.body)}`);
      const incident = await waitFor(
        () => [...sim.state.incidents.values()].find((i) => !before.has(i.id) && i.title === title),
        { what: `incident “${title}” upstream`, timeoutMs: 10_000 },
      ).catch(async (error: Error) => {
        throw new Error(`${error.message}\n${await harness.diagnose()}`);
      });
      const card = await waitFor(
        () => {
          const c = harness.cardOf(OPS, incident.number);
          return c && cardText(c).includes('Triggered') ? c : undefined;
        },
        { what: `the card of #${incident.number}`, timeoutMs: 10_000 },
      );
      const streamId = await harness.streamOfNumber(incident.number);
      return { streamId, incidentId: incident.id, number: incident.number, card };
    },
    dms: (user) => slack.dms(user),
    async diagnose() {
      const warnings = logs
        .lines()
        .filter((l) => Number(l.level) >= 40)
        .slice(-15)
        .map((l) => JSON.stringify(l).slice(0, 600));
      const processors = (await sb.processors.status()).map((p) =>
        JSON.stringify(p, (_k, v) => (typeof v === 'bigint' ? v.toString() : v)),
      );
      const requests = sim.requests.slice(-10).map((r) => `${r.method} ${r.url} → ${r.status}`);
      return ['warnings:', ...warnings, 'processors:', ...processors, 'last requests:', ...requests].join(
        '\n',
      );
    },
    idle: () => settle(sb, { deliveries: [sim.webhooks] }),
    async restart(o = {}) {
      await sb.stop();
      if (o.replay?.length) {
        const store = await openEventStore(`sqlite:${dbPath}`);
        for (const id of o.replay) await store.storeCheckpoint(id, 0n);
        await store.close();
      }
      sb = (await boot(port)).app;
    },
    async stop() {
      await sim.stop();
      await sb.stop();
      await fake.close();
      tmp.cleanup();
    },
  };
  return harness;
};

/** Text of every block of a card, flattened, for "shows …" assertions. */
export const cardText = (m: Pick<FakeMessage, 'text' | 'blocks'> | undefined): string =>
  m ? `${m.text}\n${JSON.stringify(m.blocks ?? [])}` : '';

/** The action_ids of the buttons a card offers. */
export const cardActions = (m: Pick<FakeMessage, 'blocks'> | undefined): string[] => {
  const blocks = (m?.blocks ?? []) as { type?: string; elements?: { action_id?: string }[] }[];
  return blocks
    .filter((b) => b.type === 'actions')
    .flatMap((b) => (b.elements ?? []).map((e) => e.action_id ?? ''));
};

export const unixTs = (): string =>
  `${nowSeconds()}.${String(Math.floor(Math.random() * 1e6)).padStart(6, '0')}`;

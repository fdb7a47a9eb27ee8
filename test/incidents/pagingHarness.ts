import { createServer } from 'node:net';
import { join } from 'node:path';
import {
  type PagerDutySimulator,
  startPagerDutySimulator,
} from '../../sandbox/simulators/pagerduty/index.ts';
import { connectAll, type Simulator, simulatorEnv } from '../../sandbox/simulators/simulator.ts';
import type { FakeSlack } from '../../sandbox/simulators/slack/fakeSlack.ts';
import { startVonageSimulator, type VonageSimulator } from '../../sandbox/simulators/vonage/index.ts';
import { createSwitchboard, type Switchboard } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import type { ManualClock } from '../../src/core/clock.ts';
import type { RecordedEvent } from '../../src/eventStore/eventStore.ts';
import { ALL_LIFECYCLES } from '../../src/lifecycleList.ts';
import { createLogger } from '../../src/logger.ts';
import { createVonageClient } from '../../src/upstream/vonage.ts';
import { createLogSink, type LogSink } from '../support/logSink.ts';
import { settle } from '../support/settle.ts';
import { slackDriver, startTestSlack } from '../support/slackHarness.ts';
import { tempDir, testEnv } from '../support/startApp.ts';
import { waitFor } from '../support/waitFor.ts';

/**
 * Paging end to end: the real app (incidents and phone verification switched on, SQLite file,
 * real HTTP on a fixed loopback port so a restart keeps it), the fake Slack, the incident-service
 * simulator and the communications simulator (its phones), all on one manual clock but the
 * incident service's (whose schedules are not what these tests are about: the Platform Gateway
 * policy names Chen at level 1 and Frank at level 2 directly).
 *
 * People: Ana, Ben, Chen and Frank exist in Slack and the incident service (same emails); a phone
 * is "verified" by linking it in the people directory, as the verification lifecycle does when a
 * code is checked (its own tests cover that path).
 */

export const ANA = { slack: 'U0ANA', email: 'ana.silva@example.org', phone: '447700900101' } as const;
export const BEN = { slack: 'U0BEN', email: 'ben.okafor@example.org', phone: '447700900102' } as const;
export const CHEN = { slack: 'U0CHEN', email: 'chen.wei@example.org', phone: '447700900103' } as const;
export const FRANK = { slack: 'U0FRANK', email: 'frank.moreau@example.org', phone: '447700900106' } as const;
export const OPS = 'C0OPS';
/** Level 1: Chen; level 2: Frank (user references, on call whatever the time). */
export const PLATFORM = 'Platform Gateway';
export const WEBHOOK_SECRET = 'whsec-paging-e2e-3b9f';
export const MINUTE = 60_000;

export type PagingHarness = Readonly<{
  sb: Switchboard;
  url: string;
  dbPath: string;
  clock: ManualClock;
  fake: FakeSlack;
  pd: PagerDutySimulator;
  vonage: VonageSimulator;
  logs: LogSink;
  /** `/incident <text>` as `user` in #ops; resolves with the app's answer to the POST (its body). */
  slash(text: string, user?: string, command?: string): Promise<string>;
  /** Triggers an incident on `service` and waits for it upstream and in the store. */
  trigger(title: string, service?: string): Promise<{ streamId: string; number: number; incidentId: string }>;
  /** Links a verified phone (digits) to the person, in clear (as links before sealing were). */
  verifyPhone(slackUserId: string, digits: string): Promise<void>;
  /**
   * Links a verified phone as a checked code does today: the number sealed under the person's own
   * data key (`personkey-<slackUserId>`, itself wrapped under the key ring).
   */
  verifyPhoneSealed(slackUserId: string, digits: string): Promise<void>;
  /** The environment the app is (re)started with. */
  readonly env: Readonly<Record<string, string>>;
  /** Moves the clock and waits until the scheduler and processors are idle. */
  advance(ms: number): Promise<void>;
  idle(): Promise<void>;
  stream(streamId: string): Promise<RecordedEvent[]>;
  /** The page activity lines recorded on an incident (kind, person, via), in order. */
  pageActivity(streamId: string): Promise<{ kind: string; slackUserId: string | null; via: string | null }[]>;
  /**
   * Stops the app and starts it on the same store, with `env` changed (a variable set to undefined
   * is removed) for this and later restarts. A start that fails leaves the app stopped and rejects.
   */
  restart(env?: Readonly<Record<string, string | undefined>>): Promise<void>;
  stop(): Promise<void>;
}>;

const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });

export const startPagingHarness = async (
  options: Readonly<{
    clock: ManualClock;
    env?: Record<string, string>;
    /** Writes to the store file before the app first starts on it (a store from an older release). */
    seed?: (dbPath: string, env: Readonly<Record<string, string>>) => Promise<void>;
    /** Each person's Slack time zone (`users.info` `tz`) by Slack id; the fake's default otherwise. */
    zones?: Readonly<Record<string, string>>;
  }>,
): Promise<PagingHarness> => {
  const { clock } = options;
  const pd = await startPagerDutySimulator({
    webhookSecret: WEBHOOK_SECRET,
    webhooks: { retryDelaysMs: [20, 50, 100, 200], timeoutMs: 3_000 },
  });
  const vonage = await startVonageSimulator({
    clock,
    webhooks: { retryDelaysMs: [20, 50, 100, 200], timeoutMs: 3_000 },
  });
  const zone = (id: string) => (options.zones?.[id] ? { tz: options.zones[id] } : {});
  const fake = await startTestSlack({
    users: [
      { id: ANA.slack, name: 'ana', real_name: 'Ana Silva', email: ANA.email, ...zone(ANA.slack) },
      { id: BEN.slack, name: 'ben', real_name: 'Ben Okafor', email: BEN.email, ...zone(BEN.slack) },
      { id: CHEN.slack, name: 'chen', real_name: 'Chen Wei', email: CHEN.email, ...zone(CHEN.slack) },
      { id: FRANK.slack, name: 'frank', real_name: 'Frank Moreau', email: FRANK.email, ...zone(FRANK.slack) },
    ],
    channels: [{ id: OPS, name: 'ops', is_im: false }],
  });
  const tmp = tempDir('switchboard-paging-');
  const dbPath = join(tmp.dir, 'switchboard.db');
  const simulators: readonly Simulator[] = [fake, pd, vonage];
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  // The keypad's callback is configured the way an operator would: VONAGE_VOICE_EVENT_URL.
  const env = testEnv(fake, dbPath, {
    ...simulatorEnv(simulators),
    PORT: String(port),
    VONAGE_VOICE_EVENT_URL: `${url}/webhooks/vonage/voice`,
    ...options.env,
  });
  if (options.seed) await options.seed(dbPath, env);
  const logs = createLogSink();
  const boot = async () => {
    const config = loadConfig(env, ALL_LIFECYCLES);
    const logger = createLogger({ level: 'debug', destination: logs.stream, secrets: config.secrets });
    const app = await createSwitchboard({
      config,
      logger,
      clock,
      host: '127.0.0.1',
      httpGraceMs: 1_000,
      schedulerPollMs: 10,
      lifecycleOptions: {
        incidents: { retry: { baseMs: 30, maxMs: 2_000 } },
        verification: {
          client: createVonageClient({ ...vonage.clientOptions(), clock }),
          retry: { baseMs: 30, maxMs: 2_000 },
        },
      },
    });
    try {
      await app.start();
    } catch (e) {
      await app.stop();
      throw e;
    }
    return app;
  };
  let sb = await boot();
  await connectAll(simulators, url);

  // Slack's signature is judged by the app's clock.
  const slack = slackDriver(fake, { url: () => url, clock });
  const idle = () => settle(sb, { deliveries: [pd.webhooks, vonage.webhooks] });

  const harness: PagingHarness = {
    get sb() {
      return sb;
    },
    get env() {
      return env;
    },
    url,
    dbPath,
    clock,
    fake,
    pd,
    vonage,
    logs,
    async slash(text, user = ANA.slack, command = '/incident') {
      return (await slack.slash(command, text, { user, channel: OPS })).raw;
    },
    async trigger(title, service = PLATFORM) {
      const before = new Set(pd.state.incidents.keys());
      await harness.slash(`trigger ${service} ${title}`);

      const incident = await waitFor(
        () => [...pd.state.incidents.values()].find((i) => !before.has(i.id) && i.title === title),
        { what: `incident “${title}” upstream`, timeoutMs: 10_000 },
      );
      const streamId = await waitFor(
        async () => {
          await sb.lifecycle('incidents')!.readModels.catchUp();
          const s = sb.lifecycle('incidents')!.readModels.streamForNumber(incident.number);
          if (!s) return undefined;
          const events = await sb.store.readStream(s);
          return events.some((e) => e.type === 'IncidentTriggered') ? s : undefined;
        },
        { what: `the stream of #${incident.number}`, timeoutMs: 10_000 },
      );
      await idle();
      return { streamId, number: incident.number, incidentId: incident.id };
    },
    async verifyPhone(slackUserId, digits) {
      await sb.people.link(slackUserId, {
        system: 'phone',
        externalId: `+${digits}`,
        email: null,
        name: null,
      });
    },
    async verifyPhoneSealed(slackUserId, digits) {
      const phones = sb.lifecycle('verification')?.phones;
      if (!phones) throw new Error('the verification lifecycle is off');
      await sb.people.link(slackUserId, {
        system: 'phone',
        externalId: await phones.sealFor(slackUserId, digits),
        email: null,
        name: null,
      });
    },
    async advance(ms) {
      clock.advance(ms);
      // Every timer due by the new time fires, and what it starts settles.
      await idle();
    },
    idle,
    stream: (streamId) => sb.store.readStream(streamId),
    async pageActivity(streamId) {
      return (await sb.store.readStream(streamId))
        .filter((m) => m.type === 'RecordIncidentPageActivity')
        .map((m) => {
          const d = m.data as { kind: string; slackUserId: string | null; via: string | null };
          return { kind: d.kind, slackUserId: d.slackUserId, via: d.via };
        });
    },
    async restart(changes = {}) {
      await sb.stop();
      for (const [k, v] of Object.entries(changes)) {
        if (v === undefined) delete env[k];
        else env[k] = v;
      }
      sb = await boot();
    },
    async stop() {
      await pd.stop();
      await vonage.stop();
      await sb.stop();
      await fake.close();
      tmp.cleanup();
    },
  };
  return harness;
};

import { generateKeyPairSync, randomBytes, randomUUID } from 'node:crypto';
import { createWriteStream, mkdirSync, rmSync, type WriteStream } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import type { Writable } from 'node:stream';
import { createSwitchboard, type Switchboard } from '../src/app.ts';
import { type LogLevel, loadConfig } from '../src/config.ts';
import { createKeyRing, generateRingEntry } from '../src/core/keyRing.ts';
import type { EventStore } from '../src/eventStore/eventStore.ts';
import { openEventStore } from '../src/eventStore/openEventStore.ts';
import { ALL_LIFECYCLES } from '../src/lifecycleList.ts';
import { createLogger, type Logger } from '../src/logger.ts';
import { createPersonKeys } from '../src/people/personKeys.ts';
import { HR_SYNC_DIRECTORY_STREAM } from '../src/timeOff/hrSync.ts';
import { createSandboxClock, type SandboxClock } from './clock.ts';
import { type SandboxHr, simulatorHr } from './console/hr.ts';
import { type SandboxPhones, simulatorPhones } from './console/phones.ts';
import { type ConsoleServer, listenConsole } from './console/server.ts';
import { readSlackAppSettings } from './manifest.ts';
import { readSecrets, readWorld, type SandboxSecrets, writeSecrets, writeWorld } from './persistence.ts';
import { type HiBobSimulator, POLICIES, startHiBobSimulator } from './simulators/hibob/index.ts';
import {
  type PagerDutySimulator,
  rotationAnchor,
  startPagerDutySimulator,
} from './simulators/pagerduty/index.ts';
import {
  type ContractViolation,
  connectAll,
  contractViolations,
  importStates,
  type Simulator,
  simulatorEnv,
  stopAll,
} from './simulators/simulator.ts';
import { type FakeSlack, startFakeSlack } from './simulators/slack/fakeSlack.ts';
import { startVonageSimulator, type VonageSimulator } from './simulators/vonage/index.ts';
import { createSlackSurface, type SlackSurface } from './slackSurface.ts';
import {
  ADMIN,
  CHANNELS,
  INCIDENTS_CHANNEL,
  PEOPLE,
  pagerDutySeed,
  phoneBook,
  routingKeyOf,
  SEED_INCIDENTS,
  SERVICES,
  SWITCHBOARD_NUMBER,
  slackUsers,
} from './world.ts';

/**
 * The whole sandbox in one process, on loopback: the real bot (`createSwitchboard`, embedded
 * SQLite store), the simulators (the fake Slack Web API, the incident service, the communications
 * service with everyone's phone, the HR people service), and the console server, wired with secrets
 * made for the world so every request is signed as in production (Slack v0 signatures on what the
 * console sends the bot, V3 webhook signatures on what the incident service sends, HS256 webhook
 * JWTs on what the communications service sends, `Bob-Signature` HMACs on what HR sends). The
 * secrets, and the bot's data key ring, are kept in the data folder (`sandbox-secrets.json`, mode
 * 0600) and reused on a restart, so what the bot sealed (verified phones) still opens; `--reset`
 * makes new ones. The
 * bot's configuration, saving and restoring, and stopping loop over the simulators
 * (`simulators/simulator.ts`); only the console and the demo world know each vendor.
 *
 * `npm run sandbox` (sandbox/main.ts) calls this; so do the sandbox and browser tests, on
 * ephemeral ports and a temporary data directory.
 *
 * @example
 * const sandbox = await startSandbox({ dataDir: tmp, reset: true, ports: 0 });
 * await page.goto(sandbox.consoleUrl);
 * ...; await sandbox.stop();
 */

export type SandboxPorts = Readonly<{ console?: number; bot?: number }>;

export type SandboxOptions = Readonly<{
  /**
   * Holds sandbox.db (the event store), sandbox-world.json (the simulators' state),
   * sandbox-secrets.json (the world's secrets and data key ring), sandbox.log.
   */
  dataDir: string;
  /** Start over: delete the store, the saved world and its secrets first (new secrets are made). */
  reset?: boolean;
  /** `0`: every port chosen by the OS. Default: console 3100, bot any free port. */
  ports?: 0 | SandboxPorts;
  /** Bot log destination; default `<dataDir>/sandbox.log`. */
  log?: Writable;
  logLevel?: LogLevel;
  /** Seed the demo world on a fresh start (default true). */
  seed?: boolean;
  /** How often the incident service runs its timers (escalations, ack timeouts). Default 15 s. */
  timersEveryMs?: number;
  /**
   * When the bot pages the on-call by phone, in whole minutes (`PAGING_DELAY_MINUTES`,
   * `PAGING_CALL_AFTER_MINUTES`): an incident still triggered `delayMinutes` after it was
   * triggered is paged by SMS, and by a call `callAfterMinutes` later. Default: the bot's own
   * (5 and 3); `npm run sandbox -- --page-after 0 --call-after 1` to see it at once.
   */
  paging?: Readonly<{ delayMinutes?: number; callAfterMinutes?: number }>;
  /**
   * How late HR's API shows a change (its read-after-write lag), in ms: the vendor's ~20 s by
   * default; shorter for demos and tests (`npm run sandbox -- --hr-lag 2`), never 0. The bot's
   * time-off lifecycle is given the same lag (`hrLagMs`: the leaver guard and every read after a
   * write wait that long, not the bot's default 30 s).
   */
  hrLagMs?: number;
  /**
   * The sandbox clock's time when a fresh world starts (default: real time); it then runs on with
   * real time, and the console moves it forward (`POST /api/clock/advance`). A restored world keeps
   * the clock it had. Tests start on a fixed day so nothing depends on the calendar.
   */
  startAt?: Date | string;
}>;

export type Sandbox = Readonly<{
  consoleUrl: string;
  botUrl: string;
  dataDir: string;
  /** The event store's file, `<dataDir>/sandbox.db`. */
  dbPath: string;
  /** The one clock the bot, the simulators, the Slack surface and the console read. */
  clock: SandboxClock;
  /** True when the world came back from a previous run. */
  restored: boolean;
  /** What the person starting it should know (printed by `npm run sandbox`), e.g. phones to verify again. */
  notices: readonly string[];
  sb: Switchboard;
  store: EventStore;
  fake: FakeSlack;
  sim: PagerDutySimulator;
  /** The communications service: Verify, SMS, calls, and everyone's phone (`vonage.phones`). */
  vonage: VonageSimulator;
  /** The HR people service: employees, time off, the web app (`hibob.webApp`). */
  hibob: HiBobSimulator;
  /** The HR service as the console's HR tab shows it. */
  hr: SandboxHr;
  /** Each person's phone number (E.164), by Slack user id. */
  phoneBook: Readonly<Record<string, string>>;
  /** The phones as the console shows them. */
  phones: SandboxPhones;
  /** Every simulator, in start order (`fake`, `sim`, `vonage`, `hibob`). */
  simulators: readonly Simulator[];
  surface: SlackSurface;
  console: ConsoleServer;
  /** What the simulators saw that breaks their vendor's contract. */
  contractViolations(): ContractViolation[];
  /** Saves the simulators' state now (it is also saved on every change, debounced). */
  save(): void;
  stop(): Promise<void>;
}>;

export const DEFAULT_CONSOLE_PORT = 3100;
/** HR's read-after-write lag when not told otherwise: the vendor's ~20 s. */
export const DEFAULT_HR_LAG_MS = 20_000;

const secret = (bytes = 24): string => randomBytes(bytes).toString('hex');

/** A new world's secrets: each vendor's, as `startSandbox` used to make at every start, and the bot's ring. */
const makeSecrets = (): SandboxSecrets => ({
  version: 1,
  slack: { botToken: `xoxb-sandbox-${secret(12)}`, signingSecret: secret() },
  pagerduty: { token: secret(16), webhookSecret: secret() },
  // The API secret follows the vendor's rule: 8–25 characters with an uppercase letter, a
  // lowercase letter and a digit. The application's RSA key pair signs the bot's JWTs.
  vonage: {
    apiKey: randomBytes(4).toString('hex'),
    apiSecret: `Sb1${randomBytes(9).toString('hex')}`,
    applicationId: randomUUID(),
    signatureSecret: secret(),
    privateKey: generateKeyPairSync('rsa', { modulusLength: 2048 })
      .privateKey.export({ type: 'pkcs8', format: 'pem' })
      .toString(),
  },
  hibob: {
    serviceUserId: `SERVICE-USER-${randomBytes(4).toString('hex').toUpperCase()}`,
    serviceUserToken: secret(),
    webhookSecret: secret(),
  },
  dataKeys: generateRingEntry({ id: 'sandbox' }),
});

/** A loopback port free now (the OS's pick), for a server that must know its URL before it listens. */
const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });

export const startSandbox = async (options: SandboxOptions): Promise<Sandbox> => {
  const hrLagMs = options.hrLagMs ?? DEFAULT_HR_LAG_MS;
  if (!(Number.isFinite(hrLagMs) && hrLagMs > 0))
    throw new Error(`hrLagMs must be a positive number of ms (HR's lag is never skipped), not ${hrLagMs}`);
  const dataDir = resolve(options.dataDir);
  mkdirSync(dataDir, { recursive: true });
  const dbPath = join(dataDir, 'sandbox.db');
  const worldPath = join(dataDir, 'sandbox-world.json');
  const secretsPath = join(dataDir, 'sandbox-secrets.json');
  if (options.reset) {
    for (const f of [dbPath, `${dbPath}-wal`, `${dbPath}-shm`, worldPath, secretsPath])
      rmSync(f, { force: true });
  }
  // The world's secrets: kept from the last run, or made now (and kept at once, before anything
  // is sealed under them).
  const keptSecrets = options.reset ? undefined : readSecrets(secretsPath);
  const secrets = keptSecrets ?? makeSecrets();
  if (!keptSecrets) writeSecrets(secretsPath, secrets);
  const notices: string[] = [];
  const ports: SandboxPorts =
    options.ports === 0
      ? { console: 0, bot: 0 }
      : { console: DEFAULT_CONSOLE_PORT, bot: 0, ...options.ports };

  const cleanups: Array<() => Promise<unknown> | unknown> = [];
  const cleanup = async () => {
    for (const c of cleanups.splice(0).reverse()) await Promise.resolve(c()).catch(() => undefined);
  };
  try {
    const listening = await listenConsole(ports.console ?? 0);
    cleanups.push(() => listening.close());

    const saved = options.reset
      ? undefined
      : readWorld(worldPath, { pagerDutySeed, rotationStart: rotationAnchor(new Date()) });
    // A saved world keeps how far ahead its clock was; a fresh one starts at `startAt` (or now).
    const clock = createSandboxClock(
      saved?.clockOffsetMs !== undefined
        ? { offsetMs: saved.clockOffsetMs }
        : options.startAt !== undefined
          ? { startAt: options.startAt }
          : {},
    );
    // A fresh world's rotations start now (rotationAnchor of the clock); a saved world keeps its own.
    const rotationStart = rotationAnchor(clock.now());
    const simulators: Simulator[] = [];
    cleanups.push(() => stopAll(simulators));
    const fake = await startFakeSlack({
      botToken: secrets.slack.botToken,
      signingSecret: secrets.slack.signingSecret,
      users: slackUsers(),
      channels: [...CHANNELS],
      now: clock.nowMs,
    });
    simulators.push(fake);
    const sim = await startPagerDutySimulator({
      clock,
      token: secrets.pagerduty.token,
      webhookSecret: secrets.pagerduty.webhookSecret,
      seed: pagerDutySeed(rotationStart),
      webUrl: `${listening.url}/vendor`,
      webhooks: { retryDelaysMs: [250, 1_000, 3_000, 10_000] },
    });
    simulators.push(sim);
    // The communications account's credentials, the world's like the others' (its application's
    // private key reaches the bot as VONAGE_PRIVATE_KEY).
    const vonage = await startVonageSimulator({
      clock,
      // Its timers (channel timeouts, calls ringing out) run by themselves on the sandbox clock too.
      tickMs: 250,
      apiKey: secrets.vonage.apiKey,
      apiSecret: secrets.vonage.apiSecret,
      applicationId: secrets.vonage.applicationId,
      signatureSecret: secrets.vonage.signatureSecret,
      privateKey: secrets.vonage.privateKey,
      fromNumber: SWITCHBOARD_NUMBER,
      webhooks: { retryDelaysMs: [250, 1_000, 3_000, 10_000] },
    });
    simulators.push(vonage);
    // The HR service: its service user and webhook secret the world's; its organisation is the demo
    // world's (`hrEmployees()`), seeded by the simulator; what it writes shows in its API `hrLagMs` later.
    const hibob = await startHiBobSimulator({
      clock,
      lagMs: hrLagMs,
      serviceUsers: [{ id: secrets.hibob.serviceUserId, token: secrets.hibob.serviceUserToken }],
      webhookSecret: secrets.hibob.webhookSecret,
      webhooks: { retryDelaysMs: [250, 1_000, 3_000, 10_000] },
    });
    simulators.push(hibob);
    if (saved) importStates(simulators, saved.simulators);
    // Each person's phone number: the saved world's, else the demo world's.
    const phoneNumbers: Readonly<Record<string, string>> = { ...phoneBook(), ...saved?.phones };
    const phones = simulatorPhones(vonage);
    cleanups.push(() => phones.stop());
    const hr = simulatorHr(hibob, POLICIES);

    // The bot tells the communications service where a call's events and keys go
    // (`/webhooks/vonage/voice`, in each call's NCCO), so its port is chosen before it starts.
    const botPort = ports.bot ? ports.bot : await freePort();
    // The store stamps what it records (`recordedAt`) with the sandbox clock too, so "how long ago"
    // means the same to the bot as "now" does.
    const store = await openEventStore(`sqlite:${dbPath}`, { sqlite: { now: clock.nowMs } });
    cleanups.push(() => (store.isOpen() ? store.close() : undefined));
    const config = loadConfig(
      {
        ...simulatorEnv(simulators),
        PORT: String(botPort),
        EVENT_STORE_URL: `sqlite:${dbPath}`,
        SWITCHBOARD_DATA_KEYS: secrets.dataKeys,
        LOG_LEVEL: options.logLevel ?? 'info',
        ...(options.paging?.delayMinutes === undefined
          ? {}
          : { PAGING_DELAY_MINUTES: String(options.paging.delayMinutes) }),
        ...(options.paging?.callAfterMinutes === undefined
          ? {}
          : { PAGING_CALL_AFTER_MINUTES: String(options.paging.callAfterMinutes) }),
        CI: 'true',
      },
      ALL_LIFECYCLES,
    );
    let logFile: WriteStream | undefined;
    if (!options.log) {
      logFile = createWriteStream(join(dataDir, 'sandbox.log'), { flags: options.reset ? 'w' : 'a' });
      const file = logFile;
      cleanups.push(() => new Promise<void>((r) => file.end(() => r())));
    }
    const logger = createLogger({
      level: config.logLevel,
      secrets: config.secrets,
      destination: options.log ?? logFile!,
      base: { sandbox: 'true' },
    });
    if (saved && !keptSecrets) {
      // A world saved before the sandbox kept its secrets: what the bot sealed under the old ones
      // (verified phones) cannot be opened by anyone now. Shred it, so the bot starts, and say so.
      const ring = createKeyRing(config.dataKeys.ring, config.dataKeys.legacy);
      const forgotten = await createPersonKeys({ store, ring }).forgetUnreadable();
      if (forgotten.length > 0) {
        const who = forgotten.map((id) => PEOPLE.find((p) => p.slackId === id)?.handle ?? id).join(', ');
        const notice = `This world was saved before the sandbox kept its secrets: the phones verified in it (${who}) must be verified again with /verify.`;
        notices.push(notice);
        logger.warn({ forgotten: forgotten.length }, notice);
      }
    }
    const sb = await createSwitchboard({
      config,
      logger,
      clock,
      store,
      host: '127.0.0.1',
      httpGraceMs: 1_000,
      lifecycleOptions: {
        verification: { voiceEventUrl: `http://127.0.0.1:${botPort}/webhooks/vonage/voice` },
        // The bot waits HR's lag before trusting a read (the leaver guard, approvals shown in HR,
        // the changes poll's overlap): the simulator's lag is known exactly, so it is the same one.
        timeOff: { hrLagMs },
      },
    });
    cleanups.push(() => sb.stop());
    const { url: botUrl } = await sb.start();

    await connectAll(simulators, botUrl);
    // Time off knows who is who from its employee directory, which the lifecycle reads from HR at
    // start when it is empty (one people search; HR's webhooks and hourly reads keep it current).
    // The console (its store tail included) starts once it is there.
    await directoryRead(sb, store, logger);
    sim.subscribe({ url: `${listening.url}/hooks/pagerduty`, description: 'sandbox console' });

    let pagerDutyChanged: () => void = () => undefined;
    const app = readSlackAppSettings();
    const surface = createSlackSurface({
      fake,
      botUrl: () => botUrl,
      signingSecret: fake.signingSecret,
      app,
      now: clock.nowMs,
    });
    cleanups.push(() => surface.stop());
    const consoleServer = listening.serve({
      fake,
      sim,
      store,
      surface,
      people: PEOPLE,
      now: clock.nowMs,
      clock,
      onPagerDutyChange: () => pagerDutyChanged(),
      app,
      phones,
      phoneBook: phoneNumbers,
      hr,
    });
    // The console closes before the bot (its store tail must stop before the store closes).
    cleanups.push(() => consoleServer.close());

    const timers = setInterval(() => sim.runTimers(), options.timersEveryMs ?? 15_000);
    timers.unref();
    cleanups.push(() => clearInterval(timers));

    let saveTimer: NodeJS.Timeout | undefined;
    const save = () => {
      if (saveTimer) clearTimeout(saveTimer);
      saveTimer = undefined;
      writeWorld(worldPath, simulators, phoneNumbers, clock.offsetMs());
    };
    const saveSoon = () => {
      saveTimer ??= setTimeout(save, 500);
    };
    fake.events.on('change', saveSoon);
    pagerDutyChanged = saveSoon;
    // The clock moved: the incident service and the phones run what is due now at once (the bot's
    // scheduler looks every second by itself), and the world keeps the new time.
    const offClock = clock.onAdvance(() => {
      sim.runTimers();
      vonage.runTimers();
      saveSoon();
    });
    const offPhones = vonage.phones.onChange(saveSoon);
    const offHr = hibob.onChange(saveSoon);
    cleanups.push(() => {
      fake.events.off('change', saveSoon);
      offPhones();
      offHr();
      offClock();
      save();
    });

    if (!saved && options.seed !== false) await seedWorld({ surface, sim });
    save();

    let stopping: Promise<void> | undefined;
    return {
      consoleUrl: `${consoleServer.url}/`,
      botUrl,
      dataDir,
      dbPath,
      clock,
      restored: saved !== undefined,
      notices,
      sb,
      store,
      fake,
      sim,
      vonage,
      hibob,
      hr,
      phoneBook: phoneNumbers,
      phones,
      simulators,
      surface,
      console: consoleServer,
      contractViolations: () => contractViolations(simulators),
      save,
      stop() {
        stopping ??= cleanup();
        return stopping;
      },
    };
  } catch (e) {
    await cleanup();
    throw e;
  }
};

/**
 * Waits (up to `timeoutMs`) until time off has read HR's directory (its people, and its mark of the
 * read, so nothing of the start is still being written when the console is used); logs and goes on
 * if HR never answers.
 */
const directoryRead = async (
  sb: Switchboard,
  store: EventStore,
  logger: Logger,
  timeoutMs = 15_000,
): Promise<void> => {
  const timeOff = sb.lifecycle('timeOff');
  if (!timeOff) return;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    await timeOff.readModel.catchUp();
    const marked = (await store.readStream(HR_SYNC_DIRECTORY_STREAM, { maxCount: 1 })).length > 0;
    if (marked && timeOff.readModel.directory().size > 0) return;
    if (Date.now() > deadline) {
      logger.warn('the HR directory was not read at start; /timeoff answers "not in HR" until it is');
      return;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
};

/**
 * Seeds a fresh world once the bot is up: `#incidents` subscribes to every service through the
 * bot's own `/incident subscribe` (a signed slash command, as the admin), then the open incidents
 * are created in the incident service (from monitoring through the Events API, or by a person in
 * its web app), so the bot hears of them through webhooks.
 */
export const seedWorld = async (deps: Readonly<{ surface: SlackSurface; sim: PagerDutySimulator }>) => {
  for (const name of Object.keys(SERVICES)) {
    await deps.surface.slashCommand({
      user: ADMIN.slackId,
      channel: INCIDENTS_CHANNEL,
      text: `/incident subscribe ${name}`,
    });
  }
  for (const seed of SEED_INCIDENTS) {
    if (seed.via === 'monitoring') {
      const res = await fetch(`${deps.sim.eventsUrl}/v2/enqueue`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({
          routing_key: routingKeyOf(seed.service),
          event_action: 'trigger',
          dedup_key: seed.dedupKey,
          payload: { summary: seed.summary, source: seed.source, severity: seed.severity },
        }),
      });
      if (res.status !== 202)
        throw new Error(`seeding: the Events API answered ${res.status}: ${await res.text()}`);
    } else {
      const inc = deps.sim.webApp.trigger({
        serviceId: SERVICES[seed.service].id,
        title: seed.title,
        byEmail: seed.by,
        urgency: seed.urgency,
      });
      if (seed.acknowledgedBy) deps.sim.webApp.acknowledge(inc.id, seed.acknowledgedBy);
    }
  }
};

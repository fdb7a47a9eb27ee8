import { join } from 'node:path';
import type { TimeOffApi, TimeOffOptions } from '../../handlers/timeOff/module.ts';
import {
  type HiBobSimulator,
  type HiBobSimulatorOptions,
  type SimEmployee,
  startHiBobSimulator,
} from '../../sandbox/simulators/hibob/index.ts';
import { connectAll, type Simulator, simulatorEnv } from '../../sandbox/simulators/simulator.ts';
import type { FakeMessage, FakeSlack, FakeView } from '../../sandbox/simulators/slack/fakeSlack.ts';
import { createSwitchboard, type Switchboard } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { type ManualClock, manualClock } from '../../src/core/clock.ts';
import { ALL_LIFECYCLES } from '../../src/lifecycleList.ts';
import { createLogger } from '../../src/logger.ts';
import type { HiBobClient } from '../../src/upstream/hibob.ts';
import { createLogSink, type LogSink } from '../support/logSink.ts';
import { settle } from '../support/settle.ts';
import { buttonValue, slackDriver, startTestSlack } from '../support/slackHarness.ts';
import { tempDir, testEnv } from '../support/startApp.ts';
import { waitFor } from '../support/waitFor.ts';

/**
 * The whole app (real HTTP, SQLite file, Bolt with real signatures) with the time-off lifecycle
 * switched on against the HR simulator (`sandbox/simulators/hibob/`) and the fake Slack, on one
 * manual clock shared by the app, its scheduler and the simulator: HR's read-after-write lag,
 * reminders and expiry pass when the test moves the clock (`advance`), never with the wall clock.
 *
 * The organisation (HR employees, and Slack users joined to them by email):
 *
 *   Frank Moreau (U0FRANK, head of engineering, no manager)
 *   └─ Dana Lee (U0DANA, engineering manager)
 *      ├─ Ana Silva (U0ANA)
 *      ├─ Ben Okafor (U0BEN)
 *      └─ Chen Wei (U0CHEN)
 *   Gil Santos (U0GIL): in Slack, not in HR.
 *
 * Starts on Monday 23 November 2026, 09:00 UTC. The directory is read once at start (one people
 * search), as the module does on its first start.
 */
export const FRANK = 'U0FRANK';
export const DANA = 'U0DANA';
export const ANA = 'U0ANA';
export const BEN = 'U0BEN';
export const CHEN = 'U0CHEN';
export const GIL = 'U0GIL';

export const HR_IDS = {
  frank: '3332883804594373001',
  dana: '3332883804594373002',
  ana: '3332883804594373003',
  ben: '3332883804594373004',
  chen: '3332883804594373005',
} as const;

const employee = (
  id: string,
  first: string,
  surname: string,
  managerId: string | null,
  title: string,
): SimEmployee => ({
  id,
  email: `${first.toLowerCase()}@example.org`,
  displayName: `${first} ${surname}`,
  firstName: first,
  surname,
  title,
  department: 'Engineering',
  site: 'Lisbon',
  managerId,
  startDate: '2022-01-10',
  status: 'employed',
});

export const HR_EMPLOYEES: readonly SimEmployee[] = [
  employee(HR_IDS.frank, 'Frank', 'Moreau', null, 'Head of Engineering'),
  employee(HR_IDS.dana, 'Dana', 'Lee', HR_IDS.frank, 'Engineering Manager'),
  employee(HR_IDS.ana, 'Ana', 'Silva', HR_IDS.dana, 'Site Reliability Engineer'),
  employee(HR_IDS.ben, 'Ben', 'Okafor', HR_IDS.dana, 'Backend Engineer'),
  employee(HR_IDS.chen, 'Chen', 'Wei', HR_IDS.dana, 'Data Engineer'),
];

const SLACK_USERS = [
  { id: FRANK, name: 'frank', real_name: 'Frank Moreau', email: 'frank@example.org' },
  { id: DANA, name: 'dana', real_name: 'Dana Lee', email: 'dana@example.org' },
  { id: ANA, name: 'ana', real_name: 'Ana Silva', email: 'ana@example.org' },
  { id: BEN, name: 'ben', real_name: 'Ben Okafor', email: 'ben@example.org' },
  { id: CHEN, name: 'chen', real_name: 'Chen Wei', email: 'chen@example.org' },
  { id: GIL, name: 'gil', real_name: 'Gil Santos', email: 'gil@example.org' },
];

export type SlashAnswer = Readonly<{ status: number; text: string; responseUrl: string; body: unknown }>;

export type TimeOffHarness = Readonly<{
  sb: Switchboard;
  api: TimeOffApi;
  url: string;
  dbPath: string;
  clock: ManualClock;
  sim: HiBobSimulator;
  fake: FakeSlack;
  logs: LogSink;
  /** A slash command as `user`; the ack's text. */
  slash(command: '/timeoff' | '/whosout', text: string, user?: string): Promise<SlashAnswer>;
  timeoff(text: string, user?: string): Promise<SlashAnswer>;
  whosout(text: string, user?: string): Promise<SlashAnswer>;
  /** The person's DMs from Switchboard, oldest first. */
  dms(user: string): FakeMessage[];
  /** Waits for a DM whose text (or any block's text) matches. */
  dm(match: RegExp, user: string): Promise<FakeMessage>;
  /**
   * Clicks a button (by action id) on a message: the latest DM to `user` that has it, unless
   * `message` names one. `value` overrides the button's value (a forged click).
   */
  click(
    actionId: string,
    user: string,
    options?: Readonly<{ message?: FakeMessage; value?: string; from?: string }>,
  ): Promise<{ status: number; responseUrl: string; body: unknown }>;
  /** Submits a modal as `user`: the last view opened for them unless `callbackId` says otherwise. */
  submitView(
    user: string,
    values: Record<string, Record<string, unknown>>,
    options?: Readonly<{ callbackId?: string; privateMetadata?: string }>,
  ): Promise<{ status: number; body: Record<string, unknown> | null }>;
  /** The last modal opened for `user` (views.open), or undefined. */
  lastView(user?: string): Record<string, unknown> | undefined;
  /** What was posted to a response_url, as text. */
  responses(responseUrl: string): string[];
  response(responseUrl: string, match: RegExp): Promise<string>;
  /** Every event type of one request's stream. */
  types(timeOffId: string): Promise<string[]>;
  /** The time-off ids of a requester's requests, newest first. */
  requestIds(user: string): Promise<string[]>;
  /** Moves the shared clock (HR's lag, retries, reminders), then waits for things to settle. */
  advance(ms: number): Promise<void>;
  idle(): Promise<void>;
  /** Stops and starts the app again on the same store and port. */
  /** Stops the app and starts it again on the same store and port; `env` adds to (or overrides) its environment. */
  restart(env?: Record<string, string>): Promise<void>;
  stop(): Promise<void>;
}>;

/** Every piece of text in a message: its `text` and its blocks' texts (sections, context, fields). */
export const messageText = (m: Readonly<{ text: string; blocks?: unknown[] | undefined }>): string => {
  const parts: string[] = [m.text];
  const walk = (v: unknown) => {
    if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === 'object') {
      for (const [k, x] of Object.entries(v)) {
        if (k === 'text' && typeof x === 'string') parts.push(x);
        else walk(x);
      }
    }
  };
  walk(m.blocks ?? []);
  return parts.join('\n');
};

export const startTimeOffHarness = async (
  options: Readonly<{
    env?: Record<string, string>;
    timeOff?: TimeOffOptions;
    hr?: HiBobSimulatorOptions;
    /** Read-after-write lag of the HR simulator, on the manual clock (default 20 s, as the vendor). */
    lagMs?: number;
    start?: string;
    /** The HR client the app uses, built once the simulator runs (e.g. one that loses an answer). */
    hrClient?: (sim: HiBobSimulator, clock: ManualClock) => HiBobClient;
    /** The clock to share (default: a new manual clock at `start`). */
    clock?: ManualClock;
    /** More simulators the app talks to (started on `clock`; stopped with the harness). */
    simulators?: readonly (Simulator & { webhooks?: { idle(): Promise<void> } })[];
    /** More Slack users and channels in the fake workspace. */
    slackUsers?: readonly Readonly<{
      id: string;
      name: string;
      real_name: string;
      email: string;
      tz?: string;
    }>[];
    channels?: readonly Readonly<{ id: string; name: string; is_im: boolean }>[];
    /** Slack time zones of the org's people (default: Slack's UTC). */
    timeZones?: Readonly<Record<string, string>>;
    /** Options for the other lifecycles (incidents, verification). */
    lifecycleOptions?: Readonly<Record<string, unknown>>;
  }> = {},
): Promise<TimeOffHarness> => {
  const clock = options.clock ?? manualClock(options.start ?? '2026-11-23T09:00:00.000Z');
  const sim = await startHiBobSimulator({
    clock,
    lagMs: options.lagMs ?? 20_000,
    employees: HR_EMPLOYEES,
    webhooks: { retryDelaysMs: [20, 50, 100], timeoutMs: 3_000 },
    ...options.hr,
  });
  const fake = await startTestSlack({
    users: [
      ...SLACK_USERS.map((u) => (options.timeZones?.[u.id] ? { ...u, tz: options.timeZones[u.id] } : u)),
      ...(options.slackUsers ?? []),
    ],
    ...(options.channels ? { channels: [...options.channels] } : {}),
  });
  const tmp = tempDir('switchboard-timeoff-');
  const dbPath = join(tmp.dir, 'switchboard.db');
  const extra = options.simulators ?? [];
  const simulators: readonly Simulator[] = [fake, sim, ...extra];
  const logs = createLogSink();
  const hrClient = options.hrClient?.(sim, clock);
  const boot = async (port: number, env: Record<string, string> = {}) => {
    const config = loadConfig(
      testEnv(fake, dbPath, { ...simulatorEnv(simulators), ...options.env, ...env, PORT: String(port) }),
      ALL_LIFECYCLES,
    );
    const logger = createLogger({ level: 'debug', destination: logs.stream, secrets: config.secrets });
    const app = await createSwitchboard({
      config,
      logger,
      clock,
      host: '127.0.0.1',
      httpGraceMs: 1_000,
      schedulerPollMs: 20,
      lifecycleOptions: {
        ...options.lifecycleOptions,
        timeOff: {
          retry: { baseMs: 1_000, maxMs: 10_000, jitter: 0 },
          directoryRefreshMs: 0,
          changesPollMs: 0,
          ...(hrClient ? { client: hrClient } : {}),
          ...options.timeOff,
        },
      },
    });
    const started = await app.start();
    return { app, ...started };
  };
  const first = await boot(0);
  let sb = first.app;
  const { url, port } = first;
  await connectAll(simulators, url);
  const apiOf = (): TimeOffApi => {
    const api = sb.lifecycle('timeOff');
    if (!api) throw new Error('the time-off lifecycle is off: are the HIBOB_* variables set?');
    return api;
  };

  // Signed at the app's (manual) time: Bolt judges a request's freshness on the app's clock.
  const slack = slackDriver(fake, { url: () => url, clock });
  const dms = (user: string) => slack.dms(user);
  const views = (user?: string) =>
    (fake.exportState().views as FakeView[]).filter(
      (v) => v.kind === 'modal' && (user === undefined || v.user === user),
    );

  const idle = () =>
    settle(sb, { deliveries: [sim.webhooks, ...extra.flatMap((x) => (x.webhooks ? [x.webhooks] : []))] });

  const h: TimeOffHarness = {
    get sb() {
      return sb;
    },
    get api() {
      return apiOf();
    },
    url,
    dbPath,
    clock,
    sim,
    fake,
    logs,
    async slash(command, text, user = ANA) {
      const typed = await slack.slash(command, text, { user, channel: fake.dmChannel(user).id });
      return { status: typed.status, text: typed.text, responseUrl: typed.responseUrl, body: typed.body };
    },
    timeoff: (text, user = ANA) => h.slash('/timeoff', text, user),
    whosout: (text, user = ANA) => h.slash('/whosout', text, user),
    dms,
    dm: (match, user) =>
      waitFor(() => dms(user).find((m) => match.test(messageText(m))), {
        what: `a DM to ${user} matching ${match}`,
        timeoutMs: 15_000,
      }),
    async click(actionId, user, o = {}) {
      const message =
        o.message ??
        (await waitFor(
          () =>
            [...dms(o.from ?? user)]
              .reverse()
              .find((m) => !m.deleted && buttonValue(m, actionId) !== undefined),
          { what: `a ${actionId} button in a DM to ${o.from ?? user}`, timeoutMs: 15_000 },
        ));
      const value = o.value ?? buttonValue(message, actionId) ?? '';
      const clicked = await slack.click(actionId, value, {
        user,
        channel: message.channel,
        responseChannel: fake.dmChannel(user).id,
        messageTs: message.ts,
      });
      return { status: clicked.status, responseUrl: clicked.responseUrl, body: clicked.body };
    },
    lastView: (user) => views(user).at(-1)?.view,
    async submitView(user, values, o = {}) {
      const view = views(user).at(-1)?.view;
      return slack.submitView(
        o.callbackId ?? String(view?.['callback_id'] ?? ''),
        values,
        o.privateMetadata ?? String(view?.['private_metadata'] ?? ''),
        user,
      );
    },
    responses: (responseUrl) => slack.responses(responseUrl),
    response: (responseUrl, match) =>
      waitFor(() => h.responses(responseUrl).find((t) => match.test(t)), {
        what: `a reply matching ${match}`,
        timeoutMs: 15_000,
      }),
    async types(timeOffId) {
      return (await sb.store.readStream(`timeoff-${timeOffId}`))
        .filter((e) => e.kind === 'event')
        .map((e) => e.type);
    },
    async requestIds(user) {
      const api = apiOf();
      await api.readModel.catchUp();
      return api.readModel.requestsOf(user).map((v) => v.timeOffId);
    },
    async advance(ms) {
      clock.advance(ms);
      await idle();
    },
    idle,
    async restart(env) {
      await sb.stop();
      sb = (await boot(port, env)).app;
    },
    async stop() {
      await sim.stop();
      for (const x of extra) await x.stop();
      await sb.stop();
      await fake.close();
      tmp.cleanup();
    },
  };
  // The directory Switchboard keeps, read once at start (one people search).
  await apiOf().sync.refreshDirectory();
  await idle();
  return h;
};

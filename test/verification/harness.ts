import { join } from 'node:path';
import type { VerificationOptions } from '../../handlers/verification/module.ts';
import { connectAll, type Simulator, simulatorEnv } from '../../sandbox/simulators/simulator.ts';
import type { FakeMessage, FakeSlack } from '../../sandbox/simulators/slack/fakeSlack.ts';
import { startVonageSimulator, type VonageSimulator } from '../../sandbox/simulators/vonage/index.ts';
import { createSwitchboard, type Switchboard } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { type ManualClock, manualClock } from '../../src/core/clock.ts';
import { ALL_LIFECYCLES } from '../../src/lifecycleList.ts';
import { createLogger } from '../../src/logger.ts';
import {
  VERIFICATION_ACTION,
  VERIFICATION_FIELD,
  VERIFICATION_VIEW,
} from '../../src/verification/blocks/ids.ts';
import { createLogSink, type LogSink } from '../support/logSink.ts';
import { settle } from '../support/settle.ts';
import { buttonValue, slackDriver, startTestSlack } from '../support/slackHarness.ts';
import { tempDir, testEnv } from '../support/startApp.ts';
import { waitFor } from '../support/waitFor.ts';

/**
 * The whole app (real HTTP, SQLite file, Bolt with real signatures) with the verification lifecycle
 * switched on against the communications simulator (`sandbox/simulators/vonage/`) and the fake
 * Slack, on one manual clock shared by the app, its scheduler and the simulator: expiry and limits
 * move when the test moves the clock, never with the wall clock.
 */
export const ANA = 'U0ANA';
export const BEN = 'U0BEN';
export const CHEN = 'U0CHEN';
/** Reserved drama numbers (Ofcom): typed as people do, with spaces. */
export const PHONE_A = {
  typed: '+44 7700 900123',
  digits: '447700900123',
  masked: '+44 •••• ••0123',
} as const;
export const PHONE_B = {
  typed: '+44 7700 900456',
  digits: '447700900456',
  masked: '+44 •••• ••0456',
} as const;
export const PHONE_C = {
  typed: '+44 7700 900789',
  digits: '447700900789',
  masked: '+44 •••• ••0789',
} as const;

export type VerificationHarness = Readonly<{
  sb: Switchboard;
  url: string;
  dbPath: string;
  clock: ManualClock;
  sim: VonageSimulator;
  fake: FakeSlack;
  logs: LogSink;
  /** `/verify <text>` as `user`; the ack's text. */
  verify(
    text: string,
    user?: string,
  ): Promise<{ status: number; text: string; responseUrl: string; body: unknown }>;
  /** The person's DMs from Switchboard, oldest first. */
  dms(user?: string): FakeMessage[];
  /** Waits for a DM whose text matches. */
  dm(match: RegExp, user?: string): Promise<FakeMessage>;
  /** Clicks a button of the latest DM that has it. */
  click(actionId: string, user?: string): Promise<{ status: number; responseUrl: string }>;
  /** Clicks "Enter code" and submits `code` in the modal; the submission's answer. */
  enterCode(code: string, user?: string): Promise<{ status: number; body: Record<string, unknown> | null }>;
  /** What was posted to a response_url (refusals, pending notes), as text. */
  responses(responseUrl: string): string[];
  response(responseUrl: string, match: RegExp): Promise<string>;
  /** Every event of the person's verification stream, by type. */
  types(user?: string): Promise<string[]>;
  idle(): Promise<void>;
  /** Stops and starts the app again on the same store and port (a new process: a new code vault). */
  restart(): Promise<void>;
  stop(): Promise<void>;
}>;

export const startVerificationHarness = async (
  options: Readonly<{
    env?: Record<string, string>;
    verification?: VerificationOptions;
    /** Each person's Slack time zone (`users.info` `tz`) by Slack id; Slack's UTC otherwise. */
    zones?: Readonly<Record<string, string>>;
  }> = {},
): Promise<VerificationHarness> => {
  const clock = manualClock('2026-11-23T09:00:00.000Z');
  const sim = await startVonageSimulator({
    clock,
    webhooks: { retryDelaysMs: [20, 50, 100], timeoutMs: 3_000 },
  });
  const fake = await startTestSlack({
    users: [
      { id: ANA, name: 'ana', real_name: 'Ana Silva', email: 'ana@example.org' },
      { id: BEN, name: 'ben', real_name: 'Ben Okafor', email: 'ben@example.org' },
      { id: CHEN, name: 'chen', real_name: 'Chen Wei', email: 'chen@example.org' },
    ].map((u) => (options.zones?.[u.id] ? { ...u, tz: options.zones[u.id] } : u)),
  });
  const tmp = tempDir('switchboard-verification-');
  const dbPath = join(tmp.dir, 'switchboard.db');
  const simulators: readonly Simulator[] = [fake, sim];
  const logs = createLogSink();
  const boot = async (port: number) => {
    const config = loadConfig(
      testEnv(fake, dbPath, { ...simulatorEnv(simulators), ...options.env, PORT: String(port) }),
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
        verification: { retry: { baseMs: 30, maxMs: 200 }, checkBudgetMs: 10_000, ...options.verification },
      },
    });
    const started = await app.start();
    return { app, ...started };
  };
  const first = await boot(0);
  let sb = first.app;
  const { url, port } = first;
  await connectAll(simulators, url);

  // Signed at the app's (manual) time: Bolt judges a request's freshness on the app's clock.
  const slack = slackDriver(fake, { url: () => url, clock });
  const dms = (user = ANA) => slack.dms(user);
  /** The value of the button on the latest DM of `user` that has one with a value. */
  const latestButtonValue = (user: string, actionId: string): string | undefined =>
    dms(user)
      .reverse()
      .map((m) => buttonValue(m, actionId))
      .find((v) => v);

  const h: VerificationHarness = {
    get sb() {
      return sb;
    },
    url,
    dbPath,
    clock,
    sim,
    fake,
    logs,
    async verify(text, user = ANA) {
      const typed = await slack.slash('/verify', text, { user, channel: fake.dmChannel(user).id });
      return { status: typed.status, text: typed.text, responseUrl: typed.responseUrl, body: typed.body };
    },
    dms,
    dm: (match, user = ANA) =>
      waitFor(() => dms(user).find((m) => match.test(m.text)), {
        what: `a DM to ${user} matching ${match}`,
        timeoutMs: 10_000,
      }),
    async click(actionId, user = ANA) {
      const value = await waitFor(() => latestButtonValue(user, actionId), {
        what: `a ${actionId} button in a DM to ${user}`,
        timeoutMs: 10_000,
      });
      const clicked = await slack.click(actionId, value, { user, channel: fake.dmChannel(user).id });
      return { status: clicked.status, responseUrl: clicked.responseUrl };
    },
    async enterCode(code, user = ANA) {
      const opened = fake.callsOf('views.open').length;
      const click = await h.click(VERIFICATION_ACTION.enterCode, user);
      if (click.status !== 200) throw new Error(`Enter code answered ${click.status}`);
      await waitFor(() => fake.callsOf('views.open').length > opened || undefined, {
        what: 'the code modal',
      });
      const modal = [...(fake.exportState().views as { view: Record<string, unknown> }[])].at(-1)?.view;
      return slack.submitView(
        VERIFICATION_VIEW.code,
        {
          [VERIFICATION_FIELD.codeBlock]: {
            [VERIFICATION_FIELD.code]: { type: 'plain_text_input', value: code },
          },
        },
        String(modal?.['private_metadata'] ?? ''),
        user,
      );
    },
    responses: (responseUrl) => slack.responses(responseUrl),
    response: (responseUrl, match) =>
      waitFor(() => h.responses(responseUrl).find((t) => match.test(t)), {
        what: `a reply matching ${match}`,
        timeoutMs: 10_000,
      }),
    async types(user = ANA) {
      return (await sb.store.readStream(`verification-${user}`))
        .filter((e) => e.kind === 'event')
        .map((e) => e.type);
    },
    idle: () => settle(sb, { deliveries: [sim.webhooks] }),
    async restart() {
      await sb.stop();
      sb = (await boot(port)).app;
    },
    async stop() {
      await sim.stop();
      await sb.stop();
      await fake.close();
      tmp.cleanup();
    },
  };
  return h;
};

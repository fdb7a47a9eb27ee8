import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { type FakeSlack, startFakeSlack } from '../../sandbox/simulators/slack/fakeSlack.ts';
import { type BodyKind, signedHeaders } from '../../sandbox/simulators/slack/signing.ts';
import { createSwitchboard, type Switchboard } from '../../src/app.ts';
import { type Env, loadConfig } from '../../src/config.ts';
import type { Clock } from '../../src/core/clock.ts';
import { ALL_LIFECYCLES } from '../../src/lifecycleList.ts';
import { createLogger, type Logger } from '../../src/logger.ts';
import { TEST_DATA_KEYS } from './dataKeys.ts';
import { createLogSink, type LogSink } from './logSink.ts';
import { compileCacheEnv } from './tempRoot.ts';

/**
 * Starts the whole app the way production does (real HTTP on loopback, SQLite file store, Bolt,
 * signature checks), with the Slack Web API pointed at a fake. For int tests and benches.
 *
 * @example
 * const t = await startTestApp();
 * const res = await t.postSlack(slashCommandBody({ text: 'list' }), 'form');
 * expect(res.status).toBe(200);
 * await t.stop();
 */

export const TEST_SIGNING_SECRET = 'test-signing-secret-5f0c2a9e7d1b';
export const TEST_BOT_TOKEN = 'xoxb-111-222-testbottoken';
export { TEST_DATA_KEYS };

export const ROOT = resolve(import.meta.dirname, '../..');
export const NODE24 = join(ROOT, 'node_modules/.bin/node');

/** A fresh temporary directory; remove it with the returned `cleanup`. */
export const tempDir = (prefix = 'switchboard-test-'): { dir: string; cleanup: () => void } => {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
};

/**
 * Environment for a test app: Slack credentials for the fake, a port chosen by the OS, a SQLite
 * file, the tests' data key ring.
 */
export const testEnv = (fake: FakeSlack, dbPath: string, extra: Env = {}): Record<string, string> => {
  const env: Record<string, string> = {
    SLACK_BOT_TOKEN: TEST_BOT_TOKEN,
    SLACK_SIGNING_SECRET: TEST_SIGNING_SECRET,
    SWITCHBOARD_DATA_KEYS: TEST_DATA_KEYS,
    SLACK_API_URL: fake.apiUrl,
    PORT: '0',
    EVENT_STORE_URL: `sqlite:${dbPath}`,
    LOG_LEVEL: 'debug',
    CI: 'true',
  };
  for (const [k, v] of Object.entries(extra)) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  return env;
};

export type SignedPostOptions = Readonly<{
  /** Unix seconds to sign with (default now). */
  timestamp?: number;
  /** Sign with this secret instead of the app's (a forgery). */
  secret?: string;
  /** Extra headers (e.g. X-Slack-Retry-Num), or overrides of the signed ones. */
  headers?: Record<string, string>;
}>;

export type TestApp = Readonly<{
  sb: Switchboard;
  url: string;
  fake: FakeSlack;
  logs: LogSink;
  dbPath: string;
  /** POSTs a body signed as Slack would to /slack/events. */
  postSlack(body: string, kind: BodyKind, options?: SignedPostOptions): Promise<Response>;
  stop(): Promise<void>;
}>;

export const postSigned = (
  url: string,
  body: string,
  kind: BodyKind,
  options: SignedPostOptions = {},
): Promise<Response> =>
  fetch(url, {
    method: 'POST',
    body,
    headers: {
      ...signedHeaders(options.secret ?? TEST_SIGNING_SECRET, body, kind, options.timestamp),
      ...options.headers,
    },
  });

export const startTestApp = async (
  options: Readonly<{ env?: Env; clock?: Clock; logger?: Logger; fake?: FakeSlack }> = {},
): Promise<TestApp> => {
  const fake = options.fake ?? (await startFakeSlack({ botToken: TEST_BOT_TOKEN }));
  const tmp = tempDir();
  const dbPath = join(tmp.dir, 'switchboard.db');
  const config = loadConfig(testEnv(fake, dbPath, options.env), ALL_LIFECYCLES);
  const logs = createLogSink();
  const logger =
    options.logger ?? createLogger({ level: 'debug', destination: logs.stream, secrets: config.secrets });
  const sb = await createSwitchboard({
    config,
    logger,
    host: '127.0.0.1',
    httpGraceMs: 1_000,
    ...(options.clock ? { clock: options.clock } : {}),
  });
  const { url } = await sb.start();
  return {
    sb,
    url,
    fake,
    logs,
    dbPath,
    postSlack: (body, kind, post) => postSigned(`${url}/slack/events`, body, kind, post),
    stop: async () => {
      await sb.stop();
      if (!options.fake) await fake.close();
      tmp.cleanup();
    },
  };
};

export type MainProcess = Readonly<{
  child: ChildProcess;
  url: string;
  /** Every stdout line so far, parsed (JSON logs). */
  lines(): Record<string, unknown>[];
  /** stdout and stderr so far, raw. */
  output(): string;
  /** Resolves with the exit code (or signal name). */
  exited: Promise<number | string>;
}>;

/**
 * Spawns `src/main.ts` with Node 24 as a child process, like `npm start`, and resolves once it
 * logs that it is listening. Rejects (with its output) if it exits first or takes over `timeoutMs`.
 * `command` runs something else that ends in main.ts (the real `npm start`); `detached` makes the
 * child a process-group leader, for signalling the group as a terminal does.
 */
/**
 * The variables that put a process on a shifted clock (libfaketime: `LD_PRELOAD`, `FAKETIME…`),
 * when this process has them, so a child started with a clean environment keeps the parent's
 * clock. That is how the suite is run with the clock set to another week:
 * `FAKETIME_DONT_FAKE_MONOTONIC=1 faketime -f +7d npm test`.
 */
export const shiftedClockEnv = (): Record<string, string> =>
  Object.fromEntries(
    Object.entries(process.env).filter(
      (e): e is [string, string] =>
        e[1] !== undefined && (e[0] === 'LD_PRELOAD' || e[0].startsWith('FAKETIME')),
    ),
  );

/** Kills (SIGKILL) every app child still running and empties the list: a crash test's afterEach. */
export const killAll = async (mains: MainProcess[]): Promise<void> => {
  for (const m of mains.splice(0)) {
    if (m.child.exitCode === null && m.child.signalCode === null) {
      m.child.kill('SIGKILL');
      await m.exited;
    }
  }
};

export const spawnMain = (
  env: Record<string, string>,
  timeoutMs = 90_000,
  launch: Readonly<{ command?: readonly [string, ...string[]]; detached?: boolean }> = {},
): Promise<MainProcess> =>
  new Promise((resolvePromise, reject) => {
    const [exe, ...args] = launch.command ?? [NODE24, join(ROOT, 'src/main.ts')];
    const child = spawn(exe, args, {
      cwd: ROOT,
      env: {
        PATH: process.env['PATH'] ?? '',
        HOME: process.env['HOME'] ?? '',
        ...shiftedClockEnv(),
        ...compileCacheEnv(),
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: launch.detached ?? false,
    });
    let out = '';
    const parsed: Record<string, unknown>[] = [];
    let pending = '';
    const exited = new Promise<number | string>((res) => {
      child.on('exit', (code, signal) => res(code ?? signal ?? 'unknown'));
    });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`main did not start within ${timeoutMs} ms:\n${out}`));
    }, timeoutMs);
    const handle: MainProcess = { child, url: '', lines: () => [...parsed], output: () => out, exited };
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      pending += chunk.toString();
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) {
        try {
          const entry = JSON.parse(line) as Record<string, unknown>;
          parsed.push(entry);
          if (entry['msg'] === 'Switchboard is listening' && typeof entry['port'] === 'number') {
            clearTimeout(timer);
            resolvePromise({ ...handle, url: `http://127.0.0.1:${entry['port']}` });
          }
        } catch {
          // not JSON: kept in output()
        }
      }
    });
    child.stderr.on('data', (chunk: Buffer) => {
      out += chunk.toString();
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`main exited (${code}) before listening:\n${out}`));
    });
  });

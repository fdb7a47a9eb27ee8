import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type FakeSlack, startFakeSlack } from '../../sandbox/simulators/slack/fakeSlack.ts';
import { createSwitchboard } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import type { ChatOpsError } from '../../src/core/errors.ts';
import { ALL_LIFECYCLES } from '../../src/lifecycleList.ts';
import { caught } from '../support/caught.ts';
import { createLogSink } from '../support/logSink.ts';
import { NODE24, ROOT, TEST_BOT_TOKEN, tempDir, testEnv } from '../support/startApp.ts';

/**
 * Start-up checks SLACK_BOT_TOKEN with auth.test. When that fails, the error says what failed:
 * Slack refusing the token, or Slack not being reachable (and how), each with its own code.
 */

let fake: FakeSlack;
const tmp = tempDir();
beforeAll(async () => {
  fake = await startFakeSlack({ botToken: TEST_BOT_TOKEN });
});
afterEach(() => fake.clearBehaviour());
afterAll(async () => {
  await fake.close();
  tmp.cleanup();
});

/** A loopback port nothing listens on (bound, then released). */
const closedPort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });

let n = 0;
/** Starts Switchboard with `env` over the fake's; resolves with the start-up error. */
const startFailure = async (env: Record<string, string> = {}): Promise<ChatOpsError> => {
  const logs = createLogSink();
  const config = loadConfig(testEnv(fake, join(tmp.dir, `auth-${++n}.db`), env), ALL_LIFECYCLES);
  const sb = await createSwitchboard({ config, logger: logs.logger({ secrets: config.secrets }) });
  try {
    return (await caught(sb.start())) as ChatOpsError;
  } finally {
    await sb.stop();
  }
};

describe('start-up token check (auth.test)', () => {
  it('Slack refusing the token: "Slack did not accept SLACK_BOT_TOKEN", SB_UPSTREAM_AUTH', async () => {
    const error = await startFailure({ SLACK_BOT_TOKEN: 'xoxb-not-the-right-one' });
    expect(error.code).toBe('SB_UPSTREAM_AUTH');
    expect(error.message).toBe('Slack did not accept SLACK_BOT_TOKEN (auth.test: invalid_auth)');
    fake.setBehaviour('auth.test', { error: 'account_inactive' });
    const inactive = await startFailure();
    expect(inactive.code).toBe('SB_UPSTREAM_AUTH');
    expect(inactive.message).toBe('Slack did not accept SLACK_BOT_TOKEN (auth.test: account_inactive)');
  });

  it('nothing listening at SLACK_API_URL: says it could not reach Slack there, and why', async () => {
    const port = await closedPort();
    const apiUrl = `http://127.0.0.1:${port}/api/`;
    const error = await startFailure({ SLACK_API_URL: apiUrl });
    expect(error.code).toBe('SB_UPSTREAM_UNAVAILABLE');
    expect(error.message).toBe(
      `Could not reach Slack at ${apiUrl} to check SLACK_BOT_TOKEN: connect ECONNREFUSED 127.0.0.1:${port}`,
    );
    expect(error.message).not.toContain('did not accept');
  });

  it.each([500, 503] as const)(
    'Slack answering HTTP %i: could not reach Slack, not a refused token',
    async (status) => {
      fake.setBehaviour('auth.test', { status });
      const error = await startFailure();
      expect(error.code).toBe('SB_UPSTREAM_UNAVAILABLE');
      expect(error.message).toMatch(
        new RegExp(
          `^Could not reach Slack at ${fake.apiUrl} to check SLACK_BOT_TOKEN: auth.test answered HTTP ${status}\\b`,
        ),
      );
    },
  );

  it('Slack answering a Slack-side error (fatal_error): could not reach Slack, not a refused token', async () => {
    fake.setBehaviour('auth.test', { error: 'fatal_error' });
    const error = await startFailure();
    expect(error.code).toBe('SB_UPSTREAM_UNAVAILABLE');
    expect(error.message).toBe(
      `Could not reach Slack at ${fake.apiUrl} to check SLACK_BOT_TOKEN: auth.test answered fatal_error (trouble on Slack's side)`,
    );
  });

  it('src/main.ts with Slack unreachable exits 1 and says what failed', async () => {
    const port = await closedPort();
    const apiUrl = `http://127.0.0.1:${port}/api/`;
    const child = spawn(NODE24, [join(ROOT, 'src/main.ts')], {
      cwd: ROOT,
      env: {
        PATH: process.env['PATH'] ?? '',
        ...testEnv(fake, join(tmp.dir, 'main.db'), { SLACK_API_URL: apiUrl }),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
    });
    child.stderr.on('data', (c: Buffer) => {
      out += c.toString();
    });
    const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
    expect(code).toBe(1);
    expect(out).toContain(
      `Switchboard failed to start: Could not reach Slack at ${apiUrl} to check SLACK_BOT_TOKEN: connect ECONNREFUSED`,
    );
    expect(out).not.toContain('did not accept');
    expect(out).not.toContain(TEST_BOT_TOKEN);
  });
});

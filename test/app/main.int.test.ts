import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeSlack, startFakeSlack } from '../../sandbox/simulators/slack/fakeSlack.ts';
import { nowSeconds, slashCommandBody } from '../../sandbox/simulators/slack/signing.ts';
import { SLACK_INBOX_STREAM, type SlackInputReceivedData } from '../../src/application/inbox.ts';
import { openEventStore } from '../../src/eventStore/openEventStore.ts';
import {
  NODE24,
  postSigned,
  ROOT,
  spawnMain,
  TEST_BOT_TOKEN,
  TEST_SIGNING_SECRET,
  tempDir,
  testEnv,
} from '../support/startApp.ts';

/** `npm start` as a child process with Node 24, the way production runs it. */
let fake: FakeSlack;
const tmp = tempDir();
beforeAll(async () => {
  fake = await startFakeSlack({ botToken: TEST_BOT_TOKEN });
});
afterAll(async () => {
  await fake.close();
  tmp.cleanup();
});

const run = (env: Record<string, string>): Promise<{ code: number | null; stderr: string; stdout: string }> =>
  new Promise((resolve) => {
    const child = spawn(NODE24, [join(ROOT, 'src/main.ts')], {
      cwd: ROOT,
      env: { PATH: process.env['PATH'] ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => {
      stdout += c.toString();
    });
    child.stderr.on('data', (c: Buffer) => {
      stderr += c.toString();
    });
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });

describe('npm start (src/main.ts)', () => {
  it('without Slack credentials exits non-zero, lists what is missing and points to the sandbox', async () => {
    const { code, stderr } = await run({
      SLACK_SIGNING_SECRET: 'only-this-one-is-set',
      PAGERDUTY_TOKEN: 'pd-secret-xyz',
    });
    expect(code).toBe(2);
    expect(stderr).toContain('SLACK_BOT_TOKEN is not set');
    expect(stderr).toContain('PAGERDUTY_WEBHOOK_SECRET is not set');
    expect(stderr).toContain('npm run sandbox');
    expect(stderr).not.toContain('only-this-one-is-set');
    expect(stderr).not.toContain('pd-secret-xyz');
  });

  it('exits 1 with a clear message when Slack refuses the bot token', async () => {
    const env = testEnv(fake, join(tmp.dir, 'badtoken.db'), { SLACK_BOT_TOKEN: 'xoxb-not-the-right-one' });
    const { code, stdout } = await run(env);
    expect(code).toBe(1);
    expect(stdout).toContain('Slack did not accept SLACK_BOT_TOKEN (auth.test: invalid_auth)');
    expect(stdout).not.toContain('xoxb-not-the-right-one');
  });

  it('answers a signed slash command, serves ops endpoints, refuses forgeries, and exits 0 on SIGTERM with the store closed', async () => {
    const dbPath = join(tmp.dir, 'main.db');
    const main = await spawnMain(testEnv(fake, dbPath, { LOG_LEVEL: 'info' }));
    try {
      const slack = `${main.url}/slack/events`;
      const ok = await postSigned(slack, slashCommandBody({ command: '/incident', text: 'list' }), 'form');
      expect(ok.status).toBe(200);
      expect(((await ok.json()) as { response_type: string }).response_type).toBe('ephemeral');

      const forged = slashCommandBody({ command: '/incident', text: 'forged' });
      expect((await postSigned(slack, forged, 'form', { secret: 'wrong-secret' })).status).toBe(401);
      expect((await postSigned(slack, forged, 'form', { timestamp: nowSeconds() - 600 })).status).toBe(401);
      expect((await postSigned(slack, forged, 'form', { timestamp: nowSeconds() + 600 })).status).toBe(401);

      expect((await fetch(`${main.url}/healthz`)).status).toBe(200);
      expect((await fetch(`${main.url}/readyz`)).status).toBe(200);
      const metrics = await (await fetch(`${main.url}/metrics`)).text();
      expect(metrics).toContain('switchboard_slack_ack_duration_seconds_count{kind="slash_command"} 1');
    } finally {
      main.child.kill('SIGTERM');
    }
    expect(await main.exited).toBe(0);
    expect(main.lines().map((l) => l['msg'])).toContain('Switchboard stopped; store closed');
    const logs = main.output();
    for (const secret of [TEST_SIGNING_SECRET, TEST_BOT_TOKEN, 'hooks.slack.com/commands']) {
      expect(logs).not.toContain(secret);
    }

    // The command is in the store, and nothing that was refused is.
    const store = await openEventStore(`sqlite:${dbPath}`);
    try {
      const inbox = await store.readStream(SLACK_INBOX_STREAM);
      expect(inbox).toHaveLength(1);
      const data = inbox[0]?.data as unknown as SlackInputReceivedData | undefined;
      expect(data?.input).toMatchObject({
        inputKind: 'slash_command',
        name: '/incident',
        payload: { text: 'list' },
      });
    } finally {
      await store.close();
    }
  });
});

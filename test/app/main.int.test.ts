import { spawn } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeSlack, startFakeSlack } from '../../sandbox/simulators/slack/fakeSlack.ts';
import { nowSeconds, slashCommandBody } from '../../sandbox/simulators/slack/signing.ts';
import { SLACK_INBOX_STREAM, type SlackInputReceivedData } from '../../src/application/inbox.ts';
import { openEventStore } from '../../src/eventStore/openEventStore.ts';
import { createPersonKeys } from '../../src/people/personKeys.ts';
import { ringEntry, TEST_DATA_KEYS, testKeyRing } from '../support/dataKeys.ts';
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
    expect(stderr).toContain('SWITCHBOARD_DATA_KEYS is not set: make a key with `npm run keys -- generate`');
    expect(stderr).toContain('npm run sandbox');
    expect(stderr).not.toContain('only-this-one-is-set');
    expect(stderr).not.toContain('pd-secret-xyz');
  });

  it('exits 2 before listening when the data key ring cannot open the person keys in the store, naming SWITCHBOARD_DATA_KEYS', async () => {
    const dbPath = join(tmp.dir, 'lostring.db');
    const store = await openEventStore(`sqlite:${dbPath}`);
    try {
      await createPersonKeys({ store, ring: testKeyRing(ringEntry('lost', 9)) }).seal(
        'U0ANA',
        '447700900101',
      );
    } finally {
      await store.close();
    }
    const vonage = {
      VONAGE_API_KEY: 'key123',
      VONAGE_API_SECRET: 'Secret123',
      VONAGE_APPLICATION_ID: 'app-1',
      VONAGE_PRIVATE_KEY: generateKeyPairSync('rsa', { modulusLength: 2048 })
        .privateKey.export({ type: 'pkcs8', format: 'pem' })
        .toString(),
      VONAGE_SIGNATURE_SECRET: 'vonage-signature-secret-1',
      VONAGE_FROM_NUMBER: '+447700900000',
    };
    const { code, stderr, stdout } = await run(testEnv(fake, dbPath, { ...vonage, LOG_LEVEL: 'info' }));
    expect(code).toBe(2);
    expect(stderr).toContain(
      'Switchboard cannot start: SWITCHBOARD_DATA_KEYS cannot open the data keys of 1 person',
    );
    expect(stderr).toContain('ring key "lost", which SWITCHBOARD_DATA_KEYS does not hold');
    expect(stderr).toContain('npm run keys -- forget-unreadable');
    expect(stdout).not.toContain('Switchboard is listening');
    expect(stdout + stderr).not.toContain(TEST_DATA_KEYS.slice(5));
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

import { spawn } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type Sandbox, startSandbox } from '../../sandbox/sandbox.ts';
import { ADMIN, INCIDENTS_CHANNEL, routingKeyOf, SERVICES } from '../../sandbox/world.ts';
import { SLACK_INBOX_STREAM } from '../../src/application/inbox.ts';
import { NODE24, ROOT, tempDir } from '../support/startApp.ts';
import { waitFor } from '../support/waitFor.ts';

const dirs: Array<() => void> = [];
const running: Sandbox[] = [];
afterEach(async () => {
  for (const s of running.splice(0)) await s.stop();
  for (const c of dirs.splice(0)) c();
});

const start = async (dataDir: string, reset: boolean) => {
  const s = await startSandbox({ dataDir, reset, ports: 0, logLevel: 'warn' });
  running.push(s);
  return s;
};
const slashInputs = async (s: Sandbox) =>
  (await s.store.readStream(SLACK_INBOX_STREAM)).map(
    (e) =>
      (e.data as { input: { name: string; actor: string; channelId: string; payload: { text: string } } })
        .input,
  );

describe('the sandbox', () => {
  it('seeds a fresh world: #incidents subscribed through the bot, open incidents announced by signed webhooks', async () => {
    const tmp = tempDir('sandbox-seed-');
    dirs.push(tmp.cleanup);
    const s = await start(tmp.dir, true);
    expect(s.restored).toBe(false);

    const subscribes = (await slashInputs(s)).filter((i) => i.payload.text.startsWith('subscribe '));
    expect(subscribes.map((i) => [i.name, i.actor, i.channelId, i.payload.text])).toEqual(
      Object.keys(SERVICES).map((name) => [
        '/incident',
        ADMIN.slackId,
        INCIDENTS_CHANNEL,
        `subscribe ${name}`,
      ]),
    );

    const incidents = [...s.sim.state.incidents.values()];
    expect(incidents.map((i) => [i.number, i.status])).toEqual([
      [1, 'triggered'],
      [2, 'acknowledged'],
    ]);
    const toBot = await waitFor(
      () => {
        const a = s.sim.webhooks.attempts.filter((x) => x.url === `${s.botUrl}/webhooks/pagerduty`);
        return a.length >= 3 ? a : undefined;
      },
      { what: 'webhook deliveries to the bot' },
    );
    const secret =
      (s.sb.config.slices['incidents'] as { webhookSecret: string } | undefined)?.webhookSecret ?? '';
    expect(secret).not.toBe('');
    for (const a of toBot) {
      const expected = `v1=${createHmac('sha256', secret).update(a.body).digest('hex')}`;
      expect(a.headers['x-pagerduty-signature']).toBe(expected);
    }
    expect(toBot.map((a) => a.eventType).slice(0, 3)).toEqual([
      'incident.triggered',
      'incident.triggered',
      'incident.acknowledged',
    ]);
    // The bot took them (signature and all) and posted both cards in #incidents.
    expect(toBot.slice(0, 3).map((a) => a.status)).toEqual([200, 200, 200]);
    const cards = await waitFor(
      () => {
        const texts = s.fake.messages(INCIDENTS_CHANNEL).map((m) => m.text);
        const found = incidents.map((i) => texts.find((t) => t.includes(i.title)));
        return found.every((t) => t !== undefined) ? found : undefined;
      },
      { what: 'cards of the seeded incidents in #incidents' },
    );
    expect(cards[0]).toContain('Triggered');
    // Nothing the bot sent the simulators broke their vendor's contract.
    expect(s.contractViolations()).toEqual([]);
  });

  it('keeps the world across a restart, and --reset starts over', async () => {
    const tmp = tempDir('sandbox-restart-');
    dirs.push(tmp.cleanup);
    const first = await start(tmp.dir, true);
    await waitFor(
      () =>
        first.fake.messages(INCIDENTS_CHANNEL).some((m) => m.text.includes('Replication lag')) || undefined,
      { timeoutMs: 10_000, what: 'the seeded card' },
    );
    await fetch(`${first.console.url}/api/message`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ user: ADMIN.slackId, channel: INCIDENTS_CHANNEL, text: 'before the restart' }),
    });
    const inputsBefore = (await slashInputs(first)).length;
    const incidentIds = [...first.sim.state.incidents.keys()];
    await first.stop();
    running.splice(0);

    const second = await start(tmp.dir, false);
    expect(second.restored).toBe(true);
    // Not seeded again: the bot's inbox did not grow.
    expect((await slashInputs(second)).length).toBe(inputsBefore);
    // The bot can still act on a card it posted before the restart: Acknowledge updates it in place.
    const card = second.fake.messages(INCIDENTS_CHANNEL).find((m) => m.text.includes('Replication lag'));
    expect(card?.text).toContain('Triggered');
    const blocks = (card?.blocks ?? []) as Array<{ type: string }>;
    const clicked = await fetch(`${second.console.url}/api/action`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        user: ADMIN.slackId,
        surface: { kind: 'message', channel: INCIDENTS_CHANNEL, ts: card?.ts },
        blockIndex: blocks.findIndex((b) => b.type === 'actions'),
        elementIndex: 0,
      }),
    });
    expect(await clicked.json()).toMatchObject({ ok: true });
    await waitFor(
      () =>
        second.fake
          .messages(INCIDENTS_CHANNEL)
          .find((m) => m.ts === card?.ts)
          ?.text.includes('Acknowledged') || undefined,
      { timeoutMs: 10_000, what: 'the restored card acknowledged in place' },
    );
    expect(second.fake.messages(INCIDENTS_CHANNEL).map((m) => m.text)).toContain('before the restart');
    expect(second.fake.ephemerals.filter((e) => e.user === ADMIN.slackId).length).toBeGreaterThanOrEqual(3);
    expect([...second.sim.state.incidents.keys()]).toEqual(incidentIds);
    // New incidents get new numbers and ids.
    const res = await fetch(`${second.sim.eventsUrl}/v2/enqueue`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        routing_key: routingKeyOf('web'),
        event_action: 'trigger',
        payload: { summary: 'CDN 5xx', source: 'test', severity: 'warning' },
      }),
    });
    expect(res.status).toBe(202);
    const fresh = [...second.sim.state.incidents.values()].find((i) => i.title === 'CDN 5xx');
    expect(fresh?.number).toBeGreaterThan(2);
    expect(incidentIds).not.toContain(fresh?.id);
    await second.stop();
    running.splice(0);

    const third = await start(tmp.dir, true);
    expect(third.restored).toBe(false);
    expect(third.fake.messages(INCIDENTS_CHANNEL).map((m) => m.text)).not.toContain('before the restart');
    expect((await slashInputs(third)).length).toBe(Object.keys(SERVICES).length);
  });

  it('restores a world saved by an earlier sandbox (incidents and its rotation start only)', async () => {
    const tmp = tempDir('sandbox-v1-');
    dirs.push(tmp.cleanup);
    const first = await start(tmp.dir, true);
    const incidents = [...first.sim.state.incidents.values()];
    const cards = await waitFor(
      () => {
        const messages = first.fake.messages(INCIDENTS_CHANNEL);
        return incidents.every((i) => messages.some((m) => m.text.includes(i.title))) ? messages : undefined;
      },
      { timeoutMs: 10_000, what: 'the seeded cards' },
    );
    await first.stop();
    running.splice(0);
    // Rewrite the save as sandboxes before the simulator interface wrote it (version 1).
    const path = join(tmp.dir, 'sandbox-world.json');
    const saved = JSON.parse(readFileSync(path, 'utf8')) as {
      savedAt: string;
      simulators: { slack: unknown };
    };
    const rotationStart = '2026-01-05T09:00:00Z';
    writeFileSync(
      path,
      JSON.stringify({
        version: 1,
        savedAt: saved.savedAt,
        slack: saved.simulators.slack,
        pagerduty: { incidents, rotationStart },
      }),
    );

    const second = await start(tmp.dir, false);
    expect(second.restored).toBe(true);
    expect(second.fake.messages(INCIDENTS_CHANNEL).map((m) => m.ts)).toEqual(
      expect.arrayContaining(cards.map((m) => m.ts)),
    );
    expect([...second.sim.state.incidents.values()]).toEqual(incidents);
    // The account is the world's, with its rotations where the saved world had them.
    for (const schedule of second.sim.state.schedules.values()) {
      expect(schedule.layers.map((l) => l.rotationVirtualStart)).toEqual([rotationStart]);
    }
    const created = second.sim.webApp.trigger({
      serviceId: SERVICES.web.id,
      title: 'after the upgrade',
      byEmail: ADMIN.email,
    });
    expect(created.number).toBe(Math.max(...incidents.map((i) => i.number)) + 1);
    expect(incidents.flatMap((i) => [i.id, ...i.logEntries.map((l) => l.id)])).not.toContain(created.id);
    second.save();
    expect(JSON.parse(readFileSync(path, 'utf8'))).toMatchObject({ version: 2 });
  });

  it('`npm run sandbox` prints the console URL and how to browse its store, serves the console, and stops on SIGTERM', async () => {
    const tmp = tempDir('sandbox-main-');
    dirs.push(tmp.cleanup);
    const child = spawn(
      NODE24,
      [join(ROOT, 'sandbox/main.ts'), '--port', '0', '--data', tmp.dir, '--reset'],
      {
        cwd: ROOT,
        env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
    });
    child.stderr.on('data', (c: Buffer) => {
      err += c.toString();
    });
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    try {
      const url = await waitFor(() => /(http:\/\/127\.0\.0\.1:\d+\/)/.exec(out)?.[1], {
        timeoutMs: 20_000,
        what: `the console URL (stdout: ${out}, stderr: ${err})`,
      });
      const page = await fetch(url);
      expect(page.status).toBe(200);
      expect(await page.text()).toContain('<title>Switchboard sandbox</title>');
      // The second line is a command that works as printed, while the sandbox runs.
      const command = await waitFor(() => /^Browse its event store: (.+)$/m.exec(out)?.[1], {
        what: `the store command (stdout: ${out})`,
      });
      expect(command).toBe(`EVENT_STORE_URL=sqlite:${join(tmp.dir, 'sandbox.db')} npm run events -- streams`);
      const browse = spawn('sh', ['-c', command], {
        cwd: ROOT,
        env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let listed = '';
      browse.stdout.on('data', (c: Buffer) => {
        listed += c.toString();
      });
      expect(await new Promise((r) => browse.on('exit', (code) => r(code)))).toBe(0);
      expect(listed).toContain(SLACK_INBOX_STREAM);
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      expect(out.trim().split('\n')).toHaveLength(2);
      expect(out).toMatch(/^Switchboard sandbox: http:\/\/127\.0\.0\.1:\d+\/ /);
      expect(err).toBe('');
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });
});

describe('the sandbox phones across restarts, and its paging delays', () => {
  it('keeps each phone (its number, texts and calls) with the saved world', async () => {
    const tmp = tempDir('sandbox-phones-restart-');
    dirs.push(tmp.cleanup);
    // Not seeded, and the bot does not hear of the text (webhooks held): only the phone changes.
    const first = await startSandbox({
      dataDir: tmp.dir,
      reset: true,
      ports: 0,
      logLevel: 'warn',
      seed: false,
    });
    running.push(first);
    const frank = first.phoneBook[ADMIN.slackId]!;
    first.vonage.webhooks.hold();
    await first.phones.sendSms(frank, 'hello from before');
    // Saved soon after the phone changed, not only when the sandbox stops.
    await waitFor(
      () =>
        readFileSync(join(tmp.dir, 'sandbox-world.json'), 'utf8').includes('hello from before') || undefined,
      { timeoutMs: 5_000, what: 'the world saved after a text' },
    );
    await first.stop();
    running.splice(0);
    const saved = JSON.parse(readFileSync(join(tmp.dir, 'sandbox-world.json'), 'utf8')) as {
      phones: Record<string, string>;
    };
    expect(saved.phones[ADMIN.slackId]).toBe(frank);

    const second = await start(tmp.dir, false);
    expect(second.phoneBook).toEqual(first.phoneBook);
    expect(second.phones.view(frank).sms.map((m) => [m.direction, m.text])).toEqual([
      ['sent', 'hello from before'],
    ]);
  });

  it('--page-after and --call-after reach the bot as its paging delays; anything but whole minutes is refused', async () => {
    const tmp = tempDir('sandbox-paging-');
    dirs.push(tmp.cleanup);
    const s = await startSandbox({
      dataDir: tmp.dir,
      reset: true,
      ports: 0,
      logLevel: 'warn',
      seed: false,
      paging: { delayMinutes: 0, callAfterMinutes: 2 },
    });
    running.push(s);
    const incidents = s.sb.config.slices['incidents'] as {
      paging?: { delayMs: number; callAfterMs: number };
    };
    expect(incidents.paging).toMatchObject({ delayMs: 0, callAfterMs: 120_000 });

    const child = spawn(NODE24, [join(ROOT, 'sandbox/main.ts'), '--page-after', '1.5', '--data', tmp.dir], {
      cwd: ROOT,
      env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let err = '';
    child.stderr.on('data', (c: Buffer) => {
      err += c.toString();
    });
    expect(await new Promise((r) => child.on('exit', (code) => r(code)))).toBe(1);
    expect(err).toMatch(/^--page-after must be a whole number of minutes \(0-9999\)\nUsage: npm run sandbox/);
  });
});

/**
 * Incident click-to-card benchmark (issue 4): `npm run bench` runs it with the others; alone:
 * `node scripts/node24.mjs bench/incident.bench.ts [--quick]` or `npm run bench -- incident`.
 *
 * The app runs as a child process (`src/main.ts`, SQLite file store with WAL + synchronous=FULL)
 * against the fake Slack Web API and the PagerDuty simulator (both loopback HTTP, in this process),
 * with the simulator's V3 webhooks subscribed to the app. A channel subscribed to the service gets
 * one card per incident (created "in the web app" beforehand); then a signed Acknowledge click is
 * sent for each card, one after another, and timed:
 * - click → ack: until Slack's HTTP request is answered (the click is recorded);
 * - click → card: until the card's `chat.update` shows "Acknowledged by" (recorded, enriched with
 *   the user's incident-service identity, decided, acknowledged upstream with the user's `From`,
 *   recorded, rendered).
 * Baseline: the bare Bolt app of bench/ack.bench.ts (`--serve-bare`: acks, records nothing) timed
 * on the same number of sequential signed requests in the same run.
 *
 * Also a burst: 60 priority changes of one incident made in the web app as fast as the simulator
 * sends them; reports `chat.update` calls per change (coalescing: `chat.update` is a Tier 3 method,
 * about 50 calls a minute, https://api.slack.com/methods/chat.update) and checks the card ends on
 * the last priority.
 */
import { join, resolve } from 'node:path';
import { Pool } from 'undici';
import { startPagerDutySimulator } from '../sandbox/simulators/pagerduty/index.ts';
import { type FakeChange, startFakeSlack } from '../sandbox/simulators/slack/fakeSlack.ts';
import {
  blockActionPayload,
  interactionBody,
  signedHeaders,
  slashCommandBody,
} from '../sandbox/simulators/slack/signing.ts';
import { BENCH_DATA_KEYS, emit, note, percentile, startChild, tempDir } from './support.ts';

const ROOT = resolve(import.meta.dirname, '..');
const SIGNING_SECRET = 'bench-signing-secret-3c1f9a';
const BOT_TOKEN = 'xoxb-bench-0000-token';
const WEBHOOK_SECRET = 'bench-webhook-secret-51d2';
const CHANNEL = 'C0BENCH';
const CLICKER = { slack: 'U0ANA', email: 'ana.silva@example.org' };

const quick = process.argv.includes('--quick');
const CLICKS = quick ? 100 : 500;
const WARMUP = quick ? 10 : 30;
const BURST = 60;

const waitUntil = async <T>(check: () => T | undefined, what: string, timeoutMs = 60_000): Promise<T> => {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = check();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
};

const main = async (): Promise<void> => {
  const sim = await startPagerDutySimulator({
    webhooks: { retryDelaysMs: [50, 100, 200, 400], timeoutMs: 5_000 },
  });
  const fake = await startFakeSlack({
    botToken: BOT_TOKEN,
    users: [{ id: CLICKER.slack, name: 'ana', real_name: 'Ana Silva', email: CLICKER.email }],
    channels: [{ id: CHANNEL, name: 'bench', is_im: false }],
  });
  const dir = tempDir('switchboard-incident-bench');
  const app = await startChild([join(ROOT, 'src/main.ts')], {
    SLACK_BOT_TOKEN: BOT_TOKEN,
    SLACK_SIGNING_SECRET: SIGNING_SECRET,
    SWITCHBOARD_DATA_KEYS: BENCH_DATA_KEYS,
    SLACK_API_URL: fake.apiUrl,
    EVENT_STORE_URL: `sqlite:${join(dir.path, 'incident.db')}`,
    PORT: '0',
    LOG_LEVEL: 'info',
    CI: 'true',
    PAGERDUTY_API_URL: sim.url,
    PAGERDUTY_EVENTS_URL: sim.eventsUrl,
    PAGERDUTY_TOKEN: sim.token,
    PAGERDUTY_WEBHOOK_SECRET: WEBHOOK_SECRET,
    // 530 clicks back to back send ~2,000 requests a minute, over the real service's 960 (the
    // simulator here does not limit): lift Switchboard's budget so the bench measures latency.
    PAGERDUTY_REQUESTS_PER_MINUTE: '100000',
  });
  const baseline = await startChild([join(ROOT, 'bench/ack.bench.ts'), '--serve-bare'], {});
  const pool = new Pool(app.url, { connections: 4 });
  const basePool = new Pool(baseline.url, { connections: 4 });
  const post = async (p: Pool, body: string, kind: 'form' | 'json') => {
    const res = await p.request({
      path: '/slack/events',
      method: 'POST',
      headers: signedHeaders(SIGNING_SECRET, body, kind),
      body,
    });
    await res.body.text();
    if (res.statusCode !== 200) throw new Error(`Slack request answered ${res.statusCode}`);
  };

  try {
    sim.subscribe({ url: `${app.url}/webhooks/pagerduty`, secret: WEBHOOK_SECRET });
    await post(
      pool,
      slashCommandBody({ text: 'subscribe Payments API', channel_id: CHANNEL, user_id: CLICKER.slack }),
      'form',
    );
    await waitUntil(
      () => fake.messages(CHANNEL).find((m) => m.text.includes('now gets a card')) ?? undefined,
      'the subscription',
    );

    const total = WARMUP + CLICKS;
    note(`incident bench: creating ${total} incidents in the web app, one card each in #bench`);
    const incidents: { id: string; number: number }[] = [];
    for (let i = 0; i < total; i++) {
      incidents.push(
        sim.webApp.trigger({
          serviceId: 'PSVC001',
          title: `bench incident ${i}`,
          byEmail: 'ben.okafor@example.org',
        }),
      );
    }
    const cardOf = (n: number) => fake.messages(CHANNEL).find((m) => m.text.startsWith(`#${n} `));
    await waitUntil(
      () => (incidents.every((i) => cardOf(i.number)?.blocks) ? true : undefined),
      'every card',
      180_000,
    );
    // The click needs the card's stream id: its buttons carry it.
    const streamOf = (n: number): string => {
      const blocks = (cardOf(n)?.blocks ?? []) as {
        type: string;
        elements?: { action_id: string; value?: string }[];
      }[];
      const ack = blocks.flatMap((b) => b.elements ?? []).find((e) => e.action_id === 'incident.acknowledge');
      if (!ack?.value) throw new Error(`card #${n} has no Acknowledge button`);
      return ack.value;
    };

    const clickToAck: number[] = [];
    const clickToCard: number[] = [];
    note(`incident bench: ${WARMUP} warm-up clicks, then ${CLICKS} measured clicks one after another`);
    for (const [i, incident] of incidents.entries()) {
      const streamId = streamOf(incident.number);
      const shown = new Promise<number>((done) => {
        const onChange = (c: FakeChange) => {
          if (
            c.kind === 'message.updated' &&
            c.message.text.startsWith(`#${incident.number} `) &&
            c.message.text.includes('Acknowledged by')
          ) {
            fake.events.off('change', onChange);
            done(performance.now());
          }
        };
        fake.events.on('change', onChange);
      });
      const body = interactionBody(
        blockActionPayload({
          action_id: 'incident.acknowledge',
          value: streamId,
          user_id: CLICKER.slack,
          channel_id: CHANNEL,
        }),
      );
      const started = performance.now();
      await post(pool, body, 'form');
      const acked = performance.now();
      const carded = await Promise.race([
        shown,
        new Promise<number>((_, reject) =>
          setTimeout(() => reject(new Error(`no card update for #${incident.number}`)), 30_000),
        ),
      ]);
      if (i >= WARMUP) {
        clickToAck.push(acked - started);
        clickToCard.push(carded - started);
      }
    }
    const wrongFrom = sim
      .requestsFor('updateIncident')
      .filter((r) => r.headers.from !== CLICKER.email).length;
    const writes = sim.requestsFor('updateIncident').length;
    if (writes !== total || wrongFrom > 0) {
      throw new Error(
        `expected ${total} acknowledgements from ${CLICKER.email}; saw ${writes} (${wrongFrom} with another From)`,
      );
    }

    note(`incident bench: baseline, ${CLICKS} sequential signed requests to bare Bolt`);
    const base: number[] = [];
    for (let i = 0; i < WARMUP + CLICKS; i++) {
      const body = slashCommandBody({ command: '/incident', text: `list ${i}` });
      const started = performance.now();
      await post(basePool, body, 'form');
      if (i >= WARMUP) base.push(performance.now() - started);
    }

    note(`incident bench: burst of ${BURST} priority changes to one incident`);
    const target = incidents[0]!;
    const updatesBefore = fake
      .callsOf('chat.update')
      .filter((c) => String(c.params.text ?? '').startsWith(`#${target.number} `)).length;
    const priorities = ['P1', 'P2', 'P3', 'P4', 'P5'];
    for (let i = 0; i < BURST; i++)
      sim.webApp.setPriority(target.id, priorities[i % priorities.length]!, 'ben.okafor@example.org');
    const last = priorities[(BURST - 1) % priorities.length]!;
    await sim.webhooks.idle();
    await waitUntil(
      () =>
        JSON.stringify(cardOf(target.number)?.blocks ?? []).includes(`*Priority*\\n${last}`)
          ? true
          : undefined,
      'the card to show the last priority',
    );
    await new Promise((r) => setTimeout(r, 500));
    const burstUpdates =
      fake.callsOf('chat.update').filter((c) => String(c.params.text ?? '').startsWith(`#${target.number} `))
        .length - updatesBefore;

    const bare = 'bare Bolt HTTPReceiver ack (bench/ack.bench.ts --serve-bare), sequential';
    emit({
      bench: 'incident.clickToCard.p50',
      value: percentile(clickToCard, 50),
      unit: 'ms',
      baseline: bare,
      baselineValue: percentile(base, 50),
    });
    emit({
      bench: 'incident.clickToCard.p99',
      value: percentile(clickToCard, 99),
      unit: 'ms',
      baseline: bare,
      baselineValue: percentile(base, 99),
    });
    emit({
      bench: 'incident.clickToAck.p50',
      value: percentile(clickToAck, 50),
      unit: 'ms',
      baseline: bare,
      baselineValue: percentile(base, 50),
    });
    emit({
      bench: 'incident.clickToAck.p99',
      value: percentile(clickToAck, 99),
      unit: 'ms',
      baseline: bare,
      baselineValue: percentile(base, 99),
    });
    emit({
      bench: 'incident.cardBurst.updatesPerChange',
      value: burstUpdates / BURST,
      unit: 'chat.update per change',
      baseline: 'one chat.update per change (no coalescing)',
      baselineValue: 1,
    });
    const p = (xs: number[], q: number) => percentile(xs, q).toFixed(1);
    note(
      `incident bench: click→card p50 ${p(clickToCard, 50)} ms, p90 ${p(clickToCard, 90)} ms, p99 ${p(clickToCard, 99)} ms, max ${Math.max(...clickToCard).toFixed(1)} ms; ` +
        `click→ack p50 ${p(clickToAck, 50)} ms, p99 ${p(clickToAck, 99)} ms; bare Bolt p50 ${p(base, 50)} ms, p99 ${p(base, 99)} ms (${clickToCard.length} clicks)`,
    );
    note(
      `incident bench: burst of ${BURST} changes → ${burstUpdates} chat.update calls; the card ends on ${last}`,
    );
    sim.assertNoViolations();
  } finally {
    await pool.close();
    await basePool.close();
    await app.stop();
    await baseline.stop();
    await sim.stop();
    await fake.close();
    dir.cleanup();
  }
};

await main();

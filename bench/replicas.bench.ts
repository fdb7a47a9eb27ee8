/**
 * Several replicas on one store (issue 13): `npm run bench -- replicas` (`--quick` for fewer rounds
 * and commands). Real app processes (src/main.ts) on one SQLite file (WAL, synchronous=FULL), the
 * fake Slack and the incident-service simulator in this process, everything on loopback.
 *
 * - **replicas.takeover**: three replicas; `kill -9` of the one holding every claim; the time until
 *   the other two hold every claim between them (read from their /metrics every 25 ms). With
 *   SWITCHBOARD_CLAIM_EXPIRY_SECONDS=3 (rounds) and at the default 15 s (one round). Baseline: the
 *   expiry itself, the least a takeover after a crash can take (a graceful stop releases at once).
 * - **replicas.throughput**: signed `/incident trigger …` commands, 8 in flight, spread round robin
 *   over three replicas, against the same load sent to one replica alone (fresh store each);
 *   commands per second from the first send until every incident has its card in Slack.
 *   **replicas.ack**: the same runs, commands acknowledged per second (the HTTP side alone).
 */
import { join } from 'node:path';
import { startPagerDutySimulator } from '../sandbox/simulators/pagerduty/index.ts';
import { startFakeSlack } from '../sandbox/simulators/slack/fakeSlack.ts';
import {
  cardsOf,
  claimsOf,
  REPLICA_CHANNEL,
  REPLICA_USER,
  REPLICA_WEBHOOK_SECRET,
  sendTrigger,
  spawnReplica,
} from '../test/support/replicas.ts';
import { killAll, type MainProcess, TEST_BOT_TOKEN, TEST_SIGNING_SECRET } from '../test/support/startApp.ts';
import { emit, median, note, tempDir } from './support.ts';

const quick = process.argv.includes('--quick');
const TAKEOVER_ROUNDS = quick ? 2 : 5;
const COMMANDS = quick ? 60 : 300;
const IN_FLIGHT = 8;

const waitUntil = async <T>(
  check: () => Promise<T | undefined> | T | undefined,
  what: string,
  timeoutMs = 120_000,
) => {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
};

const pd = await startPagerDutySimulator({
  webhookSecret: REPLICA_WEBHOOK_SECRET,
  webhooks: { retryDelaysMs: [50, 200, 500, 1_000], timeoutMs: 5_000 },
});
const fake = await startFakeSlack({
  botToken: TEST_BOT_TOKEN,
  signingSecret: TEST_SIGNING_SECRET,
  users: [{ id: REPLICA_USER.slack, name: 'ana', real_name: 'Ana Silva', email: REPLICA_USER.email }],
  channels: [{ id: REPLICA_CHANNEL, name: 'ops', is_im: false }],
});
const tmp = tempDir('switchboard-bench-replicas');
const mains: MainProcess[] = [];
// The incident service's own limit is not what this measures.
const env = { PAGERDUTY_REQUESTS_PER_MINUTE: '100000' };

const cluster = async (name: string, count: number, claimExpirySeconds: number) => {
  const dbPath = join(tmp.path, `${name}.db`);
  const started: MainProcess[] = [];
  for (let i = 0; i < count; i++) {
    const main = await spawnReplica({ id: `${name}-${i}`, dbPath, fake, pd, claimExpirySeconds, env });
    mains.push(main);
    started.push(main);
    if (i === 0) {
      // The first one claims everything before the others start.
      await waitUntil(async () => {
        const held = await claimsOf(main.url);
        return held.size > 0 && [...held.values()].every(Boolean) ? true : undefined;
      }, 'the first replica holding every claim');
    }
  }
  return started;
};

const takeover = async (name: string, claimExpirySeconds: number): Promise<number> => {
  const [a, b, c] = (await cluster(name, 3, claimExpirySeconds)) as [MainProcess, MainProcess, MainProcess];
  const claimed = [...(await claimsOf(a.url)).keys()];
  const killedAt = performance.now();
  a.child.kill('SIGKILL');
  await a.exited;
  await waitUntil(async () => {
    const [hb, hc] = [await claimsOf(b.url), await claimsOf(c.url)];
    return claimed.every((p) => Number(hb.get(p) === true) + Number(hc.get(p) === true) === 1)
      ? true
      : undefined;
  }, 'the takeover');
  const ms = performance.now() - killedAt;
  await killAll(mains);
  return ms;
};

const throughput = async (
  name: string,
  replicas: number,
): Promise<{ perSecond: number; acksPerSecond: number }> => {
  const started = await cluster(name, replicas, 15);
  await pd.connect(started.at(-1)!.url);
  const titles = Array.from({ length: COMMANDS }, (_, i) => `${name} load ${i}`);
  let next = 0;
  const t0 = performance.now();
  let acked = 0;
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (next < titles.length) {
        const i = next++;
        if (await sendTrigger(started[i % started.length]!.url, fake, titles[i]!)) acked++;
      }
    }),
  );
  const ackedMs = performance.now() - t0;
  if (acked !== COMMANDS) throw new Error(`${COMMANDS - acked} commands not acknowledged`);
  const wanted = new Set(titles);
  await waitUntil(() => {
    let done = 0;
    for (const incident of pd.state.incidents.values()) {
      if (wanted.has(incident.title) && cardsOf(fake, incident.number).length > 0) done++;
    }
    return done === COMMANDS ? true : undefined;
  }, 'every card');
  const ms = performance.now() - t0;
  await killAll(mains);
  return { perSecond: (COMMANDS * 1000) / ms, acksPerSecond: (COMMANDS * 1000) / ackedMs };
};

try {
  const fast: number[] = [];
  for (let r = 0; r < TAKEOVER_ROUNDS; r++) {
    fast.push(await takeover(`takeover3s${r}`, 3));
    note(`takeover (3 s expiry) round ${r + 1}: ${fast.at(-1)!.toFixed(0)} ms`);
  }
  emit({
    bench: 'replicas.takeover.expiry3s',
    value: median(fast),
    unit: 'ms (median)',
    baseline: 'claim expiry',
    baselineValue: 3_000,
    target: 'value <= 10000 ms',
    met: Math.max(...fast) <= 10_000,
  });
  const slow = await takeover('takeover15s', 15);
  note(`takeover (15 s expiry, the default): ${slow.toFixed(0)} ms`);
  emit({
    bench: 'replicas.takeover.expiry15s',
    value: slow,
    unit: 'ms',
    baseline: 'claim expiry',
    baselineValue: 15_000,
  });

  // Alternate which goes first, as the other benches do.
  const three: { perSecond: number; acksPerSecond: number }[] = [];
  const one: { perSecond: number; acksPerSecond: number }[] = [];
  const rounds = quick ? 1 : 3;
  for (let r = 0; r < rounds; r++) {
    const order = r % 2 === 0 ? (['three', 'one'] as const) : (['one', 'three'] as const);
    for (const which of order) {
      const result = await throughput(`${which}${r}`, which === 'three' ? 3 : 1);
      (which === 'three' ? three : one).push(result);
      note(
        `${which} replica(s), round ${r + 1}: ${result.perSecond.toFixed(1)} commands/s to cards, ${result.acksPerSecond.toFixed(1)} acks/s`,
      );
    }
  }
  emit({
    bench: 'replicas.throughput',
    value: median(three.map((x) => x.perSecond)),
    unit: 'commands/s to card',
    baseline: 'one replica',
    baselineValue: median(one.map((x) => x.perSecond)),
  });
  emit({
    bench: 'replicas.ack',
    value: median(three.map((x) => x.acksPerSecond)),
    unit: 'commands acked/s',
    baseline: 'one replica',
    baselineValue: median(one.map((x) => x.acksPerSecond)),
  });
} finally {
  await killAll(mains);
  await pd.stop();
  await fake.close();
  tmp.cleanup();
}

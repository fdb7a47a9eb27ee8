/**
 * Ack path benchmark (issue 3): `npm run bench` runs it with the others; alone:
 * `node scripts/node24.mjs bench/ack.bench.ts [--quick]`.
 *
 * Signed slash commands are sent open-loop at 200 requests/s to four servers, each a child process
 * on loopback, measured side by side in the same run (rounds rotate which server goes first):
 * - candidate: the full app (`src/main.ts`: our receiver, Bolt, the recording middleware, one
 *   durable append to the SQLite file store with WAL + synchronous=FULL before `ack()`);
 * - memory: the same app on `sqlite::memory:` (what the app costs apart from the disk);
 * - floor: a bare Bolt app whose listener does one raw `node:sqlite` INSERT of a row the size and
 *   shape of the app's inbox record (same table and indexes, WAL + synchronous=FULL, SQLite's
 *   defaults otherwise) before it acks: the least any app that keeps "a 2xx is a durability
 *   promise" can do on this disk;
 * - baseline: a bare Bolt app (Bolt's own HTTPReceiver) that acks every command without recording.
 *
 * Figures (JSON lines on stdout; latency from request sent to response read):
 * - ack.slashCommand.p50 at 200 req/s: ratio candidate/baseline, target ≤ 1.5;
 * - ack.slashCommand.p99 at 200 req/s: target candidate ≤ 25 ms;
 * - ack.slashCommand.sequential.p99: 200 requests one after another, target ≤ 50 ms;
 * - ack.slashCommand.inMemoryStore.p50/p99: the app without the disk vs bare Bolt;
 * - ack.slashCommand.vsFloor.p50/p99: the app vs the floor (how much the app adds to one commit);
 * - ack.slashCommand.floor.p50/p99: the floor vs bare Bolt (what one durable commit costs here).
 * Afterwards it checks that every command the candidate acked is in its store exactly once.
 */
import { join, resolve } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { setTimeout as sleep } from 'node:timers/promises';
import { App } from '@slack/bolt';
import { Pool } from 'undici';
import { startFakeSlack } from '../sandbox/simulators/slack/fakeSlack.ts';
import { signedHeaders, slashCommandBody } from '../sandbox/simulators/slack/signing.ts';
import { SLACK_INBOX_STREAM } from '../src/application/inbox.ts';
import { openEventStore } from '../src/eventStore/openEventStore.ts';
import { migrate } from '../src/eventStore/sqlite/schema.ts';
import {
  BENCH_DATA_KEYS,
  emit,
  median,
  note,
  percentile,
  type Server,
  startChild,
  tempDir,
} from './support.ts';

const ROOT = resolve(import.meta.dirname, '..');
const SIGNING_SECRET = 'bench-signing-secret-3c1f9a';
const BOT_TOKEN = 'xoxb-bench-0000-token';
const RATE = 200;

const quick = process.argv.includes('--quick');
const ROUNDS = quick ? 2 : 6;
const PER_ROUND = quick ? 200 : 600; // 3 s at 200 req/s
const WARMUP = quick ? 100 : 400;
const SEQUENTIAL = 200;

// ---------- baseline and floor servers (child processes: `ack.bench.ts --serve-bare | --serve-floor`) ----------

const bareApp = (): App =>
  new App({
    signingSecret: SIGNING_SECRET,
    token: BOT_TOKEN,
    // No Slack behind this one: skip auth.test.
    botId: 'B0BENCH',
    botUserId: 'U0BENCH',
    tokenVerificationEnabled: false,
    convoStore: false,
  });

const listen = async (app: App): Promise<void> => {
  const server = (await app.start(0)) as { address(): { port: number } };
  process.stdout.write(
    `${JSON.stringify({ msg: 'Switchboard is listening', port: server.address().port })}\n`,
  );
  process.on('SIGTERM', () => {
    void app.stop().then(() => process.exit(0));
  });
};

const serveBare = async (): Promise<void> => {
  const app = bareApp();
  app.command(/.*/, async ({ ack }) => {
    await ack({ response_type: 'ephemeral', text: 'ok' });
  });
  await listen(app);
};

/**
 * Bare Bolt plus one raw durable commit per command: an INSERT (autocommit, so one transaction and
 * one WAL sync) of a row like the app's inbox record into the store's own `messages` table, then
 * the ack. No stream-head lookup, no batching, no validation: the least a durable ack costs.
 */
const serveFloor = async (dbPath: string): Promise<void> => {
  const db = new DatabaseSync(dbPath);
  db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL');
  migrate(db, Date.now);
  const insert = db.prepare(
    'INSERT INTO messages (stream_id, stream_revision, message_id, message_kind, type, data, metadata, recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
  );
  let revision = -1;
  const app = bareApp();
  app.command(/.*/, async ({ ack, command }) => {
    const receivedAt = new Date().toISOString();
    // The same fields the app records (who, where, which delivery, the payload), ~900 bytes.
    const data = JSON.stringify({
      input: {
        source: 'slack',
        inputKind: 'slash_command',
        deliveryId: command.trigger_id,
        name: command.command,
        receivedAt,
        actor: command.user_id,
        teamId: command.team_id,
        channelId: command.channel_id,
        triggerId: command.trigger_id,
        responseUrl: command.response_url,
        payload: command,
      },
      commands: [],
    });
    const metadata = JSON.stringify({
      source: 'slack',
      inputKind: 'slash_command',
      actor: command.user_id,
      receivedAt,
    });
    revision += 1;
    insert.run(
      'inbox-slack',
      revision,
      `floor:${command.trigger_id}`,
      'C',
      'SlackInputReceived',
      data,
      metadata,
      Date.now(),
    );
    await ack({ response_type: 'ephemeral', text: 'ok' });
  });
  await listen(app);
};

// ---------- harness ----------

type Signed = { body: string; headers: Record<string, string> };

const signedCommands = (n: number): Signed[] =>
  Array.from({ length: n }, (_, i) => {
    const body = slashCommandBody({ command: '/incident', text: `list ${i}` });
    return { body, headers: signedHeaders(SIGNING_SECRET, body, 'form') };
  });

const send = async (pool: Pool, c: Signed): Promise<number> => {
  const started = performance.now();
  const res = await pool.request({ path: '/slack/events', method: 'POST', headers: c.headers, body: c.body });
  await res.body.text();
  if (res.statusCode !== 200) throw new Error(`ack answered ${res.statusCode}`);
  return performance.now() - started;
};

/** Open loop: request i is sent at start + i / rate, whether or not earlier ones have answered. */
const openLoop = async (pool: Pool, commands: Signed[], rate: number): Promise<number[]> => {
  const interval = 1000 / rate;
  const start = performance.now();
  const pending: Promise<number>[] = [];
  for (let i = 0; i < commands.length; i++) {
    const due = start + i * interval;
    const wait = due - performance.now();
    if (wait > 1) await sleep(wait);
    pending.push(send(pool, commands[i]!));
  }
  return Promise.all(pending);
};

const sequential = async (pool: Pool, commands: Signed[]): Promise<number[]> => {
  const out: number[] = [];
  for (const c of commands) out.push(await send(pool, c));
  return out;
};

const appEnv = (fakeApiUrl: string, storeUrl: string): Record<string, string> => ({
  SLACK_BOT_TOKEN: BOT_TOKEN,
  SLACK_SIGNING_SECRET: SIGNING_SECRET,
  SWITCHBOARD_DATA_KEYS: BENCH_DATA_KEYS,
  SLACK_API_URL: fakeApiUrl,
  EVENT_STORE_URL: storeUrl,
  PORT: '0',
  LOG_LEVEL: 'info',
  CI: 'true',
});

const SIDES = ['candidate', 'memory', 'floor', 'baseline'] as const;
type Side = (typeof SIDES)[number];

const main = async (): Promise<void> => {
  const fake = await startFakeSlack({ botToken: BOT_TOKEN });
  const dir = tempDir('switchboard-ack-bench');
  const dbPath = join(dir.path, 'ack.db');
  const servers: Record<Side, Server> = {
    candidate: await startChild([join(ROOT, 'src/main.ts')], appEnv(fake.apiUrl, `sqlite:${dbPath}`)),
    // The same app on an in-memory store: what the app costs apart from the disk's fsync.
    memory: await startChild([join(ROOT, 'src/main.ts')], appEnv(fake.apiUrl, 'sqlite::memory:')),
    floor: await startChild(
      [join(ROOT, 'bench/ack.bench.ts'), '--serve-floor', join(dir.path, 'floor.db')],
      {},
    ),
    baseline: await startChild([join(ROOT, 'bench/ack.bench.ts'), '--serve-bare'], {}),
  };
  const pools = Object.fromEntries(
    SIDES.map((side) => [side, new Pool(servers[side].url, { connections: 32, pipelining: 1 })]),
  ) as Record<Side, Pool>;
  const samples: Record<Side, number[]> = { candidate: [], memory: [], floor: [], baseline: [] };
  const seq: Record<Side, number[]> = { candidate: [], memory: [], floor: [], baseline: [] };
  // Each round's p50 per side, for the paired (same-round) ratios: drift over the run cancels out.
  const roundP50: Record<Side, number[]> = { candidate: [], memory: [], floor: [], baseline: [] };
  let sent = 0;
  // Issue 19: Slack profile look-ups (users.info, for reader time zones) the two apps made.
  let usersInfoCalls = 0;
  try {
    note(`ack bench: warming up (${WARMUP} requests each)`);
    for (const side of SIDES) await openLoop(pools[side], signedCommands(WARMUP), RATE);
    sent += WARMUP;

    note(
      `ack bench: ${ROUNDS} rotating rounds of ${PER_ROUND} signed slash commands at ${RATE} req/s per server`,
    );
    // Rotate which server goes first each round, so drift on a shared machine hits all of them.
    for (let round = 0; round < ROUNDS; round++) {
      for (let k = 0; k < SIDES.length; k++) {
        const side = SIDES[(round + k) % SIDES.length]!;
        const latencies = await openLoop(pools[side], signedCommands(PER_ROUND), RATE);
        samples[side].push(...latencies);
        roundP50[side].push(percentile(latencies, 50));
      }
      sent += PER_ROUND;
    }
    for (const side of SIDES) seq[side] = await sequential(pools[side], signedCommands(SEQUENTIAL));
    sent += SEQUENTIAL;
  } finally {
    await Promise.all(SIDES.map((side) => pools[side].close()));
    await Promise.all(SIDES.map((side) => servers[side].stop()));
    usersInfoCalls = fake.callsOf('users.info').length;
    await fake.close();
  }

  const bare = 'bare Bolt HTTPReceiver acking without recording';
  const floor = 'bare Bolt + one raw node:sqlite WAL/FULL insert before ack';
  const p = (xs: number[], q: number) => percentile(xs, q);
  note(`ack bench: users.info calls by both apps in the run: ${usersInfoCalls}`);
  const pairedP50 = (a: Side, b: Side) => median(roundP50[a].map((x, i) => x / roundP50[b][i]!));
  const p50Ratio = p(samples.candidate, 50) / p(samples.baseline, 50);
  emit({
    bench: 'ack.slashCommand.p50',
    value: p(samples.candidate, 50),
    unit: 'ms',
    baseline: bare,
    baselineValue: p(samples.baseline, 50),
    target: 'ratio <= 1.5',
    met: p50Ratio <= 1.5,
  });
  emit({
    bench: 'ack.slashCommand.p99',
    value: p(samples.candidate, 99),
    unit: 'ms',
    baseline: bare,
    baselineValue: p(samples.baseline, 99),
    target: 'value <= 25 ms',
    met: p(samples.candidate, 99) <= 25,
  });
  emit({
    bench: 'ack.slashCommand.sequential.p99',
    value: p(seq.candidate, 99),
    unit: 'ms',
    baseline: bare,
    baselineValue: p(seq.baseline, 99),
    target: 'value < 50 ms',
    met: p(seq.candidate, 99) < 50,
  });
  emit({
    bench: 'ack.slashCommand.inMemoryStore.p50',
    value: p(samples.memory, 50),
    unit: 'ms',
    baseline: bare,
    baselineValue: p(samples.baseline, 50),
  });
  emit({
    bench: 'ack.slashCommand.inMemoryStore.p99',
    value: p(samples.memory, 99),
    unit: 'ms',
    baseline: bare,
    baselineValue: p(samples.baseline, 99),
  });
  emit({
    bench: 'ack.slashCommand.vsFloor.p50',
    value: p(samples.candidate, 50),
    unit: 'ms',
    baseline: floor,
    baselineValue: p(samples.floor, 50),
  });
  emit({
    bench: 'ack.slashCommand.vsFloor.p99',
    value: p(samples.candidate, 99),
    unit: 'ms',
    baseline: floor,
    baselineValue: p(samples.floor, 99),
  });
  emit({
    bench: 'ack.slashCommand.floor.p50',
    value: p(samples.floor, 50),
    unit: 'ms',
    baseline: bare,
    baselineValue: p(samples.baseline, 50),
  });
  emit({
    bench: 'ack.slashCommand.floor.p99',
    value: p(samples.floor, 99),
    unit: 'ms',
    baseline: bare,
    baselineValue: p(samples.baseline, 99),
  });
  for (const side of SIDES) {
    note(
      `ack bench: ${side.padEnd(9)} p50 ${p(samples[side], 50).toFixed(2)} ms, p90 ${p(samples[side], 90).toFixed(2)} ms, ` +
        `p99 ${p(samples[side], 99).toFixed(2)} ms, max ${Math.max(...samples[side]).toFixed(2)} ms; ` +
        `sequential p50 ${p(seq[side], 50).toFixed(2)} ms, p99 ${p(seq[side], 99).toFixed(2)} ms (${samples[side].length} + ${seq[side].length} samples); ` +
        `round p50s ${roundP50[side].map((x) => x.toFixed(2)).join(' ')}`,
    );
  }
  note(
    `ack bench: p50 ratios, pooled / median of same-round pairs: app/bare ${p50Ratio.toFixed(2)} / ${pairedP50('candidate', 'baseline').toFixed(2)}, ` +
      `app/floor ${(p(samples.candidate, 50) / p(samples.floor, 50)).toFixed(2)} / ${pairedP50('candidate', 'floor').toFixed(2)}, ` +
      `floor/bare ${(p(samples.floor, 50) / p(samples.baseline, 50)).toFixed(2)} / ${pairedP50('floor', 'baseline').toFixed(2)}, ` +
      `memory/bare ${(p(samples.memory, 50) / p(samples.baseline, 50)).toFixed(2)} / ${pairedP50('memory', 'baseline').toFixed(2)}`,
  );

  // The disk alone: raw node:sqlite single-insert commits back to back (no HTTP), WAL + FULL.
  const raw = new DatabaseSync(join(dir.path, 'commits.db'));
  raw.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; CREATE TABLE t (v TEXT)');
  const insert = raw.prepare('INSERT INTO t (v) VALUES (?)');
  const commits: number[] = [];
  for (let i = 0; i < 500; i++) {
    const started = performance.now();
    insert.run('x'.repeat(600));
    commits.push(performance.now() - started);
  }
  raw.close();
  note(
    `ack bench: disk alone, raw node:sqlite WAL+FULL single-insert commits back to back p50 ${p(commits, 50).toFixed(2)} ms, ` +
      `p99 ${p(commits, 99).toFixed(2)} ms`,
  );

  // Every command the file-store app acked is in its store exactly once (and the floor did commit).
  const store = await openEventStore(`sqlite:${dbPath}`);
  const recorded = await store.readStream(SLACK_INBOX_STREAM);
  await store.close();
  const floorDb = new DatabaseSync(join(dir.path, 'floor.db'));
  const floorRows = (floorDb.prepare('SELECT COUNT(*) AS n FROM messages').get() as { n: number }).n;
  floorDb.close();
  dir.cleanup();
  if (floorRows !== sent)
    throw new Error(`the floor server stored ${floorRows} rows for ${sent} acked commands`);
  const unique = new Set(recorded.map((e) => e.id)).size;
  if (recorded.length !== sent || unique !== sent) {
    throw new Error(`store holds ${recorded.length} inputs (${unique} distinct) for ${sent} acked commands`);
  }
  note(`ack bench: all ${sent} commands the app acked are in its store exactly once`);
};

const floorAt = process.argv.indexOf('--serve-floor');
if (process.argv.includes('--serve-bare')) await serveBare();
else if (floorAt > 0) await serveFloor(process.argv[floorAt + 1] ?? 'floor.db');
else await main();

/**
 * Ack path benchmark (issue 3): `npm run bench` runs it with the others; alone:
 * `node scripts/node24.mjs bench/ack.bench.ts [--quick]`.
 *
 * Signed slash commands are sent open-loop at 200 requests/s to two servers, each a child process
 * on loopback, measured side by side in the same run (interleaved rounds):
 * - candidate: the full app (`src/main.ts`: our receiver, Bolt, the recording middleware, one
 *   durable append to the SQLite file store with WAL + synchronous=FULL before `ack()`);
 * - baseline: a bare Bolt app (Bolt's own HTTPReceiver) that acks every command without recording.
 *
 * Figures (JSON lines on stdout; latency from request sent to response read):
 * - ack.slashCommand.p50 at 200 req/s: ratio candidate/baseline, target ≤ 1.5;
 * - ack.slashCommand.p99 at 200 req/s: target candidate ≤ 25 ms;
 * - ack.slashCommand.sequential.p99: 200 requests one after another, target ≤ 50 ms.
 * Afterwards it checks that every command the candidate acked is in its store exactly once.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { join, resolve } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { setTimeout as sleep } from 'node:timers/promises';
import { App } from '@slack/bolt';
import { Pool } from 'undici';
import { SLACK_INBOX_STREAM } from '../src/application/inbox.ts';
import { openEventStore } from '../src/eventStore/openEventStore.ts';
import { startFakeSlack } from '../test/support/fakeSlack.ts';
import { signedHeaders, slashCommandBody } from '../test/support/slackSigning.ts';
import { emit, note, percentile, tempDir } from './support.ts';

const ROOT = resolve(import.meta.dirname, '..');
const SIGNING_SECRET = 'bench-signing-secret-3c1f9a';
const BOT_TOKEN = 'xoxb-bench-0000-token';
const RATE = 200;

const quick = process.argv.includes('--quick');
const ROUNDS = quick ? 2 : 6;
const PER_ROUND = quick ? 200 : 600; // 3 s at 200 req/s
const WARMUP = quick ? 100 : 400;
const SEQUENTIAL = 200;

// ---------- baseline server (runs in a child process: `ack.bench.ts --serve-bare`) ----------

const serveBare = async (): Promise<void> => {
  const app = new App({
    signingSecret: SIGNING_SECRET,
    token: BOT_TOKEN,
    // No Slack behind this one: skip auth.test.
    botId: 'B0BENCH',
    botUserId: 'U0BENCH',
    tokenVerificationEnabled: false,
    convoStore: false,
  });
  app.command(/.*/, async ({ ack }) => {
    await ack({ response_type: 'ephemeral', text: 'ok' });
  });
  const server = (await app.start(0)) as { address(): { port: number } };
  process.stdout.write(
    `${JSON.stringify({ msg: 'Switchboard is listening', port: server.address().port })}\n`,
  );
  process.on('SIGTERM', () => {
    void app.stop().then(() => process.exit(0));
  });
};

// ---------- harness ----------

type Server = { url: string; child: ChildProcess; stop(): Promise<void> };

const startChild = (args: string[], env: Record<string, string>): Promise<Server> =>
  new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, args, {
      cwd: ROOT,
      env: { PATH: process.env['PATH'] ?? '', ...env },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let buffer = '';
    const onData = (chunk: Buffer) => {
      buffer += chunk.toString();
      const match =
        /"msg":"Switchboard is listening"[^\n]*?"port":(\d+)|"port":(\d+)[^\n]*"msg":"Switchboard is listening"/.exec(
          buffer,
        );
      if (!match) return;
      child.stdout?.off('data', onData);
      child.stdout?.resume();
      const port = match[1] ?? match[2];
      resolvePromise({
        url: `http://127.0.0.1:${port}`,
        child,
        stop: () =>
          new Promise((done) => {
            child.once('exit', () => done());
            child.kill('SIGTERM');
          }),
      });
    };
    child.stdout?.on('data', onData);
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited ${code} before listening`)));
  });

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
  SLACK_API_URL: fakeApiUrl,
  EVENT_STORE_URL: storeUrl,
  PORT: '0',
  LOG_LEVEL: 'info',
  CI: 'true',
});

const SIDES = ['candidate', 'memory', 'baseline'] as const;
type Side = (typeof SIDES)[number];

const main = async (): Promise<void> => {
  const fake = await startFakeSlack({ botToken: BOT_TOKEN });
  const dir = tempDir('switchboard-ack-bench');
  const dbPath = join(dir.path, 'ack.db');
  const servers: Record<Side, Server> = {
    candidate: await startChild([join(ROOT, 'src/main.ts')], appEnv(fake.apiUrl, `sqlite:${dbPath}`)),
    // The same app on an in-memory store: what the app costs apart from the disk's fsync.
    memory: await startChild([join(ROOT, 'src/main.ts')], appEnv(fake.apiUrl, 'sqlite::memory:')),
    baseline: await startChild([join(ROOT, 'bench/ack.bench.ts'), '--serve-bare'], {}),
  };
  const pools = Object.fromEntries(
    SIDES.map((side) => [side, new Pool(servers[side].url, { connections: 32, pipelining: 1 })]),
  ) as Record<Side, Pool>;
  const samples: Record<Side, number[]> = { candidate: [], memory: [], baseline: [] };
  const seq: Record<Side, number[]> = { candidate: [], memory: [], baseline: [] };
  let sent = 0;
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
        samples[side].push(...(await openLoop(pools[side], signedCommands(PER_ROUND), RATE)));
      }
      sent += PER_ROUND;
    }
    for (const side of SIDES) seq[side] = await sequential(pools[side], signedCommands(SEQUENTIAL));
    sent += SEQUENTIAL;
  } finally {
    await Promise.all(SIDES.map((side) => pools[side].close()));
    await Promise.all(SIDES.map((side) => servers[side].stop()));
    await fake.close();
  }

  const base = 'bare Bolt HTTPReceiver acking without recording';
  const p = (xs: number[], q: number) => percentile(xs, q);
  emit({
    bench: 'ack.slashCommand.p50',
    value: p(samples.candidate, 50),
    unit: 'ms',
    baseline: base,
    baselineValue: p(samples.baseline, 50),
  });
  emit({
    bench: 'ack.slashCommand.p99',
    value: p(samples.candidate, 99),
    unit: 'ms',
    baseline: base,
    baselineValue: p(samples.baseline, 99),
  });
  emit({
    bench: 'ack.slashCommand.sequential.p99',
    value: p(seq.candidate, 99),
    unit: 'ms',
    baseline: base,
    baselineValue: p(seq.baseline, 99),
  });
  emit({
    bench: 'ack.slashCommand.inMemoryStore.p50',
    value: p(samples.memory, 50),
    unit: 'ms',
    baseline: base,
    baselineValue: p(samples.baseline, 50),
  });
  emit({
    bench: 'ack.slashCommand.inMemoryStore.p99',
    value: p(samples.memory, 99),
    unit: 'ms',
    baseline: base,
    baselineValue: p(samples.baseline, 99),
  });
  for (const side of SIDES) {
    note(
      `ack bench: ${side.padEnd(9)} p50 ${p(samples[side], 50).toFixed(2)} ms, p90 ${p(samples[side], 90).toFixed(2)} ms, ` +
        `p99 ${p(samples[side], 99).toFixed(2)} ms, max ${Math.max(...samples[side]).toFixed(2)} ms; ` +
        `sequential p50 ${p(seq[side], 50).toFixed(2)} ms, p99 ${p(seq[side], 99).toFixed(2)} ms (${samples[side].length} + ${seq[side].length} samples)`,
    );
  }

  // The floor under a durable ack on this disk: one raw node:sqlite insert per commit, WAL + FULL.
  const raw = new DatabaseSync(join(dir.path, 'floor.db'));
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
    `ack bench: disk floor, raw node:sqlite WAL+FULL single-insert commit p50 ${p(commits, 50).toFixed(2)} ms, ` +
      `p99 ${p(commits, 99).toFixed(2)} ms`,
  );

  // Every command the file-store app acked is in its store exactly once.
  const store = await openEventStore(`sqlite:${dbPath}`);
  const recorded = await store.readStream(SLACK_INBOX_STREAM);
  await store.close();
  dir.cleanup();
  const unique = new Set(recorded.map((e) => e.id)).size;
  if (recorded.length !== sent || unique !== sent) {
    throw new Error(`store holds ${recorded.length} inputs (${unique} distinct) for ${sent} acked commands`);
  }
  note(`ack bench: all ${sent} commands the app acked are in its store exactly once`);
};

if (process.argv.includes('--serve-bare')) await serveBare();
else await main();

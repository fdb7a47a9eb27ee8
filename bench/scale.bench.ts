/**
 * Start-up at scale (issue 13): `npm run bench -- scale [--quick]`, alone
 * `node scripts/node24.mjs bench/scale.bench.ts [--quick] [--sizes=100000,1000000] [--candidate-first]`.
 *
 * For 10k, 100k and 1M events of history (`--quick`: 10k only), and an empty store for reference
 * (what a start costs whatever the history: loading the code, Slack's auth.test), a SQLite store is generated: 70 %
 * recorded Slack inputs in `inbox-slack`, 30 % incident facts over many incidents (requested,
 * linked, triggered, card posted, escalation timer scheduled, acknowledged, timer cancelled,
 * resolved; one incident in twenty stays open with its timer pending). It is written straight into
 * the adapter's `messages` table (the schema the adapter creates, one transaction per 50k rows,
 * synchronous off while generating): the append API would take minutes per million events. The
 * checkpointed processors' checkpoints are then stored at the head, as in a store whose inputs were
 * all handled, so a start measures what re-reads history rather than a backlog being processed.
 *
 * Then the app (`src/main.ts`, SQLite WAL, the incidents and verification lifecycles on against the
 * simulators in this process) is started as a child process, and timed from spawn to the first
 * `/readyz` 200, with its RSS (`/proc/<pid>/status` VmRSS) read at that moment; stopped with SIGTERM
 * (graceful: it writes snapshots) and started again ("restart"). Each start is also timed from the
 * app's first log line (its code loaded and composed) to ready: `*.afterLoad` lines, the part that
 * depends on the store, less blurred by a loaded machine's module loading. The baseline is the code before
 * read models resumed (`SCALE_BASELINE_REF`, default the commit this work started from), extracted
 * with `git archive` and run the same way on its own copy of the same store, interleaved per size.
 */
import { spawn, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readFileSync, symlinkSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { startPagerDutySimulator } from '../sandbox/simulators/pagerduty/index.ts';
import { simulatorEnv, stopAll } from '../sandbox/simulators/simulator.ts';
import { startFakeSlack } from '../sandbox/simulators/slack/fakeSlack.ts';
import { startVonageSimulator } from '../sandbox/simulators/vonage/index.ts';
import { createSwitchboard } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { openEventStore } from '../src/eventStore/openEventStore.ts';
import { ALL_LIFECYCLES } from '../src/lifecycleList.ts';
import { createLogger } from '../src/logger.ts';
import { BENCH_DATA_KEYS, emit, median, note, tempDir } from './support.ts';

const ROOT = resolve(import.meta.dirname, '..');
const BASELINE_REF = process.env['SCALE_BASELINE_REF'] ?? '98ef5cf978f77516dd5ac4df3a2220767a7b06f1';
const quick = process.argv.includes('--quick');
const sizesFlag = process.argv.find((a) => a.startsWith('--sizes='));
const SIZES = sizesFlag
  ? sizesFlag.slice('--sizes='.length).split(',').map(Number)
  : quick
    ? [0, 10_000]
    : [0, 10_000, 100_000, 1_000_000];
const RESTARTS = quick ? 1 : 2;
const BOT_TOKEN = 'xoxb-bench-scale-token';
const SIGNING_SECRET = 'bench-scale-signing-secret';

// ---------- the store

/** Writes `total` events into a fresh SQLite store at `path`; returns the head position. */
const generateStore = async (path: string, total: number): Promise<bigint> => {
  const store = await openEventStore(`sqlite:${path}`); // creates the schema
  await store.close();
  const db = new DatabaseSync(path);
  db.exec('PRAGMA synchronous = OFF');
  const insert = db.prepare(
    'INSERT INTO messages (position, stream_id, stream_revision, message_id, message_kind, type, data, metadata, recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
  );
  const t0 = Date.parse('2026-01-01T00:00:00Z');
  const service = { id: 'PSVC1', name: 'Payments API' };
  let inboxRevision = 0;
  let incident = 0;
  let fact = 0;
  const open = new Set<number>();
  const incidentFact = (n: number, step: number, at: string): [string, number, string, object, 'E'] => {
    const stream = `incident-${n.toString(36).padStart(8, '0')}`;
    const timer = `timer-escalate-${n}`;
    const keepOpen = n % 20 === 0;
    switch (step) {
      case 0:
        return [
          stream,
          0,
          'IncidentTriggerRequested',
          { service, title: `Checkout errors ${n}`, urgency: 'high', at },
          'E',
        ];
      case 1:
        return [
          stream,
          1,
          'IncidentLinked',
          { upstreamId: `Q${n.toString(36).toUpperCase()}`, number: n, at },
          'E',
        ];
      case 2:
        return [
          stream,
          2,
          'IncidentTriggered',
          { service, title: `Checkout errors ${n}`, urgency: 'high', at },
          'E',
        ];
      case 3:
        return [
          stream,
          3,
          'IncidentCardPosted',
          { channel: 'C0OPS', ts: `${1_700_000_000 + n}.000100`, at },
          'E',
        ];
      case 4:
        return [
          timer,
          0,
          'TimerScheduled',
          {
            timerId: `escalate-${n}`,
            dueAt: '2099-01-01T00:00:00.000Z',
            command: { type: 'EscalateIncident', data: { streamId: stream, level: 2 } },
            scheduledAt: at,
          },
          'E',
        ];
      case 5:
        return [stream, 4, keepOpen ? 'IncidentNoteAdded' : 'IncidentAcknowledged', { by: 'U0ANA', at }, 'E'];
      case 6:
        return keepOpen
          ? [stream, 5, 'IncidentNoteAdded', { by: 'U0ANA', text: 'looking', at }, 'E']
          : [
              timer,
              1,
              'TimerCancelled',
              { timerId: `escalate-${n}`, reason: 'acknowledged', cancelledAt: at },
              'E',
            ];
      default:
        return keepOpen
          ? [stream, 6, 'IncidentNoteAdded', { by: 'U0BEN', text: 'still looking', at }, 'E']
          : [stream, 5, 'IncidentResolved', { by: 'U0ANA', at }, 'E'];
    }
  };
  db.exec('BEGIN');
  for (let position = 1; position <= total; position++) {
    const recordedAt = t0 + position * 1_000;
    const at = new Date(recordedAt).toISOString();
    let row: [string, number, string, object, 'E' | 'C'];
    if (position % 10 < 7) {
      row = [
        'inbox-slack',
        inboxRevision++,
        'SlackInputReceived',
        {
          input: {
            source: 'slack',
            inputKind: 'slash_command',
            name: '/incident',
            actor: `U0${(position % 500).toString(36).toUpperCase()}`,
            channel: 'C0OPS',
            payload: { text: 'list', team_id: 'T0BENCH', trigger_id: `${position}.${recordedAt}` },
          },
          commands: [{ type: 'ListIncidents', data: {}, metadata: { actor: 'U0ANA', now: at } }],
          receivedAt: at,
        },
        'C',
      ];
    } else {
      if (fact === 0) {
        incident += 1;
        open.add(incident);
      }
      row = incidentFact(incident, fact, at);
      fact = (fact + 1) % 8;
    }
    const [streamId, revision, type, data, kind] = row;
    insert.run(
      position,
      streamId,
      revision,
      randomUUID(),
      kind,
      type,
      JSON.stringify(data),
      JSON.stringify({ commandId: randomUUID(), actor: 'U0ANA' }),
      recordedAt,
    );
    if (position % 50_000 === 0) {
      db.exec('COMMIT');
      db.exec('BEGIN');
    }
  }
  db.exec('COMMIT');
  db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
  db.close();
  return BigInt(total);
};

// ---------- the app

type Code = Readonly<{ name: string; root: string }>;
type Start = Readonly<{ ms: number; afterLoadMs: number; rssMb: number }>;

const baselineCode = (dir: string): Code => {
  const root = join(dir, 'baseline');
  mkdirSync(root, { recursive: true });
  const archive = spawnSync('sh', ['-c', `git -C "${ROOT}" archive ${BASELINE_REF} | tar -x -C "${root}"`], {
    stdio: 'inherit',
  });
  if (archive.status !== 0) throw new Error(`git archive ${BASELINE_REF} failed`);
  if (!existsSync(join(root, 'node_modules')))
    symlinkSync(join(ROOT, 'node_modules'), join(root, 'node_modules'));
  return { name: `before (${BASELINE_REF.slice(0, 7)}: read models rebuilt from the first event)`, root };
};

const rssMb = (pid: number): number => {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : Number.NaN;
};

/** Starts the app, waits for /readyz 200, reads RSS, stops it gracefully. */
const startToReady = async (code: Code, env: Record<string, string>): Promise<Start> => {
  const started = performance.now();
  let loadedAt: number | undefined;
  const child = spawn(process.execPath, [join(code.root, 'src/main.ts')], {
    cwd: code.root,
    env: { PATH: process.env['PATH'] ?? '', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<number | null>((done) => child.once('exit', (c) => done(c)));
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => {
    loadedAt ??= performance.now();
    if (out.length < 100_000) out += chunk.toString();
  });
  let port: string | undefined;
  let dead = false;
  void exited.then(() => {
    dead = true;
  });
  for (;;) {
    if (dead) throw new Error(`app exited before ready:\n${out.slice(-3000)}`);
    port ??= /"port":(\d+)[^\n]*"msg":"Switchboard is listening"/.exec(out)?.[1];
    if (port) {
      const ready = await fetch(`http://127.0.0.1:${port}/readyz`)
        .then((r) => r.status === 200)
        .catch(() => false);
      if (ready) break;
    }
    if (performance.now() - started > 300_000) throw new Error('app not ready within 300 s');
    await new Promise((r) => setTimeout(r, 10));
  }
  const readyAt = performance.now();
  const ms = readyAt - started;
  const rss = rssMb(child.pid!);
  child.kill('SIGTERM');
  const exitCode = await exited;
  if (exitCode !== 0) throw new Error(`app exited ${exitCode} on SIGTERM`);
  return { ms, afterLoadMs: readyAt - (loadedAt ?? started), rssMb: rss };
};

// ---------- main

const main = async (): Promise<void> => {
  const fake = await startFakeSlack({ botToken: BOT_TOKEN, signingSecret: SIGNING_SECRET });
  const pd = await startPagerDutySimulator({});
  const vonage = await startVonageSimulator();
  const dir = tempDir('switchboard-scale');
  const candidate: Code = { name: 'this code', root: ROOT };
  const baseline = baselineCode(dir.path);
  const envFor = (dbPath: string): Record<string, string> => ({
    SLACK_BOT_TOKEN: BOT_TOKEN,
    SLACK_SIGNING_SECRET: SIGNING_SECRET,
    SWITCHBOARD_DATA_KEYS: BENCH_DATA_KEYS,
    SLACK_API_URL: fake.apiUrl,
    ...simulatorEnv([fake, pd, vonage]),
    EVENT_STORE_URL: `sqlite:${dbPath}`,
    PORT: '0',
    LOG_LEVEL: 'info',
    CI: 'true',
  });
  try {
    for (const [index, size] of SIZES.entries()) {
      const source = join(dir.path, `history-${size}.db`);
      const g0 = performance.now();
      const head = await generateStore(source, size);
      // Checkpointed processors have handled everything (a start re-reads nothing for them).
      const store = await openEventStore(`sqlite:${source}`);
      const config = loadConfig(envFor(source), ALL_LIFECYCLES);
      const sb = await createSwitchboard({ config, logger: createLogger({ level: 'error' }), store });
      const ids = (await sb.processors.status()).map((s) => s.id);
      for (const id of ids) await store.storeCheckpoint(id, head);
      await store.close();
      note(
        `scale: ${size} events generated in ${Math.round(performance.now() - g0)} ms (${ids.length} processors)`,
      );

      const results = new Map<string, { first: Start; restarts: Start[] }>();
      for (const code of (index + (process.argv.includes('--candidate-first') ? 1 : 0)) % 2 === 1
        ? [candidate, baseline]
        : [baseline, candidate]) {
        const db = join(dir.path, `${code === candidate ? 'candidate' : 'baseline'}-${size}.db`);
        copyFileSync(source, db);
        const first = await startToReady(code, envFor(db));
        const restarts: Start[] = [];
        for (let i = 0; i < RESTARTS; i++) restarts.push(await startToReady(code, envFor(db)));
        results.set(code.name, { first, restarts });
        note(
          `scale: ${size} events, ${code.name}: first ${Math.round(first.ms)} ms (after load ${Math.round(first.afterLoadMs)}) ${Math.round(first.rssMb)} MB; restarts ${restarts.map((r) => `${Math.round(r.ms)} ms (after load ${Math.round(r.afterLoadMs)}) ${Math.round(r.rssMb)} MB`).join(', ')}`,
        );
      }
      const c = results.get(candidate.name)!;
      const b = results.get(baseline.name)!;
      const label = size === 0 ? 'empty' : size >= 1_000_000 ? `${size / 1_000_000}M` : `${size / 1_000}k`;
      const goal = size === 1_000_000;
      emit({
        bench: `scale.start.first.${label}`,
        value: c.first.ms,
        unit: 'ms to /readyz 200',
        baseline: baseline.name,
        baselineValue: b.first.ms,
      });
      emit({
        bench: `scale.rss.first.${label}`,
        value: c.first.rssMb,
        unit: 'MB RSS at ready',
        baseline: baseline.name,
        baselineValue: b.first.rssMb,
      });
      emit({
        bench: `scale.start.first.afterLoad.${label}`,
        value: c.first.afterLoadMs,
        unit: 'ms from first log line to /readyz 200',
        baseline: baseline.name,
        baselineValue: b.first.afterLoadMs,
      });
      emit({
        bench: `scale.start.restart.afterLoad.${label}`,
        value: median(c.restarts.map((r) => r.afterLoadMs)),
        unit: 'ms from first log line to /readyz 200',
        baseline: baseline.name,
        baselineValue: median(b.restarts.map((r) => r.afterLoadMs)),
      });
      const restartMs = median(c.restarts.map((r) => r.ms));
      const restartRss = median(c.restarts.map((r) => r.rssMb));
      emit({
        bench: `scale.start.restart.${label}`,
        value: restartMs,
        unit: 'ms to /readyz 200',
        baseline: baseline.name,
        baselineValue: median(b.restarts.map((r) => r.ms)),
        ...(goal ? { target: 'value <= 1500 ms', met: restartMs <= 1500 } : {}),
      });
      emit({
        bench: `scale.rss.restart.${label}`,
        value: restartRss,
        unit: 'MB RSS at ready',
        baseline: baseline.name,
        baselineValue: median(b.restarts.map((r) => r.rssMb)),
        ...(goal ? { target: 'value <= 250 MB', met: restartRss <= 250 } : {}),
      });
    }
  } finally {
    await stopAll([fake, pd, vonage]);
    dir.cleanup();
  }
};

await main();

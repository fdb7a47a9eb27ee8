/**
 * Event store benchmarks (issue 2): `npm run bench:store` (add `--quick` for a smoke run).
 *
 * Prints one JSON line per figure on stdout, each measured side by side with its baseline in the
 * same run (interleaved rounds; `value` and `baselineValue` are the medians of each side's rounds,
 * `ratio` the median of the per-round candidate/baseline ratios), progress on stderr:
 * - store.append.single: durable single-event appends through the port, one after another, vs raw
 *   node:sqlite inserts into a table of the same shape with the same durability (WAL,
 *   synchronous=FULL), one transaction each. Target ratio ≥ 0.8.
 * - store.append.concurrent50: 50 concurrent appenders on different streams through the port
 *   (group commit) vs the same raw single-insert baseline. Target ratio ≥ 3.
 * - store.readAll: every event in global order through the port (JSON parsed, RecordedEvent
 *   built) vs a raw SELECT of the same rows without parsing. Target ≥ 200,000 events/s.
 * - store.subscribe.catchUp: a subscription from the start into a no-op handler, until caught up,
 *   vs readAll of the same events. Target ≥ 100,000 events/s.
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import type { NewEvent } from '../src/eventStore/eventStore.ts';
import { migrate } from '../src/eventStore/sqlite/schema.ts';
import { createSqliteEventStore } from '../src/eventStore/sqlite/sqliteEventStore.ts';
import { emit, interleave, note, perSecond, tempDir } from './support.ts';

const quick = process.argv.includes('--quick');
/** `--only <text>`: run only the figures whose name contains it (e.g. `--only append`). */
const onlyAt = process.argv.indexOf('--only');
const only = onlyAt === -1 ? undefined : process.argv[onlyAt + 1];
const wanted = (bench: string): boolean => only === undefined || bench.includes(only);
// Many short rounds: the disk's speed drifts over seconds, and both sides should see the same drift.
const ROUNDS = quick ? 3 : 40;
const SINGLE_APPENDS_PER_ROUND = quick ? 100 : 200;
const CONCURRENT_APPENDERS = 50;
const APPENDS_PER_APPENDER = quick ? 4 : 20;
const READ_EVENTS = quick ? 20_000 : 200_000;
const READ_ROUNDS = quick ? 3 : 7;
const READ_PAGE = 10_000;

const COLUMNS =
  'position, stream_id, stream_revision, message_id, message_kind, type, data, metadata, recorded_at';

/** A realistic event: a command's outcome with its metadata, a few hundred bytes of JSON. */
const makeEvent = (i: number): NewEvent => ({
  id: randomUUID(),
  type: 'IncidentAcknowledged',
  data: {
    incidentId: `P${100000 + i}`,
    by: 'U024BE7LH',
    at: '2026-11-22T02:04:00.000Z',
    channelId: 'C0123456789',
    note: 'looking into it; the database failover is in progress',
  },
  metadata: {
    commandId: randomUUID(),
    commandType: 'AcknowledgeIncident',
    actor: 'U024BE7LH',
    now: '2026-11-22T02:04:00.000Z',
  },
});

/** The raw baseline: the store's own schema (same columns, same unique indexes), same pragmas. */
const openRaw = (path: string) => {
  const db = new DatabaseSync(path);
  db.exec('PRAGMA journal_mode = WAL');
  db.exec('PRAGMA synchronous = FULL');
  migrate(db, Date.now);
  const begin = db.prepare('BEGIN IMMEDIATE');
  const commit = db.prepare('COMMIT');
  const insert = db.prepare(
    'INSERT INTO messages (stream_id, stream_revision, message_id, message_kind, type, data, metadata, recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
  );
  return {
    db,
    /** One durable single-row transaction. */
    insertOne(streamId: string, revision: number, e: NewEvent): void {
      begin.run();
      insert.run(
        streamId,
        revision,
        e.id,
        'E',
        e.type,
        JSON.stringify(e.data),
        JSON.stringify(e.metadata ?? {}),
        Date.now(),
      );
      commit.run();
    },
    close: () => db.close(),
  };
};

const benchAppends = async (dir: string): Promise<void> => {
  const store = createSqliteEventStore({ path: join(dir, 'append-port.db') });
  const raw = openRaw(join(dir, 'append-raw.db'));

  const rawSingle = async (round: number): Promise<number> => {
    const streamId = `raw-${round}`;
    const events = Array.from({ length: SINGLE_APPENDS_PER_ROUND }, (_, i) => makeEvent(i));
    const t0 = performance.now();
    for (let i = 0; i < events.length; i++) raw.insertOne(streamId, i, events[i]!);
    return perSecond(events.length, performance.now() - t0);
  };

  const portSingle = async (round: number): Promise<number> => {
    const streamId = `single-${round}`;
    const events = Array.from({ length: SINGLE_APPENDS_PER_ROUND }, (_, i) => makeEvent(i));
    const t0 = performance.now();
    let expected: number | 'no_stream' = 'no_stream';
    for (const e of events) {
      expected = (await store.appendToStream(streamId, [e], { expectedRevision: expected }))
        .nextExpectedRevision;
    }
    return perSecond(events.length, performance.now() - t0);
  };

  const portConcurrent = async (round: number): Promise<number> => {
    const work = Array.from({ length: CONCURRENT_APPENDERS }, () =>
      Array.from({ length: APPENDS_PER_APPENDER }, (_, i) => makeEvent(i)),
    );
    const t0 = performance.now();
    await Promise.all(
      work.map(async (events, w) => {
        const streamId = `concurrent-${round}-${w}`;
        let expected: number | 'no_stream' = 'no_stream';
        for (const e of events) {
          expected = (await store.appendToStream(streamId, [e], { expectedRevision: expected }))
            .nextExpectedRevision;
        }
      }),
    );
    return perSecond(CONCURRENT_APPENDERS * APPENDS_PER_APPENDER, performance.now() - t0);
  };

  // Warm both files up (page cache, statement preparation, WAL creation).
  await portSingle(-1);
  await rawSingle(-1);

  if (wanted('store.append.single')) {
    note(`store.append.single: ${ROUNDS} rounds × ${SINGLE_APPENDS_PER_ROUND} appends per side`);
    const single = await interleave(ROUNDS, { candidate: portSingle, baseline: rawSingle });
    note(`  port rounds ${single.candidateRounds.map((x) => x.toFixed(0)).join(' ')}`);
    note(`  raw  rounds ${single.baselineRounds.map((x) => x.toFixed(0)).join(' ')}`);
    emit({
      bench: 'store.append.single',
      value: single.candidate,
      unit: 'appends/s',
      baseline: 'raw node:sqlite INSERT, one durable transaction each (WAL, synchronous=FULL)',
      baselineValue: single.baseline,
      ratio: single.pairedRatio,
    });
    note(
      `  ratio of medians ${(single.candidate / single.baseline).toFixed(3)}, median of paired ratios ${single.pairedRatio.toFixed(3)}`,
    );
  }

  if (wanted('store.append.concurrent50')) {
    const before = store.stats();
    note(
      `store.append.concurrent50: ${ROUNDS} rounds × ${CONCURRENT_APPENDERS} appenders × ${APPENDS_PER_APPENDER} appends`,
    );
    const concurrent = await interleave(ROUNDS, {
      candidate: (r) => portConcurrent(r + 1000),
      baseline: (r) => rawSingle(r + 1000),
    });
    const after = store.stats();
    note(`  port rounds ${concurrent.candidateRounds.map((x) => x.toFixed(0)).join(' ')}`);
    note(`  raw  rounds ${concurrent.baselineRounds.map((x) => x.toFixed(0)).join(' ')}`);
    note(
      `  group commit: ${after.appends - before.appends} appends in ${after.commits - before.commits} commits`,
    );
    emit({
      bench: 'store.append.concurrent50',
      value: concurrent.candidate,
      unit: 'appends/s',
      baseline: 'raw node:sqlite INSERT, one durable transaction each (WAL, synchronous=FULL)',
      baselineValue: concurrent.baseline,
      ratio: concurrent.pairedRatio,
    });
    note(
      `  ratio of medians ${(concurrent.candidate / concurrent.baseline).toFixed(3)}, median of paired ratios ${concurrent.pairedRatio.toFixed(3)}`,
    );
  }

  await store.close();
  raw.close();
};

const benchReads = async (dir: string): Promise<void> => {
  const path = join(dir, 'read.db');
  const store = createSqliteEventStore({ path });
  note(`store.readAll: filling ${READ_EVENTS} events`);
  const perAppend = 100;
  const appends = READ_EVENTS / perAppend;
  for (let a = 0; a < appends; a += 20) {
    await Promise.all(
      Array.from({ length: Math.min(20, appends - a) }, (_, k) =>
        store.appendToStream(
          `incident-${a + k}`,
          Array.from({ length: perAppend }, (_, i) => makeEvent(i)),
          { expectedRevision: 'no_stream' },
        ),
      ),
    );
  }

  const raw = new DatabaseSync(path, { readOnly: true });
  const page = raw.prepare(
    `SELECT ${COLUMNS} FROM messages WHERE position > ? ORDER BY position ASC LIMIT ?`,
  );
  page.setReturnArrays(true);

  const rawReadAll = async (): Promise<number> => {
    const t0 = performance.now();
    let after = 0;
    let count = 0;
    for (;;) {
      const rows = page.all(after, READ_PAGE) as unknown as unknown[][];
      if (rows.length === 0) break;
      count += rows.length;
      after = rows[rows.length - 1]![0] as number;
    }
    if (count !== READ_EVENTS) throw new Error(`raw read ${count} rows, want ${READ_EVENTS}`);
    return perSecond(count, performance.now() - t0);
  };

  const portReadAll = async (): Promise<number> => {
    const t0 = performance.now();
    let after = 0n;
    let count = 0;
    for (;;) {
      const events = await store.readAll({ after, maxCount: READ_PAGE });
      if (events.length === 0) break;
      count += events.length;
      after = events[events.length - 1]!.position;
    }
    if (count !== READ_EVENTS) throw new Error(`port read ${count} events, want ${READ_EVENTS}`);
    return perSecond(count, performance.now() - t0);
  };

  const portCatchUp = async (): Promise<number> => {
    let count = 0;
    const t0 = performance.now();
    await new Promise<void>((resolve, reject) => {
      const sub = store.subscribe({
        from: 'start',
        onEvent: async () => {
          count += 1;
        },
        onCaughtUp: () => {
          sub.stop().then(resolve, reject);
        },
      });
      sub.done.catch(reject);
    });
    const ms = performance.now() - t0;
    if (count !== READ_EVENTS) throw new Error(`subscription delivered ${count} events, want ${READ_EVENTS}`);
    return perSecond(count, ms);
  };

  await portReadAll();
  await rawReadAll();

  if (wanted('store.readAll')) {
    note(`store.readAll: ${READ_ROUNDS} rounds × ${READ_EVENTS} events, pages of ${READ_PAGE}`);
    const reads = await interleave(READ_ROUNDS, { candidate: portReadAll, baseline: rawReadAll });
    note(`  port rounds ${reads.candidateRounds.map((x) => x.toFixed(0)).join(' ')}`);
    note(`  raw  rounds ${reads.baselineRounds.map((x) => x.toFixed(0)).join(' ')}`);
    emit({
      bench: 'store.readAll',
      value: reads.candidate,
      unit: 'events/s',
      baseline: 'raw node:sqlite SELECT of the same rows, no JSON parsing',
      baselineValue: reads.baseline,
      ratio: reads.pairedRatio,
    });
    note(
      `  ratio of medians ${(reads.candidate / reads.baseline).toFixed(3)}, median of paired ratios ${reads.pairedRatio.toFixed(3)}`,
    );
  }

  if (wanted('store.subscribe.catchUp')) {
    note(`store.subscribe.catchUp: ${READ_ROUNDS} rounds × ${READ_EVENTS} events into a no-op handler`);
    const catchUp = await interleave(READ_ROUNDS, { candidate: portCatchUp, baseline: portReadAll });
    note(`  subscription rounds ${catchUp.candidateRounds.map((x) => x.toFixed(0)).join(' ')}`);
    note(`  readAll rounds      ${catchUp.baselineRounds.map((x) => x.toFixed(0)).join(' ')}`);
    emit({
      bench: 'store.subscribe.catchUp',
      value: catchUp.candidate,
      unit: 'events/s',
      baseline: 'readAll of the same events through the port',
      baselineValue: catchUp.baseline,
      ratio: catchUp.pairedRatio,
    });
    note(
      `  ratio of medians ${(catchUp.candidate / catchUp.baseline).toFixed(3)}, median of paired ratios ${catchUp.pairedRatio.toFixed(3)}`,
    );
  }

  raw.close();
  await store.close();
};

const main = async (): Promise<void> => {
  const dir = tempDir('switchboard-bench-store');
  try {
    if (wanted('store.append.single') || wanted('store.append.concurrent50')) await benchAppends(dir.path);
    if (wanted('store.readAll') || wanted('store.subscribe.catchUp')) await benchReads(dir.path);
  } finally {
    dir.cleanup();
  }
};

await main();

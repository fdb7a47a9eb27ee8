/**
 * What only the SQLite adapter has to prove, beyond the shared contract: schema versioning,
 * durability settings, reopening files, the closed store, another process holding the write lock,
 * group commit, and store-wide rules.
 */
import { DatabaseSync } from 'node:sqlite';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { ChatOpsError, ConcurrencyError, ValidationError } from '../../src/core/errors.ts';
import type { AppendResult, EventStore, NewEvent } from '../../src/eventStore/eventStore.ts';
import { latestSchemaVersion, migrations } from '../../src/eventStore/sqlite/schema.ts';
import {
  CHAIN_BUDGET_MS,
  createSqliteEventStore,
  type SqliteEventStore,
  type SqliteEventStoreOptions,
} from '../../src/eventStore/sqlite/sqliteEventStore.ts';
import { collect, ids, newEvent, newEvents, runChild, sleep, tempDir, waitUntil } from './helpers.ts';

const HOLD_WRITE_LOCK = new URL('./children/holdWriteLock.ts', import.meta.url).pathname;
const APPENDER = new URL('./children/appender.ts', import.meta.url).pathname;

const dir = tempDir('switchboard-sqlite');
afterAll(() => dir.cleanup());
let fileCounter = 0;
const freshFile = () => dir.file(`store-${++fileCounter}.db`);

let opened: EventStore[] = [];
const open = (options: Partial<SqliteEventStoreOptions> = {}): SqliteEventStore => {
  const store = createSqliteEventStore({ path: freshFile(), ...options });
  opened.push(store);
  return store;
};
afterEach(async () => {
  for (const s of opened.splice(0)) await s.close();
  opened = [];
});

const rawQuery = (path: string, sql: string): unknown[] => {
  const db = new DatabaseSync(path, { readOnly: true });
  try {
    return db.prepare(sql).all();
  } finally {
    db.close();
  }
};

describe('SQLite event store: schema migrations', () => {
  it('a fresh database gets every migration up to the latest version, once', async () => {
    const path = freshFile();
    const store = createSqliteEventStore({ path });
    expect(store.diagnostics().schemaVersion).toBe(latestSchemaVersion);
    await store.close();
    const reopened = createSqliteEventStore({ path });
    await reopened.close();

    const versions = rawQuery(path, 'SELECT version FROM schema_migrations ORDER BY version');
    expect(versions.map((r) => (r as { version: number }).version)).toEqual(migrations.map((m) => m.version));
    expect(latestSchemaVersion).toBe(migrations[migrations.length - 1]!.version);
    const tables = rawQuery(path, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").map(
      (r) => (r as { name: string }).name,
    );
    expect(tables).toEqual(['messages', 'processors', 'schema_migrations']); // version 2 dropped streams
  });

  it('a database from an older build is migrated forward on open, its events intact', async () => {
    const path = freshFile();
    const old = new DatabaseSync(path);
    old.exec('PRAGMA journal_mode = WAL');
    old.exec('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)');
    old.exec(migrations[0]!.sql);
    old.prepare('INSERT INTO schema_migrations (version, applied_at) VALUES (1, 0)').run();
    const insert = old.prepare(
      `INSERT INTO messages (stream_id, stream_revision, message_id, message_kind, type, data, metadata, recorded_at)
       VALUES (?, ?, ?, 'E', 'OrderPlaced', '{"n":1}', '{}', 0)`,
    );
    insert.run('order-1', 0, 'a');
    insert.run('order-1', 1, 'b');
    insert.run('order-2', 0, 'c');
    old.close();

    const store = createSqliteEventStore({ path });
    opened.push(store);

    expect(store.diagnostics().schemaVersion).toBe(latestSchemaVersion);
    expect(ids(await store.readAll())).toEqual(['a', 'b', 'c']);
    expect((await store.listStreams()).map((s) => [s.streamId, s.lastRevision])).toEqual([
      ['order-2', 0],
      ['order-1', 1],
    ]);
    const next = await store.appendToStream('order-1', [newEvent('OrderPaid')], { expectedRevision: 1 });
    expect(next.nextExpectedRevision).toBe(2);
  });

  it('a database written by a newer build is refused with a clear, coded error and left untouched', async () => {
    const path = freshFile();
    const store = createSqliteEventStore({ path });
    await store.appendToStream('order-1', [newEvent('OrderPlaced')]);
    await store.close();
    const db = new DatabaseSync(path);
    db.prepare('INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)').run(
      latestSchemaVersion + 1,
      Date.now(),
    );
    db.close();

    let refusal: unknown;
    try {
      createSqliteEventStore({ path });
    } catch (e) {
      refusal = e;
    }

    expect(refusal).toBeInstanceOf(ChatOpsError);
    expect(refusal).toMatchObject({
      code: 'SB_CONFIG',
      details: { databaseVersion: latestSchemaVersion + 1, supportedVersion: latestSchemaVersion },
    });
    expect((refusal as Error).message).toMatch(
      new RegExp(
        `schema version ${latestSchemaVersion + 1} is newer than this build knows \\(${latestSchemaVersion}\\)`,
      ),
    );
    expect(rawQuery(path, 'SELECT COUNT(*) AS n FROM messages')).toEqual([{ n: 1 }]);
  });
});

describe('SQLite event store: durability settings', () => {
  it('a file store runs in WAL mode with synchronous=FULL and the busy timeout, read back from SQLite', () => {
    const store = open({ busyTimeoutMs: 1234 });

    expect(store.diagnostics()).toMatchObject({
      journalMode: 'wal',
      synchronous: 'FULL',
      busyTimeoutMs: 1234,
    });
    // WAL is a property of the file: another connection sees it too.
    expect(rawQuery(store.path, 'PRAGMA journal_mode')).toEqual([{ journal_mode: 'wal' }]);
  });

  it('synchronous=NORMAL only when asked for it', () => {
    expect(open({ synchronous: 'NORMAL' }).diagnostics().synchronous).toBe('NORMAL');
  });
});

describe('SQLite event store: reopening a file', () => {
  it('everything written is read back after reopening: global order, streams, checkpoints', async () => {
    const path = freshFile();
    const first = createSqliteEventStore({ path });
    await Promise.all(
      Array.from({ length: 20 }, async (_, s) => {
        for (let k = 0; k < 5; k++) await first.appendToStream(`order-${s}`, newEvents(5, 'Step', k * 5));
      }),
    );
    await first.storeCheckpoint('projector', 123n);
    const all = await first.readAll();
    const streams = await first.listStreams();
    await first.close();

    const second = createSqliteEventStore({ path });
    opened.push(second);

    expect(all).toHaveLength(500);
    expect(await second.readAll()).toEqual(all);
    expect(await second.listStreams()).toEqual(streams);
    expect(await second.readCheckpoint('projector')).toBe(123n);
    expect(await second.streamRevision('order-7')).toBe(24);
  });

  it('appends still queued when close() is called are committed before the file closes', async () => {
    const path = freshFile();
    const store = createSqliteEventStore({ path });
    const events = newEvents(5);

    const pending = events.map((e, i) => store.appendToStream(`order-${i}`, [e]));
    const closed = store.close();
    const results = await Promise.all(pending);
    await closed;

    expect(results.every((r) => r.nextExpectedRevision === 0)).toBe(true);
    const reopened = createSqliteEventStore({ path });
    opened.push(reopened);
    expect(ids(await reopened.readAll())).toEqual(ids(events));
  });
});

describe('SQLite event store: a closed store', () => {
  it('refuses every operation with StoreUnavailableError (SB_STORE_UNAVAILABLE)', async () => {
    const store = open();
    await store.appendToStream('order-1', [newEvent('Before')]);
    await store.close();

    const unavailable = { code: 'SB_STORE_UNAVAILABLE', name: 'StoreUnavailableError' };
    await expect(store.appendToStream('order-1', [newEvent('After')])).rejects.toMatchObject(unavailable);
    await expect(store.readStream('order-1')).rejects.toMatchObject(unavailable);
    await expect(store.readAll()).rejects.toMatchObject(unavailable);
    await expect(store.streamRevision('order-1')).rejects.toMatchObject(unavailable);
    await expect(store.headPosition()).rejects.toMatchObject(unavailable);
    await expect(store.listStreams()).rejects.toMatchObject(unavailable);
    await expect(store.readCheckpoint('p')).rejects.toMatchObject(unavailable);
    await expect(store.storeCheckpoint('p', 1n)).rejects.toMatchObject(unavailable);
    await expect(store.subscribe({ from: 'start', onEvent: async () => {} }).done).rejects.toMatchObject(
      unavailable,
    );
    expect(() => store.diagnostics()).toThrow(expect.objectContaining(unavailable));
    expect(store.isOpen()).toBe(false);
  });

  it('closing ends live subscriptions: their done resolves', async () => {
    const store = open();
    const c = collect(store, 'start');
    await c.caughtUp;

    await store.close();

    await expect(c.subscription.done).resolves.toBeUndefined();
  });
});

describe('SQLite event store: another process holding the write lock', () => {
  it('an append waits for the lock (busy timeout) and then succeeds, after the other writer', async () => {
    const store = open({ busyTimeoutMs: 10_000 });
    const locker = runChild(HOLD_WRITE_LOCK, [store.path, '400']);
    const locked = await locker.waitForLine((l) => l.startsWith('locked '), 'the child to hold the lock');
    const lockerPosition = BigInt(locked.split(' ')[1]!);

    const result = await store.appendToStream('order-1', [newEvent('OrderPlaced')]);

    // Our commit came after the other process's: the store waited instead of failing.
    expect(result.position).toBeGreaterThan(lockerPosition);
    expect((await store.readStream('locker-1')).map((e) => e.type)).toEqual(['LockHeld']);
    expect(await locker.exited).toEqual({ code: 0, signal: null });
    expect(locker.lines).toContain('released');
  });

  it('a lock held past the busy timeout fails the append with SB_STORE_UNAVAILABLE; it succeeds once released', async () => {
    const store = open({ busyTimeoutMs: 100 });
    const locker = runChild(HOLD_WRITE_LOCK, [store.path, '1500']);
    await locker.waitForLine((l) => l.startsWith('locked '), 'the child to hold the lock');
    const event = newEvent('OrderPlaced');

    await expect(store.appendToStream('order-1', [event])).rejects.toMatchObject({
      code: 'SB_STORE_UNAVAILABLE',
    });
    await locker.waitForLine((l) => l === 'released', 'the child to release the lock');
    const retried = await store.appendToStream('order-1', [event], { expectedRevision: 'no_stream' });

    expect(retried).toMatchObject({ nextExpectedRevision: 0, deduplicated: false });
    expect(ids(await store.readStream('order-1'))).toEqual([event.id]);
    await locker.exited;
  });
});

describe('SQLite event store: group commit', () => {
  it('50 concurrent appends share one commit', async () => {
    const store = open();
    const before = store.stats();

    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        store.appendToStream(`order-${i}`, [newEvent('OrderPlaced')], { expectedRevision: 'no_stream' }),
      ),
    );

    const after = store.stats();
    expect(after.appends - before.appends).toBe(50);
    expect(after.events - before.events).toBe(50);
    // All 50 were queued in one event-loop turn, so they went out in one transaction.
    expect(after.commits - before.commits).toBe(1);
    expect(new Set(results.map((r) => r.position)).size).toBe(50);
    expect(await store.readAll()).toHaveLength(50);
  });

  it('a conflicting append in a batch fails alone; the others commit with it', async () => {
    const store = open();
    await store.appendToStream('order-taken', [newEvent('OrderPlaced')]);
    const before = store.stats();

    const outcomes = await Promise.allSettled([
      ...Array.from({ length: 4 }, (_, i) =>
        store.appendToStream(`order-${i}`, newEvents(2), { expectedRevision: 'no_stream' }),
      ),
      store.appendToStream('order-taken', newEvents(3), { expectedRevision: 'no_stream' }),
      ...Array.from({ length: 4 }, (_, i) =>
        store.appendToStream(`order-${i + 4}`, newEvents(2), { expectedRevision: 'no_stream' }),
      ),
    ]);

    expect(outcomes.map((o) => o.status)).toEqual([
      ...Array(4).fill('fulfilled'),
      'rejected',
      ...Array(4).fill('fulfilled'),
    ]);
    expect((outcomes[4] as PromiseRejectedResult).reason).toBeInstanceOf(ConcurrencyError);
    expect(store.stats().commits - before.commits).toBe(1);
    expect(await store.readStream('order-taken')).toHaveLength(1);
    for (let i = 0; i < 8; i++) expect(await store.readStream(`order-${i}`)).toHaveLength(2);
  });

  it('appends to one stream in one batch see each other, in call order', async () => {
    const store = open();

    const [a, b, c, d] = await Promise.allSettled([
      store.appendToStream('order-1', [newEvent('A')], { expectedRevision: 'no_stream' }),
      store.appendToStream('order-1', [newEvent('B')], { expectedRevision: 'no_stream' }),
      store.appendToStream('order-1', [newEvent('C')], { expectedRevision: 0 }),
      store.appendToStream('order-1', [newEvent('D')], { expectedRevision: 'any' }),
    ]);

    expect(a.status).toBe('fulfilled');
    expect(b.status).toBe('rejected');
    expect((c as PromiseFulfilledResult<AppendResult>).value.nextExpectedRevision).toBe(1);
    expect((d as PromiseFulfilledResult<AppendResult>).value.nextExpectedRevision).toBe(2);
    expect((await store.readStream('order-1')).map((e) => e.type)).toEqual(['A', 'C', 'D']);
  });

  it('a retry in the same batch as its original is deduplicated to the original position', async () => {
    const store = open();
    const events = newEvents(2);

    const [original, retry] = await Promise.all([
      store.appendToStream('order-1', events, { expectedRevision: 'no_stream' }),
      store.appendToStream('order-1', events, { expectedRevision: 'no_stream' }),
    ]);

    expect(original.deduplicated).toBe(false);
    expect(retry).toEqual({ nextExpectedRevision: 1, position: original.position, deduplicated: true });
    expect(await store.readStream('order-1')).toHaveLength(2);
  });

  it('a batch that writes nothing (refusals, retries) costs no commit', async () => {
    const store = open();
    const events = newEvents(1);
    await store.appendToStream('order-1', events);
    const before = store.stats();

    await Promise.allSettled([
      store.appendToStream('order-1', events),
      store.appendToStream('order-1', [newEvent('X')], { expectedRevision: 'no_stream' }),
      store.appendToStream('order-2', [newEvent('Y')], { expectedRevision: 3 }),
    ]);
    await expect(store.appendToStream('order-1', events)).resolves.toMatchObject({ deduplicated: true });

    expect(store.stats().commits).toBe(before.commits);
  });

  /** A chain clock that moves `step` ms each time the store reads it, whatever the real time. */
  const steppingClock = (step: number) => {
    let t = 0;
    return () => (t += step);
  };

  it('an append made right after an acknowledgement is written without waiting for the next event-loop turn', async () => {
    // Within the chain budget, which a chain clock that does not move never spends: the order below
    // is the store's doing, however long this machine takes to commit.
    const store = open({ chainClock: () => 0 });
    const order: string[] = [];

    await store.appendToStream('order-1', [newEvent('First')]).then(() => {
      setImmediate(() => order.push('next event-loop turn'));
      return store
        .appendToStream('order-1', [newEvent('Second')])
        .then(() => order.push('second acknowledged'));
    });
    await new Promise((resolve) => setImmediate(resolve));

    expect(order).toEqual(['second acknowledged', 'next event-loop turn']);
    expect((await store.readStream('order-1')).map((e) => e.type)).toEqual(['First', 'Second']);
  });

  it('once the chain budget is spent, an append made right after an acknowledgement waits for the next turn', async () => {
    // The first commit alone took longer than the budget (as on a loaded machine).
    const store = open({ chainClock: steppingClock(CHAIN_BUDGET_MS + 1) });
    const order: string[] = [];

    await store.appendToStream('order-1', [newEvent('First')]).then(() => {
      setImmediate(() => order.push('next event-loop turn'));
      return store
        .appendToStream('order-1', [newEvent('Second')])
        .then(() => order.push('second acknowledged'));
    });

    expect(order).toEqual(['next event-loop turn', 'second acknowledged']);
    expect((await store.readStream('order-1')).map((e) => e.type)).toEqual(['First', 'Second']);
  });

  it('a writer that never pauses still lets the event loop run: chained commits are time-bounded', async () => {
    // Each commit "takes" 1 ms on the chain clock, so a chain spends its budget after a few
    // commits whatever this machine's speed.
    const store = open({ chainClock: steppingClock(1) });
    let turns = 0;
    let appending = true;
    const ticker = () => {
      turns += 1;
      if (appending) setImmediate(ticker);
    };
    setImmediate(ticker);

    let expected: number | 'no_stream' = 'no_stream';
    for (let i = 0; i < 300; i++) {
      expected = (await store.appendToStream('order-1', [newEvent('Step')], { expectedRevision: expected }))
        .nextExpectedRevision;
    }
    appending = false;

    // 300 commits at 1 ms each are far over the 2 ms budget, so the loop had many turns: a chain
    // ends once its clock has moved past the budget, after CHAIN_BUDGET_MS + 1 commits at most.
    expect(expected).toBe(299);
    expect(turns).toBeGreaterThanOrEqual(5);
    expect(turns).toBeGreaterThanOrEqual(300 / (CHAIN_BUDGET_MS + 1));
  });

  it('checkpoint writes join the batch of the appends beside them', async () => {
    const store = open();
    const before = store.stats();

    await Promise.all([
      store.storeCheckpoint('projector', 5n),
      ...Array.from({ length: 5 }, (_, i) => store.appendToStream(`order-${i}`, [newEvent('OrderPlaced')])),
      store.storeCheckpoint('reactor', 7n),
    ]);

    expect(store.stats().commits - before.commits).toBe(1);
    expect(await store.readCheckpoint('projector')).toBe(5n);
    expect(await store.readCheckpoint('reactor')).toBe(7n);
  });
});

describe('SQLite event store: store-wide rules', () => {
  it('event ids are unique across the store: reusing one in another stream is a validation error', async () => {
    const store = open();
    const event = newEvent('OrderPlaced');
    await store.appendToStream('order-1', [event]);

    const reused = store.appendToStream('order-2', [event]);

    await expect(reused).rejects.toBeInstanceOf(ValidationError);
    await expect(reused).rejects.toMatchObject({
      details: { streamId: 'order-2', otherStreamId: 'order-1' },
    });
    expect(await store.readStream('order-2')).toEqual([]);
  });

  it('malformed appends are refused with SB_VALIDATION before they reach the database', async () => {
    const store = open();
    const before = store.stats();
    const e = newEvent('OrderPlaced');
    const malformed: [string, NewEvent[], unknown?][] = [
      ['order 1', [e]],
      ['-order', [e]],
      ['', [e]],
      ['order-1', [{ ...e, type: '' }]],
      ['order-1', [{ ...e, id: '' }]],
      ['order-1', [e, { ...e, type: 'Again' }]],
      ['order-1', [{ ...e, data: [1, 2] as unknown as NewEvent['data'] }]],
      ['order-1', [{ ...e, data: null as unknown as NewEvent['data'] }]],
      ['order-1', [{ ...e, metadata: 'x' as unknown as NewEvent['metadata'] }]],
      ['order-1', [{ ...e, data: { big: 1n } as unknown as NewEvent['data'] }]],
      ['order-1', [e], -1],
      ['order-1', [e], 1.5],
      ['order-1', [e], 'latest'],
    ];

    for (const [stream, events, expectedRevision] of malformed) {
      await expect(
        store.appendToStream(stream, events, { expectedRevision: expectedRevision as 'any' }),
        `${JSON.stringify(stream)} ${String(expectedRevision)}`,
      ).rejects.toMatchObject({ code: 'SB_VALIDATION' });
    }
    expect(store.stats().commits).toBe(before.commits);
    expect(await store.readAll()).toEqual([]);
  });

  it('an append of no events checks the expected revision and writes nothing', async () => {
    const store = open();
    await store.appendToStream('order-1', newEvents(2));

    await expect(store.appendToStream('order-1', [], { expectedRevision: 1 })).resolves.toMatchObject({
      nextExpectedRevision: 1,
      deduplicated: false,
    });
    await expect(store.appendToStream('order-1', [], { expectedRevision: 0 })).rejects.toBeInstanceOf(
      ConcurrencyError,
    );
    expect(await store.readStream('order-1')).toHaveLength(2);
  });
});

describe('SQLite event store: subscriptions', () => {
  it('never delivers before subscribe() has returned', async () => {
    const store = open();
    await store.appendToStream('order-1', newEvents(3));
    const delivered: string[] = [];

    const sub = store.subscribe({ from: 'start', onEvent: async (e) => void delivered.push(e.id) });
    const synchronouslyDelivered = delivered.length;
    await waitUntil(() => delivered.length === 3, 'three events');
    await sub.stop();

    expect(synchronouslyDelivered).toBe(0);
  });

  it('live subscriptions are woken after the appending caller has finished its turn', async () => {
    const store = open();
    const order: string[] = [];
    const c = collect(store, 'start', undefined, () => void order.push('subscription delivered'));
    await c.caughtUp;

    await store.appendToStream('order-1', [newEvent('OrderPlaced')]).then(async () => {
      // The caller's own follow-up (answering an HTTP request, say) takes a few promise hops.
      for (let i = 0; i < 20; i++) await Promise.resolve();
      order.push('caller answered');
    });
    await c.waitFor(1);

    expect(order).toEqual(['caller answered', 'subscription delivered']);
    await c.subscription.stop();
  });

  it('sees appends made by another process on the same file (polling)', async () => {
    const store = open({ pollIntervalMs: 20 });
    const c = collect(store, 'start');
    await c.caughtUp;

    const appender = runChild(APPENDER, [store.path, '4', '3', '30']);
    const exit = await appender.exited;
    expect(exit, appender.stderr()).toEqual({ code: 0, signal: null });
    const acked = appender.lines.map((l) => (JSON.parse(l) as { id: string }).id);
    await waitUntil(() => c.events.length >= acked.length, `${acked.length} events from the other process`);
    await sleep(50);
    await c.subscription.stop();

    expect(new Set(ids(c.events))).toEqual(new Set(acked));
    expect(ids(c.events)).toEqual(ids(await store.readAll()));
  });

  it('a selective filter skips non-matching history without delivering it, then goes live', async () => {
    const store = open();
    for (let i = 0; i < 30; i++) await store.appendToStream(`noise-${i % 3}`, newEvents(100, 'Noise'));
    await store.appendToStream('order-1', [newEvent('OrderPlaced')]);
    for (let i = 0; i < 10; i++) await store.appendToStream(`noise-${i % 3}`, newEvents(100, 'Noise'));

    const head = await store.headPosition();

    const c = collect(store, 'start', { streamPrefixes: ['order-'] });
    const caughtUpAt = await c.caughtUp;
    await store.appendToStream('order-2', [newEvent('OrderPlaced')]);
    await c.waitFor(2);

    // Caught up to the head it scanned, not just to the last event it delivered.
    expect(caughtUpAt).toBe(head);
    expect(c.events.map((e) => e.streamId)).toEqual(['order-1', 'order-2']);
    await c.subscription.stop();
  });
});

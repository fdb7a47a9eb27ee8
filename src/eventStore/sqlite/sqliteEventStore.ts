import { EventEmitter } from 'node:events';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import { ChatOpsError, ConcurrencyError, StoreUnavailableError, ValidationError } from '../../core/errors.ts';
import type { JsonObject } from '../../core/messages.ts';
import {
  type AppendOptions,
  type AppendResult,
  describeExpected,
  type EventFilter,
  type EventStore,
  type ExpectedRevision,
  type NewEvent,
  type ReadAllOptions,
  type ReadStreamOptions,
  type RecordedEvent,
  type StreamInfo,
  type SubscribeOptions,
  type Subscription,
  streamCategory,
} from '../eventStore.ts';
import { migrate } from './schema.ts';

export type SqliteEventStoreOptions = Readonly<{
  /** File path, or `:memory:` for a private in-memory database (tests). */
  path: string;
  /**
   * `FULL` (default) syncs the WAL on every commit: a resolved append survives power loss.
   * `NORMAL` only survives a process crash; offered for benchmarks, not for production.
   */
  synchronous?: 'FULL' | 'NORMAL';
  /** How long a write waits for another process holding the write lock (ms). */
  busyTimeoutMs?: number;
  /** How often live subscriptions look for appends made by other processes (ms). */
  pollIntervalMs?: number;
  /** Catch-up page size for subscriptions. */
  pageSize?: number;
  /** Store clock for `recordedAt`. */
  now?: () => number;
}>;

type Row = {
  position: number;
  stream_id: string;
  stream_revision: number;
  message_id: string;
  message_kind: 'E' | 'C';
  type: string;
  data: string;
  metadata: string;
  recorded_at: number;
};

type PendingAppend = {
  kind: 'append';
  streamId: string;
  events: readonly NewEvent[];
  expected: ExpectedRevision;
  resolve: (r: AppendResult) => void;
  reject: (e: unknown) => void;
};
type PendingCheckpoint = {
  kind: 'checkpoint';
  processorId: string;
  position: bigint;
  resolve: (r: undefined) => void;
  reject: (e: unknown) => void;
};
type Pending = PendingAppend | PendingCheckpoint;

const SELECT_COLUMNS =
  'position, stream_id, stream_revision, message_id, message_kind, type, data, metadata, recorded_at';

const toRecorded = (row: Row): RecordedEvent => ({
  id: row.message_id,
  streamId: row.stream_id,
  type: row.type,
  data: JSON.parse(row.data) as JsonObject,
  metadata: JSON.parse(row.metadata) as JsonObject,
  kind: row.message_kind === 'C' ? 'command' : 'event',
  revision: row.stream_revision,
  position: BigInt(row.position),
  recordedAt: new Date(row.recorded_at),
});

/** SQLite result codes (primary, low byte) that mean "cannot take the write now", not "bad request". */
const UNAVAILABLE_CODES = new Set([
  5 /* BUSY */, 6 /* LOCKED */, 8 /* READONLY */, 10 /* IOERR */, 13 /* FULL */, 14 /* CANTOPEN */,
  11 /* CORRUPT */, 26 /* NOTADB */,
]);

const translate = (e: unknown, what: string): unknown => {
  if (e instanceof ChatOpsError) return e;
  const errcode = (e as { errcode?: unknown }).errcode;
  if (typeof errcode === 'number' && UNAVAILABLE_CODES.has(errcode & 0xff)) {
    return new StoreUnavailableError(`SQLite store cannot ${what}: ${(e as Error).message}`, { cause: e });
  }
  if (e instanceof Error && /database is not open|database is locked/i.test(e.message)) {
    return new StoreUnavailableError(`SQLite store cannot ${what}: ${e.message}`, { cause: e });
  }
  return e;
};

const validateEvents = (streamId: string, events: readonly NewEvent[]): void => {
  if (!/^[^\s-][^\s]*$/.test(streamId) || streamId.length > 512) {
    throw new ValidationError(
      `invalid stream id ${JSON.stringify(streamId)}: want <category>-<id>, no spaces`,
    );
  }
  const seen = new Set<string>();
  for (const e of events) {
    if (typeof e.id !== 'string' || e.id.length === 0)
      throw new ValidationError(`event of type ${e.type} has no id`);
    if (seen.has(e.id)) throw new ValidationError(`event id ${e.id} appears twice in one append`);
    seen.add(e.id);
    if (typeof e.type !== 'string' || e.type.length === 0)
      throw new ValidationError(`event ${e.id} has no type`);
  }
};

/**
 * The embedded default event store: SQLite through `node:sqlite` (no native build), WAL,
 * `synchronous=FULL`, one database file per deployment.
 *
 * Group commit: appends and checkpoint writes that arrive while the event loop is busy are queued
 * and written in one transaction (one WAL sync) on the next turn. Each append runs inside its own
 * savepoint, so a conflicting append fails alone and the others still commit; appends to the same
 * stream within a batch see each other, in arrival order, exactly as if they had run one by one.
 *
 * @example
 * const store = createSqliteEventStore({ path: './data/switchboard.db' });
 * await store.appendToStream('incident-P1', [{ id: newId(), type: 'IncidentTriggered', data: {} }]);
 */
export const createSqliteEventStore = (
  options: SqliteEventStoreOptions,
): EventStore & {
  /** The database file (or `:memory:`), for diagnostics. */
  path: string;
  /** Commits so far and the events they carried: group commit's effect, for metrics and benches. */
  stats(): { commits: number; appends: number; events: number };
} => {
  const now = options.now ?? Date.now;
  const pollIntervalMs = options.pollIntervalMs ?? 250;
  const pageSize = options.pageSize ?? 1000;
  if (options.path !== ':memory:') mkdirSync(dirname(options.path), { recursive: true });

  let db: DatabaseSync;
  try {
    db = new DatabaseSync(options.path, { timeout: options.busyTimeoutMs ?? 5000 });
    if (options.path !== ':memory:') db.exec('PRAGMA journal_mode = WAL');
    db.exec(`PRAGMA synchronous = ${options.synchronous ?? 'FULL'}`);
    migrate(db, now);
  } catch (e) {
    throw translate(e, 'open') as Error;
  }
  let open = true;
  const notifier = new EventEmitter();
  notifier.setMaxListeners(0);
  const counters = { commits: 0, appends: 0, events: 0 };

  const statements = new Map<string, StatementSync>();
  const stmt = (sql: string): StatementSync => {
    let s = statements.get(sql);
    if (!s) {
      s = db.prepare(sql);
      statements.set(sql, s);
    }
    return s;
  };

  const currentRevision = (streamId: string): number | undefined => {
    const row = stmt('SELECT stream_revision FROM streams WHERE stream_id = ?').get(streamId) as
      | { stream_revision: number }
      | undefined;
    return row?.stream_revision;
  };

  /** Runs inside the batch transaction. Returns the result or throws a coded error. */
  const appendOne = (item: PendingAppend): AppendResult => {
    const { streamId, events, expected } = item;
    const revision = currentRevision(streamId);

    // Idempotency first: a retried append (same ids) succeeds without writing, whatever the
    // stream's revision is now. Mixed old and new ids is a caller bug.
    const existing = events.map(
      (e) =>
        stmt('SELECT stream_id, stream_revision, position FROM messages WHERE message_id = ?').get(e.id) as
          | { stream_id: string; stream_revision: number; position: number }
          | undefined,
    );
    const known = existing.filter((x) => x !== undefined);
    if (known.length > 0) {
      const elsewhere = known.find((x) => x.stream_id !== streamId);
      if (elsewhere) {
        throw new ValidationError(
          `event id already stored in stream ${elsewhere.stream_id}, not ${streamId}`,
          {
            details: { streamId, otherStreamId: elsewhere.stream_id },
          },
        );
      }
      if (known.length !== events.length) {
        throw new ConcurrencyError(streamId, describeExpected(expected), String(revision ?? 'no_stream'), {
          cause: new Error('some but not all event ids of this append are already stored'),
        });
      }
      const last = known.reduce((a, b) => (b.position > a.position ? b : a));
      return {
        nextExpectedRevision: revision ?? last.stream_revision,
        position: BigInt(last.position),
        deduplicated: true,
      };
    }

    const ok =
      expected === 'any' ||
      (expected === 'no_stream' && revision === undefined) ||
      (expected === 'stream_exists' && revision !== undefined) ||
      (typeof expected === 'number' && revision === expected);
    if (!ok)
      throw new ConcurrencyError(streamId, describeExpected(expected), String(revision ?? 'no_stream'));

    if (events.length === 0) {
      const last = stmt('SELECT last_position FROM streams WHERE stream_id = ?').get(streamId) as
        | { last_position: number }
        | undefined;
      return {
        nextExpectedRevision: revision ?? -1,
        position: BigInt(last?.last_position ?? 0),
        deduplicated: false,
      };
    }

    const recordedAt = now();
    const insert = stmt(
      'INSERT INTO messages (stream_id, stream_revision, message_id, message_kind, type, data, metadata, recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
    );
    let next = revision ?? -1;
    let position = 0;
    for (const e of events) {
      next += 1;
      const r = insert.run(
        streamId,
        next,
        e.id,
        e.kind === 'command' ? 'C' : 'E',
        e.type,
        JSON.stringify(e.data),
        JSON.stringify(e.metadata ?? {}),
        recordedAt,
      );
      position = Number(r.lastInsertRowid);
    }
    stmt(
      `INSERT INTO streams (stream_id, stream_category, stream_revision, last_position, updated_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (stream_id) DO UPDATE SET stream_revision = excluded.stream_revision,
         last_position = excluded.last_position, updated_at = excluded.updated_at`,
    ).run(streamId, streamCategory(streamId), next, position, recordedAt);
    counters.events += events.length;
    return { nextExpectedRevision: next, position: BigInt(position), deduplicated: false };
  };

  let queue: Pending[] = [];
  let scheduled = false;

  const runItem = (item: Pending): AppendResult | undefined => {
    if (item.kind === 'append') return appendOne(item);
    stmt(
      `INSERT INTO processors (processor_id, last_position, updated_at) VALUES (?, ?, ?)
       ON CONFLICT (processor_id) DO UPDATE SET last_position = excluded.last_position, updated_at = excluded.updated_at`,
    ).run(item.processorId, Number(item.position), now());
    return undefined;
  };

  const flush = (): void => {
    scheduled = false;
    const batch = queue;
    queue = [];
    if (batch.length === 0) return;
    if (!open) {
      for (const item of batch) item.reject(new StoreUnavailableError('SQLite store is closed'));
      return;
    }
    const outcomes: ({ ok: true; value: AppendResult | undefined } | { ok: false; error: unknown })[] = [];
    try {
      stmt('BEGIN IMMEDIATE').run();
    } catch (e) {
      const error = translate(e, 'begin a write');
      for (const item of batch) item.reject(error);
      return;
    }
    // A lone item needs no savepoint: if it fails, the whole transaction is rolled back.
    const single = batch.length === 1;
    let failedAlone = false;
    for (const item of batch) {
      if (!single) stmt('SAVEPOINT item').run();
      try {
        outcomes.push({ ok: true, value: runItem(item) });
        if (!single) stmt('RELEASE item').run();
      } catch (e) {
        if (single) failedAlone = true;
        else {
          stmt('ROLLBACK TO item').run();
          stmt('RELEASE item').run();
        }
        outcomes.push({ ok: false, error: translate(e, 'append') });
      }
    }
    try {
      if (failedAlone) stmt('ROLLBACK').run();
      else {
        stmt('COMMIT').run();
        counters.commits += 1;
      }
    } catch (e) {
      try {
        stmt('ROLLBACK').run();
      } catch {
        // the failed COMMIT may already have rolled back; the original error is what callers need
      }
      const error = translate(e, 'commit');
      for (const item of batch) item.reject(error);
      return;
    }
    let wrote = false;
    batch.forEach((item, i) => {
      const outcome = outcomes[i]!;
      if (outcome.ok) {
        if (item.kind === 'append' && !outcome.value?.deduplicated && item.events.length > 0) wrote = true;
        (item.resolve as (v: AppendResult | undefined) => void)(outcome.value);
      } else item.reject(outcome.error);
    });
    if (wrote) notifier.emit('appended');
  };

  const enqueue = <T>(make: (resolve: (v: T) => void, reject: (e: unknown) => void) => Pending): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      if (!open) {
        reject(new StoreUnavailableError('SQLite store is closed'));
        return;
      }
      queue.push(make(resolve, reject));
      if (!scheduled) {
        scheduled = true;
        // setImmediate, not a microtask: requests that arrive in the same event-loop turn (several
        // HTTP requests, several processors) join one commit.
        setImmediate(flush);
      }
    });

  const filterSql = (filter: EventFilter | undefined, params: (string | number)[]): string => {
    let sql = '';
    const prefixes = filter?.streamPrefixes ?? [];
    if (prefixes.length > 0) {
      sql += ` AND (${prefixes.map(() => 'substr(stream_id, 1, ?) = ?').join(' OR ')})`;
      for (const p of prefixes) params.push(p.length, p);
    }
    const types = filter?.eventTypes ?? [];
    if (types.length > 0) {
      sql += ` AND type IN (${types.map(() => '?').join(', ')})`;
      params.push(...types);
    }
    return sql;
  };

  const readAllSync = (options: ReadAllOptions = {}): RecordedEvent[] => {
    const params: (string | number)[] = [Number(options.after ?? 0n)];
    let sql = `SELECT ${SELECT_COLUMNS} FROM messages WHERE position > ?`;
    sql += filterSql(options.filter, params);
    sql += ' ORDER BY position ASC';
    if (options.maxCount !== undefined) {
      sql += ' LIMIT ?';
      params.push(options.maxCount);
    }
    return (stmt(sql).all(...params) as Row[]).map(toRecorded);
  };

  const guardOpen = (what: string): void => {
    if (!open) throw new StoreUnavailableError(`SQLite store is closed (cannot ${what})`);
  };

  const subscriptions = new Set<{ stop(): Promise<void> }>();

  const store = {
    kind: 'sqlite',
    path: options.path,
    stats: () => ({ ...counters }),

    appendToStream(
      streamId: string,
      events: readonly NewEvent[],
      opts: AppendOptions = {},
    ): Promise<AppendResult> {
      try {
        validateEvents(streamId, events);
      } catch (e) {
        return Promise.reject(e);
      }
      counters.appends += 1;
      return enqueue<AppendResult>((resolve, reject) => ({
        kind: 'append',
        streamId,
        events,
        expected: opts.expectedRevision ?? 'any',
        resolve,
        reject,
      }));
    },

    async readStream(streamId: string, opts: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
      guardOpen('read');
      const backwards = opts.direction === 'backwards';
      const params: (string | number)[] = [streamId];
      let sql = `SELECT ${SELECT_COLUMNS} FROM messages WHERE stream_id = ?`;
      if (opts.fromRevision !== undefined) {
        sql += backwards ? ' AND stream_revision <= ?' : ' AND stream_revision >= ?';
        params.push(opts.fromRevision);
      }
      sql += ` ORDER BY stream_revision ${backwards ? 'DESC' : 'ASC'}`;
      if (opts.maxCount !== undefined) {
        sql += ' LIMIT ?';
        params.push(opts.maxCount);
      }
      try {
        return (stmt(sql).all(...params) as Row[]).map(toRecorded);
      } catch (e) {
        throw translate(e, 'read');
      }
    },

    async streamRevision(streamId: string): Promise<number | undefined> {
      guardOpen('read');
      return currentRevision(streamId);
    },

    async readAll(opts: ReadAllOptions = {}): Promise<RecordedEvent[]> {
      guardOpen('read');
      try {
        return readAllSync(opts);
      } catch (e) {
        throw translate(e, 'read');
      }
    },

    async headPosition(): Promise<bigint | undefined> {
      guardOpen('read');
      const row = stmt('SELECT MAX(position) AS p FROM messages').get() as { p: number | null } | undefined;
      return row?.p == null ? undefined : BigInt(row.p);
    },

    async listStreams(opts: { prefix?: string; limit?: number } = {}): Promise<StreamInfo[]> {
      guardOpen('read');
      const params: (string | number)[] = [];
      let sql = 'SELECT stream_id, stream_revision, last_position, updated_at FROM streams';
      if (opts.prefix) {
        sql += ' WHERE substr(stream_id, 1, ?) = ?';
        params.push(opts.prefix.length, opts.prefix);
      }
      sql += ' ORDER BY last_position DESC LIMIT ?';
      params.push(opts.limit ?? 1000);
      const rows = stmt(sql).all(...params) as {
        stream_id: string;
        stream_revision: number;
        last_position: number;
        updated_at: number;
      }[];
      return rows.map((r) => ({
        streamId: r.stream_id,
        lastRevision: r.stream_revision,
        lastPosition: BigInt(r.last_position),
        lastRecordedAt: new Date(r.updated_at),
      }));
    },

    subscribe(subOptions: SubscribeOptions): Subscription {
      let stopped = false;
      let wake: (() => void) | undefined;
      const onAppended = () => wake?.();
      notifier.on('appended', onAppended);
      let timer: NodeJS.Timeout | undefined;
      const sleep = () =>
        new Promise<void>((resolve) => {
          wake = () => {
            wake = undefined;
            if (timer) clearTimeout(timer);
            resolve();
          };
          // Appends from other processes (CLI, a second replica on the same file) raise no
          // in-process signal, so look now and then as well.
          timer = setTimeout(() => wake?.(), pollIntervalMs);
        });

      const run = async (): Promise<void> => {
        let after: bigint;
        if (subOptions.from === 'start') after = 0n;
        else if (subOptions.from === 'end') after = (await store.headPosition()) ?? 0n;
        else after = subOptions.from;
        let caughtUp = false;
        while (!stopped && open) {
          const page = readAllSync({ after, maxCount: pageSize, filter: subOptions.filter });
          // Without a filter the page's last position is where to resume; with one, skipped
          // positions are covered by the scan as well.
          for (const event of page) {
            if (stopped) return;
            await subOptions.onEvent(event);
            after = event.position;
          }
          if (page.length < pageSize) {
            if (!caughtUp) {
              caughtUp = true;
              subOptions.onCaughtUp?.(after === 0n ? undefined : after);
            }
            if (stopped || !open) return;
            await sleep();
          }
        }
      };

      const done = run().finally(() => {
        notifier.off('appended', onAppended);
        if (timer) clearTimeout(timer);
      });
      const subscription = {
        stop: async () => {
          stopped = true;
          wake?.();
          subscriptions.delete(subscription);
          await done.catch(() => undefined);
        },
        done,
      };
      subscriptions.add(subscription);
      return subscription;
    },

    async readCheckpoint(processorId: string): Promise<bigint | undefined> {
      guardOpen('read');
      const row = stmt('SELECT last_position FROM processors WHERE processor_id = ?').get(processorId) as
        | { last_position: number }
        | undefined;
      return row === undefined ? undefined : BigInt(row.last_position);
    },

    storeCheckpoint(processorId: string, position: bigint): Promise<void> {
      return enqueue<undefined>((resolve, reject) => ({
        kind: 'checkpoint',
        processorId,
        position,
        resolve,
        reject,
      }));
    },

    isOpen: () => open,

    async close(): Promise<void> {
      if (!open) return;
      // Writes already queued are committed before closing: their callers were promised an answer.
      flush();
      open = false;
      for (const s of [...subscriptions]) await s.stop();
      notifier.emit('appended');
      db.close();
    },
  };
  return store;
};

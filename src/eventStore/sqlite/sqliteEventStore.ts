import { randomUUID } from 'node:crypto';
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
  matchesFilter,
  type NewEvent,
  type ReadAllOptions,
  type ReadStreamOptions,
  type RecordedEvent,
  type StreamInfo,
  type SubscribeOptions,
  type Subscription,
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
  /**
   * How long a write waits for another process holding the write lock (ms). The wait blocks this
   * process's event loop (node:sqlite is synchronous), so keep it short; default 5000.
   */
  busyTimeoutMs?: number;
  /** How often each live subscription reads the store anyway, as a fallback (ms, default 250). */
  pollIntervalMs?: number;
  /**
   * How often the store asks SQLite whether another process (a replica, the CLI) committed, by
   * `PRAGMA data_version` (ms, default 25; files only). A change wakes every live subscription at
   * once, so a replica's processors see another replica's appends within about this long. The
   * pragma reads a counter in shared memory: no I/O.
   */
  changeCheckMs?: number;
  /** Catch-up page size for subscriptions. */
  pageSize?: number;
  /** Store clock for `recordedAt`. */
  now?: () => number;
  /**
   * Monotonic milliseconds that bound a chain of commits within one event-loop turn (see
   * `flush`); default `performance.now`. Tests pass a clock they control, so what they prove about
   * chaining does not depend on how fast the machine commits.
   */
  chainClock?: () => number;
  /**
   * WAL checkpoints (files only). SQLite's own auto-checkpoint runs inside the COMMIT that crosses
   * 1000 WAL pages, so the caller whose append it is (an HTTP ack) waits for the copy and the
   * database file's fsync. Instead the store runs a PASSIVE checkpoint itself, on the event-loop
   * turn after the commit's callers were answered (and once nothing is queued), after this many
   * commits (default 250, about SQLite's 1000 pages at 3-4 pages a commit)…
   */
  checkpointEveryCommits?: number;
  /** …or after this many events written, for large batches (default 2500)… */
  checkpointEveryEvents?: number;
  /** …or once no commit has come for this long (ms, default 1000), whatever was written. */
  checkpointIdleMs?: number;
}>;

/**
 * SQLite's auto-checkpoint stays on, far out, as a safety net should the store's own
 * checkpoints not run (16 MiB of WAL in 4 KiB pages).
 */
const SAFETY_NET_AUTOCHECKPOINT_PAGES = 4096;
/** Turns a due checkpoint waits for queued writes to commit first; a writer that never pauses gets it anyway. */
const MAX_CHECKPOINT_DEFERRALS = 2;

/** What the SQLite store reports about its own connection (PRAGMAs read back live). */
export type SqliteDiagnostics = Readonly<{
  path: string;
  /** `wal` for files; `memory` for `:memory:`. */
  journalMode: string;
  /** `FULL` or `NORMAL` (SQLite's `PRAGMA synchronous` read back). */
  synchronous: string;
  busyTimeoutMs: number;
  schemaVersion: number;
}>;

export type SqliteEventStore = EventStore &
  Readonly<{
    /** The database file (or `:memory:`), for diagnostics. */
    path: string;
    /**
     * Commits so far, the appends and checkpoint writes they carried, and the events written:
     * group commit's effect, for metrics and benches. Appends that wrote nothing (refused,
     * deduplicated) are counted in `appends` but cost no commit.
     */
    stats(): {
      commits: number;
      appends: number;
      events: number;
      checkpoints: number;
      /** Queries live and catching-up subscriptions ran (appends they could skip cost none). */
      subscriptionReads: number;
    };
    /** The connection's settings, read back from SQLite (for /readyz, logs and tests). */
    diagnostics(): SqliteDiagnostics;
  }>;

/** An event ready for INSERT: validated and serialised before it joins a batch. */
type Serialized = { id: string; type: string; kind: 'E' | 'C'; data: string; metadata: string };

type PendingAppend = {
  kind: 'append';
  streamId: string;
  events: readonly Serialized[];
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
type PendingDelete = {
  kind: 'delete';
  streamId: string;
  resolve: (r: AppendResult | undefined) => void;
  reject: (e: unknown) => void;
};
type Pending = PendingAppend | PendingCheckpoint | PendingDelete;

/**
 * Where the store notes that it deleted a stream (`deleteStream`): one event per deletion, after
 * the deleted ones, so the highest position never goes back (positions are rowids, allocated as
 * max + 1: without it, deleting the newest rows would hand their positions out again).
 */
export const DELETED_STREAMS_STREAM = 'deletedstreams-store';

type Outcome = { ok: true; value: AppendResult | undefined } | { ok: false; error: unknown };

/** An event this process committed, as live subscriptions are told of it (position order). */
type Committed = Readonly<{ position: number; streamId: string; type: string }>;
/** Most committed-event notes a subscription keeps between reads; past that it just reads. */
const MAX_UNREAD_NOTES = 1024;

// Rows are read as arrays (node:sqlite's setReturnArrays), about twice as fast as objects.
const SELECT_COLUMNS =
  'position, stream_id, stream_revision, message_id, message_kind, type, data, metadata, recorded_at';
type Row = [
  position: number,
  streamId: string,
  revision: number,
  id: string,
  kind: 'E' | 'C',
  type: string,
  data: string,
  metadata: string,
  recordedAt: number,
];

const toRecorded = (row: Row): RecordedEvent => ({
  id: row[3],
  streamId: row[1],
  type: row[5],
  data: JSON.parse(row[6]) as JsonObject,
  // Most messages carry no metadata: skip the parser for the empty object.
  metadata: row[7] === '{}' ? {} : (JSON.parse(row[7]) as JsonObject),
  kind: row[4] === 'C' ? 'command' : 'event',
  revision: row[2],
  position: BigInt(row[0]),
  recordedAt: new Date(row[8]),
});

/** SQLite result codes (primary, low byte) that mean "cannot take the write now", not "bad request". */
const UNAVAILABLE_CODES = new Set([
  5 /* BUSY */, 6 /* LOCKED */, 8 /* READONLY */, 10 /* IOERR */, 13 /* FULL */, 14 /* CANTOPEN */,
  11 /* CORRUPT */, 26 /* NOTADB */,
]);
const SQLITE_CONSTRAINT = 19;
/** Microtask turns a just-answered caller gets to append again and join the next commit at once. */
const CHAIN_TURNS = 4;
/** Longest run of such chained commits before the event loop gets its turn (ms). */
export const CHAIN_BUDGET_MS = 2;

const sqliteCode = (e: unknown): number | undefined => {
  const errcode = (e as { errcode?: unknown } | undefined)?.errcode;
  return typeof errcode === 'number' ? errcode & 0xff : undefined;
};

const translate = (e: unknown, what: string): unknown => {
  if (e instanceof ChatOpsError) return e;
  const code = sqliteCode(e);
  if (code !== undefined && UNAVAILABLE_CODES.has(code)) {
    return new StoreUnavailableError(`SQLite store cannot ${what}: ${(e as Error).message}`, { cause: e });
  }
  if (e instanceof Error && /database is not open|database is locked|finalized/i.test(e.message)) {
    return new StoreUnavailableError(`SQLite store cannot ${what}: ${e.message}`, { cause: e });
  }
  return e;
};

/** Thrown inside a batch when an INSERT hits a unique constraint: maybe a retried append. */
class DuplicateInsert extends Error {}

const isJsonObject = (v: unknown): v is JsonObject =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

const serialize = (streamId: string, events: readonly NewEvent[]): Serialized[] => {
  if (typeof streamId !== 'string' || !/^[^\s-][^\s]*$/.test(streamId) || streamId.length > 512) {
    throw new ValidationError(
      `invalid stream id ${JSON.stringify(streamId)}: want <category>-<id>, no spaces`,
    );
  }
  const seen = new Set<string>();
  return events.map((e) => {
    if (typeof e.id !== 'string' || e.id.length === 0)
      throw new ValidationError(`event of type ${e.type} has no id`);
    if (seen.has(e.id)) throw new ValidationError(`event id ${e.id} appears twice in one append`);
    seen.add(e.id);
    if (typeof e.type !== 'string' || e.type.length === 0)
      throw new ValidationError(`event ${e.id} has no type`);
    if (!isJsonObject(e.data))
      throw new ValidationError(`event ${e.id} (${e.type}): data must be a JSON object`);
    if (e.metadata !== undefined && !isJsonObject(e.metadata))
      throw new ValidationError(`event ${e.id} (${e.type}): metadata must be a JSON object`);
    if (e.kind !== undefined && e.kind !== 'event' && e.kind !== 'command')
      throw new ValidationError(`event ${e.id} (${e.type}): kind must be 'event' or 'command'`);
    let data: string;
    let metadata: string;
    try {
      data = JSON.stringify(e.data);
      metadata = e.metadata === undefined ? '{}' : JSON.stringify(e.metadata);
    } catch (cause) {
      throw new ValidationError(`event ${e.id} (${e.type}) is not serialisable as JSON`, { cause });
    }
    return { id: e.id, type: e.type, kind: e.kind === 'command' ? 'C' : 'E', data, metadata };
  });
};

const validateExpected = (expected: ExpectedRevision): void => {
  if (typeof expected === 'number') {
    if (!Number.isSafeInteger(expected) || expected < 0)
      throw new ValidationError(`expected revision must be a revision (an integer ≥ 0), got ${expected}`);
  } else if (expected !== 'any' && expected !== 'no_stream' && expected !== 'stream_exists') {
    throw new ValidationError(`unknown expected revision ${JSON.stringify(expected)}`);
  }
};

const expectationMet = (expected: ExpectedRevision, revision: number | undefined): boolean =>
  expected === 'any' ||
  (expected === 'no_stream' && revision === undefined) ||
  (expected === 'stream_exists' && revision !== undefined) ||
  (typeof expected === 'number' && revision === expected);

/** Number of characters SQLite's substr() counts in a prefix (code points, not UTF-16 units). */
/**
 * The stream ids that start with `prefix` as one range of the index, `[prefix, end)` in SQLite's
 * binary order: `end` is the prefix with its last character one higher. Only for a prefix ending
 * in a printable ASCII character (every prefix Switchboard uses); undefined otherwise.
 */
const prefixRange = (prefix: string): [string, string] | undefined => {
  const last = prefix.charCodeAt(prefix.length - 1);
  if (prefix.length === 0 || last < 0x20 || last >= 0x7e) return undefined;
  return [prefix, `${prefix.slice(0, -1)}${String.fromCharCode(last + 1)}`];
};

const codePoints = (s: string): number => {
  let n = 0;
  for (const _ of s) n += 1;
  return n;
};

/**
 * The embedded default event store: SQLite through `node:sqlite` (no native build), WAL,
 * `synchronous=FULL`, one database file per deployment.
 *
 * Group commit: appends and checkpoint writes that arrive while the event loop is busy are queued
 * and written in one transaction (one WAL sync) on the next turn. Each append runs inside its own
 * savepoint, so a conflicting append fails alone and the others still commit; appends to the same
 * stream within a batch see each other, in arrival order, exactly as if they had run one by one.
 * A batch that writes nothing (every append refused or a retry) is rolled back: no sync. A caller
 * that appends again as soon as it is answered joins a commit in the same turn (bounded in time,
 * see `flush`), so a sequential writer does not pay an event-loop turn per append either.
 *
 * Global positions are SQLite rowids, allocated by the one writer at a time in commit order, so
 * readers never see position N+1 before N: subscriptions have no gaps to wait out.
 *
 * WAL checkpoints run on the turn after a commit's callers were answered, every few hundred
 * commits and when writes pause, not inside the COMMIT that crosses SQLite's auto-checkpoint
 * threshold (see `checkpointEveryCommits`); durability is the same: every commit is synced first.
 *
 * @example
 * const store = createSqliteEventStore({ path: './data/switchboard.db' });
 * await store.appendToStream('incident-P1', [{ id: newId(), type: 'IncidentTriggered', data: {} }]);
 */
export const createSqliteEventStore = (options: SqliteEventStoreOptions): SqliteEventStore => {
  const now = options.now ?? Date.now;
  const chainClock = options.chainClock ?? (() => performance.now());
  const pollIntervalMs = options.pollIntervalMs ?? 250;
  const pageSize = options.pageSize ?? 1000;
  const memory = options.path === ':memory:';
  if (!memory) mkdirSync(dirname(options.path), { recursive: true });

  let db: DatabaseSync;
  let schemaVersion: number;
  try {
    db = new DatabaseSync(options.path, { timeout: options.busyTimeoutMs ?? 5000 });
    if (!memory) {
      const mode = db.prepare('PRAGMA journal_mode = WAL').get() as { journal_mode?: string } | undefined;
      if (mode?.journal_mode !== 'wal') {
        db.close();
        throw new ChatOpsError(
          'SB_CONFIG',
          `SQLite could not switch ${options.path} to WAL mode (got ${mode?.journal_mode}); is it on a network filesystem?`,
        );
      }
    }
    db.exec(`PRAGMA synchronous = ${options.synchronous === 'NORMAL' ? 'NORMAL' : 'FULL'}`);
    // What `deleteStream` removes is overwritten with zeros, not left in free space.
    db.exec('PRAGMA secure_delete = ON');
    if (!memory) db.exec(`PRAGMA wal_autocheckpoint = ${SAFETY_NET_AUTOCHECKPOINT_PAGES}`);
    schemaVersion = migrate(db, now);
  } catch (e) {
    throw translate(e, 'open') as Error;
  }
  let open = true;
  const notifier = new EventEmitter();
  notifier.setMaxListeners(0);
  const counters = { commits: 0, appends: 0, events: 0, checkpoints: 0, subscriptionReads: 0 };

  const statements = new Map<string, StatementSync>();
  const stmt = (sql: string): StatementSync => {
    let s = statements.get(sql);
    if (!s) {
      s = db.prepare(sql);
      statements.set(sql, s);
    }
    return s;
  };
  const rowStatements = new Map<string, StatementSync>();
  /** A cached statement returning rows as arrays (for SELECT_COLUMNS queries). */
  const rowStmt = (sql: string): StatementSync => {
    let s = rowStatements.get(sql);
    if (!s) {
      s = db.prepare(sql);
      s.setReturnArrays(true);
      rowStatements.set(sql, s);
    }
    return s;
  };

  /** The stream's last revision and position: the last entry of the (stream_id, stream_revision) index. */
  const streamHead = (streamId: string): { revision: number; position: number } | undefined => {
    const row = stmt(
      'SELECT stream_revision, position FROM messages WHERE stream_id = ? ORDER BY stream_revision DESC LIMIT 1',
    ).get(streamId) as { stream_revision: number; position: number } | undefined;
    return row === undefined ? undefined : { revision: row.stream_revision, position: row.position };
  };
  const currentRevision = (streamId: string): number | undefined => streamHead(streamId)?.revision;

  const headSync = (): number | undefined => {
    const row = stmt('SELECT MAX(position) AS p FROM messages').get() as { p: number | null } | undefined;
    return row?.p ?? undefined;
  };

  /**
   * The outcome of an append whose ids may already be stored: the original's result when all are
   * (a retry), undefined when none is, an error when some are or one is in another stream.
   */
  const duplicateOf = (item: PendingAppend): AppendResult | undefined => {
    const { streamId, events, expected } = item;
    const lookup = stmt('SELECT stream_id, stream_revision, position FROM messages WHERE message_id = ?');
    const known: { stream_id: string; stream_revision: number; position: number }[] = [];
    for (const e of events) {
      const row = lookup.get(e.id) as (typeof known)[number] | undefined;
      if (row) known.push(row);
    }
    if (known.length === 0) return undefined;
    const revision = currentRevision(streamId);
    const elsewhere = known.find((x) => x.stream_id !== streamId);
    if (elsewhere) {
      throw new ValidationError(`event id already stored in stream ${elsewhere.stream_id}, not ${streamId}`, {
        details: { streamId, otherStreamId: elsewhere.stream_id },
      });
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
  };

  /**
   * Runs inside the batch transaction. Idempotency is checked only when it can matter (the
   * expected revision is not met, or an INSERT hits the unique message id), so a plain append
   * costs one lookup and its inserts.
   */
  const appendOne = (item: PendingAppend): AppendResult => {
    const { streamId, events, expected } = item;
    const head = streamHead(streamId);
    const revision = head?.revision;
    if (!expectationMet(expected, revision)) {
      // A retried append succeeds without writing, whatever the stream's revision is now.
      const duplicate = duplicateOf(item);
      if (duplicate) return duplicate;
      throw new ConcurrencyError(streamId, describeExpected(expected), String(revision ?? 'no_stream'));
    }

    if (events.length === 0) {
      return {
        nextExpectedRevision: revision ?? -1,
        position: BigInt(head?.position ?? 0),
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
      let r: { lastInsertRowid: number | bigint };
      try {
        r = insert.run(streamId, next, e.id, e.kind, e.type, e.data, e.metadata, recordedAt);
      } catch (error) {
        if (sqliteCode(error) === SQLITE_CONSTRAINT) throw new DuplicateInsert('unique', { cause: error });
        throw error;
      }
      position = Number(r.lastInsertRowid);
    }
    return { nextExpectedRevision: next, position: BigInt(position), deduplicated: false };
  };

  let queue: Pending[] = [];
  /**
   * Wakes live subscriptions on the next event-loop turn, not in this one: the callers just
   * answered (an HTTP ack waiting on its append) finish first, and the subscriptions' reads do not
   * sit between a commit and the response it allows. One pending notification covers any number
   * of commits.
   */
  let notifyPending = false;
  /** What the pending notification carries: every event committed since the last one, in position order. */
  let committedSinceNotify: Committed[] = [];
  const notifyAppended = (committed: readonly Committed[]): void => {
    if (notifier.listenerCount('appended') === 0) return;
    for (const c of committed) committedSinceNotify.push(c);
    if (notifyPending) return;
    notifyPending = true;
    setImmediate(() => {
      notifyPending = false;
      const notes = committedSinceNotify;
      committedSinceNotify = [];
      notifier.emit('appended', notes);
    });
  };

  /** One setImmediate(flush) at most is pending, however many chained commits queued work. */
  let flushPending = false;

  // ---- WAL checkpoints (files only): off the commit, after its callers were answered ----
  const checkpointEveryCommits = options.checkpointEveryCommits ?? 250;
  const checkpointEveryEvents = options.checkpointEveryEvents ?? 2500;
  const checkpointIdleMs = options.checkpointIdleMs ?? 1000;
  const sinceCheckpoint = { commits: 0, events: 0 };
  let lastCommitAt = 0;
  let checkpointPending = false;
  let idleTimer: NodeJS.Timeout | undefined;

  /** PASSIVE: copies what no reader still needs and never waits for readers or writers. */
  const checkpoint = (): void => {
    sinceCheckpoint.commits = 0;
    sinceCheckpoint.events = 0;
    if (!open) return;
    try {
      stmt('PRAGMA wal_checkpoint(PASSIVE)').get();
      counters.checkpoints += 1;
    } catch {
      // A checkpoint that cannot run now (another process checkpointing, I/O error) loses nothing:
      // the WAL holds every commit, the next checkpoint (or SQLite's safety net) takes it up, and
      // a real I/O problem surfaces on the next commit, where a caller can be told.
    }
  };

  /** On the next turn, once no write is queued (an append waiting for its commit goes first). */
  const scheduleCheckpoint = (): void => {
    if (checkpointPending) return;
    checkpointPending = true;
    let deferrals = 0;
    const attempt = (): void => {
      if (open && (queue.length > 0 || flushPending) && deferrals++ < MAX_CHECKPOINT_DEFERRALS) {
        setImmediate(attempt);
        return;
      }
      checkpointPending = false;
      checkpoint();
    };
    setImmediate(attempt);
  };

  const onIdle = (): void => {
    idleTimer = undefined;
    if (!open || sinceCheckpoint.commits === 0) return;
    const quietFor = performance.now() - lastCommitAt;
    if (quietFor < checkpointIdleMs) {
      idleTimer = setTimeout(onIdle, checkpointIdleMs - quietFor);
      idleTimer.unref();
      return;
    }
    scheduleCheckpoint();
  };

  /** Called after each commit, once its callers have been answered. */
  const afterCommit = (commits: number, events: number): void => {
    if (memory) return;
    sinceCheckpoint.commits += commits;
    sinceCheckpoint.events += events;
    lastCommitAt = performance.now();
    if (
      sinceCheckpoint.commits >= checkpointEveryCommits ||
      sinceCheckpoint.events >= checkpointEveryEvents
    ) {
      scheduleCheckpoint();
    } else if (idleTimer === undefined) {
      idleTimer = setTimeout(onIdle, checkpointIdleMs);
      idleTimer.unref();
    }
  };

  const deleteOne = (item: PendingDelete): AppendResult | undefined => {
    const head = streamHead(item.streamId);
    if (head === undefined) return undefined;
    // The marker first, so it takes a position after the deleted ones (max + 1) before they go.
    const marker = appendOne({
      kind: 'append',
      streamId: DELETED_STREAMS_STREAM,
      events: [
        {
          id: randomUUID(),
          type: 'StreamDeleted',
          kind: 'E',
          data: JSON.stringify({ streamId: item.streamId, lastRevision: head.revision }),
          metadata: '{}',
        },
      ],
      expected: 'any',
      resolve: () => undefined,
      reject: () => undefined,
    });
    // secure_delete is on: the deleted cells are overwritten with zeros, not just unlinked.
    stmt('DELETE FROM messages WHERE stream_id = ?').run(item.streamId);
    return marker;
  };

  const runItem = (item: Pending): AppendResult | undefined => {
    if (item.kind === 'append') return appendOne(item);
    if (item.kind === 'delete') return deleteOne(item);
    stmt(
      `INSERT INTO processors (processor_id, last_position, updated_at) VALUES (?, ?, ?)
       ON CONFLICT (processor_id) DO UPDATE SET last_position = excluded.last_position, updated_at = excluded.updated_at`,
    ).run(item.processorId, Number(item.position), now());
    return undefined;
  };

  const wrote = (item: Pending, value: AppendResult | undefined): boolean =>
    item.kind === 'checkpoint' ||
    (item.kind === 'delete'
      ? value !== undefined
      : value !== undefined && !value.deduplicated && item.events.length > 0);

  /** Writes one batch; returns each item's outcome, or throws when the batch as a whole failed. */
  const writeBatch = (batch: readonly Pending[]): Outcome[] => {
    stmt('BEGIN IMMEDIATE').run();
    let inTransaction = true;
    let dirty = false;
    // A lone item needs no savepoint: if it fails, the whole transaction is rolled back.
    const guarded = batch.length > 1;
    const outcomes: Outcome[] = [];
    for (const item of batch) {
      if (guarded) stmt('SAVEPOINT item').run();
      try {
        const value = runItem(item);
        if (guarded) stmt('RELEASE item').run();
        if (wrote(item, value)) dirty = true;
        outcomes.push({ ok: true, value });
      } catch (e) {
        if (guarded) {
          stmt('ROLLBACK TO item').run();
          stmt('RELEASE item').run();
        } else {
          stmt('ROLLBACK').run();
          inTransaction = false;
        }
        if (e instanceof DuplicateInsert && item.kind === 'append') {
          try {
            const duplicate = duplicateOf(item);
            outcomes.push(
              duplicate ? { ok: true, value: duplicate } : { ok: false, error: translate(e.cause, 'append') },
            );
          } catch (refusal) {
            outcomes.push({ ok: false, error: refusal });
          }
        } else outcomes.push({ ok: false, error: translate(e, 'append') });
      }
    }
    if (inTransaction) {
      if (dirty) {
        stmt('COMMIT').run();
        counters.commits += 1;
      } else stmt('ROLLBACK').run();
    }
    return outcomes;
  };

  /**
   * Writes what is queued, then keeps the batch window open for a few microtask turns: callers
   * that were just answered often append again at once (the next step of a command, a
   * processor's checkpoint), and their appends are written right away instead of a whole
   * event-loop turn later. Bounded by time, so a continuous writer never holds up I/O for more
   * than CHAIN_BUDGET_MS (plus one commit).
   */
  const flush = (): void => {
    const started = chainClock();
    flushOnce();
    const tick = (turns: number): void => {
      if (turns > 0) {
        queueMicrotask(() => tick(turns - 1));
        return;
      }
      if (queue.length === 0 || chainClock() - started > CHAIN_BUDGET_MS) return;
      flushOnce();
      queueMicrotask(() => tick(CHAIN_TURNS));
    };
    queueMicrotask(() => tick(CHAIN_TURNS));
  };

  const flushOnce = (): void => {
    const batch = queue;
    queue = [];
    if (batch.length === 0) return;
    if (!open) {
      for (const item of batch) item.reject(new StoreUnavailableError('SQLite store is closed'));
      return;
    }
    let outcomes: Outcome[];
    const commitsBefore = counters.commits;
    try {
      outcomes = writeBatch(batch);
    } catch (e) {
      // BEGIN or COMMIT failed (busy, disk full, I/O error): nothing of the batch is stored.
      try {
        if (db.isTransaction) db.exec('ROLLBACK');
      } catch {
        // the failed statement may already have rolled back; the original error is what callers need
      }
      const error = translate(e, 'write');
      for (const item of batch) item.reject(error);
      return;
    }
    const committed: Committed[] = [];
    batch.forEach((item, i) => {
      const outcome = outcomes[i]!;
      if (!outcome.ok) {
        item.reject(outcome.error);
        return;
      }
      if (item.kind === 'delete' && outcome.value) {
        const position = Number(outcome.value.position);
        committed.push({ position, streamId: DELETED_STREAMS_STREAM, type: 'StreamDeleted' });
      }
      if (item.kind === 'append' && outcome.value && wrote(item, outcome.value)) {
        // One append's events were inserted one after another: consecutive positions up to the last.
        const first = Number(outcome.value.position) - item.events.length + 1;
        item.events.forEach((e, k) => {
          committed.push({ position: first + k, streamId: item.streamId, type: e.type });
        });
      }
      (item.resolve as (v: AppendResult | undefined) => void)(outcome.value);
    });
    const events = committed.length;
    counters.events += events;
    if (events > 0) notifyAppended(committed);
    if (counters.commits > commitsBefore) afterCommit(counters.commits - commitsBefore, events);
  };

  const enqueue = <T>(make: (resolve: (v: T) => void, reject: (e: unknown) => void) => Pending): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      if (!open) {
        reject(new StoreUnavailableError('SQLite store is closed'));
        return;
      }
      queue.push(make(resolve, reject));
      if (!flushPending) {
        flushPending = true;
        // setImmediate, not a microtask: requests that arrive in the same event-loop turn (several
        // HTTP requests, several processors) join one commit.
        setImmediate(() => {
          flushPending = false;
          flush();
        });
      }
    });

  const filterSql = (filter: EventFilter | undefined, params: (string | number)[]): string => {
    let sql = '';
    const prefixes = filter?.streamPrefixes ?? [];
    if (prefixes.length > 0) {
      sql += ` AND (${prefixes.map(() => 'substr(stream_id, 1, ?) = ?').join(' OR ')})`;
      for (const p of prefixes) params.push(codePoints(p), p);
    }
    const types = filter?.eventTypes ?? [];
    if (types.length > 0) {
      sql += ` AND type IN (${types.map(() => '?').join(', ')})`;
      params.push(...types);
    }
    return sql;
  };

  /**
   * A sparse read (`filter.sparse`): the positions of the streams under each prefix, found
   * through the (stream_id, stream_revision) index (every id with an ASCII prefix lies in one
   * range of it), then those rows by position. Undefined when the filter cannot be read that way.
   */
  const sparseReadSync = (options: ReadAllOptions & { upTo?: number }): RecordedEvent[] | undefined => {
    const filter = options.filter;
    const prefixes = filter?.streamPrefixes ?? [];
    if (!filter?.sparse || prefixes.length === 0) return undefined;
    const ranges = prefixes.map(prefixRange);
    if (ranges.some((r) => r === undefined)) return undefined;
    const positions = new Set<number>();
    for (const [from, to] of ranges as [string, string][]) {
      const params: (string | number)[] = [from, to, Number(options.after ?? 0n)];
      let sql = 'SELECT position FROM messages WHERE stream_id >= ? AND stream_id < ? AND position > ?';
      if (options.upTo !== undefined) {
        sql += ' AND position <= ?';
        params.push(options.upTo);
      }
      for (const row of stmt(sql).all(...params) as { position: number }[]) positions.add(row.position);
    }
    const events: RecordedEvent[] = [];
    const byPosition = rowStmt(`SELECT ${SELECT_COLUMNS} FROM messages WHERE position = ?`);
    for (const position of [...positions].sort((a, b) => a - b)) {
      if (options.maxCount !== undefined && events.length >= options.maxCount) break;
      const row = byPosition.get(position) as unknown as Row | undefined;
      if (!row) continue;
      const event = toRecorded(row);
      if (matchesFilter(event, filter)) events.push(event);
    }
    return events;
  };

  /** Events after `after` (exclusive) and, when given, up to `upTo` (inclusive), in global order. */
  const readAllSync = (options: ReadAllOptions & { upTo?: number }): RecordedEvent[] => {
    const sparse = sparseReadSync(options);
    if (sparse) return sparse;
    const params: (string | number)[] = [Number(options.after ?? 0n)];
    let sql = `SELECT ${SELECT_COLUMNS} FROM messages WHERE position > ?`;
    if (options.upTo !== undefined) {
      sql += ' AND position <= ?';
      params.push(options.upTo);
    }
    sql += filterSql(options.filter, params);
    sql += ' ORDER BY position ASC';
    if (options.maxCount !== undefined) {
      sql += ' LIMIT ?';
      params.push(options.maxCount);
    }
    const rows = rowStmt(sql).all(...params) as unknown as Row[];
    const events = new Array<RecordedEvent>(rows.length);
    for (let i = 0; i < rows.length; i++) events[i] = toRecorded(rows[i]!);
    return events;
  };

  const guardOpen = (what: string): void => {
    if (!open) throw new StoreUnavailableError(`SQLite store is closed (cannot ${what})`);
  };

  /** Runs a synchronous read, with the store's coded errors. */
  const read = <T>(what: string, fn: () => T): T => {
    guardOpen(what);
    try {
      return fn();
    } catch (e) {
      throw translate(e, what);
    }
  };

  const subscriptions = new Set<{ stop(): Promise<void> }>();
  let closing: Promise<void> | undefined;

  // ---- other writers (files only): PRAGMA data_version changes when another connection commits
  const changeCheckMs = options.changeCheckMs ?? 25;
  let changeTimer: NodeJS.Timeout | undefined;
  let dataVersion: number | undefined;
  const checkOtherWriters = (): void => {
    if (!open || subscriptions.size === 0) {
      if (changeTimer) clearInterval(changeTimer);
      changeTimer = undefined;
      dataVersion = undefined;
      return;
    }
    try {
      const row = stmt('PRAGMA data_version').get() as { data_version: number };
      if (dataVersion !== undefined && row.data_version !== dataVersion) notifier.emit('external');
      dataVersion = row.data_version;
    } catch {
      // The next regular poll finds what was appended.
    }
  };
  const watchOtherWriters = (): void => {
    if (memory || changeTimer || changeCheckMs <= 0) return;
    checkOtherWriters();
    changeTimer = setInterval(checkOtherWriters, changeCheckMs);
    changeTimer.unref();
  };

  const store: SqliteEventStore = {
    kind: 'sqlite',
    path: options.path,
    stats: () => ({ ...counters }),

    diagnostics: () =>
      read('read its settings', () => {
        const journal = db.prepare('PRAGMA journal_mode').get() as { journal_mode: string };
        const sync = db.prepare('PRAGMA synchronous').get() as { synchronous: number };
        const busy = db.prepare('PRAGMA busy_timeout').get() as { timeout: number };
        return {
          path: options.path,
          journalMode: journal.journal_mode,
          synchronous: ['OFF', 'NORMAL', 'FULL', 'EXTRA'][sync.synchronous] ?? String(sync.synchronous),
          busyTimeoutMs: busy.timeout,
          schemaVersion,
        };
      }),

    appendToStream(
      streamId: string,
      events: readonly NewEvent[],
      opts: AppendOptions = {},
    ): Promise<AppendResult> {
      const expected = opts.expectedRevision ?? 'any';
      let serialized: Serialized[];
      try {
        validateExpected(expected);
        serialized = serialize(streamId, events);
      } catch (e) {
        return Promise.reject(e);
      }
      counters.appends += 1;
      return enqueue<AppendResult>((resolve, reject) => ({
        kind: 'append',
        streamId,
        events: serialized,
        expected,
        resolve,
        reject,
      }));
    },

    async deleteStream(streamId: string): Promise<void> {
      serialize(streamId, []);
      const marker = await enqueue<AppendResult | undefined>((resolve, reject) => ({
        kind: 'delete',
        streamId,
        resolve,
        reject,
      }));
      if (marker === undefined || memory || !open) return;
      // The deleted rows' old page images may still be in the WAL: copy everything into the main
      // file (where secure_delete zeroed them) and cut the WAL to nothing. Another process reading
      // at this moment keeps the WAL alive; the next checkpoint after it finishes completes this.
      try {
        stmt('PRAGMA wal_checkpoint(TRUNCATE)').get();
      } catch {
        // Busy: see above.
      }
    },

    async readStream(streamId: string, opts: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
      return read('read', () => {
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
        return (rowStmt(sql).all(...params) as unknown as Row[]).map(toRecorded);
      });
    },

    async streamRevision(streamId: string): Promise<number | undefined> {
      return read('read', () => currentRevision(streamId));
    },

    async readAll(opts: ReadAllOptions = {}): Promise<RecordedEvent[]> {
      return read('read', () => readAllSync(opts));
    },

    async headPosition(): Promise<bigint | undefined> {
      return read('read', () => {
        const head = headSync();
        return head === undefined ? undefined : BigInt(head);
      });
    },

    async listStreams(opts: { prefix?: string; limit?: number } = {}): Promise<StreamInfo[]> {
      return read('read', () => {
        const prefix = opts.prefix ?? '';
        // Walk the distinct stream ids under the prefix through the (stream_id, stream_revision)
        // index, one seek per stream (ids with a prefix are contiguous in binary order), then
        // take each stream's last row from the same index.
        const rows = stmt(
          `WITH RECURSIVE ids(stream_id) AS (
             SELECT (SELECT stream_id FROM messages WHERE stream_id >= ?1 ORDER BY stream_id LIMIT 1)
             UNION ALL
             SELECT (SELECT m.stream_id FROM messages m WHERE m.stream_id > ids.stream_id ORDER BY m.stream_id LIMIT 1)
             FROM ids WHERE ids.stream_id IS NOT NULL AND substr(ids.stream_id, 1, ?2) = ?1
           )
           SELECT last.stream_id, last.stream_revision, last.position, last.recorded_at
           FROM ids JOIN messages last ON last.position = (
             SELECT position FROM messages WHERE stream_id = ids.stream_id ORDER BY stream_revision DESC LIMIT 1
           )
           WHERE ids.stream_id IS NOT NULL AND substr(ids.stream_id, 1, ?2) = ?1
           ORDER BY last.position DESC LIMIT ?3`,
        ).all(prefix, codePoints(prefix), opts.limit ?? 1000) as {
          stream_id: string;
          stream_revision: number;
          position: number;
          recorded_at: number;
        }[];
        return rows.map((r) => ({
          streamId: r.stream_id,
          lastRevision: r.stream_revision,
          lastPosition: BigInt(r.position),
          lastRecordedAt: new Date(r.recorded_at),
        }));
      });
    },

    subscribe(subOptions: SubscribeOptions): Subscription {
      let stopped = false;
      // Set by every in-process append; cleared before each read, so an append that lands while
      // a handler runs is looked for right away rather than at the next poll.
      let appendedSinceRead = true;
      let wake: (() => void) | undefined;
      // What this process committed since the subscription's last read (see skipUnread).
      let unread: Committed[] = [];
      let unreadOverflow = false;
      const onAppended = (notes?: readonly Committed[]) => {
        if (notes) {
          if (unread.length + notes.length > MAX_UNREAD_NOTES) unreadOverflow = true;
          else for (const n of notes) unread.push(n);
        }
        appendedSinceRead = true;
        wake?.();
      };
      /**
       * When every position after `after` up to the newest one this process committed is known
       * here (contiguous: no other process wrote in between) and none passes the filter, the
       * subscription moves past them without a query. Most appends concern one or two of the
       * live subscriptions, so the others are spared a read per commit. Returns the new position,
       * or undefined when a read is needed.
       */
      const skipUnread = (after: bigint): bigint | undefined => {
        if (unreadOverflow || unread.length === 0) return undefined;
        let expected = Number(after) + 1;
        let i = 0;
        while (i < unread.length && unread[i]!.position < expected) i++;
        if (i === unread.length) return undefined;
        for (; i < unread.length; i++) {
          const note = unread[i]!;
          if (note.position !== expected || matchesFilter(note, subOptions.filter)) return undefined;
          expected++;
        }
        unread = [];
        return BigInt(expected - 1);
      };
      // Another process committed: what it wrote is not in `unread`, so read rather than skip.
      const onExternal = () => {
        unreadOverflow = true;
        appendedSinceRead = true;
        wake?.();
      };
      notifier.on('appended', onAppended);
      notifier.on('external', onExternal);
      let timer: NodeJS.Timeout | undefined;
      const sleep = () =>
        new Promise<void>((resolve) => {
          if (appendedSinceRead || stopped) {
            resolve();
            return;
          }
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
        // Never deliver before subscribe() has returned.
        await Promise.resolve();
        guardOpen('subscribe');
        let after: bigint;
        if (subOptions.from === 'start') after = 0n;
        else if (subOptions.from === 'end') after = BigInt(read('subscribe', headSync) ?? 0);
        else after = subOptions.from;
        let caughtUp = false;
        while (!stopped && open) {
          const skipped = caughtUp ? skipUnread(after) : undefined;
          if (skipped !== undefined) {
            after = skipped;
            appendedSinceRead = false;
            await sleep();
            continue;
          }
          appendedSinceRead = false;
          // The read below covers everything committed so far.
          unread = [];
          unreadOverflow = false;
          // Scan up to the head seen now: everything at or below it is committed, so once a short
          // page is delivered the scan may resume after the head, even when a filter skipped
          // most of the rows (a selective subscription does not rescan them on every append).
          counters.subscriptionReads += 1;
          const { head, page } = read('read', () => {
            const head = headSync();
            const page =
              head === undefined || BigInt(head) <= after
                ? []
                : readAllSync({ after, upTo: head, maxCount: pageSize, filter: subOptions.filter });
            return { head, page };
          });
          for (const event of page) {
            if (stopped) return;
            await subOptions.onEvent(event);
            after = event.position;
          }
          if (page.length < pageSize) {
            if (stopped) return;
            if (head !== undefined && BigInt(head) > after) after = BigInt(head);
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
        notifier.off('external', onExternal);
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
      watchOtherWriters();
      return subscription;
    },

    async readCheckpoint(processorId: string): Promise<bigint | undefined> {
      return read('read', () => {
        const row = stmt('SELECT last_position FROM processors WHERE processor_id = ?').get(processorId) as
          | { last_position: number }
          | undefined;
        return row === undefined ? undefined : BigInt(row.last_position);
      });
    },

    storeCheckpoint(processorId: string, position: bigint): Promise<void> {
      if (typeof processorId !== 'string' || processorId.length === 0)
        return Promise.reject(new ValidationError('a checkpoint needs a processor id'));
      if (typeof position !== 'bigint' || position < 0n)
        return Promise.reject(
          new ValidationError(`checkpoint position must be a bigint ≥ 0, got ${position}`),
        );
      return enqueue<undefined>((resolve, reject) => ({
        kind: 'checkpoint',
        processorId,
        position,
        resolve,
        reject,
      }));
    },

    isOpen: () => open,

    close(): Promise<void> {
      closing ??= (async () => {
        // Writes already queued are committed before closing: their callers were promised an answer.
        flush();
        open = false;
        if (idleTimer) clearTimeout(idleTimer);
        if (changeTimer) clearInterval(changeTimer);
        changeTimer = undefined;
        for (const s of [...subscriptions]) await s.stop();
        notifier.emit('appended');
        db.close();
      })();
      return closing;
    },
  };
  return store;
};

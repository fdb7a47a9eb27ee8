import type { DatabaseSync } from 'node:sqlite';
import { ChatOpsError } from '../../core/errors.ts';

/**
 * Schema migrations, versioned in code and applied in order at open. Never edit a shipped
 * migration: add the next version.
 *
 * `messages.position` is the global position, the rowid. Rows are only deleted by `deleteStream`
 * (a person's data key, crypto-shredding), which first appends a `StreamDeleted` marker after them,
 * so SQLite's max(rowid)+1 allocation is strictly increasing without AUTOINCREMENT (which would cost a
 * `sqlite_sequence` write per commit). SQLite has one writer at a time, so a reader never sees
 * position N+1 committed before N: subscriptions have no gaps to wait out.
 * `message_id` is unique across the store: a repeated append of the same id is a no-op.
 */
export const migrations: readonly { version: number; description: string; sql: string }[] = [
  {
    version: 1,
    description: 'messages, streams, processor checkpoints',
    sql: `
      CREATE TABLE messages (
        position        INTEGER PRIMARY KEY,
        stream_id       TEXT    NOT NULL,
        stream_revision INTEGER NOT NULL,
        message_id      TEXT    NOT NULL UNIQUE,
        message_kind    TEXT    NOT NULL CHECK (message_kind IN ('E', 'C')),
        type            TEXT    NOT NULL,
        data            TEXT    NOT NULL,
        metadata        TEXT    NOT NULL,
        recorded_at     INTEGER NOT NULL,
        UNIQUE (stream_id, stream_revision)
      );
      CREATE TABLE streams (
        stream_id       TEXT    PRIMARY KEY,
        stream_category TEXT    NOT NULL,
        stream_revision INTEGER NOT NULL,
        last_position   INTEGER NOT NULL,
        updated_at      INTEGER NOT NULL
      ) WITHOUT ROWID;
      CREATE TABLE processors (
        processor_id  TEXT    PRIMARY KEY,
        last_position INTEGER NOT NULL,
        updated_at    INTEGER NOT NULL
      ) WITHOUT ROWID;
    `,
  },
  {
    // A stream's head is the last entry of messages' (stream_id, stream_revision) index, which
    // every append writes anyway; keeping a copy in `streams` cost each commit one more page
    // (about a tenth of a durable single-event append). listStreams walks that index instead.
    version: 2,
    description: 'stream heads come from the messages index; drop the streams table',
    sql: 'DROP TABLE streams;',
  },
];

/** The schema version this build creates and understands. */
export const latestSchemaVersion: number = migrations[migrations.length - 1]?.version ?? 0;

const versionOf = (db: DatabaseSync): number => {
  const row = db.prepare('SELECT MAX(version) AS version FROM schema_migrations').get() as
    | { version: number | null }
    | undefined;
  return row?.version ?? 0;
};

/**
 * Applies every migration newer than the database's version, each in its own transaction, and
 * returns the version the database is at. A database written by a newer build is refused with a
 * coded error (SB_CONFIG) rather than used half-understood. Safe when several processes open a
 * fresh file at once: each migration re-reads the version under the write lock.
 */
export const migrate = (db: DatabaseSync, now: () => number): number => {
  db.exec(
    'CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)',
  );
  const current = versionOf(db);
  if (current > latestSchemaVersion) {
    throw new ChatOpsError(
      'SB_CONFIG',
      `database schema version ${current} is newer than this build knows (${latestSchemaVersion}); upgrade Switchboard`,
      { details: { databaseVersion: current, supportedVersion: latestSchemaVersion } },
    );
  }
  for (const migration of migrations) {
    if (migration.version <= current) continue;
    db.exec('BEGIN IMMEDIATE');
    try {
      if (versionOf(db) < migration.version) {
        db.exec(migration.sql);
        db.prepare('INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)').run(
          migration.version,
          now(),
        );
      }
      db.exec('COMMIT');
    } catch (e) {
      if (db.isTransaction) db.exec('ROLLBACK');
      throw e;
    }
  }
  return versionOf(db);
};

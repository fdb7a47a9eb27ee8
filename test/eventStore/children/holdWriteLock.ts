/**
 * Child process for sqlite.int.test.ts: takes SQLite's write lock on an event store file the way
 * another process would (a CLI, a second replica), writes one event while holding it, and lets go
 * after a while.
 *
 * Usage: node holdWriteLock.ts <db path> <hold ms>
 * Prints `locked <position>` once it holds the lock (with the position of the event it wrote) and
 * `released` after COMMIT.
 */
import { randomUUID } from 'node:crypto';
import { DatabaseSync } from 'node:sqlite';

const [path, holdArg] = process.argv.slice(2);
if (!path || !holdArg) throw new Error('usage: holdWriteLock.ts <db path> <hold ms>');
const db = new DatabaseSync(path, { timeout: 5000 });
db.exec('BEGIN IMMEDIATE');
const now = Date.now();
const row = db
  .prepare(
    `INSERT INTO messages (stream_id, stream_revision, message_id, message_kind, type, data, metadata, recorded_at)
     VALUES ('locker-1', 0, ?, 'E', 'LockHeld', '{}', '{}', ?)`,
  )
  .run(randomUUID(), now);
process.stdout.write(`locked ${row.lastInsertRowid}\n`);
setTimeout(() => {
  db.exec('COMMIT');
  db.close();
  process.stdout.write('released\n');
}, Number(holdArg));

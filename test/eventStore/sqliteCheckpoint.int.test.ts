/**
 * WAL checkpoints of the SQLite store: run by the store after a commit's callers were answered
 * (not inside the COMMIT that crosses SQLite's auto-checkpoint threshold), so the WAL stays bounded
 * under sustained appends and everything written survives a reopen, with or without a clean close.
 */
import { statSync } from 'node:fs';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { RecordedEvent } from '../../src/eventStore/eventStore.ts';
import {
  createSqliteEventStore,
  type SqliteEventStore,
  type SqliteEventStoreOptions,
} from '../../src/eventStore/sqlite/sqliteEventStore.ts';
import { diskTempDir } from '../support/tempRoot.ts';
import { ids, newEvent, tempDir, waitUntil } from './helpers.ts';

// On the disk, not the run's RAM disk: how often checkpoints get their turn depends on how long a
// commit's fsync takes, and that is what these tests are about.
const dir = tempDir('switchboard-checkpoint', diskTempDir());
afterAll(() => dir.cleanup());
let fileCounter = 0;
const freshFile = () => dir.file(`store-${++fileCounter}.db`);

const opened: SqliteEventStore[] = [];
const open = (options: Partial<SqliteEventStoreOptions> & { path?: string } = {}): SqliteEventStore => {
  const store = createSqliteEventStore({ path: freshFile(), ...options });
  opened.push(store);
  return store;
};
afterEach(async () => {
  for (const s of opened.splice(0)) await s.close();
});

const walBytes = (path: string): number => {
  try {
    return statSync(`${path}-wal`).size;
  } catch {
    return 0;
  }
};

/** An inbox-sized event (~900 bytes of JSON), like the ack path appends. */
const inputEvent = (n: number) => newEvent('SlackInputReceived', { n, payload: { text: 'x'.repeat(850) } });

/** Reads every event through a separate, read-only connection: what a restarted process would see. */
const readRaw = (path: string): string[] => {
  const db = new DatabaseSync(path, { readOnly: true });
  try {
    return (
      db.prepare('SELECT message_id FROM messages ORDER BY position').all() as { message_id: string }[]
    ).map((r) => r.message_id);
  } finally {
    db.close();
  }
};

describe('SQLite event store: WAL checkpoints', () => {
  it('under sustained appends the WAL stays bounded, and every event survives a reopen', async () => {
    const path = freshFile();
    const store = open({ path, checkpointEveryCommits: 50 });
    const written: RecordedEvent['id'][] = [];
    let largestWal = 0;
    // 600 commits of ~4 WAL pages each leave ~9 MB of WAL without checkpoints (~1.2 MB with).
    for (let i = 0; i < 600; i++) {
      const e = inputEvent(i);
      await store.appendToStream('inbox-slack', [e]);
      written.push(e.id);
      if (i % 25 === 24) largestWal = Math.max(largestWal, walBytes(path));
    }

    expect(store.stats().commits).toBeGreaterThanOrEqual(600);
    expect(store.stats().checkpoints).toBeGreaterThanOrEqual(5);
    expect(largestWal).toBeGreaterThan(0);
    expect(largestWal).toBeLessThan(3 * 1024 * 1024);

    // As after a crash: another connection reads the file while this one is still open.
    expect(readRaw(path)).toEqual(written);
    await store.close();
    const reopened = open({ path });
    expect(ids(await reopened.readStream('inbox-slack'))).toEqual(written);
  });

  it('the commit that reaches the threshold is answered first; the checkpoint runs on a later turn', async () => {
    const store = open({ checkpointEveryCommits: 3 });
    await store.appendToStream('inbox-slack', [inputEvent(1)]);
    await store.appendToStream('inbox-slack', [inputEvent(2)]);
    const before = store.stats().checkpoints;

    await store.appendToStream('inbox-slack', [inputEvent(3)]);
    expect(store.stats().checkpoints).toBe(before);
    await waitUntil(() => store.stats().checkpoints === before + 1, 'the checkpoint after the third commit');
  });

  it('an idle store checkpoints what was written without waiting for the threshold', async () => {
    const path = freshFile();
    const store = open({ path, checkpointIdleMs: 30 });
    const dbBytesBefore = statSync(path).size;
    for (let i = 0; i < 40; i++) await store.appendToStream('inbox-slack', [inputEvent(i)]);
    expect(store.stats().checkpoints).toBe(0);

    await waitUntil(() => store.stats().checkpoints >= 1, 'an idle checkpoint');
    // The pages moved from the WAL into the database file.
    expect(statSync(path).size).toBeGreaterThan(dbBytesBefore + 20 * 1024);
  });

  it('an in-memory store has no WAL and never checkpoints', async () => {
    const store = open({ path: ':memory:', checkpointEveryCommits: 1, checkpointIdleMs: 1 });
    for (let i = 0; i < 5; i++) await store.appendToStream('inbox-slack', [inputEvent(i)]);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(store.stats().checkpoints).toBe(0);
    expect(await store.readStream('inbox-slack')).toHaveLength(5);
  });
});

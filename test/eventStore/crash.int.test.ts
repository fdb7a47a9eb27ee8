/**
 * Crash safety of the SQLite event store (issue 2, item 8, first half): a child process appends
 * concurrently to several streams and prints every acknowledged append; the test `kill -9`s it
 * mid-load, reopens the file and checks that every acknowledged event is there, nothing is torn,
 * revisions are gapless and positions strictly increasing. Rounds continue on the same file, so
 * each round also starts from the previous crash's hot WAL.
 */
import { createHash } from 'node:crypto';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, describe, expect, it } from 'vitest';
import type { RecordedEvent } from '../../src/eventStore/eventStore.ts';
import { createSqliteEventStore } from '../../src/eventStore/sqlite/sqliteEventStore.ts';
import { runChild, sleep, tempDir } from './helpers.ts';

const APPENDER = new URL('./children/appender.ts', import.meta.url).pathname;

type Ack = { s: string; r: number; id: string };

/** Starts the appender and SIGKILLs it after `killAfterAcks` acknowledged events (or `killAfterMs`). */
const runAndKill = async (
  path: string,
  kill: { afterAcks: number } | { afterMs: number },
): Promise<{ acks: Ack[]; signal: NodeJS.Signals | null }> => {
  const run = runChild(APPENDER, [path, '8', '4']);
  const killed = new Promise<void>((resolve) => {
    if ('afterAcks' in kill) {
      run.onLine(() => {
        if (run.lines.length >= kill.afterAcks && run.child.exitCode === null && !run.child.killed) {
          run.child.kill('SIGKILL');
          resolve();
        }
      });
    } else {
      run.onLine(() => {
        if (run.lines.length === 1) {
          setTimeout(() => {
            run.child.kill('SIGKILL');
            resolve();
          }, kill.afterMs);
        }
      });
    }
  });
  const exit = await Promise.race([run.exited, killed.then(() => run.exited)]);
  if (exit.signal !== 'SIGKILL') {
    throw new Error(`appender ended by itself (code ${exit.code}) before the kill; stderr: ${run.stderr()}`);
  }
  return { acks: run.lines.map((l) => JSON.parse(l) as Ack), signal: exit.signal };
};

const sha256 = (s: string): string => createHash('sha256').update(s).digest('hex');

/** Reopens the file and checks everything the crash could have broken. */
const verify = async (path: string, acks: readonly Ack[]): Promise<number> => {
  const raw = new DatabaseSync(path);
  expect(raw.prepare('PRAGMA integrity_check').get()).toEqual({ integrity_check: 'ok' });
  raw.close();

  const store = createSqliteEventStore({ path });
  try {
    // Every row parses (readAll JSON-parses data and metadata of each event).
    const all = await store.readAll();
    for (let i = 1; i < all.length; i++) {
      if (!(all[i]!.position > all[i - 1]!.position)) {
        throw new Error(
          `positions not strictly increasing at ${i}: ${all[i - 1]!.position}, ${all[i]!.position}`,
        );
      }
    }

    // Per stream: revisions 0..n-1, no gap, and together the streams hold exactly the global log.
    const byStream = new Map<string, RecordedEvent[]>();
    for (const stream of await store.listStreams({ prefix: 'crash-' })) {
      const events = await store.readStream(stream.streamId);
      expect(events.map((e) => e.revision)).toEqual(events.map((_, i) => i));
      expect(stream.lastRevision).toBe(events.length - 1);
      byStream.set(stream.streamId, events);
    }
    expect([...byStream.values()].reduce((n, events) => n + events.length, 0)).toBe(all.length);

    // Nothing torn: every payload matches its checksum, every append is whole and contiguous.
    const appends = new Map<string, RecordedEvent[]>();
    for (const e of all) {
      const body = e.data.body as string;
      expect(sha256(body), `payload of ${e.id}`).toBe(e.data.sha256);
      expect(e.data.text).toBe('ünïcødé 🚨 שלום');
      const group = appends.get(e.data.appendId as string) ?? [];
      group.push(e);
      appends.set(e.data.appendId as string, group);
    }
    for (const group of appends.values()) {
      expect(group.map((e) => e.data.k)).toEqual(group.map((_, k) => k));
      expect(group).toHaveLength(group[0]!.data.count as number);
      expect(new Set(group.map((e) => e.streamId)).size).toBe(1);
      expect(group.map((e) => e.revision - group[0]!.revision)).toEqual(group.map((_, k) => k));
    }

    // Every acknowledged event is there, where the acknowledgement said.
    const byId = new Map(all.map((e) => [e.id, e]));
    const missing = acks.filter((a) => {
      const e = byId.get(a.id);
      return e === undefined || e.streamId !== a.s || e.revision !== a.r;
    });
    expect(missing).toEqual([]);
    return all.length;
  } finally {
    await store.close();
  }
};

describe('SQLite event store: crash safety', () => {
  const dir = tempDir('switchboard-crash');
  afterAll(() => dir.cleanup());

  it('kill -9 mid-load, round after round: every acknowledged append survives, nothing torn, revisions gapless', async () => {
    const path = dir.file('crash.db');
    // The first store creates the schema, as the app would on its first start.
    await createSqliteEventStore({ path }).close();
    const acknowledged: Ack[] = [];
    const kills: ({ afterAcks: number } | { afterMs: number })[] = [
      { afterAcks: 1 },
      { afterAcks: 40 },
      { afterAcks: 600 },
      { afterMs: 150 },
      { afterAcks: 2000 },
    ];
    let stored = 0;
    for (const kill of kills) {
      const { acks } = await runAndKill(path, kill);
      if ('afterAcks' in kill) expect(acks.length).toBeGreaterThanOrEqual(kill.afterAcks);
      acknowledged.push(...acks);

      const now = await verify(path, acknowledged);

      // The store holds at least what was acknowledged, and never loses what it had.
      expect(now).toBeGreaterThanOrEqual(acknowledged.length);
      expect(now).toBeGreaterThanOrEqual(stored);
      stored = now;
      await sleep(10);
    }
    expect(acknowledged.length).toBeGreaterThan(2600);
  }, 120_000);
});

/**
 * Live subscriptions of the SQLite store skip, without a query, the events this process committed
 * that their filter does not take, but only when no other writer can have put anything in between
 * (positions contiguous since their last read). Anything else still gets read.
 */
import { DatabaseSync } from 'node:sqlite';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { RecordedEvent } from '../../src/eventStore/eventStore.ts';
import {
  createSqliteEventStore,
  type SqliteEventStore,
  type SqliteEventStoreOptions,
} from '../../src/eventStore/sqlite/sqliteEventStore.ts';
import { collect, newEvent, sleep, tempDir } from './helpers.ts';

const dir = tempDir('switchboard-live-skip');
afterAll(() => dir.cleanup());
let fileCounter = 0;
const freshFile = () => dir.file(`store-${++fileCounter}.db`);

const opened: SqliteEventStore[] = [];
const open = (options: Partial<SqliteEventStoreOptions> & { path?: string } = {}): SqliteEventStore => {
  // A long poll interval: whatever is delivered below came from the in-process wake-up.
  const store = createSqliteEventStore({ path: freshFile(), pollIntervalMs: 60_000, ...options });
  opened.push(store);
  return store;
};
afterEach(async () => {
  for (const s of opened.splice(0)) await s.close();
});

/** Lets the store's wake-up (next turn) and the subscriptions' reads run. */
const settle = () => sleep(10);

describe('SQLite event store: live subscriptions and in-process appends', () => {
  it('a subscription whose filter takes none of the appended events moves past them without reading', async () => {
    const store = open();
    const timers = collect(store, 'start', { streamPrefixes: ['timer-'] });
    const inbox = collect(store, 'start', { streamPrefixes: ['inbox-'] });
    await timers.caughtUp;
    await inbox.caughtUp;
    await settle();

    const readsBefore = store.stats().subscriptionReads;
    for (let i = 0; i < 20; i++) {
      await store.appendToStream('inbox-slack', [newEvent('SlackInputReceived', { i })]);
      await settle();
    }
    await inbox.waitFor(20);
    const reads = store.stats().subscriptionReads - readsBefore;
    // One read per append for the inbox subscription; the timer subscription skipped them all.
    expect(reads).toBeGreaterThanOrEqual(20);
    expect(reads).toBeLessThan(25);
    expect(timers.events).toHaveLength(0);

    // It is still live: the next event it takes is delivered, and only that one.
    const timer = newEvent('TimerScheduled', { dueAt: 'later' });
    await store.appendToStream('timer-1', [timer]);
    const got = await timers.waitFor(1);
    expect(got.map((e) => e.id)).toEqual([timer.id]);
    expect(got[0]!.position).toBe(21n);
  });

  it('reads when another connection wrote between this process’s appends, and delivers what it wrote', async () => {
    const path = freshFile();
    const store = open({ path });
    const timers = collect(store, 'start', { streamPrefixes: ['timer-'] });
    await timers.caughtUp;
    await store.appendToStream('inbox-slack', [newEvent('SlackInputReceived')]);
    await settle();

    // Another writer (as another process would) puts a timer event at the next position.
    const other = new DatabaseSync(path, { timeout: 5000 });
    other
      .prepare(
        'INSERT INTO messages (stream_id, stream_revision, message_id, message_kind, type, data, metadata, recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
      )
      .run(
        'timer-2',
        0,
        'b6f1f7d2-6a43-4c1e-9d0a-1f7c2b9e4a10',
        'E',
        'TimerScheduled',
        '{}',
        '{}',
        Date.now(),
      );
    other.close();

    // This process appends again: its note is not contiguous with the subscription's position, so
    // the subscription reads (no poll needed) and finds the other writer's event.
    await store.appendToStream('inbox-slack', [newEvent('SlackInputReceived')]);
    const got: RecordedEvent[] = await timers.waitFor(1);
    expect(got.map((e) => [e.streamId, e.position])).toEqual([['timer-2', 2n]]);
  });

  it('events appended in one batch and several streams are each judged by the filter', async () => {
    const store = open();
    const incidents = collect(store, 'start', {
      streamPrefixes: ['incident-'],
      eventTypes: ['IncidentResolved'],
    });
    await incidents.caughtUp;
    await settle();
    const resolved = newEvent('IncidentResolved');
    await Promise.all([
      store.appendToStream('incident-1', [newEvent('IncidentTriggered'), newEvent('IncidentAcknowledged')]),
      store.appendToStream('inbox-slack', [newEvent('SlackInputReceived')]),
      store.appendToStream('incident-2', [newEvent('IncidentTriggered'), resolved]),
    ]);
    const got = await incidents.waitFor(1);
    await settle();
    expect(incidents.events.map((e) => e.id)).toEqual([resolved.id]);
    expect(got[0]!.streamId).toBe('incident-2');
  });
});

import { afterEach, describe, expect, it, vi } from 'vitest';
import type { EventStore } from '../../src/eventStore/eventStore.ts';
import { createKurrentDbEventStore } from '../../src/eventStore/kurrentdb/kurrentDbEventStore.ts';
import { openEventStore } from '../../src/eventStore/openEventStore.ts';
import { runEventStoreContract } from './contract.ts';
import { collect, ids, newEvent, newEvents, unique, waitUntil } from './helpers.ts';

/**
 * The shared contract suite against a real KurrentDB, plus what only this adapter has to prove.
 * Runs only when KURRENTDB_URL is set (CI here has no server and never sets it):
 *
 *   docker run --rm -d --name switchboard-kurrentdb -p 2113:2113 \
 *     -e KURRENTDB_INSECURE=true -e KURRENTDB_MEM_DB=true -e KURRENTDB_MAX_APPEND_SIZE=8388608 \
 *     docker.kurrent.io/kurrent-latest/kurrentdb:latest
 *   KURRENTDB_URL='kurrentdb://localhost:2113?tls=false' npm run test:int -- test/eventStore/kurrentdb
 *
 * Every test writes to categories of its own (`unique(...)`), so a shared server is fine.
 */

const url = process.env['KURRENTDB_URL'];
const SKIP_LINE = 'SKIPPED: KurrentDB contract (KURRENTDB_URL unset)';

if (!url) {
  console.log(SKIP_LINE);
  describe('KurrentDB contract', () => {
    it.skip(SKIP_LINE, () => undefined);
  });
} else {
  // A remote server is slower than an in-process SQLite file.
  vi.setConfig({ testTimeout: 120_000, hookTimeout: 60_000 });

  // Through the factory the app uses, so the EVENT_STORE_URL routing is covered too.
  runEventStoreContract('kurrentdb', () => openEventStore(url), { reopensSameData: true });

  describe('KurrentDB adapter specifics', () => {
    const stores: EventStore[] = [];
    const open = async (idempotencyWindow?: number) => {
      const store = await createKurrentDbEventStore({
        connectionString: url,
        ...(idempotencyWindow !== undefined ? { idempotencyWindow } : {}),
      });
      stores.push(store);
      return store;
    };
    afterEach(async () => {
      for (const s of stores.splice(0)) await s.close();
    });

    it('a retry with the original expected revision is deduplicated by the server even past the window', async () => {
      const store = await open(1);
      const stream = `${unique('order')}-1`;
      const first = newEvents(3, 'First');
      const original = await store.appendToStream(stream, first, { expectedRevision: 'no_stream' });
      await store.appendToStream(stream, newEvents(5, 'Later'), { expectedRevision: 2 });

      // The window (3 newest events) no longer holds `first`; KurrentDB's own check (E2) does.
      const retried = await store.appendToStream(stream, first, { expectedRevision: 'no_stream' });

      expect(retried).toEqual({ nextExpectedRevision: 7, position: original.position, deduplicated: true });
      expect(await store.readStream(stream)).toHaveLength(8);
    });

    it('append positions are the $all positions of the events, and $all resumes exactly after them', async () => {
      const store = await open();
      const cat = unique('order');
      const r1 = await store.appendToStream(`${cat}-1`, newEvents(3));
      const r2 = await store.appendToStream(`${cat}-2`, newEvents(2));
      const all = await store.readAll({ filter: { streamPrefixes: [`${cat}-`] } });
      expect(all.map((e) => e.position)).toContain(r1.position);
      expect(all[2]!.position).toBe(r1.position);
      expect(all[4]!.position).toBe(r2.position);
      expect(
        ids(await store.readAll({ after: r1.position, filter: { streamPrefixes: [`${cat}-`] } })),
      ).toEqual(ids(all.slice(3)));
    });

    it('checkpoints never show up as events: not in $all, subscriptions, the head or the stream list', async () => {
      const store = await open();
      const cat = unique('order');
      const processor = unique('processor');
      const head = await store.headPosition();
      const events = newEvents(2);
      const r = await store.appendToStream(`${cat}-1`, events);
      await store.storeCheckpoint(processor, r.position - 1n);
      await store.storeCheckpoint(processor, r.position);

      expect(await store.headPosition()).toBe(r.position);
      expect(await store.readCheckpoint(processor)).toBe(r.position);
      const after = await store.readAll({ ...(head === undefined ? {} : { after: head }) });
      expect(after.filter((e) => e.streamId.includes(processor))).toEqual([]);
      expect((await store.listStreams({ limit: 50 })).map((s) => s.streamId)).not.toContain(
        `switchboardCheckpoint-${processor}`,
      );
      const c = collect(store, head ?? 'start');
      await c.caughtUp;
      await store.storeCheckpoint(processor, r.position);
      const late = newEvent('Late');
      await store.appendToStream(`${cat}-1`, [late]);
      const mine = () => c.events.filter((e) => e.streamId.startsWith(`${cat}-`));
      await waitUntil(() => mine().length >= 3, 'three events of this test delivered');
      await c.subscription.stop();
      expect(ids(mine())).toEqual([...ids(events), late.id]);
      expect(c.events.some((e) => e.streamId.includes(processor))).toBe(false);
    });
  });
}

/**
 * The event store contract: one suite every adapter of the port passes (issue 2, item 4).
 *
 * Call it from an adapter's test file; it declares vitest `describe` blocks:
 *
 * @example
 * runEventStoreContract('sqlite :memory:', async () => createSqliteEventStore({ path: ':memory:' }));
 * runEventStoreContract('kurrentdb', () => openEventStore(url), { reopensSameData: true });
 *
 * The suite never assumes an empty store: every test writes to streams of its own fresh category
 * (`unique('order')`), reads all / subscribes after the head it saw first, and filters on its own
 * prefix or event types, so it can run against a shared KurrentDB that holds other runs' events.
 * Every store `open()` returns is closed after each test.
 */
import { Buffer } from 'node:buffer';
import { afterEach, describe, expect, it } from 'vitest';
import { manualClock } from '../../src/core/clock.ts';
import { ConcurrencyError } from '../../src/core/errors.ts';
import type {
  AppendResult,
  EventFilter,
  EventStore,
  NewEvent,
  RecordedEvent,
} from '../../src/eventStore/eventStore.ts';
import { claimStreamId, createClaims } from '../../src/processors/claims.ts';
import { createResumableState } from '../../src/processors/snapshots.ts';
import { createLogSink } from '../support/logSink.ts';
import { collect, deferred, ids, newEvent, newEvents, sleep, unique, waitUntil } from './helpers.ts';

export type EventStoreContractOptions = Readonly<{
  /**
   * True (default) when every event has a position of its own, so a checkpoint stored after any
   * event, even one in the middle of a multi-event append, resumes exactly after that event. Set
   * false for an adapter whose events of one append share a position: the suite then checkpoints
   * only at append boundaries and accepts equal positions inside one append.
   */
  supportsCheckpointsOnSamePosition?: boolean;
  /**
   * True when `open()` returns a store over the same data each time (a file, a server), which adds
   * tests that close the store, open it again and find events and checkpoints. False (default) for
   * stores that start empty on each open (`sqlite::memory:`).
   */
  reopensSameData?: boolean;
  /** Events stored before the catch-up-while-appending tests subscribe (default 3000). */
  bulkEvents?: number;
  /** UTF-8 size of the large payload test's `data` JSON (default 1,000,000 bytes). */
  largePayloadBytes?: number;
}>;

const expectConflict = async (p: Promise<unknown>): Promise<void> => {
  await expect(p).rejects.toBeInstanceOf(ConcurrencyError);
  await expect(p).rejects.toMatchObject({ code: 'SB_CONCURRENCY' });
};

/** Positions in order: strictly increasing, or non-decreasing when events of one append may share one. */
const expectIncreasing = (positions: readonly bigint[], strict: boolean): void => {
  for (let i = 1; i < positions.length; i++) {
    const ok = strict ? positions[i]! > positions[i - 1]! : positions[i]! >= positions[i - 1]!;
    if (!ok) {
      throw new Error(
        `positions not ${strict ? 'strictly ' : ''}increasing at index ${i}: ${positions[i - 1]} then ${positions[i]}`,
      );
    }
  }
};

const revisions = (events: readonly RecordedEvent[]): number[] => events.map((e) => e.revision);
const range = (from: number, count: number): number[] => Array.from({ length: count }, (_, i) => from + i);

export const runEventStoreContract = (
  name: string,
  open: () => Promise<EventStore>,
  options: EventStoreContractOptions = {},
): void => {
  const strictPositions = options.supportsCheckpointsOnSamePosition ?? true;
  const bulkEvents = options.bulkEvents ?? 3000;
  const largePayloadBytes = options.largePayloadBytes ?? 1_000_000;

  describe(`EventStore contract: ${name}`, () => {
    let opened: EventStore[] = [];
    const openStore = async (): Promise<EventStore> => {
      const store = await open();
      opened.push(store);
      return store;
    };
    afterEach(async () => {
      const stores = opened;
      opened = [];
      for (const s of stores) await s.close();
    });

    /** What readAll returns for this test's events: after the head seen first, on its filter. */
    const readMine = (store: EventStore, head: bigint | undefined, filter: EventFilter) =>
      store.readAll({ ...(head === undefined ? {} : { after: head }), filter });

    describe('append with an expected revision', () => {
      it('no_stream: given no stream, the append creates it at revisions 0..n-1 and points at its last event', async () => {
        const store = await openStore();
        const stream = `${unique('order')}-1`;
        const events: NewEvent[] = [
          newEvent('OrderPlaced', { sku: 'A-1', qty: 2 }, { metadata: { commandId: 'c1', actor: 'U1' } }),
          newEvent('OrderPaid', { amount: 12.5, paid: true, nothing: null }),
          newEvent('PlaceOrder', { nested: { list: [1, 'two', { three: 3 }] } }, { kind: 'command' }),
        ];
        const before = Date.now();

        const result = await store.appendToStream(stream, events, { expectedRevision: 'no_stream' });

        expect(result.nextExpectedRevision).toBe(2);
        expect(result.deduplicated).toBe(false);
        const stored = await store.readStream(stream);
        expect(revisions(stored)).toEqual([0, 1, 2]);
        expect(result.position).toBe(stored[2]!.position);
        expect(stored.map((e) => [e.id, e.type, e.data, e.kind, e.streamId])).toEqual(
          events.map((e) => [e.id, e.type, e.data, e.kind ?? 'event', stream]),
        );
        expect(stored[0]!.metadata).toEqual({ commandId: 'c1', actor: 'U1' });
        expect(stored[1]!.metadata).toEqual({});
        for (const e of stored) {
          expect(e.recordedAt).toBeInstanceOf(Date);
          // Generous window: a remote server's clock may differ from ours.
          expect(Math.abs(e.recordedAt.getTime() - before)).toBeLessThan(5 * 60_000);
        }
        expect(await store.streamRevision(stream)).toBe(2);
      });

      it('no_stream: given an existing stream, the append is a ConcurrencyError and writes nothing', async () => {
        const store = await openStore();
        const stream = `${unique('order')}-1`;
        await store.appendToStream(stream, [newEvent('OrderPlaced')], { expectedRevision: 'no_stream' });

        await expectConflict(
          store.appendToStream(stream, [newEvent('OrderPlaced')], { expectedRevision: 'no_stream' }),
        );

        expect(await store.readStream(stream)).toHaveLength(1);
      });

      it('stream_exists: refused on a missing stream, accepted on an existing one', async () => {
        const store = await openStore();
        const stream = `${unique('order')}-1`;

        await expectConflict(
          store.appendToStream(stream, [newEvent('OrderPlaced')], { expectedRevision: 'stream_exists' }),
        );
        expect(await store.readStream(stream)).toEqual([]);

        await store.appendToStream(stream, [newEvent('OrderPlaced')], { expectedRevision: 'no_stream' });
        const r = await store.appendToStream(stream, [newEvent('OrderPaid')], {
          expectedRevision: 'stream_exists',
        });
        expect(r.nextExpectedRevision).toBe(1);
        expect((await store.readStream(stream)).map((e) => e.type)).toEqual(['OrderPlaced', 'OrderPaid']);
      });

      it('any: accepted on a missing stream and on an existing one; it is the default', async () => {
        const store = await openStore();
        const stream = `${unique('order')}-1`;

        const first = await store.appendToStream(stream, [newEvent('A')], { expectedRevision: 'any' });
        const second = await store.appendToStream(stream, [newEvent('B')], { expectedRevision: 'any' });
        const third = await store.appendToStream(stream, [newEvent('C')]);

        expect([first, second, third].map((r) => r.nextExpectedRevision)).toEqual([0, 1, 2]);
        expect((await store.readStream(stream)).map((e) => e.type)).toEqual(['A', 'B', 'C']);
      });

      it('exact revision: accepted when it is the last revision, refused when stale, ahead, or the stream is missing', async () => {
        const store = await openStore();
        const stream = `${unique('order')}-1`;
        const missing = `${unique('order')}-2`;
        await store.appendToStream(stream, newEvents(2), { expectedRevision: 'no_stream' });

        await expectConflict(store.appendToStream(stream, [newEvent('Stale')], { expectedRevision: 0 }));
        await expectConflict(store.appendToStream(stream, [newEvent('Ahead')], { expectedRevision: 5 }));
        await expectConflict(store.appendToStream(missing, [newEvent('Nope')], { expectedRevision: 0 }));
        const ok = await store.appendToStream(stream, [newEvent('Right')], { expectedRevision: 1 });

        expect(ok.nextExpectedRevision).toBe(2);
        expect((await store.readStream(stream)).map((e) => e.type)).toEqual([
          'Numbered',
          'Numbered',
          'Right',
        ]);
        expect(await store.readStream(missing)).toEqual([]);
      });

      it('a refused multi-event append writes none of its events', async () => {
        const store = await openStore();
        const stream = `${unique('order')}-1`;
        await store.appendToStream(stream, [newEvent('First')]);

        await expectConflict(store.appendToStream(stream, newEvents(5, 'Refused'), { expectedRevision: 3 }));

        expect((await store.readStream(stream)).map((e) => e.type)).toEqual(['First']);
        expect(await store.streamRevision(stream)).toBe(0);
      });

      it('the conflict names the stream, the expected and the actual revision', async () => {
        const store = await openStore();
        const stream = `${unique('order')}-1`;
        await store.appendToStream(stream, newEvents(3));

        const refused = store.appendToStream(stream, [newEvent('X')], { expectedRevision: 1 });

        await expect(refused).rejects.toMatchObject({
          code: 'SB_CONCURRENCY',
          details: { streamId: stream, expected: '1', actual: '2' },
        });
      });
    });

    describe('idempotency by event id', () => {
      it('re-appending the same ids is a no-op that reports the original position', async () => {
        const store = await openStore();
        const stream = `${unique('order')}-1`;
        const events = newEvents(3);
        const original = await store.appendToStream(stream, events, { expectedRevision: 'no_stream' });

        const again = await store.appendToStream(stream, events, { expectedRevision: 'no_stream' });

        expect(again).toEqual({ nextExpectedRevision: 2, position: original.position, deduplicated: true });
        expect(ids(await store.readStream(stream))).toEqual(ids(events));
      });

      it('after the stream moved on, a retried append is still a no-op with the original position', async () => {
        const store = await openStore();
        const stream = `${unique('order')}-1`;
        const first = newEvents(2, 'First');
        const original = await store.appendToStream(stream, first, { expectedRevision: 'no_stream' });
        await store.appendToStream(stream, newEvents(3, 'Later'), { expectedRevision: 1 });

        const retriedWithStaleRevision = await store.appendToStream(stream, first, {
          expectedRevision: 'no_stream',
        });
        const retriedWithAny = await store.appendToStream(stream, first, { expectedRevision: 'any' });

        for (const r of [retriedWithStaleRevision, retriedWithAny]) {
          expect(r.deduplicated).toBe(true);
          expect(r.position).toBe(original.position);
          expect(r.nextExpectedRevision).toBe(4);
        }
        expect((await store.readStream(stream)).map((e) => e.type)).toEqual([
          'First',
          'First',
          'Later',
          'Later',
          'Later',
        ]);
      });

      it('a retried single event from the middle of an append reports its own position', async () => {
        const store = await openStore();
        const stream = `${unique('order')}-1`;
        const events = newEvents(3);
        await store.appendToStream(stream, events);
        const stored = await store.readStream(stream);

        const again = await store.appendToStream(stream, [events[1]!]);

        expect(again.deduplicated).toBe(true);
        expect(again.position).toBe(stored[1]!.position);
        expect(await store.readStream(stream)).toHaveLength(3);
      });

      it('an append mixing stored and new ids is refused and writes nothing', async () => {
        const store = await openStore();
        const stream = `${unique('order')}-1`;
        const stored = newEvents(2);
        await store.appendToStream(stream, stored);

        const mixed = store.appendToStream(stream, [stored[1]!, newEvent('New')], {
          expectedRevision: 'any',
        });

        await expect(mixed).rejects.toSatisfy(
          (e: unknown) => ['SB_CONCURRENCY', 'SB_VALIDATION'].includes((e as { code?: string }).code ?? ''),
          'a coded conflict or validation error',
        );
        expect(ids(await store.readStream(stream))).toEqual(ids(stored));
      });
    });

    describe('reading a stream', () => {
      const givenTenEvents = async () => {
        const store = await openStore();
        const stream = `${unique('order')}-1`;
        // A neighbour whose id extends ours must never leak into our reads.
        await store.appendToStream(`${stream}0`, newEvents(2, 'Neighbour'));
        await store.appendToStream(stream, newEvents(4));
        await store.appendToStream(`${stream}0`, newEvents(2, 'Neighbour'));
        await store.appendToStream(stream, newEvents(6, 'Numbered', 4));
        return { store, stream };
      };
      const ns = (events: readonly RecordedEvent[]) => events.map((e) => e.data.n);

      it('forwards by default: every event of the stream, revisions 0..n-1', async () => {
        const { store, stream } = await givenTenEvents();
        const events = await store.readStream(stream);
        expect(revisions(events)).toEqual(range(0, 10));
        expect(ns(events)).toEqual(range(0, 10));
        expect(new Set(events.map((e) => e.streamId))).toEqual(new Set([stream]));
      });

      it('backwards: newest first', async () => {
        const { store, stream } = await givenTenEvents();
        expect(revisions(await store.readStream(stream, { direction: 'backwards' }))).toEqual(
          range(0, 10).reverse(),
        );
      });

      it('from a revision (inclusive), with maxCount, both directions', async () => {
        const { store, stream } = await givenTenEvents();
        expect(revisions(await store.readStream(stream, { fromRevision: 7 }))).toEqual([7, 8, 9]);
        expect(revisions(await store.readStream(stream, { fromRevision: 2, maxCount: 3 }))).toEqual([
          2, 3, 4,
        ]);
        expect(revisions(await store.readStream(stream, { maxCount: 2 }))).toEqual([0, 1]);
        expect(
          revisions(await store.readStream(stream, { direction: 'backwards', fromRevision: 5, maxCount: 2 })),
        ).toEqual([5, 4]);
        expect(revisions(await store.readStream(stream, { direction: 'backwards', maxCount: 3 }))).toEqual([
          9, 8, 7,
        ]);
        expect(await store.readStream(stream, { fromRevision: 10 })).toEqual([]);
      });

      it('a missing stream reads as [] and has no revision', async () => {
        const store = await openStore();
        const stream = `${unique('nothing')}-1`;
        expect(await store.readStream(stream)).toEqual([]);
        expect(await store.readStream(stream, { direction: 'backwards' })).toEqual([]);
        expect(await store.streamRevision(stream)).toBeUndefined();
      });
    });

    describe('reading all', () => {
      it('global order is append order across streams; positions strictly increase; head is the last', async () => {
        const store = await openStore();
        const cat = unique('order');
        const head = await store.headPosition();
        const appended: NewEvent[] = [];
        const results: AppendResult[] = [];
        for (let i = 0; i < 12; i++) {
          const e = newEvent('Step', { i });
          appended.push(e);
          results.push(await store.appendToStream(`${cat}-${i % 3}`, [e]));
        }

        const all = await readMine(store, head, { streamPrefixes: [`${cat}-`] });

        expect(ids(all)).toEqual(ids(appended));
        expectIncreasing(
          all.map((e) => e.position),
          true,
        );
        expect(all.map((e) => e.position)).toEqual(results.map((r) => r.position));
        expect(all.map((e) => [e.streamId, e.revision])).toEqual(
          range(0, 12).map((i) => [`${cat}-${i % 3}`, Math.floor(i / 3)]),
        );
        const newHead = await store.headPosition();
        expect(newHead).toBeDefined();
        expect(newHead! >= all[11]!.position).toBe(true);
      });

      it('a multi-event append is contiguous and in order in the global log', async () => {
        const store = await openStore();
        const cat = unique('order');
        const head = await store.headPosition();
        const a = newEvents(3, 'A');
        const b = newEvents(3, 'B');
        await Promise.all([store.appendToStream(`${cat}-a`, a), store.appendToStream(`${cat}-b`, b)]);

        const all = await readMine(store, head, { streamPrefixes: [`${cat}-`] });

        const order = ids(all);
        const contiguous = (group: NewEvent[]) => {
          const at = order.indexOf(group[0]!.id);
          expect(order.slice(at, at + group.length)).toEqual(ids(group));
        };
        contiguous(a);
        contiguous(b);
        expectIncreasing(
          all.map((e) => e.position),
          strictPositions,
        );
      });

      it('after is exclusive and maxCount limits the page', async () => {
        const store = await openStore();
        const cat = unique('order');
        const head = await store.headPosition();
        for (let i = 0; i < 6; i++) await store.appendToStream(`${cat}-${i % 2}`, [newEvent('Step', { i })]);
        const all = await readMine(store, head, { streamPrefixes: [`${cat}-`] });

        const afterThird = await store.readAll({
          after: all[2]!.position,
          filter: { streamPrefixes: [`${cat}-`] },
        });
        const page = await store.readAll({
          after: all[0]!.position,
          maxCount: 2,
          filter: { streamPrefixes: [`${cat}-`] },
        });

        expect(ids(afterThird)).toEqual(ids(all.slice(3)));
        expect(ids(page)).toEqual(ids(all.slice(1, 3)));
        expect(
          await store.readAll({ after: all[5]!.position, filter: { streamPrefixes: [`${cat}-`] } }),
        ).toEqual([]);
      });

      it('filters: stream prefixes are ORed, event types are ORed, the two are ANDed', async () => {
        const store = await openStore();
        const orders = unique('order');
        const users = unique('user');
        const carts = unique('cart');
        const placed = unique('Placed');
        const paid = unique('Paid');
        const head = await store.headPosition();
        await store.appendToStream(`${orders}-1`, [newEvent(placed), newEvent(paid)]);
        await store.appendToStream(`${users}-1`, [newEvent(placed)]);
        await store.appendToStream(`${carts}-1`, [newEvent(paid), newEvent('Other')]);
        await store.appendToStream(`${orders}-2`, [newEvent('Other')]);
        const all = await readMine(store, head, { streamPrefixes: [`${orders}-`, `${users}-`, `${carts}-`] });
        expect(all).toHaveLength(6);
        const where = (pred: (e: RecordedEvent) => boolean) => ids(all.filter(pred));

        const byPrefixes = await readMine(store, head, { streamPrefixes: [`${orders}-`, `${users}-`] });
        const byTypes = await readMine(store, head, { eventTypes: [placed, paid] });
        const byBoth = await readMine(store, head, {
          streamPrefixes: [`${orders}-`, `${carts}-`],
          eventTypes: [paid],
        });

        expect(ids(byPrefixes)).toEqual(where((e) => !e.streamId.startsWith(carts)));
        expect(ids(byTypes)).toEqual(where((e) => e.type === placed || e.type === paid));
        expect(ids(byBoth)).toEqual(where((e) => e.type === paid));
        expect(byBoth.map((e) => e.streamId)).toEqual([`${orders}-1`, `${carts}-1`]);
      });

      it('a sparse filter (a hint: few events match) reads exactly what the same filter reads', async () => {
        const store = await openStore();
        const keys = unique('key');
        const others = `${keys}z`; // shares every letter of the prefix but its dash
        const noise = unique('noise');
        const head = await store.headPosition();
        await store.appendToStream(`${keys}-b`, [newEvent('Made')]);
        for (let i = 0; i < 5; i++) await store.appendToStream(`${noise}-${i}`, newEvents(2));
        await store.appendToStream(`${others}-a`, [newEvent('Made')]);
        await store.appendToStream(keys, [newEvent('Made')]);
        await store.appendToStream(`${keys}-a`, [newEvent('Made'), newEvent('Rewrapped'), newEvent('Other')]);
        await store.appendToStream(`${keys}-b`, [newEvent('Rewrapped')]);
        const filters: EventFilter[] = [
          { streamPrefixes: [`${keys}-`] },
          { streamPrefixes: [`${keys}-`, `${others}-`], eventTypes: ['Made', 'Rewrapped'] },
          { streamPrefixes: [`${keys}-`, `${keys}-a`] },
        ];
        for (const filter of filters) {
          const all = await readMine(store, head, filter);
          expect(all.length).toBeGreaterThan(2);
          expect(await readMine(store, head, { ...filter, sparse: true })).toEqual(all);
          const after = all[0]!.position;
          expect(await store.readAll({ after, maxCount: 2, filter: { ...filter, sparse: true } })).toEqual(
            all.slice(1, 3),
          );
        }
      });
    });

    describe('listing streams', () => {
      it('lists the streams under a prefix with their last revision and position', async () => {
        const store = await openStore();
        const cat = unique('order');
        await store.appendToStream(`${cat}-a`, newEvents(2));
        const b = await store.appendToStream(`${cat}-b`, newEvents(1));
        const a = await store.appendToStream(`${cat}-a`, newEvents(1));
        await store.appendToStream(`${unique('other')}-a`, newEvents(1));

        const listed = await store.listStreams({ prefix: `${cat}-` });
        const limited = await store.listStreams({ prefix: `${cat}-`, limit: 1 });

        expect(
          [...listed]
            .sort((x, y) => x.streamId.localeCompare(y.streamId))
            .map((s) => [s.streamId, s.lastRevision, s.lastPosition]),
        ).toEqual([
          [`${cat}-a`, 2, a.position],
          [`${cat}-b`, 0, b.position],
        ]);
        for (const s of listed) expect(s.lastRecordedAt).toBeInstanceOf(Date);
        expect(limited).toHaveLength(1);
      });
    });

    describe('subscriptions', () => {
      it('from start: existing events in order, then live ones; onCaughtUp once, in between', async () => {
        const store = await openStore();
        const cat = unique('order');
        const filter = { streamPrefixes: [`${cat}-`] };
        const existing = newEvents(5, 'Existing');
        await store.appendToStream(`${cat}-1`, existing.slice(0, 3));
        await store.appendToStream(`${cat}-2`, existing.slice(3));

        const c = collect(store, 'start', filter);
        await c.caughtUp;
        const live = newEvents(3, 'Live');
        await store.appendToStream(`${cat}-1`, live.slice(0, 2));
        await store.appendToStream(`${cat}-3`, live.slice(2));
        await c.waitFor(8);

        expect(ids(c.events)).toEqual([
          ...ids(existing.slice(0, 3)),
          ...ids(existing.slice(3)),
          ...ids(live),
        ]);
        expect(c.caughtUpAt()).toBe(5);
        expect(c.caughtUpCalls()).toBe(1);
        await c.subscription.stop();
        await expect(c.subscription.done).resolves.toBeUndefined();
      });

      it('from a position: exactly the events after it', async () => {
        const store = await openStore();
        const cat = unique('order');
        const filter = { streamPrefixes: [`${cat}-`] };
        const head = await store.headPosition();
        for (let i = 0; i < 5; i++) await store.appendToStream(`${cat}-${i}`, [newEvent('Step', { i })]);
        const all = await readMine(store, head, filter);

        const c = collect(store, all[1]!.position, filter);
        await c.waitFor(3);
        await c.caughtUp;
        const late = newEvent('Late');
        await store.appendToStream(`${cat}-9`, [late]);
        await c.waitFor(4);

        expect(ids(c.events)).toEqual([...ids(all.slice(2)), late.id]);
        await c.subscription.stop();
      });

      it('from end: only events appended after it went live', async () => {
        const store = await openStore();
        const cat = unique('order');
        await store.appendToStream(`${cat}-1`, newEvents(3, 'Before'));

        const c = collect(store, 'end', { streamPrefixes: [`${cat}-`] });
        await c.caughtUp;
        const after = newEvents(2, 'After');
        await store.appendToStream(`${cat}-1`, after);
        await c.waitFor(2);
        await sleep(50);

        expect(ids(c.events)).toEqual(ids(after));
        await c.subscription.stop();
      });

      const catchUpWhileAppending = async (filtered: boolean): Promise<void> => {
        const store = await openStore();
        const cat = unique('bulk');
        const prefix = { streamPrefixes: [`${cat}-`] };
        const head = await store.headPosition();
        // Given thousands of events already stored (in appends of 50 across 7 streams)…
        const perAppend = 50;
        const appendCount = Math.ceil(bulkEvents / perAppend);
        for (let a = 0; a < appendCount; a += 10) {
          await Promise.all(
            range(a, Math.min(10, appendCount - a)).map((k) =>
              store.appendToStream(`${cat}-${k % 7}`, newEvents(perAppend, 'Bulk', k * perAppend)),
            ),
          );
        }
        const stored = appendCount * perAppend;
        const mine = new Set<string>();

        // …when a subscription catches up while another caller keeps appending: catch-up pauses a
        // third of the way in until 20 concurrent appends have landed, and the appender goes on
        // until 50 appends after the switch to live.
        const twentyAppended = deferred();
        let appendedBeforeLive = 0;
        const c = collect(store, head ?? 'start', filtered ? prefix : undefined, async (_e, i) => {
          if (i === Math.floor(stored / 3)) await twentyAppended.promise;
          if (i % 100 === 0) await new Promise((resolve) => setImmediate(resolve));
        });
        let afterLive = 0;
        for (let i = 0; afterLive < 50; i++) {
          const e = newEvent('Concurrent', { i });
          await store.appendToStream(`${cat}-live${i % 3}`, [e]);
          mine.add(e.id);
          if (i + 1 === 20) twentyAppended.resolve();
          if (c.caughtUpCalls() === 0) appendedBeforeLive += 1;
          else afterLive += 1;
          if (i % 7 === 0) await sleep(1);
        }
        const expected = stored + mine.size;
        await waitUntil(
          () => c.events.filter((e) => e.streamId.startsWith(`${cat}-`)).length >= expected,
          `${expected} events delivered`,
        );
        await sleep(50); // anything extra (a duplicate) would arrive now
        await c.subscription.stop();

        // Then the delivered sequence is exactly what readAll returns: no gap, no duplicate.
        const delivered = filtered ? c.events : c.events.filter((e) => e.streamId.startsWith(`${cat}-`));
        const all = await readMine(store, head, prefix);
        expect(all).toHaveLength(expected);
        expect(new Set(ids(delivered)).size).toBe(delivered.length);
        expect(ids(delivered)).toEqual(ids(all));
        expect(delivered.map((e) => e.position)).toEqual(all.map((e) => e.position));
        if (!filtered) {
          // Unfiltered, the subscription sees the global log itself, gap-free from the head.
          const global = await store.readAll({
            ...(head === undefined ? {} : { after: head }),
            maxCount: c.events.length,
          });
          expect(ids(c.events)).toEqual(ids(global));
        }
        // And the test did exercise both sides of the switch-over.
        expect(appendedBeforeLive).toBeGreaterThanOrEqual(20);
        const live = c.caughtUpAt()!;
        const concurrentInCatchUp = c.events.slice(0, live).filter((e) => mine.has(e.id)).length;
        const concurrentLive = c.events.slice(live).filter((e) => mine.has(e.id)).length;
        expect(concurrentInCatchUp).toBeGreaterThanOrEqual(1);
        expect(concurrentLive).toBeGreaterThanOrEqual(50);
        expect(c.caughtUpCalls()).toBe(1);
      };

      it(`catch-up through ${bulkEvents} events while others append, then live: no gap, no duplicate (unfiltered)`, async () => {
        await catchUpWhileAppending(false);
      });

      it(`catch-up through ${bulkEvents} events while others append, then live: no gap, no duplicate (prefix filter)`, async () => {
        await catchUpWhileAppending(true);
      });

      it('filters: by stream prefix, by event type, and both, in catch-up and live', async () => {
        const store = await openStore();
        const orders = unique('order');
        const users = unique('user');
        const placed = unique('Placed');
        const paid = unique('Paid');
        const head = await store.headPosition();
        const write = async () => {
          await store.appendToStream(`${orders}-1`, [newEvent(placed), newEvent(paid), newEvent('Other')]);
          await store.appendToStream(`${users}-1`, [newEvent(placed), newEvent('Other')]);
          await store.appendToStream(`${orders}-2`, [newEvent(paid)]);
        };
        await write();
        const filters: EventFilter[] = [
          { streamPrefixes: [`${orders}-`] },
          { eventTypes: [placed, paid] },
          { streamPrefixes: [`${users}-`], eventTypes: [placed, paid] },
        ];
        const collectors = filters.map((f) => collect(store, head ?? 'start', f));
        await Promise.all(collectors.map((c) => c.caughtUp));

        await write(); // live

        const expected = await Promise.all(filters.map((f) => readMine(store, head, f)));
        expect(expected.map((e) => e.length)).toEqual([8, 8, 2]);
        for (const [i, c] of collectors.entries()) {
          await c.waitFor(expected[i]!.length);
          await sleep(20);
          expect(ids(c.events)).toEqual(ids(expected[i]!));
          await c.subscription.stop();
        }
      });

      it('stop() waits for the event in hand, and nothing is delivered after it', async () => {
        const store = await openStore();
        const cat = unique('order');
        const gate = deferred();
        const entered = deferred();
        const handled: string[] = [];
        let finishedFirst = false;
        const sub = store.subscribe({
          from: 'start',
          filter: { streamPrefixes: [`${cat}-`] },
          onEvent: async (e) => {
            handled.push(e.id);
            if (handled.length === 1) {
              entered.resolve();
              await gate.promise;
              finishedFirst = true;
            }
          },
        });
        const events = newEvents(3);
        await store.appendToStream(`${cat}-1`, events);
        await entered.promise;

        let stopped = false;
        const stopping = sub.stop().then(() => {
          stopped = true;
        });
        await sleep(50);
        expect(stopped).toBe(false);
        gate.resolve();
        await stopping;

        expect(finishedFirst).toBe(true);
        await sleep(50);
        expect(handled).toEqual([events[0]!.id]);
        await expect(sub.done).resolves.toBeUndefined();
      });

      it('an onEvent rejection ends the subscription: done rejects with that error, no further events', async () => {
        const store = await openStore();
        const cat = unique('order');
        const boom = new Error('handler failed');
        const seen: string[] = [];
        const sub = store.subscribe({
          from: 'start',
          filter: { streamPrefixes: [`${cat}-`] },
          onEvent: async (e) => {
            seen.push(e.id);
            if (seen.length === 2) throw boom;
          },
        });
        const events = newEvents(5);
        await store.appendToStream(`${cat}-1`, events);

        await expect(sub.done).rejects.toBe(boom);
        await store.appendToStream(`${cat}-1`, newEvents(2));
        await sleep(50);
        expect(seen).toEqual(ids(events.slice(0, 2)));
        await sub.stop(); // stopping an ended subscription is harmless
      });
    });

    describe('checkpoints', () => {
      it('store, read, overwrite; unknown processors have none; processors are independent', async () => {
        const store = await openStore();
        const p1 = unique('processor');
        const p2 = unique('processor');
        const cat = unique('order');
        await store.appendToStream(`${cat}-1`, newEvents(3));
        const [e0, , e2] = await store.readStream(`${cat}-1`);

        expect(await store.readCheckpoint(p1)).toBeUndefined();
        await store.storeCheckpoint(p1, e0!.position);
        expect(await store.readCheckpoint(p1)).toBe(e0!.position);
        await store.storeCheckpoint(p1, e2!.position);
        await store.storeCheckpoint(p2, e0!.position);

        expect(await store.readCheckpoint(p1)).toBe(e2!.position);
        expect(await store.readCheckpoint(p2)).toBe(e0!.position);
      });

      it('resume: a new subscription from the stored checkpoint sees exactly the rest', async () => {
        const store = await openStore();
        const cat = unique('order');
        const processor = unique('processor');
        const filter = { streamPrefixes: [`${cat}-`] };
        const head = await store.headPosition();
        for (let i = 0; i < 4; i++) {
          await store.appendToStream(`${cat}-${i % 2}`, newEvents(3, 'Step', i * 3));
        }
        const all = await readMine(store, head, filter);
        expect(all).toHaveLength(12);
        // Stop in the middle of an append where every event has its own position.
        const stopAfter = strictPositions ? 4 : 6;

        // Given a processor that checkpoints after each event and stops after a few…
        const firstRun: RecordedEvent[] = [];
        const stoppedAt = deferred();
        const first = store.subscribe({
          from: (await store.readCheckpoint(processor)) ?? head ?? 'start',
          filter,
          onEvent: async (e) => {
            firstRun.push(e);
            await store.storeCheckpoint(processor, e.position);
            if (firstRun.length === stopAfter) {
              void first.stop();
              stoppedAt.resolve();
            }
          },
        });
        await stoppedAt.promise;
        await first.stop();
        expect(ids(firstRun)).toEqual(ids(all.slice(0, stopAfter)));

        // …when it starts again from its checkpoint…
        const checkpoint = await store.readCheckpoint(processor);
        expect(checkpoint).toBe(all[stopAfter - 1]!.position);
        const second = collect(store, checkpoint!, filter);
        await second.caughtUp;
        const late = newEvent('Late');
        await store.appendToStream(`${cat}-0`, [late]);
        await second.waitFor(12 - stopAfter + 1);
        await sleep(20);

        // …then it sees exactly the rest, once.
        expect(ids(second.events)).toEqual([...ids(all.slice(stopAfter)), late.id]);
        await second.subscription.stop();
      });
    });

    describe('read model snapshots (src/processors/snapshots.ts)', () => {
      const model = (store: EventStore, cat: string, version: number) => {
        let seen: string[] = [];
        const resumable = createResumableState({
          name: `rm${cat}`,
          version,
          filter: { streamPrefixes: [`${cat}-`] },
          store,
          apply: (e) => seen.push(e.id),
          save: () => ({ seen }),
          load: (state) => {
            seen = [...(state as { seen: string[] }).seen];
          },
          reset: () => {
            seen = [];
          },
        });
        return { resumable, seen: () => seen };
      };
      const ctx = (store: EventStore) => ({ store, logger: createLogSink().logger() });

      it('a restored read model resumes after its snapshot; the newest snapshot wins; another version rebuilds', async () => {
        const store = await openStore();
        const cat = unique('ledger');
        await store.appendToStream(`${cat}-1`, newEvents(5));
        const first = await store.readStream(`${cat}-1`);

        const a = model(store, cat, 1);
        expect(await a.resumable.restore(ctx(store))).toBeUndefined();
        await a.resumable.catchUp();
        expect(a.seen()).toEqual(ids(first));
        const snap1 = await a.resumable.snapshot();
        expect(snap1!.position).toBeGreaterThanOrEqual(first[4]!.position);

        await store.appendToStream(`${cat}-2`, newEvents(2, 'Later'));
        const later = await store.readStream(`${cat}-2`);
        await a.resumable.catchUp();
        const snap2 = await a.resumable.snapshot();
        expect(snap2!.position).toBeGreaterThanOrEqual(later[1]!.position);

        await store.appendToStream(`${cat}-3`, newEvents(1, 'Last'));
        const last = await store.readStream(`${cat}-3`);
        const b = model(store, cat, 1);
        expect(await b.resumable.restore(ctx(store))).toBe(snap2!.position);
        expect(b.seen()).toEqual([...ids(first), ...ids(later)]);
        await b.resumable.catchUp();
        expect(b.resumable.appliedSinceStart()).toBe(1);
        expect(b.seen()).toEqual([...ids(first), ...ids(later), ...ids(last)]);

        const c = model(store, cat, 2);
        expect(await c.resumable.restore(ctx(store))).toBeUndefined();
        await c.resumable.catchUp();
        expect(c.resumable.appliedSinceStart()).toBe(8);
      });
    });

    if (options.reopensSameData) {
      describe('reopening', () => {
        it('events, stream revisions and checkpoints are there after close and open', async () => {
          const cat = unique('order');
          const processor = unique('processor');
          const first = await openStore();
          const head = await first.headPosition();
          await first.appendToStream(`${cat}-1`, newEvents(3));
          await first.appendToStream(`${cat}-2`, newEvents(2));
          const written = await readMine(first, head, { streamPrefixes: [`${cat}-`] });
          await first.storeCheckpoint(processor, written[2]!.position);
          await first.close();

          const second = await openStore();

          expect(await readMine(second, head, { streamPrefixes: [`${cat}-`] })).toEqual(written);
          expect(await second.streamRevision(`${cat}-1`)).toBe(2);
          expect(await second.readCheckpoint(processor)).toBe(written[2]!.position);
          const next = await second.appendToStream(`${cat}-1`, [newEvent('More')], { expectedRevision: 2 });
          expect(next.nextExpectedRevision).toBe(3);
        });
      });
    }

    describe('payloads', () => {
      it(`a large payload (${largePayloadBytes} bytes of JSON) round-trips through every read`, async () => {
        const store = await openStore();
        const cat = unique('blob');
        const head = await store.headPosition();
        const pattern = 'Ωmega "quoted" \\back\\slash\\ tab\t newline\n 🚀 ';
        const items = Array.from({ length: 500 }, (_, i) => ({ i, even: i % 2 === 0, s: `item-${i}` }));
        const base = Buffer.byteLength(JSON.stringify({ items, text: '' }));
        const unit = Buffer.byteLength(JSON.stringify(pattern)) - 2;
        const text = pattern.repeat(Math.floor((largePayloadBytes - base) / unit));
        const data = { items, text };
        const size = Buffer.byteLength(JSON.stringify(data));
        expect(size).toBeGreaterThan(largePayloadBytes * 0.99);
        expect(size).toBeLessThanOrEqual(largePayloadBytes);
        const event = newEvent('BlobStored', data);

        await store.appendToStream(`${cat}-1`, [event]);

        const [fromStream] = await store.readStream(`${cat}-1`);
        const [fromAll] = await readMine(store, head, { streamPrefixes: [`${cat}-`] });
        const c = collect(store, head ?? 'start', { streamPrefixes: [`${cat}-`] });
        const [fromSubscription] = await c.waitFor(1);
        await c.subscription.stop();
        for (const e of [fromStream, fromAll, fromSubscription]) {
          expect(e!.id).toBe(event.id);
          expect(e!.data).toEqual(data);
        }
      });

      it('unicode in data, event types and stream ids (emoji, RTL, odd code points)', async () => {
        const cat = unique('unicode');
        const stream = `${cat}-🚨-שלום-مرحبا-日本語`;
        const type = `Ereignis✓Ünïcødé🚨${unique('')}`;
        const data = {
          emoji: '👩🏽‍🚒 🚨🔥 🇺🇦 1️⃣',
          rtl: 'שלום עולם · مرحبا بالعالم',
          odd: '\u0001\u001f\u007f\u00ad\u200b\u200d\u200e\u202e\u2028\u2029\ufeff\ufffd\uffff\u{10ffff}\u{1d11e}',
          combining: 'e\u0301 Å Å',
          'ключ🔑': { מפתח: ['值', '🗝️', ''] },
        };
        const store = await openStore();
        const head = await store.headPosition();
        const event = newEvent(type, data, { metadata: { actor: 'Zoë 🚀', note: 'مرحبا' } });

        await store.appendToStream(stream, [event], { expectedRevision: 'no_stream' });

        const [read] = await store.readStream(stream);
        expect(read).toMatchObject({ id: event.id, streamId: stream, type, data, metadata: event.metadata });
        const byPrefix = await readMine(store, head, { streamPrefixes: [`${cat}-🚨`] });
        const byType = await readMine(store, head, { eventTypes: [type] });
        expect(ids(byPrefix)).toEqual([event.id]);
        expect(ids(byType)).toEqual([event.id]);
        const listed = await store.listStreams({ prefix: `${cat}-🚨` });
        expect(listed.map((s) => s.streamId)).toEqual([stream]);
        const c = collect(store, head ?? 'start', { streamPrefixes: [`${cat}-🚨-שלום`], eventTypes: [type] });
        const [delivered] = await c.waitFor(1);
        await c.subscription.stop();
        expect(delivered!.data).toEqual(data);
      });
    });

    describe('concurrency', () => {
      it('many appenders to one stream with exact expected revisions: nothing lost or reordered, revisions gapless', async () => {
        const store = await openStore();
        const stream = `${unique('counter')}-1`;
        const writers = 10;
        const perWriter = 10;
        let conflicts = 0;
        const results: { writer: number; k: number; id: string; result: AppendResult }[] = [];

        await Promise.all(
          range(0, writers).map(async (writer) => {
            let known: number | undefined;
            for (let k = 0; k < perWriter; k++) {
              const event = newEvent('Counted', { writer, k });
              for (let attempt = 0; ; attempt++) {
                if (attempt > 1000) throw new Error('no progress');
                try {
                  const result = await store.appendToStream(stream, [event], {
                    expectedRevision: known ?? 'no_stream',
                  });
                  results.push({ writer, k, id: event.id, result });
                  known = result.nextExpectedRevision;
                  break;
                } catch (e) {
                  if (!(e instanceof ConcurrencyError)) throw e;
                  conflicts += 1;
                  known = await store.streamRevision(stream);
                }
              }
            }
          }),
        );

        const events = await store.readStream(stream);
        expect(revisions(events)).toEqual(range(0, writers * perWriter));
        expect(new Set(ids(events)).size).toBe(writers * perWriter);
        for (let w = 0; w < writers; w++) {
          expect(events.filter((e) => e.data.writer === w).map((e) => e.data.k)).toEqual(range(0, perWriter));
        }
        // Each acknowledged append is where its result said.
        for (const r of results) expect(events[r.result.nextExpectedRevision]!.id).toBe(r.id);
        expectIncreasing(
          events.map((e) => e.position),
          true,
        );
        expect(conflicts).toBeGreaterThan(0); // the test did contend
      });

      it('many concurrent appends with any to one stream: each append lands whole and contiguous', async () => {
        const store = await openStore();
        const stream = `${unique('counter')}-1`;
        const appends = range(0, 40).map((a) => newEvents(3, `Batch${a}`));

        const results = await Promise.all(appends.map((events) => store.appendToStream(stream, events)));

        const events = await store.readStream(stream);
        expect(revisions(events)).toEqual(range(0, 120));
        for (const [a, result] of results.entries()) {
          const last = result.nextExpectedRevision;
          expect(ids(events.slice(last - 2, last + 1))).toEqual(ids(appends[a]!));
        }
        expect(new Set(results.map((r) => r.nextExpectedRevision)).size).toBe(40);
      });

      it('concurrent appenders to different streams: every stream complete and in order', async () => {
        const store = await openStore();
        const cat = unique('parallel');
        const streams = 25;
        const perStream = 8;
        const head = await store.headPosition();

        await Promise.all(
          range(0, streams).map(async (s) => {
            let expected: number | 'no_stream' = 'no_stream';
            for (let k = 0; k < perStream; k++) {
              const r = await store.appendToStream(`${cat}-${s}`, [newEvent('Step', { s, k })], {
                expectedRevision: expected,
              });
              expected = r.nextExpectedRevision;
            }
          }),
        );

        for (let s = 0; s < streams; s++) {
          const events = await store.readStream(`${cat}-${s}`);
          expect(events.map((e) => [e.revision, e.data.k])).toEqual(range(0, perStream).map((k) => [k, k]));
        }
        const all = await readMine(store, head, { streamPrefixes: [`${cat}-`] });
        expect(all).toHaveLength(streams * perStream);
        expectIncreasing(
          all.map((e) => e.position),
          true,
        );
      });
    });

    describe('processor claims (several replicas on one store)', () => {
      // Claims go through the port only (a claim stream appended with expectedRevision, a lease per
      // replica in the checkpoints), so they hold on every adapter. Clocks are the tests'.
      const replicas = async (names: readonly string[], expiryMs = 9_000) => {
        const store = await openStore();
        const clock = manualClock();
        let mono = 0;
        const tag = unique('r');
        const made = names.map((n) =>
          createClaims({ store, clock, replicaId: `${tag}-${n}`, expiryMs, monotonicNow: () => mono }),
        );
        const advance = (ms: number) => {
          mono += ms;
          clock.advance(ms);
        };
        return { store, clock, made, advance };
      };

      it('one replica holds a processor while its lease is renewed; another takes over only after the expiry', async () => {
        const { made, advance } = await replicas(['a', 'b']);
        const [a, b] = made as [ReturnType<typeof createClaims>, ReturnType<typeof createClaims>];
        const processor = unique('p');
        expect(await a.renew()).toBe(true);
        expect(await b.renew()).toBe(true);
        expect(await a.acquire(processor)).toBe(true);
        expect(await b.acquire(processor)).toBe(false);
        expect((await b.read(processor)).owner).toBe(a.replicaId);

        // Renewed within the expiry: still A's.
        advance(6_000);
        expect(await a.renew()).toBe(true);
        advance(6_000);
        expect(await b.acquire(processor)).toBe(false);

        // A stops renewing: its own claims lapse at 2/3 of the expiry, B may take over at the expiry.
        advance(2_000);
        expect(a.valid()).toBe(false);
        expect(await b.acquire(processor)).toBe(false);
        advance(1_001);
        expect(await b.renew()).toBe(true);
        expect(await b.acquire(processor)).toBe(true);
        expect((await a.read(processor)).owner).toBe(b.replicaId);
        // A comes back: its lease is fresh again, but the claim is B's and B's lease holds.
        expect(await a.renew()).toBe(true);
        expect(await a.acquire(processor)).toBe(false);
      });

      it('of two replicas racing for a free processor exactly one wins', async () => {
        const { made } = await replicas(['a', 'b', 'c']);
        for (const c of made) await c.renew();
        const processor = unique('p');
        const won = await Promise.all(made.map((c) => c.acquire(processor)));
        expect(won.filter(Boolean)).toHaveLength(1);
        const owner = (await made[0]!.read(processor)).owner;
        expect(owner).toBe(made[won.indexOf(true)]!.replicaId);
      });

      it('a released claim is taken at once; a restarted replica (same id) takes its own back at once', async () => {
        const { store, clock, made } = await replicas(['a', 'b']);
        const [a, b] = made as [ReturnType<typeof createClaims>, ReturnType<typeof createClaims>];
        await a.renew();
        await b.renew();
        const processor = unique('p');
        expect(await a.acquire(processor)).toBe(true);
        await a.release(processor);
        expect((await b.read(processor)).owner).toBeUndefined();
        expect(await b.acquire(processor)).toBe(true);

        const bAgain = createClaims({ store, clock, replicaId: b.replicaId, expiryMs: 9_000 });
        expect(await bAgain.acquire(processor)).toBe(true);
        expect(await a.acquire(processor)).toBe(false);
        // Releasing what another replica holds writes nothing.
        await a.release(processor);
        expect((await store.readStream(claimStreamId(processor))).map((e) => [e.type, e.data.owner])).toEqual(
          [
            ['ProcessorClaimed', a.replicaId],
            ['ProcessorClaimReleased', a.replicaId],
            ['ProcessorClaimed', b.replicaId],
            ['ProcessorClaimed', b.replicaId],
          ],
        );
      });
    });

    describe('closing', () => {
      it('a closed store says so and refuses work with a coded "store unavailable" error', async () => {
        const store = await openStore();
        const stream = `${unique('order')}-1`;
        await store.appendToStream(stream, [newEvent('Before')]);
        expect(store.isOpen()).toBe(true);

        await store.close();

        expect(store.isOpen()).toBe(false);
        await expect(store.appendToStream(stream, [newEvent('After')])).rejects.toMatchObject({
          code: 'SB_STORE_UNAVAILABLE',
        });
        await expect(store.readStream(stream)).rejects.toMatchObject({ code: 'SB_STORE_UNAVAILABLE' });
        await store.close(); // closing twice is harmless
      });
    });
  });
};

/**
 * Child process for the crash and cross-process tests: appends concurrently to several streams
 * through the SQLite event store and prints every acknowledged event as one JSON line
 * `{"s":streamId,"r":revision,"id":eventId}` as soon as its append resolves.
 *
 * Usage: node appender.ts <db path> <workers> <streams> [max appends]
 * Without a maximum it runs until killed. Even workers append with `any`; odd workers with the
 * exact expected revision, re-reading on conflict. Every append carries 1–3 events with random
 * payloads (up to 20 kB) and a SHA-256 of each payload, so a reader can prove nothing is torn.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { ConcurrencyError } from '../../../src/core/errors.ts';
import type { NewEvent } from '../../../src/eventStore/eventStore.ts';
import { createSqliteEventStore } from '../../../src/eventStore/sqlite/sqliteEventStore.ts';

const [path, workersArg = '8', streamsArg = '4', maxArg] = process.argv.slice(2);
if (!path) throw new Error('usage: appender.ts <db path> <workers> <streams> [max appends]');
const workers = Number(workersArg);
const streams = Number(streamsArg);
const max = maxArg === undefined ? Number.POSITIVE_INFINITY : Number(maxArg);
const store = createSqliteEventStore({ path });

const sha256 = (s: string): string => createHash('sha256').update(s).digest('hex');

let started = 0;
const worker = async (w: number): Promise<void> => {
  for (let i = 0; started < max; i++) {
    started += 1;
    const streamId = `crash-${(w + i) % streams}`;
    const count = 1 + ((w + i) % 3);
    const appendId = randomUUID();
    const events: NewEvent[] = Array.from({ length: count }, (_, k) => {
      const body = randomBytes(Math.floor(Math.random() * 15_000)).toString('base64');
      return {
        id: randomUUID(),
        type: 'CrashTested',
        data: { appendId, count, k, worker: w, body, sha256: sha256(body), text: 'ünïcødé 🚨 שלום' },
      };
    });
    let result: Awaited<ReturnType<typeof store.appendToStream>>;
    if (w % 2 === 0) {
      result = await store.appendToStream(streamId, events, { expectedRevision: 'any' });
    } else {
      for (;;) {
        const revision = await store.streamRevision(streamId);
        try {
          result = await store.appendToStream(streamId, events, {
            expectedRevision: revision ?? 'no_stream',
          });
          break;
        } catch (e) {
          if (!(e instanceof ConcurrencyError)) throw e;
        }
      }
    }
    for (const [k, e] of events.entries()) {
      const line = { s: streamId, r: result.nextExpectedRevision - (count - 1 - k), id: e.id };
      process.stdout.write(`${JSON.stringify(line)}\n`);
    }
  }
};

await Promise.all(Array.from({ length: workers }, (_, w) => worker(w)));
await store.close();

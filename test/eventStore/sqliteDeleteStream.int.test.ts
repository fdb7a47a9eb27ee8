import { existsSync, readFileSync } from 'node:fs';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import {
  createSqliteEventStore,
  type SqliteEventStore,
} from '../../src/eventStore/sqlite/sqliteEventStore.ts';
import { newEvent, tempDir } from './helpers.ts';

/** `deleteStream` (issue 12, crypto-shredding): gone for readers, gone from the file's bytes. */
const dir = tempDir('switchboard-sqlite-delete');
afterAll(() => dir.cleanup());
let store: SqliteEventStore | undefined;
afterEach(async () => {
  await store?.close();
  store = undefined;
});

const bytesOf = (path: string): string =>
  [path, `${path}-wal`]
    .filter((p) => existsSync(p))
    .map((p) => readFileSync(p).toString('latin1'))
    .join('\n');

describe('SQLite deleteStream', () => {
  it('removes the stream for readers and its bytes from the file and the WAL; positions never go back', async () => {
    const path = dir.file('delete.db');
    store = createSqliteEventStore({ path });
    const secret = 'k3y-material-0f9a8b7c6d5e4f3a2b1c';
    await store.appendToStream('other-1', [newEvent('Kept', { n: 1 })]);
    await store.appendToStream('personkey-U0ANA', [newEvent('PersonKeyCreated', { sealedKey: secret })]);
    const head = await store.headPosition();
    expect(bytesOf(path)).toContain(secret);

    await store.deleteStream('personkey-U0ANA');

    expect(await store.readStream('personkey-U0ANA')).toEqual([]);
    expect(await store.streamRevision('personkey-U0ANA')).toBeUndefined();
    const all = await store.readAll();
    expect(all.map((e) => e.type)).toEqual(['Kept', 'StreamDeleted']);
    expect(all.at(-1)?.data).toEqual({ streamId: 'personkey-U0ANA', lastRevision: 0 });
    expect(bytesOf(path).includes(secret), 'the deleted event, in the file or the WAL').toBe(false);

    // The next append takes a position after every one handed out before (no reuse).
    const next = await store.appendToStream('personkey-U0ANA', [newEvent('PersonKeyCreated', { n: 2 })], {
      expectedRevision: 'no_stream',
    });
    expect(next.nextExpectedRevision).toBe(0);
    expect(next.position > (head ?? 0n) + 1n).toBe(true);
  });

  it('deleting a stream that does not exist writes nothing', async () => {
    store = createSqliteEventStore({ path: dir.file('nothing.db') });
    await store.appendToStream('other-1', [newEvent('Kept')]);
    await store.deleteStream('personkey-U0NOBODY');
    await store.deleteStream('personkey-U0NOBODY');
    expect((await store.readAll()).map((e) => e.type)).toEqual(['Kept']);
  });
});

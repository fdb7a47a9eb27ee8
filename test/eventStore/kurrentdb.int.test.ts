import { randomUUID } from 'node:crypto';
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createKurrentDbEventStore } from '../../src/eventStore/kurrentdb/kurrentDbEventStore.ts';
import { openEventStore } from '../../src/eventStore/openEventStore.ts';
import { createLogSink } from '../support/logSink.ts';

/**
 * The KurrentDB adapter without a KurrentDB: what it does when the server is not there (a port
 * nobody listens on) or does not answer (a TCP listener that accepts and stays silent). "Did not
 * hang" is the assertion; the bound is generous because the machine is shared.
 */

const NOT_HANGING_MS = 15_000;

/** A loopback port that was free a moment ago and has nobody listening now. */
const closedPort = async (): Promise<number> => {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
};

/** A loopback server that accepts connections and never says a word. */
const silentServer = async (): Promise<{ port: number; close(): Promise<void> }> => {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    port,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
};

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const timed = async <T>(work: () => Promise<T>): Promise<{ error: unknown; ms: number }> => {
  const started = performance.now();
  try {
    await work();
    return { error: undefined, ms: performance.now() - started };
  } catch (error) {
    return { error, ms: performance.now() - started };
  }
};

const event = () => ({ id: randomUUID(), type: 'ThingHappened', data: { n: 1 } });

describe('KurrentDB adapter against a closed port', () => {
  it('createKurrentDbEventStore rejects with SB_STORE_UNAVAILABLE instead of hanging', async () => {
    const port = await closedPort();
    const { error, ms } = await timed(() =>
      createKurrentDbEventStore({
        connectionString: `kurrentdb://admin:hunter2-secret@127.0.0.1:${port}?tls=false`,
        connectTimeoutMs: 3000,
      }),
    );
    expect(error).toMatchObject({ code: 'SB_STORE_UNAVAILABLE', name: 'StoreUnavailableError' });
    expect((error as Error).message).toContain(`127.0.0.1:${port}`);
    expect((error as Error).message).not.toContain('hunter2-secret');
    expect(ms).toBeLessThan(NOT_HANGING_MS);
  });

  it('openEventStore routes kurrentdb:// (and esdb://) URLs to the adapter', async () => {
    const port = await closedPort();
    for (const scheme of ['kurrentdb', 'esdb']) {
      const { error, ms } = await timed(() => openEventStore(`${scheme}://127.0.0.1:${port}?tls=false`));
      expect(error).toMatchObject({ code: 'SB_STORE_UNAVAILABLE' });
      expect(ms).toBeLessThan(NOT_HANGING_MS);
    }
  });

  it('every operation of a lazily connected store fails with SB_STORE_UNAVAILABLE', async () => {
    const port = await closedPort();
    const sink = createLogSink();
    const store = await createKurrentDbEventStore({
      connectionString: `kurrentdb://127.0.0.1:${port}?tls=false`,
      verifyConnection: false,
      operationTimeoutMs: 5000,
      logger: sink.logger(),
    });
    cleanups.push(() => store.close());
    expect(store.kind).toBe('kurrentdb');
    expect(store.isOpen()).toBe(true);

    const operations: [string, () => Promise<unknown>][] = [
      ['appendToStream', () => store.appendToStream('thing-1', [event()], { expectedRevision: 'no_stream' })],
      ['readStream', () => store.readStream('thing-1')],
      ['streamRevision', () => store.streamRevision('thing-1')],
      ['readAll', () => store.readAll({ after: 10n, maxCount: 5 })],
      ['headPosition', () => store.headPosition()],
      ['listStreams', () => store.listStreams({ prefix: 'thing-' })],
      ['readCheckpoint', () => store.readCheckpoint('slack-replies')],
      ['storeCheckpoint', () => store.storeCheckpoint('slack-replies', 42n)],
    ];
    for (const [name, operation] of operations) {
      const { error, ms } = await timed(operation);
      expect({ name, code: (error as { code?: unknown }).code }).toEqual({
        name,
        code: 'SB_STORE_UNAVAILABLE',
      });
      expect(ms).toBeLessThan(NOT_HANGING_MS);
    }
    // /readyz sees it, and the log says so once (with the coded error under `err`).
    expect(store.isOpen()).toBe(false);
    const warnings = sink.lines().filter((l) => l['msg'] === 'KurrentDB unavailable');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]?.['err']).toMatchObject({ code: 'SB_STORE_UNAVAILABLE' });
  });

  it('a subscription keeps retrying, logs why, and stops cleanly', async () => {
    const port = await closedPort();
    const sink = createLogSink();
    const store = await createKurrentDbEventStore({
      connectionString: `kurrentdb://127.0.0.1:${port}?tls=false`,
      verifyConnection: false,
      connectTimeoutMs: 2000,
      logger: sink.logger(),
    });
    cleanups.push(() => store.close());
    const delivered: unknown[] = [];
    const subscription = store.subscribe({
      from: 'start',
      onEvent: async (e) => {
        delivered.push(e);
      },
    });
    const deadline = Date.now() + NOT_HANGING_MS;
    const retries = () =>
      sink.lines().filter((l) => l['msg'] === 'KurrentDB subscription dropped; resubscribing');
    while (retries().length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(retries().length).toBeGreaterThanOrEqual(2);
    expect(retries()[0]?.['err']).toMatchObject({ code: 'SB_STORE_UNAVAILABLE' });
    expect(retries()[1]?.['attempt']).toBe(2);

    const { error, ms } = await timed(() => subscription.stop());
    expect(error).toBeUndefined();
    expect(ms).toBeLessThan(NOT_HANGING_MS);
    await expect(subscription.done).resolves.toBeUndefined();
    expect(delivered).toEqual([]);
  });

  it('after close(), operations fail with SB_STORE_UNAVAILABLE and isOpen() is false', async () => {
    const port = await closedPort();
    const store = await createKurrentDbEventStore({
      connectionString: `kurrentdb://127.0.0.1:${port}?tls=false`,
      verifyConnection: false,
    });
    await store.close();
    await store.close(); // twice is fine
    expect(store.isOpen()).toBe(false);
    await expect(store.readStream('thing-1')).rejects.toMatchObject({
      code: 'SB_STORE_UNAVAILABLE',
      message: expect.stringContaining('closed'),
    });
    await expect(store.appendToStream('thing-1', [event()])).rejects.toMatchObject({
      code: 'SB_STORE_UNAVAILABLE',
    });
    // As in SQLite: a subscription on a closed store delivers nothing and is done at once.
    const late = store.subscribe({ from: 'start', onEvent: async () => undefined });
    await expect(late.done).resolves.toBeUndefined();
  });
});

describe('KurrentDB adapter against a server that never answers', () => {
  it('connecting gives up after connectTimeoutMs with SB_STORE_UNAVAILABLE', async () => {
    const server = await silentServer();
    cleanups.push(() => server.close());
    const { error, ms } = await timed(() =>
      createKurrentDbEventStore({
        connectionString: `kurrentdb://127.0.0.1:${server.port}?tls=false`,
        connectTimeoutMs: 1000,
      }),
    );
    expect(error).toMatchObject({ code: 'SB_STORE_UNAVAILABLE' });
    expect(ms).toBeLessThan(NOT_HANGING_MS);
  });

  it('a subscription that gets no confirmation gives up after connectTimeoutMs and retries', async () => {
    const server = await silentServer();
    cleanups.push(() => server.close());
    const sink = createLogSink();
    const store = await createKurrentDbEventStore({
      connectionString: `kurrentdb://127.0.0.1:${server.port}?tls=false`,
      verifyConnection: false,
      connectTimeoutMs: 500,
      logger: sink.logger(),
    });
    cleanups.push(() => store.close());
    const subscription = store.subscribe({ from: 'start', onEvent: async () => undefined });
    const retried = () =>
      sink.lines().some((l) => l['msg'] === 'KurrentDB subscription dropped; resubscribing');
    const deadline = Date.now() + NOT_HANGING_MS;
    while (!retried() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(retried()).toBe(true);
    await subscription.stop();
    await expect(subscription.done).resolves.toBeUndefined();
  });

  it('an append gives up after operationTimeoutMs and says a retry with the same ids is safe', async () => {
    const server = await silentServer();
    cleanups.push(() => server.close());
    const store = await createKurrentDbEventStore({
      connectionString: `kurrentdb://127.0.0.1:${server.port}?tls=false`,
      verifyConnection: false,
      operationTimeoutMs: 1000,
    });
    cleanups.push(() => store.close());
    const { error, ms } = await timed(() => store.appendToStream('thing-1', [event()]));
    expect(error).toMatchObject({ code: 'SB_STORE_UNAVAILABLE', details: { timeoutMs: 1000 } });
    expect((error as Error).message).toMatch(/retry with the same ids is safe/);
    expect(ms).toBeLessThan(NOT_HANGING_MS);
  });
});

describe('KurrentDB adapter input checks (no server needed: they fail before any I/O)', () => {
  const lazyStore = async () => {
    const store = await createKurrentDbEventStore({
      connectionString: `kurrentdb://127.0.0.1:${await closedPort()}?tls=false`,
      verifyConnection: false,
    });
    cleanups.push(() => store.close());
    return store;
  };

  it('rejects appends the server would reject or that would hide events', async () => {
    const store = await lazyStore();
    const bad: [string, () => Promise<unknown>][] = [
      ['non-UUID id', () => store.appendToStream('thing-1', [{ id: 'abc', type: 'T', data: {} }])],
      ['$-stream', () => store.appendToStream('$thing-1', [event()])],
      ['checkpoint stream', () => store.appendToStream('switchboardCheckpoint-x', [event()])],
      ['$-type', () => store.appendToStream('thing-1', [{ id: randomUUID(), type: '$T', data: {} }])],
      [
        'reserved metadata',
        () => store.appendToStream('thing-1', [{ ...event(), metadata: { $kind: 'command' } }]),
      ],
      [
        'same id twice',
        () => {
          const e = event();
          return store.appendToStream('thing-1', [e, e]);
        },
      ],
      ['space in stream id', () => store.appendToStream('thing 1', [event()])],
    ];
    for (const [name, append] of bad) {
      const { error } = await timed(append);
      expect({ name, code: (error as { code?: unknown }).code }).toEqual({ name, code: 'SB_VALIDATION' });
    }
    await expect(
      store.appendToStream('thing-1', [event()], { expectedRevision: -1 as unknown as number }),
    ).rejects.toMatchObject({ code: 'SB_VALIDATION' });
    await expect(store.readCheckpoint('has space')).rejects.toMatchObject({ code: 'SB_VALIDATION' });
    // None of these reached the network, so the store still counts as healthy.
    expect(store.isOpen()).toBe(true);
  });

  it('refuses a connection string the client cannot parse, without echoing credentials', async () => {
    const { error } = await timed(() =>
      createKurrentDbEventStore({ connectionString: 'kurrentdb://user:s3cret-pass@' }),
    );
    expect(error).toMatchObject({ code: 'SB_CONFIG' });
    expect((error as Error).message).not.toContain('s3cret-pass');
  });
});

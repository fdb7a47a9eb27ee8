import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readRawBody } from '../../src/http/rawBody.ts';
import { ABORT_LOG_INTERVAL_MS, createHttpServer, type HttpServer, sendJson } from '../../src/http/server.ts';
import { createMetrics } from '../../src/metrics.ts';
import { createLogSink } from '../support/logSink.ts';
import { waitFor } from '../support/waitFor.ts';

/**
 * Issue 9 item 3: a client that sends part of a body and goes away is logged as one line, without
 * a stack trace, and at most one line per interval (with how many were aborted).
 */
const logs = createLogSink();
let now = 1_000_000;
let reads = 0;
let settled = 0;
let server: HttpServer;
let port: number;
beforeAll(async () => {
  server = createHttpServer({
    logger: logs.logger(),
    metrics: createMetrics(),
    nowMs: () => now,
    routes: [
      {
        method: 'POST',
        path: '/upload',
        handler: async (req, res) => {
          reads += 1;
          try {
            await readRawBody(req, 1024 * 1024);
          } finally {
            settled += 1;
          }
          sendJson(res, 200, { ok: true });
        },
      },
    ],
  });
  port = await server.listen(0, '127.0.0.1');
});
afterAll(async () => {
  await server.close(100);
});

/** Sends headers and half the declared body, waits until the server started reading, and goes away. */
const abortMidBody = async (): Promise<void> => {
  const before = reads;
  const socket = connect({ host: '127.0.0.1', port });
  socket.on('error', () => undefined);
  await new Promise((resolve) => socket.once('connect', resolve));
  socket.write(`POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 2048\r\n\r\n`);
  socket.write(Buffer.alloc(1024, 0x61));
  await waitFor(() => reads > before, { what: 'the server to start reading' });
  socket.destroy();
};

const abortLines = () => logs.lines().filter((l) => String(l['msg']).includes('aborted'));

describe('aborted requests', () => {
  it('one aborted request: one line, no stack trace, no error', async () => {
    await abortMidBody();
    await waitFor(() => abortLines().length === 1, { what: 'the abort line' });
    const line = abortLines()[0]!;
    expect(line).toMatchObject({ route: '/upload', aborted: 1 });
    expect(JSON.stringify(line)).not.toContain('stack');
    expect(logs.lines().filter((l) => l['level'] === 'error' || l['level'] === 50)).toEqual([]);
  });

  it('many within the interval: no more lines; the next line after it counts them', async () => {
    for (let i = 0; i < 20; i++) await abortMidBody();
    await waitFor(() => settled === reads, { what: 'the server to see every abort' });
    expect(abortLines()).toHaveLength(1);
    // One more abort once the interval has passed: a second line, counting all of them.
    now += ABORT_LOG_INTERVAL_MS;
    await abortMidBody();
    await waitFor(() => abortLines().length === 2, { what: 'the second abort line' });
    expect(abortLines()[1]).toMatchObject({ aborted: 21 });
    expect(logs.lines().filter((l) => l['level'] === 'error' || l['level'] === 50)).toEqual([]);
  });
});

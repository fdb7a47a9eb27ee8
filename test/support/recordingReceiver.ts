import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A loopback endpoint that records what it receives (raw bytes included) and answers with
 * scripted statuses: for testing webhook senders without the bot.
 *
 * @example
 * const rx = await startRecordingReceiver();
 * rx.respondWith(503, 503); // the next two requests get 503, then 200
 * sim.subscribe({ url: rx.url, secret: 's' });
 */
export type ReceivedRequest = {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly rawBody: Buffer;
  readonly json: unknown;
  readonly status: number;
};

export const startRecordingReceiver = async () => {
  const received: ReceivedRequest[] = [];
  const scripted: Array<number | { status: number; delayMs: number }> = [];
  const waiters: Array<{ count: number; resolve: () => void }> = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const rawBody = Buffer.concat(chunks);
      const next = scripted.shift() ?? 200;
      const { status, delayMs } = typeof next === 'number' ? { status: next, delayMs: 0 } : next;
      let json: unknown;
      try {
        json = JSON.parse(rawBody.toString('utf8'));
      } catch {
        json = undefined;
      }
      const answer = () => {
        received.push({
          method: req.method ?? '',
          url: req.url ?? '',
          headers: req.headers,
          rawBody,
          json,
          status,
        });
        for (const w of [...waiters]) {
          if (received.length >= w.count) {
            waiters.splice(waiters.indexOf(w), 1);
            w.resolve();
          }
        }
        if (!res.destroyed) {
          res.writeHead(status, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ ok: status < 300 }));
        }
      };
      if (delayMs > 0) setTimeout(answer, delayMs);
      else answer();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks/pagerduty`;
  return {
    url,
    received,
    /** Statuses (or delayed statuses) for the next requests, in order; afterwards 200. */
    respondWith(...statuses: Array<number | { status: number; delayMs: number }>) {
      scripted.push(...statuses);
    },
    /** Resolves once `count` requests in total have been received. */
    waitFor(count: number, timeoutMs = 5_000): Promise<void> {
      if (received.length >= count) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const t = setTimeout(
          () => reject(new Error(`receiver got ${received.length}/${count} requests`)),
          timeoutMs,
        );
        waiters.push({
          count,
          resolve: () => {
            clearTimeout(t);
            resolve();
          },
        });
      });
    },
    async stop() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
};

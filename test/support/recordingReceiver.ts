import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A loopback endpoint that records what it receives (raw bytes included) and answers with
 * scripted statuses: for testing webhook senders without the bot. `'never'` records the request
 * and never answers it (until `stop()`), so a sender's timeout fires however fast the machine is.
 *
 * @example
 * const rx = await startRecordingReceiver();
 * rx.respondWith(503, 'never'); // the next request gets 503, the one after no answer, then 200
 * sim.subscribe({ url: rx.url, secret: 's' });
 */
export type ReceivedRequest = {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly rawBody: Buffer;
  readonly json: unknown;
  /** The status answered; 0 for a request left unanswered (`'never'`). */
  readonly status: number;
};

export type ScriptedAnswer = number | 'never';

export const startRecordingReceiver = async () => {
  const received: ReceivedRequest[] = [];
  const scripted: ScriptedAnswer[] = [];
  const waiters: Array<{ count: number; resolve: () => void }> = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const rawBody = Buffer.concat(chunks);
      const next = scripted.shift() ?? 200;
      const status = next === 'never' ? 0 : next;
      let json: unknown;
      try {
        json = JSON.parse(rawBody.toString('utf8'));
      } catch {
        json = undefined;
      }
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
      if (status === 0 || res.destroyed) return;
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ ok: status < 300 }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks/pagerduty`;
  return {
    url,
    received,
    /** Statuses for the next requests, in order (`'never'`: no answer at all); afterwards 200. */
    respondWith(...statuses: ScriptedAnswer[]) {
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

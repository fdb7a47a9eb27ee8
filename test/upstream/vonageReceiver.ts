import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Clock } from '../../src/core/clock.ts';
import { type VonageSignatureCheck, verifyVonageSignature } from '../../src/upstream/vonageSignature.ts';

/**
 * A stand-in for the bot's `/webhooks/vonage/*` routes in the client and simulator tests: it
 * checks each delivery's signature with the real verifier, records it, and answers what the test
 * says (by default 200; the DTMF input route answers the NCCO the test gives).
 */
export type ReceivedWebhook = Readonly<{
  path: string;
  headers: IncomingHttpHeaders;
  raw: Buffer;
  body: Record<string, unknown>;
  check: VonageSignatureCheck;
}>;

export const startReceiver = async (secret: () => string, clock: Clock) => {
  const received: ReceivedWebhook[] = [];
  const answers: Array<{ path: string; status: number; body?: unknown }> = [];
  const waiters: Array<{ test: (w: ReceivedWebhook) => boolean; resolve: (w: ReceivedWebhook) => void }> = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const path = req.url ?? '/';
      const check = verifyVonageSignature(raw, req.headers.authorization, secret(), { now: clock.now() });
      const w: ReceivedWebhook = {
        path,
        headers: req.headers,
        raw,
        body: JSON.parse(raw.toString()) as Record<string, unknown>,
        check,
      };
      received.push(w);
      for (const waiter of waiters.splice(0)) {
        if (waiter.test(w)) waiter.resolve(w);
        else waiters.push(waiter);
      }
      const i = answers.findIndex((a) => a.path === path);
      const answer =
        i >= 0 ? answers.splice(i, 1)[0]! : { status: check.ok ? 200 : 401, body: { ok: check.ok } };
      res.writeHead(answer.status, { 'content-type': 'application/json' });
      res.end(answer.body === undefined ? '' : JSON.stringify(answer.body));
    });
  });
  const url = await new Promise<string>((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`),
    ),
  );
  return {
    url,
    received,
    /** The next delivery to `path` gets this answer (one each, in order). */
    answerNext(path: string, status: number, body?: unknown) {
      answers.push({ path, status, body });
    },
    on: (path: string) => received.filter((w) => w.path === path),
    /** Resolves with the first delivery (already received or still to come) that passes `test`. */
    waitFor(test: (w: ReceivedWebhook) => boolean): Promise<ReceivedWebhook> {
      const seen = received.find(test);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve) => waiters.push({ test, resolve }));
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
};

export type Receiver = Awaited<ReturnType<typeof startReceiver>>;

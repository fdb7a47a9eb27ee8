import { request, Agent as UndiciAgent } from 'undici';
import { signHiBobWebhook } from '../../../src/upstream/hibobSignature.ts';

/**
 * Webhook delivery as the HR service does it (v2, https://apidocs.hibob.com/docs/working-with-webhooks):
 * one JSON event per POST, in order, signed `Bob-Signature: base64(HMAC-SHA512(secret, body))`.
 * A non-2xx answer, a timeout or a refused connection is retried (the vendor retries for up to three
 * days with exponential backoff; the default delays here are short, for tests). A retry is the same
 * bytes with the same signature: the service sends no delivery id.
 */

export type HiBobWebhookType =
  | 'employee.created'
  | 'employee.updated'
  | 'employee.joined'
  | 'employee.left'
  | 'timeoff.request.requested'
  | 'timeoff.request.cancelled';

export type HiBobDeliveryAttempt = Readonly<{
  type: string;
  url: string;
  attempt: number;
  /** Exactly the bytes signed and sent. */
  body: string;
  headers: Readonly<Record<string, string>>;
  status?: number;
  error?: string;
  outcome: 'delivered' | 'retrying' | 'failed';
}>;

export type HiBobWebhookOptions = Readonly<{
  /** Delays between attempts; its length is the number of retries. Default short, for tests. */
  retryDelaysMs?: readonly number[];
  timeoutMs?: number;
}>;

export const createHiBobWebhooks = (options: HiBobWebhookOptions & { readonly secret: () => string }) => {
  const retryDelays = options.retryDelaysMs ?? [20, 40, 80, 160];
  const timeoutMs = options.timeoutMs ?? 5_000;
  const agent = new UndiciAgent({ keepAliveTimeout: 1_000, connections: 4 });
  const attempts: HiBobDeliveryAttempt[] = [];
  const queue: Array<{ type: string; url: string; body: string }> = [];
  const timers = new Set<NodeJS.Timeout>();
  const idleWaiters: Array<() => void> = [];
  let running = false;
  let stopped = false;

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const t = setTimeout(() => {
        timers.delete(t);
        resolve();
      }, ms);
      timers.add(t);
    });

  const post = async (item: { type: string; url: string; body: string }, attempt: number) => {
    const headers = {
      'content-type': 'application/json',
      'user-agent': 'HiBob-Simulator/1.0',
      'bob-signature': signHiBobWebhook(item.body, options.secret()),
    };
    const base = { type: item.type, url: item.url, attempt, body: item.body, headers };
    try {
      const res = await request(item.url, {
        method: 'POST',
        headers,
        body: item.body,
        dispatcher: agent,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
        signal: AbortSignal.timeout(timeoutMs),
      });
      await res.body.text();
      const ok = res.statusCode >= 200 && res.statusCode < 300;
      attempts.push({ ...base, status: res.statusCode, outcome: ok ? 'delivered' : 'retrying' });
      return ok;
    } catch (err) {
      const e = err as { code?: unknown; name?: unknown };
      const error = typeof e.code === 'string' ? e.code : typeof e.name === 'string' ? e.name : String(err);
      attempts.push({ ...base, error, outcome: 'retrying' });
      return false;
    }
  };

  const deliver = async (item: { type: string; url: string; body: string }) => {
    for (let attempt = 1; !stopped; attempt++) {
      if (await post(item, attempt)) return;
      const delay = retryDelays[attempt - 1];
      if (delay === undefined) {
        const last = attempts.at(-1);
        if (last) attempts[attempts.length - 1] = { ...last, outcome: 'failed' };
        return;
      }
      await sleep(delay);
    }
  };

  const pump = () => {
    if (running || stopped) return;
    const item = queue.shift();
    if (!item) {
      for (const w of idleWaiters.splice(0)) w();
      return;
    }
    running = true;
    void deliver(item).finally(() => {
      running = false;
      pump();
    });
  };

  return {
    attempts: attempts as readonly HiBobDeliveryAttempt[],
    /** Queues one event for `url`; deliveries leave one at a time, in order. */
    send(type: string, url: string, payload: unknown) {
      if (stopped) return;
      queue.push({ type, url, body: JSON.stringify(payload) });
      pump();
    },
    /** Resolves when nothing is queued or in flight. */
    idle(): Promise<void> {
      if (!running && queue.length === 0) return Promise.resolve();
      return new Promise((resolve) => idleWaiters.push(resolve));
    },
    async stop() {
      stopped = true;
      for (const t of timers) clearTimeout(t);
      timers.clear();
      for (const w of idleWaiters.splice(0)) w();
      await agent.close();
    },
  };
};

import { request, Agent as UndiciAgent } from 'undici';
import type { Clock } from '../../../src/core/clock.ts';
import { signVonageWebhook } from '../../../src/upstream/vonageSignature.ts';

/**
 * Signed webhook delivery as the communications service does it
 * (https://developer.vonage.com/en/getting-started/concepts/webhooks): one JSON body per POST,
 * `Authorization: Bearer <JWT>` signed HS256 with the signature secret, claims `iat`, `jti`,
 * `iss`, `payload_hash` (hex SHA-256 of the body), `api_key`, `application_id`. Any non-2xx answer,
 * a timeout or a refused connection is retried (the vendor retries Messages callbacks on 429/5xx
 * and Verify callbacks on any non-2xx; the simulator retries every non-2xx, with short delays
 * for tests). Deliveries leave one at a time, in order (a message's `submitted` before its
 * `delivered`); `hold()` queues them until `release()`.
 *
 * Interactive callbacks (the DTMF input of a call, whose answer is the next NCCO) bypass the queue
 * and the hold: the caller is on the line waiting for the answer.
 */

export type WebhookKind = 'verify' | 'message-status' | 'inbound-sms' | 'call-event' | 'input';

export type VonageDeliveryAttempt = Readonly<{
  kind: WebhookKind;
  url: string;
  attempt: number;
  /** Exactly the bytes signed and sent. */
  body: string;
  headers: Readonly<Record<string, string>>;
  status?: number;
  responseBody?: string;
  error?: string;
  /** delivered (2xx), retrying, failed (retries exhausted), duplicate (an extra copy on request). */
  outcome: 'delivered' | 'retrying' | 'failed' | 'duplicate';
}>;

export type VonageWebhookOptions = Readonly<{
  /** Delays between attempts; its length is the number of retries. Default short, for tests. */
  retryDelaysMs?: readonly number[];
  /** The vendor gives up on an answer after 15 s (3 s to connect). Default 5 s. */
  timeoutMs?: number;
}>;

type Item = {
  readonly kind: WebhookKind;
  readonly url: string;
  readonly body: string;
  duplicate: boolean;
  readonly done: (result: DeliveryResult) => void;
};

export type DeliveryResult = Readonly<{ ok: boolean; status?: number; responseBody?: string }>;

export const createVonageWebhooks = (
  options: VonageWebhookOptions & {
    readonly secret: () => string;
    readonly apiKey: string;
    readonly applicationId: string;
    readonly clock: Clock;
  },
) => {
  const retryDelays = options.retryDelaysMs ?? [20, 40, 80, 160];
  const timeoutMs = options.timeoutMs ?? 5_000;
  const agent = new UndiciAgent({ keepAliveTimeout: 1_000, connections: 16 });
  const attempts: VonageDeliveryAttempt[] = [];
  const queue: Item[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const idleWaiters: Array<() => void> = [];
  let running = false;
  let held = false;
  let stopped = false;
  let duplicateNext = 0;

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const t = setTimeout(() => {
        timers.delete(t);
        resolve();
      }, ms);
      timers.add(t);
    });

  /** One POST; the signature is made fresh for each attempt (new `iat` and `jti`). */
  const post = async (
    item: Pick<Item, 'kind' | 'url' | 'body'>,
    attempt: number,
    outcomeIfOk: 'delivered' | 'duplicate',
  ): Promise<DeliveryResult & { retry: boolean }> => {
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'user-agent': 'Vonage-Simulator/1.0',
      authorization: signVonageWebhook(item.body, options.secret(), {
        now: options.clock.now(),
        apiKey: options.apiKey,
        applicationId: options.applicationId,
      }),
    };
    const base = { kind: item.kind, url: item.url, attempt, body: item.body, headers };
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
      const text = await res.body.text();
      const ok = res.statusCode >= 200 && res.statusCode < 300;
      attempts.push({
        ...base,
        status: res.statusCode,
        responseBody: text,
        outcome: ok ? outcomeIfOk : 'retrying',
      });
      return { ok, status: res.statusCode, responseBody: text, retry: !ok };
    } catch (err) {
      const e = err as { code?: unknown; name?: unknown };
      attempts.push({
        ...base,
        error: typeof e.code === 'string' ? e.code : typeof e.name === 'string' ? e.name : String(err),
        outcome: 'retrying',
      });
      return { ok: false, retry: true };
    }
  };

  const markLastFailed = () => {
    const last = attempts[attempts.length - 1];
    if (last) attempts[attempts.length - 1] = { ...last, outcome: 'failed' };
  };

  /** Sends with retries; resolves with the last answer. */
  const deliver = async (item: Pick<Item, 'kind' | 'url' | 'body'>, duplicate: boolean) => {
    for (let attempt = 1; !stopped; attempt++) {
      const result = await post(item, attempt, 'delivered');
      if (result.ok) {
        if (duplicate && !stopped) await post(item, attempt, 'duplicate');
        return result;
      }
      const delay = retryDelays[attempt - 1];
      if (delay === undefined) {
        markLastFailed();
        return result;
      }
      await sleep(delay);
    }
    return { ok: false } satisfies DeliveryResult;
  };

  const notifyIdle = () => {
    if (running || (queue.length > 0 && !held)) return;
    for (const w of idleWaiters.splice(0)) w();
  };

  const pump = () => {
    if (running || held || stopped) return notifyIdle();
    const item = queue.shift();
    if (!item) return notifyIdle();
    running = true;
    void deliver(item, item.duplicate)
      .then(item.done, () => item.done({ ok: false }))
      .finally(() => {
        running = false;
        pump();
      });
  };

  return {
    attempts,
    /** Queues a signed delivery; resolves when it was delivered or given up (never rejects). */
    send(kind: WebhookKind, url: string, payload: unknown): Promise<DeliveryResult> {
      if (stopped) return Promise.resolve({ ok: false });
      return new Promise((done) => {
        const duplicate = duplicateNext > 0;
        if (duplicate) duplicateNext -= 1;
        queue.push({ kind, url, body: JSON.stringify(payload), duplicate, done });
        pump();
      });
    },
    /** Sends now, outside the queue and the hold (the DTMF input callback). */
    async sendNow(kind: WebhookKind, url: string, payload: unknown): Promise<DeliveryResult> {
      if (stopped) return { ok: false };
      return deliver({ kind, url, body: JSON.stringify(payload) }, false);
    },
    /** The next `count` deliveries are each sent twice (a redelivery the receiver must recognise). */
    duplicateNext(count = 1) {
      duplicateNext += count;
    },
    hold() {
      held = true;
    },
    release() {
      held = false;
      pump();
    },
    heldCount: () => queue.length,
    /** Resolves when nothing is queued or in flight (or only held deliveries remain). */
    idle(): Promise<void> {
      if (!running && (queue.length === 0 || held)) return Promise.resolve();
      return new Promise((resolve) => idleWaiters.push(resolve));
    },
    async stop() {
      stopped = true;
      for (const t of timers) clearTimeout(t);
      timers.clear();
      for (const item of queue.splice(0)) item.done({ ok: false });
      for (const w of idleWaiters.splice(0)) w();
      await agent.close().catch(() => undefined);
    },
  };
};

export type VonageWebhooks = ReturnType<typeof createVonageWebhooks>;

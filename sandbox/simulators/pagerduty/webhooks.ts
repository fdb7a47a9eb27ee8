import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import { request, Agent as UndiciAgent } from 'undici';
import type { WebhookEventType } from './model.ts';

/**
 * V3 webhook delivery as the vendor documents it (https://github.com/PagerDuty/developer-docs/blob/94224391aa3eac8fa73ea6a6af542dee0613d3e8/docs/webhooks/01-Overview.md,
 * 02-Behavior.md, 04-Signatures.md beside it): one event per POST, signed
 * `X-PagerDuty-Signature: v1=<hex HMAC-SHA256 of the raw body>` (one `v1=` per active secret while
 * rotating), `X-Webhook-Id` stable across retries, `X-Webhook-Subscription`, User-Agent
 * `PagerDuty-Webhook/V3.0`. Retries on 5xx, 429, timeouts and connection errors with backoff;
 * drops on other 4xx; three consecutive drops disable the subscription. Deliveries to one
 * subscription are sent in order, one at a time (later events queue behind a retrying one).
 */

export type WebhookFilter =
  | { readonly type: 'account_reference' }
  | { readonly type: 'service_reference'; readonly id: string }
  | { readonly type: 'team_reference'; readonly id: string };

export type SubscribeOptions = {
  readonly url: string;
  /** Default: a random secret (returned). */
  readonly secret?: string;
  /** Event types to send; default every type the simulator produces. */
  readonly events?: readonly WebhookEventType[] | readonly string[];
  readonly filter?: WebhookFilter;
  readonly customHeaders?: ReadonlyArray<{ readonly name: string; readonly value: string }>;
  readonly description?: string;
};

export type Subscription = {
  readonly id: string;
  readonly url: string;
  /** Newest first; several while a rotation is in progress. */
  secrets: string[];
  readonly events: readonly string[] | undefined;
  readonly filter: WebhookFilter;
  readonly customHeaders: ReadonlyArray<{ readonly name: string; readonly value: string }>;
  readonly description: string;
  active: boolean;
  temporarilyDisabled: boolean;
  consecutiveDrops: number;
};

export type WebhookEnvelope = {
  readonly event: {
    readonly id: string;
    readonly event_type: string;
    readonly resource_type: 'incident' | 'service';
    readonly occurred_at: string;
    readonly agent: unknown;
    readonly client: unknown;
    readonly data: unknown;
  };
};

export type DeliveryAttempt = {
  readonly webhookId: string;
  readonly subscriptionId: string;
  readonly eventId: string;
  readonly eventType: string;
  readonly attempt: number;
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  /** Exactly the bytes that were signed and sent. */
  readonly body: string;
  readonly status?: number;
  readonly responseBody?: string;
  readonly error?: string;
  /** delivered (2xx), retrying, dropped (4xx, not retried), failed (retries exhausted), duplicate (an extra copy sent on request). */
  readonly outcome: 'delivered' | 'retrying' | 'dropped' | 'failed' | 'duplicate';
  readonly durationMs: number;
};

export type WebhookOptions = {
  /** Delays between attempts; length = number of retries. Default: fast, for tests. */
  readonly retryDelaysMs?: readonly number[];
  /** The vendor expects a 2xx within 5 s. */
  readonly timeoutMs?: number;
  /** Consecutive dropped deliveries that disable a subscription. */
  readonly disableAfterDrops?: number;
};

type Queued = {
  readonly webhookId: string;
  readonly subscription: Subscription;
  readonly envelope: WebhookEnvelope;
  readonly body: string;
  duplicate: boolean;
};

export type PublishScope = { readonly serviceId: string; readonly teamIds: readonly string[] };

export const createWebhookDispatcher = (options: WebhookOptions = {}) => {
  const retryDelays = options.retryDelaysMs ?? [25, 50, 100, 200];
  const timeoutMs = options.timeoutMs ?? 5_000;
  const disableAfter = options.disableAfterDrops ?? 3;
  const agent = new UndiciAgent({ keepAliveTimeout: 1_000, connections: 16 });
  const subscriptions = new Map<string, Subscription>();
  const queues = new Map<string, Queued[]>();
  const running = new Set<string>();
  const attempts: DeliveryAttempt[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const idleWaiters: Array<() => void> = [];
  let held = false;
  let duplicateNext = 0;
  let stopped = false;
  let subSeq = 0;

  const sign = (body: string, secrets: readonly string[]) =>
    secrets.map((s) => `v1=${createHmac('sha256', s).update(body, 'utf8').digest('hex')}`).join(',');

  const pending = () => [...queues.values()].reduce((n, q) => n + q.length, 0) + running.size;

  const notifyIdle = () => {
    if (pending() > 0 && !held) return;
    if (pending() > 0 && held && running.size > 0) return;
    for (const w of idleWaiters.splice(0)) w();
  };

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const t = setTimeout(() => {
        timers.delete(t);
        resolve();
      }, ms);
      timers.add(t);
    });

  const send = async (item: Queued, attempt: number, outcomeIfOk: DeliveryAttempt['outcome']) => {
    const sub = item.subscription;
    const headers: Record<string, string> = {
      'content-type': 'application/json; charset=utf-8',
      'user-agent': 'PagerDuty-Webhook/V3.0',
      'x-webhook-id': item.webhookId,
      'x-webhook-subscription': sub.id,
      'x-pagerduty-signature': sign(item.body, sub.secrets),
    };
    for (const h of sub.customHeaders) headers[h.name.toLowerCase()] = h.value;
    const started = performance.now();
    const base = {
      webhookId: item.webhookId,
      subscriptionId: sub.id,
      eventId: item.envelope.event.id,
      eventType: item.envelope.event.event_type,
      attempt,
      url: sub.url,
      headers,
      body: item.body,
    };
    try {
      const res = await request(sub.url, {
        method: 'POST',
        headers,
        body: item.body,
        dispatcher: agent,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
        signal: AbortSignal.timeout(timeoutMs),
      });
      const text = await res.body.text();
      const status = res.statusCode;
      const durationMs = performance.now() - started;
      if (status >= 200 && status < 300) {
        attempts.push({ ...base, status, responseBody: text, outcome: outcomeIfOk, durationMs });
        return 'ok' as const;
      }
      const retry = status >= 500 || status === 429;
      attempts.push({
        ...base,
        status,
        responseBody: text,
        outcome: retry ? 'retrying' : 'dropped',
        durationMs,
      });
      return retry ? ('retry' as const) : ('drop' as const);
    } catch (err) {
      // DOMException (our deadline) carries a legacy numeric `code`; prefer undici's string codes.
      const e = err as { code?: unknown; name?: unknown };
      attempts.push({
        ...base,
        error: typeof e.code === 'string' ? e.code : typeof e.name === 'string' ? e.name : String(err),
        outcome: 'retrying',
        durationMs: performance.now() - started,
      });
      return 'retry' as const;
    }
  };

  const markLast = (outcome: DeliveryAttempt['outcome']) => {
    const last = attempts[attempts.length - 1];
    if (last) attempts[attempts.length - 1] = { ...last, outcome };
  };

  const deliver = async (item: Queued) => {
    const sub = item.subscription;
    for (let attempt = 1; !stopped; attempt++) {
      const result = await send(item, attempt, 'delivered');
      if (result === 'ok') {
        sub.consecutiveDrops = 0;
        if (item.duplicate && !stopped) await send(item, attempt, 'duplicate');
        return;
      }
      if (result === 'drop') break;
      const delay = retryDelays[attempt - 1];
      if (delay === undefined) {
        markLast('failed');
        break;
      }
      await sleep(delay);
    }
    sub.consecutiveDrops += 1;
    if (sub.consecutiveDrops >= disableAfter) sub.temporarilyDisabled = true;
  };

  const pump = (subId: string) => {
    if (held || stopped || running.has(subId)) return;
    const queue = queues.get(subId);
    const item = queue?.shift();
    if (!item) {
      notifyIdle();
      return;
    }
    running.add(subId);
    void deliver(item).finally(() => {
      running.delete(subId);
      pump(subId);
      notifyIdle();
    });
  };

  const matches = (sub: Subscription, type: string, scope: PublishScope) => {
    if (!sub.active || sub.temporarilyDisabled) return false;
    if (sub.events && !sub.events.includes(type)) return false;
    if (sub.filter.type === 'service_reference') return sub.filter.id === scope.serviceId;
    if (sub.filter.type === 'team_reference') return scope.teamIds.includes(sub.filter.id);
    return true;
  };

  return {
    subscriptions,
    attempts,
    subscribe(opts: SubscribeOptions): Subscription {
      const sub: Subscription = {
        id: `PWHS${String(++subSeq).padStart(3, '0')}`,
        url: opts.url,
        secrets: [opts.secret ?? randomBytes(24).toString('base64url')],
        events: opts.events ? [...opts.events] : undefined,
        filter: opts.filter ?? { type: 'account_reference' },
        customHeaders: opts.customHeaders ?? [],
        description: opts.description ?? '',
        active: true,
        temporarilyDisabled: false,
        consecutiveDrops: 0,
      };
      subscriptions.set(sub.id, sub);
      queues.set(sub.id, []);
      return sub;
    },
    /** Starts a rotation: deliveries carry both signatures until `finishRotation`. */
    rotateSecret(newSecret: string, subscriptionId?: string) {
      for (const sub of subscriptions.values()) {
        if (subscriptionId === undefined || sub.id === subscriptionId)
          sub.secrets = [newSecret, ...sub.secrets];
      }
    },
    finishRotation(subscriptionId?: string) {
      for (const sub of subscriptions.values()) {
        if (subscriptionId === undefined || sub.id === subscriptionId) sub.secrets = sub.secrets.slice(0, 1);
      }
    },
    enable(subscriptionId: string) {
      const sub = subscriptions.get(subscriptionId);
      if (sub) {
        sub.temporarilyDisabled = false;
        sub.consecutiveDrops = 0;
      }
    },
    publish(
      type: string,
      resourceType: 'incident' | 'service',
      occurredAt: string,
      agentRef: unknown,
      client: unknown,
      data: unknown,
      scope: PublishScope,
    ) {
      if (stopped) return;
      const event = {
        id: randomUUID(),
        event_type: type,
        resource_type: resourceType,
        occurred_at: occurredAt,
        agent: agentRef,
        client,
        data,
      };
      for (const sub of subscriptions.values()) {
        if (!matches(sub, type, scope)) continue;
        const envelope: WebhookEnvelope = { event };
        const item: Queued = {
          webhookId: randomUUID(),
          subscription: sub,
          envelope,
          body: JSON.stringify(envelope),
          duplicate: false,
        };
        if (duplicateNext > 0) {
          duplicateNext -= 1;
          item.duplicate = true;
        }
        queues.get(sub.id)?.push(item);
        pump(sub.id);
      }
    },
    /** The next `count` deliveries are each sent twice, with the same X-Webhook-Id. */
    duplicateNext(count = 1) {
      duplicateNext += count;
    },
    /** Queue deliveries without sending them (deliveries already in flight finish). */
    hold() {
      held = true;
    },
    /** Send what was held; `reverse` sends each subscription's queue newest first. */
    release(opts: { reverse?: boolean } = {}) {
      held = false;
      for (const [id, q] of queues) {
        if (opts.reverse) q.reverse();
        pump(id);
      }
      notifyIdle();
    },
    heldCount: () => [...queues.values()].reduce((n, q) => n + q.length, 0),
    /** Resolves when nothing is queued or in flight (or only held deliveries remain). */
    idle(): Promise<void> {
      if (pending() === 0 || (held && running.size === 0)) return Promise.resolve();
      return new Promise((resolve) => idleWaiters.push(resolve));
    },
    async stop() {
      stopped = true;
      for (const t of timers) clearTimeout(t);
      timers.clear();
      for (const q of queues.values()) q.length = 0;
      for (const w of idleWaiters.splice(0)) w();
      await agent.close().catch(() => undefined);
    },
  };
};

export type WebhookDispatcher = ReturnType<typeof createWebhookDispatcher>;

import { ChatOpsError } from '../core/errors.ts';

/**
 * A queueing request budget: at most `perSecond` requests in any `windowMs` (a sliding window),
 * handed out in arrival order. Unlike the incident client's budget (which refuses at once and lets
 * the durable retry come back later), a caller here waits its turn: a page storm of 60 calls at 3
 * a second is 20 s of queue, not 57 refusals. A wait longer than `maxWaitMs` is refused up front
 * (SB_UPSTREAM_RATE_LIMITED with `retryAfterMs`, nothing sent), so nobody waits unboundedly.
 *
 * Time is passed in: `now()` reads the clock and `waitUntil(ms)` waits for it (default a timer;
 * tests pass a manual clock and a `waitUntil` that moves it, so a queue of 10 at 3/s is checked
 * in microseconds and without depending on the machine's speed).
 *
 * @example
 * const budget = createQueueingBudget({ name: 'voice call creation', perSecond: 3, now: () => Date.now() });
 * await budget.take('createCall'); // resolves when the request may go
 */
export type QueueingBudget = Readonly<{
  /** Waits for a slot (FIFO), then counts the request as sent. */
  take(operation: string): Promise<void>;
  /** The service answered 429 anyway (another client on the key): nothing more until `untilMs`. */
  exhaustUntil(untilMs: number): void;
  /** Callers waiting now. */
  queued(): number;
}>;

export type QueueingBudgetOptions = Readonly<{
  /** Named in errors: `voice call creation`. */
  name: string;
  vendor?: string;
  /** Requests per window; Infinity for no limit (429s still close it). */
  perSecond: number;
  /** Default 1000 ms plus `marginMs`. */
  windowMs?: number;
  /**
   * Added to the window, default 20 ms: requests leave our process a little before the vendor
   * counts them, and a request that left late must not land inside the previous window.
   */
  marginMs?: number;
  now: () => number;
  waitUntil?: (atMs: number) => Promise<void>;
  /** Longest wait accepted; beyond it the request is refused unsent. Default 60 s. */
  maxWaitMs?: number;
}>;

const timerWait =
  (now: () => number) =>
  (atMs: number): Promise<void> =>
    new Promise((resolve) => setTimeout(resolve, Math.max(0, atMs - now())));

export const createQueueingBudget = (options: QueueingBudgetOptions): QueueingBudget => {
  const limit = options.perSecond === Infinity ? Infinity : Math.max(1, Math.floor(options.perSecond));
  const windowMs = (options.windowMs ?? 1000) + (options.marginMs ?? 20);
  const waitUntil = options.waitUntil ?? timerWait(options.now);
  const maxWaitMs = options.maxWaitMs ?? 60_000;
  const sent: number[] = [];
  let blockedUntil = 0;
  /** The tail of the FIFO: each taker waits for the one before it. */
  let tail: Promise<void> = Promise.resolve();
  let waiting = 0;

  /** When the next request may go, given what has been sent. */
  const freeAt = (now: number) => {
    while (sent.length > 0 && sent[0]! <= now - windowMs) sent.shift();
    const byWindow = limit !== Infinity && sent.length >= limit ? sent[sent.length - limit]! + windowMs : 0;
    return Math.max(blockedUntil, byWindow);
  };

  /** A rough forecast for callers already queued: each needs `1/limit` of a window. */
  const forecastWaitMs = (now: number) => {
    const ahead = waiting;
    const first = Math.max(0, freeAt(now) - now);
    if (limit === Infinity) return first;
    return first + Math.floor(ahead / limit) * windowMs;
  };

  return {
    take(operation) {
      const now = options.now();
      const forecast = forecastWaitMs(now);
      if (forecast > maxWaitMs) {
        return Promise.reject(
          new ChatOpsError(
            'SB_UPSTREAM_RATE_LIMITED',
            `${options.vendor ?? 'vonage'} ${operation} not sent: the ${options.name} budget is queued ${Math.ceil(forecast / 1000)} s deep`,
            {
              details: {
                vendor: options.vendor ?? 'vonage',
                operation,
                retryable: true,
                retryAfterMs: forecast,
                retryAfterSource: 'budget',
                retryAt: new Date(now + forecast).toISOString(),
              },
            },
          ),
        );
      }
      waiting += 1;
      const turn = tail.then(async () => {
        for (;;) {
          const at = freeAt(options.now());
          if (at <= options.now()) break;
          await waitUntil(at);
        }
        sent.push(options.now());
      });
      // The next taker waits for this one whether it went or failed.
      tail = turn.catch(() => undefined);
      return turn.finally(() => {
        waiting -= 1;
      });
    },
    exhaustUntil(untilMs) {
      blockedUntil = Math.max(blockedUntil, untilMs);
    },
    queued: () => waiting,
  };
};

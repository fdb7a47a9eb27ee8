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
 * const budget = createQueueingBudget({ name: 'callCreation', perSecond: 3, now: () => Date.now() });
 * const release = await budget.take('createCall'); // resolves when the request may go
 * try { await send(); } finally { release(); }
 */
export type QueueingBudget = Readonly<{
  /**
   * Waits for a slot (FIFO) and holds it while the request is out: call the returned `release`
   * when the answer (or the failure) is in. The slot's second starts then, not when the request
   * left: the service counted it on arrival, which is no later than our answer, so the next
   * request, one window after that, can never land inside the same second at the service, however
   * the network, the connection pool or a busy event loop delayed this one.
   */
  take(operation: string): Promise<() => void>;
  /** The service answered 429 anyway (another client on the key): nothing more until `untilMs`. */
  exhaustUntil(untilMs: number): void;
  /** Callers waiting now. */
  queued(): number;
  /** Requests let go whose answer is not in yet. */
  inFlight(): number;
}>;

export type QueueingBudgetOptions = Readonly<{
  /** Named in errors: `callCreation`. */
  name: string;
  vendor?: string;
  /** Requests per window; Infinity for no limit (429s still close it). */
  perSecond: number;
  /** Default 1000 ms. */
  windowMs?: number;
  /** Added to the window (default 0): slack for a service whose clock runs its windows differently. */
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
  const windowMs = (options.windowMs ?? 1000) + (options.marginMs ?? 0);
  const waitUntil = options.waitUntil ?? timerWait(options.now);
  const maxWaitMs = options.maxWaitMs ?? 60_000;
  /** One per request in the window: `at` is when its answer came, Infinity while it is out. */
  const slots: Array<{ at: number }> = [];
  let blockedUntil = 0;
  /** The tail of the FIFO: each taker waits for the one before it. */
  let tail: Promise<void> = Promise.resolve();
  let waiting = 0;
  let released: () => void = () => undefined;
  let nextRelease = new Promise<void>((resolve) => {
    released = resolve;
  });

  /** When the next request may go (Infinity: when a request still out comes back). */
  const freeAt = (now: number) => {
    for (let i = slots.length - 1; i >= 0; i--) if (slots[i]!.at <= now - windowMs) slots.splice(i, 1);
    if (limit === Infinity || slots.length < limit) return blockedUntil;
    const ats = slots.map((x) => x.at).sort((a, b) => a - b);
    return Math.max(blockedUntil, ats[slots.length - limit]! + windowMs);
  };

  /** A rough forecast for a newcomer: the head's wait, plus a window per `limit` callers ahead. */
  const forecastWaitMs = (now: number) => {
    const at = freeAt(now);
    const first = at === Infinity ? windowMs : Math.max(0, at - now);
    if (limit === Infinity) return first;
    return first + Math.floor(waiting / limit) * windowMs;
  };

  return {
    take(operation) {
      const now = options.now();
      const forecast = forecastWaitMs(now);
      if (forecast > maxWaitMs) {
        const vendor = options.vendor ?? 'vonage';
        return Promise.reject(
          new ChatOpsError(
            'SB_UPSTREAM_RATE_LIMITED',
            `${vendor} ${operation} not sent: the ${options.name} budget is queued ${Math.ceil(forecast / 1000)} s deep`,
            {
              details: {
                vendor,
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
          await (at === Infinity ? nextRelease : waitUntil(at));
        }
        const slot = { at: Infinity };
        slots.push(slot);
        let done = false;
        return () => {
          if (done) return;
          done = true;
          slot.at = options.now();
          const wake = released;
          nextRelease = new Promise<void>((resolve) => {
            released = resolve;
          });
          wake();
        };
      });
      // The next taker waits for this one whether it went or failed.
      tail = turn.then(
        () => undefined,
        () => undefined,
      );
      return turn.finally(() => {
        waiting -= 1;
      });
    },
    exhaustUntil(untilMs) {
      blockedUntil = Math.max(blockedUntil, untilMs);
    },
    queued: () => waiting,
    inFlight: () => slots.filter((x) => x.at === Infinity).length,
  };
};

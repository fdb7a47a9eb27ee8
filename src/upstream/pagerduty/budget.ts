import { ChatOpsError } from '../../core/errors.ts';
import type { UpstreamHttp } from '../http.ts';

/**
 * The REST API's rate limit: 960 requests a minute per API key
 * (https://developer.pagerduty.com/docs/rest-api-rate-limits). Every caller of one client (identity
 * lookups, the service directory, `/oncall`, the reactors) draws on the same budget.
 */
export const PAGERDUTY_REQUESTS_PER_MINUTE = 960;
const BUDGET_WINDOW_MS = 60_000;

export type RequestBudget = Readonly<{
  /**
   * Takes one request from the budget, or throws SB_UPSTREAM_RATE_LIMITED (nothing sent) with
   * `details.retryAfterMs` and `details.retryAt`: when the budget frees. The durable upstream-call
   * mechanism schedules its retry then; a user's query says when to try again.
   */
  take(operation: string): void;
  /** The service answered 429 anyway (another client on the key): nothing more until `untilMs`. */
  exhaustUntil(untilMs: number): void;
}>;

/**
 * A sliding one-minute window of the requests sent. `now` is the clock to count on (pass the app's;
 * tests pass a manual one).
 *
 * @example
 * const budget = createRequestBudget({ perMinute: PAGERDUTY_REQUESTS_PER_MINUTE, now: () => clock.now().getTime() });
 */
export const createRequestBudget = (
  options: Readonly<{ perMinute: number; now: () => number }>,
): RequestBudget => {
  const perMinute = Math.max(1, Math.floor(options.perMinute));
  const sent: number[] = [];
  let blockedUntil = 0;
  return {
    take(operation) {
      const now = options.now();
      while (sent.length > 0 && sent[0]! <= now - BUDGET_WINDOW_MS) sent.shift();
      const freeAt = Math.max(
        blockedUntil,
        sent.length >= perMinute ? sent[sent.length - perMinute]! + BUDGET_WINDOW_MS : 0,
      );
      if (freeAt > now) {
        throw new ChatOpsError(
          'SB_UPSTREAM_RATE_LIMITED',
          `pagerduty ${operation} not sent: the request budget (${perMinute} a minute) is spent until ${new Date(freeAt).toISOString()}`,
          {
            details: {
              vendor: 'pagerduty',
              operation,
              retryable: true,
              retryAfterMs: freeAt - now,
              retryAfterSource: 'budget',
              retryAt: new Date(freeAt).toISOString(),
            },
          },
        );
      }
      sent.push(now);
    },
    exhaustUntil(untilMs) {
      blockedUntil = Math.max(blockedUntil, untilMs);
    },
  };
};

/** Every request of `http` goes through the budget; a 429 the service answers anyway closes it too. */
export const budgeted = (http: UpstreamHttp, budget: RequestBudget, nowMs: () => number): UpstreamHttp => ({
  async request(req) {
    budget.take(req.operation);
    try {
      return await http.request(req);
    } catch (e) {
      const retryAfterMs = (e as { code?: unknown; details?: { retryAfterMs?: unknown } }).details
        ?.retryAfterMs;
      if ((e as { code?: unknown }).code === 'SB_UPSTREAM_RATE_LIMITED' && typeof retryAfterMs === 'number')
        budget.exhaustUntil(nowMs() + retryAfterMs);
      throw e;
    }
  },
});

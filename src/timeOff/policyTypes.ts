import type { Clock } from '../core/clock.ts';
import type { Logger } from '../logger.ts';
import type { HiBobClient } from '../upstream/hibob.ts';

/** `work()`, or `late` when it takes longer than `ms` (Slack's 3 s leave no room to wait for HR). */
export const within = async <T, L>(ms: number, work: Promise<T>, late: L): Promise<T | L> => {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<L>((resolve) => {
    timer = setTimeout(() => resolve(late), ms);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
};

/** How long HR's policy types are kept (they change rarely). */
export const POLICY_TYPES_TTL_MS = 10 * 60_000;

export type PolicyTypes = Readonly<{
  /** HR's policy types, from the cache when fresh; null when HR could not be asked within `budgetMs`. */
  get(budgetMs: number): Promise<readonly string[] | null>;
  /** The last names HR gave, however old, or null. */
  cached(): readonly string[] | null;
}>;

/**
 * HR's policy types for the edge, kept for {@link POLICY_TYPES_TTL_MS} on the app's clock. A
 * failure is logged (coded, scrubbed by the client) and answered with the last names known, if any.
 */
export const createPolicyTypes = (client: HiBobClient, clock: Clock, logger: Logger): PolicyTypes => {
  let names: readonly string[] | null = null;
  let fetchedAt = Number.NEGATIVE_INFINITY;
  let inFlight: Promise<readonly string[] | null> | null = null;
  const fetch = (): Promise<readonly string[] | null> => {
    inFlight ??= client
      .policyTypes()
      .then(
        (got) => {
          names = [...new Set(got.map((n) => n.trim()).filter((n) => n !== '' && n.length <= 100))];
          fetchedAt = clock.now().getTime();
          return names;
        },
        (e: unknown) => {
          logger.warn({ err: e }, 'HR did not give its time-off policy types');
          return names;
        },
      )
      .finally(() => {
        inFlight = null;
      });
    return inFlight;
  };
  return {
    async get(budgetMs) {
      if (names && clock.now().getTime() - fetchedAt < POLICY_TYPES_TTL_MS) return names;
      return within(budgetMs, fetch(), names);
    },
    cached: () => names,
  };
};

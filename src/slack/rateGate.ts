import { abortableSleep } from '../processors/abortableSleep.ts';

/**
 * How Slack limits a Web API method (https://docs.slack.dev/apis/web-api/rate-limits): per
 * method, per app, per workspace, in tiers of calls a minute ("Tier 3: 50+ per minute; sporadic
 * bursts are welcome"), except `chat.postMessage`, which allows about one message a second per
 * channel (short bursts allowed) besides a workspace-wide limit.
 */
export type MethodLimit = Readonly<{
  /** The limit counts per channel (chat.postMessage), not per workspace. */
  perChannel: boolean;
  /** The tier's calls a minute (the floor Slack publishes: more is usually allowed). */
  perMinute: number;
}>;

/**
 * The methods the outbox calls, with their tier
 * (https://docs.slack.dev/reference/methods/<method>, "Rate limits"). conversations.history is
 * Tier 3, but apps created after 29 May 2025 outside the Marketplace get 1 a minute: its Retry-After
 * says so, and the gate honours it.
 */
export const SLACK_METHOD_LIMITS: Readonly<Record<string, MethodLimit>> = {
  'chat.postMessage': { perChannel: true, perMinute: 60 },
  'chat.update': { perChannel: false, perMinute: 50 },
  'chat.postEphemeral': { perChannel: false, perMinute: 100 },
  'views.publish': { perChannel: false, perMinute: 100 },
  'conversations.history': { perChannel: false, perMinute: 50 },
  'conversations.open': { perChannel: false, perMinute: 50 },
};

/** Tier 3, for a method missing from the table. */
const DEFAULT_LIMIT: MethodLimit = { perChannel: false, perMinute: 50 };

/** After a Retry-After, how long calls of that scope keep to the tier's pace. */
export const RECOVERY_MS = 60_000;

export type RateGate = Readonly<{
  /** Resolves when a call of `method` (in `channel`) may be made; rejects when `signal` aborts. */
  pass(method: string, channel: string | undefined, signal: AbortSignal): Promise<void>;
  /** Slack answered 429 with `Retry-After` = `retryAfterMs` to a call of `method` in `channel`. */
  limited(method: string, channel: string | undefined, retryAfterMs: number): void;
  /** How long a call of `method` in `channel` would wait now (ms; 0: at once). */
  waitFor(method: string, channel: string | undefined): number;
}>;

export type RateGateOptions = Readonly<{
  /** Milliseconds (default `performance.now`): Retry-After is Slack's time, never the app's clock. */
  now?: () => number;
  /** Waits `ms` unless `signal` aborts first (default abortableSleep); tests pass a manual one. */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  limits?: Readonly<Record<string, MethodLimit>>;
}>;

type Scope = {
  /** No call before this (Slack's Retry-After). */
  blockedUntil: number;
  /** Until then, calls are spaced by the tier's pace. */
  pacedUntil: number;
  /** The next free slot while paced. */
  next: number;
};

/**
 * Holds calls back per method and scope (the channel for chat.postMessage, the workspace for tiered
 * methods) as Slack asks:
 * - a 429's `Retry-After` blocks that scope, and only that scope, until it has passed: every caller
 *   (all processors share one gate) waits instead of calling into another 429;
 * - then, for {@link RECOVERY_MS}, the scope's calls are spaced at the method's tier (a call a
 *   second in a channel, 50 a minute for chat.update, …) so the end of the wait is not a burst that
 *   Slack refuses at once.
 * Until Slack says otherwise nothing is held back: Slack's tiers are floors ("50+ per minute",
 * bursts welcome), and the callers already keep volume down (cards coalesce, identical redraws are
 * skipped).
 *
 * @example
 * await gate.pass('chat.postMessage', 'C0OPS', ctx.signal);
 * try { await post(); } catch (e) { const ms = retryAfterMsOf(e); if (ms !== undefined) gate.limited('chat.postMessage', 'C0OPS', ms); }
 */
export const createRateGate = (options: RateGateOptions = {}): RateGate => {
  const now = options.now ?? (() => performance.now());
  const sleep = options.sleep ?? abortableSleep;
  const limits = options.limits ?? SLACK_METHOD_LIMITS;
  const scopes = new Map<string, Scope>();

  const limitOf = (method: string): MethodLimit => limits[method] ?? DEFAULT_LIMIT;
  const idOf = (method: string, channel: string | undefined): string =>
    limitOf(method).perChannel ? `${method}|${channel ?? ''}` : method;

  /** Forgets scopes that hold nothing back any more (many channels would otherwise pile up). */
  const prune = (at: number) => {
    if (scopes.size < 1_000) return;
    for (const [id, s] of scopes) if (s.pacedUntil <= at) scopes.delete(id);
  };

  /** When a call may start, reserving its slot while the scope is paced. */
  const reserve = (method: string, channel: string | undefined): number => {
    const at = now();
    const s = scopes.get(idOf(method, channel));
    if (!s) return at;
    if (s.pacedUntil <= at) {
      scopes.delete(idOf(method, channel));
      return at;
    }
    const start = Math.max(at, s.blockedUntil, s.next);
    s.next = start + 60_000 / limitOf(method).perMinute;
    return start;
  };

  return {
    async pass(method, channel, signal) {
      for (;;) {
        const wait = reserve(method, channel) - now();
        if (wait <= 0) return;
        await sleep(wait, signal);
        // A Retry-After that came in meanwhile moves the slot: look again.
        const s = scopes.get(idOf(method, channel));
        if (!s || s.blockedUntil <= now()) return;
      }
    },
    limited(method, channel, retryAfterMs) {
      const at = now();
      prune(at);
      const id = idOf(method, channel);
      const until = at + Math.max(0, retryAfterMs);
      const s = scopes.get(id);
      const blockedUntil = Math.max(s?.blockedUntil ?? 0, until);
      scopes.set(id, { blockedUntil, pacedUntil: blockedUntil + RECOVERY_MS, next: blockedUntil });
    },
    waitFor(method, channel) {
      const s = scopes.get(idOf(method, channel));
      const at = now();
      if (!s || s.pacedUntil <= at) return 0;
      return Math.max(0, Math.max(s.blockedUntil, s.next) - at);
    },
  };
};

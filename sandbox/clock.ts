import type { Clock } from '../src/core/clock.ts';

/**
 * The sandbox's clock: real time plus an offset that only ever grows. Time flows as it does
 * outside (timers fire, HR's lag passes, calls ring out), and the console can move it forward
 * ("+1 day", "+1 week") to see what happens next week without waiting a week: the bot, every
 * simulator, the Slack surface's request signatures and the console all read this one clock, so
 * they agree on what time it is. It never goes back (an event store whose clock jumps back would
 * record effects before their causes).
 *
 * Sandbox only: nothing in `src/` knows of it (the bot takes any `Clock`).
 *
 * @example
 * const clock = createSandboxClock({ startAt: '2026-11-23T09:00:00Z' });
 * clock.advance(7 * 24 * 3600_000); // next week
 */

export type SandboxClock = Clock &
  Readonly<{
    nowMs(): number;
    /** How far ahead of real time the sandbox is (ms, ≥ 0 unless started in the past). */
    offsetMs(): number;
    /** Moves the clock forward by `ms` (a whole, positive number at most {@link MAX_ADVANCE_MS}). */
    advance(ms: number): void;
    /** Called after every advance with the new time. Returns the unsubscribe function. */
    onAdvance(listener: (now: Date) => void): () => void;
  }>;

/** The most one advance moves the clock: 31 days. */
export const MAX_ADVANCE_MS = 31 * 24 * 3600_000;

export class ClockInputError extends Error {
  readonly status = 400;
}

export type SandboxClockOptions = Readonly<{
  /** The sandbox's time now (default: real time). */
  startAt?: Date | string;
  /** A saved offset from real time (a restored world's); wins over `startAt`. */
  offsetMs?: number;
  /** Real time in ms (default Date.now); tests of the clock pass their own. */
  realNow?: () => number;
}>;

export const createSandboxClock = (options: SandboxClockOptions = {}): SandboxClock => {
  const realNow = options.realNow ?? Date.now;
  let offset = 0;
  if (options.offsetMs !== undefined) {
    if (!Number.isFinite(options.offsetMs))
      throw new ClockInputError('the saved clock offset is not a number');
    offset = Math.round(options.offsetMs);
  } else if (options.startAt !== undefined) {
    const start = new Date(options.startAt).getTime();
    if (!Number.isFinite(start))
      throw new ClockInputError(`startAt is not a time: ${String(options.startAt)}`);
    offset = start - realNow();
  }
  const listeners = new Set<(now: Date) => void>();
  const nowMs = () => realNow() + offset;
  return {
    now: () => new Date(nowMs()),
    nowMs,
    offsetMs: () => offset,
    advance(ms) {
      if (!Number.isInteger(ms) || ms <= 0 || ms > MAX_ADVANCE_MS)
        throw new ClockInputError('the clock moves forward only, by a whole number of ms up to 31 days');
      offset += ms;
      const at = new Date(nowMs());
      for (const l of listeners) l(at);
    },
    onAdvance(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
};

/**
 * What the console asks for (`POST /api/clock/advance` `{ minutes }`), checked: a whole number of
 * minutes from 1 to 31 days. Returns milliseconds.
 */
export const parseAdvance = (body: Readonly<Record<string, unknown>>): number => {
  const minutes = body['minutes'];
  if (
    typeof minutes !== 'number' ||
    !Number.isInteger(minutes) ||
    minutes < 1 ||
    minutes * 60_000 > MAX_ADVANCE_MS
  )
    throw new ClockInputError('minutes must be a whole number from 1 to 44640 (31 days)');
  return minutes * 60_000;
};

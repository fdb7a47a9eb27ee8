import type { Switchboard } from '../../src/app.ts';

/** Something that delivers to the app on its own (a simulator's webhooks): idle once nothing is in flight. */
export type Deliveries = Readonly<{ idle(): Promise<void> }>;

export type SettleOptions = Readonly<{
  /** The simulators' webhook senders (`sim.webhooks`): what they are sending is waited for too. */
  deliveries?: readonly Deliveries[];
  /**
   * Fails with what is still moving after this long (default 45 s). A bound for a system that never
   * settles (a bug), not a wait: settle returns as soon as everything is still.
   */
  timeoutMs?: number;
}>;

/** Timers the scheduler holds that are due by the app's clock and not held back after a failure. */
export const dueTimers = (sb: Pick<Switchboard, 'scheduler' | 'clock'>): string[] => {
  const now = sb.clock.now().getTime();
  return sb.scheduler
    .pending()
    .filter((t) => t.dueAt.getTime() <= now && (t.nextTryAt === undefined || t.nextTryAt.getTime() <= now))
    .map((t) => t.timerId);
};

/**
 * Waits until the app has nothing left to do: the simulators' webhooks delivered, every timer due
 * by the app's clock fired (the scheduler is asked at once, not at its next poll), every processor
 * caught up with the store, and a whole round of that appended nothing new. What a test does after
 * clicking, posting or moving a manual clock, instead of waiting for wall time to pass.
 *
 * @example
 * clock.advance(5 * MINUTE);
 * await settle(h.sb, { deliveries: [pd.webhooks, vonage.webhooks] });
 */
export const settle = async (
  sb: Pick<Switchboard, 'store' | 'processors' | 'scheduler' | 'clock'>,
  options: SettleOptions = {},
): Promise<void> => {
  const timeoutMs = options.timeoutMs ?? 45_000;
  const deadline = Date.now() + timeoutMs;
  const left = () => Math.max(1, deadline - Date.now());
  const deliveries = options.deliveries ?? [];
  const delivered = () => Promise.all(deliveries.map((d) => d.idle()));
  for (;;) {
    const before = await sb.store.headPosition();
    await delivered();
    await sb.scheduler.tick();
    await sb.processors.waitForIdle(left());
    await delivered();
    const after = await sb.store.headPosition();
    const due = dueTimers(sb);
    if (after === before && due.length === 0) return;
    if (Date.now() > deadline) {
      throw new Error(
        `the app did not settle within ${timeoutMs} ms: store head ${String(before)} → ${String(after)}, due timers: ${due.join(', ') || 'none'}`,
      );
    }
  }
};

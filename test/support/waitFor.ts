/**
 * The least a condition wait waits before it gives up. A wait is not a timing assertion: on a loaded
 * machine what takes 50 ms when idle can take seconds, and a wait that gives up early only turns
 * slowness into a failure. So `timeoutMs` below this is raised to it (the int tests' own timeout,
 * vitest.config.ts, still bounds the whole test); a test that means "not within N ms" asserts that
 * with a manual clock instead.
 */
export const WAIT_PATIENCE_MS = 60_000;

/**
 * Polls `check` until it returns something other than `undefined`/`false` (or stops throwing),
 * then resolves with that value. Rejects with the last failure after `timeoutMs` (at least
 * WAIT_PATIENCE_MS).
 *
 * @example
 * const fired = await waitFor(async () => (await readTimer(store, 't1')).status === 'fired' || undefined);
 */
export const waitFor = async <T>(
  check: () => T | Promise<T>,
  options: Readonly<{ timeoutMs?: number; intervalMs?: number; what?: string }> = {},
): Promise<Exclude<T, false | undefined>> => {
  const deadline = Date.now() + Math.max(options.timeoutMs ?? 0, WAIT_PATIENCE_MS);
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined && value !== false) return value as Exclude<T, false | undefined>;
      last = undefined;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) {
      const reason = last instanceof Error ? `: ${last.message}` : '';
      throw new Error(`timed out waiting for ${options.what ?? 'condition'}${reason}`);
    }
    await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 5));
  }
};

/** A promise with its resolve function outside, to hold a handler until a test lets it go. */
export const gate = (): { promise: Promise<void>; open(): void; opened: boolean } => {
  let open!: () => void;
  const g = {
    promise: new Promise<void>((resolve) => {
      open = resolve;
    }),
    opened: false,
    open() {
      g.opened = true;
      open();
    },
  };
  return g;
};

/**
 * Polls `check` until it returns something other than `undefined`/`false` (or stops throwing),
 * then resolves with that value. Rejects with the last failure after `timeoutMs`.
 *
 * @example
 * const fired = await waitFor(async () => (await readTimer(store, 't1')).status === 'fired' || undefined);
 */
export const waitFor = async <T>(
  check: () => T | Promise<T>,
  options: Readonly<{ timeoutMs?: number; intervalMs?: number; what?: string }> = {},
): Promise<Exclude<T, false | undefined>> => {
  const deadline = Date.now() + (options.timeoutMs ?? 5_000);
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

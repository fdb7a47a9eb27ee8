/**
 * Waits `ms`, or rejects as soon as `signal` aborts (a processor's signal aborts when the runner
 * stops, so a wait for Slack's Retry-After never holds a shutdown).
 *
 * @example
 * await abortableSleep(retryAfterMs, ctx.signal);
 */
export const abortableSleep = (ms: number, signal: AbortSignal): Promise<void> =>
  new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(signal.reason ?? new Error('aborted'));
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason ?? new Error('aborted'));
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });

import { asError } from '../core/errors.ts';
import type { EventStore } from '../eventStore/eventStore.ts';
import { type Metrics, PROMETHEUS_CONTENT_TYPE } from '../metrics.ts';
import { type Route, sendJson } from './server.ts';

/**
 * Health, readiness and metrics, on the main port:
 * - `GET /healthz`: the process is alive and serving (liveness; no dependencies checked).
 * - `GET /readyz`: every readiness probe passes (the store is open, processors are within lag):
 *   200 or 503, with each probe's result as JSON.
 * - `GET /metrics`: Prometheus text.
 *
 * Other parts register probes: `readiness.add(processorLagProbe(...))`.
 */
export type ProbeResult = Readonly<{ ok: boolean; detail?: string }>;

export type ReadinessProbe = Readonly<{
  name: string;
  check(): ProbeResult | Promise<ProbeResult>;
}>;

export type ReadinessReport = Readonly<{ ok: boolean; probes: Record<string, ProbeResult> }>;

export type Readiness = Readonly<{
  add(probe: ReadinessProbe): void;
  check(): Promise<ReadinessReport>;
}>;

const PROBE_TIMEOUT_MS = 1_000;

export const createReadiness = (): Readiness => {
  const probes: ReadinessProbe[] = [];
  const run = async (probe: ReadinessProbe): Promise<ProbeResult> => {
    let timer: NodeJS.Timeout | undefined;
    try {
      return await Promise.race([
        Promise.resolve(probe.check()),
        new Promise<ProbeResult>((resolve) => {
          timer = setTimeout(
            () => resolve({ ok: false, detail: `no answer within ${PROBE_TIMEOUT_MS} ms` }),
            PROBE_TIMEOUT_MS,
          );
        }),
      ]);
    } catch (e) {
      return { ok: false, detail: asError(e).message };
    } finally {
      clearTimeout(timer);
    }
  };
  return {
    add(probe) {
      if (probes.some((p) => p.name === probe.name))
        throw new TypeError(`readiness probe ${probe.name} added twice`);
      probes.push(probe);
    },
    async check() {
      const results = await Promise.all(probes.map(async (p) => [p.name, await run(p)] as const));
      return { ok: results.every(([, r]) => r.ok), probes: Object.fromEntries(results) };
    },
  };
};

export const storeProbe = (store: EventStore): ReadinessProbe => ({
  name: 'eventStore',
  check: () =>
    store.isOpen() ? { ok: true, detail: store.kind } : { ok: false, detail: `${store.kind} store closed` },
});

/**
 * Ready while a processor is at most `maxLag` events behind the store head.
 *
 * @example readiness.add(processorLagProbe('slack-replies', () => runner.lag(), 1000));
 */
export const processorLagProbe = (
  processorId: string,
  lag: () => number | Promise<number>,
  maxLag: number,
): ReadinessProbe => ({
  name: `processor:${processorId}`,
  check: async () => {
    const behind = await lag();
    return { ok: behind <= maxLag, detail: `${behind} events behind (max ${maxLag})` };
  },
});

/** While shutting down, the server answers every route 503 itself (so /readyz fails at once). */
export const opsRoutes = (
  deps: Readonly<{
    readiness: Readiness;
    metrics: Metrics;
    /** Refreshes values that are read at scrape time (processor lag). */
    beforeMetrics?: () => Promise<void>;
  }>,
): Route[] => [
  {
    method: 'GET',
    path: '/healthz',
    handler: (_req, res) => sendJson(res, 200, { ok: true, status: 'alive' }),
  },
  {
    method: 'GET',
    path: '/readyz',
    handler: async (_req, res) => {
      const report = await deps.readiness.check();
      sendJson(res, report.ok ? 200 : 503, report);
    },
  },
  {
    method: 'GET',
    path: '/metrics',
    handler: async (_req, res) => {
      // A failed refresh (store closed) leaves the last values; the scrape still answers.
      await deps.beforeMetrics?.().catch(() => undefined);
      const text = await deps.metrics.registry.render();
      res.writeHead(200, {
        'content-type': PROMETHEUS_CONTENT_TYPE,
        'content-length': Buffer.byteLength(text),
      });
      res.end(text);
    },
  },
];

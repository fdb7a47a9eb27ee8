import * as prom from 'prom-client';

/**
 * Switchboard's Prometheus metrics, on `prom-client` (text exposition format 0.0.4). Each
 * `createMetrics()` has its own registry (tests run several apps in one process). The classes
 * below are thin: they keep the small surface the code uses (`inc`, `set`, `observe`,
 * `startTimer`, `render`), order labels as declared, and refuse undeclared labels, negative
 * counter steps and a name registered twice.
 *
 * @example
 * const metrics = createMetrics();
 * metrics.upstreamCalls.inc({ service: 'slack', operation: 'chat.update', status: '429' });
 * metrics.processorLag.set({ processor: 'slack-replies' }, 3);
 * res.end(await metrics.registry.render());
 */

export type Labels = Readonly<Record<string, string>>;

type Declared = Readonly<{ name: string; labelNames: readonly string[] }>;

/** The labels in declared order (as rendered); throws on a label that was not declared. */
const declared = (metric: Declared, labels: Labels): Record<string, string> => {
  for (const k of Object.keys(labels)) {
    if (!metric.labelNames.includes(k)) throw new TypeError(`${metric.name}: unknown label ${k}`);
  }
  const ordered: Record<string, string> = {};
  for (const n of metric.labelNames) if (labels[n] !== undefined) ordered[n] = labels[n];
  return ordered;
};

type Sample = { labels: Partial<Record<string, string | number>>; value: number; metricName?: string };

/** The sample with exactly these labels (and this series name, for histograms), if any. */
const sampleOf = (
  metric: Declared,
  samples: readonly Sample[],
  labels: Labels,
  metricName?: string,
): Sample | undefined => {
  const wanted = declared(metric, labels);
  return samples.find(
    (s) =>
      (metricName === undefined || s.metricName === metricName) &&
      metric.labelNames.every(
        (n) => (s.labels[n] === undefined ? undefined : String(s.labels[n])) === wanted[n],
      ),
  );
};

export class Counter {
  readonly type = 'counter';
  readonly name: string;
  readonly help: string;
  readonly labelNames: readonly string[];
  readonly #metric: prom.Counter;
  constructor(registry: prom.Registry, name: string, help: string, labelNames: readonly string[] = []) {
    this.name = name;
    this.help = help;
    this.labelNames = labelNames;
    this.#metric = new prom.Counter({ name, help, labelNames: [...labelNames], registers: [registry] });
  }
  inc(labels: Labels = {}, by = 1): void {
    if (by < 0) throw new RangeError(`${this.name}: counters only go up`);
    this.#metric.inc(declared(this, labels), by);
  }
  /** The current value for these labels (0 if never counted). */
  async value(labels: Labels = {}): Promise<number> {
    return sampleOf(this, (await this.#metric.get()).values, labels)?.value ?? 0;
  }
}

export class Gauge {
  readonly type = 'gauge';
  readonly name: string;
  readonly help: string;
  readonly labelNames: readonly string[];
  readonly #metric: prom.Gauge;
  /** `collect` computes values at scrape time (memory, uptime). */
  constructor(
    registry: prom.Registry,
    name: string,
    help: string,
    labelNames: readonly string[] = [],
    collect?: (gauge: Gauge) => void,
  ) {
    this.name = name;
    this.help = help;
    this.labelNames = labelNames;
    this.#metric = new prom.Gauge({
      name,
      help,
      labelNames: [...labelNames],
      registers: [registry],
      ...(collect ? { collect: () => collect(this) } : {}),
    });
  }
  set(labels: Labels, value: number): void {
    this.#metric.set(declared(this, labels), value);
  }
  inc(labels: Labels = {}, by = 1): void {
    this.#metric.inc(declared(this, labels), by);
  }
  dec(labels: Labels = {}, by = 1): void {
    this.#metric.dec(declared(this, labels), by);
  }
  /** The current value for these labels, undefined if never set. */
  async value(labels: Labels = {}): Promise<number | undefined> {
    return sampleOf(this, (await this.#metric.get()).values, labels)?.value;
  }
}

export class Histogram {
  readonly type = 'histogram';
  readonly name: string;
  readonly help: string;
  readonly labelNames: readonly string[];
  readonly buckets: readonly number[];
  readonly #metric: prom.Histogram;
  constructor(
    registry: prom.Registry,
    name: string,
    help: string,
    labelNames: readonly string[],
    buckets: readonly number[],
  ) {
    this.name = name;
    this.help = help;
    this.labelNames = labelNames;
    this.buckets = [...buckets].sort((a, b) => a - b);
    this.#metric = new prom.Histogram({
      name,
      help,
      labelNames: [...labelNames],
      buckets: [...this.buckets],
      registers: [registry],
    });
  }
  observe(labels: Labels, value: number): void {
    this.#metric.observe(declared(this, labels), value);
  }
  /** Starts a timer; call the result to observe the elapsed seconds. */
  startTimer(labels: Labels = {}): (more?: Labels) => number {
    const start = process.hrtime.bigint();
    return (more = {}) => {
      const seconds = Number(process.hrtime.bigint() - start) / 1e9;
      this.observe({ ...labels, ...more }, seconds);
      return seconds;
    };
  }
  /** How many observations these labels have. */
  async count(labels: Labels = {}): Promise<number> {
    return sampleOf(this, (await this.#metric.get()).values, labels, `${this.name}_count`)?.value ?? 0;
  }
}

export class MetricsRegistry {
  /** prom-client's registry underneath, for anything the methods here do not cover. */
  readonly prometheus = new prom.Registry();

  private claim(name: string): void {
    if (this.prometheus.getSingleMetric(name)) throw new TypeError(`metric ${name} registered twice`);
  }
  counter(name: string, help: string, labelNames: readonly string[] = []): Counter {
    this.claim(name);
    return new Counter(this.prometheus, name, help, labelNames);
  }
  gauge(
    name: string,
    help: string,
    labelNames: readonly string[] = [],
    collect?: (gauge: Gauge) => void,
  ): Gauge {
    this.claim(name);
    return new Gauge(this.prometheus, name, help, labelNames, collect);
  }
  histogram(
    name: string,
    help: string,
    labelNames: readonly string[],
    buckets: readonly number[],
  ): Histogram {
    this.claim(name);
    return new Histogram(this.prometheus, name, help, labelNames, buckets);
  }
  /**
   * Prometheus text exposition format, one metric family after another (prom-client separates
   * them with a blank line; the format does not need one, and `/metrics` has never had one).
   */
  async render(): Promise<string> {
    return (await this.prometheus.metrics()).replace(/\n\n+/g, '\n');
  }
}

export const PROMETHEUS_CONTENT_TYPE: string = prom.Registry.PROMETHEUS_CONTENT_TYPE;

const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 3, 5, 10];

export type Metrics = Readonly<{
  registry: MetricsRegistry;
  /** Every HTTP request by route (`/slack/events`, `/webhooks/pagerduty`, …), method and status. */
  httpRequests: Counter;
  httpDuration: Histogram;
  /** Time from a Slack request's arrival to its ack being written, by input kind. */
  ackLatency: Histogram;
  /** Slack inputs and webhook deliveries by source/kind and outcome (recorded, duplicate, failed, refused). */
  inputs: Counter;
  /** Event store appends by stream category and result (appended, deduplicated, failed). */
  appends: Counter;
  /** Events between a processor's checkpoint and the store head; set by the processor runner. */
  processorLag: Gauge;
  processorParked: Gauge;
  /**
   * 1 for each processor this replica runs under a claim, 0 for one another replica holds (labels:
   * processor, replica = this replica's id). Summed over replicas it is 1 per processor.
   */
  processorClaimHeld: Gauge;
  /** Outbound calls by service (`slack`, `pagerduty`, …), operation and status (HTTP code or error code). */
  upstreamCalls: Counter;
  /** Retries of outbound calls by service and reason (`rate_limited`, `server_error`, `network`). */
  retries: Counter;
}>;

export const createMetrics = (): Metrics => {
  const registry = new MetricsRegistry();
  const metrics: Metrics = {
    registry,
    httpRequests: registry.counter('switchboard_http_requests_total', 'HTTP requests answered', [
      'route',
      'method',
      'status',
    ]),
    httpDuration: registry.histogram(
      'switchboard_http_request_duration_seconds',
      'Time to answer an HTTP request',
      ['route'],
      LATENCY_BUCKETS,
    ),
    ackLatency: registry.histogram(
      'switchboard_slack_ack_duration_seconds',
      "Time from a Slack request's arrival to its acknowledgement (Slack's wall is 3 s)",
      ['kind'],
      LATENCY_BUCKETS,
    ),
    inputs: registry.counter('switchboard_inputs_total', 'Slack inputs and webhook deliveries received', [
      'source',
      'kind',
      'result',
    ]),
    appends: registry.counter('switchboard_event_store_appends_total', 'Event store appends', [
      'category',
      'result',
    ]),
    processorLag: registry.gauge(
      'switchboard_processor_lag_events',
      "Events between a processor's checkpoint and the head of the store",
      ['processor'],
    ),
    processorParked: registry.gauge(
      'switchboard_processor_parked_events',
      'Events a processor gave up on (parked) and that were not replayed successfully',
      ['processor'],
    ),
    processorClaimHeld: registry.gauge(
      'switchboard_processor_claim_held',
      'Whether this replica holds the claim of a processor that runs on one replica at a time',
      ['processor', 'replica'],
    ),
    upstreamCalls: registry.counter(
      'switchboard_upstream_calls_total',
      'Calls to Slack and the upstream services',
      ['service', 'operation', 'status'],
    ),
    retries: registry.counter('switchboard_upstream_retries_total', 'Retries of outbound calls', [
      'service',
      'reason',
    ]),
  };
  // The process, under the names and help texts Switchboard has always exposed. prom-client's
  // collectDefaultMetrics is left out: it starts process-wide monitors (event-loop delay, GC
  // observer) for each registry that nothing can stop, and its process_* series would clash
  // with these.
  registry
    .gauge('process_start_time_seconds', 'Start time of the process since the Unix epoch')
    .set({}, performance.timeOrigin / 1000);
  registry.gauge('process_resident_memory_bytes', 'Resident memory size in bytes', [], (g) =>
    g.set({}, process.memoryUsage.rss()),
  );
  registry.gauge('nodejs_heap_used_bytes', 'V8 heap in use, in bytes', [], (g) =>
    g.set({}, process.memoryUsage().heapUsed),
  );
  return metrics;
};

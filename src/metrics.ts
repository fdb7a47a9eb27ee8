/**
 * A small Prometheus registry (text exposition format 0.0.4) and Switchboard's metrics.
 * No client library: counters, gauges and histograms with labels are all `/metrics` needs.
 *
 * @example
 * const metrics = createMetrics();
 * metrics.upstreamCalls.inc({ service: 'slack', operation: 'chat.update', status: '429' });
 * metrics.processorLag.set({ processor: 'slack-replies' }, 3);
 * res.end(metrics.registry.render());
 */

export type Labels = Readonly<Record<string, string>>;

type MetricType = 'counter' | 'gauge' | 'histogram';

interface Metric {
  readonly name: string;
  readonly help: string;
  readonly type: MetricType;
  render(): string[];
}

const escapeLabel = (v: string): string =>
  v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
const renderLabels = (labels: Labels, extra?: Labels): string => {
  const all = { ...labels, ...extra };
  const keys = Object.keys(all);
  if (keys.length === 0) return '';
  return `{${keys.map((k) => `${k}="${escapeLabel(all[k] ?? '')}"`).join(',')}}`;
};
const renderValue = (v: number): string =>
  Number.isFinite(v) ? String(v) : v > 0 ? '+Inf' : v < 0 ? '-Inf' : 'NaN';

/** Label values keyed by a stable string, keeping the label object for rendering. */
class Series<V> {
  readonly entries = new Map<string, { labels: Labels; value: V }>();
  readonly labelNames: readonly string[];
  readonly metricName: string;
  constructor(metricName: string, labelNames: readonly string[]) {
    this.metricName = metricName;
    this.labelNames = labelNames;
  }
  key(labels: Labels): string {
    for (const k of Object.keys(labels)) {
      if (!this.labelNames.includes(k)) throw new TypeError(`${this.metricName}: unknown label ${k}`);
    }
    return this.labelNames.map((n) => labels[n] ?? '').join('\u0000');
  }
  get(labels: Labels, init: () => V): { labels: Labels; value: V } {
    const k = this.key(labels);
    let e = this.entries.get(k);
    if (!e) {
      const ordered: Record<string, string> = {};
      for (const n of this.labelNames) if (labels[n] !== undefined) ordered[n] = labels[n];
      e = { labels: ordered, value: init() };
      this.entries.set(k, e);
    }
    return e;
  }
}

export class Counter implements Metric {
  readonly type = 'counter';
  readonly name: string;
  readonly help: string;
  readonly series: Series<number>;
  constructor(name: string, help: string, labelNames: readonly string[] = []) {
    this.name = name;
    this.help = help;
    this.series = new Series(name, labelNames);
  }
  inc(labels: Labels = {}, by = 1): void {
    if (by < 0) throw new RangeError(`${this.name}: counters only go up`);
    this.series.get(labels, () => 0).value += by;
  }
  value(labels: Labels = {}): number {
    return this.series.entries.get(this.series.key(labels))?.value ?? 0;
  }
  render(): string[] {
    return [...this.series.entries.values()].map(
      (e) => `${this.name}${renderLabels(e.labels)} ${renderValue(e.value)}`,
    );
  }
}

export class Gauge implements Metric {
  readonly type = 'gauge';
  readonly name: string;
  readonly help: string;
  readonly series: Series<number>;
  /** Optional: computes values at scrape time (memory, uptime). */
  collect: (() => void) | undefined;
  constructor(name: string, help: string, labelNames: readonly string[] = []) {
    this.name = name;
    this.help = help;
    this.series = new Series(name, labelNames);
  }
  set(labels: Labels, value: number): void {
    this.series.get(labels, () => 0).value = value;
  }
  inc(labels: Labels = {}, by = 1): void {
    this.series.get(labels, () => 0).value += by;
  }
  dec(labels: Labels = {}, by = 1): void {
    this.inc(labels, -by);
  }
  value(labels: Labels = {}): number | undefined {
    return this.series.entries.get(this.series.key(labels))?.value;
  }
  render(): string[] {
    this.collect?.();
    return [...this.series.entries.values()].map(
      (e) => `${this.name}${renderLabels(e.labels)} ${renderValue(e.value)}`,
    );
  }
}

type HistogramState = { counts: number[]; sum: number; count: number };

export class Histogram implements Metric {
  readonly type = 'histogram';
  readonly name: string;
  readonly help: string;
  readonly buckets: readonly number[];
  readonly series: Series<HistogramState>;
  constructor(name: string, help: string, labelNames: readonly string[], buckets: readonly number[]) {
    this.name = name;
    this.help = help;
    this.buckets = [...buckets].sort((a, b) => a - b);
    this.series = new Series(name, labelNames);
  }
  observe(labels: Labels, value: number): void {
    const s = this.series.get(labels, () => ({ counts: this.buckets.map(() => 0), sum: 0, count: 0 })).value;
    for (let i = 0; i < this.buckets.length; i++) if (value <= this.buckets[i]!) s.counts[i]!++;
    s.sum += value;
    s.count++;
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
  count(labels: Labels = {}): number {
    return this.series.entries.get(this.series.key(labels))?.value.count ?? 0;
  }
  render(): string[] {
    const lines: string[] = [];
    for (const { labels, value } of this.series.entries.values()) {
      this.buckets.forEach((b, i) => {
        lines.push(`${this.name}_bucket${renderLabels(labels, { le: String(b) })} ${value.counts[i]}`);
      });
      lines.push(`${this.name}_bucket${renderLabels(labels, { le: '+Inf' })} ${value.count}`);
      lines.push(`${this.name}_sum${renderLabels(labels)} ${renderValue(value.sum)}`);
      lines.push(`${this.name}_count${renderLabels(labels)} ${value.count}`);
    }
    return lines;
  }
}

export class MetricsRegistry {
  readonly metrics = new Map<string, Metric>();

  private add<M extends Metric>(metric: M): M {
    if (!/^[a-zA-Z_:][a-zA-Z0-9_:]*$/.test(metric.name))
      throw new TypeError(`bad metric name ${metric.name}`);
    if (this.metrics.has(metric.name)) throw new TypeError(`metric ${metric.name} registered twice`);
    this.metrics.set(metric.name, metric);
    return metric;
  }
  counter(name: string, help: string, labelNames: readonly string[] = []): Counter {
    return this.add(new Counter(name, help, labelNames));
  }
  gauge(name: string, help: string, labelNames: readonly string[] = []): Gauge {
    return this.add(new Gauge(name, help, labelNames));
  }
  histogram(
    name: string,
    help: string,
    labelNames: readonly string[],
    buckets: readonly number[],
  ): Histogram {
    return this.add(new Histogram(name, help, labelNames, buckets));
  }
  /** Prometheus text exposition format. */
  render(): string {
    const out: string[] = [];
    for (const m of this.metrics.values()) {
      out.push(`# HELP ${m.name} ${m.help.replace(/\\/g, '\\\\').replace(/\n/g, '\\n')}`);
      out.push(`# TYPE ${m.name} ${m.type}`);
      out.push(...m.render());
    }
    return `${out.join('\n')}\n`;
  }
}

export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

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
  const started = Date.now() / 1000;
  const startTime = registry.gauge(
    'process_start_time_seconds',
    'Start time of the process since the Unix epoch',
  );
  startTime.set({}, started);
  const rss = registry.gauge('process_resident_memory_bytes', 'Resident memory size in bytes');
  rss.collect = () => rss.set({}, process.memoryUsage.rss());
  const heap = registry.gauge('nodejs_heap_used_bytes', 'V8 heap in use, in bytes');
  heap.collect = () => heap.set({}, process.memoryUsage().heapUsed);
  return metrics;
};

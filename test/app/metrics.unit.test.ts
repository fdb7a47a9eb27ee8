import { describe, expect, it } from 'vitest';
import { createMetrics, MetricsRegistry } from '../../src/metrics.ts';

describe('metrics registry', () => {
  it('renders counters, gauges and histograms in Prometheus text format', async () => {
    const registry = new MetricsRegistry();
    const c = registry.counter('x_requests_total', 'Requests', ['route', 'status']);
    c.inc({ route: '/slack/events', status: '200' });
    c.inc({ route: '/slack/events', status: '200' }, 2);
    const g = registry.gauge('x_lag', 'Lag', ['processor']);
    g.set({ processor: 'a"b' }, 5);
    const h = registry.histogram('x_seconds', 'Latency', [], [0.01, 0.1]);
    h.observe({}, 0.005);
    h.observe({}, 0.05);
    h.observe({}, 1);
    expect(await registry.render()).toBe(
      [
        '# HELP x_requests_total Requests',
        '# TYPE x_requests_total counter',
        'x_requests_total{route="/slack/events",status="200"} 3',
        '# HELP x_lag Lag',
        '# TYPE x_lag gauge',
        'x_lag{processor="a\\"b"} 5',
        '# HELP x_seconds Latency',
        '# TYPE x_seconds histogram',
        'x_seconds_bucket{le="0.01"} 1',
        'x_seconds_bucket{le="0.1"} 2',
        'x_seconds_bucket{le="+Inf"} 3',
        'x_seconds_sum 1.055',
        'x_seconds_count 3',
        '',
      ].join('\n'),
    );
  });

  it('refuses unknown labels, negative counter steps and duplicate names', () => {
    const registry = new MetricsRegistry();
    const c = registry.counter('y_total', 'Y', ['a']);
    expect(() => c.inc({ b: '1' })).toThrow(/unknown label b/);
    expect(() => c.inc({ a: '1' }, -1)).toThrow(/only go up/);
    expect(() => registry.counter('y_total', 'again')).toThrow(/twice/);
  });

  it('exposes the standard Switchboard metrics', async () => {
    const metrics = createMetrics();
    metrics.processorLag.set({ processor: 'slack-replies' }, 3);
    const text = await metrics.registry.render();
    for (const name of [
      'switchboard_http_requests_total',
      'switchboard_slack_ack_duration_seconds',
      'switchboard_event_store_appends_total',
      'switchboard_upstream_calls_total',
      'switchboard_upstream_retries_total',
      'process_resident_memory_bytes',
    ]) {
      expect(text).toContain(`# TYPE ${name}`);
    }
    expect(text).toContain('switchboard_processor_lag_events{processor="slack-replies"} 3');
  });
});

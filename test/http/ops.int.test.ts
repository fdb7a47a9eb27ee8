import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { slashCommandBody } from '../../sandbox/simulators/slack/signing.ts';
import { processorLagProbe } from '../../src/http/ops.ts';
import { startTestApp, type TestApp } from '../support/startApp.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t.stop();
});

describe('ops endpoints', () => {
  it('GET /healthz answers 200', async () => {
    const res = await fetch(`${t.url}/healthz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ok: true, status: 'alive' });
  });

  it('GET /readyz reports each probe and turns 503 when one fails', async () => {
    const ready = await fetch(`${t.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({
      ok: true,
      probes: { eventStore: { ok: true, detail: 'sqlite' }, processors: { ok: true } },
    });

    let lag = 5000;
    t.sb.readiness.add(processorLagProbe('slack-replies', () => lag, 1000));
    const behind = await fetch(`${t.url}/readyz`);
    expect(behind.status).toBe(503);
    expect(await behind.json()).toMatchObject({
      ok: false,
      probes: { 'processor:slack-replies': { ok: false, detail: '5000 events behind (max 1000)' } },
    });
    lag = 3;
    expect((await fetch(`${t.url}/readyz`)).status).toBe(200);
  });

  it('GET /metrics serves Prometheus text with requests, ack latency and appends', async () => {
    expect((await t.postSlack(slashCommandBody({ command: '/incident', text: 'help' }), 'form')).status).toBe(
      200,
    );
    const res = await fetch(`${t.url}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/plain; version=0.0.4');
    const text = await res.text();
    expect(text).toContain(
      'switchboard_http_requests_total{route="/slack/events",method="POST",status="200"} 1',
    );
    expect(text).toMatch(/switchboard_slack_ack_duration_seconds_count\{kind="slash_command"\} 1/);
    expect(text).toContain('switchboard_event_store_appends_total{category="inbox",result="appended"} 1');
    expect(text).toContain(
      'switchboard_inputs_total{source="slack",kind="slash_command",result="recorded"} 1',
    );
  });

  it('answers 404 for unknown paths', async () => {
    expect((await fetch(`${t.url}/nope`)).status).toBe(404);
  });
});

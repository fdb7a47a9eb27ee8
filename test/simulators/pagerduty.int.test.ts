import { Agent, request } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  defaultSeed,
  type PagerDutySimulator,
  startPagerDutySimulator,
} from '../../sandbox/simulators/pagerduty/index.ts';
import { type ManualClock, manualClock } from '../../src/core/clock.ts';
import { createPagerDutyClient, type PagerDutyClient } from '../../src/upstream/pagerduty.ts';
import { verifyPagerDutySignature } from '../../src/upstream/pagerdutySignature.ts';
import { startRecordingReceiver } from '../support/recordingReceiver.ts';

const NOW = '2026-11-22T10:00:00.000Z';
/** Rotations pinned to a Monday 09:00 UTC so the shifts these tests compute by hand hold on NOW. */
const ROTATION_START = '2026-01-05T09:00:00Z';
const ANA = 'ana.silva@example.org';
const BEN = 'ben.okafor@example.org';
const ROUTING_KEY = 'a1b2c3d4e5f60718293a4b5c6d7e8f90';
const ACCEPT = 'application/vnd.pagerduty+json;version=2';

let sim: PagerDutySimulator;
let clock: ManualClock;
let dispatcher: Agent;
let pd: PagerDutyClient;
let rx: Awaited<ReturnType<typeof startRecordingReceiver>>;

const start = async (options: Parameters<typeof startPagerDutySimulator>[0] = {}) => {
  sim = await startPagerDutySimulator({
    clock,
    seed: defaultSeed({ rotationStart: ROTATION_START }),
    // Generous: no test here depends on how fast the machine answers a loopback POST. The one test
    // of the timeout itself uses a receiver that never answers, with a short timeout of its own.
    webhooks: { retryDelaysMs: [10, 20, 40], timeoutMs: 10_000 },
    ...options,
  });
  pd = createPagerDutyClient({ apiUrl: sim.url, eventsUrl: sim.eventsUrl, token: sim.token, dispatcher });
};

/** A raw request, for what the typed client would never send. */
const raw = async (
  method: 'GET' | 'POST' | 'PUT',
  path: string,
  opts: { headers?: Record<string, string>; body?: unknown } = {},
) => {
  const res = await request(`${sim.url}${path}`, {
    method,
    dispatcher,
    headers: {
      accept: ACCEPT,
      'content-type': 'application/json',
      authorization: `Token token=${sim.token}`,
      ...opts.headers,
    },
    ...(opts.body === undefined ? {} : { body: JSON.stringify(opts.body) }),
  });
  return {
    status: res.statusCode,
    headers: res.headers,
    body: (await res.body.json().catch(() => undefined)) as Record<string, unknown>,
  };
};

const events = () => rx.received.map((r) => (r.json as { event: { event_type: string } }).event.event_type);

beforeEach(async () => {
  clock = manualClock(NOW);
  dispatcher = new Agent();
  rx = await startRecordingReceiver();
});

afterEach(async () => {
  try {
    sim.assertNoViolations();
  } finally {
    await sim.stop();
    await rx.stop();
    await dispatcher.close();
  }
});

describe('request validation against the vendor OpenAPI files', () => {
  beforeEach(() => start());

  it('answers 400 in the vendor shape and records a violation for a body that breaks the spec', async () => {
    const res = await raw('POST', '/incidents', {
      headers: { from: ANA },
      body: {
        incident: {
          type: 'incident',
          service: { id: 'PSVC001', type: 'service_reference' },
          urgency: 'urgent',
        },
      },
    });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: { message: 'Invalid Input Provided', code: 2001 } });
    expect((res.body.error as { errors: string[] }).errors).toEqual(
      expect.arrayContaining([
        "body: /incident missing required property 'title'",
        'body: /incident/urgency must be one of ["high","low"]',
      ]),
    );
    expect(sim.violations).toHaveLength(1);
    expect(sim.violations[0]).toMatchObject({ kind: 'request', operationId: 'createIncident' });
    expect(() => sim.assertNoViolations()).toThrow(/createIncident.*missing required property 'title'/);
    expect(sim.state.incidents.size).toBe(0);
    sim.clearViolations();
  });

  it('answers 2016 for a write without From, and records it', async () => {
    const res = await raw('POST', '/incidents', {
      body: {
        incident: { type: 'incident', title: 't', service: { id: 'PSVC001', type: 'service_reference' } },
      },
    });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: { code: 2016 } });
    expect(sim.violations[0]?.issues).toEqual([
      { where: 'header', name: 'From', message: 'required header missing' },
    ]);
    sim.clearViolations();
  });

  it('flags unknown query parameters, unknown routes and an unversioned Accept header', async () => {
    expect((await raw('GET', '/incidents?status=triggered')).status).toBe(400);
    expect((await raw('GET', '/incidentz')).status).toBe(404);
    expect((await raw('GET', '/services', { headers: { accept: 'application/json' } })).status).toBe(200);
    expect(sim.violations.map((v) => v.kind)).toEqual(['request', 'route', 'contract']);
    sim.clearViolations();
  });

  it('validates Events API bodies too', async () => {
    const res = await request(`${sim.eventsUrl}/v2/enqueue`, {
      method: 'POST',
      dispatcher,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        routing_key: ROUTING_KEY,
        event_action: 'trigger',
        payload: { summary: 'x', severity: 'fatal' },
      }),
    });
    expect(res.statusCode).toBe(400);
    expect(await res.body.json()).toMatchObject({
      status: 'invalid event',
      message: 'Event object is invalid',
    });
    expect(sim.violations[0]).toMatchObject({ server: 'events', operationId: 'createV2Event' });
    sim.clearViolations();
  });
});

describe('auth and rate limits', () => {
  it('rejects a wrong or missing token with 401 in the vendor shape', async () => {
    await start();
    for (const authorization of ['Token token=wrong', 'Bearer sim-pagerduty-token', `token=${sim.token}`]) {
      const res = await raw('GET', '/services', { headers: { authorization } });
      expect(res.status).toBe(401);
      expect(res.body).toMatchObject({ error: { message: 'Unauthorized', code: 2006 } });
    }
    expect(sim.state.incidents.size).toBe(0);
  });

  it('counts requests per minute and answers 429 with ratelimit-* headers', async () => {
    await start({ requestsPerMinute: 3 });
    for (let i = 0; i < 3; i++) {
      const ok = await raw('GET', '/services');
      expect(ok.status).toBe(200);
      expect(ok.headers['ratelimit-remaining']).toBe(String(2 - i));
    }
    clock.advance(20_000);
    const limited = await raw('GET', '/services');
    expect(limited.status).toBe(429);
    expect(limited.headers).toMatchObject({
      'ratelimit-limit': '3',
      'ratelimit-remaining': '0',
      'ratelimit-reset': '40',
    });
    expect(limited.body).toMatchObject({ error: { code: 2020 } });
    clock.advance(40_000);
    expect((await raw('GET', '/services')).status).toBe(200);
  });
});

describe('V3 webhooks', () => {
  beforeEach(() => start());

  it('signs every delivery and sends the documented headers', async () => {
    const { secret, id } = sim.subscribe({
      url: rx.url,
      secret: 'whsec-1',
      customHeaders: [{ name: 'X-Env', value: 'test' }],
    });
    const inc = await pd.createIncident({ from: ANA, serviceId: 'PSVC001', title: 'Checkout 500s' });
    await rx.waitFor(1);
    const [got] = rx.received;
    expect(got?.method).toBe('POST');
    expect(got?.headers).toMatchObject({
      'content-type': 'application/json; charset=utf-8',
      'user-agent': 'PagerDuty-Webhook/V3.0',
      'x-webhook-subscription': id,
      'x-env': 'test',
    });
    expect(got?.headers['x-webhook-id']).toMatch(/^[0-9a-f-]{36}$/);
    const signature = got?.headers['x-pagerduty-signature'] as string;
    expect(signature).toMatch(/^v1=[0-9a-f]{64}$/);
    expect(verifyPagerDutySignature(got!.rawBody, signature, [secret])).toBe(true);
    expect(verifyPagerDutySignature(got!.rawBody, signature, ['other'])).toBe(false);
    expect(got?.json).toMatchObject({
      event: {
        event_type: 'incident.triggered',
        resource_type: 'incident',
        occurred_at: NOW,
        agent: { id: 'PUSR001', type: 'user_reference' },
        client: null,
        data: {
          id: inc.id,
          type: 'incident',
          number: inc.incident_number,
          status: 'triggered',
          title: 'Checkout 500s',
          service: { id: 'PSVC001', type: 'service_reference', summary: 'Payments API' },
          assignees: [{ id: 'PUSR001', type: 'user_reference' }],
          escalation_policy: { id: 'PEP0001' },
          priority: null,
          resolve_reason: null,
        },
      },
    });
  });

  it('sends every event type for changes made through the API, the web app, the Events API and timers', async () => {
    sim.subscribe({ url: rx.url, secret: 's' });
    const inc = await pd.createIncident({ from: ANA, serviceId: 'PSVC001', title: 'db' });
    await pd.acknowledgeIncident(inc.id, BEN);
    sim.webApp.unacknowledge(inc.id);
    await pd.escalateIncident(inc.id, BEN, 2);
    await pd.reassignIncident(inc.id, BEN, { userIds: ['PUSR003'] });
    await pd.reassignIncident(inc.id, BEN, { escalationPolicyId: 'PEP0002' });
    sim.webApp.setPriority(inc.id, 'P1', ANA);
    await pd.addIncidentNote(inc.id, { from: BEN, content: 'restarted the primary' });
    sim.webApp.resolve(inc.id, ANA, 'fixed');
    sim.webApp.acknowledge(inc.id, BEN);
    await pd.enqueueEvent({
      routingKey: ROUTING_KEY,
      eventAction: 'trigger',
      dedupKey: 'e1',
      payload: { summary: 'cpu', source: 'web-1', severity: 'critical' },
    });
    const svc = sim.webApp.createService({ name: 'Search', escalationPolicyId: 'PEP0002' }, ANA);
    sim.webApp.updateService(svc.id, { description: 'Search API' }, ANA);
    await sim.webhooks.idle();
    expect(events()).toEqual([
      'incident.triggered',
      'incident.acknowledged',
      'incident.unacknowledged',
      'incident.escalated',
      'incident.reassigned',
      'incident.delegated',
      'incident.priority_updated',
      'incident.annotated',
      'incident.resolved',
      'incident.reopened',
      'incident.acknowledged',
      'incident.triggered',
      'service.created',
      'service.updated',
    ]);
    const byType = (t: string) =>
      rx.received.filter((r) => (r.json as { event: { event_type: string } }).event.event_type === t);
    expect(byType('incident.annotated')[0]?.json).toMatchObject({
      event: {
        data: {
          type: 'incident_note',
          content: 'restarted the primary',
          trimmed: false,
          incident: { id: inc.id },
        },
      },
    });
    expect(byType('incident.priority_updated')[0]?.json).toMatchObject({
      event: {
        client: { name: 'PagerDuty' },
        data: { priority: { summary: 'P1', type: 'priority_reference' } },
      },
    });
    expect(byType('incident.unacknowledged')[0]?.json).toMatchObject({
      event: { agent: null, data: { status: 'triggered' } },
    });
    expect(byType('incident.triggered')[1]?.json).toMatchObject({
      event: { agent: { id: 'PSVC001', type: 'service_reference' }, data: { incident_key: 'e1' } },
    });
    expect(byType('service.updated')[0]?.json).toMatchObject({
      event: { resource_type: 'service', data: { id: svc.id } },
    });
    expect(sim.webhooks.attempts.every((a) => a.outcome === 'delivered')).toBe(true);
  });

  it('filters by subscription scope and event list', async () => {
    sim.subscribe({
      url: rx.url,
      filter: { type: 'service_reference', id: 'PSVC003' },
      events: ['incident.resolved'],
    });
    const a = sim.webApp.trigger({ serviceId: 'PSVC001', title: 'a', byEmail: ANA });
    const b = sim.webApp.trigger({ serviceId: 'PSVC003', title: 'b', byEmail: ANA });
    sim.webApp.resolve(a.id, ANA);
    sim.webApp.resolve(b.id, ANA);
    await sim.webhooks.idle();
    expect(rx.received.map((r) => (r.json as { event: { data: { id: string } } }).event.data.id)).toEqual([
      b.id,
    ]);
  });

  it('signs with both secrets during a rotation', async () => {
    sim.subscribe({ url: rx.url, secret: 'old-secret' });
    sim.rotateSecret('new-secret');
    sim.webApp.trigger({ serviceId: 'PSVC001', title: 'a', byEmail: ANA });
    await rx.waitFor(1);
    const header = rx.received[0]!.headers['x-pagerduty-signature'] as string;
    expect(header.split(',')).toHaveLength(2);
    expect(verifyPagerDutySignature(rx.received[0]!.rawBody, header, ['old-secret'])).toBe(true);
    expect(verifyPagerDutySignature(rx.received[0]!.rawBody, header, ['new-secret'])).toBe(true);
    sim.finishRotation();
    sim.webApp.trigger({ serviceId: 'PSVC001', title: 'b', byEmail: ANA });
    await rx.waitFor(2);
    const after = rx.received[1]!.headers['x-pagerduty-signature'] as string;
    expect(verifyPagerDutySignature(rx.received[1]!.rawBody, after, ['old-secret'])).toBe(false);
    expect(verifyPagerDutySignature(rx.received[1]!.rawBody, after, ['new-secret'])).toBe(true);
  });

  it('retries 5xx with the same X-Webhook-Id and body, then delivers', async () => {
    sim.subscribe({ url: rx.url });
    rx.respondWith(500, 503);
    sim.webApp.trigger({ serviceId: 'PSVC001', title: 'a', byEmail: ANA });
    await sim.webhooks.idle();
    const attempts = sim.webhooks.attempts;
    expect(attempts.map((a) => [a.attempt, a.status, a.outcome])).toEqual([
      [1, 500, 'retrying'],
      [2, 503, 'retrying'],
      [3, 200, 'delivered'],
    ]);
    expect(new Set(attempts.map((a) => a.webhookId)).size).toBe(1);
    expect(new Set(attempts.map((a) => a.body)).size).toBe(1);
  });

  it('retries a receiver that does not answer within the timeout with the same X-Webhook-Id and body', async () => {
    // The receiver takes each request and never answers, so every attempt times out whatever the
    // machine's speed; the short timeout only keeps the test quick.
    await sim.stop();
    await start({ webhooks: { retryDelaysMs: [10, 20, 40], timeoutMs: 100 } });
    sim.subscribe({ url: rx.url });
    rx.respondWith('never', 'never', 'never', 'never');
    sim.webApp.trigger({ serviceId: 'PSVC001', title: 'a', byEmail: ANA });
    await sim.webhooks.idle();
    const attempts = sim.webhooks.attempts;
    expect(attempts.map((a) => [a.attempt, a.status, a.outcome])).toEqual([
      [1, undefined, 'retrying'],
      [2, undefined, 'retrying'],
      [3, undefined, 'retrying'],
      [4, undefined, 'failed'],
    ]);
    // No answer within the sender's timeout (headers timeout or deadline), not a refused connection.
    for (const a of attempts) expect(a.error).toMatch(/UND_ERR_HEADERS_TIMEOUT|TimeoutError/);
    expect(new Set(attempts.map((a) => a.webhookId)).size).toBe(1);
    expect(new Set(attempts.map((a) => a.body)).size).toBe(1);
  });

  it('gives up after the last retry, drops 4xx at once, and disables after three drops', async () => {
    const { id } = sim.subscribe({ url: rx.url });
    rx.respondWith(500, 500, 500, 500);
    sim.webApp.trigger({ serviceId: 'PSVC001', title: 'a', byEmail: ANA });
    await sim.webhooks.idle();
    expect(sim.webhooks.attempts.map((a) => a.outcome)).toEqual([
      'retrying',
      'retrying',
      'retrying',
      'failed',
    ]);

    rx.respondWith(400, 401);
    sim.webApp.trigger({ serviceId: 'PSVC001', title: 'b', byEmail: ANA });
    sim.webApp.trigger({ serviceId: 'PSVC001', title: 'c', byEmail: ANA });
    await sim.webhooks.idle();
    expect(sim.webhooks.attempts.slice(4).map((a) => [a.status, a.outcome])).toEqual([
      [400, 'dropped'],
      [401, 'dropped'],
    ]);
    expect(sim.webhooks.attempts).toHaveLength(6);
    const before = rx.received.length;
    sim.webApp.trigger({ serviceId: 'PSVC001', title: 'd', byEmail: ANA });
    await sim.webhooks.idle();
    expect(rx.received.length).toBe(before);
    sim.webhooks.enable(id);
    sim.webApp.trigger({ serviceId: 'PSVC001', title: 'e', byEmail: ANA });
    await rx.waitFor(before + 1);
  });

  it('duplicates a delivery on request', async () => {
    sim.subscribe({ url: rx.url, secret: 's' });
    sim.webhooks.duplicateNext();
    sim.webApp.trigger({ serviceId: 'PSVC001', title: 'a', byEmail: ANA });
    sim.webApp.trigger({ serviceId: 'PSVC001', title: 'b', byEmail: ANA });
    await sim.webhooks.idle();
    expect(rx.received).toHaveLength(3);
    const [first, copy, next] = rx.received;
    expect(copy?.headers['x-webhook-id']).toBe(first?.headers['x-webhook-id']);
    expect(copy?.rawBody.equals(first!.rawBody)).toBe(true);
    expect(next?.headers['x-webhook-id']).not.toBe(first?.headers['x-webhook-id']);
  });

  it('delivers out of order on request', async () => {
    sim.subscribe({ url: rx.url });
    sim.webhooks.hold();
    const inc = sim.webApp.trigger({ serviceId: 'PSVC001', title: 'a', byEmail: ANA });
    sim.webApp.acknowledge(inc.id, BEN);
    sim.webApp.resolve(inc.id, BEN);
    await sim.webhooks.idle();
    expect(rx.received).toHaveLength(0);
    expect(sim.webhooks.heldCount()).toBe(3);
    sim.webhooks.release({ reverse: true });
    await sim.webhooks.idle();
    expect(events()).toEqual(['incident.resolved', 'incident.acknowledged', 'incident.triggered']);
  });

  it('creates a subscription through POST /webhook_subscriptions and returns its secret once', async () => {
    const res = await raw('POST', '/webhook_subscriptions', {
      body: {
        webhook_subscription: {
          type: 'webhook_subscription',
          delivery_method: { type: 'http_delivery_method', url: rx.url },
          events: ['incident.acknowledged'],
          filter: { type: 'account_reference' },
        },
      },
    });
    expect(res.status).toBe(200);
    const secret = (res.body.webhook_subscription as { delivery_method: { secret: string } }).delivery_method
      .secret;
    expect(secret.length).toBeGreaterThan(20);
    const listed = await raw('GET', '/webhook_subscriptions');
    expect(
      (listed.body.webhook_subscriptions as Array<{ delivery_method: { secret: unknown } }>)[0]
        ?.delivery_method.secret,
    ).toBeNull();
    const inc = sim.webApp.trigger({ serviceId: 'PSVC001', title: 'a', byEmail: ANA });
    sim.webApp.acknowledge(inc.id, BEN);
    await rx.waitFor(1);
    expect(events()).toEqual(['incident.acknowledged']);
    expect(
      verifyPagerDutySignature(
        rx.received[0]!.rawBody,
        rx.received[0]!.headers['x-pagerduty-signature'] as string,
        [secret],
      ),
    ).toBe(true);
  });
});

describe('state rules', () => {
  it('escalates an unacknowledged incident when its level times out, and un-acknowledges after the ack timeout', async () => {
    await start();
    sim.subscribe({ url: rx.url });
    const inc = sim.webApp.trigger({ serviceId: 'PSVC001', title: 'a', byEmail: ANA });
    clock.advance(29 * 60_000);
    sim.runTimers();
    expect(sim.state.incidents.get(inc.id)?.escalationLevel).toBe(1);
    clock.advance(60_000);
    sim.runTimers();
    expect(sim.incident(inc.id)).toMatchObject({ assignments: [{ assignee: { id: 'PUSR005' } }] });
    sim.webApp.acknowledge(inc.id, 'eve.martin@example.org');
    clock.advance(30 * 60_000);
    sim.runTimers();
    expect(sim.incident(inc.id).status).toBe('triggered');
    await sim.webhooks.idle();
    expect(events()).toEqual([
      'incident.triggered',
      'incident.escalated',
      'incident.acknowledged',
      'incident.unacknowledged',
    ]);
  });

  it('starts an incident assigned to its creator acknowledged', async () => {
    await start();
    const inc = await pd.createIncident({
      from: BEN,
      serviceId: 'PSVC001',
      title: 'mine',
      assigneeIds: ['PUSR002'],
    });
    expect(inc.status).toBe('acknowledged');
  });

  it('lags reads behind writes when asked (eventual consistency, on the simulator clock)', async () => {
    await start({ readLagMs: 2_000 });
    const inc = await pd.createIncident({ from: ANA, serviceId: 'PSVC001', title: 'lagging' });
    await expect(pd.getIncident(inc.id)).rejects.toMatchObject({ code: 'SB_NOT_FOUND' });
    expect((await pd.listIncidents()).items).toHaveLength(0);
    clock.advance(2_000);
    expect((await pd.getIncident(inc.id)).status).toBe('triggered');
    await pd.acknowledgeIncident(inc.id, BEN);
    clock.advance(1_999);
    expect((await pd.getIncident(inc.id)).status).toBe('triggered');
    clock.advance(1);
    expect((await pd.getIncident(inc.id)).status).toBe('acknowledged');
    expect((await pd.listIncidents({ statuses: ['acknowledged'] })).items).toHaveLength(1);
  });
});

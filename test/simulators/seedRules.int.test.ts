import { Agent, request } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  defaultSeed,
  type PagerDutySimulator,
  startPagerDutySimulator,
} from '../../sandbox/simulators/pagerduty/index.ts';
import { manualClock } from '../../src/core/clock.ts';
import { createPagerDutyClient } from '../../src/upstream/pagerduty.ts';

/**
 * Regression guards for rules of the incident service's contract that the simulator must keep
 * (classic pagination window, routing-key length, events-route isolation per service). Each was
 * checked to fail once with the rule broken in the simulator.
 */
const NOW = '2026-11-22T10:00:00.000Z';
const ACCEPT = 'application/vnd.pagerduty+json;version=2';
const PAYMENTS_KEY = 'a1b2c3d4e5f60718293a4b5c6d7e8f90';

let sim: PagerDutySimulator;
let dispatcher: Agent;

beforeEach(async () => {
  dispatcher = new Agent();
  sim = await startPagerDutySimulator({
    clock: manualClock(NOW),
    seed: defaultSeed({ rotationStart: '2026-01-05T09:00:00Z' }),
  });
});
afterEach(async () => {
  await sim.stop();
  await dispatcher.close();
});

const get = async (path: string) => {
  const res = await request(`${sim.url}${path}`, {
    dispatcher,
    headers: {
      accept: ACCEPT,
      'content-type': 'application/json',
      authorization: `Token token=${sim.token}`,
    },
  });
  return { status: res.statusCode, body: (await res.body.json()) as Record<string, unknown> };
};

const enqueue = async (body: Record<string, unknown>) => {
  const res = await request(`${sim.eventsUrl}/v2/enqueue`, {
    method: 'POST',
    dispatcher,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.statusCode, body: (await res.body.json()) as Record<string, unknown> };
};

const trigger = (routingKey: string, dedupKey: string) =>
  enqueue({
    routing_key: routingKey,
    event_action: 'trigger',
    dedup_key: dedupKey,
    payload: { summary: `alert ${dedupKey}`, source: 'web-1', severity: 'critical' },
  });

describe('classic pagination window', () => {
  it('refuses limit + offset above 10,000 with 400 / 2001 and answers right at the edge', async () => {
    const edge = await get('/incidents?limit=100&offset=9900');
    expect(edge.status, JSON.stringify(edge.body)).toBe(200);
    expect((await get('/services?limit=1&offset=9999')).status).toBe(200);
    for (const q of ['limit=100&offset=9901', 'limit=1&offset=10000', 'limit=25&offset=9999']) {
      const res = await get(`/incidents?${q}`);
      expect(res.status, q).toBe(400);
      expect(res.body).toMatchObject({ error: { code: 2001, message: 'Invalid Input Provided' } });
    }
    expect((await get('/oncalls?limit=100&offset=9901')).status).toBe(400);
  });
});

describe('events route', () => {
  it('refuses routing keys of other than 32 characters, even ones a real key starts or ends with', async () => {
    const services = [...sim.state.services.values()];
    const keys = services.map((s) => s.integrationKey);
    expect(keys.every((k) => k.length === 32)).toBe(true);
    const before = sim.state.incidents.size;
    for (const key of [PAYMENTS_KEY.slice(0, 31), `${PAYMENTS_KEY}0`, PAYMENTS_KEY.slice(1), '', 'x']) {
      const res = await trigger(key, `k-${key.length}`);
      expect(res.status, `key of ${key.length}`).toBe(400);
      expect(res.body).toMatchObject({ status: 'invalid event' });
    }
    expect(sim.state.incidents.size).toBe(before);
    expect((await trigger(PAYMENTS_KEY, 'ok')).status).toBe(202);
    expect(sim.state.incidents.size).toBe(before + 1);
    sim.clearViolations();
  });

  it('the typed client refuses a routing key of another length before sending anything', async () => {
    const pd = createPagerDutyClient({
      apiUrl: sim.url,
      eventsUrl: sim.eventsUrl,
      token: sim.token,
      dispatcher,
    });
    for (const routingKey of [PAYMENTS_KEY.slice(0, 31), `${PAYMENTS_KEY}0`]) {
      await expect(
        pd.enqueueEvent({
          routingKey,
          eventAction: 'trigger',
          payload: { summary: 'x', source: 'y', severity: 'critical' },
        }),
      ).rejects.toMatchObject({ code: 'SB_VALIDATION' });
    }
    expect(sim.requests.filter((r) => r.server === 'events')).toEqual([]);
  });

  it("an event sent with service A's routing key never touches service B, even with B's dedup key", async () => {
    const [a, b] = [...sim.state.services.values()];
    expect(a && b && a.id !== b.id).toBe(true);
    expect((await trigger(b!.integrationKey, 'shared-key')).status).toBe(202);
    const incidentOfB = [...sim.state.incidents.values()].find((i) => i.serviceId === b!.id)!;
    expect(incidentOfB.status).toBe('triggered');

    // A's key, B's dedup key: acknowledge and resolve must not reach B's incident.
    for (const action of ['acknowledge', 'resolve']) {
      const res = await enqueue({
        routing_key: a!.integrationKey,
        event_action: action,
        dedup_key: 'shared-key',
      });
      expect(res.status).toBe(202);
    }
    expect(sim.state.incidents.get(incidentOfB.id)?.status).toBe('triggered');

    // A trigger with A's key and the same dedup key opens A's own incident, not a dedup on B's.
    expect((await trigger(a!.integrationKey, 'shared-key')).status).toBe(202);
    const ofA = [...sim.state.incidents.values()].filter((i) => i.serviceId === a!.id);
    expect(ofA).toHaveLength(1);
    expect(sim.state.incidents.get(incidentOfB.id)?.alerts).toHaveLength(1);

    // And B's own key still reaches B.
    expect(
      (await enqueue({ routing_key: b!.integrationKey, event_action: 'resolve', dedup_key: 'shared-key' }))
        .status,
    ).toBe(202);
    expect(sim.state.incidents.get(incidentOfB.id)?.status).toBe('resolved');
    expect(sim.state.incidents.get(ofA[0]!.id)?.status).toBe('triggered');
  });
});

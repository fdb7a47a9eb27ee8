import { Agent } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import {
  defaultSeed,
  type PagerDutySimulator,
  startPagerDutySimulator,
} from '../../sandbox/simulators/pagerduty/index.ts';
import { type ManualClock, manualClock } from '../../src/core/clock.ts';
import { nextAttemptAt, shouldRetry, UPSTREAM_RETRY } from '../../src/processors/retryPolicy.ts';
import { createPagerDutyClient, createRequestBudget } from '../../src/upstream/pagerduty.ts';

/**
 * One budget for the incident service's requests a minute, shared by every caller of a client,
 * against the simulator's own `requestsPerMinute`: when it is spent nothing is sent (the service
 * never has to answer 429), and the error says when it frees, which the durable retry honours.
 */
const NOW = '2026-11-22T10:00:00.000Z';
let sim: PagerDutySimulator;
let clock: ManualClock;
let dispatcher: Agent;

const start = async (requestsPerMinute: number) => {
  clock = manualClock(NOW);
  dispatcher = new Agent();
  sim = await startPagerDutySimulator({
    clock,
    seed: defaultSeed({ rotationStart: '2026-01-05T09:00:00Z' }),
    requestsPerMinute,
  });
};
afterEach(async () => {
  await sim.stop();
  await dispatcher.close();
});

describe('the incident-service request budget', () => {
  it('is shared by every kind of call; when spent nothing is sent and the error says when it frees', async () => {
    await start(4);
    const pd = createPagerDutyClient({
      apiUrl: sim.url,
      eventsUrl: sim.eventsUrl,
      token: sim.token,
      dispatcher,
      clock,
      requestsPerMinute: 4,
    });
    await pd.listServices();
    clock.advance(10_000);
    await pd.getUser('PUSR001');
    await pd.findUserByEmail('ana.silva@example.org');
    clock.advance(10_000);
    await pd.listOnCalls({ since: NOW, until: '2026-11-23T10:00:00.000Z' });
    const sent = sim.requests.length;

    const refused = await pd.listIncidents().then(
      () => null,
      (e: unknown) => e,
    );
    expect(refused).toMatchObject({
      code: 'SB_UPSTREAM_RATE_LIMITED',
      details: { retryAfterMs: 40_000, retryAt: '2026-11-22T10:01:00.000Z', retryable: true },
    });
    expect(sim.requests.length).toBe(sent);
    expect(sim.requests.every((r) => r.status !== 429)).toBe(true);

    // The durable upstream-call mechanism retries it when the budget frees, not before.
    expect(shouldRetry(refused, { attempt: 1, maxAttempts: UPSTREAM_RETRY.maxAttempts })).toBe(true);
    const at = nextAttemptAt(1, clock.now(), { ...UPSTREAM_RETRY, error: refused, random: () => 0 });
    expect(at.toISOString()).toBe('2026-11-22T10:01:00.000Z');

    clock.advance(40_000);
    await expect(pd.listIncidents()).resolves.toMatchObject({ items: [] });
    sim.assertNoViolations();
  });

  it("a 429 the service answers anyway (another client on the key) closes the budget until the service's reset", async () => {
    await start(2);
    const budget = createRequestBudget({ perMinute: 960, now: () => clock.now().getTime() });
    const one = createPagerDutyClient({
      apiUrl: sim.url,
      eventsUrl: sim.eventsUrl,
      token: sim.token,
      dispatcher,
      clock,
      budget,
    });
    const other = createPagerDutyClient({
      apiUrl: sim.url,
      eventsUrl: sim.eventsUrl,
      token: sim.token,
      dispatcher,
      clock,
    });
    await other.listServices();
    await other.listServices();
    clock.advance(15_000);
    await expect(one.listServices()).rejects.toMatchObject({ code: 'SB_UPSTREAM_RATE_LIMITED' });
    const sent = sim.requests.length;
    await expect(one.getUser('PUSR001')).rejects.toMatchObject({
      code: 'SB_UPSTREAM_RATE_LIMITED',
      details: { retryAfterSource: 'budget', retryAfterMs: 45_000 },
    });
    expect(sim.requests.length).toBe(sent);
    clock.advance(45_000);
    await expect(one.getUser('PUSR001')).resolves.toMatchObject({ id: 'PUSR001' });
    sim.clearViolations();
  });
});

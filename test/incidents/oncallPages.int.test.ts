import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { defaultSeed, type SimulatorSeed } from '../../sandbox/simulators/pagerduty/model.ts';
import { manualClock } from '../../src/core/clock.ts';
import { createPagerDutyClient, paginate } from '../../src/upstream/pagerduty.ts';
import { ANA, type IncidentHarness, startIncidentHarness } from './harness.ts';

/**
 * `/oncall` against the simulator when the answer is longer than one page: an hourly rotation on
 * Payments Primary makes well over 100 on-call entries in the 7 days `/oncall` looks at, so
 * whatever sits after the first page (other policies, other levels) is only there if `more` is
 * followed.
 */
const hourlyPrimary = (): SimulatorSeed => {
  const seed = defaultSeed({ rotationStart: '2026-01-05T09:00:00Z' });
  return {
    ...seed,
    schedules: seed.schedules.map((s) =>
      s.id === 'PSCH001'
        ? { ...s, layers: s.layers.map((l) => ({ ...l, rotationTurnLengthSeconds: 3600 })) }
        : s,
    ),
  };
};

let h: IncidentHarness;
beforeAll(async () => {
  h = await startIncidentHarness({ simulator: { seed: hourlyPrimary() } });
});
afterEach(async () => {
  await h.idle();
  h.sim.assertNoViolations();
});
afterAll(async () => {
  await h.stop();
});

describe('/oncall follows every page', () => {
  it('lists every escalation policy and level even when the entries run past the first page', async () => {
    const pd = createPagerDutyClient({ apiUrl: h.sim.url, eventsUrl: h.sim.eventsUrl, token: h.sim.token });
    const now = new Date();
    const all = [];
    for await (const o of paginate(
      (p) =>
        pd.listOnCalls({
          ...p,
          since: now.toISOString(),
          until: new Date(now.getTime() + 7 * 24 * 3600_000).toISOString(),
        }),
      { limit: 100 },
    ))
      all.push(o);
    expect(all.length).toBeGreaterThan(150);
    const policies = new Set(all.map((o) => o.escalation_policy.summary ?? o.escalation_policy.id));
    expect(policies.size).toBeGreaterThan(1);

    const before = h.sim.requestsFor('listOnCalls').length;
    const text = await h.answer(await h.slash('', { command: '/oncall', user: ANA.slack }));
    for (const name of policies) expect(text, name).toContain(name);
    const asked = h.sim.requestsFor('listOnCalls').slice(before);
    expect(asked.length).toBeGreaterThan(1);
    expect(asked.some((r) => r.url.includes('offset=100'))).toBe(true);
  });
});

describe('/oncall when the request budget is spent', () => {
  it('says when to try again instead of failing, and answers once the budget frees', async () => {
    // The budget counts on its own manual clock, so it frees only when the test says so.
    const budgetClock = manualClock('2026-11-22T03:00:20.000Z');
    const b = await startIncidentHarness({ incidents: { requestsPerMinute: 4, budgetClock } });
    try {
      const before = b.sim.requests.length;
      let busy: string | undefined;
      for (let i = 0; i < 6 && busy === undefined; i++) {
        const text = await b.answer(await b.slash('', { command: '/oncall', user: ANA.slack }));
        if (text.includes('busy')) busy = text;
        else expect(text).toContain('On call now');
      }
      expect(busy).toContain(
        `Try \`/oncall\` again <!date^${Date.parse('2026-11-22T03:02:00Z') / 1000}^{date_short_pretty} at {time}|Nov 22, 03:02 UTC>`,
      );
      expect(busy).not.toMatch(/SB_[A-Z_]+/);
      expect(b.sim.requests.every((r) => r.status !== 429)).toBe(true);
      expect(b.sim.requests.length - before).toBeLessThanOrEqual(4);

      budgetClock.advance(60_000);
      const text = await b.answer(await b.slash('', { command: '/oncall', user: ANA.slack }));
      expect(text).toContain('On call now');
      b.sim.assertNoViolations();
    } finally {
      await b.stop();
    }
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manualClock } from '../../src/core/clock.ts';
import { waitFor } from '../support/waitFor.ts';
import { ANA, cardText, type IncidentHarness, OPS, startIncidentHarness } from './harness.ts';

/**
 * A reactor's call when the incident service's request budget is spent: nothing is sent, the
 * attempt is recorded as rate-limited with its retry due when the budget frees (a durable timer),
 * and nobody is told it failed. The budget counts on a manual clock the test holds still.
 */
const budgetClock = manualClock('2026-11-22T03:00:00.000Z');
let h: IncidentHarness;
beforeAll(async () => {
  // A budget that leaves room for the trigger, then runs out.
  h = await startIncidentHarness({ incidents: { requestsPerMinute: 40, budgetClock } });
});
afterAll(async () => {
  await h.stop();
});

describe('reactors wait for the request budget', () => {
  // Ana's identity is known from her trigger, so only the acknowledge itself needs the service.
  it('an acknowledge while the budget is spent is sent nothing, its retry scheduled for when the budget frees, nobody told it failed', async () => {
    const { streamId, incidentId } = await h.trigger('replica lag');
    await h.idle();
    // Spend what is left of this minute's budget with on-call lookups (each one request or more).
    for (let i = 0; i < 50; i++) {
      const text = await h.answer(await h.slash('', { command: '/oncall' }));
      if (text.includes('busy')) break;
    }
    const sentBefore = h.sim.requests.length;
    const clickedAt = Date.now();
    await h.click('incident.acknowledge', streamId, { user: ANA.slack, channel: OPS });

    const failed = await waitFor(
      async () => (await h.stream(streamId)).find((m) => m.type === 'IncidentUpstreamCallFailed'),
      { what: 'the rate-limited attempt' },
    );
    expect(failed.data).toMatchObject({
      action: 'acknowledge',
      code: 'SB_UPSTREAM_RATE_LIMITED',
      final: false,
    });
    // Due when the budget frees: a minute after it was spent, on the budget's clock.
    const due = Date.parse(String(failed.data.nextAttemptAt));
    expect(due - clickedAt).toBeGreaterThanOrEqual(59_000);
    expect(h.sim.requests.slice(sentBefore).filter((r) => r.operationId === 'updateIncident')).toHaveLength(
      0,
    );
    expect(h.sim.state.incidents.get(incidentId)?.status).toBe('triggered');
    // Nobody hears "couldn't acknowledge".
    await h.idle();
    expect(h.ephemeralsFor(ANA.slack).join('\n')).not.toMatch(/couldn.t/i);
    expect(cardText(h.cardOf(OPS, h.sim.state.incidents.get(incidentId)!.number))).not.toMatch(/couldn.t/i);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../support/waitFor.ts';
import { ANA, cardActions, cardText, type IncidentHarness, OPS, startIncidentHarness } from './harness.ts';

/**
 * Issue 9 item 8: Escalate is offered only while the escalation policy has a next level (the
 * Payments API policy has 3); past it, `/incident escalate` is refused with a sentence before
 * anything is asked of the incident service; no raw code (`SB_…`) reaches anyone.
 */
let h: IncidentHarness;
beforeAll(async () => {
  h = await startIncidentHarness();
});
afterAll(async () => {
  await h.stop();
});

const levelShown = (number: number, level: number) => () =>
  cardText(h.cardOf(OPS, number)).includes(`*Escalation level*\\n${level}`) || undefined;

describe('escalating', () => {
  it('is offered up to the last level of the policy, and refused in words past it', async () => {
    const { streamId, incidentId, number } = await h.trigger('escalate me');
    expect(cardActions(h.cardOf(OPS, number))).toContain('incident.escalate');

    await h.click('incident.escalate', streamId);
    await waitFor(levelShown(number, 2), { what: 'level 2 on the card', timeoutMs: 10_000 });
    await h.idle();
    expect(cardActions(h.cardOf(OPS, number))).toContain('incident.escalate');

    await h.click('incident.escalate', streamId);
    await waitFor(levelShown(number, 3), { what: 'level 3 on the card', timeoutMs: 10_000 });
    await h.idle();
    // Level 3 is the last: nobody further to page, so the button is gone.
    expect(cardActions(h.cardOf(OPS, number))).not.toContain('incident.escalate');
    expect(cardActions(h.cardOf(OPS, number))).toContain('incident.acknowledge');

    const writesBefore = h.sim.requestsFor('updateIncident').length;
    const from = h.fake.responsePosts.length;
    await h.slash(`escalate ${number}`);
    await h.slash(`escalate ${number} 5`);
    const said = await waitFor(
      () => {
        const texts = h.fake.responsePosts.slice(from).map((p) => JSON.stringify(p.body));
        return texts.length >= 2 ? texts.join('\n') : undefined;
      },
      { what: 'both refusals', timeoutMs: 10_000 },
    );
    expect(said).toContain(`#${number} is already at the last escalation level (3 of 3)`);
    expect(said).toContain("escalation policy has 3 levels, so it can't go to level 5");
    await h.idle();
    expect(h.sim.requestsFor('updateIncident')).toHaveLength(writesBefore);
    expect(h.sim.state.incidents.get(incidentId)?.escalationLevel).toBe(3);
    expect(cardText(h.cardOf(OPS, number))).not.toContain("Couldn't escalate");

    // No raw code reached anybody.
    expect(JSON.stringify([h.fake.calls, h.fake.responsePosts, h.fake.ephemerals])).not.toMatch(/SB_[A-Z]/);
    expect(h.ephemeralsFor(ANA.slack).join('\n')).not.toMatch(/SB_[A-Z]/);
  });
});

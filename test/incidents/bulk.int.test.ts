import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createPagerDutyClient } from '../../src/upstream/pagerduty.ts';
import { waitFor } from '../support/waitFor.ts';
import { ANA, BEN, cardText, type IncidentHarness, OPS, startIncidentHarness } from './harness.ts';

/**
 * Bulk moves (issue 22 item 5): `/incident resolve <n> <n>…` and `/incident ack mine` go upstream
 * through `PUT /incidents`, chunked within its per-call limit (250 in the vendored OpenAPI; 2 here,
 * in the simulator and the bot alike, so three incidents need two calls), and every incident is
 * answered, by name.
 */
let h: IncidentHarness;
beforeAll(async () => {
  h = await startIncidentHarness({ simulator: { bulkLimit: 2 }, incidents: { bulkLimit: 2 } });
});
afterEach(async () => {
  h.sim.clearFaults();
  await h.idle();
  h.sim.assertNoViolations();
});
afterAll(async () => {
  await h.stop();
});

const bulkCalls = () => h.sim.requestsFor('updateIncidents');
const vendorStatus = (incidentId: string) => h.sim.state.incidents.get(incidentId)?.status;

describe('bulk moves', () => {
  it('resolving three incidents with a limit of two: two bulk calls, each incident resolved and named', async () => {
    const a = await h.trigger('bulk resolve one');
    const b = await h.trigger('bulk resolve two');
    const c = await h.trigger('bulk resolve three');
    const before = bulkCalls().length;
    const res = await h.slash(`resolve ${a.number} ${b.number} #${c.number} 99999`);
    const answer = JSON.stringify(res.body);
    for (const x of [a, b, c]) expect(answer).toContain(`#${x.number} bulk resolve`);
    expect(answer).toContain("#99999: Switchboard doesn't know it");
    for (const x of [a, b, c]) {
      await waitFor(
        () => (cardText(h.cardOf(OPS, x.number)).includes('Resolved by <@U0ANA>') ? true : undefined),
        {
          what: `#${x.number} resolved on its card`,
        },
      );
      expect(vendorStatus(x.incidentId)).toBe('resolved');
    }
    await h.idle();
    const calls = bulkCalls().slice(before);
    expect(calls).toHaveLength(2);
    const sizes = calls.map((r) => (r.body as { incidents: unknown[] }).incidents.length).sort();
    expect(sizes).toEqual([1, 2]);
    // No incident was resolved one by one.
    for (const x of [a, b, c]) {
      expect(h.sim.requestsFor('updateIncident').filter((r) => r.url.includes(x.incidentId))).toHaveLength(0);
    }
  });

  it('`ack mine` acknowledges every triggered incident assigned to the asker and says which it left', async () => {
    const a = await h.trigger('mine one');
    const b = await h.trigger('mine two');
    const other = await h.trigger('not mine');
    for (const x of [a, b]) h.sim.webApp.reassign(x.incidentId, [ANA.email], BEN.email);
    h.sim.webApp.reassign(other.incidentId, [BEN.email], BEN.email);
    for (const x of [a, b]) {
      await waitFor(
        () => (cardText(h.cardOf(OPS, x.number)).includes('*Assigned*\\n<@U0ANA>') ? true : undefined),
        {
          what: `#${x.number} assigned to Ana on its card`,
        },
      );
    }
    await waitFor(
      () => (cardText(h.cardOf(OPS, other.number)).includes('*Assigned*\\n<@U0BEN>') ? true : undefined),
      {
        what: 'the other one assigned to Ben',
      },
    );
    const before = bulkCalls().length;
    const res = await h.slash('ack mine');
    const answer = JSON.stringify(res.body);
    expect(answer).toContain('Acknowledging 2 incidents');
    expect(answer).toContain(`#${a.number} mine one`);
    expect(answer).toContain(`#${b.number} mine two`);
    expect(answer).not.toContain('not mine');
    for (const x of [a, b]) {
      await waitFor(() => (vendorStatus(x.incidentId) === 'acknowledged' ? true : undefined), {
        what: `#${x.number} acknowledged upstream`,
      });
    }
    await h.idle();
    expect(bulkCalls().slice(before)).toHaveLength(1);
    expect(vendorStatus(other.incidentId)).toBe('triggered');
    // Again: nothing left to acknowledge, said so.
    const again = await h.slash('ack mine');
    expect(JSON.stringify(again.body)).toContain('Nothing to acknowledge');
  });
  // Whichever member's event makes the bulk call: the resolved one's own (it is refused, the other
  // still sent) or the other's (the resolved one left waiting, then refused on its own event).
  it.each(['first', 'second'] as const)(
    '`ack mine` leaves out an incident resolved in the web app meanwhile (the %s of two): it stays resolved, the other is acknowledged',
    async (which) => {
      let a: Awaited<ReturnType<IncidentHarness['trigger']>>;
      let b: typeof a;
      if (which === 'first') {
        a = await h.trigger('resolved meanwhile');
        b = await h.trigger('still open');
      } else {
        b = await h.trigger('still open');
        a = await h.trigger('resolved meanwhile');
      }
      for (const x of [a, b]) h.sim.webApp.reassign(x.incidentId, [ANA.email], BEN.email);
      for (const x of [a, b]) {
        await waitFor(
          () => (cardText(h.cardOf(OPS, x.number)).includes('*Assigned*\\n<@U0ANA>') ? true : undefined),
          { what: `#${x.number} assigned to Ana on its card` },
        );
      }
      await h.idle();
      // Resolved in the web app; its webhook is late, so Switchboard still holds it as triggered.
      h.sim.webhooks.hold();
      h.sim.webApp.resolve(a.incidentId, BEN.email);
      const dmsBefore = h.dms(ANA.slack).length;
      const before = bulkCalls().length;
      const res = await h.slash('ack mine');
      const answer = JSON.stringify(res.body);
      expect(answer).toContain('Acknowledging 2 incidents');
      expect(answer).toContain(`#${a.number} resolved meanwhile`);
      expect(answer).toContain(`#${b.number} still open`);
      await waitFor(() => (vendorStatus(b.incidentId) === 'acknowledged' ? true : undefined), {
        what: `#${b.number} acknowledged upstream`,
      });
      await waitFor(
        () =>
          h
            .dms(ANA.slack)
            .slice(dmsBefore)
            .find((m) => m.text.includes(`#${a.number}`) && m.text.includes('already resolved')),
        { what: `Ana told #${a.number} was already resolved` },
      );
      h.sim.webhooks.release();
      await h.idle();
      // The resolved one was never sent upstream again: it was not reopened.
      expect(vendorStatus(a.incidentId)).toBe('resolved');
      expect(h.sim.state.incidents.get(a.incidentId)?.reopenedAt ?? null).toBeNull();
      const sent = bulkCalls()
        .slice(before)
        .flatMap((r) => (r.body as { incidents: { id: string }[] }).incidents.map((i) => i.id));
      expect(sent).toEqual([b.incidentId]);
      await waitFor(() => (cardText(h.cardOf(OPS, a.number)).includes('Resolved') ? true : undefined), {
        what: `#${a.number} resolved on its card`,
      });
      await waitFor(
        () => (cardText(h.cardOf(OPS, b.number)).includes('Acknowledged by <@U0ANA>') ? true : undefined),
        { what: `#${b.number} acknowledged on its card` },
      );
    },
  );

  it('the simulator refuses a bulk call over its limit with 413, as the vendor documents', async () => {
    const a = await h.trigger('over the limit one');
    const b = await h.trigger('over the limit two');
    const c = await h.trigger('over the limit three');
    const pagerduty = createPagerDutyClient({
      apiUrl: h.sim.url,
      eventsUrl: h.sim.eventsUrl,
      token: h.sim.token,
    });
    await expect(
      pagerduty.bulkUpdateStatus({
        from: ANA.email,
        status: 'acknowledged',
        incidentIds: [a.incidentId, b.incidentId, c.incidentId],
      }),
    ).rejects.toThrow(/413|Too many/);
    for (const x of [a, b, c]) expect(vendorStatus(x.incidentId)).toBe('triggered');
  });
});

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { gate, waitFor } from '../support/waitFor.ts';
import { ANA, BEN, cardText, type IncidentHarness, OPS, startIncidentHarness } from './harness.ts';

/**
 * Priority and urgency from Slack (issue 22 item 1): `/incident priority|urgency` and the card's
 * selects write `PUT /incidents/{id}` through the upstream-call reactor; changes made in the web
 * app redraw the card; a change racing a click ends with the card showing what the vendor has.
 */
let h: IncidentHarness;
beforeAll(async () => {
  h = await startIncidentHarness({ incidents: { alertsPageSize: 2 } });
});
afterEach(async () => {
  h.sim.clearFaults();
  h.sim.webhooks.release();
  await h.idle();
  h.sim.assertNoViolations();
});
afterAll(async () => {
  await h.stop();
});

const PRIORITY_NAME: Readonly<Record<string, string>> = {
  PPRI001: 'P1',
  PPRI002: 'P2',
  PPRI003: 'P3',
  PPRI004: 'P4',
  PPRI005: 'P5',
};
const vendorPriority = (incidentId: string): string | null => {
  const id = h.sim.state.incidents.get(incidentId)?.priorityId ?? null;
  return id === null ? null : (PRIORITY_NAME[id] ?? id);
};
/** The card's Priority field. */
const cardPriority = (number: number): string | null =>
  /\*Priority\*\\n([^"]+?)"/.exec(cardText(h.cardOf(OPS, number)))?.[1] ?? null;
const cardUrgency = (number: number): string | null =>
  /\*Urgency\*\\n([^"]+?)"/.exec(cardText(h.cardOf(OPS, number)))?.[1] ?? null;

const selectPriority = (streamId: string, priorityId: string, user: string = ANA.slack) =>
  h.click('incident.priority', streamId, {
    user,
    extra: {
      type: 'static_select',
      value: undefined,
      block_id: `incident.actions:${streamId}`,
      selected_option: { value: priorityId, text: { type: 'plain_text', text: 'P?' } },
    },
  });

const cardShowsVendorPriority = async (incidentId: string, number: number) =>
  waitFor(() => (cardPriority(number) === vendorPriority(incidentId) ? true : undefined), {
    what: `the card of #${number} to show the vendor's priority ${vendorPriority(incidentId)}`,
    timeoutMs: 8_000,
  }).catch(async (error: Error) => {
    throw new Error(`${error.message} (card: ${cardPriority(number)})\n${await h.diagnose()}`);
  });

describe('priority and urgency from Slack', () => {
  it('/incident priority sets it upstream and the card shows it; the card offers the priorities as a select', async () => {
    const { incidentId, number } = await h.trigger('priority by command');
    const res = await h.slash(`priority ${number} p2`);
    expect(JSON.stringify(res.body)).toContain('Setting the priority');
    await waitFor(() => (vendorPriority(incidentId) === 'P2' ? true : undefined), { what: 'P2 upstream' });
    await cardShowsVendorPriority(incidentId, number);
    const card = cardText(h.cardOf(OPS, number));
    expect(card).toContain('"action_id":"incident.priority"');
    for (const name of ['P1', 'P2', 'P3', 'P4', 'P5']) expect(card).toContain(`"text":"${name}"`);
    expect(card).toContain('"action_id":"incident.urgency"');
    expect(h.sim.requestsFor('updateIncident').filter((r) => r.url.includes(incidentId))).toHaveLength(1);
  });

  it('picking a priority on the card sets it; an id the incident service does not list is refused in words', async () => {
    const { streamId, incidentId, number } = await h.trigger('priority by select');
    await selectPriority(streamId, 'PPRI003');
    await waitFor(() => (vendorPriority(incidentId) === 'P3' ? true : undefined), { what: 'P3 upstream' });
    await cardShowsVendorPriority(incidentId, number);
    const mark = h.fake.ephemerals.length;
    await selectPriority(streamId, 'PBOGUS9');
    const told = await waitFor(
      () => h.ephemeralsFor(ANA.slack, mark).find((t) => t.includes('not a priority')),
      { what: 'the refusal' },
    );
    expect(told).toContain('P1, P2, P3, P4, P5');
    expect(told).not.toMatch(/SB_|set_priority/);
    expect(vendorPriority(incidentId)).toBe('P3');
  });

  it('the same priority again is refused with what it already is', async () => {
    const { incidentId, number } = await h.trigger('priority twice');
    await h.slash(`priority ${number} P4`);
    await waitFor(() => (vendorPriority(incidentId) === 'P4' ? true : undefined), { what: 'P4 upstream' });
    await cardShowsVendorPriority(incidentId, number);
    const mark = h.fake.ephemerals.length;
    await h.slash(`priority ${number} P4`);
    const told = await waitFor(() => h.ephemeralsFor(ANA.slack, mark).find((t) => t.includes('already')), {
      what: 'the refusal',
    });
    expect(told).toContain("It's already P4.");
  });

  it('/incident urgency low sets it upstream and the card shows Low', async () => {
    const { incidentId, number } = await h.trigger('urgency by command');
    await h.slash(`urgency ${number} low`);
    await waitFor(() => (h.sim.state.incidents.get(incidentId)?.urgency === 'low' ? true : undefined), {
      what: 'low upstream',
    });
    await waitFor(() => (cardUrgency(number) === 'Low' ? true : undefined), { what: 'the card says Low' });
  });
});

describe('urgency changed in the web app (no webhook for it)', () => {
  it('is learnt with the next priority change (its webhook, or the read-back after our answer) and the card follows', async () => {
    const { incidentId, number } = await h.trigger('urgency in the web app');
    h.sim.webApp.setUrgency(incidentId, 'low', BEN.email);
    await h.idle();
    expect(cardUrgency(number)).toBe('High');
    await h.slash(`priority ${number} P5`);
    await waitFor(() => (cardUrgency(number) === 'Low' ? true : undefined), {
      what: 'the card to show the urgency read back',
    });
    await cardShowsVendorPriority(incidentId, number);
  });
});

describe('races with the web app', () => {
  it('priority changed in the web app while a click is held before the vendor applies it: the card ends with the vendor’s value', async () => {
    const { streamId, incidentId, number } = await h.trigger('priority race before');
    const landing = gate();
    h.sim.delayNext('updateIncident', { until: landing.promise });
    await selectPriority(streamId, 'PPRI002');
    await waitFor(
      () => (cardText(h.cardOf(OPS, number)).includes('Setting the priority to P2') ? true : undefined),
      {
        what: 'the card shows the change in flight',
      },
    );
    h.sim.webApp.setPriority(incidentId, 'P1', BEN.email);
    await waitFor(() => (cardPriority(number) === 'P1' ? true : undefined), {
      what: 'the web app’s P1 on the card',
    });
    landing.open();
    await waitFor(() => (vendorPriority(incidentId) === 'P2' ? true : undefined), { what: 'our P2 lands' });
    await h.idle();
    await cardShowsVendorPriority(incidentId, number);
    expect(cardPriority(number)).toBe('P2');
  });

  it('priority changed in the web app after our change landed, webhooks delivered newest first and our answer last: the card ends with the vendor’s value', async () => {
    const { streamId, incidentId, number } = await h.trigger('priority race after');
    h.sim.webhooks.hold();
    const answer = gate();
    h.sim.delayNext('updateIncident', { until: answer.promise, afterApply: true });
    await selectPriority(streamId, 'PPRI002');
    await waitFor(() => (vendorPriority(incidentId) === 'P2' ? true : undefined), { what: 'our P2 applied' });
    h.sim.webApp.setPriority(incidentId, 'P1', BEN.email);
    // The web app's P1 is delivered first, then our own change's P2 (older on the vendor's clock),
    // then the answer to our call (older still): neither may move the card back to P2.
    h.sim.webhooks.release({ reverse: true });
    await waitFor(
      async () =>
        (await h.stream(streamId)).some((e) => e.type === 'IncidentWebhookIgnored') ? true : undefined,
      { what: 'our own change’s webhook seen as older' },
    );
    answer.open();
    await h.idle();
    expect(vendorPriority(incidentId)).toBe('P1');
    await cardShowsVendorPriority(incidentId, number);
    expect(cardPriority(number)).toBe('P1');
    const events = (await h.stream(streamId)).map((e) => e.type);
    expect(events.filter((t) => t === 'IncidentPriorityChangeRequested')).toHaveLength(1);
  });
});

describe('/incident show lists the alerts', () => {
  it('counts every alert across pages, first and last as date tokens, summaries escaped', async () => {
    const { incidentId, number } = await h.trigger('alerts over pages');
    for (const summary of ['disk 91%', 'disk 93%', 'disk <!channel> 95%', 'disk 97%']) {
      h.sim.webApp.addAlert(incidentId, summary);
    }
    const before = h.sim.requestsFor('listIncidentAlerts').length;
    const res = await h.slash(`show ${number}`);
    const shown = await h.answer(res);
    expect(shown).toContain('4 alerts');
    expect(shown).toMatch(/first <!date\^\d+\^[^>]+>, last <!date\^\d+\^[^>]+>/);
    expect(shown).toContain('disk &lt;!channel&gt; 95%');
    expect(shown).not.toContain('<!channel>');
    // Page size 2 in this harness: two full pages and an empty answer are not needed (more=false on the 2nd).
    expect(h.sim.requestsFor('listIncidentAlerts').length - before).toBe(2);
  });
});

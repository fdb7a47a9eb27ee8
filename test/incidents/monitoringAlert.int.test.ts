import { request } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../support/waitFor.ts';
import {
  CHEN,
  cardText,
  type IncidentHarness,
  PAYMENTS_API,
  PAYMENTS_CHANNEL,
  startIncidentHarness,
} from './harness.ts';

/**
 * Issue 9 item 10: an incident opened by a monitoring alert (the events route) shows the alert's
 * severity and source on its card, escaped like any vendor text.
 */
let h: IncidentHarness;
beforeAll(async () => {
  h = await startIncidentHarness();
});
afterEach(async () => {
  h.sim.clearFaults();
  await h.idle();
  h.sim.assertNoViolations();
});
afterAll(async () => {
  await h.stop();
});

const enqueue = async (dedupKey: string, payload: Record<string, unknown>): Promise<void> => {
  const res = await request(`${h.sim.eventsUrl}/v2/enqueue`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      routing_key: PAYMENTS_API.routingKey,
      event_action: 'trigger',
      dedup_key: dedupKey,
      payload,
    }),
  });
  expect(res.statusCode).toBe(202);
  await res.body.text();
};

describe('incidents from monitoring', () => {
  it('show the alert severity and source on the card, escaped', async () => {
    await h.slash('subscribe Payments API', { channel: PAYMENTS_CHANNEL, user: CHEN.slack });
    await waitFor(
      () =>
        h.fake
          .messages(PAYMENTS_CHANNEL)
          .find((m) => m.text.includes('now gets a card for every *Payments API* incident')),
      { what: 'the subscription is confirmed' },
    );

    await enqueue('disk/db-primary', {
      summary: 'db-primary disk 97%',
      source: 'prometheus: db-primary <!channel>',
      severity: 'critical',
    });
    const incident = await waitFor(
      () => [...h.sim.state.incidents.values()].find((i) => i.incidentKey === 'disk/db-primary'),
      { what: 'the incident from monitoring' },
    );
    const card = await waitFor(() => h.cardOf(PAYMENTS_CHANNEL, incident.number), {
      what: 'its card in #payments',
    });
    const text = cardText(card);
    expect(text).toContain('Severity: critical · Source: prometheus: db-primary &lt;!channel&gt;');
    expect(text).not.toContain('<!channel>');
  });
});

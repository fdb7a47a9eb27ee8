import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../support/waitFor.ts';
import { ANA, type IncidentHarness, OPS, PAYMENTS_CHANNEL, startIncidentHarness } from './harness.ts';

/**
 * Issue 9 item 10: replies converge to one truthful message per action. A person who acknowledges
 * from a channel where the incident's card is not posted hears that the incident service has it.
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

describe('confirmations where the card is not', () => {
  it('an acknowledge typed in a channel without the card is confirmed there, pointing at the card', async () => {
    const { number, incidentId } = await h.trigger('Checkout latency over 2 s');
    const mark = h.fake.ephemerals.length;
    await h.slash(`ack ${number}`, { channel: PAYMENTS_CHANNEL, user: ANA.slack });
    await waitFor(() => h.sim.state.incidents.get(incidentId)?.status === 'acknowledged' || undefined, {
      what: 'acknowledged upstream',
    });
    const confirmed = await waitFor(
      () =>
        h.fake.ephemerals
          .slice(mark)
          .find(
            (e) => e.user === ANA.slack && e.channel === PAYMENTS_CHANNEL && e.text.includes('acknowledged'),
          ),
      { what: 'the confirmation in #payments' },
    );
    expect(confirmed.text).toContain(`#${number}`);
    expect(confirmed.text).toContain(`<#${OPS}>`);
    await h.idle();
    // Once: a redelivery or a later change does not confirm again.
    expect(
      h.fake.ephemerals.slice(mark).filter((e) => e.user === ANA.slack && e.text.includes('is acknowledged')),
    ).toHaveLength(1);
  });

  it('a resolve typed in a channel the bot cannot post in is confirmed by DM', async () => {
    const { number, incidentId } = await h.trigger('Search index stale');
    const hidden = 'C0PRIVATE'; // a private channel without the bot: Slack says channel_not_found
    await h.slash(`resolve ${number}`, { channel: hidden, user: ANA.slack });
    await waitFor(() => h.sim.state.incidents.get(incidentId)?.status === 'resolved' || undefined, {
      what: 'resolved upstream',
    });
    const dm = await waitFor(
      () =>
        [...h.fake.allMessages().values()]
          .flat()
          .find(
            (m) => m.text.includes(`#${number}`) && m.text.includes('is resolved in the incident service'),
          ),
      { what: 'the confirmation by DM' },
    );
    expect(h.fake.channels.get(dm.channel)).toMatchObject({ is_im: true, user: ANA.slack });
    expect(dm.text).toContain(`<#${OPS}>`);
  });

  it('an acknowledge from the card itself gets no extra confirmation (the card shows it)', async () => {
    const { number, streamId } = await h.trigger('Queue depth rising');
    const mark = h.fake.ephemerals.length;
    await h.click('incident.acknowledge', streamId, { user: ANA.slack, channel: OPS });
    await waitFor(() => h.cardOf(OPS, number)?.text.includes('Acknowledged') || undefined, {
      what: 'the card acknowledged',
    });
    await h.idle();
    expect(h.fake.ephemerals.slice(mark).filter((e) => e.text.includes('is acknowledged'))).toHaveLength(0);
  });
});

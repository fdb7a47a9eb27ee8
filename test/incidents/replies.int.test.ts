import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../support/waitFor.ts';
import { ANA, BEN, type IncidentHarness, OPS, PAYMENTS_CHANNEL, startIncidentHarness } from './harness.ts';

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

describe('a typed trigger is answered once, truthfully', () => {
  /** Slash-types `/incident trigger …` and shows its answer the way Slack does (linked to its URL). */
  const typeTrigger = async (title: string, user: string = ANA.slack) => {
    const res = await h.slash(`trigger Payments API ${title}`, { user });
    const answer = String((res.body as { text?: unknown } | undefined)?.text ?? '');
    expect(answer).toContain('Creating the incident');
    return h.fake.recordEphemeral({
      channel: OPS,
      user,
      text: answer,
      via: 'ack',
      responseUrl: res.responseUrl,
    });
  };

  it('"⏳ Creating the incident…" is replaced in place by "Created #N", naming where the card is', async () => {
    const shown = await typeTrigger('replaced in place');
    const created = await waitFor(() => (shown.text.includes('Created') ? shown.text : undefined), {
      what: 'the answer replaced in place',
      timeoutMs: 10_000,
    });
    const incident = [...h.sim.state.incidents.values()].find((i) => i.title === 'replaced in place')!;
    expect(created).toContain(`#${incident.number}`);
    expect(created).toContain('its card is in this channel');
    expect(created).not.toContain('Creating');
    expect(shown.edits).toBe(1);
    await h.idle();
    // One answer for the one action: nothing else was added for Ana about it.
    expect(
      h.fake.ephemerals.filter((e) => e.user === ANA.slack && e.text.includes('replaced in place')),
    ).toEqual([shown]);
  });

  it('a create that fails for good replaces it with "Not created" and why', async () => {
    h.sim.failNext('createIncident', { status: 500, times: 5 });
    const shown = await typeTrigger('never there', BEN.slack);
    const failed = await waitFor(() => (shown.text.includes('Not created') ? shown.text : undefined), {
      what: 'the answer replaced by the failure',
      timeoutMs: 15_000,
    });
    expect(failed).toContain('could not be reached');
    expect(failed).not.toContain('SB_');
    expect(shown.edits).toBe(1);
  });
});

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Clock } from '../../src/core/clock.ts';
import { gate, waitFor } from '../support/waitFor.ts';
import { ANA, BEN, CHEN, cardText, type IncidentHarness, OPS, startIncidentHarness } from './harness.ts';

/**
 * The card converges on the incident service's state in every interleaving of our own calls, the
 * web app and webhooks, whatever our clock says: the vendor's facts are ordered by the vendor's
 * timestamps only (a webhook's `occurred_at`, an incident's `last_status_change_at`), never by the
 * time we recorded them, and after every status fact the bot reads the incident back.
 *
 * Each interleaving runs with the app's clock equal to the simulator's, 5 minutes ahead, and
 * 5 minutes behind.
 */
const MINUTE = 60_000;
const skewed = (ms: number): Clock => ({ now: () => new Date(Date.now() + ms) });

const STATUS_TEXT = {
  triggered: 'Triggered',
  acknowledged: 'Acknowledged',
  resolved: 'Resolved',
} as const;

describe.each([
  { name: 'same clock', skewMs: 0 },
  { name: 'app 5 min ahead', skewMs: 5 * MINUTE },
  { name: 'app 5 min behind', skewMs: -5 * MINUTE },
])('the card follows the incident service ($name)', ({ skewMs }) => {
  let h: IncidentHarness;
  beforeAll(async () => {
    h = await startIncidentHarness(skewMs === 0 ? {} : { clock: skewed(skewMs) });
  });
  afterEach(async () => {
    h.sim.clearFaults();
    h.sim.setReadLag(0);
    h.sim.webhooks.release();
    await h.idle();
    h.sim.assertNoViolations();
  });
  afterAll(async () => {
    await h.stop();
  });

  const vendorStatus = (incidentId: string) => h.sim.state.incidents.get(incidentId)!.status;
  /** Waits until the card shows the simulator's status, and checks it still does once all is idle. */
  const cardMatchesVendor = async (incidentId: string, number: number) => {
    const want = STATUS_TEXT[vendorStatus(incidentId)];
    const shows = () => {
      const text = cardText(h.cardOf(OPS, number));
      return Object.values(STATUS_TEXT).find((s) => text.includes(`${s} by`) || text.includes(`*${s}*`));
    };
    await waitFor(() => cardText(h.cardOf(OPS, number)).includes(`${want} by`) || undefined, {
      what: `the card to show ${want} (vendor) instead of ${shows() ?? 'nothing'}`,
      timeoutMs: 8_000,
    });
    await h.idle();
    expect(STATUS_TEXT[vendorStatus(incidentId)]).toBe(want);
    expect(cardText(h.cardOf(OPS, number))).toContain(`${want} by`);
  };
  const recorded = async (streamId: string, type: string) =>
    waitFor(async () => (await h.stream(streamId)).some((e) => e.type === type) || undefined, {
      what: `${type} in ${streamId}`,
    });

  it('ack answered late while the incident is resolved in the web app: the card ends Resolved', async () => {
    const { streamId, incidentId, number } = await h.trigger(`late ack answer ${skewMs}`);
    h.sim.webhooks.hold();
    const answer = gate();
    h.sim.delayNext('updateIncident', { until: answer.promise, afterApply: true });
    await h.click('incident.acknowledge', streamId, { user: ANA.slack });
    await waitFor(() => vendorStatus(incidentId) === 'acknowledged' || undefined, {
      what: 'ack applied',
      timeoutMs: 8_000,
    });
    h.sim.webApp.resolve(incidentId, CHEN.email);
    answer.open();
    await recorded(streamId, 'IncidentAcknowledged');
    h.sim.webhooks.release();
    await cardMatchesVendor(incidentId, number);
    expect(vendorStatus(incidentId)).toBe('resolved');
    expect(cardText(h.cardOf(OPS, number))).toContain('<@U0CHEN>');
  });

  it('with no webhook at all, reading the incident back after our answer converges the card', async () => {
    const { streamId, incidentId, number } = await h.trigger(`read back ${skewMs}`);
    h.sim.webhooks.hold();
    const answer = gate();
    h.sim.delayNext('updateIncident', { until: answer.promise, afterApply: true });
    await h.click('incident.acknowledge', streamId, { user: ANA.slack });
    await waitFor(() => vendorStatus(incidentId) === 'acknowledged' || undefined, {
      what: 'ack applied',
      timeoutMs: 8_000,
    });
    h.sim.webApp.resolve(incidentId, CHEN.email);
    answer.open();
    await waitFor(() => cardText(h.cardOf(OPS, number)).includes('Resolved by') || undefined, {
      what: 'the card to show the resolve it read back',
      timeoutMs: 8_000,
    }).catch(async (error: Error) => {
      const events = (await h.stream(streamId)).map(
        (e) => `${e.type} ${JSON.stringify(e.data).slice(0, 300)}`,
      );
      throw new Error(`${error.message}\nstream:\n${events.join('\n')}\n${await h.diagnose()}`);
    });
    h.sim.webhooks.release();
    await cardMatchesVendor(incidentId, number);
  });

  it('with no webhook, a read-back that fails once is tried again and still converges the card', async () => {
    const { streamId, incidentId, number } = await h.trigger(`read back retried ${skewMs}`);
    h.sim.webhooks.hold();
    const answer = gate();
    h.sim.delayNext('updateIncident', { until: answer.promise, afterApply: true });
    await h.click('incident.acknowledge', streamId, { user: ANA.slack });
    await waitFor(() => vendorStatus(incidentId) === 'acknowledged' || undefined, {
      what: 'ack applied',
      timeoutMs: 8_000,
    });
    h.sim.webApp.resolve(incidentId, CHEN.email);
    // The acknowledge's own check has been made: the next read is the read-back, and it fails.
    h.sim.failNext('getIncident', { status: 503 });
    answer.open();
    await waitFor(() => cardText(h.cardOf(OPS, number)).includes('Resolved by') || undefined, {
      what: 'the card to show the resolve the second read found',
      timeoutMs: 8_000,
    });
    expect(h.sim.requestsFor('getIncident').filter((r) => r.status === 503)).toHaveLength(1);
    h.sim.webhooks.release();
    await cardMatchesVendor(incidentId, number);
  });

  it('resolve in flight while acknowledged in the web app: the vendor takes both, the card ends Resolved', async () => {
    const { streamId, incidentId, number } = await h.trigger(`resolve vs web ack ${skewMs}`);
    h.sim.webhooks.hold();
    const landing = gate();
    h.sim.delayNext('updateIncident', { until: landing.promise });
    await h.click('incident.resolve', streamId, { user: ANA.slack });
    await waitFor(
      () => h.sim.requestsFor('updateIncident').some((r) => r.url.includes(incidentId)) || undefined,
      {
        what: 'the resolve in flight',
      },
    );
    h.sim.webApp.acknowledge(incidentId, CHEN.email);
    landing.open();
    await recorded(streamId, 'IncidentResolved');
    h.sim.webhooks.release();
    await cardMatchesVendor(incidentId, number);
    expect(vendorStatus(incidentId)).toBe('resolved');
  });

  it('ack in flight while resolved in the web app: the vendor reopens it, the card follows', async () => {
    const { streamId, incidentId, number } = await h.trigger(`ack vs web resolve ${skewMs}`);
    const landing = gate();
    h.sim.delayNext('updateIncident', { until: landing.promise });
    // The pre-check read sees it open; the acknowledge itself waits until the web app has resolved.
    await h.click('incident.acknowledge', streamId, { user: ANA.slack });
    await waitFor(
      () => h.sim.requestsFor('updateIncident').some((r) => r.url.includes(incidentId)) || undefined,
      {
        what: 'the acknowledge in flight',
      },
    );
    h.sim.webApp.resolve(incidentId, CHEN.email);
    landing.open();
    await h.idle();
    await cardMatchesVendor(incidentId, number);
  });

  it('the webhook of our own acknowledge beats its answer: one acknowledgement, by the clicker', async () => {
    const { streamId, incidentId, number } = await h.trigger(`webhook first ${skewMs}`);
    const answer = gate();
    h.sim.delayNext('updateIncident', { until: answer.promise, afterApply: true });
    await h.click('incident.acknowledge', streamId, { user: BEN.slack });
    // Recorded from the webhook while the answer is still held.
    await recorded(streamId, 'IncidentAcknowledged');
    answer.open();
    await h.idle();
    await cardMatchesVendor(incidentId, number);
    expect(cardText(h.cardOf(OPS, number))).toContain('Acknowledged by <@U0BEN>');
    const acks = (await h.stream(streamId)).filter((e) => e.type === 'IncidentAcknowledged');
    expect(acks).toHaveLength(1);
  });

  it('an old webhook arriving after a newer state does not move the card back', async () => {
    const { incidentId, number } = await h.trigger(`late webhook ${skewMs}`);
    h.sim.webhooks.hold();
    h.sim.webApp.acknowledge(incidentId, CHEN.email);
    h.sim.webApp.unacknowledge(incidentId);
    // Newest first: the unacknowledge finds the card already triggered, then the acknowledge is late.
    h.sim.webhooks.release({ reverse: true });
    await h.idle();
    expect(vendorStatus(incidentId)).toBe('triggered');
    await cardMatchesVendor(incidentId, number);
  });

  it('duplicated webhooks around our own answer change nothing twice', async () => {
    const { streamId, incidentId, number } = await h.trigger(`duplicates ${skewMs}`);
    h.sim.webhooks.duplicateNext(2);
    await h.click('incident.acknowledge', streamId, { user: ANA.slack });
    await recorded(streamId, 'IncidentAcknowledged');
    h.sim.webhooks.duplicateNext(2);
    h.sim.webApp.resolve(incidentId, BEN.email);
    await recorded(streamId, 'IncidentResolved');
    await cardMatchesVendor(incidentId, number);
    const events = (await h.stream(streamId)).map((e) => e.type);
    expect(events.filter((t) => t === 'IncidentAcknowledged')).toHaveLength(1);
    expect(events.filter((t) => t === 'IncidentResolved')).toHaveLength(1);
  });

  it('a read-back that lags behind never moves the card back', async () => {
    const { streamId, incidentId, number } = await h.trigger(`read lag ${skewMs}`);
    h.sim.setReadLag(1_000);
    // Wait until the incident as it was is readable again, so the acknowledge's own check can see it.
    await waitFor(
      async () => {
        const res = await fetch(`${h.sim.url}/incidents/${incidentId}`, {
          headers: {
            authorization: `Token token=${h.sim.token}`,
            accept: 'application/vnd.pagerduty+json;version=2',
            'content-type': 'application/json',
          },
        });
        await res.text();
        return res.ok || undefined;
      },
      { what: 'the lagging read to show the incident' },
    );
    await h.click('incident.acknowledge', streamId, { user: ANA.slack });
    await recorded(streamId, 'IncidentAcknowledged');
    await h.idle();
    expect(vendorStatus(incidentId)).toBe('acknowledged');
    expect(cardText(h.cardOf(OPS, number))).toContain('Acknowledged by <@U0ANA>');
  });
});

describe('the person whose click lost is told', () => {
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

  it('an acknowledge overtaken by a resolve in the web app: the card says Resolved, the clicker gets a DM', async () => {
    const { streamId, incidentId, number } = await h.trigger('overtaken ack');
    // The acknowledge's own check of the incident is slow; the web-app resolve lands meanwhile.
    const checked = gate();
    h.sim.delayNext('getIncident', { until: checked.promise });
    await h.click('incident.acknowledge', streamId, { user: ANA.slack });
    await waitFor(
      () => h.sim.requestsFor('getIncident').some((r) => r.url.includes(incidentId)) || undefined,
      { what: 'the acknowledge checking the incident' },
    );
    h.sim.webApp.resolve(incidentId, CHEN.email);
    checked.open();
    await waitFor(() => cardText(h.cardOf(OPS, number)).includes('Resolved by') || undefined, {
      what: 'the card to show the resolve',
    });
    const dm = await waitFor(
      () => h.fake.messages(h.fake.dmChannel(ANA.slack).id).find((m) => m.text.includes(`#${number}`)),
      { what: 'the DM to Ana', timeoutMs: 8_000 },
    );
    expect(dm.text).toContain('acknowledge');
    expect(dm.text).toContain('resolved');
    expect(dm.text).toMatch(/<@U0CHEN>|Chen Wei/);
    await h.idle();
    expect(h.sim.state.incidents.get(incidentId)?.status).toBe('resolved');
    expect(h.sim.requestsFor('updateIncident').filter((r) => r.url.includes(incidentId))).toHaveLength(0);
  });
});

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { gate, waitFor } from '../support/waitFor.ts';
import {
  ANA,
  BEN,
  CHEN,
  cardActions,
  cardText,
  type IncidentHarness,
  OPS,
  startIncidentHarness,
  unixTs,
} from './harness.ts';

/**
 * Races between people (and automation), double clicks, stale cards and redeliveries each end in
 * one upstream write and one legal outcome; whoever lost is told why. These are what users of
 * other ChatOps bots report most: an Acknowledge racing an automatic resolve
 * (https://github.com/grafana-cold-storage/oncall/issues/3161), and buttons or retried deliveries acting twice
 * (https://github.com/slackapi/bolt-js/issues/822, https://github.com/getsentry/sentry/issues/69252).
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

const updatesOf = (incidentId: string) =>
  h.sim.requestsFor('updateIncident').filter((r) => r.url.includes(incidentId));

describe('one click, one write', () => {
  it('a double click acknowledges once and tells the user the second click is already in progress', async () => {
    const { streamId, incidentId, number } = await h.trigger('double click');
    const mark = h.fake.ephemerals.length;
    // The first click's acknowledge is held at the incident service until the second is answered.
    const landing = gate();
    h.sim.delayNext('updateIncident', { until: landing.promise });
    await Promise.all([
      h.click('incident.acknowledge', streamId, { user: ANA.slack }),
      h.click('incident.acknowledge', streamId, { user: ANA.slack }),
    ]);
    const told = await waitFor(
      () => h.ephemeralsFor(ANA.slack, mark).find((t) => t.includes('You already asked')),
      {
        what: 'the double click is answered',
      },
    );
    expect(told).toContain('acknowledge');
    landing.open();
    await waitFor(() => cardText(h.cardOf(OPS, number)).includes('Acknowledged by <@U0ANA>') || undefined, {
      what: 'the card shows the ack',
    });
    await h.idle();
    expect(updatesOf(incidentId)).toHaveLength(1);
    expect(h.sim.state.incidents.get(incidentId)?.acknowledgements).toHaveLength(1);
  });

  it("a second user's click on a stale card is refused with who acknowledged it and when", async () => {
    const { streamId, incidentId, number } = await h.trigger('stale card');
    await h.click('incident.acknowledge', streamId, { user: BEN.slack });
    await waitFor(() => cardText(h.cardOf(OPS, number)).includes('Acknowledged by <@U0BEN>') || undefined, {
      what: 'acked card',
    });
    // Chen still sees the old card and clicks Acknowledge.
    await h.click('incident.acknowledge', streamId, { user: CHEN.slack });
    const told = await waitFor(
      () => h.ephemeralsFor(CHEN.slack).find((t) => t.includes('Already acknowledged')),
      {
        what: 'Chen is told',
      },
    );
    expect(told).toMatch(
      /Already acknowledged by <@U0BEN> <!date\^\d+\^\{date_short_pretty\} at \{time\}\|[A-Z][a-z]{2} \d+, \d\d:\d\d UTC>/,
    );
    expect(updatesOf(incidentId)).toHaveLength(1);
  });

  it('ack and resolve racing: one wins upstream, the other is told to wait for it', async () => {
    const { streamId, incidentId, number } = await h.trigger('ack vs resolve');
    const mark = h.fake.ephemerals.length;
    // The winner's write is held at the incident service until the loser has been answered.
    const landing = gate();
    h.sim.delayNext('updateIncident', { until: landing.promise });
    await Promise.all([
      h.click('incident.acknowledge', streamId, { user: BEN.slack }),
      h.click('incident.resolve', streamId, { user: ANA.slack }),
    ]);
    await waitFor(
      () =>
        [BEN, ANA].some((p) => h.ephemeralsFor(p.slack, mark).some((t) => t.includes('still in progress'))) ||
        undefined,
      { what: 'one of the two is told to wait' },
    );
    landing.open();
    await h.idle();
    const writes = updatesOf(incidentId);
    expect(writes).toHaveLength(1);
    const body = writes[0]!.body as { incident: { status: string } };
    const winner = body.incident.status === 'acknowledged' ? BEN : ANA;
    const loser = winner === BEN ? ANA : BEN;
    expect(writes[0]!.headers.from).toBe(winner.email);
    expect(h.sim.state.incidents.get(incidentId)?.status).toBe(body.incident.status);
    const told = await waitFor(
      () => h.ephemeralsFor(loser.slack, mark).find((t) => t.includes('still in progress')),
      {
        what: 'the loser is told',
      },
    );
    expect(told).toContain(`<@${winner.slack}>`);
    await waitFor(
      () =>
        cardText(h.cardOf(OPS, number)).includes(
          body.incident.status === 'acknowledged' ? 'Acknowledged by' : 'Resolved by',
        ) || undefined,
      { what: 'the card shows the winner' },
    );
  });

  it('a Slack retry of the same click or command is recorded once and writes once', async () => {
    const { streamId, incidentId, number } = await h.trigger('slack retry');
    const actionTs = unixTs();
    const triggerId = h.fake.issueTrigger({ user: BEN.slack });
    const first = await h.click('incident.acknowledge', streamId, { user: BEN.slack, actionTs, triggerId });
    const again = await h.click('incident.acknowledge', streamId, { user: BEN.slack, actionTs, triggerId });
    expect([first.status, again.status]).toEqual([200, 200]);
    await waitFor(() => cardText(h.cardOf(OPS, number)).includes('Acknowledged by <@U0BEN>') || undefined, {
      what: 'acked card',
    });
    // The same slash command delivered twice (Slack retried it): one input, one refusal at most.
    const slashTrigger = h.fake.issueTrigger({ user: ANA.slack });
    await h.slash(`resolve ${number}`, { triggerId: slashTrigger });
    await h.slash(`resolve ${number}`, {
      triggerId: slashTrigger,
      headers: { 'x-slack-retry-num': '1', 'x-slack-retry-reason': 'http_timeout' },
    });
    await h.idle();
    const inputs = (await h.sb.store.readStream('inbox-slack')).filter(
      (e) =>
        e.type === 'SlackInputReceived' &&
        (JSON.stringify(e.data).includes(triggerId) || JSON.stringify(e.data).includes(slashTrigger)),
    );
    expect(inputs).toHaveLength(2);
    const moves = (await h.stream(streamId)).filter(
      (m) => m.type === 'IncidentAcknowledgeRequested' || m.type === 'IncidentResolveRequested',
    );
    expect(moves.map((m) => m.type)).toEqual(['IncidentAcknowledgeRequested', 'IncidentResolveRequested']);
    expect(updatesOf(incidentId)).toHaveLength(2);
    await waitFor(() => cardText(h.cardOf(OPS, number)).includes('Resolved') || undefined, {
      what: 'resolved card',
    });
  });
});

describe('webhooks delivered twice or out of order', () => {
  it('a duplicated webhook is recorded once and changes the card once', async () => {
    const { streamId, incidentId, number } = await h.trigger('duplicate webhook');
    await h.idle();
    const card = h.cardOf(OPS, number)!;
    const editsBefore = card.edits;
    h.sim.webhooks.duplicateNext(1);
    h.sim.webApp.acknowledge(incidentId, CHEN.email);
    await waitFor(() => h.sim.webhooks.attempts.some((a) => a.outcome === 'duplicate') || undefined, {
      what: 'the duplicate delivery',
    });
    await h.idle();
    const delivered = h.sim.webhooks.attempts.filter(
      (a) => a.eventType === 'incident.acknowledged' && a.body.includes(incidentId),
    );
    expect(delivered.length).toBeGreaterThanOrEqual(2);
    const inbox = (await h.sb.store.readStream('inbox-pagerduty')).filter((e) =>
      JSON.stringify(e.data).includes(delivered[0]!.webhookId),
    );
    expect(inbox).toHaveLength(1);
    const acks = (await h.stream(streamId)).filter((m) => m.type === 'IncidentAcknowledged');
    expect(acks).toHaveLength(1);
    expect(h.cards(OPS).filter((m) => m.text.startsWith(`#${number} `))).toHaveLength(1);
    expect(h.cardOf(OPS, number)!.edits - editsBefore).toBe(1);
    expect(cardText(h.cardOf(OPS, number))).toContain('<@U0CHEN>');
  });

  it('resolved delivered before acknowledged: the incident stays resolved', async () => {
    const { streamId, incidentId, number } = await h.trigger('out of order');
    await h.idle();
    h.sim.webhooks.hold();
    h.sim.webApp.acknowledge(incidentId, BEN.email);
    h.sim.webApp.resolve(incidentId, ANA.email);
    h.sim.webhooks.release({ reverse: true });
    await h.idle();
    const events = (await h.stream(streamId)).filter((m) => m.kind === 'event').map((m) => m.type);
    expect(events).toContain('IncidentResolved');
    expect(events).toContain('IncidentWebhookIgnored');
    expect(events.indexOf('IncidentWebhookIgnored')).toBeGreaterThan(events.indexOf('IncidentResolved'));
    await waitFor(() => cardText(h.cardOf(OPS, number)).includes('Resolved') || undefined, {
      what: 'resolved card',
    });
    expect(cardActions(h.cardOf(OPS, number))).toEqual(['incident.note']);
    // Nothing of ours was sent upstream: the late acknowledgement never reopens it.
    expect(updatesOf(incidentId)).toHaveLength(0);
    expect(h.sim.state.incidents.get(incidentId)?.status).toBe('resolved');
  });
});

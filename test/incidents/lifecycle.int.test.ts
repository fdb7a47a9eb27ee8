import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runEventsCli } from '../../src/cli/events.ts';
import { waitFor } from '../support/waitFor.ts';
import {
  ANA,
  BEN,
  cardActions,
  cardText,
  type IncidentHarness,
  OPS,
  startIncidentHarness,
} from './harness.ts';

/**
 * Trigger from Slack, Ack from the card, resolve from the web app: the happy path of issue 4's
 * done-when, asserted on the incident service (simulator), Slack (fake) and the store.
 */
let h: IncidentHarness;
beforeAll(async () => {
  h = await startIncidentHarness();
});
afterEach(() => {
  h.sim.assertNoViolations();
});
afterAll(async () => {
  await h.stop();
});

describe('an incident from trigger to resolve', () => {
  let streamId: string;
  let incidentId: string;

  it('/incident trigger creates the incident upstream as the user and posts its card in the channel', async () => {
    const res = await h.slash('trigger Payments API db-primary disk 95%');
    expect(res.status).toBe(200);
    expect(res.body?.text).toContain('Creating the incident');

    const card = await waitFor(
      () => h.cards(OPS).find((m) => cardText(m).includes('#1 ') && cardText(m).includes('Triggered')),
      { what: 'a triggered card in #ops', timeoutMs: 10_000 },
    );
    expect(cardText(card)).toContain('db-primary disk 95%');
    expect(cardActions(card)).toEqual(
      expect.arrayContaining([
        'incident.acknowledge',
        'incident.resolve',
        'incident.escalate',
        'incident.note',
        'incident.reassign',
      ]),
    );

    const creates = h.sim.requestsFor('createIncident');
    expect(creates).toHaveLength(1);
    expect(creates[0]!.headers.from).toBe(ANA.email);
    const created = [...h.sim.state.incidents.values()][0]!;
    expect(created.title).toBe('db-primary disk 95%');
    expect(created.serviceId).toBe('PSVC001');
    incidentId = created.id;

    streamId = await h.streamOfNumber(created.number);
    await h.idle();
    const types = (await h.stream(streamId)).filter((m) => m.kind === 'event').map((m) => m.type);
    expect(types[0]).toBe('IncidentTriggerRequested');
    expect(types).toEqual(
      expect.arrayContaining(['IncidentLinked', 'IncidentTriggered', 'IncidentCardPosted']),
    );
    // One card in the channel, whatever happened meanwhile.
    expect(h.cards(OPS)).toHaveLength(1);
  });

  it('the Acknowledge button acknowledges upstream as the clicking user and updates the card in place', async () => {
    const card = h.cards(OPS)[0]!;
    const res = await h.click('incident.acknowledge', streamId, { user: BEN.slack });
    expect(res.status).toBe(200);

    await waitFor(() => h.sim.state.incidents.get(incidentId)?.status === 'acknowledged', {
      what: 'acked upstream',
    });
    const updates = h.sim.requestsFor('updateIncident');
    expect(updates).toHaveLength(1);
    expect(updates[0]!.headers.from).toBe(BEN.email);

    await waitFor(() => cardText(h.cards(OPS)[0]).includes('Acknowledged by <@U0BEN>') || undefined, {
      what: 'card shows the ack',
    });
    expect(h.cards(OPS)).toHaveLength(1);
    expect(h.cards(OPS)[0]!.ts).toBe(card.ts);
    expect(cardActions(h.cards(OPS)[0])).not.toContain('incident.acknowledge');
  });

  it('a resolve in the web app reaches the card through the webhook', async () => {
    h.sim.webApp.resolve(incidentId, ANA.email, 'disk cleaned up');
    await waitFor(() => cardText(h.cards(OPS)[0]).includes('Resolved') || undefined, {
      what: 'card shows resolved',
    });
    await h.idle();
    const events = (await h.stream(streamId)).filter((m) => m.kind === 'event');
    const resolved = events.find((e) => e.type === 'IncidentResolved');
    expect(resolved?.data).toMatchObject({ source: 'webhook' });
    expect(cardActions(h.cards(OPS)[0])).toEqual(['incident.note']);
    expect(h.cards(OPS)).toHaveLength(1);
  });

  it('/incident timeline lists what people did and how the incident changed; `all` gives the full audit', async () => {
    const number = h.sim.state.incidents.get(incidentId)!.number;
    const text = await h.answer(await h.slash(`timeline ${number}`, { user: ANA.slack }));
    expect(text).toContain('Trigger requested');
    expect(text).toContain('Acknowledge requested');
    expect(text).toContain('<@U0BEN>');
    expect(text).toContain('Resolved (incident service webhook)');
    for (const plumbing of ['Card posted', 'Card updated', 'received', 'Linked to'])
      expect(text).not.toContain(plumbing);
    expect(text).toContain(`/incident timeline ${number} all`);

    const audit = await h.answer(await h.slash(`timeline ${number} all`, { user: ANA.slack }));
    expect(audit).toContain('full audit');
    expect(audit).toContain('Trigger requested');
    expect(audit).toContain('Card posted');
    expect(audit).toContain('Webhook incident.resolved received');
  });

  it('/readyz and /metrics cover the incident processors', async () => {
    await h.idle();
    const ready = await fetch(`${h.url}/readyz`);
    expect(ready.status).toBe(200);
    const metrics = await (await fetch(`${h.url}/metrics`)).text();
    for (const p of ['incident-upstream', 'incident-cards', 'incident-notices', 'incident-read-models']) {
      expect(metrics).toContain(`processor="${p}"`);
    }
  });

  it('`npm run events -- read <stream>` shows the same events as the timeline', async () => {
    const out: string[] = [];
    const code = await runEventsCli(['read', streamId, '--json'], {
      env: { EVENT_STORE_URL: `sqlite:${h.dbPath}` },
      stdout: (line) => out.push(line),
      stderr: () => undefined,
      tty: false,
    });
    expect(code).toBe(0);
    const cli = out
      .flatMap((l) => l.split('\n'))
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { type: string });
    const stored = await h.stream(streamId);
    expect(cli.map((e) => e.type)).toEqual(stored.map((e) => e.type));
    expect(cli.map((e) => e.type)).toEqual(
      expect.arrayContaining([
        'TriggerIncident',
        'IncidentTriggered',
        'AcknowledgeIncident',
        'RecordIncidentWebhook',
        'IncidentCardPosted',
      ]),
    );
  });
});

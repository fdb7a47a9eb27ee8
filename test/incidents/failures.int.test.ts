import { createHmac } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../support/waitFor.ts';
import {
  ANA,
  BEN,
  cardText,
  type IncidentHarness,
  NORA,
  OPS,
  startIncidentHarness,
  WEBHOOK_SECRET,
} from './harness.ts';

/**
 * When the incident service says no, is slow, or is not who it claims to be: durable retries
 * (429 with `ratelimit-reset`, 5xx), the user told when it finally fails, forged webhooks refused
 * with nothing stored, and a Slack user without an incident-service user told what is missing.
 */
let h: IncidentHarness;
beforeAll(async () => {
  h = await startIncidentHarness({ incidentRetryBaseMs: 30 });
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
const eventsOf = async (streamId: string) => (await h.stream(streamId)).filter((m) => m.kind === 'event');

describe('upstream failures are retried durably', () => {
  it('a 429 waits for ratelimit-reset, then the acknowledgement goes through', async () => {
    const { streamId, incidentId, number } = await h.trigger('rate limited');
    h.sim.failNext('updateIncident', { status: 429, resetSeconds: 1 });
    await h.click('incident.acknowledge', streamId, { user: BEN.slack });
    await waitFor(() => h.sim.state.incidents.get(incidentId)?.status === 'acknowledged', {
      what: 'acked after the retry',
      timeoutMs: 10_000,
    });
    await h.idle();
    const writes = updatesOf(incidentId);
    expect(writes.map((w) => w.status)).toEqual([429, 200]);
    expect(writes.every((w) => w.headers.from === BEN.email)).toBe(true);
    const failed = (await eventsOf(streamId)).find((e) => e.type === 'IncidentUpstreamCallFailed')!;
    expect(failed.data).toMatchObject({ attempt: 1, code: 'SB_UPSTREAM_RATE_LIMITED', final: false });
    const waited = Date.parse(String(failed.data.nextAttemptAt)) - Date.parse(String(failed.data.at));
    expect(waited).toBeGreaterThanOrEqual(1_000);
    const types = (await eventsOf(streamId)).map((e) => e.type);
    expect(types).toContain('IncidentUpstreamCallRetried');
    expect(types).toContain('IncidentAcknowledged');
    // The retry went through the durable scheduler.
    expect((await h.sb.store.listStreams({ prefix: 'timer-incident-retry-' })).length).toBeGreaterThan(0);
    await waitFor(() => cardText(h.cardOf(OPS, number)).includes('Acknowledged by <@U0BEN>') || undefined, {
      what: 'card acked',
    });
  });

  it('5xx twice, then success: three attempts, one acknowledgement', async () => {
    const { streamId, incidentId } = await h.trigger('flaky upstream');
    h.sim.failNext('updateIncident', { status: 503, times: 2 });
    await h.click('incident.acknowledge', streamId, { user: ANA.slack });
    await waitFor(() => h.sim.state.incidents.get(incidentId)?.status === 'acknowledged', {
      what: 'acked on the third attempt',
      timeoutMs: 10_000,
    });
    expect(updatesOf(incidentId).map((w) => w.status)).toEqual([503, 503, 200]);
    const failures = (await eventsOf(streamId)).filter((e) => e.type === 'IncidentUpstreamCallFailed');
    expect(failures.map((f) => f.data.attempt)).toEqual([1, 2]);
  });

  it('after five failed attempts the card says so and the requester gets a DM', async () => {
    const { streamId, incidentId, number } = await h.trigger('down for good');
    h.sim.failNext('updateIncident', { status: 502, times: 5 });
    await h.click('incident.acknowledge', streamId, { user: ANA.slack });
    const dm = await waitFor(
      () => h.fake.messages(h.fake.dmChannel(ANA.slack).id).find((m) => m.text.includes(`#${number}`)),
      { what: 'the DM to the requester', timeoutMs: 15_000 },
    );
    expect(dm.text).toContain(`Couldn't acknowledge`);
    expect(dm.text).toContain('after 5 attempts');
    expect(dm.text).toContain('could not be reached');
    await waitFor(
      () =>
        cardText(h.cardOf(OPS, number)).includes('Gave up trying to acknowledge after 5 attempts') ||
        undefined,
      {
        what: 'the card shows the failure',
      },
    );
    expect(updatesOf(incidentId)).toHaveLength(5);
    expect(h.sim.state.incidents.get(incidentId)?.status).toBe('triggered');
    // Acknowledge is offered again.
    expect(cardText(h.cardOf(OPS, number))).toContain('incident.acknowledge');
    await h.idle();
    expect(
      h.fake.messages(h.fake.dmChannel(ANA.slack).id).filter((m) => m.text.includes(`#${number}`)),
    ).toHaveLength(1);
  });
});

describe('creating an incident when the incident service fails', () => {
  it('a create that landed but whose answer was lost is found by its incident key, not created twice', async () => {
    const before = h.sim.state.incidents.size;
    h.sim.failNext('createIncident', { status: 502, afterApply: true });
    // Webhooks held: only the retry can find out that the first attempt landed.
    h.sim.webhooks.hold();
    await h.slash('trigger Payments API answer lost');
    const card = await waitFor(
      () => h.cards(OPS).find((m) => m.text.includes('answer lost') && cardText(m).includes('Triggered')),
      { what: 'the card of the incident', timeoutMs: 10_000 },
    );
    h.sim.webhooks.release();
    await h.idle();
    const created = [...h.sim.state.incidents.values()].filter((i) => i.title === 'answer lost');
    expect(created).toHaveLength(1);
    expect(h.sim.state.incidents.size).toBe(before + 1);
    expect(created[0]!.incidentKey).toMatch(/^switchboard:/);
    expect(card.text).toContain(`#${created[0]!.number} `);
    expect(h.sim.requestsFor('listIncidents').some((r) => r.url.includes('incident_key='))).toBe(true);
  });

  it('a create that keeps failing ends "Not created" on the card, and the requester is told', async () => {
    h.sim.failNext('createIncident', { status: 500, times: 5 });
    await h.slash('trigger Payments API never created', { user: BEN.slack });
    const dm = await waitFor(
      () => h.fake.messages(h.fake.dmChannel(BEN.slack).id).find((m) => m.text.includes('never created')),
      // Five attempts through the durable scheduler: generous for a loaded machine.
      { what: 'the DM', timeoutMs: 60_000 },
    );
    expect(dm.text).toContain("Couldn't create the incident “never created” after 5 attempts");
    const card = h.cards(OPS).find((m) => m.text.includes('never created'))!;
    expect(cardText(card)).toContain('Not created');
    expect([...h.sim.state.incidents.values()].some((i) => i.title === 'never created')).toBe(false);
    // A refused move on it explains why.
    const mark = h.fake.ephemerals.length;
    const streamId = ((card.blocks ?? []) as { block_id?: string }[])
      .map((b) => b.block_id ?? '')
      .find((id) => id.startsWith('incident.actions:'))
      ?.slice('incident.actions:'.length);
    if (streamId) {
      await h.click('incident.acknowledge', streamId, { user: BEN.slack });
      const told = await waitFor(() => h.ephemeralsFor(BEN.slack, mark)[0], { what: 'refusal' });
      expect(told).toContain('Creating this incident failed');
    }
  });
});

describe('who may speak', () => {
  it('a webhook with a bad signature is refused with 401 and nothing is stored', async () => {
    const before = (await h.sb.store.readStream('inbox-pagerduty')).length;
    const body = JSON.stringify({
      event: {
        id: 'forged-1',
        event_type: 'incident.resolved',
        resource_type: 'incident',
        occurred_at: new Date().toISOString(),
        data: {},
      },
    });
    const wrong = `v1=${createHmac('sha256', 'not-the-secret').update(body).digest('hex')}`;
    for (const signature of [wrong, undefined]) {
      const res = await fetch(`${h.url}/webhooks/pagerduty`, {
        method: 'POST',
        body,
        headers: {
          'content-type': 'application/json',
          'x-webhook-id': `forged-${signature ? 'wrong' : 'none'}`,
          ...(signature ? { 'x-pagerduty-signature': signature } : {}),
        },
      });
      expect(res.status).toBe(401);
    }
    expect((await h.sb.store.readStream('inbox-pagerduty')).length).toBe(before);
    // The right secret among several (a rotation) is accepted; a body that is not V3 is a 400.
    const good = `v1=${'0'.repeat(64)},v1=${createHmac('sha256', WEBHOOK_SECRET).update('{"x":1}').digest('hex')}`;
    const malformed = await fetch(`${h.url}/webhooks/pagerduty`, {
      method: 'POST',
      body: '{"x":1}',
      headers: {
        'content-type': 'application/json',
        'x-webhook-id': 'malformed-1',
        'x-pagerduty-signature': good,
      },
    });
    expect(malformed.status).toBe(400);
  });

  it('a Slack user with no incident-service user is told what is missing, and nothing is written', async () => {
    const { streamId, incidentId } = await h.trigger('unmapped clicker');
    const mark = h.fake.ephemerals.length;
    await h.click('incident.acknowledge', streamId, { user: NORA.slack });
    const told = await waitFor(() => h.ephemeralsFor(NORA.slack, mark)[0], { what: 'Nora is told' });
    expect(told).toContain(`Your Slack email ${NORA.email} has no user in the incident service`);
    expect(told).toContain('ask an admin');
    await h.idle();
    expect(updatesOf(incidentId)).toHaveLength(0);
    const rejected = (await h.sb.store.readStream('inbox-slack')).filter(
      (e) => e.type === 'CommandRejected' && e.data.actor === NORA.slack,
    );
    expect(rejected.at(-1)?.data).toMatchObject({
      code: 'SB_UNMAPPED_USER',
      commandType: 'AcknowledgeIncident',
    });
  });

  it('a tampered button value reaches no other stream and the user hears why', async () => {
    const mark = h.fake.ephemerals.length;
    const res = await h.click('incident.acknowledge', 'inbox-slack', { user: ANA.slack });
    expect(res.status).toBe(200);
    const told = await waitFor(() => h.ephemeralsFor(ANA.slack, mark)[0], { what: 'Ana is told' });
    expect(told).toContain("doesn't belong to an incident");
    const inbox = await h.sb.store.readStream('inbox-slack');
    expect(inbox.filter((e) => e.type === 'AcknowledgeIncident')).toHaveLength(0);
  });
});

import { readdirSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cardText, type IncidentHarness, OPS, startIncidentHarness } from '../incidents/harness.ts';
import { waitFor } from '../support/waitFor.ts';

/**
 * Issue 9 item 2: an incident service (or a gateway in front of it) that answers errors repeating
 * the `Authorization` header it received must not leak the token into the store or to people.
 * The simulator echoes the header (whole and as the bare key) in its error bodies; after a full
 * flow of failing writes (final refusal, retries given up, a failed create, the timeline), neither
 * the SQLite files nor anything the fake Slack received holds the token.
 */
let h: IncidentHarness;
beforeAll(async () => {
  h = await startIncidentHarness({ incidentRetryBaseMs: 10 });
});
afterAll(async () => {
  await h.stop();
});

const TOKEN = 'sim-pagerduty-token';

describe('credentials echoed by the incident service', () => {
  it('reach neither the store nor Slack', async () => {
    // The token the bot sends is the one the simulator echoes.
    const { streamId, incidentId, number } = await h.trigger('echoing gateway');
    const sent = h.sim.requests.find((r) => r.url.includes(incidentId) || r.operationId === 'createIncident');
    expect(String(sent?.headers.authorization)).toContain(TOKEN);

    // 1. A refusal (final at once): the card and the requester's DM give the reason.
    h.sim.failNext('updateIncident', { status: 400, echoAuthorization: true });
    await h.click('incident.acknowledge', streamId);
    await waitFor(
      () =>
        cardText(h.cardOf(OPS, number)).includes('Gave up trying to acknowledge after 1 attempt') ||
        undefined,
      {
        what: 'the card shows the refusal',
        timeoutMs: 10_000,
      },
    );

    // 2. Retries given up (5xx each time): failure events, the card and a DM.
    h.sim.failNext('updateIncident', { status: 500, echoAuthorization: true, times: 5 });
    await h.click('incident.resolve', streamId);
    await waitFor(
      () =>
        cardText(h.cardOf(OPS, number)).includes('Gave up trying to resolve after 5 attempts') || undefined,
      { what: 'the card shows the resolve given up', timeoutMs: 15_000 },
    );

    // 3. A create the service refuses.
    h.sim.failNext('createIncident', { status: 400, echoAuthorization: true });
    const create = await h.slash('trigger Payments API refused create');
    await h.idle();

    // 4. The timeline, the card and the replies render every failure.
    const timeline = await h.answer(await h.slash(`timeline ${number}`));
    expect(timeline).toContain('failed');
    const failures = (await h.stream(streamId)).filter((e) => e.type === 'IncidentUpstreamCallFailed');
    expect(failures.length).toBeGreaterThanOrEqual(6);
    // The echo did happen, and what is kept says what went wrong without the credential.
    expect(JSON.stringify(failures.map((f) => f.data))).toContain('[Redacted]');

    await h.idle();
    const seenBySlack = JSON.stringify([
      h.fake.calls,
      h.fake.responsePosts,
      h.fake.ephemerals,
      create.body,
      timeline,
    ]);
    expect(seenBySlack).toContain('echoing gateway');
    expect(seenBySlack).not.toContain(TOKEN);
    expect(seenBySlack).not.toMatch(/Token token=/i);

    // Every byte of the store (the database and its WAL) on disk.
    const dir = dirname(h.dbPath);
    const files = readdirSync(dir).filter((f) => f.startsWith('switchboard.db'));
    expect(files.length).toBeGreaterThan(0);
    for (const f of files) {
      const bytes = readFileSync(`${dir}/${f}`);
      expect(bytes.includes(Buffer.from(TOKEN)), f).toBe(false);
      expect(bytes.includes(Buffer.from('Token token=')), f).toBe(false);
    }
  });
});

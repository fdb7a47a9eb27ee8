import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commandMetadata, type SlackInput, slackInboxEventId } from '../../src/application/inbox.ts';
import type { Command } from '../../src/core/messages.ts';
import { ANA, CHEN, type IncidentHarness, OPS, startIncidentHarness } from '../incidents/harness.ts';
import { waitFor } from '../support/waitFor.ts';

/**
 * The incident service's `From` header names who acts. It must come from the acting Slack user's
 * mapped identity (the people directory), never from anything the command itself carries: a
 * recorded command whose data names another person (`asUser`, `by`, a `from` field), as a tampered
 * payload or an old stored shape could, still acts as the Slack user who sent it.
 */
let h: IncidentHarness;
beforeAll(async () => {
  h = await startIncidentHarness();
});
afterAll(async () => {
  await h.stop();
});

const inputAs = (actor: string): SlackInput => {
  const deliveryId = `trigger-${randomUUID()}`;
  return {
    source: 'slack',
    inputKind: 'slash_command',
    deliveryId,
    eventId: slackInboxEventId(deliveryId),
    name: '/incident',
    receivedAt: h.sb.clock.now().toISOString(),
    actor,
    teamId: 'T0TEAM',
    channelId: OPS,
    triggerId: deliveryId,
    responseUrl: undefined,
    retryNum: undefined,
    retryReason: undefined,
    payload: {},
  };
};

describe('From is the mapped identity of whoever acted', () => {
  it('a command whose data names Chen (asUser, by, from) still writes as Ana, who sent it', async () => {
    const { streamId, incidentId } = await h.trigger('disk full on db-7');
    const input = inputAs(ANA.slack);
    const forged = {
      type: 'AddIncidentNote',
      data: {
        streamId,
        content: 'restarted the primary',
        by: CHEN.slack,
        asUser: { id: CHEN.pd, email: CHEN.email, name: 'Chen Wei' },
        from: CHEN.email,
      },
      metadata: commandMetadata(input),
    } as unknown as Command;
    await h.sb.inbox.accept({ input, commands: [forged] });

    const note = await waitFor(
      () => h.sim.requestsFor('createIncidentNote').find((r) => r.url.includes(incidentId)),
      { what: 'the note POST' },
    );
    expect(note.headers.from).toBe(ANA.email);
    await h.idle();
    const added = (await h.stream(streamId)).find((m) => m.type === 'IncidentNoteAdded');
    expect(JSON.stringify(added?.data ?? {})).not.toContain(CHEN.email);
    expect(h.sim.requestsFor('createIncidentNote').every((r) => r.headers.from === ANA.email)).toBe(true);
  });
});

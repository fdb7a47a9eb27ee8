import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { blockActionPayload, interactionBody, newTriggerId } from '../../sandbox/simulators/slack/signing.ts';
import { SLACK_INBOX_STREAM } from '../../src/application/inbox.ts';
import { incidentActionsBlockId } from '../../src/incidents/blocks/incidentIds.ts';
import { ANA, BEN, type IncidentHarness, startIncidentHarness } from '../incidents/harness.ts';

/**
 * Issue 9 item 5: the card a click came from and the incident its button names must agree; a
 * replayed block_suggestion is one input, not one per delivery.
 */
let h: IncidentHarness;
beforeAll(async () => {
  h = await startIncidentHarness();
});
afterAll(async () => {
  await h.stop();
});

const inboxEvents = async () => h.sb.store.readStream(SLACK_INBOX_STREAM);

describe('a tampered button value', () => {
  it("a click on incident A's card whose value names incident B is refused and recorded; B is untouched", async () => {
    const a = await h.trigger('tamper A: disk full');
    const b = await h.trigger('tamper B: queue stuck');
    const clickOn = (card: typeof a.card, value: string, blockId: string) => {
      const payload = blockActionPayload({
        action_id: 'incident.acknowledge',
        value,
        user_id: BEN.slack,
        channel_id: card.channel,
        message_ts: card.ts,
        trigger_id: newTriggerId(),
        response_url: h.fake.responseUrl({ channel: card.channel, user: BEN.slack }),
      });
      (payload['actions'] as Record<string, unknown>[])[0]!['block_id'] = blockId;
      return payload;
    };

    // The value names B; the card (channel + message ts) is A's, and so is the block id.
    const tampered = clickOn(a.card, b.streamId, incidentActionsBlockId(a.streamId));
    const res = await h.post(interactionBody(tampered), 'form');
    expect(res.status).toBe(200);
    await h.idle();

    expect((await h.stream(b.streamId)).map((e) => e.type)).not.toContain('IncidentAcknowledgeRequested');
    expect((await h.stream(a.streamId)).map((e) => e.type)).not.toContain('IncidentAcknowledgeRequested');
    expect(h.sim.incident(b.incidentId)?.status).toBe('triggered');
    const input = (await inboxEvents()).find(
      (e) =>
        e.type === 'SlackInputReceived' &&
        JSON.stringify(e.data).includes(b.streamId) &&
        JSON.stringify(e.data).includes(a.card.ts),
    );
    expect(input?.data).toMatchObject({
      commands: [],
      rejection: { message: expect.stringContaining('another incident') },
    });
    expect(h.ephemeralsFor(BEN.slack).join('\n')).toMatch(/doesn't match the card/);

    // The same value with a block id of B (both tampered) on A's card: still A's card, still refused.
    const both = clickOn(a.card, b.streamId, incidentActionsBlockId(b.streamId));
    expect((await h.post(interactionBody(both), 'form')).status).toBe(200);
    await h.idle();
    expect((await h.stream(b.streamId)).map((e) => e.type)).not.toContain('IncidentAcknowledgeRequested');

    // An honest click on B's own card acknowledges B.
    const honest = clickOn(b.card, b.streamId, incidentActionsBlockId(b.streamId));
    expect((await h.post(interactionBody(honest), 'form')).status).toBe(200);
    await h.idle();
    expect((await h.stream(b.streamId)).map((e) => e.type)).toContain('IncidentAcknowledgeRequested');
  });
});

describe('a replayed block_suggestion', () => {
  it('is stored once', async () => {
    const suggestion = interactionBody({
      type: 'block_suggestion',
      team: { id: 'T0SWITCH' },
      user: { id: ANA.slack, team_id: 'T0SWITCH' },
      container: { type: 'view', view_id: 'V0TRIGGER' },
      view: { id: 'V0TRIGGER', hash: '1700000000.abc', callback_id: 'incident.trigger', type: 'modal' },
      action_id: 'incident.service',
      block_id: 'service',
      value: 'pay',
    });
    const before = (await inboxEvents()).length;
    for (let i = 0; i < 3; i++) {
      const res = await h.post(suggestion, 'form');
      expect(res.status).toBe(200);
    }
    await h.idle();
    const added = (await inboxEvents()).slice(before).filter((e) => e.type === 'SlackInputReceived');
    expect(added).toHaveLength(1);
  });

  it('a different typeahead (another value) is its own input', async () => {
    const body = (value: string) =>
      interactionBody({
        type: 'block_suggestion',
        team: { id: 'T0SWITCH' },
        user: { id: ANA.slack, team_id: 'T0SWITCH' },
        view: { id: 'V0TRIGGER2', hash: '1700000001.abc', callback_id: 'incident.trigger', type: 'modal' },
        action_id: 'incident.service',
        block_id: 'service',
        value,
      });
    const before = (await inboxEvents()).length;
    await h.post(body('pa'), 'form');
    await h.post(body('pay'), 'form');
    await h.idle();
    const added = (await inboxEvents()).slice(before).filter((e) => e.type === 'SlackInputReceived');
    expect(added).toHaveLength(2);
  });
});

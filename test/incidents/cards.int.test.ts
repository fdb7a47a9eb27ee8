import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { FakeMessage } from '../../sandbox/simulators/slack/fakeSlack.ts';
import { waitFor } from '../support/waitFor.ts';
import { BEN, cardText, type IncidentHarness, OPS, startIncidentHarness } from './harness.ts';

/**
 * Cards under Slack's limits and across restarts: a rate-limited `chat.update` (HTTP 429 with
 * `Retry-After`, https://api.slack.com/docs/rate-limits) is not called again before Retry-After and
 * then shows the latest state; a replay of every incident event after a restart (as after a crash
 * between an append and its side effect) updates cards but never posts one twice. The Web API client waits out no
 * Retry-After itself here (`slackMaxInlineWaitMs: 0`), so the cards processor does.
 */
let h: IncidentHarness;
beforeAll(async () => {
  h = await startIncidentHarness({ slackMaxInlineWaitMs: 0 });
});
afterEach(async () => {
  h.fake.clearBehaviour();
  await h.idle();
  h.sim.assertNoViolations();
});
afterAll(async () => {
  await h.stop();
});

const updatesOf = (number: number) =>
  h.fake.callsOf('chat.update').filter((c) => String(c.params.text ?? '').startsWith(`#${number} `));

describe('cards', () => {
  it('a 429 on chat.update is waited out, and the card then shows the latest state', async () => {
    const { incidentId, number } = await h.trigger('rate limited card');
    await h.idle();
    h.fake.failNext('chat.update', { status: 429, retryAfter: 1 });
    h.sim.webApp.acknowledge(incidentId, BEN.email);
    h.sim.webApp.setPriority(incidentId, 'P2', BEN.email);
    h.sim.webApp.setPriority(incidentId, 'P1', BEN.email);
    await waitFor(
      () => {
        const text = cardText(h.cardOf(OPS, number));
        return text.includes('Acknowledged by <@U0BEN>') && text.includes('*Priority*\\nP1')
          ? true
          : undefined;
      },
      { what: 'the latest state on the card', timeoutMs: 10_000 },
    );
    const calls = updatesOf(number);
    const limited = calls.findIndex((c) => c.status === 429);
    expect(limited).toBeGreaterThanOrEqual(0);
    const after = calls.slice(limited + 1);
    expect(after.length).toBeGreaterThan(0);
    // No call to chat.update before Slack's Retry-After has passed, and few after it (coalesced).
    expect(after[0]!.at - calls[limited]!.at).toBeGreaterThanOrEqual(1_000);
    expect(after.length).toBeLessThanOrEqual(3);
  });

  it('a card Slack took but whose answer was lost (5xx), and that its history shows only a second later, is posted once', async () => {
    // Slack does not promise that a read right after a post sees it: here it shows a second late.
    h.fake.setHistoryLag(1_000);
    try {
      h.fake.failNext('chat.postMessage', { status: 500, afterApply: true });
      const { streamId } = await h.trigger('answer lost after the post');
      await h.idle();
      const marked = (m: FakeMessage) =>
        (m.metadata?.event_payload as Record<string, unknown> | undefined)?.['stream'] === streamId;
      const cards = h.fake.messages(OPS).filter(marked);
      expect(cards).toHaveLength(1);
      expect(cardText(cards[0])).toContain('Triggered');
      // The post whose answer was lost was not sent again blind: looked for first, then recorded.
      const posts = h.fake
        .callsOf('chat.postMessage')
        .filter((c) => JSON.stringify(c.params).includes(streamId));
      expect(posts.map((c) => c.status)).toEqual([500]);
      expect(h.fake.callsOf('conversations.history').length).toBeGreaterThan(0);
    } finally {
      h.fake.setHistoryLag(0);
    }
  });

  it('after a restart that replays every incident event, cards are updated, never posted twice', async () => {
    const first = await h.trigger('survives a restart');
    const second = await h.trigger('survives a restart too');
    await h.click('incident.acknowledge', second.streamId, { user: BEN.slack });
    await waitFor(() => cardText(h.cardOf(OPS, second.number)).includes('Acknowledged by') || undefined, {
      what: 'acked card',
    });
    await h.idle();
    const postsBefore = h.fake.callsOf('chat.postMessage').length;
    const cardsBefore = h.cards(OPS).length;
    const updatesBefore = h.fake.callsOf('chat.update').length;

    await h.restart({ replay: ['incident-cards', 'incident-upstream', 'incident-notices'] });
    await h.idle();

    expect(h.fake.callsOf('chat.postMessage').length).toBe(postsBefore);
    expect(h.cards(OPS).length).toBe(cardsBefore);
    // Replayed renders only update cards in place (coalesced per incident).
    expect(h.fake.callsOf('chat.update').length).toBeGreaterThan(updatesBefore);
    // No upstream call was repeated: every request was already confirmed.
    expect(h.sim.requestsFor('updateIncident').filter((r) => r.url.includes(second.incidentId))).toHaveLength(
      1,
    );
    expect(
      h.sim
        .requestsFor('createIncident')
        .filter((r) => JSON.stringify(r.body).includes('survives a restart')),
    ).toHaveLength(2);
    // The app still works after the restart.
    await h.click('incident.resolve', first.streamId, { user: BEN.slack });
    await waitFor(() => cardText(h.cardOf(OPS, first.number)).includes('Resolved by <@U0BEN>') || undefined, {
      what: 'resolved after the restart',
    });
  });
});

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { INCIDENT_THREAD_PROCESSOR } from '../../src/incidents/thread.reactor.ts';
import { waitFor } from '../support/waitFor.ts';
import { ANA, type IncidentHarness, OPS, startIncidentHarness } from './harness.ts';

/**
 * Issue 22 item 2: the card's thread tells the story, one line per timeline entry, once each,
 * also after a redelivery.
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

const replies = (cardTs: string) =>
  h.fake.messages(OPS).filter((m) => m.thread_ts === cardTs && m.ts !== cardTs && m.bot_id !== '');
const count = (cardTs: string, words: string) => replies(cardTs).filter((m) => m.text.includes(words)).length;

describe('the thread of a card', () => {
  it('gets one reply each for trigger, acknowledge, note and resolve, and still one after a redelivery', async () => {
    const { number, incidentId, card } = await h.trigger('Checkout 502s from the edge');
    await waitFor(() => count(card.ts, `Triggered #${number}`) === 1 || undefined, { what: 'trigger reply' });

    await h.slash(`ack ${number}`, { user: ANA.slack });
    await waitFor(() => count(card.ts, 'Acknowledged') === 1 || undefined, { what: 'ack reply' });

    await h.slash(`note ${number} rolled back the edge config`, { user: ANA.slack });
    await waitFor(() => count(card.ts, 'rolled back the edge config') === 1 || undefined, {
      what: 'note reply',
    });

    await h.slash(`resolve ${number}`, { user: ANA.slack });
    await waitFor(() => h.sim.state.incidents.get(incidentId)?.status === 'resolved' || undefined, {
      what: 'resolved upstream',
    });
    await waitFor(() => count(card.ts, 'Resolved') === 1 || undefined, { what: 'resolve reply' });
    await h.idle();

    const before = replies(card.ts).map((m) => m.text);
    // Requests are not told twice (the state change says it).
    expect(before.some((t) => t.includes('requested'))).toBe(false);
    // One line each, a Slack date token for its time.
    for (const t of before) expect(t).toMatch(/^<!date\^\d+\^/);

    await h.restart({ replay: [INCIDENT_THREAD_PROCESSOR] });
    await h.idle();
    expect(replies(card.ts).map((m) => m.text)).toEqual(before);
    for (const words of [`Triggered #${number}`, 'Acknowledged', 'rolled back the edge config', 'Resolved']) {
      expect(count(card.ts, words)).toBe(1);
    }
  });
});

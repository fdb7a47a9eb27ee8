import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { slackTsTime } from '../../machines/incident/statusUpdates.ts';
import { interactionBody, messageActionPayload } from '../../sandbox/simulators/slack/signing.ts';
import { INCIDENT_SHORTCUT } from '../../src/incidents/blocks/incidentIds.ts';
import { INCIDENT_THREAD_PROCESSOR } from '../../src/incidents/thread.reactor.ts';
import { waitFor } from '../support/waitFor.ts';
import { ANA, BEN, type IncidentHarness, NORA, OPS, startIncidentHarness } from './harness.ts';

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

/** "Add to timeline" on `message`, by `user`: the answers through the shortcut's response_url. */
const addToTimeline = async (
  user: string,
  message: Readonly<{
    channel: string;
    ts: string;
    thread_ts?: string | undefined;
    user: string;
    bot_id?: string;
    text: string;
  }>,
) => {
  const responseUrl = h.fake.responseUrl({ channel: message.channel, user });
  const id = responseUrl.slice(responseUrl.lastIndexOf('/') + 1);
  const res = await h.post(
    interactionBody(
      messageActionPayload({
        callback_id: INCIDENT_SHORTCUT.addToTimeline,
        user_id: user,
        channel_id: message.channel,
        response_url: responseUrl,
        message: {
          ts: message.ts,
          thread_ts: message.thread_ts,
          user: message.user,
          ...(message.bot_id ? { bot_id: message.bot_id } : {}),
          text: message.text,
        },
      }),
    ),
    'form',
  );
  expect(res.status).toBe(200);
  return () =>
    h.fake.responsePosts.filter((p) => p.responseUrlId === id).map((p) => String(p.body?.text ?? ''));
};

const threadNotes = async (streamId: string) =>
  (await h.stream(streamId)).filter((m) => m.kind === 'command' && m.type === 'RecordIncidentThreadNote');

describe('"Add to timeline" on a reply in the thread', () => {
  it("adds a mapped person's reply as a note stamped with the message's time; twice is once", async () => {
    const { streamId, card } = await h.trigger('Disk filling on db-primary');
    const reply = h.fake.postAsUser(OPS, ANA.slack, 'failover to db-replica-2 done, <watching> it', card.ts);
    const answers = await addToTimeline(BEN.slack, reply);
    await waitFor(async () => ((await threadNotes(streamId)).length === 1 ? true : undefined), {
      what: 'the note on the timeline',
    });
    expect(answers().join('\n')).toContain('Adding <@U0ANA>');
    const [note] = await threadNotes(streamId);
    expect(note?.data).toMatchObject({
      by: ANA.slack,
      addedBy: BEN.slack,
      content: 'failover to db-replica-2 done, <watching> it',
      at: slackTsTime(reply.ts),
      messageTs: reply.ts,
    });

    // The same message again (another person, or a double click): still one note.
    await addToTimeline(ANA.slack, reply);
    await h.idle();
    expect(await threadNotes(streamId)).toHaveLength(1);

    // On the timeline, at the message's time, escaped.
    const timeline = await h.slash(`timeline ${streamId}`, { user: BEN.slack });
    const text = await h.answer(timeline);
    const seconds = Math.floor(Date.parse(slackTsTime(reply.ts)!) / 1000);
    expect(text).toContain(`<!date^${seconds}^`);
    expect(text).toContain('failover to db-replica-2 done, &lt;watching&gt; it');
    // Not echoed in the thread it came from.
    expect(
      h.fake.messages(OPS).filter((m) => m.thread_ts === card.ts && m.text.includes('failover')),
    ).toHaveLength(1);
  });

  it('refuses, in words, a message that is not a reply in a card thread', async () => {
    const { streamId } = await h.trigger('Cache hit rate dropping');
    const loose = h.fake.postAsUser(OPS, ANA.slack, 'anyone else seeing cache misses?');
    const answers = await addToTimeline(ANA.slack, loose);
    await waitFor(() => (answers().length > 0 ? true : undefined), { what: 'the refusal' });
    expect(answers().join('\n')).toContain('this message isn’t one, so nothing was added');
    // A reply in the thread of a message that is not a card is no better.
    const inOtherThread = h.fake.postAsUser(OPS, BEN.slack, 'me too', loose.ts);
    const again = await addToTimeline(ANA.slack, inOtherThread);
    await waitFor(() => (again().length > 0 ? true : undefined), { what: 'the second refusal' });
    expect(again().join('\n')).toContain('isn’t one');
    await h.idle();
    expect(await threadNotes(streamId)).toHaveLength(0);
  });

  it("refuses a reply by someone the incident service does not know, and Switchboard's own lines", async () => {
    const { streamId, card } = await h.trigger('Webhook backlog growing');
    const byNora = h.fake.postAsUser(OPS, NORA.slack, 'I restarted the consumer', card.ts);
    const answers = await addToTimeline(ANA.slack, byNora);
    await waitFor(() => (answers().some((t) => t.includes("isn't one")) ? true : undefined), {
      what: 'the refusal of an unmapped author',
    });
    expect(answers().join('\n')).toContain(`<@${NORA.slack}> isn't one`);
    expect(answers().join('\n')).not.toMatch(/SB_[A-Z_]+/);

    const ours = await waitFor(
      () => h.fake.messages(OPS).find((m) => m.thread_ts === card.ts && m.ts !== card.ts && m.bot_id !== ''),
      { what: 'a thread line of ours' },
    );
    const refused = await addToTimeline(ANA.slack, ours);
    await waitFor(() => (refused().length > 0 ? true : undefined), { what: 'the refusal of a bot line' });
    expect(refused().join('\n')).toContain('Only replies people typed');
    await h.idle();
    expect(await threadNotes(streamId)).toHaveLength(0);
  });
});

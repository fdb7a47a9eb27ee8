import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type IncidentHarness, OPS, startIncidentHarness } from '../incidents/harness.ts';
import { waitFor } from '../support/waitFor.ts';

/**
 * Issue 9 item 9: Slack reads `<…>` in any `text` (mrkdwn, and the notification fallback of a
 * message) as a link, a mention or a broadcast. Usage placeholders, titles and whatever a user
 * typed are escaped (`&`, `<`, `>`) in every text field; titles and notes are bounded.
 */
let h: IncidentHarness;
beforeAll(async () => {
  h = await startIncidentHarness();
});
afterAll(async () => {
  await h.stop();
});

const ackText = (r: { body: Record<string, unknown> | null }) => String(r.body?.text ?? '');
const UNESCAPED = /<(?![@#!]?[A-Z0-9]+[|>]|https?:)/; // a `<` that is not one of our own mentions or links

describe('usage lines and echoed input are escaped', () => {
  it('a usage placeholder is not a link', async () => {
    const text = ackText(await h.slash('show'));
    expect(text).toContain('/incident show &lt;id or number&gt;');
    expect(text).not.toContain('<id or number>');
  });

  it('what the user typed is echoed escaped', async () => {
    // A raw `<!channel>` is Slack's own broadcast token (typed `<` arrives as `&lt;`): decoded at
    // the edge to the words `@channel` (issue 19); either way it is never echoed as a ping.
    const text = ackText(await h.slash('show <!channel>'));
    expect(text).not.toContain('<!channel>');
    expect(text).not.toMatch(UNESCAPED);
    const unknown = ackText(await h.slash('<!here>'));
    expect(unknown).not.toContain('<!here>');
    expect(unknown).not.toMatch(UNESCAPED);
  });

  it('help renders its placeholders as text', async () => {
    const help = JSON.stringify((await h.slash('help')).body);
    expect(help).toContain('&lt;service&gt;');
    expect(help).not.toContain('<service>');
  });
});

describe('a card whose title holds a broadcast', () => {
  it('notifies nobody: the text fallback is escaped like the blocks', async () => {
    await h.slash('trigger Payments API <!channel> db & cache <down>');
    const card = await waitFor(() => h.cards(OPS).find((m) => m.text.includes('db &amp; cache')), {
      what: 'the card',
      timeoutMs: 10_000,
    });
    // `<!channel>` as Slack sends a broadcast is decoded to `@channel` at the edge (issue 19 item 2);
    // typed text (`&lt;!channel&gt;` from Slack) is escaped back: test/incidents/text.int.test.ts.
    expect(card.text).toMatch(/(@channel|&lt;!channel&gt;) db &amp; cache &lt;down&gt;/);
    expect(card.text).not.toContain('<!channel>');
    const posted = h.fake.calls.filter((c) => c.method === 'chat.postMessage' || c.method === 'chat.update');
    expect(JSON.stringify(posted)).not.toContain('<!channel>');
  });
});

describe('titles and notes are bounded', () => {
  it('a title over 255 characters is refused with a clear sentence', async () => {
    const before = h.sim.state.incidents.size;
    const text = ackText(await h.slash(`trigger Payments API ${'x'.repeat(400)}`));
    expect(text).toContain('keep it to 255');
    const quoted = ackText(await h.slash(`trigger "Payments API" ${'y'.repeat(300)}`));
    expect(quoted).toContain('That title is 300 characters long; keep it to 255');
    await h.idle();
    expect(h.sim.state.incidents.size).toBe(before);
  });

  it('a note over 3000 characters is refused with a clear sentence', async () => {
    const text = ackText(await h.slash(`note 1 ${'z'.repeat(3001)}`));
    expect(text).toContain('That note is 3001 characters long; keep it to 3000');
  });
});

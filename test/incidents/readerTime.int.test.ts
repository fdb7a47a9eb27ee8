import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manualClock } from '../../src/core/clock.ts';
import { waitFor } from '../support/waitFor.ts';
import { ANA, CHEN, MINUTE, type PagingHarness, startPagingHarness } from './pagingHarness.ts';

/**
 * Issue 19 item 3, end to end on the incidents lifecycle: times in Slack are Slack date tokens (each
 * reader's own zone; the fallback names UTC), and where Slack cannot format (SMS, voice) the page
 * says the time in the recipient's zone from their Slack profile, named, looked up once per person
 * (users.info, cached) however many pages go out.
 *
 * Chen (level 1 of Platform Gateway) sits in Singapore. 17:00 UTC on Nov 23 is 01:00 on Nov 24
 * there: a UTC text would give him the wrong day as well as the wrong hour.
 */
let h: PagingHarness;
const clock = manualClock('2026-11-23T17:00:00.000Z');
const unix = (iso: string) => Math.floor(Date.parse(iso) / 1000);
const TOKEN = /<!date\^(\d+)\^\{date_short_pretty\} at \{time(?:_secs)?\}\|([^>]*)>/g;

beforeAll(async () => {
  h = await startPagingHarness({ clock, zones: { [CHEN.slack]: 'Asia/Singapore' } });
  await h.verifyPhone(CHEN.slack, CHEN.phone);
});
afterAll(async () => {
  await h.stop();
});

const inbox = (digits: string) => h.vonage.phones.inbox(digits).map((m) => m.text);

/** The incident's card in #ops, as JSON, once it says `what`. */
const cardSays = (number: number, what: string) =>
  waitFor(
    () => {
      const card = h.fake.messages('C0OPS').find((m) => m.bot_id !== '' && m.text.startsWith(`#${number} `));
      const text = JSON.stringify(card?.blocks ?? []);
      return text.includes(what) ? { blocks: text, text: card?.text ?? '' } : undefined;
    },
    { what: `#${number}'s card to say “${what}”`, timeoutMs: 10_000 },
  );

/** `/incident timeline <n>` as Ana: the answer's JSON. */
const timeline = async (number: number): Promise<string> => {
  const from = h.fake.responsePosts.length;
  const answered = await h.slash(`timeline ${number}`);
  if (answered.includes('Timeline:')) return answered;
  const posted = await waitFor(
    () => h.fake.responsePosts.slice(from).find((p) => JSON.stringify(p.body).includes('Timeline:')),
    { what: 'the timeline', timeoutMs: 10_000 },
  );
  return JSON.stringify(posted.body);
};

describe('every time in the reader’s zone', () => {
  it('the SMS and the call say when it was triggered in the recipient’s zone, naming it', async () => {
    const triggeredAt = clock.now().toISOString();
    const { number } = await h.trigger('Checkout 5xx');
    const before = inbox(CHEN.phone).length;
    await h.advance(5 * MINUTE);
    const sms = await waitFor(() => inbox(CHEN.phone).slice(before).at(0), { what: 'the SMS page' });
    expect(sms).toBe(
      `[Switchboard] #${number} Checkout 5xx, triggered today, 01:00 Asia/Singapore — reply 4 to acknowledge, 6 to resolve`,
    );
    expect(sms).not.toContain('UTC');

    await h.advance(3 * MINUTE);
    const call = await waitFor(() => h.vonage.phones.calls(CHEN.phone).at(0), { what: 'the page call' });
    h.vonage.phones.answer(call.uuid);
    const spoken = call.spoken.join(' ');
    expect(spoken).toContain('triggered today at 01:00 Singapore time');
    expect(spoken).not.toMatch(/\d{4}-\d{2}-\d{2}/);

    // Nothing formatted is recorded: the page records the instant, and its text a placeholder.
    const pager = await h.stream(`pager-${CHEN.slack}`);
    const requested = pager.find((e) => e.type === 'PageRequested')?.data as Record<string, unknown>;
    expect(requested.since).toBe(triggeredAt);
    expect(`${requested.text} ${requested.spokenText}`).not.toMatch(/Singapore|UTC|\d{2}:\d{2}/);
    expect(requested.text).toContain('triggered {since}');
  });

  it('the card’s times are Slack date tokens with a fallback naming its zone; its notification text names UTC', async () => {
    const { number } = await h.trigger('Search latency');
    const triggeredAt = clock.now().toISOString();
    await h.slash(`ack ${number}`, ANA.slack);
    await h.idle();
    const card = await cardSays(number, 'Acknowledged by');
    const tokens = [...card.blocks.matchAll(TOKEN)];
    expect(tokens.length).toBeGreaterThanOrEqual(2);
    expect(tokens.map((t) => Number(t[1]))).toContain(unix(triggeredAt));
    for (const t of tokens) expect(t[2]).toMatch(/^[A-Z][a-z]{2} \d{1,2}, \d{2}:\d{2} UTC$/);
    expect(card.blocks).toContain(`Triggered by <@${ANA.slack}> <!date^${unix(triggeredAt)}^`);
    expect(card.blocks).not.toMatch(/at \d{2}:\d{2} UTC/);
    // The notification text cannot show a token: the time, dated, with its zone.
    expect(card.text).toMatch(/Acknowledged by .* Nov 23, 17:\d{2} UTC/);
  });

  it('a timeline item from yesterday shows its date: a Slack date token, outside any code span', async () => {
    const triggeredAt = clock.now().toISOString();
    const { number } = await h.trigger('Disk 95%');
    await h.advance(24 * 60 * MINUTE);
    const told = await timeline(number);
    const token = `<!date^${unix(triggeredAt)}^{date_short_pretty} at {time_secs}|Nov 23, ${triggeredAt.slice(11, 19)} UTC>`;
    expect(told).toContain(token);
    expect(told).not.toContain(`\`${token}`);
    expect(told).not.toMatch(/`\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC`/);
  });

  it('a storm of pages to one person asks Slack for their zone once', async () => {
    const lookups = () => h.fake.callsOf('users.info').filter((c) => c.params.user === CHEN.slack).length;
    const asked = lookups();
    const before = inbox(CHEN.phone).length;
    for (const title of ['Storm 1', 'Storm 2', 'Storm 3', 'Storm 4']) await h.trigger(title);
    await h.advance(5 * MINUTE);
    const pages = await waitFor(
      () => (inbox(CHEN.phone).length >= before + 4 ? inbox(CHEN.phone).slice(before) : undefined),
      { what: 'four SMS pages' },
    );
    for (const sms of pages) expect(sms).toMatch(/triggered today, \d{2}:\d{2} Asia\/Singapore/);
    // One look-up at most (none when the last page's is still within the hour's TTL), not one a page.
    expect(lookups() - asked).toBeLessThanOrEqual(1);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manualClock } from '../../src/core/clock.ts';
import { waitFor } from '../support/waitFor.ts';
import { CHEN, MINUTE, type PagingHarness, startPagingHarness } from './pagingHarness.ts';

/**
 * Issue 10 item 4: at most K pages per person per hour (PAGING_MAX_PER_HOUR=2 here); a page over
 * it is held back and the incident's timeline says so. Per-service delays
 * (PAGING_DELAY_BY_SERVICE) override PAGING_DELAY_MINUTES.
 */
let h: PagingHarness;
const clock = manualClock('2026-11-23T09:00:00.000Z');

beforeAll(async () => {
  h = await startPagingHarness({
    clock,
    env: { PAGING_MAX_PER_HOUR: '2', PAGING_DELAY_MINUTES: '10', PAGING_DELAY_BY_SERVICE: 'PSVC003=2' },
  });
  await h.verifyPhone(CHEN.slack, CHEN.phone);
});
afterAll(async () => {
  await h.stop();
});

const pages = () =>
  h.vonage.phones.inbox(CHEN.phone).filter((m) => m.text.includes('reply 4 to acknowledge'));

describe('limits', () => {
  it('pages after the service’s own delay, at most K an hour, and says when one is held back', async () => {
    const first = await h.trigger('Storm one');
    const second = await h.trigger('Storm two');
    const third = await h.trigger('Storm three');
    await h.advance(1 * MINUTE);
    expect(pages()).toHaveLength(0);
    await h.advance(1 * MINUTE); // Platform Gateway (PSVC003) pages after 2 minutes, not 10
    await waitFor(() => pages().length === 2 || undefined, { what: 'two pages' });
    const held = [first, second, third].find((i) => !pages().some((p) => p.text.includes(`#${i.number} `)))!;
    expect(await h.pageActivity(held.streamId)).toContainEqual({
      kind: 'held_back',
      slackUserId: CHEN.slack,
      via: null,
    });
    await waitFor(
      () => {
        const card = h.fake
          .messages('C0OPS')
          .find((m) => m.bot_id !== '' && m.text.startsWith(`#${held.number} `));
        return (
          JSON.stringify(card?.blocks ?? []).includes('could not be paged: too many pages this hour') ||
          undefined
        );
      },
      { what: 'the card to say the page was held back', timeoutMs: 10_000 },
    );

    // An hour later the person can be paged again.
    await h.advance(60 * MINUTE);
    const fourth = await h.trigger('Storm four');
    await h.advance(2 * MINUTE);
    await waitFor(() => pages().some((p) => p.text.includes(`#${fourth.number} `)) || undefined, {
      what: 'paged again after the hour',
    });
  });
});

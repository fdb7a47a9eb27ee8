import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manualClock } from '../../src/core/clock.ts';
import { waitFor } from '../support/waitFor.ts';
import { CHEN, MINUTE, type PagingHarness, startPagingHarness } from './pagingHarness.ts';

/**
 * Issue 18 item 1: a verified phone keeps being paged across restarts and secret rotations. Chen
 * (level 1 of Platform Gateway) verified his phone the way a checked code links it: sealed under
 * his own data key, itself wrapped under the data key ring (SWITCHBOARD_DATA_KEYS). Each test
 * restarts the app on the same SQLite file, triggers an incident, and waits for the SMS page on
 * Chen's phone, then resolves it with a reply (so the reply path opens his number too).
 */
let h: PagingHarness;
const clock = manualClock('2026-11-23T09:00:00.000Z');

beforeAll(async () => {
  h = await startPagingHarness({ clock });
  await h.verifyPhoneSealed(CHEN.slack, CHEN.phone);
});
afterAll(async () => {
  await h.stop();
});

const inbox = (digits: string) => h.vonage.phones.inbox(digits).map((m) => m.text);

/** Triggers an incident, waits for Chen's SMS page, and resolves it by replying 6 from his phone. */
const pagedAndResolved = async (title: string): Promise<void> => {
  const { number, incidentId } = await h.trigger(title);
  const before = inbox(CHEN.phone).length;
  await h.advance(5 * MINUTE);
  const sms = await waitFor(() => inbox(CHEN.phone).slice(before).at(0), {
    what: `the SMS page about “${title}”`,
  });
  expect(sms).toBe(`[Switchboard] #${number} ${title} — reply 4 to acknowledge, 6 to resolve`);
  expect((await h.vonage.phones.replySms(CHEN.phone, '6')).ok).toBe(true);
  await h.idle();
  await waitFor(() => h.pd.state.incidents.get(incidentId)?.status === 'resolved' || undefined, {
    what: `#${number} resolved by Chen's reply`,
  });
};

describe('paging across restarts and rotations', () => {
  it('pages a verified phone after a restart on the same store', async () => {
    await pagedAndResolved('Before any restart');
    await h.restart();
    await pagedAndResolved('After a plain restart');
  });

  it('rotating VONAGE_SIGNATURE_SECRET keeps paging', async () => {
    const next = 'vonage-signature-secret-after-rotation-5d1c';
    h.vonage.rotateSignatureSecret(next);
    await h.restart({ VONAGE_SIGNATURE_SECRET: next });
    await pagedAndResolved('After the webhook secret rotated');
  });
});

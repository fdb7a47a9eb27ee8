import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manualClock } from '../../src/core/clock.ts';
import { waitFor } from '../support/waitFor.ts';
import { CHEN, FRANK, MINUTE, type PagingHarness, startPagingHarness } from './pagingHarness.ts';

/**
 * Issue 10 items 4-6, end to end: an incident still triggered N minutes after it was triggered
 * pages its level's on-call by SMS, then by a call M minutes later; a reply or a key pressed
 * acknowledges or resolves it as that person; anything that acknowledges it stops the pages.
 * PAGING_DELAY_MINUTES=5 (the default), PAGING_CALL_AFTER_MINUTES=3 (the default).
 */
let h: PagingHarness;
const clock = manualClock('2026-11-23T09:00:00.000Z');

beforeAll(async () => {
  h = await startPagingHarness({ clock });
  await h.verifyPhone(CHEN.slack, CHEN.phone);
  await h.verifyPhone(FRANK.slack, FRANK.phone);
});
afterAll(async () => {
  if (process.env.PAGING_DEBUG) {
    for (const l of h.logs.lines()) if (!/^(debug|trace)$/.test(String(l.level)) || /page|paging|trigger/i.test(String(l.msg))) console.log(JSON.stringify(l).slice(0, 600));
  }
  await h.stop();
});

const inbox = (digits: string) => h.vonage.phones.inbox(digits).map((m) => m.text);

describe('paging by SMS, then voice', () => {
  it('pages by SMS after N minutes, calls after M more, and a key pressed acknowledges as that person', async () => {
    const { streamId, number, incidentId } = await h.trigger('Checkout 5xx');
    const before = inbox(CHEN.phone).length;

    await h.advance(4 * MINUTE);
    expect(inbox(CHEN.phone)).toHaveLength(before);

    await h.advance(1 * MINUTE);
    const sms = await waitFor(() => inbox(CHEN.phone).slice(before).at(0), { what: 'the SMS page' });
    expect(sms).toBe(`[Switchboard] #${number} Checkout 5xx — reply 4 to acknowledge, 6 to resolve`);
    expect(h.vonage.phones.calls(CHEN.phone)).toHaveLength(0);

    await h.advance(3 * MINUTE);
    const call = await waitFor(() => h.vonage.phones.calls(CHEN.phone).at(0), { what: 'the page call' });
    h.vonage.phones.answer(call.uuid);
    expect(call.spoken.join(' ')).toContain(`Incident ${number}: Checkout 5xx`);
    expect(call.spoken.join(' ')).toContain('Press 4 to acknowledge');

    const pressed = await h.vonage.phones.pressKeys(call.uuid, '4');
    expect(pressed.status).toBe(200);
    expect(JSON.stringify(pressed.ncco)).toContain(`you acknowledge #${number} Checkout 5xx`);

    await waitFor(() => h.pd.state.incidents.get(incidentId)?.status === 'acknowledged' || undefined, {
      what: 'acknowledged upstream',
      timeoutMs: 10_000,
    });
    await h.idle();
    // As Chen: the incident service was told who (From: Chen's email).
    const ack = h.pd.requestsFor('updateIncident').at(-1);
    expect(JSON.stringify(ack?.headers ?? {})).toContain(CHEN.email);
    const activity = await h.pageActivity(streamId);
    expect(activity).toContainEqual({ kind: 'sms_submitted', slackUserId: CHEN.slack, via: null });
    expect(activity).toContainEqual({ kind: 'call_created', slackUserId: CHEN.slack, via: null });
    expect(activity).toContainEqual({ kind: 'phone_acknowledged', slackUserId: CHEN.slack, via: 'voice' });
  });
});

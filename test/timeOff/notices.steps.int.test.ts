import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { TIME_OFF_ACTION } from '../../src/timeOff/blocks/timeOffIds.ts';
import { ANA, DANA, messageText, startTimeOffHarness, type TimeOffHarness } from './harness.ts';
import { advanceUntil, phaseOf } from './hrFixtures.ts';
import { buttons, noticesDriver } from './noticesDriver.ts';

/**
 * The rarer steps of a request, end to end against the HR simulator: a resubmission that goes
 * back to the approver (a new card; the old one says it was replaced), a request cancelled in the
 * HR web app, a cancel HR would not do, a submission HR took but never showed, and Slack failing a
 * post (retried, still one card).
 */
let h: TimeOffHarness;
const d = noticesDriver(() => h);

const dmTo = (user: string, match: RegExp) => h.dms(user).some((m) => match.test(messageText(m)));

/** Approved by Dana on her card and recorded in HR (its lag passed). */
const confirmed = async (id: string) => {
  await d.approve(id);
  await advanceUntil(h, async () => (await phaseOf(h, id)) === 'confirmed');
};

beforeEach(async () => {
  h = await startTimeOffHarness();
  await d.seedDirectory();
});

afterEach(async () => {
  await h.stop();
});

describe('time-off notices: the rarer steps', () => {
  it('a resubmission with new dates goes back to the approver: a new card, the old one replaced without buttons', async () => {
    const id = await d.request({ policyType: 'Sabbatical' });
    await d.approve(id);
    await h.dm(/HR refused to record it/, ANA);
    await d.send(
      'ResubmitTimeOff',
      { timeOffId: id, ...d.ask({ policyType: 'Holiday', startDate: '2026-12-14', endDate: '2026-12-15' }) },
      ANA,
    );
    const cards = d.cardsFor(id);
    expect(cards).toHaveLength(2);
    const [old, fresh] = cards;
    expect(buttons(old ?? { blocks: [] })).toEqual([]);
    expect(messageText(old ?? { text: '' })).toContain('changed this request after HR refused it');
    expect(messageText(fresh ?? { text: '' })).toContain('Mon 14 Dec – Tue 15 Dec 2026');
    expect(buttons(fresh ?? { blocks: [] }).map((b) => b.action_id)).toContain(TIME_OFF_ACTION.approve);
    // The new card is the one recorded on the request.
    expect(await d.cardRef(id, true)).toEqual({ channel: fresh?.channel, ts: fresh?.ts });
    expect(messageText(d.statusOf(id))).toContain('Waiting for <@U0DANA> to approve');
  });

  it('cancelled in the HR web app: the requester is told, the card says cancelled', async () => {
    const id = await d.request();
    await confirmed(id);
    const hrRequestId = h.api.readModel.hrRequestIdOf(id);
    expect(hrRequestId).not.toBeNull();
    h.sim.webApp.cancel(Number(hrRequestId));
    await advanceUntil(h, async () => dmTo(ANA, /was cancelled in HR/));
    const dm = h.dms(ANA).find((m) => /was cancelled in HR/.test(messageText(m)));
    expect(messageText(dm ?? { text: '' })).toContain('someone cancelled it in the HR web app');
    expect(messageText(d.card(id))).toContain('Cancelled.');
    expect(buttons(d.statusOf(id))).toEqual([]);
  });

  it('a cancel HR would not do: the requester is told in words that it still stands', async () => {
    const id = await d.request();
    await confirmed(id);
    h.sim.failNext('cancelTimeOffRequest', {
      status: 503,
      body: { error: 'upstream connect error at hr-db-7.internal' },
      times: 50,
    });
    await d.send('CancelTimeOff', { timeOffId: id }, ANA);
    await advanceUntil(h, async () => dmTo(ANA, /Cancelling your \*Holiday\*.* failed/), { stepMs: 5_000 });
    const dm = h.dms(ANA).find((m) => /Cancelling your \*Holiday\*.* failed/.test(messageText(m)));
    const text = messageText(dm ?? { text: '' });
    expect(text).toContain('HR could not be reached');
    expect(text).toContain('It still stands in HR');
    expect(text).not.toContain('hr-db-7');
    expect(messageText(d.statusOf(id))).not.toContain('hr-db-7');
    expect(buttons(d.statusOf(id)).map((b) => b.action_id)).toEqual([TIME_OFF_ACTION.cancel]);
  });

  it('HR took the submission but never showed it: "sent it to HR at … but HR hasn’t shown it yet", with the zone', async () => {
    const id = await d.request();
    h.sim.setLagMs(60 * 60_000);
    await d.approve(id);
    await advanceUntil(h, async () => dmTo(ANA, /Switchboard sent it to HR </), { stepMs: 5_000 });
    const dm = h.dms(ANA).find((m) => /Switchboard sent it to HR </.test(messageText(m)));
    expect(messageText(dm ?? { text: '' })).toContain(
      `Switchboard sent it to HR <!date^${Date.parse('2026-11-23T09:00:00Z') / 1000}^{date_short_pretty} at {time}|Nov 23, 09:00 UTC> but HR hasn't shown it yet. Switchboard keeps watching HR and will tell you; check HR if it matters now.`,
    );
    // Not a refusal: nothing to send again.
    expect(buttons(dm ?? { blocks: [] })).toEqual([]);
    expect(dmTo(ANA, /HR refused to record it|so it is not recorded in HR/)).toBe(false);
    expect(messageText(d.statusOf(id))).toContain(
      `Sent to HR <!date^${Date.parse('2026-11-23T09:00:00Z') / 1000}^{date_short_pretty} at {time}|Nov 23, 09:00 UTC>; HR hasn't shown it yet. Switchboard keeps watching HR.`,
    );
  });

  it('Slack failing the card’s post is retried by the processor: one card, recorded once', async () => {
    h.fake.failNext('chat.postMessage', { status: 503 }, 1);
    const id = await d.request();
    expect(d.cardsFor(id)).toHaveLength(1);
    expect((await h.types(id)).filter((t) => t === 'TimeOffApprovalAsked')).toHaveLength(1);
    expect(h.dms(DANA)).toHaveLength(1);
    expect(h.fake.callsOf('chat.postMessage').filter((c) => c.status === 503)).toHaveLength(1);
  });
});

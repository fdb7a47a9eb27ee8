import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '../support/waitFor.ts';
import {
  ANA,
  BEN,
  CHEN,
  DANA,
  DAY,
  FRANK,
  GIL,
  HOUR,
  type JoinsHarness,
  MINUTE,
  PAYMENTS_CHANNEL,
  PAYMENTS_POLICY,
  PAYMENTS_SCHEDULE,
  PHONES,
  PLATFORM_CHANNEL,
  PLATFORM_POLICY,
  startJoinsHarness,
} from './harness.ts';

/**
 * Issue 12: what the incident lifecycle offers the others (the `onCall` and `scheduleOverrides`
 * ports), through the running app, against the joins world: Ben on call this week on Payments
 * primary, Ana next week, then Chen; level 2 Dana, level 3 Frank; Platform: Chen, then Ana.
 */
let h: JoinsHarness | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
});

const ports = (j: JoinsHarness) => {
  const onCall = j.sb.ports.get('onCall');
  const overrides = j.sb.ports.get('scheduleOverrides');
  if (!onCall || !overrides) throw new Error('the incident lifecycle offers no on-call ports');
  return { onCall, overrides };
};

describe('the on-call ports in the joins world', () => {
  it('names who could cover a shift, the policies naming someone, and the channels of a rota', async () => {
    h = await startJoinsHarness();
    const { onCall } = ports(h);
    const { monday, nextMonday } = h.nextWeek();
    const { shifts } = await onCall.shiftsOf({ slackUserId: ANA }, { since: monday, until: nextMonday });
    const turn = shifts.find((s) => s.schedule?.id === PAYMENTS_SCHEDULE);
    expect(turn).toBeDefined();
    // The rota's other people, then Dana (level 2) and Frank (level 3). Gil is in no rota.
    expect(await onCall.colleaguesOf(turn!)).toEqual([
      { slackUserId: BEN },
      { slackUserId: CHEN },
      { slackUserId: DANA },
      { slackUserId: FRANK },
    ]);
    expect(await onCall.policiesNaming({ slackUserId: ANA })).toEqual([
      { id: PLATFORM_POLICY, name: 'Platform', level: 2 },
    ]);
    expect(await onCall.policiesNaming({ slackUserId: BEN })).toEqual([]);
    expect(await onCall.channelsFor({ scheduleId: PAYMENTS_SCHEDULE })).toEqual([PAYMENTS_CHANNEL]);
    expect(await onCall.channelsFor({ escalationPolicyId: PLATFORM_POLICY })).toEqual([PLATFORM_CHANNEL]);
    expect(await onCall.channelsFor({ escalationPolicyId: PAYMENTS_POLICY })).toEqual([PAYMENTS_CHANNEL]);
    await expect(onCall.policiesNaming({ slackUserId: GIL })).rejects.toMatchObject({
      code: 'SB_UNMAPPED_USER',
    });
  });

  it('checks first: an override made once is found covered (what a retry asks before creating another)', async () => {
    h = await startJoinsHarness();
    const { overrides } = ports(h);
    const { monday } = h.nextWeek();
    // Ben covers Ana's Tuesday next week.
    const slot = {
      scheduleId: PAYMENTS_SCHEDULE,
      person: { slackUserId: BEN },
      start: new Date(monday.getTime() + DAY),
      end: new Date(monday.getTime() + 2 * DAY),
    };
    expect(await overrides.covered(slot)).toBe(false);
    expect(await overrides.create([slot])).toMatchObject([{ ok: true }]);
    expect(await overrides.covered(slot)).toBe(true);
    expect(h.pd.state.schedules.get(PAYMENTS_SCHEDULE)?.overrides).toHaveLength(1);
    // Ana's own turn covers her own Tuesday; Ben's override is not hers.
    expect(await overrides.covered({ ...slot, person: { slackUserId: ANA } })).toBe(false);
    expect(
      await overrides.covered({ ...slot, person: { slackUserId: ANA }, start: monday, end: slot.start }),
    ).toBe(true);
  });

  it('counts the night pages Switchboard really sent, in the person’s time zone', async () => {
    // Monday 23 November, 22:30 UTC: 22:30 in London (Ben's), so a page five minutes on is at night.
    h = await startJoinsHarness({ start: '2026-11-23T22:30:00.000Z' });
    const { onCall } = ports(h);
    for (const person of [BEN, DANA]) await h.verifyPhone(person);
    const since = new Date(h.clock.now().getTime() - 7 * DAY);
    expect(await onCall.nightPagesOf({ slackUserId: BEN }, since)).toBe(0);

    const night = await h.trigger('Card payments failing');
    await h.advanceTimers(5 * MINUTE);
    await waitFor(() => h!.smsTo(PHONES[BEN]).some((m) => m.text.includes(`#${night.number}`)) || undefined, {
      what: 'Ben paged at night',
      timeoutMs: 10_000,
    });
    await waitFor(
      async () => ((await onCall.nightPagesOf({ slackUserId: BEN }, since)) === 1 ? true : undefined),
      {
        what: 'the night page counted',
        timeoutMs: 10_000,
      },
    );
    await h.incident(`ack ${night.number}`, { user: BEN });
    await h.idle();

    // 10:00 in London the next morning: a page by day is not counted.
    h.clock.advance(11 * HOUR);
    const day = await h.trigger('Refunds slow');
    await h.advanceTimers(5 * MINUTE);
    await waitFor(() => h!.smsTo(PHONES[BEN]).some((m) => m.text.includes(`#${day.number}`)) || undefined, {
      what: 'Ben paged by day',
      timeoutMs: 10_000,
    });
    await h.idle();
    expect(await onCall.nightPagesOf({ slackUserId: BEN }, since)).toBe(1);
    expect(await onCall.nightPagesOf({ slackUserId: BEN }, new Date(h.clock.now().getTime() - HOUR))).toBe(0);
    expect(await onCall.nightPagesOf({ slackUserId: DANA }, since)).toBe(0);
  });
});

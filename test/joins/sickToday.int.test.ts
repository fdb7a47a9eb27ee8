import { afterEach, describe, expect, it } from 'vitest';
import { shortTimeOffId, TIME_OFF_ACTION } from '../../src/timeOff/blocks/timeOffIds.ts';
import { waitFor } from '../support/waitFor.ts';
import {
  ANA,
  BEN,
  CHEN,
  DANA,
  HR_IDS,
  type JoinsHarness,
  joinsSeed,
  messageText,
  PAYMENTS_CHANNEL,
  PAYMENTS_SCHEDULE,
  PD_IDS,
  PLATFORM_POLICY,
  startJoinsHarness,
} from './harness.ts';

/**
 * Issue 20 item 5, "sick today, on call today", on the three simulators and the manual clock: Ben is
 * on call this week (Payments primary) with an open incident; at 09:00 on Monday he asks for sick
 * leave today. Without waiting for Dana's approval, the rest of his shift today gets one override
 * for the top-ranked colleague, his open incident is reassigned to them, #payments is told, and the
 * colleague is DMed.
 */
let h: JoinsHarness | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
});

const PD_OF: Readonly<Record<string, string>> = { [ANA]: PD_IDS.ana, [CHEN]: PD_IDS.chen };

/** The joins world with Ana free today: the Platform policy names only Chen. */
const anaFree = (weekStart: Date) => {
  const seed = joinsSeed(weekStart);
  return {
    ...seed,
    escalationPolicies: seed.escalationPolicies.map((p) =>
      p.id === PLATFORM_POLICY ? { ...p, rules: p.rules.slice(0, 1) } : p,
    ),
  };
};

describe('sick today while on call (issue 20)', () => {
  it('one override for the rest of the shift, the open incident reassigned, the colleague DMed, the channel told', async () => {
    // Ana is free today (in the default world the Platform policy names her directly, so she is
    // on call all the time and nobody could be ranked to cover).
    h = await startJoinsHarness({ seed: anaFree });
    const j = h;
    const { number, incidentId } = await j.trigger('Card payments failing');
    const assigned = () => j.pd.state.incidents.get(incidentId)?.assignments.map((a) => a.userId) ?? [];
    await waitFor(() => assigned().includes(PD_IDS.ben) || undefined, {
      what: 'the incident assigned to Ben',
    });

    const asked = await j.timeoff('sick today', BEN);
    expect(asked.text).toContain('Asking Dana Lee to approve *Sick*');

    // The colleague's DM names Ben, the end of the shift today and the incident now theirs.
    const colleague = await waitFor(
      () =>
        [ANA, CHEN].find((u) =>
          j.dms(u).some((m) => /is off sick today, so you're on call for them/.test(messageText(m))),
        ),
      { what: 'a colleague told by DM', timeoutMs: 15_000 },
    );
    const dm = j.dms(colleague).find((m) => /off sick today/.test(messageText(m)))!;
    expect(messageText(dm)).toContain('<@U0BEN>');
    expect(messageText(dm)).toContain(`#${number} Card payments failing`);

    // One override, from now to Ben's midnight (London is UTC in November), for that colleague.
    const overrides = await waitFor(
      () => {
        const o = j.pd.state.schedules.get(PAYMENTS_SCHEDULE)?.overrides ?? [];
        return o.length > 0 ? o : undefined;
      },
      { what: 'the override', timeoutMs: 15_000 },
    );
    expect(overrides).toHaveLength(1);
    expect(overrides[0]).toMatchObject({ userId: PD_OF[colleague] });
    expect(Date.parse(overrides[0]!.start)).toBe(Date.parse('2026-11-23T09:00:00.000Z'));
    expect(Date.parse(overrides[0]!.end)).toBe(Date.parse('2026-11-24T00:00:00.000Z'));

    // The incident is theirs in the incident service, and #payments is told.
    await waitFor(() => assigned().includes(PD_OF[colleague]!) || undefined, {
      what: 'the incident reassigned',
      timeoutMs: 15_000,
    });
    await waitFor(
      () =>
        j.fake
          .messages(PAYMENTS_CHANNEL)
          .find((m) =>
            messageText(m).includes(`#${number} Card payments failing: <@U0BEN> is off sick today`),
          ),
      { what: '#payments told', timeoutMs: 15_000 },
    );
    // Still waiting for Dana: the leave itself is not approved by covering.
    const [id] = await j.requestIds(BEN);
    expect(await j.types(id!)).not.toContain('TimeOffApproved');

    // A restart repeats nothing.
    await j.restart();
    await j.idle();
    expect(j.pd.state.schedules.get(PAYMENTS_SCHEDULE)?.overrides).toHaveLength(1);
    expect(j.dms(colleague).filter((m) => /off sick today/.test(messageText(m)))).toHaveLength(1);
  });

  it('cancelling the sick leave withdraws its cover: the override is removed and the colleague told', async () => {
    h = await startJoinsHarness({ seed: anaFree });
    const j = h;
    await j.timeoff('sick today', BEN);
    const overrides = () => j.pd.state.schedules.get(PAYMENTS_SCHEDULE)?.overrides ?? [];
    await waitFor(() => overrides().length > 0 || undefined, { what: 'the override', timeoutMs: 15_000 });
    await waitFor(() => j.dms(ANA).find((m) => /Can’t cover|off sick today/.test(messageText(m))), {
      what: 'Ana told she covers',
      timeoutMs: 15_000,
    });
    const [id] = await j.requestIds(BEN);

    const cancelled = await j.timeoff(`cancel ${shortTimeOffId(id!)}`, BEN);
    expect(cancelled.text).toContain('Cancelling your *Sick* request');
    await waitFor(
      async () => {
        await j.advanceTimers(30_000);
        return (await j.types(id!)).includes('TimeOffCancelled') || undefined;
      },
      { what: 'the leave cancelled', timeoutMs: 30_000 },
    );
    // The override is removed in the incident service (it had started: truncated or deleted).
    await waitFor(() => j.pd.requestsFor('deleteScheduleOverride').length > 0 || undefined, {
      what: 'the override removed',
      timeoutMs: 15_000,
    });
    await waitFor(() => overrides().every((o) => Date.parse(o.end) <= j.clock.now().getTime()) || undefined, {
      what: 'no override left for the rest of today',
      timeoutMs: 15_000,
    });
    // Ana is told she no longer covers Ben, and why.
    await waitFor(
      () =>
        j
          .dms(ANA)
          .find((m) => /You no longer cover .*the requester cancelled the sick leave/.test(messageText(m))),
      { what: 'Ana told she no longer covers', timeoutMs: 15_000 },
    );
    // #payments is told what was removed.
    await waitFor(
      () =>
        j.fake
          .messages(PAYMENTS_CHANNEL)
          .find((m) => /overrides in the incident service/.test(messageText(m))),
      { what: '#payments told', timeoutMs: 15_000 },
    );
    expect(j.pd.requestsFor('deleteScheduleOverride')).toHaveLength(1);
  });

  it('the sick leave denied withdraws its cover too', async () => {
    h = await startJoinsHarness({ seed: anaFree });
    const j = h;
    await j.timeoff('sick today', BEN);
    const overrides = () => j.pd.state.schedules.get(PAYMENTS_SCHEDULE)?.overrides ?? [];
    await waitFor(() => overrides().length > 0 || undefined, { what: 'the override', timeoutMs: 15_000 });
    const [id] = await j.requestIds(BEN);
    await j.click(TIME_OFF_ACTION.deny, DANA);
    await waitFor(async () => (await j.types(id!)).includes('TimeOffDenied') || undefined, {
      what: 'the leave denied',
      timeoutMs: 15_000,
    });
    await waitFor(() => j.pd.requestsFor('deleteScheduleOverride').length > 0 || undefined, {
      what: 'the override removed',
      timeoutMs: 15_000,
    });
    await waitFor(
      () => j.dms(ANA).find((m) => /You no longer cover .*the sick leave was denied/.test(messageText(m))),
      { what: 'Ana told she no longer covers', timeoutMs: 15_000 },
    );
  });

  it('same-day sick leave entered in HR’s web app covers the rest of the shift too, once, and cancelling it there withdraws the cover', async () => {
    h = await startJoinsHarness({ seed: anaFree });
    const j = h;
    const hrRequestId = j.sim.webApp.requestTimeOff({
      employeeId: HR_IDS.ben,
      policyType: 'Sick',
      startDate: '2026-11-23',
      endDate: '2026-11-23',
    });
    // HR shows it after its read-after-write lag: the clock moves until Switchboard has read it.
    const seen = async () => {
      await j.api.readModel.catchUp();
      return j.api.readModel.absences({ from: '2026-11-23', to: '2026-11-23' }, HR_IDS.ben).length > 0;
    };
    for (let i = 0; i < 30 && !(await seen()); i++) await j.advanceTimers(5_000);
    expect(await seen()).toBe(true);
    const overrides = await waitFor(
      () => {
        const o = j.pd.state.schedules.get(PAYMENTS_SCHEDULE)?.overrides ?? [];
        return o.length > 0 ? o : undefined;
      },
      { what: 'the override', timeoutMs: 15_000 },
    );
    expect(overrides).toHaveLength(1);
    expect(overrides[0]).toMatchObject({ userId: PD_IDS.ana });
    expect(Date.parse(overrides[0]!.end)).toBe(Date.parse('2026-11-24T00:00:00.000Z'));
    await waitFor(
      () => j.dms(ANA).find((m) => /<@U0BEN> is off sick today, so you're on call/.test(messageText(m))),
      { what: 'Ana told', timeoutMs: 15_000 },
    );
    // HR showing it again (the changes poll) covers nothing twice.
    await j.advance(10 * 60_000);
    expect(j.pd.state.schedules.get(PAYMENTS_SCHEDULE)?.overrides).toHaveLength(1);

    // Cancelled in HR's web app: the cover is withdrawn, the override removed and Ana told.
    j.sim.webApp.cancel(hrRequestId);
    await waitFor(
      async () => {
        await j.advanceTimers(5_000);
        return j.pd.requestsFor('deleteScheduleOverride').length > 0 || undefined;
      },
      { what: 'the override removed', timeoutMs: 30_000 },
    );
    await waitFor(
      () =>
        j
          .dms(ANA)
          .find((m) => /You no longer cover .*the sick leave was cancelled in HR/.test(messageText(m))),
      { what: 'Ana told she no longer covers', timeoutMs: 15_000 },
    );
    expect(j.pd.requestsFor('deleteScheduleOverride')).toHaveLength(1);
  });

  it('nobody free to cover: the sick person is told, and nothing is overridden', async () => {
    // The default world: Ana and Chen are named directly by the Platform policy, so always on call.
    h = await startJoinsHarness();
    const j = h;
    await j.timeoff('sick today', BEN);
    await waitFor(
      () =>
        j
          .dms(BEN)
          .find((m) => /found no colleague free to cover the rest of your shift/.test(messageText(m))),
      { what: 'Ben told nobody is free', timeoutMs: 15_000 },
    );
    expect(j.pd.state.schedules.get(PAYMENTS_SCHEDULE)?.overrides).toEqual([]);
  });
});

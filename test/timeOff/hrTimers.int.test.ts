import { afterEach, describe, expect, it } from 'vitest';
import { startTimeOffHarness, type TimeOffHarness } from './harness.ts';
import { advance, advanceUntil, approve, phaseOf, requestTimeOff } from './hrFixtures.ts';

let h: TimeOffHarness | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
});

const HOUR = 60 * 60_000;

const reminders = async (harness: TimeOffHarness, id: string) =>
  (await harness.types(id)).filter((t) => t === 'TimeOffApproverReminded').length;

describe('time off timers: reminders and expiry, in working days', () => {
  it('reminds the approver after 1 and 3 working days and expires the request after 7', async () => {
    // Monday 23 November 2026, 09:00 UTC.
    h = await startTimeOffHarness();
    const id = await requestTimeOff(h);
    await advance(h, 23 * HOUR);
    expect(await reminders(h, id)).toBe(0);
    await advance(h, HOUR); // Tuesday 09:00: one working day.
    expect(await reminders(h, id)).toBe(1);
    await advance(h, 47 * HOUR);
    expect(await reminders(h, id)).toBe(1);
    await advance(h, HOUR); // Thursday 09:00: three working days.
    expect(await reminders(h, id)).toBe(2);
    await advance(h, 4 * 24 * HOUR); // Monday 30th: five working days.
    // Undecided: `awaitingApproval` once the notices posted the approver's card.
    expect(['requested', 'awaitingApproval']).toContain(await phaseOf(h, id));
    await advance(h, 2 * 24 * HOUR - HOUR);
    expect(await phaseOf(h, id)).not.toBe('expired');
    await advance(h, HOUR); // Wednesday 2 December 09:00: seven working days.
    expect(await phaseOf(h, id)).toBe('expired');
    expect(await reminders(h, id)).toBe(2);
  });

  it('a request decided in time is neither reminded again nor expired', async () => {
    h = await startTimeOffHarness();
    const id = await requestTimeOff(h, { startDate: '2026-12-21', endDate: '2026-12-22' });
    await advance(h, 24 * HOUR);
    expect(await reminders(h, id)).toBe(1);
    await approve(h, id);
    await advanceUntil(h, async () => (await phaseOf(h!, id)) === 'confirmed');
    await advance(h, 10 * 24 * HOUR);
    expect(await reminders(h, id)).toBe(1);
    expect(await phaseOf(h, id)).toBe('confirmed');
    expect(await h.types(id)).not.toContain('TimeOffExpired');
  });
});

import { afterEach, describe, expect, it } from 'vitest';
import { TIME_OFF_REQUEST_FIELD } from '../../src/timeOff/blocks/requestModal.ts';
import { shortTimeOffId } from '../../src/timeOff/blocks/timeOffIds.ts';
import { waitFor } from '../support/waitFor.ts';
import { ANA, DANA, messageText, startTimeOffHarness, type TimeOffHarness } from './harness.ts';

/**
 * Issue 20 item 6, "leave that cannot be wrong", at the Slack edge: an ask overlapping one's own
 * leave is refused naming it (from the command and the form), past days are refused unless the
 * policy may be recorded after the fact (then the approver's card says so), and a request expires
 * no later than the start of its first day in the requester's zone. The harness starts on Monday
 * 23 November 2026, 09:00 UTC, on a manual clock.
 */
let h: TimeOffHarness;
afterEach(async () => {
  await h?.stop();
});

const F = TIME_OFF_REQUEST_FIELD;
const select = (value: string) => ({ type: 'static_select', selected_option: { value } });
const date = (d: string | null) => ({ type: 'datepicker', selected_date: d });
const formValues = (o: Readonly<{ policy?: string; start: string; end?: string | null }>) => ({
  [F.policy.blockId]: { [F.policy.actionId]: select(o.policy ?? 'Holiday') },
  [F.start.blockId]: { [F.start.actionId]: date(o.start) },
  [F.startPortion.blockId]: { [F.startPortion.actionId]: select('all_day') },
  [F.end.blockId]: { [F.end.actionId]: date(o.end ?? null) },
  [F.endPortion.blockId]: { [F.endPortion.actionId]: select('all_day') },
  [F.note.blockId]: { [F.note.actionId]: { type: 'plain_text_input', value: '' } },
});

const requestsOf = async (user: string, n: number): Promise<string[]> => {
  await h.idle();
  return waitFor(async () => ((await h.requestIds(user)).length >= n ? h.requestIds(user) : undefined), {
    what: `${n} requests by ${user}`,
  });
};

describe('leave that cannot be wrong (issue 20)', () => {
  it('an ask overlapping one’s own pending leave is refused naming it, from the command and the form', async () => {
    h = await startTimeOffHarness();
    await h.timeoff('holiday 2026-12-03 to 2026-12-04');
    const [first] = await requestsOf(ANA, 1);
    const short = shortTimeOffId(first!);

    const again = await h.timeoff('holiday 2026-12-04 to 2026-12-07');
    expect(again.text).toContain('These days overlap your *Holiday* Thu 3 Dec – Fri 4 Dec 2026');
    expect(again.text).toContain(`request \`${short}\`, waiting for approval`);
    expect(again.text).toContain(`/timeoff cancel ${short}`);

    await h.timeoff('');
    await waitFor(() => h.lastView(ANA), { what: 'the form' });
    const form = await h.submitView(ANA, formValues({ start: '2026-12-02', end: '2026-12-03' }));
    expect(form.body).toMatchObject({
      response_action: 'errors',
      errors: { [F.start.blockId]: expect.stringContaining(`request ${short}, waiting for approval`) },
    });

    // The afternoon of a day whose morning is taken is not the same half day.
    await h.timeoff('holiday 2026-12-08 am');
    await h.timeoff('holiday 2026-12-08 pm');
    await h.idle();
    expect(await h.requestIds(ANA)).toHaveLength(3);
    // Once cancelled, the days are free again.
    await h.timeoff(`cancel ${short}`);
    await h.idle();
    const freed = await h.timeoff('holiday 2026-12-04');
    expect(freed.text).toContain('Asking Dana Lee to approve');
  });

  it('past days are refused for a holiday, from the command and the form; sick days past are recorded after the fact, and the card says so', async () => {
    h = await startTimeOffHarness();
    const past = await h.timeoff('holiday 2026-11-02');
    expect(past.text).toContain('Mon 2 Nov 2026 is in the past (today is Mon 23 Nov 2026 where you are)');
    expect(past.text).toContain('Only *Sick* can be recorded for past days.');
    await h.timeoff('');
    await waitFor(() => h.lastView(ANA), { what: 'the form' });
    const form = await h.submitView(ANA, formValues({ start: '2026-10-26', end: '2026-10-27' }));
    expect(form.body).toMatchObject({
      response_action: 'errors',
      errors: { [F.start.blockId]: expect.stringContaining('is in the past') },
    });
    await h.idle();
    expect(await h.requestIds(ANA)).toEqual([]);

    const sick = await h.timeoff('sick 2026-11-19 to 2026-11-20');
    expect(sick.text).toContain('Asking Dana Lee to approve *Sick*');
    const [id] = await requestsOf(ANA, 1);
    const card = await h.dm(/Recorded after the fact/, DANA);
    expect(messageText(card)).toContain(`Request \`${shortTimeOffId(id!)}\``);
  });

  it('a request for Wednesday expires at the start of Wednesday in the requester’s zone, not a week later', async () => {
    h = await startTimeOffHarness({ timeZones: { [ANA]: 'America/New_York' } });
    await h.timeoff('holiday 2026-11-25');
    const [id] = await requestsOf(ANA, 1);
    await h.api.readModel.catchUp();
    // Wednesday 25 November starts at 05:00 UTC in New York.
    expect(h.api.readModel.view(id!)?.expiresAt).toBe('2026-11-25T05:00:00.000Z');
    // Monday 09:00 → Wednesday 04:59 UTC: still waiting.
    await h.advance(44 * 3_600_000 - 60_000);
    expect(await h.types(id!)).not.toContain('TimeOffExpired');
    await h.advance(2 * 60_000);
    await waitFor(async () => (await h.types(id!)).includes('TimeOffExpired') || undefined, {
      what: 'the request expired at the start of its first day',
    });
  });
});

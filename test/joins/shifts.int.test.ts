import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '../support/waitFor.ts';
import {
  ANA,
  BEN,
  CHEN,
  DAY,
  HOUR,
  type JoinsHarness,
  MINUTE,
  messageText,
  PAYMENTS_CHANNEL,
  PAYMENTS_SCHEDULE,
  PD_IDS,
  startJoinsHarness,
} from './harness.ts';

/**
 * Issue 20 item 4 across the three simulators on one manual clock: the DM before a shift starts
 * (12 h by default; not earlier, once, across a restart), what it says about the phone, the cover
 * being the one told, and the handoff post in the rota's channel. The rota is the harness's:
 * Ben on call this week, Ana from next Monday 00:00 UTC.
 */
let h: JoinsHarness | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
});

const shiftDms = (j: JoinsHarness, user: string) =>
  j.dms(user).filter((m) => messageText(m).includes('Your on-call shift for'));

/** Moves the clock to `at` (forward only) and lets every due watch run. */
const moveTo = async (j: JoinsHarness, at: Date) => {
  const ms = at.getTime() - j.clock.now().getTime();
  if (ms > 0) await j.advanceTimers(ms);
  await j.idle();
};

describe('shifts people see coming', () => {
  it('DMs Ana 12 h before her shift, not earlier, once across a restart; says her phone is not verified; posts the handoff with what is open', async () => {
    h = await startJoinsHarness();
    const j = h;
    const monday = j.nextWeek().monday;
    const { number } = await j.trigger('Card payments failing');

    await moveTo(j, new Date(monday.getTime() - 12 * HOUR - MINUTE));
    expect(shiftDms(j, ANA)).toEqual([]);

    await moveTo(j, new Date(monday.getTime() - 12 * HOUR));
    const dm = await j.dm(/Your on-call shift for/, ANA);
    const text = messageText(dm);
    expect(text).toContain('Payments primary');
    expect(text).toContain(`<!date^${monday.getTime() / 1000}^`);
    // Her zone (Europe/Lisbon) in the fallbacks of a DM.
    expect(text).toContain('Europe/Lisbon');
    expect(text).toMatch(new RegExp(`#${number} Card payments failing>? \\(triggered\\)`));
    expect(text).toContain('verify now or you cannot be paged');
    // Ben is on call already: nobody else is told.
    expect(shiftDms(j, BEN)).toEqual([]);

    await j.restart();
    await j.advanceTimers(HOUR);
    await j.advanceTimers(HOUR);
    expect(shiftDms(j, ANA)).toHaveLength(1);

    await moveTo(j, monday);
    const handoff = await waitFor(
      () => j.fake.messages(PAYMENTS_CHANNEL).find((m) => messageText(m).includes('hands on call to')),
      { what: 'the handoff post' },
    );
    const posted = messageText(handoff);
    expect(posted).toContain(`<@${BEN}> hands on call to <@${ANA}>`);
    expect(posted).toContain('Payments primary');
    expect(posted).toContain(`#${number} Card payments failing`);
    await j.advanceTimers(HOUR);
    expect(
      j.fake.messages(PAYMENTS_CHANNEL).filter((m) => messageText(m).includes('hands on call to')),
    ).toHaveLength(1);
  });

  it('tells the cover, not the absent person; a verified phone reads as pageable', async () => {
    h = await startJoinsHarness({ env: { SHIFT_NOTICE_HOURS: '6' } });
    const j = h;
    const monday = j.nextWeek().monday;
    await j.verifyPhone(CHEN);
    // Chen covers Ana's first day (an override in the incident service).
    const pagerduty = j.sb.lifecycle('incidents')?.pagerduty;
    if (!pagerduty) throw new Error('incidents off');
    await pagerduty.createScheduleOverrides(PAYMENTS_SCHEDULE, [
      { start: monday.toISOString(), end: new Date(monday.getTime() + DAY).toISOString(), userId: PD_IDS.chen },
    ]);

    await moveTo(j, new Date(monday.getTime() - 6 * HOUR - MINUTE));
    expect(shiftDms(j, CHEN)).toEqual([]);
    await moveTo(j, new Date(monday.getTime() - 6 * HOUR));
    const dm = messageText(await j.dm(/Your on-call shift for/, CHEN));
    expect(dm).toContain('you can be paged');
    expect(dm).not.toContain('verify now');
    expect(shiftDms(j, ANA)).toEqual([]);

    // Ana's own turn starts after the cover: she is told 6 h before that.
    await moveTo(j, new Date(monday.getTime() + DAY - 6 * HOUR));
    const hers = messageText(await j.dm(/Your on-call shift for/, ANA));
    expect(hers).toContain(`<!date^${(monday.getTime() + DAY) / 1000}^`);
    expect(shiftDms(j, ANA)).toHaveLength(1);
    expect(shiftDms(j, CHEN)).toHaveLength(1);
  });
});

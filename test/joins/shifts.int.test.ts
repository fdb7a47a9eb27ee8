import { afterEach, describe, expect, it } from 'vitest';
import { eventCallbackBody } from '../../sandbox/simulators/slack/signing.ts';
import { INCIDENT_ACTION } from '../../src/incidents/blocks/incidentIds.ts';
import { slackDriver } from '../support/slackHarness.ts';
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
      {
        start: monday.toISOString(),
        end: new Date(monday.getTime() + DAY).toISOString(),
        userId: PD_IDS.chen,
      },
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

  it('Switchboard down when the notice fell due: the DM goes out when it is back, before the shift', async () => {
    h = await startJoinsHarness();
    const j = h;
    const monday = j.nextWeek().monday;
    await moveTo(j, new Date(monday.getTime() - 13 * HOUR));
    expect(shiftDms(j, ANA)).toEqual([]);
    await j.sb.stop();
    j.clock.advance(3 * HOUR);
    await j.restart();
    await j.advanceTimers(MINUTE);
    await j.dm(/Your on-call shift for/, ANA);
    expect(shiftDms(j, ANA)).toHaveLength(1);
  });

  it('App Home shows My shifts for the next 14 days, covers included, each with Ask for cover', async () => {
    h = await startJoinsHarness();
    const j = h;
    const pagerduty = j.sb.lifecycle('incidents')?.pagerduty;
    if (!pagerduty) throw new Error('incidents off');
    const at = (ms: number) => new Date(j.weekStart.getTime() + ms).toISOString();
    // Ana covers Ben on Wednesday, and someone on a day past the 14 days.
    await pagerduty.createScheduleOverrides(PAYMENTS_SCHEDULE, [
      { start: at(2 * DAY), end: at(3 * DAY), userId: PD_IDS.ana },
      { start: at(15 * DAY), end: at(16 * DAY), userId: PD_IDS.ana },
    ]);
    const slack = slackDriver(j.fake, { url: () => j.url, clock: j.clock });
    await slack.post(
      eventCallbackBody({
        type: 'app_home_opened',
        user: ANA,
        channel: j.fake.dmChannel(ANA).id,
        tab: 'home',
      }),
      'json',
    );
    const home = await waitFor(() => j.fake.homes.get(ANA), { what: 'Ana’s home tab' });
    const blocks = (
      home.view as {
        blocks: { text?: { text?: string }; accessory?: { action_id?: string; value?: string } }[];
      }
    ).blocks;
    const text = JSON.stringify(blocks);
    expect(text).toContain('*My shifts* (next 14 days, covers included)');
    const rows = blocks.filter((b) => b.accessory?.action_id === INCIDENT_ACTION.askCover);
    const starts = rows.map((b) => b.text?.text ?? '');
    // The cover (Wednesday) and her own week; not the day past 14 days.
    expect(rows).toHaveLength(2);
    expect(starts[0]).toContain(`<!date^${Date.parse(at(2 * DAY)) / 1000}^`);
    expect(starts[1]).toContain(`<!date^${Date.parse(at(7 * DAY)) / 1000}^`);
    expect(text).not.toContain(`<!date^${Date.parse(at(15 * DAY)) / 1000}^`);

    // Ask for cover: the same ask as `/oncall cover`, for that shift only; Ana is answered in a modal.
    const first = rows[0]?.accessory?.value ?? '';
    const clicked = await slack.click(INCIDENT_ACTION.askCover, first, {
      user: ANA,
      channel: j.fake.dmChannel(ANA).id,
    });
    expect(clicked.status).toBe(200);
    const view = await waitFor(
      () => (/Asked for cover/.test(JSON.stringify(j.lastView(ANA))) ? j.lastView(ANA) : undefined),
      { what: 'the ask-for-cover answer' },
    );
    expect(JSON.stringify(view)).toContain('Payments primary');
    expect(JSON.stringify(view)).toMatch(/asked [A-Z]/);
    const asked = await waitFor(
      () =>
        [BEN, CHEN].find((u) =>
          j.dms(u).some((m) => /Can you cover/.test(messageText(m)) && messageText(m).includes(`<@${ANA}>`)),
        ),
      { what: 'a colleague asked by DM' },
    );
    expect(asked).toBeDefined();
    expect(j.dms(ANA).some((m) => /Can you cover/.test(messageText(m)))).toBe(false);

    // A well-formed value naming a time Ana is not on call: nobody is asked, she is told why.
    const notHers = `v1|${at(20 * DAY)}|${at(21 * DAY)}|${at(20 * DAY).slice(0, 10)}|${at(20 * DAY).slice(0, 10)}`;
    await slack.click(INCIDENT_ACTION.askCover, notHers, { user: ANA, channel: j.fake.dmChannel(ANA).id });
    await waitFor(() => JSON.stringify(j.lastView(ANA)).includes('on call then any more') || undefined, {
      what: 'the refusal of a shift that is not hers',
    });

    // A forged value is refused in words.
    await slack.click(INCIDENT_ACTION.askCover, 'v1|not|a|shift|!', {
      user: ANA,
      channel: j.fake.dmChannel(ANA).id,
    });
    await waitFor(() => JSON.stringify(j.lastView(ANA)).includes("doesn't name a shift") || undefined, {
      what: 'the refusal',
    });
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SimEmployee } from '../../sandbox/simulators/hibob/index.ts';
import { eventCallbackBody } from '../../sandbox/simulators/slack/signing.ts';
import { TIME_OFF_REQUEST_FIELD as F } from '../../src/timeOff/blocks/requestModal.ts';
import { shortTimeOffId, TIME_OFF_ACTION, TIME_OFF_FIELD } from '../../src/timeOff/blocks/timeOffIds.ts';
import { FAMILY, HOSTILE, slackTextScanner } from '../support/slackTextScan.ts';
import { postSigned } from '../support/startApp.ts';
import { waitFor } from '../support/waitFor.ts';
import {
  ANA,
  BEN,
  CHEN,
  DANA,
  FRANK,
  GIL,
  HR_EMPLOYEES,
  HR_IDS,
  startTimeOffHarness,
  type TimeOffHarness,
} from './harness.ts';

/**
 * Issue 19 item 2 on the time-off surfaces: a requester and an approver whose names (Slack's
 * real_name and HR's displayName) are hostile and emoji-heavy, a hostile note and a hostile deny
 * reason, through `/timeoff` (ask, status, cancel, help), the approver's DM card, Approve, Deny with
 * a reason, the requester's DMs, `/whosout` and App Home; the scanner then checks everything the fake
 * Slack was given: no raw `<`, `>`, `&` of theirs in mrkdwn, no ping, no lone surrogate, Slack's limits.
 */
const EVE = 'U0EVE';
const EVE_HR = '3332883804594373006';
/** In HR only (no Slack account): their name is text wherever they appear. */
const ZED_HR = '3332883804594373007';
const HOSTILE_NAME = `Eve <!channel> & <b>${FAMILY.repeat(40)}`;
const HOSTILE_MANAGER = `Dana <!here> & ${FAMILY.repeat(40)}`;

const employees: SimEmployee[] = [
  ...HR_EMPLOYEES.map((e) => (e.id === HR_IDS.dana ? { ...e, displayName: HOSTILE_MANAGER } : e)),
  {
    ...HR_EMPLOYEES.find((e) => e.id === HR_IDS.ben)!,
    id: EVE_HR,
    email: 'eve@example.org',
    displayName: HOSTILE_NAME,
    firstName: `Eve <!channel> ${FAMILY.repeat(10)}`,
    surname: '& <b>',
  },
  {
    ...HR_EMPLOYEES.find((e) => e.id === HR_IDS.chen)!,
    id: ZED_HR,
    email: 'zed@example.org',
    displayName: `Zed <!everyone> & <@U0ANA> ${FAMILY.repeat(40)}`,
    firstName: 'Zed <!everyone>',
    surname: `& ${FAMILY}`,
  },
];

let h: TimeOffHarness;
beforeAll(async () => {
  h = await startTimeOffHarness({
    hr: { employees },
    slackUsers: [{ id: EVE, name: 'eve', real_name: HOSTILE_NAME, email: 'eve@example.org' }],
  });
});
afterAll(async () => {
  await h?.stop();
});

const homeOf = async (user: string) => {
  const before = h.fake.homes.get(user);
  await postSigned(
    `${h.url}/slack/events`,
    eventCallbackBody({ type: 'app_home_opened', user, tab: 'home' }),
    'json',
    { timestamp: Math.floor(h.clock.now().getTime() / 1000) },
  );
  return waitFor(() => (h.fake.homes.get(user) !== before ? h.fake.homes.get(user) : undefined), {
    what: `${user}'s Home tab`,
  });
};

const cardFor = (timeOffId: string) =>
  waitFor(
    () =>
      h
        .dms(DANA)
        .find((m) => !m.deleted && JSON.stringify(m.blocks ?? []).includes(`"value":"${timeOffId}"`)),
    { what: `the approver's card for ${timeOffId}` },
  );

describe('hostile text on the time-off surfaces (issue 19 item 2)', () => {
  it('hostile names, notes and reasons reach Slack escaped, whole and within its limits', async () => {
    const acks: unknown[] = [];
    const note = `${HOSTILE} ${FAMILY.repeat(60)}`;
    // Zed, in HR only, asks in HR's web app for days that overlap Eve's.
    h.sim.webApp.requestTimeOff({
      employeeId: ZED_HR,
      policyType: 'Holiday',
      startDate: '2026-12-02',
      endDate: '2026-12-08',
      description: note,
    });
    await h.advance(25_000);
    const asked = await h.timeoff(`holiday 2026-12-03 to 2026-12-04 ${note}`, EVE);
    expect(asked.status).toBe(200);
    acks.push(asked.body);
    const second = await h.timeoff(`sick 2026-12-07 ${note}`, EVE);
    acks.push(second.body);
    await h.idle();
    const [denyId, approveId] = await h.requestIds(EVE);
    expect(h.api.readModel.view(approveId!)?.description).toBe(note);

    // Dana approves one and denies the other with a hostile reason.
    const card = await cardFor(approveId!);
    acks.push((await h.click(TIME_OFF_ACTION.approve, DANA, { message: card })).body);
    await h.idle();
    const other = await cardFor(denyId!);
    await h.click(TIME_OFF_ACTION.denyWithReason, DANA, { message: other });
    await waitFor(() => h.lastView(DANA), { what: 'the deny form' });
    const reason = `${HOSTILE} ${FAMILY.repeat(30)}`;
    const denied = await h.submitView(DANA, {
      [TIME_OFF_FIELD.denyReason.blockId]: {
        [TIME_OFF_FIELD.denyReason.actionId]: { type: 'plain_text_input', value: reason },
      },
    });
    acks.push(denied.body);
    await waitFor(async () => (await h.types(denyId!)).includes('TimeOffDenied') || undefined, {
      what: 'the denial',
    });
    await h.advance(25_000); // HR's read-after-write lag: the approval lands
    await h.advance(5_000);
    await h.dm(/denied it/, EVE);

    // The form, with a hostile note; it stays waiting, and Dana is reminded of it.
    acks.push((await h.timeoff('', EVE)).body);
    await waitFor(() => h.lastView(EVE), { what: 'the request form' });
    const select = (value: string) => ({ type: 'static_select', selected_option: { value } });
    const date = (d: string | null) => ({ type: 'datepicker', selected_date: d });
    const formed = await h.submitView(EVE, {
      [F.policy.blockId]: { [F.policy.actionId]: select('Holiday') },
      [F.start.blockId]: { [F.start.actionId]: date('2026-12-09') },
      [F.startPortion.blockId]: { [F.startPortion.actionId]: select('all_day') },
      [F.end.blockId]: { [F.end.actionId]: date('2026-12-10') },
      [F.endPortion.blockId]: { [F.endPortion.actionId]: select('pm') },
      [F.note.blockId]: { [F.note.actionId]: { type: 'plain_text_input', value: note } },
    });
    acks.push(formed.body);
    await h.idle();
    await h.advance(26 * 3_600_000);
    await h.advance(26 * 3_600_000);

    // Eve withdraws the approved one: HR and Dana are told.
    acks.push((await h.timeoff(`cancel ${shortTimeOffId(approveId!)}`, EVE)).body);
    await h.advance(25_000);

    for (const [text, user] of [
      ['status', EVE],
      ['status', DANA],
      ['help', EVE],
      [`cancel ${HOSTILE}`, EVE],
      [HOSTILE, EVE],
      [`holiday ${HOSTILE}`, EVE],
      ['balance', EVE],
    ] as const) {
      acks.push((await h.timeoff(text, user)).body);
      await h.idle();
    }
    for (const [text, user] of [
      ['2026-12-01 2026-12-08', DANA],
      ['2026-12-03', ANA],
      [HOSTILE, BEN],
    ] as const) {
      acks.push((await h.whosout(text, user)).body);
      await h.idle();
    }
    for (const user of [EVE, DANA, FRANK, CHEN, GIL]) await homeOf(user);
    await h.idle();

    // The names are there, escaped; the note and the reason too.
    const seen = JSON.stringify([
      acks,
      h.fake.callsOf('chat.postMessage').map((c) => c.params),
      h.fake.responsePosts.map((p) => p.body),
    ]);
    expect(seen).toContain('"text":"Eve &lt;!channel&gt; &amp; &lt;b&gt;');
    expect(seen).toContain('&lt;script&gt;&amp; &lt;!channel&gt;');

    // Zed, in HR only, is named in `/whosout` as text, escaped.
    expect(seen).toContain('• Zed &lt;!everyone&gt; &amp; &lt;@U0ANA&gt; ');
    // Eve's Home tab, Dana's and the others' were published (and scanned below).
    expect(h.fake.callsOf('views.publish').length).toBeGreaterThanOrEqual(5);

    const known = [ANA, BEN, CHEN, DANA, FRANK, GIL, EVE];
    expect(slackTextScanner(h.fake, known).everythingSentToSlack(acks)).toEqual([]);
  });
});

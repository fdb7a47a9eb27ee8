import { afterEach, describe, expect, it } from 'vitest';
import { TIME_OFF_ACTION, TIME_OFF_FIELD } from '../../src/timeOff/blocks/timeOffIds.ts';
import { waitFor } from '../support/waitFor.ts';
import {
  ANA,
  BEN,
  CHEN,
  DANA,
  FRANK,
  HR_IDS,
  messageText,
  startTimeOffHarness,
  type TimeOffHarness,
} from './harness.ts';
import { advance, advanceUntil, settle } from './hrFixtures.ts';

/**
 * Issue 12, capabilities 2 and 3 (the time-off half), through the whole app: HR simulator, fake
 * Slack, real store, on the harness's manual clock (Monday 23 November 2026, 09:00 UTC). The org:
 * Frank → Dana → Ana, Ben, Chen.
 */
let h: TimeOffHarness | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
});

const HR_CHANNEL = 'C0PEOPLE';

const start = async (options: Readonly<{ hrChannel?: boolean }> = {}) => {
  const harness = await startTimeOffHarness(
    options.hrChannel ? { env: { TIME_OFF_HR_CHANNEL: HR_CHANNEL } } : {},
  );
  // The HR channel: Chen and Ana are in it, Ben is not.
  harness.fake.addChannel({ id: HR_CHANNEL, name: 'people-ops', is_im: false, members: [CHEN, ANA] });
  return harness;
};

/** Leave approved in HR (booked there, not through Switchboard), seen once HR's lag has passed. */
const hrLeave = async (harness: TimeOffHarness, employeeId: string, startDate: string, endDate: string) => {
  await harness.api.client.submitTimeOff(employeeId, {
    policyType: 'Holiday',
    startDate,
    endDate,
    skipManagerApproval: true,
    approver: HR_IDS.frank,
  });
  await advanceUntil(harness, async () => {
    await harness.api.readModel.catchUp();
    return harness.api.readModel
      .absences({ from: startDate, to: endDate }, employeeId)
      .some((a) => a.status === 'approved');
  });
};

/** Ana's newest request id, once recorded. */
const requestOf = async (harness: TimeOffHarness, user = ANA): Promise<string> =>
  waitFor(async () => (await harness.requestIds(user))[0], { what: `a request by ${user}` });

const cardIn = (harness: TimeOffHarness, channel: string, timeOffId: string) =>
  waitFor(
    () =>
      harness.fake
        .messages(channel)
        .find((m) => JSON.stringify(m.blocks ?? []).includes(timeOffId) && /asks for/.test(messageText(m))),
    { what: `the card of ${timeOffId} in ${channel}` },
  );

const dmCard = (harness: TimeOffHarness, user: string, timeOffId: string) =>
  cardIn(harness, harness.fake.dmChannel(user).id, timeOffId);

const inbox = async (harness: TimeOffHarness) =>
  (await harness.sb.store.readStream('inbox-slack')).map((e) => ({
    type: e.type,
    data: e.data as Record<string, unknown>,
  }));

/** The refusal recorded for a click by `actor` (by the decider, or at the edge). */
const refusal = (harness: TimeOffHarness, actionOrCommand: string, actor: string) =>
  waitFor(
    async () =>
      (await inbox(harness)).find(
        (e) =>
          (e.type === 'CommandRejected' &&
            e.data['commandType'] === actionOrCommand &&
            e.data['actor'] === actor) ||
          (e.type === 'SlackInputReceived' &&
            (e.data['input'] as { name?: string; actor?: string }).name === actionOrCommand &&
            (e.data['input'] as { actor?: string }).actor === actor &&
            e.data['rejection'] !== undefined),
      )?.data,
    { what: `${actionOrCommand} by ${actor} refused and recorded` },
  );

const requestedEvent = async (harness: TimeOffHarness, timeOffId: string) => {
  const [first] = await harness.sb.store.readStream(`timeoff-${timeOffId}`, { maxCount: 1 });
  return first?.data as Record<string, unknown>;
};

const phase = async (harness: TimeOffHarness, timeOffId: string) => {
  await harness.api.readModel.catchUp();
  return harness.api.readModel.view(timeOffId)?.phase;
};

describe('approvals routed around an absent approver (issue 12)', () => {
  it("Dana on approved leave: Ana's request goes to Frank, and Ana and Dana are told why", async () => {
    h = await start();
    await hrLeave(h, HR_IDS.dana, '2026-11-23', '2026-12-04');
    const asked = await h.timeoff('holiday 2026-12-03 2026-12-04');
    expect(asked.text).toMatch(/Asking Frank Moreau to approve/);
    expect(asked.text).toMatch(/Dana Lee is on leave until Fri 4 Dec 2026\./);
    const id = await requestOf(h);
    await settle(h);
    expect(await requestedEvent(h, id)).toMatchObject({
      approver: { hrId: HR_IDS.frank, slackUserId: FRANK },
      skipped: [{ hrId: HR_IDS.dana, slackUserId: DANA, reason: 'away', until: '2026-12-04' }],
    });
    const card = await dmCard(h, FRANK, id);
    expect(
      await h.dm(/Dana Lee is on leave until Fri 4 Dec 2026, so <@U0FRANK> will decide/, ANA),
    ).toBeTruthy();
    expect(
      await h.dm(/went to <@U0FRANK> instead of you, as you are on leave until Fri 4 Dec 2026/, DANA),
    ).toBeTruthy();
    // Dana gets no card; Frank's decides.
    expect(h.dms(DANA).some((m) => /asks for/.test(messageText(m)))).toBe(false);
    await h.click(TIME_OFF_ACTION.approve, FRANK, { message: card });
    await waitFor(
      async () => (await phase(h!, id)) !== 'requested' && (await phase(h!, id)) !== 'awaitingApproval',
      {
        what: 'approved',
      },
    );
    expect(await h.types(id)).toContain('TimeOffApproved');
  });

  it("Dana's leave is her own days in Singapore: away from her midnight, back at the next, not UTC dates (issue 19)", async () => {
    // Monday 23 Nov 2026, 17:00 UTC: already Tuesday 24 Nov, 01:00, in Singapore.
    h = await startTimeOffHarness({
      start: '2026-11-23T17:00:00.000Z',
      timeZones: { [DANA]: 'Asia/Singapore' },
    });
    // Off on Tuesday 24 Nov (booked in HR: her days are her Slack zone's).
    await hrLeave(h, HR_IDS.dana, '2026-11-24', '2026-11-24');
    const asked = await h.timeoff('holiday 2026-12-07 2026-12-08', ANA);
    expect(asked.text).toMatch(/Asking Frank Moreau to approve/);
    const id = await requestOf(h);
    await settle(h);
    expect(await requestedEvent(h, id)).toMatchObject({
      approver: { hrId: HR_IDS.frank, slackUserId: FRANK },
      skipped: [{ hrId: HR_IDS.dana, reason: 'away', until: '2026-11-24' }],
    });
    // Tuesday 24 Nov, 17:00 UTC: Wednesday 01:00 in Singapore, her leave is over there.
    await advance(h, 24 * 3_600_000);
    const bens = await h.timeoff('holiday 2026-12-09 2026-12-10', BEN);
    expect(bens.text).toMatch(/Asking Dana Lee to approve/);
    const bensId = await requestOf(h, BEN);
    await settle(h);
    expect(await requestedEvent(h, bensId)).toMatchObject({
      approver: { hrId: HR_IDS.dana, slackUserId: DANA },
    });
  });

  it('Frank away too: the HR channel gets it; a non-member and the requester are refused and recorded, a member decides', async () => {
    h = await start({ hrChannel: true });
    await hrLeave(h, HR_IDS.dana, '2026-11-23', '2026-12-04');
    await hrLeave(h, HR_IDS.frank, '2026-12-01', '2026-12-11');
    await h.timeoff('holiday 2026-12-03 2026-12-04');
    const id = await requestOf(h);
    await settle(h);
    const card = await cardIn(h, HR_CHANNEL, id);
    expect(messageText(card)).toMatch(/Sent to HR: nobody in <@U0ANA>'s reporting line can decide it/);
    expect(messageText(card)).toMatch(/Frank Moreau is on leave until Fri 11 Dec 2026/);
    await h.dm(/so it went to HR \(<#C0PEOPLE>\), where anyone but you can decide/, ANA);

    // Ben is not in the channel: refused by the decider (Slack's word on membership added by the
    // time-off enrich step), recorded, told.
    const ben = await h.click(TIME_OFF_ACTION.approve, BEN, { message: card });
    expect((await refusal(h, 'ApproveTimeOff', BEN))['details']).toMatchObject({
      reason: 'not_approver',
      hrChannel: true,
    });
    expect(await h.response(ben.responseUrl, /Only members of <#C0PEOPLE> can approve or deny/)).toBeTruthy();
    // Ana is a member, but it is her own request.
    await h.click(TIME_OFF_ACTION.approve, ANA, { message: card });
    expect((await refusal(h, 'ApproveTimeOff', ANA))['details']).toMatchObject({ reason: 'own_request' });

    await h.click(TIME_OFF_ACTION.approve, CHEN, { message: card });
    await waitFor(async () => (await h!.types(id)).includes('TimeOffApproved'), { what: 'approved by Chen' });
    await h.api.readModel.catchUp();
    expect(h.api.readModel.state(id)?.context.decision?.by).toMatchObject({
      hrId: HR_IDS.chen,
      slackUserId: CHEN,
    });
    // HR is given Chen as the approver.
    await advanceUntil(h, async () =>
      h!.sim.timeOffRequests().some((r) => r.employeeId === HR_IDS.ana && r.startDate === '2026-12-03'),
    );
    expect(
      h.sim.timeOffRequests().find((r) => r.employeeId === HR_IDS.ana && r.startDate === '2026-12-03'),
    ).toMatchObject({ approver: HR_IDS.chen, status: 'approved' });
    await waitFor(
      () =>
        messageText(h!.fake.messages(HR_CHANNEL).find((m) => m.ts === card.ts)!).match(
          /Approved by <@U0CHEN>/,
        ),
      { what: 'the HR card updated' },
    );
  });

  it('no HR channel and everyone away: the request waits for Dana, Ana is told clearly, an operator is warned', async () => {
    h = await start();
    await hrLeave(h, HR_IDS.dana, '2026-11-23', '2026-12-04');
    await hrLeave(h, HR_IDS.frank, '2026-11-23', '2026-12-11');
    const asked = await h.timeoff('holiday 2026-12-03 2026-12-04');
    expect(asked.text).toMatch(/Asking Dana Lee/);
    const id = await requestOf(h);
    await settle(h);
    expect(await requestedEvent(h, id)).toMatchObject({
      approver: { slackUserId: DANA },
      approverAwayUntil: '2026-12-04',
      skipped: [{ hrId: HR_IDS.frank, reason: 'away' }],
    });
    await h.dm(/waits for <@U0DANA>, who is on leave until Fri 4 Dec 2026.*no HR channel/s, ANA);
    await dmCard(h, DANA, id);
    expect(h.logs.text()).toMatch(/TIME_OFF_HR_CHANNEL is not set; it waits for an approver on leave/);
  });

  it("Dana's leave appears while Ana's request waits: handed on to Frank, Dana's old card is dead", async () => {
    h = await start();
    await h.timeoff('holiday 2026-12-03 2026-12-04');
    const id = await requestOf(h);
    // As Dana saw it (the fake updates its messages in place).
    const old = structuredClone(await dmCard(h, DANA, id));
    await hrLeave(h, HR_IDS.dana, '2026-12-01', '2026-12-04');
    await waitFor(async () => (await h!.types(id)).includes('TimeOffHandedOn'), { what: 'handed on' });
    const card = await dmCard(h, FRANK, id);
    await h.dm(
      /was waiting for <@U0DANA>, who is on leave until Fri 4 Dec 2026: it was handed on, so <@U0FRANK> will decide/,
      ANA,
    );
    await waitFor(
      () =>
        /handed on to <@U0FRANK>: you are on leave until Fri 4 Dec 2026/.test(
          messageText(h!.dms(DANA).find((m) => m.ts === old.ts)!),
        ),
      { what: "Dana's card updated" },
    );
    const updated = h.dms(DANA).find((m) => m.ts === old.ts)!;
    expect(JSON.stringify(updated.blocks)).not.toContain(TIME_OFF_ACTION.approve);
    // A click on the old card (as it was) is refused and recorded.
    const late = await h.click(TIME_OFF_ACTION.approve, DANA, { message: old });
    expect((await refusal(h, 'ApproveTimeOff', DANA))['details']).toMatchObject({ reason: 'not_approver' });
    await h.response(late.responseUrl, /handed on to Frank Moreau; it is theirs to decide now/);
    await h.click(TIME_OFF_ACTION.approve, FRANK, { message: card });
    await waitFor(async () => (await h!.types(id)).includes('TimeOffApproved'), {
      what: 'approved by Frank',
    });
  });

  it("the daily sweep hands a request on when the approver's leave starts", async () => {
    h = await start();
    await h.timeoff('holiday 2026-12-14 2026-12-15');
    const id = await requestOf(h);
    await dmCard(h, DANA, id);
    // Dana is off from tomorrow, not on the request's days: nothing to do today.
    await hrLeave(h, HR_IDS.dana, '2026-11-24', '2026-11-27');
    await settle(h);
    expect(await h.types(id)).not.toContain('TimeOffHandedOn');
    // Tuesday 00:00 UTC: the sweep finds her away.
    await advance(h, 15 * 60 * 60_000);
    await waitFor(async () => (await h!.types(id)).includes('TimeOffHandedOn'), {
      what: 'handed on at the sweep',
    });
    await dmCard(h, FRANK, id);
    expect(
      (await h.sb.store.readStream('timeoffsweep-2026-11-24'))
        .filter((e) => e.kind === 'event')
        .map((e) => e.type),
    ).toEqual(['TimeOffApproversSwept']);
  });

  it('Dana leaves: her waiting approvals are handed on to Frank', async () => {
    h = await start();
    await h.timeoff('holiday 2026-12-03 2026-12-04');
    await h.timeoff('holiday 2026-12-07', BEN);
    const ana = await requestOf(h, ANA);
    const ben = await requestOf(h, BEN);
    await dmCard(h, DANA, ana);
    await dmCard(h, DANA, ben);
    h.sim.webApp.terminate(HR_IDS.dana);
    await advanceUntil(h, async () =>
      (await Promise.all([h!.types(ana), h!.types(ben)])).every((t) => t.includes('TimeOffHandedOn')),
    );
    const [anaEvents] = [await h.sb.store.readStream(`timeoff-${ana}`)];
    expect(anaEvents.find((e) => e.type === 'TimeOffHandedOn')?.data).toMatchObject({
      from: { slackUserId: DANA },
      to: { slackUserId: FRANK },
      reason: 'left',
    });
    await dmCard(h, FRANK, ana);
    await dmCard(h, FRANK, ben);
  });

  it("Ana leaves: her waiting request is cancelled with a note on Dana's card; her approved leave is left alone", async () => {
    h = await start();
    await h.timeoff('holiday 2026-12-14');
    const approvedId = await requestOf(h);
    await h.click(TIME_OFF_ACTION.approve, DANA, { message: await dmCard(h, DANA, approvedId) });
    await waitFor(async () => (await h!.types(approvedId)).includes('TimeOffApproved'), { what: 'approved' });
    await h.timeoff('holiday 2026-12-03 2026-12-04');
    const waiting = await waitFor(async () => (await h!.requestIds(ANA)).find((x) => x !== approvedId), {
      what: 'the second request',
    });
    const card = await dmCard(h, DANA, waiting);
    h.sim.webApp.terminate(HR_IDS.ana);
    await advanceUntil(h, async () => (await phase(h!, waiting)) === 'cancelled');
    const events = await h.sb.store.readStream(`timeoff-${waiting}`);
    expect(events.find((e) => e.type === 'TimeOffCancelled')?.data).toMatchObject({ by: 'left' });
    await waitFor(
      () => /Cancelled: Ana Silva left/.test(messageText(h!.dms(DANA).find((m) => m.ts === card.ts)!)),
      { what: "Dana's card says Ana left" },
    );
    expect(await phase(h, approvedId)).not.toBe('cancelled');
  });

  it('a leaver at the top of the chain: what waits for Frank goes to the HR channel', async () => {
    h = await start({ hrChannel: true });
    await h.timeoff('holiday 2026-12-03 2026-12-04', DANA);
    const id = await requestOf(h, DANA);
    await dmCard(h, FRANK, id);
    h.sim.webApp.terminate(HR_IDS.frank);
    await advanceUntil(h, async () => (await h!.types(id)).includes('TimeOffHandedOn'));
    const card = await cardIn(h, HR_CHANNEL, id);
    expect(messageText(card)).toMatch(/Frank Moreau has left/);
    await h.click(TIME_OFF_ACTION.approve, CHEN, { message: card });
    await waitFor(async () => (await h!.types(id)).includes('TimeOffApproved'), {
      what: 'approved in HR channel',
    });
  });

  it('a leaver at the top and no HR channel: the requester is told once, and it moves when HR names a new manager', async () => {
    h = await start();
    await h.timeoff('holiday 2026-12-03 2026-12-04', DANA);
    const id = await requestOf(h, DANA);
    await dmCard(h, FRANK, id);
    h.sim.webApp.terminate(HR_IDS.frank);
    await advanceUntil(h, async () => (await h!.types(id)).includes('TimeOffApproverGone'));
    await h.dm(
      /was waiting for Frank Moreau, who has left, and nobody else in your reporting line can approve it/,
      DANA,
    );
    expect(h.logs.text()).toMatch(
      /waits for an approver who left, and nobody in the reporting line can take it/,
    );
    // The next sweeps change nothing and tell nobody again.
    await advance(h, 24 * 60 * 60_000);
    expect((await h.types(id)).filter((t) => t === 'TimeOffApproverGone')).toHaveLength(1);
    // HR sets Chen as Dana's manager: the request goes to Chen.
    h.sim.webApp.update(HR_IDS.dana, { managerId: HR_IDS.chen });
    await advanceUntil(h, async () => (await h!.types(id)).includes('TimeOffHandedOn'));
    await dmCard(h, CHEN, id);
  });

  it("Dana's own leave approved in Switchboard hands on what waits for her; reminders go to the new approver", async () => {
    h = await start();
    await h.timeoff('holiday 2026-12-03 2026-12-04');
    const id = await requestOf(h);
    await dmCard(h, DANA, id);
    // Dana asks for today and tomorrow off; Frank approves.
    await h.timeoff('holiday 2026-11-23 2026-11-24', DANA);
    const danas = await requestOf(h, DANA);
    await h.click(TIME_OFF_ACTION.approve, FRANK, { message: await dmCard(h, FRANK, danas) });
    await waitFor(async () => (await h!.types(id)).includes('TimeOffHandedOn'), { what: 'handed on' });
    await dmCard(h, FRANK, id);
    // Ana's reminder after one working day goes to Frank, not Dana.
    await advance(h, 24 * 60 * 60_000);
    await h.dm(/Reminder: <@U0ANA>'s \*Holiday\*/, FRANK);
    expect(h.dms(DANA).some((m) => /Reminder/.test(messageText(m)))).toBe(false);
  });

  it('in the HR channel a member denies with a reason; a non-member gets no form, and a forged form is refused', async () => {
    h = await start({ hrChannel: true });
    await h.timeoff('holiday 2026-12-03 2026-12-04', DANA);
    const id = await requestOf(h, DANA);
    await dmCard(h, FRANK, id);
    h.sim.webApp.terminate(HR_IDS.frank);
    await advanceUntil(h, async () => (await h!.types(id)).includes('TimeOffHandedOn'));
    const card = await cardIn(h, HR_CHANNEL, id);
    const reason = (value: string) => ({
      [TIME_OFF_FIELD.denyReason.blockId]: {
        [TIME_OFF_FIELD.denyReason.actionId]: { type: 'plain_text_input', value },
      },
    });
    const ben = await h.click(TIME_OFF_ACTION.denyWithReason, BEN, { message: card });
    await h.response(ben.responseUrl, /Only members of <#C0PEOPLE> can approve or deny/);
    expect(h.lastView(BEN)).toBeUndefined();
    // Ben submits a deny form made for him anyway (a forged submission): refused at the edge.
    const forged = await h.submitView(BEN, reason('no'), {
      callbackId: 'timeoff.deny',
      privateMetadata: JSON.stringify({ timeOffId: id }),
    });
    expect(forged.body).toMatchObject({ response_action: 'errors' });
    await h.click(TIME_OFF_ACTION.denyWithReason, CHEN, { message: card });
    await waitFor(() => h!.lastView(CHEN), { what: 'the deny form' });
    const done = await h.submitView(CHEN, reason('Frank left; please ask your new manager'));
    expect(done.body?.['response_action']).toBeUndefined();
    await waitFor(async () => (await h!.types(id)).includes('TimeOffDenied'), { what: 'denied by Chen' });
    await h.dm(/<@U0CHEN> denied your .*Frank left; please ask your new manager/, DANA);
    expect(await h.types(id)).not.toContain('TimeOffApproved');
  });

  it('the top of the chain asks: refused in clear words (and logged) without an HR channel, sent to HR with one', async () => {
    h = await start();
    const refused = await h.timeoff('holiday 2026-12-03', FRANK);
    expect(refused.text).toMatch(
      /HR has no manager for you, and Switchboard has no HR channel to send your time off to/,
    );
    expect(await h.requestIds(FRANK)).toEqual([]);
    expect(h.logs.text()).toMatch(
      /nobody can approve a request .* TIME_OFF_HR_CHANNEL is not set; it was refused/,
    );
    await h.stop();
    h = undefined;

    h = await start({ hrChannel: true });
    const asked = await h.timeoff('holiday 2026-12-03', FRANK);
    expect(asked.text).toMatch(/Asking HR to approve/);
    const id = await requestOf(h, FRANK);
    await cardIn(h, HR_CHANNEL, id);
  });

  it('a restart while handing on hands on once, with one new card; a request decided first is not handed on', async () => {
    h = await start();
    await h.timeoff('holiday 2026-12-03 2026-12-04');
    await h.timeoff('holiday 2026-12-10', BEN);
    const ana = await requestOf(h, ANA);
    const ben = await requestOf(h, BEN);
    await dmCard(h, DANA, ana);
    // Dana approves Ben's before she leaves: it stays approved by her.
    await h.click(TIME_OFF_ACTION.approve, DANA, { message: await dmCard(h, DANA, ben) });
    await waitFor(async () => (await h!.types(ben)).includes('TimeOffApproved'), { what: "Ben's approved" });
    h.sim.webApp.terminate(HR_IDS.dana);
    // HR's webhook is taken (recorded in the inbox); Switchboard stops before acting on it.
    await h.sim.webhooks.idle();
    await h.restart();
    await advanceUntil(h, async () => (await h!.types(ana)).includes('TimeOffHandedOn'));
    await h.restart();
    await settle(h);
    expect((await h.types(ana)).filter((t) => t === 'TimeOffHandedOn')).toHaveLength(1);
    const frankCards = h
      .dms(FRANK)
      .filter((m) => JSON.stringify(m.blocks ?? []).includes(ana) && /asks for/.test(messageText(m)));
    expect(frankCards).toHaveLength(1);
    expect(await h.types(ben)).not.toContain('TimeOffHandedOn');
  });
});

import { afterEach, describe, expect, it } from 'vitest';
import { TIME_OFF_ACTION } from '../../src/timeOff/blocks/timeOffIds.ts';
import { waitFor } from '../support/waitFor.ts';
import {
  ANA,
  BEN,
  CHEN,
  DANA,
  FRANK,
  HR_IDS,
  type JoinsHarness,
  messageText,
  startJoinsHarness,
} from './harness.ts';

/**
 * Issue 12, capability 2 and the time-off half of capability 3, in the joins world (incident
 * service, phone service and HR simulators, fake Slack, one manual clock): the approver found
 * around someone on leave, the HR channel, and leavers. test/timeOff/approvers.int.test.ts has the
 * same rules in more detail on the time-off harness.
 */
let h: JoinsHarness | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
});

const HR_CHANNEL = 'C0PEOPLE';

const withHrChannel = async () => {
  const harness = await startJoinsHarness({ env: { TIME_OFF_HR_CHANNEL: HR_CHANNEL } });
  harness.fake.addChannel({ id: HR_CHANNEL, name: 'people-ops', is_im: false, members: [CHEN] });
  return harness;
};

const newRequest = async (harness: JoinsHarness, user: string, text: string): Promise<string> => {
  const before = new Set(await harness.requestIds(user));
  const asked = await harness.timeoff(text, user);
  expect(asked.status).toBe(200);
  return waitFor(async () => (await harness.requestIds(user)).find((id) => !before.has(id)), {
    what: `${user}'s new request`,
  });
};

const cardIn = (harness: JoinsHarness, channel: string, timeOffId: string) =>
  waitFor(
    () =>
      harness.fake
        .messages(channel)
        .find((m) => JSON.stringify(m.blocks ?? []).includes(timeOffId) && /asks for/.test(messageText(m))),
    { what: `the card of ${timeOffId} in ${channel}` },
  );

const dmCard = (harness: JoinsHarness, user: string, timeOffId: string) =>
  cardIn(harness, harness.fake.dmChannel(user).id, timeOffId);

const has = async (harness: JoinsHarness, timeOffId: string, type: string) =>
  (await harness.types(timeOffId)).includes(type);

describe('joins: approvals routed around an absent approver', () => {
  it("Dana on leave approved in Switchboard: Ana's request for her on-call week goes to Frank, who approves; HR is told Frank approved", async () => {
    h = await startJoinsHarness();
    // Dana is off from today to Friday of next week; Frank approves it.
    await h.approvedLeave(DANA, 'holiday 2026-11-23 to 2026-12-04 Trip');
    const { from, to } = h.nextWeek();
    const id = await newRequest(h, ANA, `holiday ${from} to ${to}`);
    const card = await dmCard(h, FRANK, id);
    await h.dm(/Dana Lee is on leave until Fri 4 Dec 2026, so <@U0FRANK> will decide/, ANA);
    await h.dm(/went to <@U0FRANK> instead of you, as you are on leave until Fri 4 Dec 2026/, DANA);
    await h.click(TIME_OFF_ACTION.approve, FRANK, { message: card });
    await waitFor(
      async () => {
        await h!.advanceTimers(30_000);
        return (await has(h!, id, 'TimeOffConfirmed')) || undefined;
      },
      { what: 'recorded in HR', timeoutMs: 30_000 },
    );
    const inHr = h.sim.timeOffRequests().find((r) => r.employeeId === HR_IDS.ana && r.startDate === from);
    expect(inHr).toMatchObject({ status: 'approved', approver: HR_IDS.frank });
  });

  it('Dana and Frank away: the HR channel decides; Ben (not a member) is refused and recorded, Chen approves', async () => {
    h = await withHrChannel();
    await h.approvedLeave(DANA, 'holiday 2026-11-23 to 2026-12-04 Trip');
    // Frank's leave was approved in HR's web app by nobody in Switchboard: book it in HR directly.
    await h.api.client.submitTimeOff(HR_IDS.frank, {
      policyType: 'Holiday',
      startDate: '2026-11-30',
      endDate: '2026-12-11',
      skipManagerApproval: true,
      approver: HR_IDS.frank,
    });
    await waitFor(
      async () => {
        await h!.advanceTimers(5_000);
        await h!.api.readModel.catchUp();
        return (
          h!.api.readModel.absences({ from: '2026-11-30', to: '2026-11-30' }, HR_IDS.frank).length > 0 ||
          undefined
        );
      },
      { what: "Frank's leave seen from HR", timeoutMs: 30_000 },
    );
    const { from, to } = h.nextWeek();
    const id = await newRequest(h, ANA, `holiday ${from} to ${to}`);
    const card = await cardIn(h, HR_CHANNEL, id);
    expect(messageText(card)).toMatch(/Any member of this channel but <@U0ANA> may approve or deny it/);
    const ben = await h.click(TIME_OFF_ACTION.approve, BEN, { message: card });
    await h.response(ben.responseUrl, /Only members of <#C0PEOPLE> can approve or deny/);
    const recorded = (await h.sb.store.readStream('inbox-slack')).find(
      (e) =>
        e.type === 'CommandRejected' &&
        (e.data as { actor?: string; commandType?: string }).actor === BEN &&
        (e.data as { commandType?: string }).commandType === 'ApproveTimeOff',
    );
    expect(recorded).toBeDefined();
    await h.click(TIME_OFF_ACTION.approve, CHEN, { message: card });
    await waitFor(async () => has(h!, id, 'TimeOffApproved'), { what: 'approved by Chen' });
    await h.api.readModel.catchUp();
    expect(h.api.readModel.state(id)?.context.decision?.by.slackUserId).toBe(CHEN);
  });
});

describe('joins: leavers (the time-off half)', () => {
  it("Dana leaves: what waits for her goes to Frank; Ana leaves: her waiting request is cancelled, Frank's card says so", async () => {
    h = await startJoinsHarness();
    const { from, to } = h.nextWeek();
    const ana = await newRequest(h, ANA, `holiday ${from} to ${to}`);
    const old = structuredClone(await dmCard(h, DANA, ana));
    h.sim.webApp.terminate(HR_IDS.dana);
    await waitFor(
      async () => {
        await h!.advanceTimers(1_000);
        return (await has(h!, ana, 'TimeOffHandedOn')) || undefined;
      },
      { what: "Ana's request handed on" },
    );
    const frankCard = await dmCard(h, FRANK, ana);
    // Dana's old card is dead.
    await h.click(TIME_OFF_ACTION.approve, DANA, { message: old });
    await waitFor(
      async () =>
        (await h!.sb.store.readStream('inbox-slack')).some(
          (e) =>
            e.type === 'CommandRejected' &&
            (e.data as { actor?: string; commandType?: string }).actor === DANA &&
            (e.data as { commandType?: string }).commandType === 'ApproveTimeOff',
        ) || undefined,
      { what: "Dana's late click refused and recorded" },
    );
    h.sim.webApp.terminate(HR_IDS.ana);
    await waitFor(
      async () => {
        await h!.advanceTimers(1_000);
        await h!.api.readModel.catchUp();
        return h!.api.readModel.view(ana)?.phase === 'cancelled' || undefined;
      },
      { what: "Ana's request cancelled" },
    );
    await waitFor(
      () => /Cancelled: Ana Silva left/.test(messageText(h!.dms(FRANK).find((m) => m.ts === frankCard.ts)!)),
      { what: "Frank's card says Ana left" },
    );
    expect(
      (await h.sb.store.readStream(`timeoff-${ana}`)).find((e) => e.type === 'TimeOffCancelled')?.data,
    ).toMatchObject({ by: 'left' });
  });
});

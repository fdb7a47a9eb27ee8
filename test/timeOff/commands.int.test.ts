import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import type { FakeMessage } from '../../sandbox/simulators/slack/fakeSlack.ts';
import { eventCallbackBody } from '../../sandbox/simulators/slack/signing.ts';
import { approvalCard } from '../../src/timeOff/blocks/approvalCard.ts';
import { TIME_OFF_REQUEST_FIELD } from '../../src/timeOff/blocks/requestModal.ts';
import { shortTimeOffId, TIME_OFF_ACTION, TIME_OFF_FIELD } from '../../src/timeOff/blocks/timeOffIds.ts';
import { postSigned } from '../support/startApp.ts';
import { waitFor } from '../support/waitFor.ts';
import {
  ANA,
  BEN,
  CHEN,
  DANA,
  FRANK,
  GIL,
  HR_IDS,
  messageText,
  type SlashAnswer,
  startTimeOffHarness,
  type TimeOffHarness,
} from './harness.ts';

/**
 * The Slack edge of time off end to end: `/timeoff` (form, text, status, cancel, balance),
 * `/whosout`, and the approver's buttons, through the real Bolt receiver with real signatures,
 * against the HR simulator on the harness's manual clock. The approver's DM card is rendered here
 * with the same renderer the notices use, and clicked as a DM to Dana.
 */
let h: TimeOffHarness;
afterEach(async () => {
  await h?.stop();
});

const F = TIME_OFF_REQUEST_FIELD;
const select = (value: string) => ({ type: 'static_select', selected_option: { value } });
const date = (d: string | null) => ({ type: 'datepicker', selected_date: d });
const text = (v: string) => ({ type: 'plain_text_input', value: v });

const formValues = (
  o: Readonly<{
    policy?: string;
    start: string;
    end?: string | null;
    startPortion?: string;
    endPortion?: string;
    note?: string;
  }>,
) => ({
  [F.policy.blockId]: { [F.policy.actionId]: select(o.policy ?? 'Holiday') },
  [F.start.blockId]: { [F.start.actionId]: date(o.start) },
  [F.startPortion.blockId]: { [F.startPortion.actionId]: select(o.startPortion ?? 'all_day') },
  [F.end.blockId]: { [F.end.actionId]: date(o.end ?? null) },
  [F.endPortion.blockId]: { [F.endPortion.actionId]: select(o.endPortion ?? 'all_day') },
  [F.note.blockId]: { [F.note.actionId]: text(o.note ?? '') },
});

/** The approver's card for a request, as a DM to Dana (rendered as the notices render it). */
const cardFor = async (timeOffId: string, ts = '1700000100.000100'): Promise<FakeMessage> => {
  await h.api.readModel.catchUp();
  const view = h.api.readModel.view(timeOffId);
  if (!view) throw new Error(`no request ${timeOffId}`);
  const m = approvalCard(view, { balanceAfter: null, teammatesOut: [] });
  return {
    channel: h.fake.dmChannel(DANA).id,
    ts,
    user: 'U0SWITCHBOARD',
    bot_id: 'B0SWITCHBOARD',
    text: m.text,
    blocks: m.blocks,
    thread_ts: undefined,
    edits: 0,
    history: [],
    deleted: false,
    via: 'api',
  };
};

/** The approver's card the notices posted to Dana for this request. */
const dmCard = (timeOffId: string): Promise<FakeMessage> =>
  waitFor(
    () =>
      h
        .dms(DANA)
        .find((m) => !m.deleted && JSON.stringify(m.blocks ?? []).includes(`"value":"${timeOffId}"`)),
    { what: `the approver's card for ${timeOffId}` },
  );

/**
 * A query's answer: the ack, or, when HR took longer than the ack may wait (a slow machine), what
 * came through the response_url after "Looking up…".
 */
const answered = async (asked: Promise<SlashAnswer>): Promise<Readonly<{ text: string; body: unknown }>> => {
  const r = await asked;
  if (!r.text.startsWith(':hourglass_flowing_sand: Looking up')) return r;
  const id = r.responseUrl.slice(r.responseUrl.lastIndexOf('/') + 1);
  const post = await waitFor(() => h.fake.responsePosts.find((p) => p.responseUrlId === id), {
    what: 'the answer after Looking up',
  });
  return { text: String((post.body as { text?: unknown }).text ?? ''), body: post.body };
};

type Stored = Readonly<{ type: string; data: Record<string, unknown> }>;
const inbox = async (): Promise<Stored[]> =>
  (await h.sb.store.readStream('inbox-slack')).map((e) => ({
    type: e.type,
    data: e.data as Record<string, unknown>,
  }));

/** The `CommandRejected` recorded for a command type by this actor, once dispatched. */
const rejected = (commandType: string, actor: string) =>
  waitFor(
    async () =>
      (await inbox()).find(
        (e) =>
          e.type === 'CommandRejected' && e.data['commandType'] === commandType && e.data['actor'] === actor,
      )?.data,
    { what: `${commandType} by ${actor} refused` },
  );

/** The inbox record of a Slack input by action / callback / command name and actor. */
const inputRecord = async (name: string, actor: string) =>
  (await inbox())
    .filter(
      (e) =>
        e.type === 'SlackInputReceived' &&
        (e.data['input'] as { name?: string; actor?: string }).name === name &&
        (e.data['input'] as { actor?: string }).actor === actor,
    )
    .at(-1)?.data;

/** The person's one request, once the inbox dispatched it. */
const onlyRequest = async (user: string): Promise<string> => {
  await h.idle();
  const ids = await waitFor(
    async () => ((await h.requestIds(user)).length ? h.requestIds(user) : undefined),
    {
      what: `a request by ${user}`,
    },
  );
  expect(ids).toHaveLength(1);
  return ids[0]!;
};

describe('/timeoff', () => {
  it('asks by text: the ack names the approver, the dates and the short id; status lists it; cancel by short id', async () => {
    h = await startTimeOffHarness();
    const asked = await h.timeoff('holiday 2026-12-03 to 2026-12-04 Family visit');
    expect(asked.status).toBe(200);
    expect(asked.text).toMatch(
      /Asking Dana Lee to approve \*Holiday\*, Thu 3 Dec – Fri 4 Dec 2026 \(2 working days\)/,
    );
    const id = await onlyRequest(ANA);
    expect(asked.text).toContain(`(id \`${shortTimeOffId(id)}\`)`);
    await waitFor(async () => (await h.types(id)).includes('TimeOffRequested') || undefined, {
      what: 'the request recorded',
    });
    const view = h.api.readModel.view(id)!;
    expect(view).toMatchObject({
      policyType: 'Holiday',
      startDate: '2026-12-03',
      endDate: '2026-12-04',
      description: 'Family visit',
      requester: { slackUserId: ANA, hrId: HR_IDS.ana },
      approver: { slackUserId: DANA, hrId: HR_IDS.dana },
    });

    // A half day, one day: `pm` after the date.
    const half = await h.timeoff('Sick tomorrow pm');
    expect(half.text).toMatch(/Sick\*, Tue 24 Nov 2026 \(afternoon\) \(½ working day\)/);

    const status = await h.timeoff('status');
    expect(status.text).toContain('2 open');
    expect(JSON.stringify(status.body)).toContain(shortTimeOffId(id));
    expect(JSON.stringify(status.body)).toContain('waiting for approval');

    const cancelled = await h.timeoff(`cancel ${shortTimeOffId(id)}`);
    expect(cancelled.text).toMatch(/Cancelling your \*Holiday\* request for Thu 3 Dec – Fri 4 Dec 2026/);
    await waitFor(async () => (await h.types(id)).includes('TimeOffCancelled') || undefined, {
      what: 'the request cancelled',
    });
    const again = await h.timeoff(`cancel ${shortTimeOffId(id)}`);
    expect(again.text).toMatch(/already cancelled: nothing to cancel/);
    const none = await h.timeoff('cancel ffffff');
    expect(none.text).toMatch(/no time-off request with the id `ffffff`/);
    // Someone else's short id is not theirs to cancel: not found among Ben's.
    const bens = await h.timeoff(`cancel ${shortTimeOffId(id)}`, BEN);
    expect(bens.text).toMatch(/You have no time-off request with the id/);
  });

  it('explains an unknown policy, bad dates and people outside HR, recording each refusal', async () => {
    h = await startTimeOffHarness();
    const policy = await h.timeoff('vacation 2026-12-03');
    expect(policy.text).toMatch(/`vacation` is not a time-off policy in HR\. HR knows: `Holiday`, `Sick`/);
    const notADate = await h.timeoff('holiday 2026-13-01');
    expect(notADate.text).toContain('`2026-13-01` is not a real date');
    const slashes = await h.timeoff('holiday 03/12/2026');
    expect(slashes.text).toContain('write it as YYYY-MM-DD');
    const backwards = await h.timeoff('holiday 2026-12-04 2026-12-03');
    expect(backwards.text).toContain('The end date (2026-12-03) is before the start date (2026-12-04).');
    const weekend = await h.timeoff('holiday 2026-12-05 2026-12-06');
    expect(weekend.text).toContain('2026-12-05 to 2026-12-06 has no working days');
    const portions = await h.timeoff('holiday 2026-12-03 am 2026-12-04');
    expect(portions.text).toContain('starts with a whole day or an afternoon');
    const gil = await h.timeoff('holiday 2026-12-03', GIL);
    expect(gil.text).toMatch(/:bust_in_silhouette: Your Slack email gil@example\.org has no user in HR/);
    const frank = await h.timeoff('holiday 2026-12-03', FRANK);
    expect(frank.text).toMatch(/HR has no manager for you/);
    const help = await h.timeoff('help');
    // Placeholders escaped (issue 19): Slack shows `<policy>`, never reads it as a link.
    expect(help.text).toContain('`/timeoff &lt;policy&gt; &lt;start&gt; [&lt;end&gt;] [note]`');
    expect(help.text).toContain('`am` or `pm`');
    const gilForm = await h.timeoff('', GIL);
    expect(gilForm.text).toMatch(/no user in HR/);
    expect(h.lastView(GIL)).toBeUndefined();

    expect(await h.requestIds(ANA)).toEqual([]);
    const record = await inputRecord('/timeoff', GIL);
    expect(record?.['rejection']).toMatchObject({ code: 'SB_UNMAPPED_USER' });
    expect(record?.['commands']).toEqual([]);
  });

  it('asks by the form: policies from HR, field errors where they belong, then the request', async () => {
    h = await startTimeOffHarness();
    const opened = await h.timeoff('');
    expect(opened.status).toBe(200);
    const view = await waitFor(() => h.lastView(ANA), { what: 'the form' });
    expect(view['callback_id']).toBe('timeoff.request');
    expect(JSON.stringify(view['blocks'])).toContain('"value":"Holiday"');
    expect(JSON.stringify(view['blocks'])).toContain('"value":"Sick"');

    const backwards = await h.submitView(ANA, formValues({ start: '2026-12-04', end: '2026-12-03' }));
    expect(backwards.body).toMatchObject({
      response_action: 'errors',
      errors: { [F.end.blockId]: 'The end date (2026-12-03) is before the start date (2026-12-04).' },
    });
    const twoPortions = await h.submitView(
      ANA,
      formValues({ start: '2026-12-03', startPortion: 'morning', endPortion: 'afternoon' }),
    );
    expect(twoPortions.body).toMatchObject({
      response_action: 'errors',
      errors: { [F.endPortion.blockId]: expect.stringContaining('one-day request') },
    });
    const weekend = await h.submitView(ANA, formValues({ start: '2026-12-05', end: '2026-12-06' }));
    expect(weekend.body).toMatchObject({
      response_action: 'errors',
      errors: { [F.start.blockId]: expect.stringContaining('no working days') },
    });
    const forged = await h.submitView(ANA, formValues({ policy: 'Sabbatical', start: '2026-12-03' }));
    expect(forged.body).toMatchObject({
      response_action: 'errors',
      errors: { [F.policy.blockId]: expect.stringContaining('HR has no policy “Sabbatical”') },
    });
    expect(await h.requestIds(ANA)).toEqual([]);

    const good = await h.submitView(
      ANA,
      formValues({ start: '2026-12-03', startPortion: 'afternoon', end: '2026-12-07', note: 'Wedding' }),
    );
    expect(good.status).toBe(200);
    expect(good.body?.['response_action']).toBeUndefined();
    const id = await waitFor(async () => (await h.requestIds(ANA))[0], { what: 'the request' });
    expect(h.api.readModel.view(id)).toMatchObject({
      policyType: 'Holiday',
      startDate: '2026-12-03',
      endDate: '2026-12-07',
      startPortion: 'afternoon',
      endPortion: 'all_day',
      workingDays: 2.5,
      description: 'Wedding',
      approver: { slackUserId: DANA },
    });

    // The requester's Cancel on their DM: someone else's click on it is refused; Ana's cancels.
    const status = await waitFor(
      () =>
        h
          .dms(ANA)
          .find((m) => JSON.stringify(m.blocks ?? []).includes(`"action_id":"${TIME_OFF_ACTION.cancel}"`)),
      { what: "the requester's Cancel button" },
    );
    const ben = await h.click(TIME_OFF_ACTION.cancel, BEN, { message: status });
    expect((await rejected('CancelTimeOff', BEN))['details']).toMatchObject({ reason: 'not_requester' });
    await h.response(ben.responseUrl, /Only the person who asked for this time off can cancel it/);
    await h.click(TIME_OFF_ACTION.cancel, ANA, { message: status });
    await waitFor(async () => (await h.types(id)).includes('TimeOffCancelled') || undefined, {
      what: 'cancelled by its button',
    });
  });

  it('says HR is not answering in the form, and takes the typed policy', async () => {
    h = await startTimeOffHarness();
    h.sim.failNext('policyTypes', { status: 503, times: 10 });
    await h.timeoff('');
    const view = await waitFor(() => h.lastView(ANA), { what: 'the form' });
    expect(JSON.stringify(view['blocks'])).toContain("HR isn't answering just now");
    expect(JSON.stringify(view['blocks'])).toContain('plain_text_input');
  });

  it('cancel by a short id two requests share: lists them; more of the id picks one; a plain Deny needs no reason', async () => {
    h = await startTimeOffHarness();
    const ids = ['abcdef00-0000-4000-8000-000000000001', 'abcdef00-0000-4000-8000-000000000002'];
    for (const [i, timeOffId] of ids.entries()) {
      await h.sb.bus.dispatch({
        type: 'RequestTimeOff',
        data: {
          timeOffId,
          policyType: 'Holiday',
          startDate: `2026-12-0${i + 1}`,
          endDate: `2026-12-0${i + 1}`,
          startPortion: 'all_day',
          endPortion: 'all_day',
          description: '',
          requester: { hrId: HR_IDS.ana, slackUserId: ANA, displayName: 'Ana Silva' },
          approver: { hrId: HR_IDS.dana, slackUserId: DANA, displayName: 'Dana Lee' },
          holidays: [],
          approvalRules: null,
        },
        metadata: { commandId: randomUUID(), now: h.clock.now().toISOString(), actor: ANA },
      });
    }
    await h.idle();
    const both = await h.timeoff('cancel ABCDEF');
    expect(both.text).toMatch(/`ABCDEF` starts more than one of your requests/);
    expect(both.text).toContain(ids[0]);
    expect(both.text).toContain(ids[1]);
    expect((await inputRecord('/timeoff', ANA))?.['rejection']).toMatchObject({ code: 'SB_VALIDATION' });
    const one = await h.timeoff(`cancel ${ids[1]}`);
    expect(one.text).toContain('Cancelling your *Holiday* request for Wed 2 Dec 2026');
    await waitFor(async () => (await h.types(ids[1]!)).includes('TimeOffCancelled') || undefined, {
      what: 'the second cancelled',
    });
    expect(await h.types(ids[0]!)).not.toContain('TimeOffCancelled');

    await h.click(TIME_OFF_ACTION.deny, DANA, { message: await dmCard(ids[0]!) });
    await waitFor(async () => (await h.types(ids[0]!)).includes('TimeOffDenied') || undefined, {
      what: 'the denial',
    });
    await h.api.readModel.catchUp();
    expect(h.api.readModel.view(ids[0]!)).toMatchObject({ phase: 'denied', denyReason: null });
  });

  it('balance: HR’s balance for each policy, or the one named', async () => {
    h = await startTimeOffHarness();
    const all = await answered(h.timeoff('balance'));
    expect(all.text).toMatch(/Holiday: 25 days left of 25 days a year/);
    expect(all.text).toMatch(/Sick: 10 days left of 10 days a year/);
    const sick = await answered(h.timeoff('balance SICK'));
    expect(sick.text).toMatch(/Sick: 10 days left/);
    expect(sick.text).not.toMatch(/Holiday/);
    const unknown = await h.timeoff('balance gardening');
    expect(unknown.text).toMatch(/`gardening` is not a time-off policy in HR/);
    const gil = await h.timeoff('balance', GIL);
    expect(gil.text).toMatch(/no user in HR/);
  });
});

describe('the approver’s buttons', () => {
  it('approve on the card; clicks by someone else, on one’s own request and with a forged id are refused and recorded', async () => {
    h = await startTimeOffHarness();
    await h.timeoff('holiday 2026-12-03 2026-12-04');
    const id = await onlyRequest(ANA);
    const card = await dmCard(id);

    const ben = await h.click(TIME_OFF_ACTION.approve, BEN, { message: card });
    expect(ben.status).toBe(200);
    expect((await rejected('ApproveTimeOff', BEN))['details']).toMatchObject({ reason: 'not_approver' });
    expect(await h.response(ben.responseUrl, /Only Dana Lee can approve or deny/)).toMatch(/^:no_entry:/);

    const own = await h.click(TIME_OFF_ACTION.approve, ANA, { message: card });
    expect((await rejected('ApproveTimeOff', ANA))['details']).toMatchObject({ reason: 'own_request' });
    await h.response(own.responseUrl, /can't approve or deny your own time off/);

    const forged = await h.click(TIME_OFF_ACTION.approve, DANA, {
      message: card,
      value: '../timeoff-directory',
    });
    expect(forged.status).toBe(200);
    expect(await h.response(forged.responseUrl, /doesn't name a time-off request/)).toBeTruthy();
    const record = await inputRecord(TIME_OFF_ACTION.approve, DANA);
    expect(record?.['rejection']).toMatchObject({
      code: 'SB_VALIDATION',
      message: 'the button names no time-off request',
    });
    expect(record?.['commands']).toEqual([]);

    // A well-formed id with no request behind it: the decider refuses it.
    const unknown = await h.click(TIME_OFF_ACTION.deny, DANA, {
      message: card,
      value: '00000000-0000-5000-8000-000000000000',
    });
    expect((await rejected('DenyTimeOff', DANA))['details']).toMatchObject({ reason: 'unknown_request' });
    await h.response(unknown.responseUrl, /doesn't name a time-off request Switchboard knows/);

    // Dana's click on a message that is not the request's card (a copy with another ts).
    const copy = await cardFor(id, '1700000999.000100');
    const elsewhere = await h.click(TIME_OFF_ACTION.approve, DANA, { message: copy });
    expect((await rejected('ApproveTimeOff', DANA))['details']).toMatchObject({ reason: 'other_card' });
    await h.response(elsewhere.responseUrl, /belongs to another message/);

    expect(await h.types(id)).toEqual(['TimeOffRequested', 'TimeOffApprovalAsked']);
    await h.click(TIME_OFF_ACTION.approve, DANA, { message: card });
    await waitFor(async () => (await h.types(id)).includes('TimeOffApproved') || undefined, {
      what: 'the approval',
    });
    const approved = (await h.sb.store.readStream(`timeoff-${id}`)).find((e) => e.type === 'TimeOffApproved');
    expect(approved?.data).toMatchObject({ by: { slackUserId: DANA } });
    expect(messageText(await h.dm(/approved it/, ANA))).toMatch(/Dana|U0DANA/);
    // Recorded in HR, confirmed once HR's read-after-write lag has passed.
    await waitFor(
      async () => {
        await h.advance(5_000);
        return (await h.types(id)).includes('TimeOffConfirmed') || undefined;
      },
      { what: 'the request confirmed in HR' },
    );
    await h.dm(/recorded in HR/, ANA);

    // Cancelled after approval: in HR too.
    const cancel = await h.timeoff(`cancel ${shortTimeOffId(id)}`);
    expect(cancel.text).toContain('It was approved, so Switchboard cancels it in HR too');
    await waitFor(
      async () => {
        await h.advance(5_000);
        return (await h.types(id)).includes('TimeOffCancelled') || undefined;
      },
      { what: 'the request cancelled in HR' },
    );
    expect(h.sim.timeOffRequests().find((r) => r.employeeId === HR_IDS.ana)?.status).toBe('canceled');
  });

  it('deny with reason: the form, the reason on the request; only the approver may open it', async () => {
    h = await startTimeOffHarness();
    await h.timeoff('sick 2026-12-03', CHEN);
    const id = await onlyRequest(CHEN);
    const card = await dmCard(id);

    const ben = await h.click(TIME_OFF_ACTION.denyWithReason, BEN, { message: card });
    await h.response(ben.responseUrl, /Only Dana Lee can approve or deny this request/);
    expect(h.lastView(BEN)).toBeUndefined();
    expect((await inputRecord(TIME_OFF_ACTION.denyWithReason, BEN))?.['rejection']).toMatchObject({
      message: 'someone other than the approver tried to deny',
    });

    await h.click(TIME_OFF_ACTION.denyWithReason, DANA, { message: card });
    const form = await waitFor(() => h.lastView(DANA), { what: 'the deny form' });
    expect(form['callback_id']).toBe('timeoff.deny');
    const empty = await h.submitView(DANA, {
      [TIME_OFF_FIELD.denyReason.blockId]: { [TIME_OFF_FIELD.denyReason.actionId]: text('  ') },
    });
    expect(empty.body).toMatchObject({ response_action: 'errors' });
    const done = await h.submitView(DANA, {
      [TIME_OFF_FIELD.denyReason.blockId]: {
        [TIME_OFF_FIELD.denyReason.actionId]: text('Release week: could you take the week after?'),
      },
    });
    expect(done.body?.['response_action']).toBeUndefined();
    await waitFor(async () => (await h.types(id)).includes('TimeOffDenied') || undefined, {
      what: 'the denial',
    });
    await h.api.readModel.catchUp();
    expect(h.api.readModel.view(id)).toMatchObject({
      phase: 'denied',
      denyReason: 'Release week: could you take the week after?',
    });
    await h.dm(/denied it: “Release week: could you take the week after\?”/, CHEN);
  });
});

describe('fix and send again', () => {
  it('after HR refused the submission the requester fixes it in the form, prefilled; nobody else may', async () => {
    h = await startTimeOffHarness();
    h.sim.failNext('policyTypes', { status: 503, times: 1 });
    const asked = await h.timeoff('Sabbatical 2026-12-03');
    expect(asked.text).toContain('the policy name could not be checked');
    const id = await onlyRequest(ANA);
    await h.click(TIME_OFF_ACTION.approve, DANA, { message: await dmCard(id) });
    // The HR processor submits it; HR answers 400 (no such policy).
    await h.idle();
    await waitFor(
      async () => {
        await h.api.readModel.catchUp();
        return h.api.readModel.view(id)?.phase === 'submissionFailed' || undefined;
      },
      { what: 'the submission refused' },
    );
    const dm = await waitFor(
      () => h.dms(ANA).find((m) => JSON.stringify(m.blocks ?? []).includes(TIME_OFF_ACTION.resubmit)),
      { what: 'the resubmit button' },
    );

    const ben = await h.click(TIME_OFF_ACTION.resubmit, BEN, { message: dm });
    await h.response(ben.responseUrl, /Only the person who asked for this time off can send it again/);
    expect(h.lastView(BEN)).toBeUndefined();
    expect((await inputRecord(TIME_OFF_ACTION.resubmit, BEN))?.['rejection']).toMatchObject({
      code: 'SB_VALIDATION',
    });

    await h.click(TIME_OFF_ACTION.resubmit, ANA, { message: dm });
    const form = await waitFor(() => h.lastView(ANA), { what: 'the resubmit form' });
    expect(JSON.parse(String(form['private_metadata']))).toMatchObject({ mode: 'resubmit', timeOffId: id });
    expect(JSON.stringify(form['blocks'])).toContain('initial_date":"2026-12-03"');
    const sent = await h.submitView(ANA, formValues({ policy: 'Holiday', start: '2026-12-03' }));
    expect(sent.body?.['response_action']).toBeUndefined();
    await waitFor(async () => (await h.types(id)).includes('TimeOffResubmitted') || undefined, {
      what: 'the request sent again',
    });
    await h.api.readModel.catchUp();
    expect(h.api.readModel.view(id)?.policyType).toBe('Holiday');
    // Sent to HR again and, after HR's lag, confirmed there.
    await waitFor(
      async () => {
        await h.advance(5_000);
        return (await h.types(id)).includes('TimeOffConfirmed') || undefined;
      },
      { what: 'the fixed request confirmed in HR' },
    );
    expect(h.sim.timeOffRequests().filter((r) => r.employeeId === HR_IDS.ana)).toMatchObject([
      { policyType: 'Holiday', startDate: '2026-12-03', status: 'approved', approver: HR_IDS.dana },
    ]);
  });
});

describe('/whosout', () => {
  it('today and a range: Switchboard’s requests, a request made in the HR web app, and HR’s older leave, approved and asked apart', async () => {
    h = await startTimeOffHarness({ lagMs: 5_000 });
    // Leave HR had before Switchboard started (approved, no webhook ever seen): Ben, 23-27 Nov.
    const state = h.sim.exportState();
    state.requests.push({
      id: 900_001,
      versions: [
        {
          visibleAt: 0,
          value: {
            requestId: 900_001,
            employeeId: HR_IDS.ben,
            policyType: 'Holiday',
            startDate: '2026-11-23',
            endDate: '2026-11-27',
            startDatePortion: 'all_day',
            endDatePortion: 'all_day',
            description: null,
            status: 'approved',
            approver: HR_IDS.dana,
            createdAt: 0,
          },
        },
      ],
    });
    h.sim.importState(state);
    await h.timeoff('holiday 2026-12-01 2026-12-02'); // Ana, through Switchboard (waiting)
    h.sim.webApp.requestTimeOff({
      employeeId: HR_IDS.chen,
      policyType: 'Sick',
      startDate: '2026-12-02',
      endDate: '2026-12-02',
    });
    await h.advance(5_000); // HR's read-after-write lag

    const today = await answered(h.whosout(''));
    expect(today.text).toMatch(/Who's out today, Mon 23 Nov 2026: 1 approved, 0 waiting/);
    expect(JSON.stringify(today.body)).toContain('Ben Okafor');
    expect(JSON.stringify(today.body)).not.toContain('Ana');
    // The kind of leave is for the person and their managers: Ana sees Ben is out, not why.
    expect(JSON.stringify(today.body)).not.toContain('Holiday');

    const range = await answered(h.whosout('2026-11-30 2026-12-04', DANA));
    expect(range.text).toMatch(/0 approved, 2 waiting for approval/);
    const shown = JSON.stringify(range.body);
    expect(shown).toContain(`<@${ANA}>`);
    expect(shown).toContain('Chen Wei');
    expect(shown).toContain('Asked, not approved yet');
    expect(shown).toContain('Chen Wei: Sick, Wed 2 Dec 2026'); // Dana manages both
    expect(shown).toContain(`<@${ANA}>: Holiday, Tue 1 Dec – Wed 2 Dec 2026`);

    const nextWeek = await answered(h.whosout('next week'));
    expect(nextWeek.text).toMatch(/next week, Mon 30 Nov – Sun 6 Dec 2026: 0 approved, 2 waiting/);
    expect(JSON.stringify(nextWeek.body)).toContain(`<@${ANA}>: Holiday`); // her own
    expect(JSON.stringify(nextWeek.body)).toContain('Chen Wei: Wed 2 Dec 2026'); // a teammate's: no kind
    const bad = await h.whosout('someday');
    expect(bad.text).toMatch(/`someday` is not a day `\/whosout` knows/);
  });

  it('today, tomorrow and this week are the asker’s days in their Slack time zone, not UTC dates (issue 19)', async () => {
    // Friday 27 Nov 2026, 20:00 UTC: Saturday 28 Nov 04:00 in Singapore, Friday 15:00 in New York.
    h = await startTimeOffHarness({
      start: '2026-11-27T20:00:00.000Z',
      timeZones: { [ANA]: 'Asia/Singapore', [BEN]: 'America/New_York' },
    });
    const ana = await answered(h.whosout('today', ANA));
    expect(ana.text).toMatch(/^Who's out today, Sat 28 Nov 2026:/);
    expect(JSON.stringify(ana.body)).toContain('(your days, Asia/Singapore)');
    expect(JSON.stringify(ana.body)).not.toContain('UTC');
    const ben = await answered(h.whosout('today', BEN));
    expect(ben.text).toMatch(/^Who's out today, Fri 27 Nov 2026:/);
    expect(JSON.stringify(ben.body)).toContain('(your days, America/New_York)');
    expect((await answered(h.whosout('tomorrow', ANA))).text).toMatch(
      /^Who's out tomorrow, Sun 29 Nov 2026:/,
    );
    expect((await answered(h.whosout('tomorrow', BEN))).text).toMatch(
      /^Who's out tomorrow, Sat 28 Nov 2026:/,
    );
    // Sunday 29 Nov 20:00 UTC: already Monday 30 Nov in Singapore, so a new week there.
    await h.advance(2 * 86_400_000);
    expect((await answered(h.whosout('this week', ANA))).text).toMatch(
      /this week, Mon 30 Nov – Sun 6 Dec 2026:/,
    );
    expect((await answered(h.whosout('this week', BEN))).text).toMatch(
      /this week, Mon 23 Nov – Sun 29 Nov 2026:/,
    );
    // `/timeoff … today` asks for the asker's today: Monday for Ana, Sunday (no working day) for Ben.
    const sick = await h.timeoff('sick today', ANA);
    expect(sick.text).toMatch(/\*Sick\*, Mon 30 Nov 2026 \(1 working day\)/);
    const bens = await h.timeoff('sick tomorrow am', BEN);
    expect(bens.text).toMatch(/\*Sick\*, Mon 30 Nov 2026 \(morning\) \(½ working day\)/);
    const sunday = await h.timeoff('sick today', BEN);
    expect(sunday.text).toBe(':calendar: 2026-11-29 has no working days: nothing to take off.');
    // The balance is HR's as of the asker's today, and says whose today it is.
    expect((await answered(h.timeoff('balance sick', ANA))).text).toMatch(
      /as of Mon 30 Nov 2026, your today in Asia\/Singapore/,
    );
  });

  it('App Home lists leave as upcoming until the asker’s own day is over, in their zone (issue 19)', async () => {
    // Thursday 26 Nov 2026, 14:00 UTC: 09:00 in New York.
    h = await startTimeOffHarness({
      start: '2026-11-26T14:00:00.000Z',
      timeZones: { [ANA]: 'America/New_York' },
    });
    expect((await h.timeoff('holiday today', ANA)).text).toMatch(
      /Holiday\*, Thu 26 Nov 2026 \(1 working day\)/,
    );
    // 02:00 UTC on Friday is still Thursday evening (21:00) in New York: her day off is not over.
    await h.advance(12 * 3_600_000);
    const before = h.fake.homes.get(ANA);
    await postSigned(
      `${h.url}/slack/events`,
      eventCallbackBody({ type: 'app_home_opened', user: ANA, tab: 'home' }),
      'json',
      { timestamp: Math.floor(h.clock.now().getTime() / 1000) },
    );
    const home = await waitFor(() => (h.fake.homes.get(ANA) !== before ? h.fake.homes.get(ANA) : undefined), {
      what: "Ana's Home tab",
    });
    const shown = JSON.stringify(home.view);
    expect(shown).toContain('Your upcoming time off');
    expect(shown).toContain('Thu 26 Nov 2026');
  });

  it('HR unreachable: what Switchboard knows, and a line saying HR could not be asked', async () => {
    h = await startTimeOffHarness();
    await h.timeoff('holiday 2026-11-24');
    h.sim.failNext('whosOut', { status: 503, times: 10 });
    const out = await answered(h.whosout('tomorrow'));
    expect(out.text).toMatch(/0 approved, 1 waiting for approval\. HR could not be asked just now\./);
    expect(JSON.stringify(out.body)).toContain(`<@${ANA}>`);
  });
});

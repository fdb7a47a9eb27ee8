import { afterEach, describe, expect, it } from 'vitest';
import { COVER_STREAM_PREFIX } from '../../machines/timeOff/cover.ts';
import { blockActionPayload, interactionBody } from '../../sandbox/simulators/slack/signing.ts';
import { TIME_OFF_ACTION } from '../../src/timeOff/blocks/timeOffIds.ts';
import { TIME_OFF_COVER_ACTION } from '../../src/timeOff/coverIds.ts';
import { postSigned } from '../support/startApp.ts';
import { waitFor } from '../support/waitFor.ts';
import { startTimeOffHarness } from '../timeOff/harness.ts';
import {
  ANA,
  BEN,
  CHEN,
  DANA,
  DAY,
  type JoinsHarness,
  joinsSeed,
  messageText,
  PAYMENTS_CHANNEL,
  PAYMENTS_SCHEDULE,
  PD_IDS,
  startJoinsHarness,
} from './harness.ts';

/**
 * Issue 12, capability 1 end to end: Ana, on call next week, asks for those days off; Dana's DM lists
 * the conflict in Dana's time zone and offers "Approve and cover with Ben"; the click makes the
 * override in the incident service (checked first, so never twice), `/oncall` names Ben, a refused
 * slot is named as uncovered, and cancelling the leave tells #payments which override to remove.
 */
let h: JoinsHarness | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
});

const scheduleOverrides = (j: JoinsHarness) => j.pd.state.schedules.get(PAYMENTS_SCHEDULE)?.overrides ?? [];

/** Ana asks for next week off; Dana's card once its on-call section is drawn. */
const askNextWeek = async (j: JoinsHarness) => {
  const { from, to } = j.nextWeek();
  const asked = await j.timeoff(`holiday ${from} to ${to} Family`, ANA);
  expect(asked.status).toBe(200);
  const timeOffId = await waitFor(async () => (await j.requestIds(ANA))[0], { what: "Ana's request" });
  const card = await waitFor(
    () =>
      j
        .dms(DANA)
        .filter((m) => !m.deleted)
        .reverse()
        .find((m) => /On-call conflicts/.test(messageText(m)) && !/Checking/.test(messageText(m))),
    { what: "Dana's card with its on-call conflicts", timeoutMs: 15_000 },
  );
  return { timeOffId, card };
};

const coverStreams = async (j: JoinsHarness) =>
  (await j.sb.store.listStreams({ prefix: COVER_STREAM_PREFIX, limit: 100 })).map((s) => s.streamId);

type Stored = Readonly<{ type: string; data: Record<string, unknown> }>;
const inbox = async (j: JoinsHarness): Promise<Stored[]> =>
  (await j.sb.store.readStream('inbox-slack')).map((e) => ({
    type: e.type,
    data: e.data as Record<string, unknown>,
  }));

/** Waits for a refusal of a command type by this actor, for that reason, to be recorded. */
const rejected = (j: JoinsHarness, commandType: string, actor: string, reason: string) =>
  waitFor(
    async () =>
      (await inbox(j)).find(
        (e) =>
          e.type === 'CommandRejected' &&
          e.data['commandType'] === commandType &&
          e.data['actor'] === actor &&
          (e.data['details'] as { reason?: unknown } | undefined)?.reason === reason,
      )?.data,
    { what: `${commandType} by ${actor} refused (${reason})` },
  );

/** The edge's refusals of an action by this actor (recorded with the input, no command). */
const edgeRefusals = async (j: JoinsHarness, actionId: string, actor: string) =>
  (await inbox(j))
    .filter(
      (e) =>
        e.type === 'SlackInputReceived' &&
        (e.data['input'] as { name?: string; actor?: string }).name === actionId &&
        (e.data['input'] as { actor?: string }).actor === actor &&
        e.data['rejection'],
    )
    .map((e) => (e.data['rejection'] as { message?: string }).message);

const latestCard = (j: JoinsHarness, ts: string) => {
  const m = j.dms(DANA).find((x) => x.ts === ts);
  return m ? messageText(m) : '';
};

describe('on-call conflicts and cover in one click (issue 12)', () => {
  it('lists Ana’s shift in Dana’s DM in Dana’s zone; Approve and cover with Ben makes one override and /oncall names Ben', async () => {
    h = await startJoinsHarness();
    const j = h;
    const { timeOffId, card } = await askNextWeek(j);
    const text = messageText(card);
    // Payments primary, Mon 30 Nov 00:00 UTC to Sat 5 Dec 00:00 UTC, in Europe/Warsaw (CET, UTC+1).
    expect(text).toContain(
      '*Payments primary* (Payments, level 1): Mon 30 Nov 01:00 – Sat 5 Dec 2026 01:00 CET (Europe/Warsaw)',
    );
    expect(text).toContain('times in Europe/Warsaw');
    // The Platform policy names Ana directly at level 2: listed, and said to need a policy change.
    expect(text).toMatch(/Platform\* escalation policy names them directly \(level 2\)/);
    const coverButton = (card.blocks as { elements?: { action_id?: string; text?: { text?: string } }[] }[])
      .flatMap((b) => b.elements ?? [])
      .find((e) => e.action_id === TIME_OFF_COVER_ACTION.approveCover);
    expect(coverButton?.text?.text).toBe('Approve and cover with Ben');

    // Someone other than the approver clicks it: refused and recorded, nothing approved or created.
    const forged = await j.click(TIME_OFF_COVER_ACTION.approveCover, CHEN, { message: card });
    expect(forged.status).toBe(200);
    await rejected(j, 'ApproveTimeOff', CHEN, 'not_approver');
    await j.response(forged.responseUrl, /Only Dana Lee can approve or deny/);
    // A value naming another request than the card's block: refused at the edge, recorded.
    await j.click(TIME_OFF_COVER_ACTION.approveCover, DANA, { message: card, value: `../x:${BEN}` });
    expect(await edgeRefusals(j, TIME_OFF_COVER_ACTION.approveCover, DANA)).toEqual([
      'the cover choice names no time-off request',
    ]);
    await j.idle();
    expect(await j.types(timeOffId)).not.toContain('TimeOffApproved');

    await j.click(TIME_OFF_COVER_ACTION.approveCover, DANA, { message: card });
    await waitFor(() => scheduleOverrides(j).length === 1 || undefined, {
      what: 'the override in the incident service',
    });
    const [override] = scheduleOverrides(j);
    expect(override?.userId).toBe(PD_IDS.ben);
    expect([Date.parse(override?.start ?? ''), Date.parse(override?.end ?? '')]).toEqual([
      Date.parse('2026-11-30T00:00:00Z'),
      Date.parse('2026-12-05T00:00:00Z'),
    ]);
    const approved = (await j.sb.store.readStream(`timeoff-${timeOffId}`)).find(
      (e) => e.type === 'TimeOffApproved',
    );
    expect(approved?.data).toMatchObject({ cover: { slackUserId: BEN } });

    // Dana and Ana are told exactly what is covered; the card shows it.
    const told = await j.dm(/now covers/, DANA);
    expect(messageText(told)).toContain(`override \`${override?.id}\``);
    expect(messageText(told)).toMatch(
      /Payments primary\*, Mon 30 Nov 01:00 – Sat 5 Dec 2026 01:00 CET \(Europe\/Warsaw\): covered by <@U0BEN>/,
    );
    const toldAna = await j.dm(/now covers/, ANA);
    // In Ana's own zone (Europe/Lisbon: WET, UTC+0).
    expect(messageText(toldAna)).toContain('Mon 30 Nov 00:00 – Sat 5 Dec 2026 00:00 WET (Europe/Lisbon)');
    await waitFor(() => /covered by <@U0BEN> \(override/.test(latestCard(j, card.ts)) || undefined, {
      what: 'the card showing the cover',
    });

    // A second click (a redelivery, an impatient approver): nothing new.
    await j.click(TIME_OFF_COVER_ACTION.approveCover, DANA, { message: card });
    await j.idle();
    expect(scheduleOverrides(j)).toHaveLength(1);
    expect(await coverStreams(j)).toHaveLength(1);

    // During Ana's week, /oncall names Ben at level 1.
    await j.advanceTimers(8 * DAY);
    const oncall = await j.oncall('Payments API');
    expect(oncall).toContain(
      `Level 1: <@U0BEN> (Payments primary) until <!date^${Date.parse('2026-12-05T00:00:00Z') / 1000}^{date_short_pretty} at {time}|Dec 5, 00:00 UTC>`,
    );
    j.pd.assertNoViolations();
  });

  it('a crash between the override and its record, then a restart: the check finds it, still one override', async () => {
    h = await startJoinsHarness();
    const j = h;
    const { card } = await askNextWeek(j);
    // The create lands in the service, but its answer is lost (a reset after applying it), as a
    // crash between the call and its record would lose it.
    j.pd.failNext('createScheduleOverride', { status: 'reset', afterApply: true, times: 1 });
    await j.click(TIME_OFF_COVER_ACTION.approveCover, DANA, { message: card });
    await waitFor(() => scheduleOverrides(j).length === 1 || undefined, { what: 'the override landed' });
    await j.restart();
    await j.advanceTimers(10_000);
    const told = await j.dm(/now covers/, DANA);
    expect(messageText(told)).toMatch(/covered by <@U0BEN>/);
    expect(scheduleOverrides(j)).toHaveLength(1);
    const stream = (await coverStreams(j))[0] ?? '';
    const created = (await j.sb.store.readStream(stream)).filter((e) => e.type === 'CoverSlotCreated');
    // Found by the check (whether the restart came before or after the failure was recorded).
    expect(created.map((e) => e.data)).toEqual([
      expect.objectContaining({ overrideId: null, alreadyThere: true }),
    ]);
    expect(j.pd.requestsFor('createScheduleOverride')).toHaveLength(1);
  });

  it('an override the service refuses: the message names exactly the shift still uncovered', async () => {
    h = await startJoinsHarness();
    const j = h;
    const { card } = await askNextWeek(j);
    j.pd.failNext('createScheduleOverride', { status: 400, times: 1 });
    await j.click(TIME_OFF_COVER_ACTION.approveCover, DANA, { message: card });
    const told = await j.dm(/took none of the overrides/, DANA);
    expect(messageText(told)).toMatch(
      /Payments primary\*, Mon 30 Nov 01:00 – Sat 5 Dec 2026 01:00 CET \(Europe\/Warsaw\): \*still uncovered\*/,
    );
    expect(scheduleOverrides(j)).toHaveLength(0);
    await waitFor(() => /still uncovered/.test(latestCard(j, card.ts)) || undefined, {
      what: 'the card saying so',
    });
  });

  it('a lookup that fails is retried: the card says so meanwhile, then lists the conflict', async () => {
    h = await startJoinsHarness();
    const j = h;
    j.pd.failNext('listOnCalls', { status: 503, times: 1 });
    const { from, to } = j.nextWeek();
    await j.timeoff(`holiday ${from} to ${to} Family`, ANA);
    const card = await j.dm(/On-call conflicts could not be checked yet/, DANA);
    expect(JSON.stringify(card.blocks)).not.toContain(TIME_OFF_COVER_ACTION.approveCover);
    await j.advanceTimers(10_000);
    await waitFor(() => /Payments primary/.test(latestCard(j, card.ts)) || undefined, {
      what: 'the card redrawn with the conflict',
    });
    expect(latestCard(j, card.ts)).not.toContain('could not be checked');
    const timeOffId = (await j.requestIds(ANA))[0] ?? '';
    expect(await j.types(timeOffId)).toEqual(
      expect.arrayContaining([
        'TimeOffConflictsCheckFailed',
        'TimeOffConflictsCheckRetried',
        'TimeOffConflictsChecked',
      ]),
    );
  });

  it('two shifts, one override refused: the DM names exactly the shift still uncovered, the other is covered', async () => {
    h = await startJoinsHarness({
      seed: (weekStart) => {
        const seed = joinsSeed(weekStart);
        const [primary] = seed.schedules ?? [];
        if (!primary) throw new Error('no schedule in the joins seed');
        return {
          ...seed,
          schedules: [
            ...(seed.schedules ?? []),
            {
              ...primary,
              id: 'PSCHSEC',
              name: 'Payments secondary',
              layers: [{ ...primary.layers[0]!, id: 'PLAYSEC', userIds: [PD_IDS.ana] }],
            },
          ],
          escalationPolicies: [
            ...(seed.escalationPolicies ?? []),
            {
              id: 'PEPSEC',
              name: 'Payments secondary',
              description: 'Ana, always',
              numLoops: 0,
              teamIds: ['PTEAMPAY'],
              rules: [
                {
                  id: 'PRSEC01',
                  escalationDelayInMinutes: 30,
                  targets: [{ type: 'schedule_reference', id: 'PSCHSEC' }],
                },
              ],
            },
          ],
        };
      },
    });
    const j = h;
    const { card } = await askNextWeek(j);
    expect(messageText(card)).toContain('*Payments secondary*');
    j.pd.failNext((r) => r.operationId === 'createScheduleOverride' && r.path.includes('PSCHSEC'), {
      status: 400,
    });
    await j.click(TIME_OFF_COVER_ACTION.approveCover, DANA, { message: card });
    const told = messageText(await j.dm(/covers only part/, DANA));
    expect(told).toContain('1 of 2 *still uncovered*');
    expect(told).toMatch(
      /:warning: \*Payments secondary\*, Mon 30 Nov 01:00 – Sat 5 Dec 2026 01:00 CET \(Europe\/Warsaw\): \*still uncovered\*: the incident service refused it/,
    );
    expect(told).toMatch(
      /:white_check_mark: \*Payments primary\*, Mon 30 Nov 01:00 – Sat 5 Dec 2026 01:00 CET \(Europe\/Warsaw\): covered by <@U0BEN>/,
    );
    expect(scheduleOverrides(j)).toHaveLength(1);
    expect(j.pd.state.schedules.get('PSCHSEC')?.overrides).toHaveLength(0);
  });

  it('cancelling covered leave removes the override in the incident service (issue 20) and tells #payments and Dana', async () => {
    h = await startJoinsHarness();
    const j = h;
    const { timeOffId, card } = await askNextWeek(j);
    await j.click(TIME_OFF_COVER_ACTION.approveCover, DANA, { message: card });
    await j.dm(/now covers/, DANA);
    const [override] = scheduleOverrides(j);
    await j.click(TIME_OFF_ACTION.cancel, ANA);
    await waitFor(
      async () => {
        await j.advanceTimers(30_000);
        return (await j.types(timeOffId)).includes('TimeOffCancelled') || undefined;
      },
      { what: 'the leave cancelled', timeoutMs: 30_000 },
    );
    const notice = await waitFor(
      () =>
        j.fake
          .messages(PAYMENTS_CHANNEL)
          .find((m) => /overrides in the incident service/.test(messageText(m))),
      { what: 'the notice in #payments' },
    );
    expect(messageText(notice)).toContain(`override \`${override?.id}\``);
    expect(messageText(notice)).toContain(
      '*Payments primary*: <@U0BEN>, Mon 30 Nov 00:00 – Sat 5 Dec 2026 00:00 UTC',
    );
    const dana = await j.dm(/is no longer needed: the requester cancelled the time off/, DANA);
    expect(messageText(dana)).toContain(`<#${PAYMENTS_CHANNEL}>`);
    // Issue 20: the override is removed in the incident service (it had not started: deleted).
    expect(messageText(notice)).toContain(`override \`${override?.id}\` removed`);
    await waitFor(
      () =>
        /No longer needed: Switchboard removes its overrides from the incident service/.test(
          latestCard(j, card.ts),
        ) || undefined,
      {
        what: 'the card saying the cover is withdrawn',
      },
    );
    expect(scheduleOverrides(j)).toHaveLength(0);
    expect(j.pd.requestsFor('deleteScheduleOverride')).toHaveLength(1);
  });

  it('leave cancelled in the HR web app withdraws the cover too: #payments is told', async () => {
    h = await startJoinsHarness();
    const j = h;
    const { timeOffId, card } = await askNextWeek(j);
    await j.click(TIME_OFF_COVER_ACTION.approveCover, DANA, { message: card });
    await j.dm(/now covers/, DANA);
    const [override] = scheduleOverrides(j);
    await waitFor(
      async () => {
        await j.advanceTimers(30_000);
        return (await j.types(timeOffId)).includes('TimeOffConfirmed') || undefined;
      },
      { what: 'the leave confirmed by HR', timeoutMs: 30_000 },
    );
    j.sim.webApp.cancel(Number(j.api.readModel.hrRequestIdOf(timeOffId)));
    const notice = await waitFor(
      async () => {
        await j.advanceTimers(30_000);
        return j.fake
          .messages(PAYMENTS_CHANNEL)
          .find((m) => /the time off was cancelled in HR/.test(messageText(m)));
      },
      { what: 'the notice in #payments', timeoutMs: 30_000 },
    );
    expect(messageText(notice)).toContain(`override \`${override?.id}\` removed`);
    expect(scheduleOverrides(j)).toHaveLength(0);
  });

  it('someone else picked in the users_select covers; a forged pick naming another request is refused', async () => {
    h = await startJoinsHarness();
    const j = h;
    const { timeOffId, card } = await askNextWeek(j);
    const pick = async (user: string, blockId: string, selected: string) => {
      const payload = blockActionPayload({
        action_id: TIME_OFF_COVER_ACTION.approveCoverUser,
        user_id: user,
        channel_id: card.channel,
        message_ts: card.ts,
        response_url: j.fake.responseUrl({ channel: card.channel, user }),
      });
      (payload.actions as Record<string, unknown>[])[0] = {
        type: 'users_select',
        action_id: TIME_OFF_COVER_ACTION.approveCoverUser,
        block_id: blockId,
        selected_user: selected,
        action_ts: '1.000001',
      };
      return postSigned(`${j.url}/slack/events`, interactionBody(payload), 'form', {
        timestamp: Math.floor(j.clock.now().getTime() / 1000),
      });
    };
    const other = '00000000-0000-4000-8000-000000000000';
    expect((await pick(DANA, `timeoff.cover:${other}`, CHEN)).status).toBe(200);
    expect((await pick(DANA, `timeoff.cover:${timeOffId}`, 'not-a-user')).status).toBe(200);
    await j.idle();
    expect(await j.types(timeOffId)).not.toContain('TimeOffApproved');
    // A pick on a block naming no request of ours: the decider refuses it; not a user: the edge does.
    await rejected(j, 'ApproveTimeOff', DANA, 'unknown_request');
    expect(await edgeRefusals(j, TIME_OFF_COVER_ACTION.approveCoverUser, DANA)).toEqual([
      'the cover pick is not a Slack user',
    ]);
    // Ana as her own cover: the decider refuses it, recorded.
    expect((await pick(DANA, `timeoff.cover:${timeOffId}`, ANA)).status).toBe(200);
    await rejected(j, 'ApproveTimeOff', DANA, 'self_cover');
    await j.idle();
    expect(await j.types(timeOffId)).not.toContain('TimeOffApproved');
    await pick(DANA, `timeoff.cover:${timeOffId}`, CHEN);
    await waitFor(() => scheduleOverrides(j).length === 1 || undefined, { what: "Chen's override" });
    expect(scheduleOverrides(j)[0]?.userId).toBe(PD_IDS.chen);
  });

  it('a ranked colleague who went on leave since the card was drawn is refused as cover, said and recorded', async () => {
    h = await startJoinsHarness();
    const j = h;
    const { timeOffId, card } = await askNextWeek(j);
    expect(messageText(card)).toContain('Approve and cover with Ben');
    const { from, to } = j.nextWeek();
    await j.approvedLeave(BEN, `holiday ${from} to ${to} Ski trip`);

    const clicked = await j.click(TIME_OFF_COVER_ACTION.approveCover, DANA, { message: card });
    expect(clicked.status).toBe(200);
    const said = await j.response(clicked.responseUrl, /Ben Okafor is away/);
    expect(said).toContain('pick someone else');
    // The decider refuses it (issue 21: the rule moved from the edge to the machine; enrich finds Ben away).
    expect(await rejected(j, 'ApproveTimeOff', DANA, 'cover_away')).toMatchObject({
      code: 'SB_ILLEGAL_STATE',
    });
    await j.idle();
    expect(await j.types(timeOffId)).not.toContain('TimeOffApproved');
    expect(scheduleOverrides(j)).toEqual([]);
  });

  it('incidents switched off: no conflicts section, and Approve still works', async () => {
    const t = await startTimeOffHarness();
    try {
      expect(t.sb.lifecycle('incidents')).toBeUndefined();
      await t.timeoff('holiday 2026-11-30 to 2026-12-04 Family', ANA);
      const card = await t.dm(/asks for/, DANA);
      await t.idle();
      expect(messageText(t.dms(DANA).find((m) => m.ts === card.ts) ?? card)).not.toMatch(/On-call|on call/);
      expect(JSON.stringify(card.blocks)).not.toContain(TIME_OFF_COVER_ACTION.approveCover);
      await t.click(TIME_OFF_ACTION.approve, DANA);
      await t.dm(/approved/i, ANA);
    } finally {
      await t.stop();
    }
  });
});

describe('half days are intervals in the requester’s zone (issue 19)', () => {
  /** The shifts the conflicts check recorded on Chen's request (he is in Asia/Singapore, UTC+8). */
  const conflictsOf = async (j: JoinsHarness, text: string) => {
    const before = new Set(await j.requestIds(CHEN));
    expect((await j.timeoff(text, CHEN)).status).toBe(200);
    const timeOffId = await waitFor(async () => (await j.requestIds(CHEN)).find((id) => !before.has(id)), {
      what: `Chen's request ${text}`,
    });
    const checked = await waitFor(
      async () =>
        (await j.sb.store.readStream(`timeoff-${timeOffId}`)).find(
          (e) => e.type === 'TimeOffConflictsChecked',
        ),
      { what: 'the conflicts checked', timeoutMs: 15_000 },
    );
    const shifts = (checked.data as { shifts: { scheduleId: string | null; start: string; end: string }[] })
      .shifts;
    const span = (s: { start: string; end: string }) => [
      new Date(s.start).toISOString(),
      new Date(s.end).toISOString(),
    ];
    return {
      timeOffId,
      payments: shifts.filter((s) => s.scheduleId === PAYMENTS_SCHEDULE).map(span),
      // The Platform policy names Chen directly: "always on call", clipped to the leave itself.
      direct: shifts.filter((s) => s.scheduleId === null).map(span),
    };
  };

  it('“Wed pm – Thu am” conflicts from Wed 12:00 to Thu 12:00 Singapore time, not two whole UTC days; Dana sees it in Warsaw time', async () => {
    h = await startJoinsHarness();
    const j = h;
    // Chen is Payments primary the week of Mon 7 Dec (00:00 UTC) to Mon 14 Dec 00:00 UTC.
    const wedThu = await conflictsOf(j, 'holiday 2026-12-09 pm to 2026-12-10 am');
    expect(wedThu.payments).toEqual([['2026-12-09T04:00:00.000Z', '2026-12-10T04:00:00.000Z']]);
    expect(wedThu.direct).toEqual([['2026-12-09T04:00:00.000Z', '2026-12-10T04:00:00.000Z']]);
    const card = await waitFor(
      () =>
        j
          .dms(DANA)
          .map(messageText)
          .find((t) => /On-call conflicts/.test(t) && !/Checking/.test(t)),
      { what: "Dana's card with its on-call conflicts", timeoutMs: 15_000 },
    );
    expect(card).toContain(
      '*Payments primary* (Payments, level 1): Wed 9 Dec 05:00 – Thu 10 Dec 2026 05:00 CET',
    );
  });

  it('a morning off conflicts with the shift ending that morning in his zone; the afternoon of that day does not', async () => {
    h = await startJoinsHarness();
    const j = h;
    // Mon 14 Dec in Singapore: Chen's week ends at 08:00 there (00:00 UTC).
    const morning = await conflictsOf(j, 'holiday 2026-12-14 am');
    expect(morning.payments).toEqual([['2026-12-13T16:00:00.000Z', '2026-12-14T00:00:00.000Z']]);
    expect(morning.direct).toEqual([['2026-12-13T16:00:00.000Z', '2026-12-14T04:00:00.000Z']]);
    const afternoon = await conflictsOf(j, 'holiday 2026-12-14 pm');
    expect(afternoon.payments).toEqual([]);
    expect(afternoon.direct).toEqual([['2026-12-14T04:00:00.000Z', '2026-12-14T16:00:00.000Z']]);
  });
});

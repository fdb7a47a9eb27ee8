import { afterEach, describe, expect, it } from 'vitest';
import { COVER_ASK_STREAM_PREFIX } from '../../machines/timeOff/coverAsk.ts';
import type { FakeMessage } from '../../sandbox/simulators/slack/fakeSlack.ts';
import { TIME_OFF_ACTION } from '../../src/timeOff/blocks/timeOffIds.ts';
import { COVER_ASK_ACTION } from '../../src/timeOff/coverAskIds.ts';
import { TIME_OFF_COVER_ACTION } from '../../src/timeOff/coverIds.ts';
import { slackDriver } from '../support/slackHarness.ts';
import { waitFor } from '../support/waitFor.ts';
import {
  ANA,
  BEN,
  CHEN,
  DANA,
  FRANK,
  HOUR,
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
 * Issue 20 items 1 (the ask) and 2 end to end on the three simulators and one manual clock: Ana,
 * on call next week on Payments primary, asks for those days off.
 *
 * - "Approve and ask for cover": Ben and Chen (the ranked colleagues) are asked by DM; the first to
 *   accept gets the one override; the others' DMs update in place; a "can't" updates that DM; if
 *   nobody accepts before the shift is near, Dana and #payments are told (a durable timer that
 *   survives a restart).
 * - Plain Approve over the uncovered shift asks first (a confirm naming it), then the hole is posted
 *   in #payments with Cover… for anyone: first click wins, the post says who covers, a second is
 *   refused naming the first.
 */
let h: JoinsHarness | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
});

/**
 * The joins world with Frank, not Chen, first on the Platform policy: Chen is then free next week,
 * so Ben and Chen are both ranked to cover Ana (Chen is otherwise always on call on Platform).
 */
const seed = (weekStart: Date) => {
  const s = joinsSeed(weekStart);
  return {
    ...s,
    escalationPolicies: s.escalationPolicies.map((p) =>
      p.id === PLATFORM_POLICY
        ? {
            ...p,
            rules: p.rules.map((r, i) =>
              i === 0 ? { ...r, targets: [{ type: 'user_reference' as const, id: PD_IDS.frank }] } : r,
            ),
          }
        : p,
    ),
  };
};
const start = () => startJoinsHarness({ seed });

const overrides = (j: JoinsHarness) => j.pd.state.schedules.get(PAYMENTS_SCHEDULE)?.overrides ?? [];

/** Ana asks for next week off; Dana's card once its on-call section is drawn with its candidates. */
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
        .find((m) => /Approve and ask for cover/.test(JSON.stringify(m.blocks ?? []))),
    { what: "Dana's card with Approve and ask for cover", timeoutMs: 15_000 },
  );
  return { timeOffId, card };
};

const buttonOf = (m: FakeMessage, actionId: string) =>
  (m.blocks as { elements?: { action_id?: string; confirm?: unknown; value?: string }[] }[])
    .flatMap((b) => b.elements ?? [])
    .find((e) => e.action_id === actionId);

type Stored = Readonly<{ type: string; data: Record<string, unknown> }>;
const inbox = async (j: JoinsHarness): Promise<Stored[]> =>
  (await j.sb.store.readStream('inbox-slack')).map((e) => ({
    type: e.type,
    data: e.data as Record<string, unknown>,
  }));
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

const askDm = (j: JoinsHarness, user: string) =>
  waitFor(() => j.dms(user).find((m) => /Can you cover/.test(messageText(m))), {
    what: `the cover ask in ${user}'s DMs`,
    timeoutMs: 15_000,
  });

const askStreams = async (j: JoinsHarness) =>
  (await j.sb.store.listStreams({ prefix: COVER_ASK_STREAM_PREFIX, limit: 100 })).map((s) => s.streamId);

describe('cover that asks (issue 20)', () => {
  it('Approve and ask for cover: Ben and Chen asked by DM; both accept at once; one override; the other refused naming the first; the DMs update', async () => {
    h = await start();
    const j = h;
    const { timeOffId, card } = await askNextWeek(j);
    await j.click(TIME_OFF_COVER_ACTION.approveAsk, DANA, { message: card });
    await waitFor(async () => (await j.types(timeOffId)).includes('TimeOffApproved') || undefined, {
      what: 'approved',
    });
    const benDm = await askDm(j, BEN);
    const chenDm = await askDm(j, CHEN);
    // Ben's DM in his zone (Europe/London: GMT in winter), naming the shift and who asks.
    expect(messageText(benDm), messageText(benDm)).toMatch(
      /Payments primary\*? \(Payments, level 1\), Mon 30 Nov 00:00/,
    );
    expect(messageText(benDm)).toContain('on leave');
    expect(j.dms(ANA).some((m) => /Can you cover/.test(messageText(m)))).toBe(false);
    expect(j.dms(FRANK).some((m) => /Can you cover/.test(messageText(m)))).toBe(false);
    expect(
      j.fake.messages(PAYMENTS_CHANNEL).some((m) => /Uncovered on-call shift/.test(messageText(m))),
    ).toBe(false);

    // Both accept at once.
    const [ben, chen] = await Promise.all([
      j.click(COVER_ASK_ACTION.accept, BEN, { message: benDm }),
      j.click(COVER_ASK_ACTION.accept, CHEN, { message: chenDm }),
    ]);
    expect([ben.status, chen.status]).toEqual([200, 200]);
    await j.idle();
    const [taken] = (await Promise.all((await askStreams(j)).map((s) => j.stream(s))))
      .flat()
      .filter((e) => e.type === 'CoverAskTaken');
    if (!taken) throw new Error('no CoverAskTaken');
    const winner = (taken.data as { cover: { slackUserId: string } }).cover.slackUserId;
    const loser = winner === BEN ? CHEN : BEN;
    const winnerName = winner === BEN ? 'Ben Okafor' : 'Chen Wei';
    await waitFor(() => overrides(j).length === 1 || undefined, { what: 'the override', timeoutMs: 15_000 });
    await j.idle();
    expect(overrides(j).map((o) => o.userId)).toEqual([winner === BEN ? PD_IDS.ben : PD_IDS.chen]);
    await rejected(j, 'AcceptCoverAsk', loser, 'already_taken');
    await j.response((loser === BEN ? ben : chen).responseUrl, new RegExp(`${winnerName} already covers`));

    // The DMs, in place: the winner covers it; the other sees who took it, no buttons left.
    const latest = (user: string, ts: string) => j.dms(user).find((m) => m.ts === ts);
    const winnerDm = latest(winner, (winner === BEN ? benDm : chenDm).ts);
    const loserDm = latest(loser, (loser === BEN ? benDm : chenDm).ts);
    expect(messageText(winnerDm as FakeMessage)).toContain('You cover it');
    expect(messageText(loserDm as FakeMessage)).toContain(`<@${winner}> took it`);
    expect(buttonOf(loserDm as FakeMessage, COVER_ASK_ACTION.accept)).toBeUndefined();
  });

  it('a colleague says can’t: their DM says so, the other still takes it', async () => {
    h = await start();
    const j = h;
    const { card } = await askNextWeek(j);
    await j.click(TIME_OFF_COVER_ACTION.approveAsk, DANA, { message: card });
    const chenDm = await askDm(j, CHEN);
    await j.click(COVER_ASK_ACTION.decline, CHEN, { message: chenDm });
    await waitFor(
      () =>
        /You said you can’t/.test(messageText(j.dms(CHEN).find((m) => m.ts === chenDm.ts) as FakeMessage)) ||
        undefined,
      { what: "Chen's DM saying he can't" },
    );
    expect(overrides(j)).toEqual([]);
    await j.click(COVER_ASK_ACTION.accept, BEN, { message: await askDm(j, BEN) });
    await waitFor(() => overrides(j).length === 1 || undefined, { what: 'the override', timeoutMs: 15_000 });
    expect(overrides(j)[0]?.userId).toBe(PD_IDS.ben);
  });

  it('a restart between the ask and the accept: the accept still makes the one override', async () => {
    h = await start();
    const j = h;
    const { card } = await askNextWeek(j);
    await j.click(TIME_OFF_COVER_ACTION.approveAsk, DANA, { message: card });
    const benDm = await askDm(j, BEN);
    await j.restart();
    await j.click(COVER_ASK_ACTION.accept, BEN, { message: benDm });
    await waitFor(() => overrides(j).length === 1 || undefined, { what: 'the override', timeoutMs: 15_000 });
    expect(overrides(j)[0]?.userId).toBe(PD_IDS.ben);
  });

  it('nobody accepts before the shift is near (a timer that survives a restart): Dana and #payments are told, a late accept is refused', async () => {
    h = await start();
    const j = h;
    const { card } = await askNextWeek(j);
    await j.click(TIME_OFF_COVER_ACTION.approveAsk, DANA, { message: card });
    const benDm = await askDm(j, BEN);
    await j.restart();
    // Monday 23 Nov 09:00 → Sunday 29 Nov 23:00 UTC (an hour before the shift): due.
    const { monday } = j.nextWeek();
    await j.advanceTimers(monday.getTime() - HOUR - j.clock.now().getTime());
    await j.idle();
    const told = await j.dm(/Nobody covers/, DANA);
    expect(messageText(told)).toContain('Payments primary');
    expect(messageText(told)).toContain('2 colleagues were asked');
    await waitFor(
      () => j.fake.messages(PAYMENTS_CHANNEL).find((m) => /Uncovered on-call shift/.test(messageText(m))),
      { what: 'the hole told in #payments' },
    );
    expect(messageText(j.dms(BEN).find((m) => m.ts === benDm.ts) as FakeMessage)).toContain('Nobody took it');
    const [askStream] = await askStreams(j);
    await j.click(COVER_ASK_ACTION.accept, BEN, {
      message: benDm,
      value: String(askStream?.slice(COVER_ASK_STREAM_PREFIX.length)),
    });
    await rejected(j, 'AcceptCoverAsk', BEN, 'expired');
    expect(overrides(j)).toEqual([]);
  });
});

describe('/oncall cover (issue 20)', () => {
  it('the on-call person asks for cover of their own shifts without taking time off; the first to accept gets the override', async () => {
    h = await start();
    const j = h;
    const { from, to } = j.nextWeek();
    const help = await j.oncall('help', ANA);
    expect(help).toContain('/oncall cover');
    expect(await j.oncall('cover 2026-13-01', ANA)).toContain('is not a day');
    // The answer may come through the response_url (the lookups can take longer than Slack's 3 s).
    const typed = await slackDriver(j.fake, { url: () => j.url, clock: j.clock }).slash(
      '/oncall',
      `cover ${from} to ${to}`,
      { user: ANA, channel: PAYMENTS_CHANNEL },
    );
    const said = /Asked for cover/.test(typed.raw)
      ? typed.raw
      : await j.response(typed.responseUrl, /Asked for cover/);
    expect(said).toContain('Asked for cover');
    expect(said).toContain('Payments primary');
    expect(said).toMatch(/asked (Ben Okafor, Chen Wei|Chen Wei, Ben Okafor)/);
    const benDm = await askDm(j, BEN);
    expect(messageText(benDm)).toContain(`<@${ANA}> asks for cover`);
    // One DM to each colleague asked.
    await j.idle();
    expect(j.dms(BEN).filter((m) => /Can you cover/.test(messageText(m)))).toHaveLength(1);
    await j.click(COVER_ASK_ACTION.accept, BEN, { message: benDm });
    await waitFor(() => overrides(j).length === 1 || undefined, { what: 'the override', timeoutMs: 15_000 });
    expect(overrides(j)[0]?.userId).toBe(PD_IDS.ben);
    // No time off was asked for.
    expect(await j.requestIds(ANA)).toEqual([]);
    // Ana is told it is covered (the cover's outcome DM).
    await j.dm(/now covers/, ANA);
  });
});

describe('holes are told (issue 20)', () => {
  it('plain Approve confirms naming the shift; the hole is posted in #payments; two Cover… clicks make one override; the post says who covers', async () => {
    h = await start();
    const j = h;
    const { timeOffId, card } = await askNextWeek(j);
    const approve = buttonOf(card, TIME_OFF_ACTION.approve) as { confirm?: { text?: { text?: string } } };
    expect(approve.confirm?.text?.text).toContain('Payments primary, Mon 30 Nov 01:00');
    await j.click(TIME_OFF_ACTION.approve, DANA, { message: card });
    await waitFor(async () => (await j.types(timeOffId)).includes('TimeOffApproved') || undefined, {
      what: 'approved',
    });
    const post = await waitFor(
      () => j.fake.messages(PAYMENTS_CHANNEL).find((m) => /Uncovered on-call shift/.test(messageText(m))),
      { what: 'the hole in #payments', timeoutMs: 15_000 },
    );
    expect(messageText(post)).toContain('Payments primary');
    expect(messageText(post)).toContain(`<@${ANA}> is on leave then`);
    // Nobody is DMed for a hole.
    expect(j.dms(BEN).some((m) => /Can you cover/.test(messageText(m)))).toBe(false);

    // Ana herself cannot take it; then Chen and Ben click at once.
    const ana = await j.click(COVER_ASK_ACTION.take, ANA, { message: post });
    await rejected(j, 'AcceptCoverAsk', ANA, 'self_cover');
    await j.response(ana.responseUrl, /can't cover their own shift/);
    const [chen, ben] = await Promise.all([
      j.click(COVER_ASK_ACTION.take, CHEN, { message: post }),
      j.click(COVER_ASK_ACTION.take, BEN, { message: post }),
    ]);
    await waitFor(() => overrides(j).length === 1 || undefined, { what: 'the override', timeoutMs: 15_000 });
    await j.idle();
    expect(overrides(j)).toHaveLength(1);
    const winner = overrides(j)[0]?.userId === PD_IDS.ben ? BEN : CHEN;
    const loser = winner === BEN ? CHEN : BEN;
    await rejected(j, 'AcceptCoverAsk', loser, 'already_taken');
    await j.response((loser === BEN ? ben : chen).responseUrl, /already covers this shift/);
    const now = j.fake.messages(PAYMENTS_CHANNEL).find((m) => m.ts === post.ts) as FakeMessage;
    expect(messageText(now)).toContain(`<@${winner}> took it`);
    expect(buttonOf(now, COVER_ASK_ACTION.take)).toBeUndefined();
  });

  it('the leave cancelled before anyone covers it: the hole post says it is no longer needed', async () => {
    h = await start();
    const j = h;
    const { timeOffId, card } = await askNextWeek(j);
    await j.click(TIME_OFF_ACTION.approve, DANA, { message: card });
    const post = await waitFor(
      () => j.fake.messages(PAYMENTS_CHANNEL).find((m) => /Uncovered on-call shift/.test(messageText(m))),
      { what: 'the hole in #payments', timeoutMs: 15_000 },
    );
    await waitFor(
      async () => {
        await j.advanceTimers(30_000);
        return (await j.types(timeOffId)).includes('TimeOffConfirmed') || undefined;
      },
      { what: 'HR confirms', timeoutMs: 30_000 },
    );
    await j.click(TIME_OFF_ACTION.cancel, ANA);
    await waitFor(
      async () => {
        await j.advanceTimers(30_000);
        return (await j.types(timeOffId)).includes('TimeOffCancelled') || undefined;
      },
      { what: 'the leave cancelled', timeoutMs: 30_000 },
    );
    await waitFor(
      () =>
        /No longer needed \(the time off was cancelled\)/.test(
          messageText(j.fake.messages(PAYMENTS_CHANNEL).find((m) => m.ts === post.ts) as FakeMessage),
        ) || undefined,
      { what: 'the hole post updated' },
    );
    const taken = await j.click(COVER_ASK_ACTION.take, BEN, {
      message: post,
      value: String((await askStreams(j))[0]?.slice(COVER_ASK_STREAM_PREFIX.length)),
    });
    await j.response(taken.responseUrl, /no longer needs cover/);
    expect(overrides(j)).toEqual([]);
  });
});

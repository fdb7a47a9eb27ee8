import { afterEach, describe, expect, it } from 'vitest';
import { COVER_STREAM_PREFIX } from '../../machines/timeOff/cover.ts';
import { COVER_ASK_STREAM_PREFIX } from '../../machines/timeOff/coverAsk.ts';
import type { FakeMessage } from '../../sandbox/simulators/slack/fakeSlack.ts';
import { eventCallbackBody } from '../../sandbox/simulators/slack/signing.ts';
import { TIME_OFF_ACTION } from '../../src/timeOff/blocks/timeOffIds.ts';
import { COVER_ASK_ACTION } from '../../src/timeOff/coverAskIds.ts';
import { TIME_OFF_COVER_ACTION } from '../../src/timeOff/coverIds.ts';
import { postSigned } from '../support/startApp.ts';
import { waitFor } from '../support/waitFor.ts';
import {
  ANA,
  BEN,
  CHEN,
  DANA,
  type JoinsHarness,
  messageText,
  PAYMENTS_CHANNEL,
  PAYMENTS_SCHEDULE,
  PD_IDS,
  startJoinsHarness,
} from './harness.ts';

/**
 * Issue 20, item 1 (the cover is told): after "Approve and cover with Ben", Ben is told at once by
 * DM with the shift in his zone (Europe/London) and a Can't cover button; only he may press it;
 * pressed, the cover is withdrawn, Dana (the approver) is told by DM and on her card, and the hole
 * is re-opened in #payments with a Cover… button (never for Ben nor Ana): Chen's click covers it.
 */
let h: JoinsHarness | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
});

const overrides = (j: JoinsHarness) => j.pd.state.schedules.get(PAYMENTS_SCHEDULE)?.overrides ?? [];
const coverStreams = async (j: JoinsHarness) =>
  (await j.sb.store.listStreams({ prefix: COVER_STREAM_PREFIX, limit: 100 })).map((s) => s.streamId);
const inbox = async (j: JoinsHarness) =>
  (await j.sb.store.readStream('inbox-slack')).map((e) => ({
    type: e.type,
    data: e.data as Record<string, unknown>,
  }));
const current = (j: JoinsHarness, user: string, m: FakeMessage): FakeMessage =>
  j.dms(user).find((x) => x.ts === m.ts) ?? m;
const hasButton = (m: FakeMessage, actionId: string) =>
  JSON.stringify(m.blocks ?? []).includes(`"action_id":"${actionId}"`);

/** Ana asks for next week (her Payments primary week); Dana approves with Ben as cover. */
const approveWithBen = async (j: JoinsHarness) => {
  const { from, to } = j.nextWeek();
  expect((await j.timeoff(`holiday ${from} to ${to} Family`, ANA)).status).toBe(200);
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
  await j.click(TIME_OFF_COVER_ACTION.approveCover, DANA, { message: card });
  return { timeOffId, card };
};

describe('the cover is told, and may say they can’t (issue 20)', () => {
  it('Ben is DMed the shift in his zone; a forged Can’t is refused; his Can’t withdraws the cover, tells Dana, re-opens the hole in #payments; Chen covers it', async () => {
    h = await startJoinsHarness();
    const j = h;
    const { card } = await approveWithBen(j);

    // Told at once: whose leave, who asked, the shift in Ben's zone (Europe/London: GMT, UTC+0).
    const told = await j.dm(/You now cover/, BEN);
    const text = messageText(told);
    expect(text).toContain(
      `You now cover <@${ANA}>’s on-call shifts during their leave (asked by <@${DANA}>)`,
    );
    expect(text).toContain('Times in Europe/London');
    expect(text).toContain(
      '*Payments primary* (Payments, level 1), Mon 30 Nov 00:00 – Sat 5 Dec 2026 00:00 GMT (Europe/London)',
    );
    expect(hasButton(told, TIME_OFF_COVER_ACTION.cant)).toBe(true);
    // The same message, updated in place once the override lands.
    await waitFor(() => /you are on call/.test(messageText(current(j, BEN, told))) || undefined, {
      what: "Ben's DM updated with the override",
    });
    expect(j.dms(BEN).filter((m) => /You now cover/.test(messageText(m)))).toHaveLength(1);
    expect(overrides(j)).toHaveLength(1);
    const [override] = overrides(j);
    // Ben's App Home lists the shift he covers under My shifts (the incident service's final rota).
    await postSigned(
      `${j.url}/slack/events`,
      eventCallbackBody({ type: 'app_home_opened', user: BEN, tab: 'home' }),
      'json',
      { timestamp: Math.floor(j.clock.now().getTime() / 1000) },
    );
    const home = await waitFor(() => j.fake.homes.get(BEN), { what: "Ben's Home tab" });
    const homeText = JSON.stringify(home.view);
    expect(homeText).toContain('*My shifts* (next 14 days, covers included)');
    // (His own week runs into the cover: one row, ending when the cover ends.)
    expect(homeText).toContain(`to <!date^${Date.parse(override?.end ?? '') / 1000}^`);
    expect(homeText).toContain('Payments primary');
    expect(homeText).not.toContain('Shifts you cover');
    const [coverStream] = await coverStreams(j);

    // Chen presses Ben's button (a forged click): refused by the decider, said to Chen, recorded.
    const forged = await j.click(TIME_OFF_COVER_ACTION.cant, CHEN, { message: told });
    expect(forged.status).toBe(200);
    await j.response(forged.responseUrl, /Only Ben Okafor can say they can’t cover/);
    await waitFor(
      async () =>
        (await inbox(j)).find(
          (e) =>
            e.type === 'CommandRejected' &&
            e.data['commandType'] === 'DeclineCover' &&
            e.data['actor'] === CHEN &&
            (e.data['details'] as { reason?: unknown }).reason === 'not_cover',
        ),
      { what: "Chen's Can't refused" },
    );
    // A value that names no cover: refused at the edge, said, recorded.
    const hostile = await j.click(TIME_OFF_COVER_ACTION.cant, BEN, { message: told, value: '../timeoff-x' });
    await j.response(hostile.responseUrl, /doesn't name a cover/);
    await j.idle();
    expect((await j.stream(coverStream ?? '')).map((e) => e.type)).not.toContain('CoverWithdrawn');

    // Ben can't: the cover is withdrawn by him.
    await j.click(TIME_OFF_COVER_ACTION.cant, BEN, { message: told });
    await waitFor(
      async () => (await j.stream(coverStream ?? '')).find((e) => e.type === 'CoverWithdrawn') || undefined,
      { what: 'the cover withdrawn' },
    );
    const withdrawn = (await j.stream(coverStream ?? '')).filter((e) => e.type === 'CoverWithdrawn');
    expect(withdrawn.map((e) => e.data)).toEqual([expect.objectContaining({ declinedBy: BEN })]);

    // Dana is told by DM, in her zone (Europe/Warsaw), with what to remove.
    const dana = messageText(await j.dm(/can’t cover .* after all/, DANA));
    expect(dana).toContain(`<@${BEN}> can’t cover <@${ANA}>’s on-call shifts during their leave after all`);
    expect(dana).toContain('*uncovered again*');
    expect(dana).toContain('*Payments primary*, Mon 30 Nov 01:00 – Sat 5 Dec 2026 01:00 CET (Europe/Warsaw)');
    expect(dana).toContain(`<#${PAYMENTS_CHANNEL}>`);
    // Ben's override is removed in the incident service (a durable call): he is not paged for it.
    expect(dana).toContain(`<@${BEN}>’s override \`${override?.id}\` removed`);
    expect(overrides(j)).toEqual([]);
    expect(j.pd.requestsFor('deleteScheduleOverride')).toHaveLength(1);
    // Her card, in place: the cover fell through.
    await waitFor(() => /The cover fell through/.test(messageText(current(j, DANA, card))) || undefined, {
      what: "Dana's card saying the cover fell through",
    });
    // The hole is re-opened in #payments: a post with a Cover… button anyone (but Ben and Ana) may take.
    const hole = await waitFor(
      () => j.fake.messages(PAYMENTS_CHANNEL).find((m) => /Uncovered on-call shift/.test(messageText(m))),
      { what: 'the hole re-opened in #payments', timeoutMs: 15_000 },
    );
    expect(messageText(hole)).toContain('Payments primary');
    expect(hasButton(hole, COVER_ASK_ACTION.take)).toBe(true);
    expect(dana).toContain('*Cover…* button');
    // Ben's DM, in place: no button any more.
    await waitFor(() => /You said you can’t cover/.test(messageText(current(j, BEN, told))) || undefined, {
      what: "Ben's DM updated",
    });
    expect(hasButton(current(j, BEN, told), TIME_OFF_COVER_ACTION.cant)).toBe(false);

    // Pressed again (a double click): nothing new; the hole is posted once.
    await j.click(TIME_OFF_COVER_ACTION.cant, BEN, { message: told });
    await j.idle();
    expect((await j.stream(coverStream ?? '')).filter((e) => e.type === 'CoverWithdrawn')).toHaveLength(1);
    expect(await coverStreams(j)).toHaveLength(1);
    expect(
      j.fake.messages(PAYMENTS_CHANNEL).filter((m) => /Uncovered on-call shift/.test(messageText(m))),
    ).toHaveLength(1);
    expect(
      j.dms(DANA).filter((m) => /can’t cover/.test(messageText(m)) && !/On-call/.test(messageText(m))),
    ).toHaveLength(1);
    expect(overrides(j)).toEqual([]);

    // Ben, who said he can't, is refused on the hole; Ana too (her own shift).
    const benTakes = await j.click(COVER_ASK_ACTION.take, BEN, { message: hole });
    await j.response(benTakes.responseUrl, /You said you can’t cover this shift/);
    const anaTakes = await j.click(COVER_ASK_ACTION.take, ANA, { message: hole });
    await j.response(anaTakes.responseUrl, /can't cover their own shift/);
    // Chen takes it: one override, his.
    await j.click(COVER_ASK_ACTION.take, CHEN, { message: hole });
    await waitFor(() => overrides(j).length === 1 || undefined, {
      what: 'Chen’s override',
      timeoutMs: 15_000,
    });
    await j.idle();
    expect(overrides(j)).toHaveLength(1);
    expect(overrides(j)[0]?.userId).toBe(PD_IDS.chen);
    await waitFor(
      () =>
        /took it/.test(
          messageText(j.fake.messages(PAYMENTS_CHANNEL).find((m) => m.ts === hole.ts) as FakeMessage),
        ) || undefined,
      { what: 'the hole post saying Chen took it' },
    );
    j.pd.assertNoViolations();
  });

  it('the leave cancelled after Ben can’t: the re-opened hole is no longer needed, and nobody can take it', async () => {
    h = await startJoinsHarness();
    const j = h;
    const { timeOffId } = await approveWithBen(j);
    const told = await j.dm(/You now cover/, BEN);
    await waitFor(() => overrides(j).length === 1 || undefined, { what: "Ben's override" });
    await j.click(TIME_OFF_COVER_ACTION.cant, BEN, { message: told });
    const hole = await waitFor(
      () => j.fake.messages(PAYMENTS_CHANNEL).find((m) => /Uncovered on-call shift/.test(messageText(m))),
      { what: 'the hole re-opened in #payments', timeoutMs: 15_000 },
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
        /No longer needed/.test(
          messageText(j.fake.messages(PAYMENTS_CHANNEL).find((m) => m.ts === hole.ts) as FakeMessage),
        ) || undefined,
      { what: 'the re-opened hole post updated', timeoutMs: 15_000 },
    );
    // A click on the button as it was (a stale copy of the post): refused in words.
    const asks = await j.sb.store.listStreams({ prefix: COVER_ASK_STREAM_PREFIX, limit: 10 });
    expect(asks).toHaveLength(1);
    const value = asks[0]?.streamId.slice(COVER_ASK_STREAM_PREFIX.length);
    const taken = await j.click(COVER_ASK_ACTION.take, CHEN, { message: hole, value: String(value) });
    await j.response(taken.responseUrl, /no longer needs cover/);
    await j.idle();
    expect(overrides(j)).toEqual([]);
  });
});

import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import type { SimulatorSeed } from '../../sandbox/simulators/pagerduty/model.ts';
import type { FakeMessage } from '../../sandbox/simulators/slack/fakeSlack.ts';
import { LEAVER_ACTION, LEAVER_FIELD } from '../../src/timeOff/blocks/leaverReport.ts';
import { waitFor } from '../support/waitFor.ts';
import {
  ANA,
  BEN,
  CHEN,
  DANA,
  FRANK,
  HR_IDS,
  type JoinsHarness,
  joinsSeed,
  MINUTE,
  messageText,
  PAYMENTS_CHANNEL,
  PAYMENTS_SCHEDULE,
  PD_IDS,
  PHONES,
  PLATFORM,
  PLATFORM_CHANNEL,
  startJoinsHarness,
} from './harness.ts';

/**
 * Issue 12, capability 3 (the leaver guard), end to end across the three simulators: HR terminates
 * Ana in its web app → her phone is forgotten (unreadable in the store's bytes), her pages stop, and
 * each affected service's channel gets her upcoming shifts (with Cover…) and the policies naming her.
 */
let h: JoinsHarness | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
});

const storeBytes = (dbPath: string): string =>
  [dbPath, `${dbPath}-wal`]
    .filter((p) => existsSync(p))
    .map((p) => readFileSync(p).toString('latin1'))
    .join('\n');

/** HR shows the termination after its lag: move the clock (the re-read's retries) until the report is in. */
const reportIn = async (j: JoinsHarness, channel: string): Promise<FakeMessage> => {
  const find = () => j.fake.messages(channel).find((m) => messageText(m).includes('has left'));
  for (let i = 0; i < 12 && !find(); i++) await j.advanceTimers(10_000);
  return waitFor(find, { what: `the leaver report in ${channel}` });
};

const coverButton = (m: FakeMessage): string | undefined => {
  for (const b of (m.blocks ?? []) as { accessory?: { action_id?: string; value?: string } }[]) {
    if (b.accessory?.action_id === LEAVER_ACTION.cover) return b.accessory.value;
  }
  return undefined;
};

describe('a leaver (HR terminates Ana)', () => {
  it('forgets her phone, stops her pages, reports her shift and the policy naming her; Cover… asks for the override; a redelivery posts nothing twice', async () => {
    h = await startJoinsHarness();
    const j = h;
    await j.verifyPhone(ANA);
    const pager = j.sb.ports.require('pager', 'the test');
    // A page to her in flight (its call due later) when HR says she left.
    expect(
      await pager.page({
        person: { slackUserId: ANA },
        text: '#1 Checkout 5xx',
        pageId: 'leaver-test-1',
        reportTo: 'incident-PTEST01',
        number: 1,
        label: '#1 Checkout 5xx',
        callAfterMs: 5 * 60_000,
        maxPerHour: 10,
      }),
    ).toBe('paged');
    await waitFor(() => j.smsTo(PHONES[ANA]).length > 0 || undefined, { what: 'the SMS page to Ana' });

    j.sim.webApp.terminate(HR_IDS.ana);
    const payments = await reportIn(j, PAYMENTS_CHANNEL);
    const platform = await reportIn(j, PLATFORM_CHANNEL);

    // #payments: her turn on Payments primary next week, with a Cover… button.
    const { monday, nextMonday } = j.nextWeek();
    const paymentsText = messageText(payments);
    expect(paymentsText).toContain('Ana Silva');
    expect(paymentsText).toContain('Payments primary');
    expect(paymentsText).toContain(`Mon 30 Nov 00:00 UTC → Mon 7 Dec 00:00 UTC`);
    expect(paymentsText).toContain('forgot their phone');
    expect(monday.toISOString()).toBe('2026-11-30T00:00:00.000Z');
    expect(nextMonday.toISOString()).toBe('2026-12-07T00:00:00.000Z');
    expect(coverButton(payments)).toBeDefined();
    // #platform: the escalation policy naming her directly, to edit in the incident service.
    const platformText = messageText(platform);
    expect(platformText).toContain('Escalation policies still naming them');
    expect(platformText).toMatch(/Platform\*?, level 2/);

    // Her phone: unlinked (left), her key deleted, the digits nowhere in the store files.
    await j.idle();
    expect(await j.sb.people.linkOf(ANA, 'phone')).toBeUndefined();
    expect(await j.sb.store.readStream(`personkey-${ANA}`)).toEqual([]);
    const identity = await j.sb.store.readStream(`identity-${ANA}`);
    expect(identity.filter((e) => e.type === 'PersonUnlinked').map((e) => e.data.reason)).toEqual(['left']);
    expect(storeBytes(j.dbPath).includes(PHONES[ANA]), 'her digits in the store files').toBe(false);
    // A page for her now is not sent; the one in flight places no call.
    expect(
      await pager.page({
        person: { slackUserId: ANA },
        text: '#2 Checkout 5xx',
        pageId: 'leaver-test-2',
        reportTo: 'incident-PTEST02',
        number: 2,
        label: '#2 Checkout 5xx',
        callAfterMs: null,
        maxPerHour: 10,
      }),
    ).toBe('no_verified_phone');
    await j.advanceTimers(10 * 60_000);
    expect(j.vonage.phones.calls(PHONES[ANA])).toEqual([]);
    expect(j.smsTo(PHONES[ANA]).filter((m) => m.text.includes('#2'))).toEqual([]);

    // Dana clicks Cover… and picks Ben: the cover is asked for, from the recorded shift.
    const clicked = await j.click(LEAVER_ACTION.cover, DANA, {
      message: payments,
      value: String(coverButton(payments)),
    });
    expect(clicked.status).toBe(200);
    const form = await waitFor(() => j.lastView(DANA), { what: 'the cover form' });
    expect(JSON.stringify(form)).toContain('Payments primary');
    const submitted = await j.submitView(DANA, {
      [LEAVER_FIELD.block]: { [LEAVER_FIELD.action]: { type: 'users_select', selected_user: BEN } },
    });
    expect(submitted.status).toBe(200);
    const requested = await waitFor(
      async () =>
        (await j.sb.store.readAll({ maxCount: 100_000 })).find((e) => e.type === 'CoverRequested') ??
        undefined,
      { what: 'the cover asked for' },
    );
    expect(requested.data).toMatchObject({
      absent: { slackUserId: ANA },
      cover: { slackUserId: BEN },
      requestedBy: DANA,
      reason: { kind: 'leaver', hrId: HR_IDS.ana },
      slots: [
        { scheduleId: PAYMENTS_SCHEDULE, start: '2026-11-30T00:00:00.000Z', end: '2026-12-07T00:00:00.000Z' },
      ],
    });

    // The cover slice makes the override in the incident service (checked first: once).
    const override = await waitFor(
      () => j.pd.state.schedules.get(PAYMENTS_SCHEDULE)?.overrides.find((o) => o.userId === PD_IDS.ben),
      { what: 'the override for Ben in the incident service', timeoutMs: 15_000 },
    );
    expect([override.start, override.end].map((t) => Date.parse(t))).toEqual([
      Date.parse('2026-11-30T00:00:00.000Z'),
      Date.parse('2026-12-07T00:00:00.000Z'),
    ]);

    // HR says it again (a second employee.left): nothing is posted twice.
    const before = [j.fake.messages(PAYMENTS_CHANNEL).length, j.fake.messages(PLATFORM_CHANNEL).length];
    j.sim.webApp.terminate(HR_IDS.ana);
    await j.sim.webhooks.idle();
    await j.advance(60_000);
    await j.idle();
    const posted = () => [j.fake.messages(PAYMENTS_CHANNEL).length, j.fake.messages(PLATFORM_CHANNEL).length];
    expect(posted()).toEqual(before);
    // The fact itself delivered to the reactor again (as after a crash before its checkpoint).
    const left = (await j.sb.store.readStream('timeoff-directory')).find(
      (e) => e.type === 'DirectoryEmployeeLeft',
    );
    if (!left) throw new Error('no DirectoryEmployeeLeft');
    await j.sb.store.appendToStream('timeoff-directory', [
      { id: randomUUID(), type: left.type, data: left.data },
    ]);
    await j.idle();
    expect(posted()).toEqual(before);
    const leaver = await j.sb.store.readStream(`timeoffleaver-${HR_IDS.ana}`);
    expect(leaver.map((e) => e.type).sort()).toEqual([
      'LeaverReportPosted',
      'LeaverReportPosted',
      'LeaverReportPrepared',
    ]);
  });

  it('refuses a forged Cover… (another index, another report, another channel) and records it', async () => {
    h = await startJoinsHarness();
    const j = h;
    j.sim.webApp.terminate(HR_IDS.ana);
    const payments = await reportIn(j, PAYMENTS_CHANNEL);
    const platform = await reportIn(j, PLATFORM_CHANNEL);
    const good = JSON.parse(String(coverButton(payments))) as { hrId: string; index: number };
    for (const value of [
      JSON.stringify({ ...good, index: 7 }),
      JSON.stringify({ hrId: HR_IDS.ben, index: 0 }),
      '{"hrId":"../x","index":0}',
      'not json',
    ]) {
      const r = await j.click(LEAVER_ACTION.cover, DANA, { message: payments, value });
      await j.response(r.responseUrl, /doesn't name a shift of a leaver report/);
    }
    // The right value clicked on the #platform report (where that shift was not posted).
    const elsewhere = await j.click(LEAVER_ACTION.cover, DANA, {
      message: platform,
      value: JSON.stringify(good),
    });
    await j.response(elsewhere.responseUrl, /doesn't name a shift/);
    expect(j.lastView(DANA)).toBeUndefined();
    await j.idle();
    const refused = (await j.sb.store.readStream('inbox-slack')).filter(
      (e) => (e.data as { rejection?: { message?: string } }).rejection?.message !== undefined,
    );
    expect(refused.length).toBeGreaterThanOrEqual(5);
  });

  it('a leaver on call now with an open incident paging her: the page stops before its call, the report names the incident and offers cover from now', async () => {
    // Ana first in the rotation: on call this week.
    const anaThisWeek = (weekStart: Date): SimulatorSeed => {
      const seed = joinsSeed(weekStart);
      return {
        ...seed,
        schedules: seed.schedules.map((sc) => ({
          ...sc,
          layers: sc.layers.map((l) => ({ ...l, userIds: [PD_IDS.ana, PD_IDS.ben, PD_IDS.chen] })),
        })),
      };
    };
    h = await startJoinsHarness({ seed: anaThisWeek });
    const j = h;
    await j.verifyPhone(ANA);
    const { number } = await j.trigger('Card payments failing');
    await j.advanceTimers(5 * MINUTE);
    await waitFor(() => j.smsTo(PHONES[ANA]).some((m) => m.text.includes(`#${number}`)) || undefined, {
      what: `Ana paged about #${number}`,
    });

    j.sim.webApp.terminate(HR_IDS.ana);
    const payments = await reportIn(j, PAYMENTS_CHANNEL);
    const text = messageText(payments);
    expect(text).toContain('Payments primary');
    expect(text).toMatch(/Mon 23 Nov \d\d:\d\d UTC → Mon 30 Nov 00:00 UTC/);
    expect(coverButton(payments)).toBeDefined();
    // The incident still assigned to her is named, with how to hand it on.
    expect(text).toContain('Open incidents still assigned to them');
    expect(text).toContain(`#${number} Card payments failing (triggered): \`/incident reassign ${number}\``);

    // Her page about the open incident is stopped; the call that was due never rings.
    const pages = await j.sb.store.readStream(`pager-${ANA}`);
    expect(pages.filter((e) => e.type === 'PageStopped').map((e) => e.data.reason)).toEqual(['left']);
    await j.advanceTimers(10 * MINUTE);
    expect(j.vonage.phones.calls(PHONES[ANA])).toEqual([]);
    expect(storeBytes(j.dbPath).includes(PHONES[ANA]), 'her digits in the store files').toBe(false);
  });

  it('issue 20: the same shift covered twice makes one override; the second is refused naming the first; the report says who covers; the form never offers the leaver', async () => {
    h = await startJoinsHarness();
    const j = h;
    j.sim.webApp.terminate(HR_IDS.ana);
    const payments = await reportIn(j, PAYMENTS_CHANNEL);
    const value = String(coverButton(payments));

    // Dana and Frank both open the form on the same shift.
    await j.click(LEAVER_ACTION.cover, DANA, { message: payments, value });
    const danaForm = await waitFor(() => j.lastView(DANA), { what: "Dana's cover form" });
    await j.click(LEAVER_ACTION.cover, FRANK, { message: payments, value });
    await waitFor(() => j.lastView(FRANK), { what: "Frank's cover form" });
    // The picker offers the schedule's colleagues, never Ana.
    const offered = JSON.stringify(danaForm);
    expect(offered).toContain(BEN);
    expect(offered).not.toContain(`"value":"${ANA}"`);
    // A forged pick of the leaver is refused by the form.
    const self = await j.submitView(DANA, {
      [LEAVER_FIELD.block]: {
        [LEAVER_FIELD.action]: { type: 'static_select', selected_option: { value: ANA } },
      },
    });
    expect(JSON.stringify(self.body)).toContain('They have left');

    expect(
      (
        await j.submitView(DANA, {
          [LEAVER_FIELD.block]: {
            [LEAVER_FIELD.action]: { type: 'static_select', selected_option: { value: BEN } },
          },
        })
      ).status,
    ).toBe(200);
    await waitFor(
      () => j.pd.state.schedules.get(PAYMENTS_SCHEDULE)?.overrides.find((o) => o.userId === PD_IDS.ben),
      { what: 'the override for Ben', timeoutMs: 15_000 },
    );
    // Frank covers the same shift with Chen: refused, naming Ben; no second override.
    await j.submitView(FRANK, {
      [LEAVER_FIELD.block]: {
        [LEAVER_FIELD.action]: { type: 'static_select', selected_option: { value: CHEN } },
      },
    });
    const refused = await waitFor(
      async () =>
        (await j.sb.store.readStream('inbox-slack')).find(
          (e) =>
            e.type === 'CommandRejected' &&
            (e.data as { actor?: unknown }).actor === FRANK &&
            (e.data as { details?: { reason?: unknown } }).details?.reason === 'already_taken',
        ),
      { what: "Frank's cover refused" },
    );
    expect((refused.data as { message?: string }).message).toBe('Ben Okafor already covers this shift.');
    await j.idle();
    expect(j.pd.state.schedules.get(PAYMENTS_SCHEDULE)?.overrides.map((o) => o.userId)).toEqual([PD_IDS.ben]);
    // The report, in place: who covers, and no Cover… button on that shift any more.
    const now = j.fake.messages(PAYMENTS_CHANNEL).find((m) => m.ts === payments.ts) as FakeMessage;
    expect(messageText(now)).toContain(`Covered by <@${BEN}> (picked by <@${DANA}>)`);
    expect(JSON.stringify(now.blocks)).not.toContain(JSON.stringify(value).slice(1, -1));
  });

  it('a rota no channel is subscribed to is said in the logs, and nobody is DMed', async () => {
    h = await startJoinsHarness();
    const j = h;
    await j.incident(`unsubscribe ${PLATFORM}`, { channel: PLATFORM_CHANNEL });
    await j.idle();
    const dmsBefore = j.dms(DANA).length;
    j.sim.webApp.terminate(HR_IDS.ana);
    await reportIn(j, PAYMENTS_CHANNEL);
    await j.idle();
    expect(j.fake.messages(PLATFORM_CHANNEL).filter((m) => messageText(m).includes('has left'))).toEqual([]);
    const warned = await waitFor(
      () =>
        j.logs
          .text()
          .split('\n')
          .find((l) => l.includes('has no subscribed channel')),
      { what: 'the log line' },
    );
    expect(warned).toContain('escalation policy Platform');
    expect(j.dms(DANA).length).toBe(dmsBefore);
    const [prepared] = await j.sb.store.readStream(`timeoffleaver-${HR_IDS.ana}`);
    expect(prepared?.data.unannounced).toEqual(['escalation policy Platform']);
  });
});

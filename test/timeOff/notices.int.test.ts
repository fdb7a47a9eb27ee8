import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { eventCallbackBody } from '../../sandbox/simulators/slack/signing.ts';
import { createLogger } from '../../src/logger.ts';
import { createSlackOutbox } from '../../src/slack/outbox.ts';
import { TIME_OFF_ACTION } from '../../src/timeOff/blocks/timeOffIds.ts';
import {
  createTimeOffNoticesReactor,
  TIME_OFF_NOTICE_STREAM_PREFIX,
} from '../../src/timeOff/notices.reactor.ts';
import { postSigned } from '../support/startApp.ts';
import { waitFor } from '../support/waitFor.ts';
import {
  ANA,
  BEN,
  DANA,
  GIL,
  HR_IDS,
  messageText,
  startTimeOffHarness,
  type TimeOffHarness,
} from './harness.ts';
import { advance, advanceUntil } from './hrFixtures.ts';
import { buttons, noticesDriver } from './noticesDriver.ts';

/**
 * The notices of a time-off request end to end (app + HR simulator + fake Slack, one manual
 * clock): the approver's card (once, with the balance after and who else is out), updated in
 * place at every step; the requester's status message and DMs; reminders; App Home.
 *
 * Requests and decisions are driven with commands on the bus, as the Slack listeners and the HR
 * processor would send them (the listeners and HR calls are other slices' work).
 */

let h: TimeOffHarness;
const { send, request, cardsFor, card, statusOf, dataOf, cardRef, seedDirectory } = noticesDriver(() => h);

beforeEach(async () => {
  h = await startTimeOffHarness();
  await seedDirectory();
});

afterEach(async () => {
  await h.stop();
});

describe('time-off notices', () => {
  it('posts the approver card once, with the balance after and who else in the team is out (Ben, from HR), and records it', async () => {
    // Ben is out in HR (asked in the HR web app), as the HR sync records it.
    await send(
      'RecordHrTimeOff',
      {
        entry: {
          hrRequestId: '4400001',
          employeeId: HR_IDS.ben,
          policyType: 'Holiday',
          startDate: '2026-12-08',
          endDate: '2026-12-11',
          startPortion: 'all_day',
          endPortion: 'all_day',
          status: 'approved',
        },
      },
      'system:test',
    );
    const id = await request({ description: 'Family <wedding> & travel' });

    const c = card(id);
    const text = messageText(c);
    expect(text).toContain('<@U0ANA> asks for *Holiday*');
    expect(text).toContain('3 working days');
    expect(text).toContain('22 days of Holiday left');
    expect(text).toContain('Also out in <@U0ANA>’s team then: Ben Okafor');
    expect(text).toContain('Family &lt;wedding&gt; &amp; travel');
    expect(buttons(c).map((b) => b.action_id)).toEqual([
      TIME_OFF_ACTION.approve,
      TIME_OFF_ACTION.deny,
      TIME_OFF_ACTION.denyWithReason,
    ]);
    expect(await cardRef(id)).toEqual({ channel: c.channel, ts: c.ts });
    expect(await h.types(id)).toEqual(['TimeOffRequested', 'TimeOffApprovalAsked']);

    // The requester's status message: to whom, short id, Cancel.
    const s = statusOf(id);
    expect(messageText(s)).toContain('Waiting for <@U0DANA> to approve');
    expect(messageText(s)).toMatch(/expires <!date\^\d+\^\{date_short_pretty\} at \{time\}\|[^>]* UTC>/);
    expect(buttons(s)).toEqual([expect.objectContaining({ action_id: TIME_OFF_ACTION.cancel, value: id })]);

    // A restart replays nothing twice.
    const before = { dana: h.dms(DANA).length, ana: h.dms(ANA).length };
    await h.restart();
    await h.idle();
    await h.sb.processors.waitForIdle(15_000);
    expect(h.dms(DANA)).toHaveLength(before.dana);
    expect(h.dms(ANA)).toHaveLength(before.ana);
    expect(cardsFor(id)).toHaveLength(1);
    const notices = (
      await h.sb.store.readAll({ filter: { streamPrefixes: [TIME_OFF_NOTICE_STREAM_PREFIX] } })
    ).length;
    expect(notices).toBe(2);
  });

  it('a redelivered event (after a crash, before the checkpoint) posts nothing again and records the card once', async () => {
    const id = await request();
    const c = card(id);
    // The same processor, fed the request's events again as a restart after a crash would.
    const posted: string[] = [];
    const again = createTimeOffNoticesReactor({
      outbox: createSlackOutbox({
        logger: createLogger({ level: 'silent' }),
        transport: {
          async postMessage(channel) {
            posted.push(channel);
            return { channel, ts: '1.000001' };
          },
          async update() {},
          async postEphemeral() {},
          async publishHome() {},
          dmChannel: async (user) => user,
          history: async () => [],
        },
      }),
      dispatch: (command) => h.sb.bus.dispatch(command as never),
      readModel: h.api.readModel,
      client: h.api.client,
      holidays: [],
      logger: createLogger({ level: 'silent' }),
    });
    const quiet = { info() {}, warn() {}, error() {}, debug() {}, child: () => quiet };
    for (const event of await h.sb.store.readStream(`timeoff-${id}`)) {
      if (event.kind !== 'event') continue;
      await again.handle(event, {
        processorId: again.id,
        store: h.sb.store,
        clock: h.clock,
        now: () => h.clock.now(),
        logger: quiet,
        attempt: 1,
        maxAttempts: 5,
        replay: false,
        redelivery: true,
        signal: new AbortController().signal,
      });
    }
    await h.idle();
    expect(posted).toEqual([]);
    expect(cardsFor(id)).toEqual([c]);
    expect((await h.types(id)).filter((t) => t === 'TimeOffApprovalAsked')).toHaveLength(1);
  });

  it('says "HR could not tell" when the balance cannot be read, and still posts the card', async () => {
    h.sim.failNext('balance', { status: 503, times: 10 });
    const id = await request();
    expect(messageText(card(id))).toContain('HR could not tell');
  });

  it('approved: the requester is told at once (before HR’s lag), the card loses its buttons; then confirmed in HR', async () => {
    const id = await request();
    const { channel, ts } = await cardRef(id);
    const at = h.clock.now().getTime();
    await send('ApproveTimeOff', { timeOffId: id, card: { channel, ts } }, DANA);
    const dm = await h.dm(/approved your \*Holiday\*/, ANA);
    expect(messageText(dm)).toContain(
      '<@U0DANA> approved your *Holiday*: Mon 7 Dec – Wed 9 Dec 2026 (3 working days). Recording it in HR',
    );
    // No time passed on the shared clock: the DM did not wait for HR's 20 s lag.
    expect(h.clock.now().getTime()).toBe(at);
    expect(h.dms(ANA).some((m) => /Your \*Holiday\*.* is recorded in HR\. Enjoy/.test(messageText(m)))).toBe(
      false,
    );

    const c = card(id);
    expect(c.edits).toBeGreaterThan(0);
    expect(buttons(c)).toEqual([]);
    expect(messageText(c)).toContain('Approved by <@U0DANA>');
    expect(messageText(statusOf(id))).toContain('<@U0DANA> approved it');

    // HR shows it once its lag has passed: confirmed, told, and both messages redrawn.
    const moved = await advanceUntil(h, async () =>
      h.dms(ANA).some((m) => /Your \*Holiday\*.* is recorded in HR\. Enjoy/.test(messageText(m))),
    );
    expect(moved).toBeGreaterThanOrEqual(20_000);
    expect(messageText(card(id))).toContain('Approved by <@U0DANA> and recorded in HR.');
    expect(messageText(statusOf(id))).toContain('it is recorded in HR');
    expect(
      h.dms(ANA).filter((m) => /Your \*Holiday\*.* is recorded in HR\. Enjoy/.test(messageText(m))),
    ).toHaveLength(1);
    // HR's lookups while its lag passed changed nothing people see: no redraw sent the same again.
    for (const m of [card(id), statusOf(id)]) {
      const versions = [...m.history, { text: m.text, blocks: m.blocks }].map((v) => JSON.stringify(v));
      expect(versions.filter((v, i) => i > 0 && v === versions[i - 1])).toEqual([]);
    }
  });

  it('denied with a reason: the reason escaped in the requester’s DM and on the card, no buttons', async () => {
    const id = await request();
    await send(
      'DenyTimeOff',
      { timeOffId: id, card: await cardRef(id), reason: 'Release <week> & on call' },
      DANA,
    );
    const dm = await h.dm(/denied your/, ANA);
    expect(messageText(dm)).toContain('“Release &lt;week&gt; &amp; on call”');
    const c = card(id);
    expect(buttons(c)).toEqual([]);
    expect(messageText(c)).toContain('Denied by <@U0DANA>: “Release &lt;week&gt; &amp; on call”');
    expect(buttons(statusOf(id))).toEqual([]);
  });

  it('cancelled by the requester: the card says so in place, the requester gets a DM', async () => {
    const id = await request();
    await send('CancelTimeOff', { timeOffId: id }, ANA);
    await h.dm(/Your \*Holiday\*.* is cancelled/, ANA);
    const c = card(id);
    expect(buttons(c)).toEqual([]);
    expect(messageText(c)).toContain('Cancelled.');
  });

  it('reminds the approver after 1 working day, and expiry tells both', async () => {
    const id = await request();
    const requested = await dataOf<{ remindAt: string[]; expiresAt: string }>(id, 'TimeOffRequested');
    // Monday 09:00 → Tuesday 09:00: one working day.
    expect(requested.remindAt[0]).toBe('2026-11-24T09:00:00.000Z');
    await advance(h, 24 * 3_600_000 - 60_000);
    expect(h.dms(DANA).some((m) => /:bell: Reminder/.test(messageText(m)))).toBe(false);
    await advance(h, 60_000);
    const reminder = await h.dm(/:bell: Reminder/, DANA);
    expect(messageText(reminder)).toContain(
      `has been waiting for you since <!date^${Date.parse('2026-11-23T09:00:00.000Z') / 1000}^{date_short_pretty} at {time}|Nov 23, 09:00 UTC>`,
    );
    expect(messageText(card(id))).toContain('Reminder 1.');

    await advanceUntil(
      h,
      async () => h.dms(ANA).some((m) => /expired: <@U0DANA> did not decide/.test(messageText(m))),
      {
        stepMs: 6 * 3_600_000,
        maxMs: 14 * 24 * 3_600_000,
      },
    );
    await h.dm(/expired before anyone decided it/, DANA);
    expect(h.dms(DANA).filter((m) => /:bell: Reminder 2/.test(messageText(m)))).toHaveLength(1);
    const c = card(id);
    expect(buttons(c)).toEqual([]);
    expect(messageText(c)).toContain('Expired');
  });

  it('HR refused the submission: the reason in words and a "Fix and send again" button', async () => {
    const id = await request({ policyType: 'Sabbatical' });
    await send('ApproveTimeOff', { timeOffId: id, card: await cardRef(id) }, DANA);
    const dm = await h.dm(
      /but HR refused to record it: .*Fix it and send it again, or cancel the request/,
      ANA,
    );
    expect(messageText(dm)).toMatch(/Sabbatical/);
    expect(buttons(dm)).toEqual([
      expect.objectContaining({ action_id: TIME_OFF_ACTION.resubmit, value: id }),
      expect.objectContaining({ action_id: TIME_OFF_ACTION.cancel, value: id }),
    ]);
    expect(
      h.dms(ANA).filter((m) => /HR refused to record it/.test(messageText(m)) && m.history.length === 0),
    ).toHaveLength(1);
  });

  it('HR never reached: the requester is told in words, not with HR’s text', async () => {
    h.sim.failNext('submitTimeOff', {
      status: 503,
      body: { error: 'upstream connect error at hr-db-7.internal' },
      times: 50,
    });
    const id = await request();
    await send('ApproveTimeOff', { timeOffId: id, card: await cardRef(id) }, DANA);
    await advanceUntil(
      h,
      async () => h.dms(ANA).some((m) => /so it is not recorded in HR/.test(messageText(m))),
      {
        stepMs: 5_000,
      },
    );
    const dm = await h.dm(/but HR could not be reached, so it is not recorded/, ANA);
    expect(messageText(dm)).not.toContain('hr-db-7');
    expect(messageText(statusOf(id))).not.toContain('hr-db-7');
    expect(messageText(card(id))).not.toContain('hr-db-7');
    expect(buttons(dm)[0]).toEqual(expect.objectContaining({ action_id: TIME_OFF_ACTION.resubmit }));
  });

  it('through Slack: /timeoff, Dana’s Approve click, Ana’s DMs; Ana’s Cancel on her status message cancels it in HR too', async () => {
    const ack = await h.timeoff('Holiday 2026-12-07 2026-12-09 family trip', ANA);
    expect(ack.status).toBe(200);
    await h.idle();
    const [id] = await h.requestIds(ANA);
    if (!id) throw new Error('no request recorded');
    expect(buttons(card(id)).map((b) => b.action_id)).toContain(TIME_OFF_ACTION.approve);

    const at = h.clock.now().getTime();
    await h.click(TIME_OFF_ACTION.approve, DANA);
    await h.idle();
    await h.dm(/<@U0DANA> approved your \*Holiday\*/, ANA);
    expect(h.clock.now().getTime()).toBe(at);
    expect(buttons(card(id))).toEqual([]);

    // The Cancel button of her status message (the newest DM with one).
    await h.click(TIME_OFF_ACTION.cancel, ANA, { message: statusOf(id) });
    await advanceUntil(h, async () => h.dms(ANA).some((m) => /is cancelled, in HR too/.test(messageText(m))));
    expect(messageText(card(id))).toContain('Cancelled.');
    expect(buttons(statusOf(id))).toEqual([]);
    expect(h.sim.timeOffRequests().map((r) => r.status)).toEqual(['canceled']);
  });

  it('App Home: Dana sees what waits for her, Ana her upcoming time off with Cancel; Gil is told he is not in HR', async () => {
    const id = await request();
    const open = async (user: string) => {
      await postSigned(
        `${h.url}/slack/events`,
        eventCallbackBody({ type: 'app_home_opened', user, tab: 'home' }),
        'json',
        {
          timestamp: Math.floor(h.clock.now().getTime() / 1000),
        },
      );
      return waitFor(() => h.fake.homes.get(user), { what: `the Home tab of ${user}` });
    };
    const dana = JSON.stringify((await open(DANA)).view);
    expect(dana).toContain('Time off to approve');
    expect(dana).toContain(TIME_OFF_ACTION.approve);
    expect(dana).toContain(id);
    const ana = JSON.stringify((await open(ANA)).view);
    expect(ana).toContain('Your upcoming time off');
    expect(ana).toContain(TIME_OFF_ACTION.cancel);
    expect(ana).not.toContain('Time off to approve');
    const gil = JSON.stringify((await open(GIL)).view);
    expect(gil).toMatch(/HR/);
    expect(gil).not.toContain('Your upcoming time off');
    void BEN;
  });
});

import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { FakeMessage } from '../../sandbox/simulators/slack/fakeSlack.ts';
import { eventCallbackBody } from '../../sandbox/simulators/slack/signing.ts';
import { shortTimeOffId, TIME_OFF_ACTION } from '../../src/timeOff/blocks/timeOffIds.ts';
import { TIME_OFF_NOTICE_STREAM_PREFIX } from '../../src/timeOff/notices.reactor.ts';
import { postSigned } from '../support/startApp.ts';
import { waitFor } from '../support/waitFor.ts';
import {
  ANA,
  BEN,
  DANA,
  GIL,
  HR_EMPLOYEES,
  HR_IDS,
  messageText,
  startTimeOffHarness,
  type TimeOffHarness,
} from './harness.ts';

/**
 * The notices of a time-off request end to end (app + HR simulator + fake Slack, one manual
 * clock): the approver's card (once, with the balance after and who else is out), updated in
 * place at every step; the requester's status message and DMs; reminders; App Home.
 *
 * Requests and decisions are driven with commands on the bus, as the Slack listeners and the HR
 * processor would send them (the listeners and HR calls are other slices' work).
 */

const ANA_P = { hrId: HR_IDS.ana, slackUserId: ANA, displayName: 'Ana Silva' };
const DANA_P = { hrId: HR_IDS.dana, slackUserId: DANA, displayName: 'Dana Lee' };

type Ask = Readonly<{ policyType?: string; startDate?: string; endDate?: string; description?: string }>;

let h: TimeOffHarness;

const send = async (type: string, data: Record<string, unknown>, actor: string, now?: string) => {
  await h.sb.bus.dispatch({
    type,
    data,
    metadata: { now: now ?? h.clock.now().toISOString(), commandId: randomUUID(), actor },
  } as never);
  await h.idle();
};

const request = async (ask: Ask = {}): Promise<string> => {
  const timeOffId = randomUUID();
  await send(
    'RequestTimeOff',
    {
      timeOffId,
      policyType: ask.policyType ?? 'Holiday',
      startDate: ask.startDate ?? '2026-12-07',
      endDate: ask.endDate ?? '2026-12-09',
      startPortion: 'all_day',
      endPortion: 'all_day',
      description: ask.description ?? '',
      requester: ANA_P,
      approver: DANA_P,
      holidays: [],
      approvalRules: null,
    },
    ANA,
  );
  return timeOffId;
};

const buttons = (m: FakeMessage): { action_id: string; value?: string }[] =>
  (
    (m.blocks ?? []) as {
      type: string;
      elements?: { action_id?: string; value?: string }[];
      accessory?: { action_id?: string; value?: string };
    }[]
  )
    .flatMap((b) => [...(b.elements ?? []), ...(b.accessory ? [b.accessory] : [])])
    .filter((e): e is { action_id: string; value?: string } => typeof e.action_id === 'string');

const cardsFor = (timeOffId: string) =>
  h
    .dms(DANA)
    .filter(
      (m) =>
        buttons(m).some((b) => b.value === timeOffId) ||
        m.history.some((v) => JSON.stringify(v.blocks).includes(timeOffId)),
    );

const card = (timeOffId: string): FakeMessage => {
  const cards = cardsFor(timeOffId);
  expect(cards).toHaveLength(1);
  return cards[0] as FakeMessage;
};

const statusOf = (timeOffId: string): FakeMessage => {
  const found = h
    .dms(ANA)
    .filter(
      (m) =>
        messageText(m).includes(`\`${shortTimeOffId(timeOffId)}\``) &&
        messageText(m).includes('Your time off request'),
    );
  expect(found).toHaveLength(1);
  return found[0] as FakeMessage;
};

/** The data of the first event of `type` in the request's stream. */
const dataOf = async <T>(timeOffId: string, type: string): Promise<T> => {
  const found = (await h.sb.store.readStream(`timeoff-${timeOffId}`)).find((e) => e.type === type);
  if (!found) throw new Error(`no ${type} in the request's stream`);
  return found.data as T;
};

const cardRef = async (timeOffId: string) =>
  (await dataOf<{ card: { channel: string; ts: string } }>(timeOffId, 'TimeOffApprovalAsked')).card;

beforeEach(async () => {
  h = await startTimeOffHarness();
  // The directory as the HR sync keeps it (a full read), so teams and Home know who is who.
  await send(
    'RecordDirectorySnapshot',
    {
      employees: HR_EMPLOYEES.map((e) => ({
        hrId: e.id,
        email: e.email,
        displayName: e.displayName,
        managerHrId: e.managerId,
        site: e.site,
        status: 'active',
      })),
    },
    'system:test',
  );
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
    expect(messageText(s)).toMatch(/expires .* UTC/);
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

  it('says "HR could not tell" when the balance cannot be read, and still posts the card', async () => {
    h.sim.failNext('balance', { status: 503, times: 10 });
    const id = await request();
    expect(messageText(card(id))).toContain('HR could not tell');
  });

  it('approved: the requester is told at once (before HR’s lag), the card loses its buttons in place', async () => {
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

    const c = card(id);
    expect(c.edits).toBeGreaterThan(0);
    expect(buttons(c)).toEqual([]);
    expect(messageText(c)).toContain('Approved by <@U0DANA>');
    expect(messageText(statusOf(id))).toContain('<@U0DANA> approved it');
  });

  it('confirmed in HR: a DM and both messages redrawn', async () => {
    const id = await request();
    await send('ApproveTimeOff', { timeOffId: id, card: await cardRef(id) }, DANA);
    const { submitRequestId } = await dataOf<{ submitRequestId: string }>(id, 'TimeOffApproved');
    // What the HR processor records once HR has it and has read it back.
    await send(
      'RecordTimeOffSubmitted',
      { timeOffId: id, submitRequestId, hrRequestId: '5500001' },
      'system:test',
    );
    const { readBackRequestId } = await dataOf<{ readBackRequestId: string }>(id, 'TimeOffSubmitted');
    await send(
      'RecordTimeOffReadBack',
      { timeOffId: id, readBackRequestId, hrStatus: 'approved' },
      'system:test',
    );
    await h.dm(/is recorded in HR\. Enjoy/, ANA);
    expect(messageText(card(id))).toContain('Approved by <@U0DANA> and recorded in HR.');
    expect(messageText(statusOf(id))).toContain('recorded in HR');
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
    await h.advance(24 * 3_600_000);
    await send('RemindTimeOffApprover', { timeOffId: id, reminder: 1 }, 'system:scheduler');
    const reminder = await h.dm(/:bell: Reminder/, DANA);
    expect(messageText(reminder)).toContain('has been waiting for you since 09:00 UTC on 2026-11-23');
    expect(messageText(card(id))).toContain('Reminder 1.');

    await send('ExpireTimeOff', { timeOffId: id }, 'system:scheduler', requested.expiresAt);
    await h.dm(/Your \*Holiday\*.* expired/, ANA);
    await h.dm(/expired before anyone decided it/, DANA);
    const c = card(id);
    expect(buttons(c)).toEqual([]);
    expect(messageText(c)).toContain('Expired');
  });

  it('HR refused the submission: the reason in words and a "Fix and send again" button', async () => {
    const id = await request({ policyType: 'Sabbatical' });
    await send('ApproveTimeOff', { timeOffId: id, card: await cardRef(id) }, DANA);
    const { submitRequestId } = await dataOf<{ submitRequestId: string }>(id, 'TimeOffApproved');
    await send(
      'RecordTimeOffSubmissionRejected',
      { timeOffId: id, submitRequestId, reason: 'HR has no policy called "Sabbatical"' },
      'system:test',
    );
    const dm = await h.dm(
      /but HR refused to record it: .*Fix it and send it again, or cancel the request/,
      ANA,
    );
    expect(messageText(dm)).toContain('HR has no policy called "Sabbatical"');
    expect(buttons(dm)).toEqual([
      expect.objectContaining({ action_id: TIME_OFF_ACTION.resubmit, value: id }),
      expect.objectContaining({ action_id: TIME_OFF_ACTION.cancel, value: id }),
    ]);
    expect(
      h.dms(ANA).filter((m) => /HR refused to record it/.test(messageText(m)) && m.history.length === 0),
    ).toHaveLength(1);
  });

  it('HR never reached: the requester is told in words, not with HR’s text', async () => {
    const id = await request();
    await send('ApproveTimeOff', { timeOffId: id, card: await cardRef(id) }, DANA);
    const { submitRequestId } = await dataOf<{ submitRequestId: string }>(id, 'TimeOffApproved');
    await send(
      'RecordTimeOffUpstreamCallFailed',
      {
        timeOffId: id,
        requestId: submitRequestId,
        action: 'submit',
        attempt: 1,
        maxAttempts: 1,
        code: 'SB_UPSTREAM_UNAVAILABLE',
        message: 'connect ECONNREFUSED 10.0.0.1:443',
        nextAttemptAt: null,
      },
      'system:test',
    );
    const dm = await h.dm(/but HR could not be reached, so it is not recorded/, ANA);
    expect(messageText(statusOf(id))).toContain('HR could not be reached');
    expect(messageText(statusOf(id))).not.toContain('ECONNREFUSED');
    expect(messageText(dm)).not.toContain('ECONNREFUSED');
    expect(buttons(dm)[0]).toEqual(expect.objectContaining({ action_id: TIME_OFF_ACTION.resubmit }));
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

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { TIME_OFF_ACTION } from '../../src/timeOff/blocks/timeOffIds.ts';
import { ANA, DANA, messageText, startTimeOffHarness, type TimeOffHarness } from './harness.ts';
import { buttons, noticesDriver } from './noticesDriver.ts';

/**
 * The rarer steps of a request, end to end: a resubmission that goes back to the approver (a new
 * card; the old one says it was replaced), a request cancelled in the HR web app, a cancel HR
 * would not do, a submission HR never showed, and Slack failing a post (retried, still one card).
 */
let h: TimeOffHarness;
const d = noticesDriver(() => h);

beforeEach(async () => {
  h = await startTimeOffHarness();
  await d.seedDirectory();
});

afterEach(async () => {
  await h.stop();
});

describe('time-off notices: the rarer steps', () => {
  it('a resubmission with new dates goes back to the approver: a new card, the old one replaced without buttons', async () => {
    const id = await d.request({ policyType: 'Sabbatical' });
    await d.approve(id);
    const { submitRequestId } = await d.dataOf<{ submitRequestId: string }>(id, 'TimeOffApproved');
    await d.send(
      'RecordTimeOffSubmissionRejected',
      { timeOffId: id, submitRequestId, reason: 'Unknown policy type "Sabbatical"' },
      'system:test',
    );
    await d.send(
      'ResubmitTimeOff',
      { timeOffId: id, ...d.ask({ policyType: 'Holiday', startDate: '2026-12-14', endDate: '2026-12-15' }) },
      ANA,
    );
    await h.idle();
    const cards = d.cardsFor(id);
    expect(cards).toHaveLength(2);
    const [old, fresh] = cards;
    expect(buttons(old ?? { blocks: [] })).toEqual([]);
    expect(messageText(old ?? { text: '' })).toContain('changed this request after HR refused it');
    expect(messageText(fresh ?? { text: '' })).toContain('Mon 14 Dec – Tue 15 Dec 2026');
    expect(buttons(fresh ?? { blocks: [] }).map((b) => b.action_id)).toContain(TIME_OFF_ACTION.approve);
    // The new card is the one recorded on the request.
    expect(await d.cardRef(id, true)).toEqual({ channel: fresh?.channel, ts: fresh?.ts });
    expect(messageText(d.statusOf(id))).toContain('Waiting for <@U0DANA> to approve');
  });

  it('cancelled in the HR web app: the requester is told, the card says cancelled', async () => {
    const id = await d.request();
    await d.approve(id);
    await d.submitted(id, '6600001');
    await d.readBack(id);
    await d.send('RecordTimeOffCancelledInHr', { timeOffId: id, cancelRequestId: null }, 'system:test');
    const dm = await h.dm(/was cancelled in HR/, ANA);
    expect(messageText(dm)).toContain('someone cancelled it in the HR web app');
    expect(messageText(d.card(id))).toContain('Cancelled.');
    expect(buttons(d.statusOf(id))).toEqual([]);
  });

  it('a cancel HR would not do: the requester is told in words that it still stands', async () => {
    const id = await d.request();
    await d.approve(id);
    await d.submitted(id, '6600002');
    await d.readBack(id);
    await d.send('CancelTimeOff', { timeOffId: id }, ANA);
    const { cancelRequestId } = await d.dataOf<{ cancelRequestId: string }>(id, 'TimeOffCancelRequested');
    await d.send(
      'RecordTimeOffUpstreamCallFailed',
      {
        timeOffId: id,
        requestId: cancelRequestId,
        action: 'cancel',
        attempt: 1,
        maxAttempts: 1,
        code: 'SB_UPSTREAM_UNAVAILABLE',
        message: 'HTTP 503 from hr.internal: upstream connect error',
        nextAttemptAt: null,
      },
      'system:test',
    );
    const dm = await h.dm(/Cancelling your \*Holiday\*.* failed/, ANA);
    expect(messageText(dm)).toContain('HR could not be reached');
    expect(messageText(dm)).toContain('It still stands in HR');
    expect(messageText(dm)).not.toContain('hr.internal');
    expect(messageText(d.statusOf(id))).not.toContain('hr.internal');
  });

  it('HR never showed the submission: "sent it to HR at … but HR hasn’t shown it yet", with the time’s zone', async () => {
    const id = await d.request();
    await h.advance(60 * 60_000);
    await d.approve(id);
    await d.submitted(id, '6600003');
    const { readBackRequestId } = await d.dataOf<{ readBackRequestId: string }>(id, 'TimeOffSubmitted');
    await d.send(
      'RecordTimeOffUpstreamCallFailed',
      {
        timeOffId: id,
        requestId: readBackRequestId,
        action: 'read_back',
        attempt: 1,
        maxAttempts: 1,
        code: 'SB_NOT_FOUND',
        message: 'not visible yet',
        nextAttemptAt: null,
      },
      'system:test',
    );
    const dm = await h.dm(/hasn't shown it yet/, ANA);
    expect(messageText(dm)).toContain(
      "Switchboard sent it to HR at 10:00 UTC on 2026-11-23 but HR hasn't shown it yet. Switchboard keeps watching HR and will tell you; check HR if it matters now.",
    );
  });

  it('Slack failing the card’s post is retried by the processor: one card, recorded once', async () => {
    h.fake.failNext('chat.postMessage', { status: 503 }, 1);
    const id = await d.request();
    expect(d.cardsFor(id)).toHaveLength(1);
    expect((await h.types(id)).filter((t) => t === 'TimeOffApprovalAsked')).toHaveLength(1);
    expect(h.dms(DANA)).toHaveLength(1);
    expect(h.fake.callsOf('chat.postMessage').filter((c) => c.status === 503)).toHaveLength(1);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manualClock } from '../../src/core/clock.ts';
import type { RecordedEvent } from '../../src/eventStore/eventStore.ts';
import { incidentPageId } from '../../src/incidents/paging.ts';
import { waitFor } from '../support/waitFor.ts';
import { ANA, CHEN, MINUTE, type PagingHarness, startPagingHarness } from './pagingHarness.ts';

/**
 * Issue 21 item 2: paging's SMS, calls, hang-ups and the SMS answers to replies go through the one
 * durable upstream-call mechanism: a failed attempt is a fact (`PageUpstreamCallFailed`,
 * `PagerReplyAnswerFailed`) with its retry due on the scheduler, on the manual clock here; a retry
 * sends only what the page still wants; the outcome is recorded once. End to end on the app, the
 * incident-service and communications simulators.
 */
let h: PagingHarness;
const clock = manualClock('2026-11-23T09:00:00.000Z');
const RETRY = 10_000;

beforeAll(async () => {
  h = await startPagingHarness({ clock });
  await h.verifyPhone(CHEN.slack, CHEN.phone);
});
afterAll(async () => {
  await h.stop();
});

const inbox = (digits: string) => h.vonage.phones.inbox(digits).map((m) => m.text);
const about = (title: string) => inbox(CHEN.phone).filter((t) => t.includes(title));
/** Chen's pager stream: the events about one page. */
const pageEvents = async (pageId: string): Promise<RecordedEvent[]> =>
  (await h.stream(`pager-${CHEN.slack}`)).filter(
    (e) =>
      e.kind === 'event' && (e.data.pageId === pageId || String(e.data.requestId).startsWith(`${pageId}:`)),
  );
const types = async (pageId: string) => (await pageEvents(pageId)).map((e) => e.type);
const acknowledgeInSlack = async (number: number, incidentId: string) => {
  await h.slash(`ack ${number}`, ANA.slack);
  await waitFor(() => h.pd.state.incidents.get(incidentId)?.status === 'acknowledged' || undefined, {
    what: `#${number} acknowledged in Slack`,
    timeoutMs: 10_000,
  });
  await h.idle();
};

describe('paging on the durable upstream-call mechanism', () => {
  it('an SMS the service fails twice is retried on the scheduler and sent once, client_ref = the page id', async () => {
    h.vonage.failNext('sendSms', { status: 503, to: CHEN.phone, times: 2 });
    const inc = await h.trigger('Retried SMS');
    const pageId = incidentPageId(inc.streamId, 1, CHEN.slack);
    await h.advance(5 * MINUTE);
    const failed = (await pageEvents(pageId)).find((e) => e.type === 'PageUpstreamCallFailed');
    expect(failed?.data).toMatchObject({
      requestId: `${pageId}:sms`,
      action: 'sms',
      attempt: 1,
      maxAttempts: 5,
      code: 'SB_UPSTREAM_UNAVAILABLE',
      final: false,
    });
    expect(Date.parse(String(failed?.data.nextAttemptAt))).toBeGreaterThan(clock.now().getTime());
    expect(about('Retried SMS')).toEqual([]);

    await h.advance(RETRY);
    await h.advance(RETRY);
    expect(about('Retried SMS')).toHaveLength(1);
    expect(await types(pageId)).toEqual([
      'PageRequested',
      'PageUpstreamCallFailed',
      'PageUpstreamCallRetried',
      'PageUpstreamCallFailed',
      'PageUpstreamCallRetried',
      'PageSmsSent',
    ]);
    const sent = h.vonage
      .requestsFor('sendSms')
      .filter((r) => r.status === 202 && JSON.stringify(r.body).includes('Retried SMS'));
    expect(sent.map((r) => (r.body as { client_ref?: string }).client_ref)).toEqual([pageId]);
    await acknowledgeInSlack(inc.number, inc.incidentId);
  });

  it('a page acknowledged while its SMS waits for the retry sends nothing when the retry is due', async () => {
    h.vonage.failNext('sendSms', { status: 503, to: CHEN.phone });
    const inc = await h.trigger('Acknowledged before the retry');
    const pageId = incidentPageId(inc.streamId, 1, CHEN.slack);
    await h.advance(5 * MINUTE);
    expect(await types(pageId)).toContain('PageUpstreamCallFailed');
    await acknowledgeInSlack(inc.number, inc.incidentId);
    const requests = h.vonage.requestsFor('sendSms').length;

    await h.advance(RETRY);
    await h.advance(3 * MINUTE);
    expect(h.vonage.requestsFor('sendSms')).toHaveLength(requests);
    expect(about('Acknowledged before the retry')).toEqual([]);
    expect(await types(pageId)).toEqual(['PageRequested', 'PageUpstreamCallFailed', 'PageStopped']);
  });

  it('a call the service fails once is retried and placed once', async () => {
    const inc = await h.trigger('Retried call');
    const pageId = incidentPageId(inc.streamId, 1, CHEN.slack);
    await h.advance(5 * MINUTE);
    expect(about('Retried call')).toHaveLength(1);
    const calls = h.vonage.phones.calls(CHEN.phone).length;
    h.vonage.failNext('createCall', { status: 500, to: CHEN.phone });
    await h.advance(3 * MINUTE);
    expect(h.vonage.phones.calls(CHEN.phone)).toHaveLength(calls);
    await h.advance(RETRY);
    expect(h.vonage.phones.calls(CHEN.phone)).toHaveLength(calls + 1);
    expect(await types(pageId)).toEqual([
      'PageRequested',
      'PageSmsSent',
      'PageCallRequested',
      'PageUpstreamCallFailed',
      'PageUpstreamCallRetried',
      'PageCallPlaced',
    ]);
    await acknowledgeInSlack(inc.number, inc.incidentId);
  });

  it('hanging up a ringing call is retried after the service failed it', async () => {
    const inc = await h.trigger('Hang up retried');
    const pageId = incidentPageId(inc.streamId, 1, CHEN.slack);
    await h.advance(5 * MINUTE);
    const calls = h.vonage.phones.calls(CHEN.phone).length;
    await h.advance(3 * MINUTE);
    const call = await waitFor(() => h.vonage.phones.calls(CHEN.phone)[calls], { what: 'the page call' });
    expect(call.status).toBe('ringing');
    h.vonage.failNext('hangUpCall', { status: 503 });
    await acknowledgeInSlack(inc.number, inc.incidentId);
    expect(h.vonage.phones.call(call.uuid).status).toBe('ringing');
    await h.advance(RETRY);
    expect(h.vonage.phones.call(call.uuid).status).not.toBe('ringing');
    const events = await pageEvents(pageId);
    expect(events.map((e) => e.type).slice(-4)).toEqual([
      'PageStopped',
      'PageUpstreamCallFailed',
      'PageUpstreamCallRetried',
      'PageCallHungUp',
    ]);
    expect(events.at(-1)?.data).toMatchObject({ pageId, callUuid: call.uuid });
  });

  it('the SMS answer to a reply is retried after the service failed it, and sent once', async () => {
    const inc = await h.trigger('Answer retried');
    await h.advance(5 * MINUTE);
    expect(about('Answer retried')).toHaveLength(1);
    h.vonage.failNext('sendSms', { status: 503, to: CHEN.phone });
    expect((await h.vonage.phones.replySms(CHEN.phone, `4 ${inc.number}`)).ok).toBe(true);
    await waitFor(() => h.pd.state.incidents.get(inc.incidentId)?.status === 'acknowledged' || undefined, {
      what: 'acknowledged by SMS',
      timeoutMs: 10_000,
    });
    await h.idle();
    const answered = () =>
      inbox(CHEN.phone).filter((t) => t.startsWith(`[Switchboard] Acknowledged #${inc.number}`));
    expect(answered()).toEqual([]);
    await h.advance(RETRY);
    expect(answered()).toHaveLength(1);
    const replies: RecordedEvent[] = [];
    for (const s of await h.sb.store.listStreams({ prefix: 'pagerreply-' })) {
      replies.push(...(await h.stream(s.streamId)));
    }
    const handled = replies.find((e) => e.type === 'PagerReplyHandled' && e.data.outcome === 'acknowledged');
    const replyId = String(handled?.data.replyId);
    expect(handled?.data.answer).toBe(answered()[0]);
    expect(
      replies
        .filter((e) => e.kind === 'event' && (e.data.replyId === replyId || e.data.requestId === replyId))
        .map((e) => e.type),
    ).toEqual([
      'PagerReplyReceived',
      'PagerReplyHandled',
      'PagerReplyAnswerFailed',
      'PagerReplyAnswerRetried',
      'PagerReplyAnswered',
    ]);
  });
});

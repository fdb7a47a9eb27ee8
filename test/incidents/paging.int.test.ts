import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manualClock } from '../../src/core/clock.ts';
import { readTimer } from '../../src/processors/scheduler.ts';
import { signVonageWebhook } from '../../src/upstream/vonageSignature.ts';
import { waitFor } from '../support/waitFor.ts';
import { ANA, CHEN, FRANK, MINUTE, type PagingHarness, startPagingHarness } from './pagingHarness.ts';

/**
 * Issue 10 items 4-6, end to end: an incident still triggered N minutes after it was triggered
 * pages its level's on-call by SMS, then by a call M minutes later; a reply or a key pressed
 * acknowledges or resolves it as that person; anything that acknowledges it stops the pages.
 * PAGING_DELAY_MINUTES=5 (the default), PAGING_CALL_AFTER_MINUTES=3 (the default).
 */
let h: PagingHarness;
const clock = manualClock('2026-11-23T09:00:00.000Z');

beforeAll(async () => {
  h = await startPagingHarness({ clock });
  // Frank (level 2) has no verified phone.
  await h.verifyPhone(CHEN.slack, CHEN.phone);
});
afterAll(async () => {
  if (process.env.PAGING_DEBUG) {
    for (const l of h.logs.lines())
      if (!/^(debug|trace)$/.test(String(l.level)) || /page|paging|trigger/i.test(String(l.msg)))
        console.log(JSON.stringify(l).slice(0, 600));
  }
  await h.stop();
});

const inbox = (digits: string) => h.vonage.phones.inbox(digits).map((m) => m.text);

/** `/incident timeline <n>` as Ana: the text of the answer. */
const timeline = async (number: number): Promise<string> => {
  const from = h.fake.responsePosts.length;
  const answered = await h.slash(`timeline ${number}`);
  if (answered.includes('Timeline:')) return answered;
  const posted = await waitFor(
    () => h.fake.responsePosts.slice(from).find((p) => JSON.stringify(p.body).includes('Timeline:')),
    { what: 'the timeline', timeoutMs: 10_000 },
  );
  return JSON.stringify(posted.body);
};

/** The incident's card in #ops, as JSON, once it says `what`. */
const cardSays = (number: number, what: string) =>
  waitFor(
    () => {
      const card = h.fake.messages('C0OPS').find((m) => m.bot_id !== '' && m.text.startsWith(`#${number} `));
      const text = JSON.stringify(card?.blocks ?? []);
      return text.includes(what) ? text : undefined;
    },
    { what: `#${number}'s card to say “${what}”`, timeoutMs: 10_000 },
  );

/** Replies from Chen's phone and waits until the reply is handled. */
const reply = async (text: string): Promise<void> => {
  const delivered = await h.vonage.phones.replySms(CHEN.phone, text);
  expect(delivered.ok).toBe(true);
  await h.idle();
};

const pageTimerState = async (streamId: string) => {
  const { incidentPageId } = await import('../../src/incidents/paging.ts');
  return (await readTimer(h.sb.store, `page-call-${incidentPageId(streamId, 1, CHEN.slack)}`)).status;
};

describe('paging by SMS, then voice', () => {
  it('pages by SMS after N minutes, calls after M more, and a key pressed acknowledges as that person', async () => {
    const { streamId, number, incidentId } = await h.trigger('Checkout 5xx');
    const before = inbox(CHEN.phone).length;

    await h.advance(4 * MINUTE);
    expect(inbox(CHEN.phone)).toHaveLength(before);

    await h.advance(1 * MINUTE);
    const sms = await waitFor(() => inbox(CHEN.phone).slice(before).at(0), { what: 'the SMS page' });
    expect(sms).toBe(
      `[Switchboard] #${number} Checkout 5xx, triggered today, 09:00 UTC — reply 4 to acknowledge, 6 to resolve`,
    );
    expect(h.vonage.phones.calls(CHEN.phone)).toHaveLength(0);

    await h.advance(3 * MINUTE);
    const call = await waitFor(() => h.vonage.phones.calls(CHEN.phone).at(0), { what: 'the page call' });
    h.vonage.phones.answer(call.uuid);
    expect(call.spoken.join(' ')).toContain(`Incident ${number}: Checkout 5xx`);
    expect(call.spoken.join(' ')).toContain('Press 4 to acknowledge');

    const pressed = await h.vonage.phones.pressKeys(call.uuid, '4');
    expect(pressed.status).toBe(200);
    expect(JSON.stringify(pressed.ncco)).toContain(`you acknowledge #${number} Checkout 5xx`);

    await waitFor(() => h.pd.state.incidents.get(incidentId)?.status === 'acknowledged' || undefined, {
      what: 'acknowledged upstream',
      timeoutMs: 10_000,
    });
    await h.idle();
    // As Chen: the incident service was told who (From: Chen's email).
    const ack = h.pd.requestsFor('updateIncident').at(-1);
    expect(JSON.stringify(ack?.headers ?? {})).toContain(CHEN.email);
    const activity = await h.pageActivity(streamId);
    expect(activity).toContainEqual({ kind: 'sms_submitted', slackUserId: CHEN.slack, via: null });
    expect(activity).toContainEqual({ kind: 'call_created', slackUserId: CHEN.slack, via: null });
    expect(activity).toContainEqual({ kind: 'phone_acknowledged', slackUserId: CHEN.slack, via: 'voice' });

    // Receipts: the SMS delivered, the call ringing, answered, completed (hung up after the answer).
    await waitFor(() => h.vonage.phones.call(call.uuid).status === 'completed' || undefined, {
      what: 'the call ended',
    });
    await h.idle();
    const kinds = (await h.pageActivity(streamId)).map((a) => a.kind);
    expect(kinds).toEqual(
      expect.arrayContaining(['sms_delivered', 'call_ringing', 'call_answered', 'call_completed']),
    );
    const told = await timeline(number);
    expect(told).toContain('Paged <@U0CHEN> by SMS');
    expect(told).toContain('SMS page to <@U0CHEN> delivered');
    expect(told).toContain('Calling <@U0CHEN>');
    expect(told).toContain('Call to <@U0CHEN> answered');
    expect(told).toContain('Acknowledged by <@U0CHEN> by phone (keypad)');
    await cardSays(number, '*Paging* <@U0CHEN> acknowledged by phone');
  });

  it('a bare 4 acknowledges the most recent page and says which; `4 <n>` names one; no call follows', async () => {
    const a = await h.trigger('Search latency');
    await h.advance(1 * MINUTE);
    const b = await h.trigger('Login errors');
    const before = inbox(CHEN.phone).length;
    await h.advance(5 * MINUTE);
    await waitFor(() => inbox(CHEN.phone).length >= before + 2 || undefined, { what: 'two pages' });

    // The same inbound SMS delivered twice acts once.
    h.vonage.webhooks.duplicateNext(1);
    await reply('4');
    await waitFor(() => h.pd.state.incidents.get(b.incidentId)?.status === 'acknowledged' || undefined, {
      what: `#${b.number} acknowledged`,
      timeoutMs: 10_000,
    });
    expect(h.pd.state.incidents.get(a.incidentId)?.status).toBe('triggered');
    const answer = await waitFor(
      () => inbox(CHEN.phone).find((t) => t.startsWith('[Switchboard] Acknowledged')),
      {
        what: 'the answer',
      },
    );
    expect(answer).toContain(`Acknowledged #${b.number} Login errors.`);
    expect(answer).toContain('Other incidents paged you too');

    await reply(` ack  #${a.number} `);
    await waitFor(() => h.pd.state.incidents.get(a.incidentId)?.status === 'acknowledged' || undefined, {
      what: `#${a.number} acknowledged`,
      timeoutMs: 10_000,
    });
    await h.idle();
    expect(inbox(CHEN.phone).filter((t) => t.startsWith('[Switchboard] Acknowledged'))).toHaveLength(2);
    expect(
      h.pd.requestsFor('updateIncident').filter((r) => JSON.stringify(r.body).includes('acknowledged'))
        .length,
    ).toBeGreaterThanOrEqual(2);

    // Acknowledged: the calls that were due in 3 minutes are cancelled.
    const calls = h.vonage.phones.calls(CHEN.phone).length;
    await h.advance(3 * MINUTE);
    expect(h.vonage.phones.calls(CHEN.phone)).toHaveLength(calls);
    expect(await pageTimerState(a.streamId)).toBe('cancelled');
    expect(await pageTimerState(b.streamId)).toBe('cancelled');
    expect(await h.pageActivity(b.streamId)).toContainEqual({
      kind: 'phone_acknowledged',
      slackUserId: CHEN.slack,
      via: 'sms',
    });
    expect(await timeline(b.number)).toContain('Acknowledged by <@U0CHEN> by phone (SMS reply)');
  });

  it('6 resolves as that person', async () => {
    const c = await h.trigger('Disk full');
    await h.advance(5 * MINUTE);
    await reply('6');
    await waitFor(() => h.pd.state.incidents.get(c.incidentId)?.status === 'resolved' || undefined, {
      what: 'resolved upstream',
      timeoutMs: 10_000,
    });
    await h.idle();
    expect(await h.pageActivity(c.streamId)).toContainEqual({
      kind: 'phone_resolved',
      slackUserId: CHEN.slack,
      via: 'sms',
    });
    expect(inbox(CHEN.phone).at(-1)).toContain(`Resolved #${c.number} Disk full.`);
  });

  it('stops as soon as someone acknowledges in Slack: before the SMS nothing is sent, after it no call', async () => {
    const early = await h.trigger('Queue backlog');
    const late = await h.trigger('Cache misses');
    const before = inbox(CHEN.phone).length;
    await h.slash(`ack ${early.number}`, ANA.slack);
    await waitFor(() => h.pd.state.incidents.get(early.incidentId)?.status === 'acknowledged' || undefined, {
      what: 'acknowledged in Slack',
      timeoutMs: 10_000,
    });
    await h.advance(5 * MINUTE);
    const texts = inbox(CHEN.phone).slice(before);
    expect(texts.filter((t) => t.includes('Queue backlog'))).toEqual([]);
    expect(texts.filter((t) => t.includes('Cache misses'))).toHaveLength(1);

    await h.slash(`ack ${late.number}`, ANA.slack);
    await waitFor(() => h.pd.state.incidents.get(late.incidentId)?.status === 'acknowledged' || undefined, {
      what: 'acknowledged in Slack',
      timeoutMs: 10_000,
    });
    await h.idle();
    const calls = h.vonage.phones.calls(CHEN.phone).length;
    await h.advance(3 * MINUTE);
    expect(h.vonage.phones.calls(CHEN.phone)).toHaveLength(calls);
    expect(await pageTimerState(late.streamId)).toBe('cancelled');

    // Chen answers the page late: told who got there first, in words an SMS can carry.
    await reply(`4 ${late.number}`);
    const told = inbox(CHEN.phone).at(-1) ?? '';
    expect(told).toContain(`#${late.number} Cache misses: Already acknowledged by Ana Silva`);
    expect(told).not.toMatch(/<@|\*/);
  });

  it('a page call still ringing when someone acknowledges in Slack is ended', async () => {
    const g = await h.trigger('Ringing while acknowledged');
    await h.advance(5 * MINUTE);
    const calls = h.vonage.phones.calls(CHEN.phone).length;
    await h.advance(3 * MINUTE);
    const call = await waitFor(() => h.vonage.phones.calls(CHEN.phone)[calls], { what: 'the page call' });
    expect(call.status).toBe('ringing');
    await h.slash(`ack ${g.number}`, ANA.slack);
    await waitFor(() => h.vonage.phones.call(call.uuid).status !== 'ringing' || undefined, {
      what: 'the call ended',
      timeoutMs: 10_000,
    });
  });

  it('back to triggered after an acknowledgement timeout: paged again', async () => {
    const u = await h.trigger('Flapping health check');
    await h.advance(5 * MINUTE);
    const texts = () => inbox(CHEN.phone).filter((t) => t.includes('Flapping health check'));
    await waitFor(() => texts().length === 1 || undefined, { what: 'the first page' });
    await h.slash(`ack ${u.number}`, ANA.slack);
    await waitFor(() => h.pd.state.incidents.get(u.incidentId)?.status === 'acknowledged' || undefined, {
      what: 'acknowledged in Slack',
      timeoutMs: 10_000,
    });
    await h.idle();
    h.pd.webApp.unacknowledge(u.incidentId);
    await waitFor(
      async () => (await h.stream(u.streamId)).some((e) => e.type === 'IncidentUnacknowledged') || undefined,
      { what: 'un-acknowledged', timeoutMs: 10_000 },
    );
    await h.idle();
    await h.advance(4 * MINUTE);
    expect(texts()).toHaveLength(1);
    await h.advance(1 * MINUTE);
    await waitFor(() => texts().length === 2 || undefined, { what: 'paged again' });
  });

  it('someone with no verified phone is skipped, and the timeline says so', async () => {
    const d = await h.trigger('Webhook backlog');
    await h.slash(`escalate ${d.number}`, ANA.slack);
    await waitFor(() => h.pd.state.incidents.get(d.incidentId)?.escalationLevel === 2 || undefined, {
      what: 'escalated to level 2',
      timeoutMs: 10_000,
    });
    await h.idle();
    await h.advance(5 * MINUTE);
    expect(await h.pageActivity(d.streamId)).toContainEqual({
      kind: 'no_verified_phone',
      slackUserId: FRANK.slack,
      via: null,
    });
    expect(await timeline(d.number)).toContain('Could not page <@U0FRANK> at level 2: no verified phone');
    // Nobody else at level 2 or above: said (issue 18).
    await cardSays(
      d.number,
      '*Paging* *nobody could be paged* · <@U0FRANK> could not be paged: no verified phone',
    );
  });

  it('a reply from a number nobody verified, or about an incident never paged, is recorded and ignored', async () => {
    const stranger = '447700900555';
    const updates = h.pd.requestsFor('updateIncident').length;
    expect((await h.vonage.phones.replySms(stranger, '4')).ok).toBe(true);
    await reply('4 9999');
    await h.idle();
    expect(h.pd.requestsFor('updateIncident')).toHaveLength(updates);
    // Reply streams are named by a keyed hash of the number, never the number itself.
    const replyStreams = await h.sb.store.listStreams({ prefix: 'pagerreply-' });
    expect(replyStreams.length).toBeGreaterThan(0);
    expect(replyStreams.map((s) => s.streamId).filter((id) => !/^pagerreply-[0-9a-f]{32}$/.test(id))).toEqual(
      [],
    );
    // The stranger's number is recorded sealed (nobody's data key: the configured secret's).
    const phones = h.sb.lifecycle('verification')?.phones;
    const strangerReplies = await h.stream(`pagerreply-${phones?.key(stranger)}`);
    expect(strangerReplies.every((e) => !JSON.stringify(e.data).includes(stranger))).toBe(true);
    expect(await phones?.openAny(String(strangerReplies[0]?.data.phone))).toBe(stranger);
    expect(strangerReplies.map((e) => e.type)).toContain('PagerReplyHandled');
    expect(strangerReplies.find((e) => e.type === 'PagerReplyHandled')?.data.outcome).toBe('unknown_number');
    expect(h.vonage.phones.inbox(stranger)).toEqual([]);
    expect(inbox(CHEN.phone).at(-1)).toContain('You were not paged about #9999');
  });

  it('a rejected SMS and a busy line are on the timeline, with the vendor’s reason', async () => {
    h.vonage.phones.reject(CHEN.phone, 'busy');
    try {
      const r = await h.trigger('Phone off the hook');
      await h.advance(5 * MINUTE);
      await h.advance(3 * MINUTE);
      await waitFor(
        async () => {
          const kinds = (await h.pageActivity(r.streamId)).map((a) => a.kind);
          return (kinds.includes('sms_rejected') && kinds.includes('call_busy')) || undefined;
        },
        { what: 'the rejection and the busy line recorded', timeoutMs: 10_000 },
      );
      const told = await timeline(r.number);
      expect(told).toMatch(/SMS page to <@U0CHEN> rejected: \S/);
      expect(told).toContain('Call to <@U0CHEN>: busy');
      // Chen could not be paged (the SMS refused), so Frank (level 2, no verified phone) was tried.
      await cardSays(r.number, '<@U0CHEN> could not be paged: the SMS was refused');
      expect(told).toContain('Could not page <@U0CHEN> at level 1: the SMS was refused');
      expect(told).toContain('Nobody at level 1 could be paged: paging level 2');
    } finally {
      h.vonage.phones.restore(CHEN.phone);
    }
  });

  it('STOP opts the number out until it is verified again, and says so in Slack', async () => {
    await reply('STOP');
    const dm = await waitFor(
      () =>
        h.fake
          .callsOf('chat.postMessage')
          .find((c) => c.params.channel === CHEN.slack && String(c.params.text).includes('STOP')),
      { what: 'the DM' },
    );
    expect(String(dm.params.text)).toContain('/verify');
    expect(await h.sb.people.linkOf(CHEN.slack, 'phone')).toBeUndefined();

    const e = await h.trigger('After STOP');
    const before = inbox(CHEN.phone).length;
    await h.advance(5 * MINUTE);
    expect(inbox(CHEN.phone)).toHaveLength(before);
    expect(await h.pageActivity(e.streamId)).toContainEqual({
      kind: 'opted_out',
      slackUserId: CHEN.slack,
      via: null,
    });

    // Verified again: paged again.
    await h.advance(1 * MINUTE);
    await h.verifyPhone(CHEN.slack, CHEN.phone);
    const f = await h.trigger('After verifying again');
    await h.advance(5 * MINUTE);
    await waitFor(
      () =>
        inbox(CHEN.phone)
          .slice(before)
          .some((t) => t.includes('After verifying again')) || undefined,
      {
        what: 'paged again',
      },
    );
    expect(await h.pageActivity(f.streamId)).toContainEqual({
      kind: 'sms_submitted',
      slackUserId: CHEN.slack,
      via: null,
    });
  });

  it('webhooks: unsigned or forged → 401, signed but malformed → 400 naming what was wrong, a redelivery → once', async () => {
    const env = h.vonage.env();
    const post = (path: string, raw: string, authorization?: string) =>
      fetch(`${h.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(authorization ? { authorization } : {}) },
        body: raw,
      });
    const sign = (raw: string, secret = env.VONAGE_SIGNATURE_SECRET) =>
      signVonageWebhook(raw, secret, { now: clock.now(), apiKey: env.VONAGE_API_KEY });

    const reply = JSON.stringify({ channel: 'sms', message_uuid: 'f0f0-1', from: CHEN.phone, text: '4' });
    expect((await post('/webhooks/vonage/messages', reply)).status).toBe(401);
    expect((await post('/webhooks/vonage/messages', reply, sign(reply, 'not-the-secret'))).status).toBe(401);
    expect((await post('/webhooks/vonage/messages', reply, sign(`${reply} `))).status).toBe(401);

    const bad = JSON.stringify({ channel: 'sms', message_uuid: 'f0f0-2', from: 'evil', text: '4' });
    const refused = await post('/webhooks/vonage/messages', bad, sign(bad));
    expect(refused.status).toBe(400);
    expect(await refused.text()).toContain('from is not a phone number');
    const keys = JSON.stringify({ uuid: 'call-x', dtmf: { digits: 'DROP' } });
    const refusedKeys = await post('/webhooks/vonage/voice', keys, sign(keys));
    expect(refusedKeys.status).toBe(400);
    expect(await refusedKeys.text()).toContain('dtmf.digits');

    // The same call event twice (a redelivery) is recorded once.
    const event = JSON.stringify({ uuid: 'call-y', status: 'ringing', timestamp: '2026-11-23T10:00:00Z' });
    const first = await post('/webhooks/vonage/voice', event, sign(event));
    const again = await post('/webhooks/vonage/voice', event, sign(event));
    expect(first.status).toBe(200);
    expect(await again.json()).toMatchObject({ ok: true, duplicate: true });
    await h.idle();
    expect(
      (await h.stream('pagerreceipt-call-y')).filter((e) => e.type === 'PageReceiptReceived'),
    ).toHaveLength(1);
  });
});

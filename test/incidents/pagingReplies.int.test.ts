import { existsSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manualClock } from '../../src/core/clock.ts';
import type { RecordedEvent } from '../../src/eventStore/eventStore.ts';
import { signVonageWebhook } from '../../src/upstream/vonageSignature.ts';
import { waitFor } from '../support/waitFor.ts';
import { ANA, CHEN, MINUTE, type PagingHarness, startPagingHarness } from './pagingHarness.ts';

/**
 * Issue 18 items 6 and 7, end to end on the real app and the communications simulator:
 *
 * - keys pressed on a phone act only in a call Switchboard placed for that person's page: a signed
 *   keypad event for a call it never placed (or for a page call, from someone else's number) is
 *   recorded, refused with an operator log line, and nobody is acted for or told;
 * - what someone texts to the paging number is never kept as text: a stray SMS is its length and a
 *   keyed hash in the pager's events, the commands and the inbox records, so its text is in neither
 *   the SQLite file nor its WAL; a real `4` still acknowledges.
 */
let h: PagingHarness;
const clock = manualClock('2026-11-23T09:00:00.000Z');

beforeAll(async () => {
  h = await startPagingHarness({ clock });
  await h.verifyPhone(CHEN.slack, CHEN.phone);
  await h.verifyPhone(ANA.slack, ANA.phone);
});
afterAll(async () => {
  await h.stop();
});

const inbox = (digits: string) => h.vonage.phones.inbox(digits).map((m) => m.text);

/** A webhook signed exactly as the communications service signs it (its secret, the app's clock). */
const postSigned = (path: string, raw: string) => {
  const env = h.vonage.env();
  return fetch(`${h.url}${path}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      authorization: signVonageWebhook(raw, env.VONAGE_SIGNATURE_SECRET ?? '', {
        now: clock.now(),
        apiKey: env.VONAGE_API_KEY,
      }),
    },
    body: raw,
  });
};

/** A keypad input event as the vendor posts it for a call (the person's number is the other party). */
const keysEvent = (callUuid: string, from: string, digits: string) =>
  JSON.stringify({
    speech: { results: [] },
    dtmf: { digits, timed_out: false },
    from,
    to: h.vonage.env().VONAGE_FROM_NUMBER,
    uuid: callUuid,
    conversation_uuid: `CON-${callUuid}`,
    // A second before now: the phone's own keys (stamped now) are another delivery, not a redelivery.
    timestamp: new Date(clock.now().getTime() - 1_000).toISOString(),
  });

/** Every event of every reply stream (`pagerreply-<number key>`). */
const replyEvents = async (): Promise<RecordedEvent[]> => {
  const out: RecordedEvent[] = [];
  for (const s of await h.sb.store.listStreams({ prefix: 'pagerreply-', limit: 10_000 })) {
    out.push(...(await h.sb.store.readStream(s.streamId)));
  }
  return out;
};

const handledOf = async (replyIdPrefix: string) =>
  waitFor(
    async () =>
      (await replyEvents()).find(
        (e) => e.type === 'PagerReplyHandled' && String(e.data.replyId).startsWith(replyIdPrefix),
      ),
    { what: `the outcome of ${replyIdPrefix}`, timeoutMs: 10_000 },
  );

const dmsTo = (slackUserId: string) =>
  h.fake.callsOf('chat.postMessage').filter((c) => c.params.channel === slackUserId).length;

describe('a long text to the paging number', () => {
  it('is a valid delivery: taken (2xx) and kept as its length, however long, never a 4xx the vendor would drop', async () => {
    const long = 'x'.repeat(5_000);
    const raw = JSON.stringify({
      channel: 'sms',
      message_uuid: 'b1c2d3e4-0000-4000-8000-00000000a5a5',
      to: h.vonage.env().VONAGE_FROM_NUMBER,
      from: '447700900556',
      text: long,
      timestamp: clock.now().toISOString(),
    });
    const res = await postSigned('/webhooks/vonage/messages', raw);
    expect(res.status).toBeLessThan(300);
    const kept = await waitFor(
      async () =>
        (await replyEvents()).find(
          (e) => e.type === 'PagerReplyReceived' && e.data.textLength === long.length,
        ),
      { what: 'the long text recorded', timeoutMs: 10_000 },
    );
    expect(kept.data).toMatchObject({ action: 'unknown', textLength: 5_000 });
  });
});

describe('keys pressed in a call Switchboard did not place for that person (item 6)', () => {
  it('a signed keypad 4 for a call never placed, from the number of someone paged, acknowledges nothing and tells nobody', async () => {
    const inc = await h.trigger('Forged keypad');
    const before = inbox(CHEN.phone).length;
    await h.advance(5 * MINUTE);
    await waitFor(
      () =>
        inbox(CHEN.phone)
          .slice(before)
          .some((t) => t.includes('Forged keypad')) || undefined,
      {
        what: 'the SMS page to Chen',
      },
    );
    const updates = h.pd.requestsFor('updateIncident').length;
    const texts = inbox(CHEN.phone).length;
    const dms = dmsTo(CHEN.slack);

    const forged = '5b1f3c2e-9d4a-4c1b-8e7f-0a1b2c3d4e5f';
    const res = await postSigned('/webhooks/vonage/voice', keysEvent(forged, CHEN.phone, '4'));
    expect(res.status).toBe(200);
    // The call is told nothing was done, not "you acknowledge".
    const ncco = JSON.stringify(await res.json());
    expect(ncco).not.toMatch(/acknowledge #|you acknowledge/i);
    expect(ncco).toContain('Nothing was done');
    await h.idle();

    const handled = await handledOf(`dtmf-${forged}`);
    expect(handled.data).toMatchObject({ outcome: 'unknown_call', pageId: null });
    expect(h.pd.state.incidents.get(inc.incidentId)?.status).toBe('triggered');
    expect(h.pd.requestsFor('updateIncident')).toHaveLength(updates);
    expect((await h.pageActivity(inc.streamId)).map((a) => a.kind)).not.toContain('phone_acknowledged');
    // Nothing sent to the person: no SMS answer, no DM.
    expect(inbox(CHEN.phone)).toHaveLength(texts);
    expect(dmsTo(CHEN.slack)).toBe(dms);
    // An operator line with a stable code, naming no number.
    const line = await waitFor(() => h.logs.lines().find((l) => l.code === 'SB_PAGER_REPLY_UNKNOWN_CALL'), {
      what: 'the coded log line',
    });
    expect(JSON.stringify(line)).not.toContain(CHEN.phone);
  });

  it('keys from another number in a page call are refused too; the person’s own keys still acknowledge', async () => {
    const inc = await h.trigger('Keypad from the wrong phone');
    await h.advance(5 * MINUTE);
    const calls = h.vonage.phones.calls(CHEN.phone).length;
    await h.advance(3 * MINUTE);
    const call = await waitFor(() => h.vonage.phones.calls(CHEN.phone)[calls], { what: 'the page call' });
    // Ana's verified number, in Chen's page call: not Chen, and not a call placed for Ana.
    const res = await postSigned('/webhooks/vonage/voice', keysEvent(call.uuid, ANA.phone, '4'));
    expect(res.status).toBe(200);
    expect(JSON.stringify(await res.json())).toContain('Nothing was done');
    await h.idle();
    const handled = await handledOf(`dtmf-${call.uuid}`);
    expect(handled.data).toMatchObject({ outcome: 'unknown_call' });
    expect(h.pd.state.incidents.get(inc.incidentId)?.status).toBe('triggered');
    expect(inbox(ANA.phone).filter((t) => t.includes('Acknowledged'))).toEqual([]);

    // Chen answers and presses 4: acknowledged as Chen.
    h.vonage.phones.answer(call.uuid);
    const pressed = await h.vonage.phones.pressKeys(call.uuid, '4');
    expect(pressed.status).toBe(200);
    expect(JSON.stringify(pressed.ncco)).toContain(
      `you acknowledge #${inc.number} Keypad from the wrong phone`,
    );
    await waitFor(() => h.pd.state.incidents.get(inc.incidentId)?.status === 'acknowledged' || undefined, {
      what: 'acknowledged by the keypad',
      timeoutMs: 10_000,
    });
    await h.idle();
    expect(await h.pageActivity(inc.streamId)).toContainEqual({
      kind: 'phone_acknowledged',
      slackUserId: CHEN.slack,
      via: 'voice',
    });
  });
});

describe('no personal text at rest (item 7)', () => {
  const STRAY = 'my otp 48213907 card 4111111111111111';
  /** The text and its distinctive parts, as UTF-8 and in base64. */
  const needles = [
    STRAY,
    'my otp',
    'otp 48213907',
    '48213907',
    '4111111111111111',
    'card 4111',
    Buffer.from(STRAY).toString('base64'),
  ];
  const found = (file: string): string[] => {
    if (!existsSync(file)) return [];
    const bytes = readFileSync(file);
    return needles.filter((n) => bytes.includes(Buffer.from(n, 'utf8'))).map((n) => `${n} in ${file}`);
  };

  it('a stray SMS is kept as its length and a keyed hash, in neither the SQLite file nor its WAL; a real 4 still acknowledges', async () => {
    const stranger = '447700900555';
    const texts = inbox(CHEN.phone).length;
    expect((await h.vonage.phones.replySms(CHEN.phone, STRAY)).ok).toBe(true);
    expect((await h.vonage.phones.replySms(stranger, STRAY)).ok).toBe(true);
    await h.idle();

    // Chen (known) is answered with how to reply, never with what they sent.
    const answer = await waitFor(
      () =>
        inbox(CHEN.phone)
          .slice(texts)
          .find((t) => t.includes('Not understood')),
      {
        what: 'the answer',
      },
    );
    for (const part of ['otp', '48213', '4111']) expect(answer).not.toContain(part);
    expect(inbox(stranger)).toEqual([]);

    // What is kept: the action, the length and a keyed hash (the same for the same text).
    const received = (await replyEvents()).filter(
      (e) => e.type === 'PagerReplyReceived' && e.data.textLength === STRAY.length,
    );
    expect(received).toHaveLength(2);
    for (const e of received) {
      expect(e.data).toMatchObject({ action: 'unknown', number: null, textLength: STRAY.length });
      expect(e.data.textHash).toMatch(/^[0-9a-f]{32}$/);
      expect(e.data).not.toHaveProperty('text');
    }
    expect(received[0]?.data.textHash).toBe(received[1]?.data.textHash);
    // The inbox record keeps the shape of the delivery, not its text.
    const inboxRecords = await h.sb.store.readStream('inbox-vonage');
    const strayRecords = inboxRecords.filter((e) =>
      JSON.stringify(e.data).includes(`"textLength":${STRAY.length}`),
    );
    expect(strayRecords.length).toBeGreaterThanOrEqual(2);

    // A real reply from a known person still works end to end.
    const inc = await h.trigger('Reply after a stray text');
    await h.advance(5 * MINUTE);
    expect((await h.vonage.phones.replySms(CHEN.phone, '4')).ok).toBe(true);
    await waitFor(() => h.pd.state.incidents.get(inc.incidentId)?.status === 'acknowledged' || undefined, {
      what: 'acknowledged by SMS',
      timeoutMs: 10_000,
    });
    await h.idle();
    expect(inbox(CHEN.phone).at(-1)).toContain(`Acknowledged #${inc.number} Reply after a stray text.`);

    expect(h.logs.text()).not.toContain('48213907');
    expect(h.logs.text()).not.toContain('4111111111111111');
    // While running (the WAL holds the latest writes), then once stopped (checkpointed).
    const files = [h.dbPath, `${h.dbPath}-wal`];
    // The scan reads what was written: the incident's title is there (a positive control).
    const holds = (text: string) =>
      files.some((f) => existsSync(f) && readFileSync(f).includes(Buffer.from(text, 'utf8')));
    expect(holds('Reply after a stray text')).toBe(true);
    expect(files.flatMap(found)).toEqual([]);
    await h.sb.stop();
    expect(holds('Reply after a stray text')).toBe(true);
    expect(files.flatMap(found)).toEqual([]);
  });
});

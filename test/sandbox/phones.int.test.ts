import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Sandbox, startSandbox } from '../../sandbox/sandbox.ts';
import { INCIDENTS_CHANNEL, PEOPLE, SWITCHBOARD_NUMBER } from '../../sandbox/world.ts';
import { systemClock } from '../../src/core/clock.ts';
import { createVonageClient } from '../../src/upstream/vonage.ts';
import { VERIFICATION_ACTION, VERIFICATION_FIELD } from '../../src/verification/blocks/ids.ts';
import { tempDir } from '../support/startApp.ts';
import { waitFor } from '../support/waitFor.ts';
import { startReceiver } from '../upstream/vonageReceiver.ts';

// Each person's phone in the sandbox, through the console's HTTP API and its live stream, with the
// real bot, the communications simulator and its signed webhooks: the console shows what reaches
// the phone and sends what the person does on it.

const ANA = PEOPLE.find((p) => p.handle === 'ana')!;
const BEN = PEOPLE.find((p) => p.handle === 'ben')!;

type Json = Record<string, unknown>;
type PhoneJson = {
  number: string | null;
  sms: Array<{ id: string; direction: string; peer: string; text: string }>;
  calls: Array<{
    id: string;
    from: string;
    status: string;
    spoken: string[];
    awaitingKeys: boolean;
    keys: Array<{ digits: string; answer: unknown[] | null }>;
  }>;
};

let sandbox: Sandbox;
let cleanup: () => void;

const post = async (path: string, body: Json): Promise<{ status: number; json: Json }> => {
  const res = await fetch(`${sandbox.console.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as Json };
};
const phoneOf = async (user: string): Promise<PhoneJson> =>
  (await (await fetch(`${sandbox.console.url}/api/phone?user=${user}`)).json()) as PhoneJson;

/** The console's live stream for one person: every `phone` event, in order. */
const watchPhone = async (user: string) => {
  const res = await fetch(`${sandbox.console.url}/api/events?user=${user}`);
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  const views: PhoneJson[] = [];
  let buffer = '';
  let done = false;
  const pump = (async () => {
    while (!done) {
      const { value, done: ended } = await reader.read().catch(() => ({ value: undefined, done: true }));
      if (ended) return;
      buffer += decoder.decode(value, { stream: true });
      let end = buffer.indexOf('\n\n');
      while (end >= 0) {
        const frame = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const m = /^event: phone\ndata: (.*)$/s.exec(frame);
        if (m?.[1]) views.push(JSON.parse(m[1]) as PhoneJson);
        end = buffer.indexOf('\n\n');
      }
    }
  })();
  return {
    views,
    next: <T>(pick: (v: PhoneJson) => T | undefined, what: string) =>
      waitFor(
        () => {
          for (const v of views) {
            const found = pick(v);
            if (found !== undefined) return found;
          }
          return undefined;
        },
        { timeoutMs: 10_000, what },
      ),
    async close() {
      done = true;
      await reader.cancel().catch(() => undefined);
      await pump;
    },
  };
};

beforeAll(async () => {
  const tmp = tempDir('sandbox-phones-');
  cleanup = tmp.cleanup;
  sandbox = await startSandbox({ dataDir: tmp.dir, reset: true, ports: 0, seed: false, logLevel: 'warn' });
});
afterAll(async () => {
  await sandbox?.stop();
  cleanup?.();
});

describe('the sandbox phones', () => {
  it('everyone has their own phone; the bot is configured with the communications simulator', async () => {
    expect(sandbox.phoneBook[ANA.slackId]).toBe(ANA.phone);
    const ana = await phoneOf(ANA.slackId);
    expect(ana).toEqual({ number: ANA.phone, sms: [], calls: [] });
    expect((await phoneOf(BEN.slackId)).number).toBe(BEN.phone);
    expect(sandbox.sb.config.lifecycles['verification']).toBe(true);
    const env = sandbox.vonage.env();
    expect(env['VONAGE_FROM_NUMBER']).toBe(SWITCHBOARD_NUMBER.slice(1));
    expect(env['VONAGE_API_SECRET']).toMatch(/^(?=.*[A-Z])(?=.*[a-z])(?=.*\d).{8,25}$/);
    expect(env['VONAGE_PRIVATE_KEY']).toMatch(/-----BEGIN PRIVATE KEY-----/);
  });

  it('a newcomer verifies: /verify, the code arrives live on their phone, Enter code, verified', async () => {
    const live = await watchPhone(ANA.slackId);
    try {
      const r = await post('/api/slash', {
        user: ANA.slackId,
        channel: INCIDENTS_CHANNEL,
        text: `/verify ${ANA.phone}`,
      });
      expect(r.json).toMatchObject({ ok: true, status: 200 });
      const sms = await live.next(
        (v) => v.sms.find((m) => m.direction === 'received' && /\d{4,10}/.test(m.text)),
        'the code on Ana’s phone',
      );
      expect(sms.peer).toBe(SWITCHBOARD_NUMBER);
      const code = /(\d{4,10})/.exec(sms.text)?.[1] ?? '';
      expect(code).toBe(sandbox.vonage.phones.lastCode(ANA.phone));
      // Only Ana's phone got it.
      expect((await phoneOf(BEN.slackId)).sms).toEqual([]);

      const dm = sandbox.fake.dmChannel(ANA.slackId).id;
      const prompt = await waitFor(
        () =>
          sandbox.fake
            .messages(dm)
            .find((m) => JSON.stringify(m.blocks ?? []).includes(VERIFICATION_ACTION.enterCode)),
        { timeoutMs: 10_000, what: 'the DM with Enter code' },
      );
      const blocks = (prompt.blocks ?? []) as Array<{
        type: string;
        elements?: Array<{ action_id?: string }>;
      }>;
      const blockIndex = blocks.findIndex((b) =>
        b.elements?.some((e) => e.action_id === VERIFICATION_ACTION.enterCode),
      );
      const elementIndex =
        blocks[blockIndex]?.elements?.findIndex((e) => e.action_id === VERIFICATION_ACTION.enterCode) ?? -1;
      const clicked = await post('/api/action', {
        user: ANA.slackId,
        surface: { kind: 'message', channel: dm, ts: prompt.ts },
        blockIndex,
        elementIndex,
      });
      expect(clicked.status).toBe(200);
      const modal = await waitFor(() => sandbox.surface.modalOf(ANA.slackId), {
        timeoutMs: 10_000,
        what: 'the code modal',
      });
      const submitted = await post('/api/views/submit', {
        user: ANA.slackId,
        viewId: modal.id,
        values: { [VERIFICATION_FIELD.codeBlock]: { [VERIFICATION_FIELD.code]: code } },
      });
      expect(submitted.status).toBe(200);
      const told = await waitFor(
        () => sandbox.fake.messages(dm).find((m) => m.text.includes('is verified')),
        { timeoutMs: 10_000, what: 'Ana told she is verified' },
      );
      expect(told.text).toContain(':white_check_mark:');
      expect(told.text).not.toContain(ANA.phone);
      expect(sandbox.vonage.requestsFor('checkCode').map((q) => q.status)).toEqual([200]);
    } finally {
      await live.close();
    }
  });

  it('a text typed on the phone reaches Switchboard as a signed inbound-SMS webhook, and shows as sent', async () => {
    const empty = await post('/api/phone/sms', { user: BEN.slackId, text: '   ' });
    expect(empty).toEqual({
      status: 400,
      json: { ok: false, error: 'type a message first: the text is empty' },
    });
    const nobody = await post('/api/phone/sms', { user: 'U999NOBODY', text: 'hi' });
    expect(nobody.status).toBe(400);

    const sent = await post('/api/phone/sms', { user: BEN.slackId, text: ' ACK ' });
    expect(sent).toEqual({ status: 200, json: { ok: true } });
    const phone = await phoneOf(BEN.slackId);
    expect(phone.sms.map((m) => [m.direction, m.peer, m.text])).toEqual([
      ['sent', SWITCHBOARD_NUMBER, 'ACK'],
    ]);
    const attempt = await waitFor(
      () => sandbox.vonage.webhooks.attempts.find((a) => a.kind === 'inbound-sms'),
      { what: 'the inbound-SMS webhook' },
    );
    expect(attempt.url).toBe(`${sandbox.botUrl}/webhooks/vonage/messages`);
    expect(JSON.parse(attempt.body)).toMatchObject({
      channel: 'sms',
      from: BEN.phone.slice(1),
      to: SWITCHBOARD_NUMBER.slice(1),
      text: 'ACK',
    });
    expect(attempt.headers['authorization']).toMatch(/^Bearer [\w-]+\.[\w-]+\.[\w-]+$/);
  });

  it('a call rings live, is answered, says its text, takes keys and shows the NCCO that answered them', async () => {
    const receiver = await startReceiver(() => sandbox.vonage.signatureSecret, systemClock);
    const vonage = createVonageClient({ ...sandbox.vonage.clientOptions() });
    const live = await watchPhone(BEN.slackId);
    try {
      const answer = [{ action: 'talk', text: 'Acknowledged. Thank you.' }];
      receiver.answerNext('/input', 200, answer);
      await vonage.createCall({
        to: BEN.phone.slice(1),
        from: SWITCHBOARD_NUMBER.slice(1),
        eventUrl: `${receiver.url}/events`,
        ncco: [
          { action: 'talk', text: 'Incident 7 on api. Press 4 to acknowledge.' },
          { action: 'input', type: ['dtmf'], dtmf: { maxDigits: 1 }, eventUrl: [`${receiver.url}/input`] },
        ],
      });
      const ringing = await live.next(
        (v) => v.calls.find((c) => c.status === 'ringing'),
        'Ben’s phone ringing',
      );
      expect(ringing.from).toBe(SWITCHBOARD_NUMBER);
      // Keys before answering, or on someone else's phone, are refused with what was wrong.
      const early = await post('/api/phone/call', {
        user: BEN.slackId,
        callId: ringing.id,
        action: 'press',
        digits: '4',
      });
      expect(early).toEqual({ status: 409, json: { ok: false, error: 'the call is not waiting for keys' } });
      const notHers = await post('/api/phone/call', {
        user: ANA.slackId,
        callId: ringing.id,
        action: 'answer',
      });
      expect(notHers).toEqual({ status: 404, json: { ok: false, error: 'no such call on this phone' } });

      expect(
        (await post('/api/phone/call', { user: BEN.slackId, callId: ringing.id, action: 'answer' })).status,
      ).toBe(200);
      const answered = await live.next(
        (v) => v.calls.find((c) => c.id === ringing.id && c.status === 'answered' && c.awaitingKeys),
        'the call answered, waiting for keys',
      );
      expect(answered.spoken).toEqual(['Incident 7 on api. Press 4 to acknowledge.']);
      const again = await post('/api/phone/call', {
        user: BEN.slackId,
        callId: ringing.id,
        action: 'answer',
      });
      expect(again).toEqual({ status: 409, json: { ok: false, error: 'the call is answered, not ringing' } });
      const bad = await post('/api/phone/call', {
        user: BEN.slackId,
        callId: ringing.id,
        action: 'press',
        digits: '4; drop',
      });
      expect(bad).toEqual({
        status: 400,
        json: { ok: false, error: 'digits must be keypad keys: 0–9, * or #, at most 20 of them' },
      });

      const pressed = await post('/api/phone/call', {
        user: BEN.slackId,
        callId: ringing.id,
        action: 'press',
        digits: '4',
      });
      expect(pressed.status).toBe(200);
      const input = receiver.received.find((w) => w.path === '/input');
      expect(input?.check.ok).toBe(true);
      expect(input?.body['dtmf']).toEqual({ digits: '4', timed_out: false });
      const after = (await phoneOf(BEN.slackId)).calls.find((c) => c.id === ringing.id)!;
      expect(after.keys).toEqual([{ digits: '4', at: expect.any(String), answer }]);
      expect(after.spoken).toEqual([
        'Incident 7 on api. Press 4 to acknowledge.',
        'Acknowledged. Thank you.',
      ]);
      // The answer had no input: the call ends, and the phone says so.
      await live.next(
        (v) => v.calls.find((c) => c.id === ringing.id && c.status === 'completed'),
        'the call ended',
      );
    } finally {
      await live.close();
      await receiver.stop();
    }
  });
  it('a ringing call can be declined (the bot hears it was rejected), an answered one hung up', async () => {
    const vonage = createVonageClient({ ...sandbox.vonage.clientOptions() });
    const ncco = [
      { action: 'talk' as const, text: 'Hello.' },
      { action: 'input' as const, type: ['dtmf'] as const },
    ];
    const ring = async () => {
      const created = await vonage.createCall({
        to: ANA.phone.slice(1),
        from: SWITCHBOARD_NUMBER.slice(1),
        ncco,
      });
      return created.uuid;
    };
    const declined = await ring();
    expect(
      (await post('/api/phone/call', { user: ANA.slackId, callId: declined, action: 'reject' })).status,
    ).toBe(200);
    const hangUpEarly = await post('/api/phone/call', {
      user: ANA.slackId,
      callId: declined,
      action: 'hangup',
    });
    expect(hangUpEarly).toEqual({
      status: 409,
      json: { ok: false, error: 'the call has already ended (rejected)' },
    });
    expect((await phoneOf(ANA.slackId)).calls.find((c) => c.id === declined)?.status).toBe('rejected');
    const rejected = await waitFor(
      () =>
        sandbox.vonage.webhooks.attempts.find(
          (a) => a.kind === 'call-event' && a.body.includes(declined) && a.body.includes('"rejected"'),
        ),
      { what: 'the rejected call event' },
    );
    expect(rejected.url).toBe(`${sandbox.botUrl}/webhooks/vonage/voice`);

    const answered = await ring();
    await post('/api/phone/call', { user: ANA.slackId, callId: answered, action: 'answer' });
    expect(
      (await post('/api/phone/call', { user: ANA.slackId, callId: answered, action: 'hangup' })).status,
    ).toBe(200);
    expect((await phoneOf(ANA.slackId)).calls.find((c) => c.id === answered)?.status).toBe('completed');
    const unknown = await post('/api/phone/call', { user: ANA.slackId, callId: answered, action: 'dial' });
    expect(unknown).toEqual({
      status: 400,
      json: { ok: false, error: 'action must be one of answer, reject, hangup, press' },
    });
  });
});

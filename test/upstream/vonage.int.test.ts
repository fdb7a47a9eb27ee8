import { generateKeyPairSync } from 'node:crypto';
import { Agent } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import {
  startVonageSimulator,
  type VonageSimulator,
  type VonageSimulatorOptions,
} from '../../sandbox/simulators/vonage/index.ts';
import { type ManualClock, manualClock } from '../../src/core/clock.ts';
import {
  createVonageClient,
  type VonageClientOptions,
  type VonageClientWithBudgets,
} from '../../src/upstream/vonage.ts';
import { waitFor } from '../support/waitFor.ts';
import { type Receiver, startReceiver } from './vonageReceiver.ts';

/**
 * The communications client against the simulator over loopback: each operation as the vendor
 * takes it (the simulator checks every request against the vendored OpenAPI files and answers
 * what the vendor would), each error of the contract's table, the budgets (a storm queues; the
 * simulator's own request times, on the shared manual clock, prove the pace), the JWT the
 * simulator accepts, and credentials that never reach an error.
 */
const NOW = '2026-11-23T10:00:00.000Z';
const PHONE = '447700900123';

let sim: VonageSimulator;
let clock: ManualClock;
let dispatcher: Agent;
let receiver: Receiver;
let vonage: VonageClientWithBudgets;
let timers: ReturnType<typeof manualTimers>;

/** Waits on the manual clock: a test lets the earliest wait go with `fireNext()`. */
const manualTimers = (c: ManualClock) => {
  const waiting: Array<{ at: number; resolve: () => void }> = [];
  return {
    waitUntil: (at: number) =>
      c.now().getTime() >= at
        ? Promise.resolve()
        : new Promise<void>((resolve) => waiting.push({ at, resolve })),
    pending: () => waiting.length,
    fireNext() {
      waiting.sort((a, b) => a.at - b.at);
      const next = waiting[0];
      if (!next) return;
      if (c.now().getTime() < next.at) c.set(new Date(next.at));
      for (const w of waiting.filter((x) => x.at <= c.now().getTime())) {
        waiting.splice(waiting.indexOf(w), 1);
        w.resolve();
      }
    },
  };
};

/**
 * Runs the work to completion, moving the clock to the next budget wait only when no request is
 * out (every one let go has been answered and its answer read): time on the shared manual clock
 * moves as it would in reality, never while a request is on its way.
 */
const drive = async <T>(work: () => Promise<T>): Promise<T> => {
  let finished = false;
  const out = work().finally(() => {
    finished = true;
  });
  out.catch(() => undefined);
  while (!finished) {
    await waitFor(() => finished || (timers.pending() > 0 && vonage.inFlight() === 0), {
      what: 'every request let go to be answered',
    });
    if (!finished) timers.fireNext();
  }
  return out;
};

const start = async (
  simOptions: VonageSimulatorOptions = {},
  clientOptions: Partial<VonageClientOptions> = {},
) => {
  clock = manualClock(NOW);
  timers = manualTimers(clock);
  dispatcher = new Agent();
  sim = await startVonageSimulator({ clock, ...simOptions });
  receiver = await startReceiver(() => sim.signatureSecret, clock);
  sim.connect(receiver.url);
  vonage = createVonageClient({
    ...sim.clientOptions(),
    dispatcher,
    clock,
    waitUntil: timers.waitUntil,
    ...clientOptions,
  });
};

afterEach(async () => {
  sim.assertNoViolations();
  await sim.stop();
  await receiver.stop();
  await dispatcher.close();
});

const failure = (p: Promise<unknown>) =>
  p.then(
    () => {
      throw new Error('expected a failure');
    },
    (e: unknown) => e as { code: string; message: string; details: Record<string, unknown> },
  );

const begin = (clientRef = 'attempt1') =>
  vonage.startVerification({
    to: PHONE,
    brand: 'Switchboard',
    codeLength: 6,
    channelTimeoutSeconds: 120,
    locale: 'en-gb',
    clientRef,
  });

describe('Verify v2', () => {
  it('starts with the brand, SMS then voice, code length, channel timeout, locale and client_ref; the code checks', async () => {
    await start();
    const { requestId } = await begin();
    expect(sim.requestsFor('startVerification')[0]?.body).toEqual({
      brand: 'Switchboard',
      workflow: [
        { channel: 'sms', to: PHONE },
        { channel: 'voice', to: PHONE },
      ],
      code_length: 6,
      channel_timeout: 120,
      locale: 'en-gb',
      client_ref: 'attempt1',
    });
    expect(sim.requestsFor('startVerification')[0]?.headers.authorization).toMatch(/^Bearer eyJ/);
    const code = sim.phones.lastCode(PHONE)!;
    expect(code).toMatch(/^\d{6}$/);
    expect(sim.phones.inbox(PHONE).at(-1)?.text).toContain(code);

    await expect(vonage.checkCode(requestId, code)).resolves.toEqual({ status: 'completed' });
    const summary = await receiver.waitFor((w) => w.body.type === 'summary');
    expect(summary.path).toBe('/webhooks/vonage/verify');
    expect(summary.check.ok).toBe(true);
    expect(summary.body).toMatchObject({
      request_id: requestId,
      status: 'completed',
      client_ref: 'attempt1',
    });
  });

  it('with Basic credentials it works the same, but the vendor sends no callbacks', async () => {
    await start({}, { auth: { verify: 'basic', messages: 'basic' } });
    const { requestId } = await begin();
    expect(sim.requestsFor('startVerification')[0]?.headers.authorization).toMatch(/^Basic /);
    await vonage.checkCode(requestId, sim.phones.lastCode(PHONE)!);
    await vonage.sendSms({ to: PHONE, from: sim.fromNumber, text: 'x', clientRef: 'c1' });
    expect(sim.requestsFor('sendSms')[0]?.headers.authorization).toMatch(/^Basic /);
    await sim.webhooks.idle();
    expect(receiver.on('/webhooks/vonage/verify')).toHaveLength(0);
    expect(receiver.on('/webhooks/vonage/messages')).toHaveLength(2);
  });

  it('a wrong code is wrong_code (vendor 400 and seed 401); the third fails the request: start_again', async () => {
    await start();
    const { requestId } = await begin();
    expect(await failure(vonage.checkCode(requestId, '000000'))).toMatchObject({
      code: 'SB_VALIDATION',
      details: { reason: 'wrong_code', status: 400 },
    });
    expect(await failure(vonage.checkCode(requestId, '000001'))).toMatchObject({
      code: 'SB_VALIDATION',
      details: { reason: 'wrong_code' },
    });
    expect(await failure(vonage.checkCode(requestId, '000002'))).toMatchObject({
      code: 'SB_ILLEGAL_STATE',
      details: { reason: 'start_again', status: 410 },
    });
    expect(sim.verification(requestId)?.status).toBe('failed');
    const summary = await receiver.waitFor((w) => w.body.type === 'summary');
    expect(summary.body.status).toBe('failed');
  });

  it("reads the seed's 401 on a check as a wrong code, but a 401 about credentials as auth", async () => {
    await start({ wrongCodeStatus: 401 });
    const { requestId } = await begin();
    expect(await failure(vonage.checkCode(requestId, '999999'))).toMatchObject({
      code: 'SB_VALIDATION',
      details: { reason: 'wrong_code', status: 401 },
    });
    sim.failNext('checkCode', { status: 401 });
    expect(await failure(vonage.checkCode(requestId, '999999'))).toMatchObject({ code: 'SB_UPSTREAM_AUTH' });
  });

  it('a malformed code is refused before it costs one of the three attempts', async () => {
    await start();
    const { requestId } = await begin();
    expect(await failure(vonage.checkCode(requestId, '12'))).toMatchObject({
      code: 'SB_VALIDATION',
      details: { field: 'code' },
    });
    expect(sim.requestsFor('checkCode')).toHaveLength(0);
  });

  it('moves from SMS to a voice call after the channel timeout, on the clock; then expires: start_again', async () => {
    await start();
    const { requestId } = await begin();
    expect(sim.phones.calls(PHONE)).toHaveLength(0);
    clock.advance(120_000);
    sim.runTimers();
    const call = sim.phones.calls(PHONE).at(-1)!;
    expect(call.kind).toBe('verify');
    expect(call.spoken.join(' ')).toContain(sim.phones.lastCode(PHONE)!.split('').join(' '));
    clock.advance(120_000);
    expect(await failure(vonage.checkCode(requestId, sim.phones.lastCode(PHONE)!))).toMatchObject({
      code: 'SB_ILLEGAL_STATE',
      details: { reason: 'start_again' },
    });
    expect(sim.verification(requestId)?.status).toBe('expired');
  });

  it('next workflow calls now ("call me instead"); once on the last step there is none: start_again', async () => {
    await start();
    const { requestId } = await begin();
    await vonage.nextWorkflow(requestId);
    expect(sim.phones.calls(PHONE).at(-1)?.kind).toBe('verify');
    expect(await failure(vonage.nextWorkflow(requestId))).toMatchObject({
      code: 'SB_ILLEGAL_STATE',
      details: { reason: 'start_again', status: 409 },
    });
    await expect(vonage.checkCode(requestId, sim.phones.lastCode(PHONE)!)).resolves.toEqual({
      status: 'completed',
    });
  });

  it('cancel: refused before 30 s (cannot_cancel_yet) and after the second step (cannot_cancel_now), else done', async () => {
    await start();
    const first = await begin();
    expect(await failure(vonage.cancelVerification(first.requestId))).toMatchObject({
      code: 'SB_ILLEGAL_STATE',
      details: { reason: 'cannot_cancel_yet' },
    });
    clock.advance(30_000);
    await vonage.cancelVerification(first.requestId);
    expect(sim.verification(first.requestId)?.status).toBe('cancelled');

    const second = await begin('attempt2');
    clock.advance(30_000);
    await vonage.nextWorkflow(second.requestId);
    expect(await failure(vonage.cancelVerification(second.requestId))).toMatchObject({
      code: 'SB_ILLEGAL_STATE',
      details: { reason: 'cannot_cancel_now' },
    });
  });

  it('a second verification to a number with one running is already_running', async () => {
    await start();
    await begin();
    expect(await failure(begin('attempt2'))).toMatchObject({
      code: 'SB_ILLEGAL_STATE',
      details: { reason: 'already_running', status: 409, vendorCode: 'concurrent' },
    });
  });

  it('out of credit is out_of_credit (RFC 7807 parsed)', async () => {
    await start();
    sim.setCredit(0);
    const e = await failure(begin());
    expect(e).toMatchObject({
      code: 'SB_UPSTREAM_REJECTED',
      details: { reason: 'out_of_credit', status: 402, vendorCode: 'low-balance' },
    });
    expect(e.details.vendorMessage).toMatch(/Low balance: .*balance being low/);
  });

  it('a 422 names the field the service refused', async () => {
    await start();
    sim.failNext('startVerification', { status: 422, field: 'brand' });
    const e = await failure(begin());
    expect(e).toMatchObject({ code: 'SB_VALIDATION', details: { reason: 'invalid_field', field: 'brand' } });
    expect(e.message).toContain('brand');
  });

  it('refuses hostile input before sending anything, naming what was wrong', async () => {
    await start();
    const bad = [
      [{ to: '+44 7700 900123' }, 'to'],
      [{ to: '12' }, 'to'],
      [{ brand: 'Switch{board}' }, 'brand'],
      [{ codeLength: 3 }, 'codeLength'],
      [{ channelTimeoutSeconds: 5000 }, 'channelTimeoutSeconds'],
      [{ locale: 'english' }, 'locale'],
      [{ clientRef: 'has-dashes' }, 'clientRef'],
    ] as const;
    for (const [override, field] of bad) {
      const e = await failure(
        vonage.startVerification({ to: PHONE, brand: 'Switchboard', clientRef: 'ok1', ...override }),
      );
      expect(e).toMatchObject({ code: 'SB_VALIDATION', details: { field } });
    }
    expect(await failure(vonage.checkCode('../../v1/calls', '123456'))).toMatchObject({
      details: { field: 'requestId' },
    });
    expect(sim.requests).toHaveLength(0);
  });
});

describe('Messages SMS', () => {
  it('sends with client_ref; status webhooks say submitted then delivered, signed', async () => {
    await start();
    const { messageUuid } = await vonage.sendSms({
      to: PHONE,
      from: sim.fromNumber,
      text: 'PINC042 needs you. Reply 4 to acknowledge.',
      clientRef: 'page-PINC042-1',
    });
    expect(sim.phones.inbox(PHONE).at(-1)).toMatchObject({ messageUuid, clientRef: 'page-PINC042-1' });
    await sim.webhooks.idle();
    const statuses = receiver.on('/webhooks/vonage/messages');
    expect(statuses.map((w) => [w.body.status, w.body.client_ref, w.check.ok])).toEqual([
      ['submitted', 'page-PINC042-1', true],
      ['delivered', 'page-PINC042-1', true],
    ]);
  });

  it('a phone that cannot take it: rejected, with the reason', async () => {
    await start();
    sim.phones.reject(PHONE);
    await vonage.sendSms({ to: PHONE, from: sim.fromNumber, text: 'hello', clientRef: 'r1' });
    const rejected = await receiver.waitFor((w) => w.body.status === 'rejected');
    expect(rejected.body.error).toMatchObject({
      title: '1300',
      detail: expect.stringContaining('Absent subscriber'),
    });
  });
});

describe('Voice', () => {
  const ncco = (eventUrl: string) =>
    [
      { action: 'talk', text: 'Incident 42, database down. Press 4 to acknowledge, 6 to resolve.' },
      {
        action: 'input',
        type: ['dtmf'],
        dtmf: { maxDigits: 1, timeOut: 10 },
        eventUrl: [eventUrl],
        eventMethod: 'POST',
      },
    ] as const;

  it('creates a call with an NCCO and a fresh RS256 JWT; the phone hears it, presses 4, hears the answer', async () => {
    await start();
    const input = `${receiver.url}/webhooks/vonage/voice/input`;
    const call = await vonage.createCall({
      to: PHONE,
      from: sim.fromNumber,
      ncco: ncco(input),
      eventUrl: `${receiver.url}/webhooks/vonage/voice`,
      ringingSeconds: 45,
    });
    expect(call).toMatchObject({ status: 'started', uuid: expect.any(String) });
    expect(sim.requestsFor('createCall')[0]?.headers.authorization).toMatch(/^Bearer eyJ/);

    sim.phones.answer(call.uuid);
    expect(sim.phones.call(call.uuid).spoken).toEqual([
      'Incident 42, database down. Press 4 to acknowledge, 6 to resolve.',
    ]);
    receiver.answerNext('/webhooks/vonage/voice/input', 200, [
      { action: 'talk', text: 'Acknowledged. Thank you.' },
    ]);
    const pressed = await sim.phones.pressKeys(call.uuid, '4');
    expect(pressed.status).toBe(200);
    expect(pressed.call.spoken.at(-1)).toBe('Acknowledged. Thank you.');
    expect(pressed.call.status).toBe('completed');
    expect(pressed.call.inputs).toEqual([
      {
        digits: '4',
        at: NOW,
        status: 200,
        ncco: [{ action: 'talk', text: 'Acknowledged. Thank you.' }],
      },
    ]);
    const dtmf = receiver.on('/webhooks/vonage/voice/input')[0]!;
    expect(dtmf.check.ok).toBe(true);
    expect(dtmf.body).toMatchObject({ uuid: call.uuid, dtmf: { digits: '4', timed_out: false } });

    await sim.webhooks.idle();
    expect(receiver.on('/webhooks/vonage/voice').map((w) => w.body.status)).toEqual([
      'started',
      'ringing',
      'answered',
      'completed',
    ]);
  });

  it('hangs up a page nobody needs any more: ringing → cancelled, answered → completed; an ended one is done', async () => {
    await start();
    const ringing = await vonage.createCall({
      to: PHONE,
      from: sim.fromNumber,
      ncco: [{ action: 'talk', text: 'a' }],
    });
    const answered = await vonage.createCall({
      to: PHONE,
      from: sim.fromNumber,
      ncco: [
        { action: 'talk', text: 'b' },
        { action: 'input', type: ['dtmf'], eventUrl: [`${receiver.url}/webhooks/vonage/voice`] },
      ],
    });
    sim.phones.answer(answered.uuid);
    await vonage.hangUpCall(ringing.uuid);
    await vonage.hangUpCall(answered.uuid);
    expect(sim.phones.call(ringing.uuid).status).toBe('cancelled');
    expect(sim.phones.call(answered.uuid).status).toBe('completed');
    await vonage.hangUpCall(answered.uuid);
    await vonage.hangUpCall('00000000-0000-4000-8000-000000000000');
    expect(
      sim.requestsFor('hangUpCall').map((r) => [r.status, (r.body as { action: string }).action]),
    ).toEqual([
      [204, 'hangup'],
      [204, 'hangup'],
      [204, 'hangup'],
      [404, 'hangup'],
    ]);
    expect(sim.requestsFor('hangUpCall')[0]?.headers.authorization).toMatch(/^Bearer eyJ/);
  });

  it('two calls never reuse a JWT (fresh jti each)', async () => {
    await start();
    await vonage.createCall({ to: PHONE, from: sim.fromNumber, ncco: [{ action: 'talk', text: 'one' }] });
    await vonage.createCall({ to: PHONE, from: sim.fromNumber, ncco: [{ action: 'talk', text: 'two' }] });
    const [a, b] = sim.requestsFor('createCall').map((r) => r.headers.authorization);
    expect(a).not.toBe(b);
  });

  it('a JWT signed by another key is refused: SB_UPSTREAM_AUTH', async () => {
    const other = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({
      type: 'pkcs8',
      format: 'pem',
    });
    await start({}, { privateKey: other.toString() });
    expect(
      await failure(
        vonage.createCall({ to: PHONE, from: sim.fromNumber, ncco: [{ action: 'talk', text: 'x' }] }),
      ),
    ).toMatchObject({ code: 'SB_UPSTREAM_AUTH', details: { status: 401 } });
  });
});

describe('budgets', () => {
  it('ten calls at once against 3 a second: none meets a 429, and they go no faster than the limit', async () => {
    await start();
    await drive(() =>
      Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          vonage.createCall({
            to: PHONE,
            from: sim.fromNumber,
            ncco: [{ action: 'talk', text: `page ${i}` }],
          }),
        ),
      ),
    );
    const sent = sim.requestsFor('createCall');
    expect(sent.map((r) => r.status)).toEqual(Array(10).fill(201));
    const at = sent.map((r) => r.at);
    // Any four consecutive requests span at least a second (at most 3 in any one-second window).
    for (let i = 0; i + 3 < at.length; i++) expect(at[i + 3]! - at[i]!).toBeGreaterThanOrEqual(1000);
    // And no slower than the limit needs: ten calls are three full windows after the first.
    expect(at[9]! - at[0]!).toBeGreaterThanOrEqual(3000);
    expect(at[9]! - at[0]!).toBeLessThan(3200);
  });

  it('every caller of one client shares the budget (calls and SMS have their own)', async () => {
    await start({}, { limits: { messages: 2 } });
    await drive(() =>
      Promise.all([
        ...Array.from({ length: 5 }, (_, i) =>
          vonage.sendSms({ to: PHONE, from: sim.fromNumber, text: `t${i}`, clientRef: `c${i}` }),
        ),
        ...Array.from({ length: 4 }, () =>
          vonage.createCall({ to: PHONE, from: sim.fromNumber, ncco: [{ action: 'talk', text: 'x' }] }),
        ),
      ]),
    );
    await sim.webhooks.idle();
    expect(sim.requests.filter((r) => r.status === 429)).toHaveLength(0);
    const sms = sim.requestsFor('sendSms').map((r) => r.at);
    for (let i = 0; i + 2 < sms.length; i++) expect(sms[i + 2]! - sms[i]!).toBeGreaterThanOrEqual(1000);
  });

  it('a 429 anyway (another client on the key) is SB_UPSTREAM_RATE_LIMITED and closes the budget for Retry-After', async () => {
    await start();
    sim.failNext('sendSms', { status: 429, retryAfterSeconds: 2 });
    const e = await failure(vonage.sendSms({ to: PHONE, from: sim.fromNumber, text: 'x', clientRef: 'c1' }));
    expect(e).toMatchObject({ code: 'SB_UPSTREAM_RATE_LIMITED', details: { retryAfterMs: 2000 } });
    const before = clock.now().getTime();
    await drive(() => vonage.sendSms({ to: PHONE, from: sim.fromNumber, text: 'y', clientRef: 'c2' }));
    expect(sim.requestsFor('sendSms').at(-1)!.at - before).toBeGreaterThanOrEqual(2000);
  });

  it('a queue deeper than maxQueueMs is refused unsent, saying when to come back', async () => {
    await start({}, { maxQueueMs: 1_500 });
    const call = () =>
      vonage.createCall({ to: PHONE, from: sim.fromNumber, ncco: [{ action: 'talk', text: 'x' }] });
    await Promise.all([call(), call(), call()]);
    // Three went; the next three wait one window; a seventh would wait two: refused, nothing sent.
    const waiting = [call(), call(), call()];
    await waitFor(() => vonage.queued('callCreation') === 3, { what: 'three calls queued' });
    const e = await failure(call());
    expect(e).toMatchObject({ code: 'SB_UPSTREAM_RATE_LIMITED', details: { retryAfterSource: 'budget' } });
    expect(e.details.retryAfterMs).toBe(2_000);
    expect(sim.requestsFor('createCall')).toHaveLength(3);
    await drive(() => Promise.all(waiting));
    expect(sim.requestsFor('createCall')).toHaveLength(6);
  });
});

describe('errors and credentials', () => {
  it('never puts the credentials an upstream echoes into an error (Basic, whole and decoded)', async () => {
    await start({}, { auth: { verify: 'basic' } });
    sim.failNext('startVerification', { status: 403, echoAuthorization: true });
    const e = await failure(begin());
    expect(e).toMatchObject({ code: 'SB_UPSTREAM_AUTH' });
    const seen = JSON.stringify({ message: e.message, details: e.details });
    const basic = Buffer.from(`${sim.apiKey}:${sim.apiSecret}`).toString('base64');
    expect(seen).not.toContain(basic);
    expect(seen).not.toContain(sim.apiSecret);
    expect(seen).toContain('[Redacted]');
  });

  it('nor the application JWT of a Voice request', async () => {
    await start();
    sim.failNext('createCall', { status: 403, echoAuthorization: true });
    const e = await failure(
      vonage.createCall({ to: PHONE, from: sim.fromNumber, ncco: [{ action: 'talk', text: 'x' }] }),
    );
    expect(e).toMatchObject({ code: 'SB_UPSTREAM_AUTH' });
    const token = String(sim.requestsFor('createCall')[0]?.headers.authorization).slice('Bearer '.length);
    const seen = JSON.stringify({ message: e.message, details: e.details });
    expect(token.length).toBeGreaterThan(100);
    expect(seen).not.toContain(token);
    expect(seen).not.toContain(token.split('.')[2]);
  });

  it('a 5xx or a reset is SB_UPSTREAM_UNAVAILABLE, retryable', async () => {
    await start();
    sim.failNext('sendSms', { status: 500 });
    expect(
      await failure(vonage.sendSms({ to: PHONE, from: sim.fromNumber, text: 'x', clientRef: 'c' })),
    ).toMatchObject({
      code: 'SB_UPSTREAM_UNAVAILABLE',
      details: { retryable: true },
    });
    sim.failNext('createCall', { status: 'reset' });
    expect(
      await failure(
        vonage.createCall({ to: PHONE, from: sim.fromNumber, ncco: [{ action: 'talk', text: 'x' }] }),
      ),
    ).toMatchObject({ code: 'SB_UPSTREAM_UNAVAILABLE' });
  });
});

describe('Number Insight basic', () => {
  it('looks a number up; any failure, and everything after the 2027-02-04 sunset, is null', async () => {
    await start();
    await expect(vonage.lookupNumber(PHONE)).resolves.toEqual({
      international: PHONE,
      national: '07700 900123',
      countryCode: 'GB',
      countryName: 'United Kingdom',
    });
    sim.failNext('lookupNumber', { status: 500 });
    await expect(vonage.lookupNumber(PHONE)).resolves.toBeNull();
    const asked = sim.requestsFor('lookupNumber').length;
    clock.set('2027-02-04T00:00:00.000Z');
    await expect(vonage.lookupNumber(PHONE)).resolves.toBeNull();
    expect(sim.requestsFor('lookupNumber')).toHaveLength(asked);
  });

  it('the simulator itself answers 410 after the sunset, which the client reads as null', async () => {
    await start();
    const early = createVonageClient({
      ...sim.clientOptions(),
      dispatcher,
      clock: manualClock('2026-01-01T00:00:00Z'),
    });
    clock.set('2027-03-01T00:00:00.000Z');
    await expect(early.lookupNumber(PHONE)).resolves.toBeNull();
    expect(sim.requestsFor('lookupNumber').at(-1)?.status).toBe(410);
  });
});

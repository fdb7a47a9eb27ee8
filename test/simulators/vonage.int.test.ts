import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { assertNoContractViolations, simulatorEnv } from '../../sandbox/simulators/simulator.ts';
import { startVonageSimulator, type VonageSimulator } from '../../sandbox/simulators/vonage/index.ts';
import { type ManualClock, manualClock } from '../../src/core/clock.ts';
import { createApplicationJwtSigner } from '../../src/upstream/vonageJwt.ts';
import { gate } from '../support/waitFor.ts';
import { type Receiver, startReceiver } from '../upstream/vonageReceiver.ts';

/**
 * The communications simulator on its own, over loopback with raw requests: what it enforces
 * (credentials, the vendored documents, per-API rate limits), how it sends webhooks (signed,
 * retried, redelivered, held), the phones a test or the sandbox drives, faults and delays, and
 * its saved state.
 */
const NOW = '2026-11-23T10:00:00.000Z';
const PHONE = '447700900123';

let sim: VonageSimulator;
let clock: ManualClock;
let receiver: Receiver;

const start = async (options: Parameters<typeof startVonageSimulator>[0] = {}) => {
  clock = manualClock(NOW);
  sim = await startVonageSimulator({ clock, webhooks: { retryDelaysMs: [1, 1, 1] }, ...options });
  receiver = await startReceiver(() => sim.signatureSecret, clock);
  sim.connect(receiver.url);
};

afterEach(async () => {
  // Whatever a test provoked on purpose it has cleared: anything left is the simulator's own fault.
  const left = sim.contractViolations();
  await sim.stop();
  await receiver.stop();
  expect(left).toEqual([]);
});

const basic = () => `Basic ${Buffer.from(`${sim.apiKey}:${sim.apiSecret}`).toString('base64')}`;
const jwt = () => createApplicationJwtSigner({ ...sim, now: () => clock.now() })();

const post = async (path: string, body: unknown, authorization?: string) => {
  const res = await request(`${sim.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(authorization ? { authorization } : {}) },
    body: JSON.stringify(body),
  });
  const text = await res.body.text();
  return {
    status: res.statusCode,
    headers: res.headers,
    body: text ? (JSON.parse(text) as Record<string, unknown>) : undefined,
  };
};

const call = async (text = 'hello', extra: Record<string, unknown> = {}) =>
  post(
    '/v1/calls',
    {
      to: [{ type: 'phone', number: PHONE }],
      from: { type: 'phone', number: sim.fromNumber },
      ncco: [{ action: 'talk', text }],
      ...extra,
    },
    `Bearer ${await jwt()}`,
  );

const sms = (text: string, authorization = basic()) =>
  post(
    '/v1/messages',
    { message_type: 'text', channel: 'sms', to: PHONE, from: sim.fromNumber, text, client_ref: 'r1' },
    authorization,
  );

describe('the simulator as a Simulator', () => {
  it("hands the bot the verification lifecycle's variables, and reports nothing when nothing broke the contract", async () => {
    await start();
    expect(simulatorEnv([sim])).toEqual({
      VONAGE_API_URL: sim.url,
      VONAGE_REST_URL: sim.url,
      VONAGE_API_KEY: sim.apiKey,
      VONAGE_API_SECRET: sim.apiSecret,
      VONAGE_APPLICATION_ID: sim.applicationId,
      VONAGE_PRIVATE_KEY: expect.stringContaining('-----BEGIN PRIVATE KEY-----'),
      VONAGE_SIGNATURE_SECRET: sim.signatureSecret,
      VONAGE_FROM_NUMBER: sim.fromNumber,
    });
    expect((await sms('hi')).status).toBe(202);
    assertNoContractViolations([sim]);
  });

  it('saves and restores its state: a verification started before goes on after', async () => {
    await start();
    const started = await post(
      '/v2/verify',
      { brand: 'Switchboard', workflow: [{ channel: 'sms', to: PHONE }] },
      basic(),
    );
    const code = sim.phones.lastCode(PHONE)!;
    const saved = JSON.parse(JSON.stringify(sim.exportState())) as ReturnType<typeof sim.exportState>;
    const next = await startVonageSimulator({ clock, apiKey: sim.apiKey, apiSecret: sim.apiSecret });
    try {
      next.importState(saved);
      expect(next.phones.inbox(PHONE).at(-1)?.text).toContain(code);
      const res = await request(`${next.url}/v2/verify/${String(started.body?.request_id)}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: basic() },
        body: JSON.stringify({ code }),
      });
      expect(res.statusCode).toBe(200);
      await res.body.text();
    } finally {
      await next.stop();
    }
  });
});

describe('what it enforces', () => {
  it('credentials: none or wrong → 401; Voice wants the application JWT, Messages takes either', async () => {
    await start();
    expect((await sms('x', '')).status).toBe(401);
    expect((await sms('x', `Basic ${Buffer.from('simkey01:wrong').toString('base64')}`)).status).toBe(401);
    expect((await sms('x', `Bearer ${await jwt()}`)).status).toBe(202);
    const byBasic = await post(
      '/v1/calls',
      {
        to: [{ type: 'phone', number: PHONE }],
        from: { type: 'phone', number: sim.fromNumber },
        ncco: [{ action: 'talk', text: 'x' }],
      },
      basic(),
    );
    expect(byBasic).toMatchObject({ status: 401, body: { title: 'Unauthorized' } });
    expect(byBasic.headers['content-type']).toBe('application/problem+json');
    expect((await call()).status).toBe(201);
  });

  it('a JWT used twice is a contract violation', async () => {
    await start();
    const token = await jwt();
    const body = {
      to: [{ type: 'phone', number: PHONE }],
      from: { type: 'phone', number: sim.fromNumber },
      ncco: [{ action: 'talk', text: 'x' }],
    };
    await post('/v1/calls', body, `Bearer ${token}`);
    await post('/v1/calls', body, `Bearer ${token}`);
    expect(sim.contractViolations()).toEqual([
      { simulator: 'vonage', summary: expect.stringContaining('a JWT jti was used twice') },
    ]);
    sim.clearViolations();
  });

  it('a request the vendored document refuses is a violation and a 422 naming the parameter', async () => {
    await start();
    const res = await post(
      '/v1/messages',
      { message_type: 'text', channel: 'sms', from: sim.fromNumber, text: 'no to' },
      basic(),
    );
    expect(res.status).toBe(422);
    expect(res.body?.invalid_parameters).toBeDefined();
    expect(sim.violations).toHaveLength(1);
    expect(() => sim.assertNoViolations()).toThrow(/SendMessage/);
    sim.clearViolations();
    const unknown = await post('/v1/nothing', {}, basic());
    expect(unknown.status).toBe(404);
    expect(sim.violations[0]?.kind).toBe('route');
    sim.clearViolations();
  });

  it('call creation: 3 a second on its clock; the 4th gets a 429 with Retry-After; a second later it goes', async () => {
    await start();
    for (let i = 0; i < 3; i++) expect((await call()).status).toBe(201);
    const refused = await call();
    expect(refused.status).toBe(429);
    expect(refused.headers['retry-after']).toBe('1');
    expect(refused.headers['x-ratelimit-limit']).toBe('3');
    expect(refused.headers['x-ratelimit-remaining']).toBe('0');
    expect(refused.body).toMatchObject({ title: 'Rate Limit Hit' });
    // Messages has its own window.
    expect((await sms('x')).status).toBe(202);
    clock.advance(1000);
    expect((await call()).status).toBe(201);
  });

  it('the legacy SMS API takes its form with api_key and api_secret', async () => {
    await start();
    const res = await request(`${sim.url}/sms/json`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        api_key: sim.apiKey,
        api_secret: sim.apiSecret,
        from: 'Switchboard',
        to: PHONE,
        text: 'legacy',
      }).toString(),
    });
    expect(res.statusCode).toBe(200);
    expect(await res.body.json()).toMatchObject({ 'message-count': '1', messages: [{ status: '0' }] });
    expect(sim.phones.inbox(PHONE).at(-1)?.text).toBe('legacy');
    sim.assertNoViolations();
  });
});

describe('webhooks', () => {
  it('are retried until the bot answers 2xx, each attempt signed afresh', async () => {
    await start();
    receiver.answerNext('/webhooks/vonage/messages', 500);
    receiver.answerNext('/webhooks/vonage/messages', 503);
    await sms('retry me');
    await sim.webhooks.idle();
    const submitted = sim.webhooks.attempts.filter((a) => a.body.includes('"submitted"'));
    expect(submitted.map((a) => [a.attempt, a.status, a.outcome])).toEqual([
      [1, 500, 'retrying'],
      [2, 503, 'retrying'],
      [3, 200, 'delivered'],
    ]);
    expect(new Set(submitted.map((a) => a.headers.authorization)).size).toBe(3);
    const got = receiver.on('/webhooks/vonage/messages').filter((w) => w.body.status === 'submitted');
    // What names the delivery across its attempts: the body's hash, not the token's jti.
    const claims = got.map((w) => (w.check.ok ? w.check.claims : undefined));
    expect(claims.every((c) => c !== undefined)).toBe(true);
    expect(new Set(claims.map((c) => c?.payload_hash)).size).toBe(1);
    expect(new Set(claims.map((c) => c?.jti)).size).toBe(3);
  });

  it('give up after the last retry', async () => {
    await start();
    for (let i = 0; i < 4; i++) receiver.answerNext('/webhooks/vonage/messages', 500);
    await sms('never');
    await sim.webhooks.idle();
    expect(sim.webhooks.attempts.filter((a) => a.body.includes('"submitted"')).at(-1)?.outcome).toBe(
      'failed',
    );
  });

  it('can be redelivered (the same body twice) and held until released', async () => {
    await start();
    sim.webhooks.duplicateNext();
    sim.webhooks.hold();
    await sms('held');
    expect(sim.webhooks.heldCount()).toBe(2);
    await sim.webhooks.idle();
    expect(receiver.received).toHaveLength(0);
    sim.webhooks.release();
    await sim.webhooks.idle();
    const bodies = receiver.on('/webhooks/vonage/messages').map((w) => w.raw.toString());
    expect(bodies).toHaveLength(3);
    expect(bodies[0]).toBe(bodies[1]);
    expect(JSON.parse(bodies[2]!).status).toBe('delivered');
  });
});

describe('phones', () => {
  it('a reply by SMS is an inbound webhook, signed, from the phone to the virtual number', async () => {
    await start();
    const delivered = await sim.phones.replySms(`+${PHONE}`, 'ACK');
    expect(delivered.ok).toBe(true);
    const inbound = receiver.on('/webhooks/vonage/messages')[0]!;
    expect(inbound.check.ok).toBe(true);
    expect(inbound.body).toMatchObject({ channel: 'sms', from: PHONE, to: sim.fromNumber, text: 'ACK' });
    expect(sim.phones.sent(PHONE).map((s) => s.text)).toEqual(['ACK']);
  });

  it('lists the phones and says which one changed, for a console that shows them live', async () => {
    await start();
    const seen: string[] = [];
    const stop = sim.phones.onChange((n) => seen.push(n));
    await sms('one');
    const created = await call('two');
    sim.phones.answer(String(created.body?.uuid));
    await sim.phones.replySms('447700900555', 'hi');
    stop();
    await sms('unseen');
    expect(sim.phones.numbers()).toEqual([PHONE, '447700900555']);
    expect(seen).toEqual([PHONE, PHONE, PHONE, PHONE, '447700900555']);
  });

  it('a busy phone: the call is started then busy; restored, it rings again', async () => {
    await start();
    sim.phones.reject(PHONE, 'busy');
    await call();
    await sim.webhooks.idle();
    expect(receiver.on('/webhooks/vonage/voice').map((w) => w.body.status)).toEqual(['started', 'busy']);
    sim.phones.restore(PHONE);
    await call();
    await sim.webhooks.idle();
    expect(
      receiver
        .on('/webhooks/vonage/voice')
        .map((w) => w.body.status)
        .slice(2),
    ).toEqual(['started', 'ringing']);
  });

  it('an unanswered call times out after its ringing timer, on the clock; a hang-up completes with a duration', async () => {
    await start();
    const a = await call('unanswered', { ringing_timer: 30 });
    const b = await call('answered');
    clock.advance(29_000);
    sim.runTimers();
    expect(sim.phones.call(String(a.body?.uuid)).status).toBe('ringing');
    sim.phones.answer(String(b.body?.uuid));
    clock.advance(1_000);
    sim.runTimers();
    expect(sim.phones.call(String(a.body?.uuid)).status).toBe('timeout');
    // The NCCO had no input: the call said its piece and ended.
    expect(sim.phones.call(String(b.body?.uuid))).toMatchObject({
      status: 'completed',
      spoken: ['answered'],
    });
    await sim.webhooks.idle();
    const events = receiver.on('/webhooks/vonage/voice');
    expect(events.find((w) => w.body.uuid === a.body?.uuid && w.body.status === 'timeout')).toBeDefined();
    expect(
      events.find((w) => w.body.uuid === b.body?.uuid && w.body.status === 'completed')?.body,
    ).toMatchObject({
      duration: '0',
    });
  });

  it('keys pressed when the bot cannot answer: the input is retried, then the call ends', async () => {
    await start();
    const input = `${receiver.url}/webhooks/vonage/voice/input`;
    const created = await call('x', {
      ncco: [
        { action: 'talk', text: 'Press 4' },
        { action: 'input', type: ['dtmf'], dtmf: { maxDigits: 1 }, eventUrl: [input] },
      ],
    });
    const uuid = String(created.body?.uuid);
    sim.phones.answer(uuid);
    for (let i = 0; i < 4; i++) receiver.answerNext('/webhooks/vonage/voice/input', 503);
    const pressed = await sim.phones.pressKeys(uuid, '4');
    expect(pressed.status).toBe(503);
    expect(pressed.call.status).toBe('completed');
    expect(sim.webhooks.attempts.filter((a) => a.kind === 'input')).toHaveLength(4);
    await expect(sim.phones.pressKeys(uuid, '4')).rejects.toThrow(/not waiting for keys/);
  });
});

describe('faults and delays', () => {
  it('delayNext holds a request until the gate the test opens', async () => {
    await start();
    const g = gate();
    sim.delayNext('sendSms', { until: g.promise });
    let answered = false;
    const pending = sms('slow').then((r) => {
      answered = true;
      return r;
    });
    await expect.poll(() => sim.requestsFor('sendSms').length).toBe(1);
    expect(answered).toBe(false);
    expect(sim.phones.inbox(PHONE)).toHaveLength(0);
    g.open();
    expect((await pending).status).toBe(202);
    expect(sim.phones.inbox(PHONE)).toHaveLength(1);
  });

  it('failNext answers the fault once, then the operation works again', async () => {
    await start();
    sim.failNext('SendMessage', { status: 402 });
    expect(await sms('x')).toMatchObject({ status: 402, body: { title: 'Low balance' } });
    expect((await sms('x')).status).toBe(202);
  });
});

import { afterEach, describe, expect, it } from 'vitest';
import { eventCallbackBody } from '../../sandbox/simulators/slack/signing.ts';
import { signVonageWebhook } from '../../src/upstream/vonageSignature.ts';
import { OUT_OF_CREDIT_LOG_CODE } from '../../src/verification/upstreamCalls.reactor.ts';
import { postSigned } from '../support/startApp.ts';
import { waitFor } from '../support/waitFor.ts';
import { ANA, PHONE_A, startVerificationHarness, type VerificationHarness } from './harness.ts';

/**
 * What goes wrong around a verification: the vendor's signed webhooks (forged, malformed,
 * redelivered, racing our own expiry), a restart between the code's submission and its check, the
 * vendor out of credit, a vendor that cannot be reached, and the test SMS and call.
 */
let h: VerificationHarness;
afterEach(async () => {
  await h?.stop();
});

const codeOn = (digits: string) =>
  waitFor(() => h.sim.phones.lastCode(digits), { what: `a code on ${digits}` });

const verified = async () => {
  await h.verify(PHONE_A.typed);
  await h.dm(/sent a 6-digit code/);
  await h.enterCode(await codeOn(PHONE_A.digits));
  await h.dm(/is verified/);
};

const eventsOf = async (type: string) =>
  (await h.sb.store.readStream(`verification-${ANA}`)).filter((e) => e.type === type);

describe('verification when things go wrong', () => {
  it('takes only signed verify webhooks; a redelivery is recognised and changes nothing', async () => {
    h = await startVerificationHarness();
    h.sim.webhooks.duplicateNext(2);
    await verified();
    await h.idle();
    const verify = h.sim.webhooks.attempts.filter((a) => a.kind === 'verify');
    expect(verify.length).toBeGreaterThanOrEqual(3);
    expect(verify.every((a) => a.status === 200)).toBe(true);
    expect(
      verify.some((a) => a.outcome === 'duplicate' && String(a.responseBody).includes('"duplicate":true')),
    ).toBe(true);
    expect(await eventsOf('VerificationVerified')).toHaveLength(1);

    const url = `${h.url}/webhooks/vonage/verify`;
    const body = JSON.stringify({
      request_id: 'r-1',
      type: 'summary',
      status: 'completed',
      client_ref: 'U0ANAzabc',
    });
    const post = (authorization: string | null, raw = body) =>
      fetch(url, {
        method: 'POST',
        body: raw,
        headers: { 'content-type': 'application/json', ...(authorization ? { authorization } : {}) },
      });
    const signed = (raw: string, secret = h.sim.signatureSecret) =>
      signVonageWebhook(raw, secret, { now: h.clock.now(), apiKey: h.sim.apiKey });
    expect((await post(null)).status).toBe(401);
    expect((await post(signed(body, 'not-the-secret'))).status).toBe(401);
    expect((await post(signed(body), `${body} `)).status).toBe(401);
    const malformed = JSON.stringify({ hello: 'world' });
    const bad = await post(signed(malformed), malformed);
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain('request_id');
    // Not one of ours (an attempt that is not the current one): recorded, answered 200, no effect.
    expect((await post(signed(body))).status).toBe(200);
    await h.idle();
    expect(await eventsOf('VerificationVerified')).toHaveLength(1);
  });

  it("expires once when the vendor's expiry and Switchboard's own timer meet", async () => {
    h = await startVerificationHarness();
    await h.verify(PHONE_A.typed);
    await h.dm(/sent a 6-digit code/);
    h.clock.advance(10 * 60_000);
    h.sim.runTimers();
    await h.dm(/has expired/);
    await h.idle();
    expect(await eventsOf('VerificationExpired')).toHaveLength(1);
    expect(h.dms().filter((m) => m.text.includes('has expired'))).toHaveLength(1);
    expect(h.sim.webhooks.attempts.some((a) => a.kind === 'verify' && a.body.includes('"expired"'))).toBe(
      true,
    );
  });

  it('asks for the code again after a restart between the submission and its check', async () => {
    h = await startVerificationHarness({ verification: { checkBudgetMs: 100 } });
    await h.verify(PHONE_A.typed);
    await h.dm(/sent a 6-digit code/);
    const code = await codeOn(PHONE_A.digits);
    h.sim.failNext('checkCode', { status: 503 });
    await h.enterCode(code);
    await waitFor(async () => (await eventsOf('VerificationUpstreamCallFailed')).length === 1 || undefined, {
      what: 'the failed check, waiting for its retry',
    });
    // A new process: the key that sealed the code is gone with the old one.
    await h.restart();
    h.clock.advance(5_000);
    await h.dm(/Please enter the code again/);
    expect(await eventsOf('VerificationCodeLost')).toHaveLength(1);
    expect(h.sim.requestsFor('checkCode')).toHaveLength(1);
    await h.enterCode(code);
    await h.dm(/is verified/);
  });

  it('out of credit: the person is told, the operator alerted (error log with a stable code, a metric)', async () => {
    h = await startVerificationHarness();
    h.sim.setCredit(0);
    await h.verify(PHONE_A.typed);
    const dm = await h.dm(/couldn't send your code/);
    expect(dm.text).toContain('out of credit');
    expect(await eventsOf('VerificationFailed')).toHaveLength(1);
    const alert = h.logs.lines().find((l) => l['code'] === OUT_OF_CREDIT_LOG_CODE);
    expect(alert?.['level']).toBe('error');
    expect(await h.sb.metrics.registry.render()).toMatch(
      /switchboard_vonage_out_of_credit_total\{action="start"\} 1/,
    );
    expect(h.sim.requestsFor('startVerification')).toHaveLength(1);
  });

  it('retries a vendor that cannot be reached, then tells the person it gave up', async () => {
    h = await startVerificationHarness();
    h.sim.failNext('startVerification', { status: 503, times: 5 });
    await h.verify(PHONE_A.typed);
    for (let failed = 1; failed < 5; failed++) {
      await waitFor(
        async () => (await eventsOf('VerificationUpstreamCallFailed')).length === failed || undefined,
        {
          what: `failure ${failed}`,
        },
      );
      h.clock.advance(1_000);
    }
    const dm = await h.dm(/couldn't send your code/);
    expect(dm.text).toContain('could not be reached');
    expect(h.sim.requestsFor('startVerification')).toHaveLength(5);
  });

  it('says so when the vendor refuses a cancel: its call has already started', async () => {
    h = await startVerificationHarness();
    await h.verify(PHONE_A.typed);
    await h.dm(/sent a 6-digit code/);
    // The SMS step times out at the vendor, which moves on to the call without telling us first.
    h.clock.advance(301_000);
    h.sim.runTimers();
    await waitFor(() => h.sim.phones.calls(PHONE_A.digits).find((c) => c.kind === 'verify'), {
      what: "the vendor's call",
    });
    await h.verify('cancel');
    await h.dm(
      /Too late to cancel the verification: Switchboard is calling you with the code now\. It stops working \w+ \d+, \d\d:\d\d UTC;/,
    );
    expect(await eventsOf('VerificationCancelRefused')).toHaveLength(1);
    // Still running: the code from the call verifies.
    await h.enterCode(await codeOn(PHONE_A.digits));
    await h.dm(/is verified/);
  });

  it('starts without Number Insight when the lookup fails', async () => {
    h = await startVerificationHarness();
    h.sim.failNext('lookupNumber', { status: 500 });
    await h.verify(PHONE_A.typed);
    await h.dm(/sent a 6-digit code/);
    expect(h.sim.requestsFor('lookupNumber')).toHaveLength(1);
    expect(h.sim.requestsFor('startVerification')).toHaveLength(1);
  });

  it('/verify test texts and calls the verified number; App Home shows it masked', async () => {
    h = await startVerificationHarness();
    const none = await h.verify('test');
    expect(await h.response(none.responseUrl, /don't have a verified number yet/)).toBeTruthy();
    await verified();
    await h.verify('test');
    await h.dm(/sent a test SMS and placed a test call to \+44 •••• ••0123/);
    expect(
      h.sim.phones.inbox(PHONE_A.digits).some((m) => m.kind === 'sms' && m.text.includes('test message')),
    ).toBe(true);
    expect(h.sim.phones.calls(PHONE_A.digits).some((c) => JSON.stringify(c.ncco).includes('test call'))).toBe(
      true,
    );

    await postSigned(
      `${h.url}/slack/events`,
      eventCallbackBody({ type: 'app_home_opened', user: ANA, tab: 'home' }),
      'json',
      { timestamp: Math.floor(h.clock.now().getTime() / 1000) },
    );
    const home = await waitFor(() => h.fake.homes.get(ANA), { what: 'the Home tab' });
    expect(JSON.stringify(home.view)).toContain('+44 •••• ••0123');
    expect(JSON.stringify(home.view)).not.toContain(PHONE_A.digits);
    h.sim.assertNoViolations();
  });
});

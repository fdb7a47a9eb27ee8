import { afterEach, describe, expect, it } from 'vitest';
import { VERIFICATION_ACTION, VERIFICATION_FIELD } from '../../src/verification/blocks/ids.ts';
import { waitFor } from '../support/waitFor.ts';
import {
  ANA,
  BEN,
  CHEN,
  PHONE_A,
  PHONE_B,
  PHONE_C,
  startVerificationHarness,
  type VerificationHarness,
} from './harness.ts';

/**
 * The verification lifecycle's paths against the communications simulator, on a manual clock:
 * wrong codes, the limits, expiry, resend, the call instead of the SMS, cancel, and what the
 * person reads at each step.
 */
let h: VerificationHarness;
afterEach(async () => {
  await h?.stop();
});

const codeOn = (digits: string) =>
  waitFor(() => h.sim.phones.lastCode(digits), { what: `a code on ${digits}` });
/** A code that is not `code` (each digit moved by one). */
const wrong = (code: string) =>
  code
    .split('')
    .map((d) => String((Number(d) + 1) % 10))
    .join('');
const fieldError = (body: Record<string, unknown> | null) =>
  (body?.['errors'] as Record<string, string> | undefined)?.[VERIFICATION_FIELD.codeBlock];

const startAndWait = async (phone: { typed: string; masked: string }, user = ANA) => {
  const before = h.dms(user).length;
  const r = await h.verify(phone.typed, user);
  expect(r.text).toContain(`Sending a code to ${phone.masked}`);
  await waitFor(
    () =>
      h
        .dms(user)
        .slice(before)
        .find((m) => m.text.includes('sent a 6-digit code')),
    {
      what: 'the code DM',
    },
  );
  return r;
};

describe('verification paths', () => {
  it('three wrong codes fail the verification; the form says how many tries are left', async () => {
    h = await startVerificationHarness();
    await startAndWait(PHONE_A);
    const code = await codeOn(PHONE_A.digits);

    const first = await h.enterCode(wrong(code));
    expect(first.body).toMatchObject({ response_action: 'errors' });
    expect(fieldError(first.body)).toBe('Wrong code, 2 tries left.');
    await h.dm(/Wrong code, 2 tries left/);
    expect(fieldError((await h.enterCode(wrong(code))).body)).toBe('Wrong code, 1 try left.');
    expect(fieldError((await h.enterCode(wrong(code))).body)).toBe(
      'Wrong code, and that was the last try. Start again with /verify.',
    );
    await h.dm(/Three wrong codes: this verification has failed/);
    expect(await h.types()).toContain('VerificationFailed');

    // A malformed code never reaches the vendor.
    const letters = await h.enterCode('12ab56');
    expect(fieldError(letters.body)).toBe('The code is digits only.');
    const short = await h.enterCode('123');
    expect(fieldError(short.body)).toBe('The code has 6 digits.');
    expect(h.sim.requestsFor('checkCode')).toHaveLength(3);
    h.sim.assertNoViolations();
  });

  it('refuses a sixth start within 10 minutes in words, and the organisation-wide cap', async () => {
    h = await startVerificationHarness({ env: { VERIFY_ORG_LIMIT: '6' } });
    for (let i = 0; i < 5; i++) {
      await startAndWait(PHONE_A);
      h.clock.advance(31_000);
      await h.verify('cancel');
      await waitFor(
        () => h.dms().filter((m) => m.text.includes('is cancelled')).length === i + 1 || undefined,
        {
          what: `cancel ${i + 1}`,
        },
      );
    }
    const sixth = await h.verify(PHONE_A.typed);
    // A Slack date token (each reader's own zone), its fallback naming UTC (issue 19 item 3).
    expect(await h.response(sixth.responseUrl, /You've asked for 5 codes in the last 10 minutes/)).toMatch(
      /Try again after <!date\^\d+\^\{date_short_pretty\} at \{time\}\|\w+ \d+, 09:10 UTC>\./,
    );
    expect(h.sim.requestsFor('startVerification')).toHaveLength(5);

    // Ben's start brings the organisation to 6 starts in 10 minutes, its cap here: Chen is refused.
    await startAndWait(PHONE_B, BEN);
    const chen = await h.verify(PHONE_C.typed, CHEN);
    expect(await h.response(chen.responseUrl, /across the organisation/)).toContain('its limit');
    expect(h.sim.requestsFor('startVerification')).toHaveLength(6);

    // Ten minutes after the first start, Ana may start again (the org window has moved too).
    h.clock.advance(10 * 60_000 - 5 * 31_000 + 1);
    await startAndWait(PHONE_A);
  });

  it('states one code lifetime: the SMS and the DM both say 5 minutes (issue 19 item 5)', async () => {
    h = await startVerificationHarness();
    await startAndWait(PHONE_A);
    const sms = h.sim.phones.inbox(PHONE_A.digits).find((m) => m.kind === 'verify')!;
    expect(sms.text).toContain('Valid for 5 minutes.');
    const dm = await h.dm(/sent a 6-digit code/);
    // The notification text says it plainly in Ana's zone (Slack's UTC: her profile names none);
    // the message itself is a Slack date token (each reader's own zone), its fallback naming UTC.
    expect(dm.text).toContain('It is valid for 5 minutes. Enter it here before Nov 23, 09:05 UTC;');
    expect(JSON.stringify(dm.blocks)).toMatch(
      /It is valid for 5 minutes\. Enter it here before <!date\^\d+\^\{date_short_pretty\} at \{time\}\|\w+ \d+, 09:05 UTC>;/,
    );
    // The call reads the same code out, and the DM says until when it works.
    await h.click(VERIFICATION_ACTION.voice);
    const voice = await h.dm(/Switchboard is calling/);
    expect(voice.text).toContain('Enter it here before Nov 23, 09:10 UTC.');
    expect(JSON.stringify(voice.blocks)).toMatch(
      /Enter it here before <!date\^\d+\^[^|]+\|\w+ \d+, 09:10 UTC>\./,
    );
  });

  it('expires a code not entered in time', async () => {
    h = await startVerificationHarness();
    await startAndWait(PHONE_A);
    h.clock.advance(10 * 60_000);
    await h.dm(/The code sent to \+44 •••• ••0123 has expired/);
    expect(await h.types()).toContain('VerificationExpired');
    expect((await h.verify('status')).text).toContain('Your last code (+44 •••• ••0123) expired.');
    // The code is no use any more.
    const late = await h.enterCode(await codeOn(PHONE_A.digits));
    expect(fieldError(late.body)).toBe('This code has expired. Start again with /verify.');
    expect(await h.types()).not.toContain('VerificationVerified');
  });

  it('resends a code from 30 seconds after the last one; the new code verifies', async () => {
    h = await startVerificationHarness();
    await startAndWait(PHONE_A);
    const first = await codeOn(PHONE_A.digits);
    const early = await h.click(VERIFICATION_ACTION.resend);
    // Issue 19 item 5: when, in words people understand, not the vendor's rule.
    expect(await h.response(early.responseUrl, /You can ask for a new code from/)).toMatch(
      /from <!date\^\d+\^\{date_short_pretty\} at \{time_secs\}\|\w+ \d+, 09:00:30 UTC>\./,
    );

    h.clock.advance(31_000);
    await h.click(VERIFICATION_ACTION.resend);
    await waitFor(
      () => h.dms().filter((m) => m.text.includes('sent a 6-digit code')).length === 2 || undefined,
      {
        what: 'the second code DM',
      },
    );
    const codes = h.sim.phones.inbox(PHONE_A.digits).filter((m) => m.kind === 'verify');
    expect(codes).toHaveLength(2);
    const second = await codeOn(PHONE_A.digits);
    expect(h.sim.requestsFor('cancelVerification')).toHaveLength(1);
    await h.enterCode(second);
    await h.dm(/is verified/);
    expect(first).toMatch(/^\d{6}$/);
  });

  it('calls instead of texting when asked, and the code read out verifies', async () => {
    h = await startVerificationHarness();
    await startAndWait(PHONE_A);
    await h.click(VERIFICATION_ACTION.voice);
    await h.dm(/Switchboard is calling \+44 •••• ••0123/);
    const call = await waitFor(() => h.sim.phones.calls(PHONE_A.digits).find((c) => c.kind === 'verify'), {
      what: 'the verification call',
    });
    const code = await codeOn(PHONE_A.digits);
    expect(call.spoken.join(' ')).toContain(code.split('').join(' '));
    await h.enterCode(code);
    await h.dm(/is verified/);
    // Once the call is under way the code can no longer be resent or cancelled.
    expect(await h.types()).toContain('VerificationMovedToVoice');
  });

  it('cancels: too early is refused in words, then cancelled', async () => {
    h = await startVerificationHarness();
    await startAndWait(PHONE_A);
    const early = await h.verify('cancel');
    expect(await h.response(early.responseUrl, /You can cancel from/)).toMatch(
      /from <!date\^\d+\^\{date_short_pretty\} at \{time_secs\}\|\w+ \d+, 09:00:30 UTC>\./,
    );
    h.clock.advance(31_000);
    await h.verify('cancel');
    await h.dm(/The verification of \+44 •••• ••0123 is cancelled/);
    expect(h.sim.requestsFor('cancelVerification')).toHaveLength(1);
    const none = await h.verify('cancel');
    expect(await h.response(none.responseUrl, /no verification to cancel/)).toBeTruthy();
  });

  it('answers a number it cannot use with what is wrong, and records it as refused', async () => {
    h = await startVerificationHarness();
    const local = await h.verify('07700 900123');
    expect(local.text).toContain('international form, starting with + and the country code');
    expect(local.text).toContain('Usage: /verify');
    expect((await h.verify('+44 77')).text).toContain('not a possible phone number');
    expect((await h.verify('frobnicate')).text).toContain('`frobnicate` is not something `/verify` knows');
    expect((await h.verify('help')).text).toContain('/verify test');
    expect(h.sim.requestsFor('startVerification')).toHaveLength(0);
  });
});

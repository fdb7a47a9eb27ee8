import { existsSync, readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { VERIFICATION_ACTION } from '../../src/verification/blocks/ids.ts';
import { waitFor } from '../support/waitFor.ts';
import { ANA, PHONE_A, PHONE_B, startVerificationHarness, type VerificationHarness } from './harness.ts';

/**
 * Phone verification end to end: `/verify` through the real Bolt receiver, the DM and its modal,
 * the communications simulator sending the code to the person's phone, and what is left in the
 * store file afterwards.
 */
let h: VerificationHarness;
afterEach(async () => {
  await h?.stop();
});

const codeOn = (digits: string) =>
  waitFor(() => h.sim.phones.lastCode(digits), { what: `a code on ${digits}` });

/** Where `needle` occurs in `haystack` as a token (not inside a longer run of letters or digits). */
const tokenAt = (haystack: string, needle: string): number[] => {
  const found: number[] = [];
  const re = new RegExp(`(?<![0-9A-Za-z])${needle}(?![0-9A-Za-z])`, 'g');
  for (let m = re.exec(haystack); m; m = re.exec(haystack)) found.push(m.index);
  return found;
};

describe('phone verification', () => {
  it('verifies a number end to end: /verify, the DM, the code modal, verified, linked, on App Home', async () => {
    h = await startVerificationHarness();
    const started = await h.verify(PHONE_A.typed);
    expect(started.status).toBe(200);
    expect(started.text).toContain(`Sending a code to ${PHONE_A.masked}`);

    const sent = await h.dm(/sent a 6-digit code by SMS to \+44 •••• ••0123/);
    expect(JSON.stringify(sent.blocks)).toContain(VERIFICATION_ACTION.enterCode);
    const code = await codeOn(PHONE_A.digits);
    expect(h.sim.phones.inbox(PHONE_A.digits).at(-1)?.text).toContain(code);

    const submitted = await h.enterCode(code);
    expect(submitted.status).toBe(200);
    expect(submitted.body?.['response_action']).toBeUndefined();
    await h.dm(/\+44 •••• ••0123 is verified/);
    // The link holds the number sealed under Ana's own data key (crypto-shredding), never in clear.
    const link = await waitFor(async () => h.sb.people.linkOf(ANA, 'phone'), { what: 'the phone link' });
    expect(link.externalId).toMatch(/^personal:v1:U/);
    expect(await h.sb.lifecycle('verification')?.phones.openAny(link.externalId)).toBe(PHONE_A.digits);
    expect(await h.types()).toEqual([
      'VerificationRequested',
      'VerificationCodeSent',
      'VerificationCodeSubmitted',
      'VerificationVerified',
    ]);

    const status = await h.verify('status');
    expect(status.text).toContain(`Your verified number is ${PHONE_A.masked}`);
    h.sim.assertNoViolations();
  });

  it('keeps neither the code nor the number in clear in the store file: the code is unreadable once checked', async () => {
    h = await startVerificationHarness();
    await h.verify(PHONE_A.typed);
    await h.dm(/sent a 6-digit code/);
    const code = await codeOn(PHONE_A.digits);
    await h.enterCode(code);
    await h.dm(/is verified/);
    await h.idle();

    // The store as files on disk, the WAL included, read as bytes.
    const bytes = [h.dbPath, `${h.dbPath}-wal`]
      .filter((p) => existsSync(p))
      .map((p) => readFileSync(p).toString('latin1'))
      .join('\n');
    expect(bytes.length).toBeGreaterThan(10_000);
    expect(tokenAt(bytes, code), 'the code, anywhere in the store').toEqual([]);
    // The recorded modal input keeps [Redacted]; the command and the fact carry it sealed.
    expect(bytes).toContain('[Redacted]');
    expect(bytes).toMatch(/vault:v1:/);
    // The number nowhere in clear: the people directory's link holds it sealed under Ana's key too.
    const hits = tokenAt(bytes, PHONE_A.digits).concat(tokenAt(bytes, `\\+${PHONE_A.digits}`));
    expect(hits).toEqual([]);
    expect(bytes).toMatch(/personal:v1:/);

    // Nor as typed: the recorded `/verify` slash command keeps `[Redacted]` for its text.
    expect(tokenAt(bytes, PHONE_A.typed.replace(/[+]/g, '\\+')), 'the number as typed').toEqual([]);
    expect(bytes).toMatch(
      /"command":"\/verify"[^}]*"text":"\[Redacted\]"|"text":"\[Redacted\]"[^}]*"command":"\/verify"/,
    );
    // Nor in the logs.
    const logs = h.logs.text();
    expect(tokenAt(logs, code)).toEqual([]);
    expect(logs).not.toContain(PHONE_A.digits);

    // Through the store: after the check nobody can open the sealed code, this process included.
    const submittedEvent = (await h.sb.store.readStream(`verification-${ANA}`)).find(
      (e) => e.type === 'VerificationCodeSubmitted',
    );
    const sealed = String((submittedEvent?.data as { sealedCode?: unknown } | undefined)?.sealedCode);
    expect(sealed).toMatch(/^vault:v1:/);
    expect(h.sb.lifecycle('verification')?.vault.open(sealed)).toBeNull();
    // Every stored event holds the number only sealed or masked, the link included.
    const all = await h.sb.store.readAll({ maxCount: 10_000 });
    const clear = all.filter((e) => JSON.stringify(e.data).includes(PHONE_A.digits)).map((e) => e.type);
    expect(clear).toEqual([]);
  });

  it('changes the number: both numbers are texted, the link moves to the new one', async () => {
    h = await startVerificationHarness();
    await h.verify(PHONE_A.typed);
    await h.enterCode(await codeOn(PHONE_A.digits));
    await h.dm(/\+44 •••• ••0123 is verified/);

    await h.verify(PHONE_B.typed);
    await h.dm(/sent a 6-digit code by SMS to \+44 •••• ••0456/);
    await h.enterCode(await codeOn(PHONE_B.digits));
    await h.dm(/\+44 •••• ••0456 is verified and replaces \+44 •••• ••0123/);
    const notice = await waitFor(
      () => h.sim.phones.inbox(PHONE_A.digits).find((m) => m.kind === 'sms' && m.text.includes('changed')),
      { what: 'the SMS to the old number' },
    );
    expect(notice.text).toContain(PHONE_B.masked);
    expect(notice.text).not.toContain(PHONE_B.digits);
    const phones = h.sb.lifecycle('verification')?.phones;
    await waitFor(
      async () => {
        const link = await h.sb.people.linkOf(ANA, 'phone');
        return (link && (await phones?.openAny(link.externalId)) === PHONE_B.digits) || undefined;
      },
      { what: 'the link moved to the new number' },
    );

    // The same number verified again (after a STOP, say) is no change: nobody else is texted, and
    // the link is recorded again, a fact the pager can read.
    h.clock.advance(60_000);
    await h.verify(PHONE_B.typed);
    await waitFor(
      () => h.dms().filter((m) => m.text.includes('sent a 6-digit code')).length === 3 || undefined,
      {
        what: 'the third code DM',
      },
    );
    await h.enterCode(await codeOn(PHONE_B.digits));
    await waitFor(
      () => h.dms().filter((m) => m.text.includes('0456 is verified. ')).length === 1 || undefined,
      {
        what: 'verified again',
      },
    );
    await h.idle();
    expect(h.sim.phones.inbox(PHONE_A.digits).filter((m) => m.text.includes('changed'))).toHaveLength(1);
    const links = (await h.sb.store.readStream(`identity-${ANA}`)).filter((e) => e.type === 'PersonLinked');
    expect(links).toHaveLength(3);
  });
});

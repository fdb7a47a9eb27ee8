import { afterEach, describe, expect, it } from 'vitest';
import { internalWords, makePersonKeyUnreadable } from '../joins/pageFailureSupport.ts';
import { waitFor } from '../support/waitFor.ts';
import { ANA, PHONE_A, PHONE_B, startVerificationHarness, type VerificationHarness } from './harness.ts';

/**
 * Issue 18 item 5: `/verify` tells the truth. `status` never says "verified" for a number that
 * cannot be paged: it says "opted out of paging (replied STOP)" with how to opt back in, "must be
 * verified again" when the number can no longer be read, or the masked number. `/verify <number>`
 * again always works, the same number or a new one, whatever state the last verification or the
 * person's key is in. `/verify remove` forgets the number the way a leaver's is forgotten
 * (crypto-shredding), and says so in words.
 */
let h: VerificationHarness;
afterEach(async () => {
  expect(await h.sb.processors.listParked()).toEqual([]);
  await h?.stop();
});

const verified = async (phone: { typed: string; digits: string } = PHONE_A) => {
  const before = h.dms().filter((m) => m.text.includes('is verified')).length;
  const codeDms = h.dms().filter((m) => m.text.includes('sent a 6-digit code')).length;
  const codes = h.sim.phones.inbox(phone.digits).filter((m) => m.kind === 'verify').length;
  const started = await h.verify(phone.typed);
  acks.push(started.text);
  expect(started.status).toBe(200);
  expect(started.text).toContain('Sending a code to');
  const sms = await waitFor(
    () => h.sim.phones.inbox(phone.digits).filter((m) => m.kind === 'verify')[codes],
    { what: `a code on ${phone.digits}` },
  );
  const code = /([0-9]{6})/.exec(sms.text)?.[1] ?? '';
  await waitFor(
    () => h.dms().filter((m) => m.text.includes('sent a 6-digit code')).length > codeDms || undefined,
    { what: 'the code DM' },
  );
  await h.enterCode(code);
  await waitFor(() => h.dms().filter((m) => m.text.includes('is verified')).length > before || undefined, {
    what: 'verified',
  });
  await waitFor(
    async () => {
      const link = await h.sb.people.linkOf(ANA, 'phone');
      const phones = h.sb.lifecycle('verification')?.phones;
      return link && (await phones?.openAny(link.externalId)) === phone.digits ? link : undefined;
    },
    { what: 'the phone link' },
  );
  await h.idle();
};

let pages = 0;
const pageAna = () =>
  h.sb.ports.require('pager', 'the test').page({
    person: { slackUserId: ANA },
    text: '#7 Checkout 5xx: reply 4 to acknowledge',
    pageId: `page-truth-${++pages}-U0ANA`,
    reportTo: 'incident-PTEST7',
    number: 7,
    label: '#7 Checkout 5xx',
    callAfterMs: null,
    maxPerHour: 10,
  });

/** The answers `/verify …` gave Ana at once (ephemeral), for the internal-words scan. */
const acks: string[] = [];

/** `/verify status` as Ana: what she reads. */
const status = async () => {
  const { text } = await h.verify('status');
  acks.push(text);
  return text;
};

/** Everything Ana was told: the DMs, every answer to her commands, and SMS to her phones. */
const toldAna = () => [
  ...acks,
  ...h.dms().map((m) => m.text),
  ...h.fake.responsePosts.map((p) => String((p.body as { text?: unknown }).text ?? '')),
  ...[PHONE_A, PHONE_B].flatMap((p) => h.sim.phones.inbox(p.digits).map((m) => m.text)),
];

describe('/verify status tells the truth', () => {
  it('the masked number when it can be paged; nothing when there is none', async () => {
    h = await startVerificationHarness();
    expect(await status()).toContain("You don't have a verified number yet");
    await verified();
    expect(await status()).toContain(`Your verified number is ${PHONE_A.masked}`);
  });

  it('opted out of paging (replied STOP), with how to opt back in; verifying again opts back in', async () => {
    h = await startVerificationHarness();
    await verified();
    expect((await h.sim.phones.replySms(PHONE_A.digits, 'STOP')).ok).toBe(true);
    await h.idle();
    await waitFor(async () => ((await h.sb.people.linkOf(ANA, 'phone')) ? undefined : true), {
      what: 'the link removed by STOP',
    });
    const said = await status();
    expect(said).toContain('opted out of paging (replied STOP)');
    expect(said).toContain('/verify');
    expect(said).not.toContain('Your verified number is');
    expect(await pageAna()).toBe('opted_out');

    h.clock.advance(60_000);
    await verified();
    expect(await status()).toContain(`Your verified number is ${PHONE_A.masked}`);
    expect(await pageAna()).toBe('paged');
  });

  it('must be verified again when the number can no longer be read (its key lost), and /verify works again', async () => {
    h = await startVerificationHarness();
    await verified();
    await makePersonKeyUnreadable(h.sb.store, ANA);
    await h.restart();
    const said = await status();
    expect(said).toContain('must be verified again');
    expect(said).not.toContain('Your verified number is');
    expect(await pageAna()).toBe('must_verify_again');

    // The same number again: a code, verified, paged.
    h.clock.advance(60_000);
    await verified(PHONE_A);
    expect(await status()).toContain(`Your verified number is ${PHONE_A.masked}`);
    expect(await pageAna()).toBe('paged');
    // Nothing to tell the old number about: it is the same one, and could not be read anyway.
    expect(
      h.sim.phones.inbox(PHONE_A.digits).filter((m) => m.text.includes('on-call number was changed')),
    ).toEqual([]);
    expect(internalWords(toldAna())).toEqual([]);
  });

  it('/verify with a new number works too after the key is lost, without a restart', async () => {
    h = await startVerificationHarness();
    await verified();
    await makePersonKeyUnreadable(h.sb.store, ANA);
    h.clock.advance(60_000);
    await verified(PHONE_B);
    expect(await status()).toContain(`Your verified number is ${PHONE_B.masked}`);
    expect(await pageAna()).toBe('paged');
    expect(internalWords(toldAna())).toEqual([]);
  });
});

describe('/verify remove', () => {
  it('forgets the number as a leaver’s is (shredded), says so in words, and refuses when there is none', async () => {
    h = await startVerificationHarness();
    await verified();
    const link = await h.sb.people.linkOf(ANA, 'phone');
    const answered = await h.verify('remove');
    acks.push(answered.text);
    expect(answered.status).toBe(200);
    expect(answered.text).toMatch(/forget/i);
    const dm = await h.dm(/forgot your number/);
    expect(dm.text).toContain(PHONE_A.masked);
    expect(dm.text).toContain('/verify');
    await h.idle();

    expect(await h.sb.people.linkOf(ANA, 'phone')).toBeUndefined();
    expect(await h.sb.store.readStream(`personkey-${ANA}`)).toEqual([]);
    expect(await h.sb.lifecycle('verification')?.phones.openAny(String(link?.externalId))).toBeNull();
    expect(await status()).toContain("You don't have a verified number yet");
    expect(await pageAna()).toBe('no_verified_phone');

    const again = await h.verify('remove');
    const refused = await h.response(again.responseUrl, /verified number/);
    expect(refused).toContain("You don't have a verified number to remove");

    // Verifying again afterwards works and pages again.
    h.clock.advance(11 * 60_000);
    await verified();
    expect(await pageAna()).toBe('paged');
    expect(internalWords(toldAna())).toEqual([]);
  });

  it('is in the help text', async () => {
    h = await startVerificationHarness();
    const help = await h.verify('help');
    expect(help.text).toContain('/verify remove');
  });
});

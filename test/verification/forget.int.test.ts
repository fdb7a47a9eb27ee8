import { existsSync, readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '../support/waitFor.ts';
import { ANA, PHONE_A, startVerificationHarness, type VerificationHarness } from './harness.ts';

/**
 * Forgetting a person's phone (issue 12, a leaver): the number is sealed under Ana's own data key
 * everywhere it is recorded, so deleting the key makes every copy unreadable. Proved on the store
 * files' bytes (the WAL included), not through the API.
 */
let h: VerificationHarness;
afterEach(async () => {
  await h?.stop();
});

/** The store as files on disk, the WAL included, read as bytes. */
const storeBytes = (dbPath: string): string =>
  [dbPath, `${dbPath}-wal`]
    .filter((p) => existsSync(p))
    .map((p) => readFileSync(p).toString('latin1'))
    .join('\n');

const verified = async () => {
  await h.verify(PHONE_A.typed);
  await h.dm(/sent a 6-digit code/);
  const code = await waitFor(() => h.sim.phones.lastCode(PHONE_A.digits), { what: 'the code' });
  await h.enterCode(code);
  await h.dm(/is verified/);
  await waitFor(() => h.sb.people.linkOf(ANA, 'phone'), { what: 'the phone link' });
};

const pageAna = (pageId: string) =>
  h.sb.ports.require('pager', 'the test').page({
    person: { slackUserId: ANA },
    text: '#7 Checkout 5xx: reply 4 to acknowledge',
    pageId,
    reportTo: 'incident-PTEST7',
    number: 7,
    label: '#7 Checkout 5xx',
    callAfterMs: 5 * 60_000,
    maxPerHour: 10,
  });

describe('forgetting a phone (a leaver)', () => {
  it('after verification, a page, a reply and forget, the digits are nowhere in the store files; pages stop; the pager has no phone', async () => {
    h = await startVerificationHarness();
    await verified();
    const pager = h.sb.ports.require('pager', 'the test');

    expect(await pageAna('page-7-1-U0ANA')).toBe('paged');
    await waitFor(() => h.sim.phones.inbox(PHONE_A.digits).find((m) => m.text.includes('#7 Checkout')), {
      what: 'the SMS page',
    });
    // A reply from her phone (incidents are off here: it is recorded and answered).
    expect((await h.sim.phones.replySms(PHONE_A.digits, '4')).ok).toBe(true);
    await h.idle();
    const keyStream = await h.sb.store.readStream(`personkey-${ANA}`);
    expect(keyStream.map((e) => e.type)).toEqual(['PersonKeyCreated']);
    const sealedKey = String(keyStream[0]?.data.sealedKey);
    const link = await h.sb.people.linkOf(ANA, 'phone');
    const phones = h.sb.lifecycle('verification')?.phones;
    expect(await phones?.openAny(String(link?.externalId))).toBe(PHONE_A.digits);

    await pager.forget({ person: { slackUserId: ANA }, reason: 'left', at: h.clock.now() });
    await h.idle();

    // The call that was due after the SMS is cancelled: no call, however long we wait.
    h.clock.advance(10 * 60_000);
    await h.idle();
    await waitFor(
      async () => {
        const pages = await h.sb.store.readStream(`pager-${ANA}`);
        return pages.some((e) => e.type === 'PageStopped') || undefined;
      },
      { what: 'the page stopped' },
    );
    await h.idle();
    expect(h.sim.phones.calls(PHONE_A.digits).filter((c) => c.kind === 'call')).toEqual([]);

    // The link is gone (reason `left`), the key deleted, and every sealed copy unreadable.
    expect(await h.sb.people.linkOf(ANA, 'phone')).toBeUndefined();
    const identity = await h.sb.store.readStream(`identity-${ANA}`);
    expect(identity.at(-1)).toMatchObject({
      type: 'PersonUnlinked',
      data: { system: 'phone', reason: 'left' },
    });
    expect(await h.sb.store.readStream(`personkey-${ANA}`)).toEqual([]);
    expect(await phones?.openAny(String(link?.externalId))).toBeNull();
    const verifiedEvent = (await h.sb.store.readStream(`verification-${ANA}`)).find(
      (e) => e.type === 'VerificationVerified',
    );
    expect(await phones?.openAny(String(verifiedEvent?.data.number))).toBeNull();

    // The bytes on disk: the number in no form, the key's sealed bytes gone.
    const bytes = storeBytes(h.dbPath);
    expect(bytes.length).toBeGreaterThan(10_000);
    expect(bytes.includes(PHONE_A.digits), 'the digits, anywhere in the store files').toBe(false);
    expect(bytes.includes(PHONE_A.digits.slice(2)), 'the national digits').toBe(false);
    expect(bytes.includes(sealedKey), 'the sealed data key').toBe(false);
    expect(bytes).toMatch(/personal:v1:/);
    expect(h.logs.text()).not.toContain(PHONE_A.digits);

    // The verification stream forgot its number too: /verify status says so.
    expect(await h.types()).toContain('VerificationPhoneForgotten');
    const status = await h.verify('status');
    expect(status.text).toContain("You don't have a verified number yet");

    // The pager has no phone for her any more, and forgetting again changes nothing.
    expect(await pageAna('page-8-1-U0ANA')).toBe('no_verified_phone');
    const streams = [
      `identity-${ANA}`,
      `personkey-${ANA}`,
      `pager-${ANA}`,
      `verification-${ANA}`,
      'deletedstreams-store',
    ];
    const count = async () =>
      (await Promise.all(streams.map((s) => h.sb.store.readStream(s)))).map(
        (events) => events.filter((e) => e.kind === 'event').length,
      );
    const before = await count();
    await pager.forget({ person: { slackUserId: ANA }, reason: 'left', at: h.clock.now() });
    await h.idle();
    expect(await count()).toEqual(before);
  });

  it('a person who verifies again after being forgotten gets a new key, and is paged again', async () => {
    h = await startVerificationHarness();
    await verified();
    const pager = h.sb.ports.require('pager', 'the test');
    await pager.forget({ person: { slackUserId: ANA }, reason: 'left', at: h.clock.now() });
    await h.idle();
    h.clock.advance(11 * 60_000);
    const codes = () => h.sim.phones.inbox(PHONE_A.digits).filter((m) => m.kind === 'verify');
    await h.verify(PHONE_A.typed);
    await waitFor(() => codes().length === 2 || undefined, { what: 'a second code' });
    await waitFor(
      () => h.dms().filter((m) => m.text.includes('sent a 6-digit code')).length === 2 || undefined,
      { what: 'the second code DM' },
    );
    const code = /([0-9]{6})/.exec(codes().at(-1)?.text ?? '')?.[1] ?? '';
    await h.enterCode(code);
    await waitFor(() => h.dms().filter((m) => m.text.includes('is verified')).length === 2 || undefined, {
      what: 'verified again',
    });
    await waitFor(() => h.sb.people.linkOf(ANA, 'phone'), { what: 'the new phone link' });
    await h.idle();
    const link = await h.sb.people.linkOf(ANA, 'phone');
    expect(await h.sb.lifecycle('verification')?.phones.openAny(String(link?.externalId))).toBe(
      PHONE_A.digits,
    );
    expect(await pageAna('page-9-1-U0ANA')).toBe('paged');
    // A new number after being forgotten, not a change: no "your number was changed" SMS.
    expect(await h.types()).not.toContain('VerificationOldNumberNoticeRequested');
  });

  it('a page call ringing when she is forgotten is ended', async () => {
    h = await startVerificationHarness();
    await verified();
    expect(await pageAna('page-10-1-U0ANA')).toBe('paged');
    await waitFor(() => h.sim.phones.inbox(PHONE_A.digits).find((m) => m.text.includes('#7 Checkout')), {
      what: 'the SMS page',
    });
    h.clock.advance(6 * 60_000);
    const call = await waitFor(
      () => h.sim.phones.calls(PHONE_A.digits).find((c) => c.kind === 'call' && c.status === 'ringing'),
      { what: 'the page call ringing' },
    );
    await h.sb.ports
      .require('pager', 'the test')
      .forget({ person: { slackUserId: ANA }, reason: 'left', at: h.clock.now() });
    await waitFor(
      () =>
        h.sim.phones.calls(PHONE_A.digits).find((c) => c.uuid === call.uuid && c.status !== 'ringing') ??
        undefined,
      { what: 'the call ended' },
    );
  });
});

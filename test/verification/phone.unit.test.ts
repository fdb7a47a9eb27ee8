import { describe, expect, it } from 'vitest';
import { createPhoneSealer, maskPhone, parsePhone } from '../../src/verification/phone.ts';
import { ringEntry, testKeyRing } from '../support/dataKeys.ts';

describe('phone numbers', () => {
  it('parses international numbers to E.164 and masks them', () => {
    const p = parsePhone(' +44 7700 900123 ');
    expect(p).toMatchObject({
      ok: true,
      e164: '+447700900123',
      digits: '447700900123',
      masked: '+44 •••• ••0123',
    });
    expect(parsePhone('+33 6.12.34.56.78')).toMatchObject({
      ok: true,
      digits: '33612345678',
      masked: '+33 •••• ••5678',
    });
    expect(maskPhone('+447700900123')).toBe('+44 •••• ••0123');
  });

  it('says what is wrong with anything else', () => {
    expect(parsePhone('')).toEqual({ ok: false, problem: 'No phone number given.' });
    expect(parsePhone('07700 900123')).toMatchObject({
      ok: false,
      problem: expect.stringContaining('international form'),
    });
    expect(parsePhone('+44 77')).toMatchObject({
      ok: false,
      problem: expect.stringContaining('not a possible phone number'),
    });
    expect(parsePhone('+44 7700 9001x3')).toMatchObject({
      ok: false,
      problem: expect.stringContaining('only digits'),
    });
    expect(parsePhone(`+44${'1'.repeat(60)}`)).toMatchObject({
      ok: false,
      problem: expect.stringContaining('too long'),
    });
    expect(parsePhone('+999 1234567')).toMatchObject({ ok: false });
  });

  it('seals numbers (never readable) and keys them (same number, same key)', () => {
    const phones = createPhoneSealer(testKeyRing());
    const sealed = phones.seal('447700900123');
    expect(sealed).toMatch(/^sealed:v2:test:/);
    expect(sealed).not.toContain('447700900123');
    expect(phones.open(sealed)).toBe('447700900123');
    expect(phones.key('447700900123')).toBe(phones.key('447700900123'));
    expect(phones.key('447700900123')).not.toBe(phones.key('447700900124'));
    expect(() => createPhoneSealer(testKeyRing(ringEntry('other', 1))).open(sealed)).toThrow(
      /could not be opened/,
    );
  });

  it('keys what someone sent under a key of its own: 32 hex, the same for the same text, not the text', () => {
    const phones = createPhoneSealer(testKeyRing());
    const hash = phones.textKey('my otp 482139');
    expect(hash).toMatch(/^[0-9a-f]{32}$/);
    expect(phones.textKey('my otp 482139')).toBe(hash);
    expect(phones.textKey('my otp 482138')).not.toBe(hash);
    expect(createPhoneSealer(testKeyRing(ringEntry('other', 1))).textKey('my otp 482139')).not.toBe(hash);
    // Not the numbers' key: a text that is a number cannot be matched against a number's key.
    expect(phones.textKey('447700900123')).not.toBe(phones.key('447700900123'));
  });
});

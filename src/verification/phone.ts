import { createHmac } from 'node:crypto';
import { parsePhoneNumberFromString } from 'libphonenumber-js/max';
import { ChatOpsError } from '../core/errors.ts';
import type { KeyRing } from '../core/keyRing.ts';
import { isPersonalSealed, type PersonKeys } from '../people/personKeys.ts';
import { PHONE_NUMBER_PURPOSE } from './config.ts';

/**
 * Phone numbers as the verification lifecycle handles them: parsed with libphonenumber-js (E.164
 * only, a clear reason for anything else), masked for people (`+44 •••• ••0123`), sealed for the
 * store, and keyed (an HMAC) so two numbers can be compared without either being readable.
 *
 * @example
 * const parsed = parsePhone('+44 7700 900123'); // { ok: true, e164: '+447700900123', digits: '447700900123', … }
 * maskPhone('+447700900123'); // '+44 •••• ••0123'
 */
export type ParsedPhone =
  | Readonly<{
      ok: true;
      e164: string;
      digits: string;
      countryCallingCode: string;
      country: string | null;
      masked: string;
    }>
  | Readonly<{ ok: false; problem: string }>;

const MAX_INPUT = 40;

/** `+<country code> •••• ••<last 4>`: enough to recognise your own number, not to dial it. */
export const maskPhone = (e164: string): string => {
  const parsed = parsePhoneNumberFromString(e164);
  const digits = e164.replace(/\D/g, '');
  const cc = parsed?.countryCallingCode ?? digits.slice(0, Math.min(3, Math.max(1, digits.length - 8)));
  return `+${cc} •••• ••${digits.slice(-4)}`;
};

/**
 * The number someone typed after `/verify`, in international form. Spaces, dashes, dots and
 * brackets are allowed; the number must start with `+` and its country code (Switchboard does not
 * guess a country), libphonenumber must find it possible for its country (length, country code),
 * and it may not be a premium-rate, shared-cost, toll-free or pager number.
 */
export const parsePhone = (raw: string): ParsedPhone => {
  const text = raw.trim();
  if (text === '') return { ok: false, problem: 'No phone number given.' };
  if (text.length > MAX_INPUT) return { ok: false, problem: 'That is too long for a phone number.' };
  if (!/^[+0-9 ().-]+$/.test(text)) {
    return {
      ok: false,
      problem: 'A phone number has only digits, spaces, dashes, dots and brackets after the +.',
    };
  }
  if (!text.startsWith('+')) {
    return {
      ok: false,
      problem:
        'Give the number in international form, starting with + and the country code (e.g. +44 7700 900123).',
    };
  }
  const parsed = parsePhoneNumberFromString(text);
  if (!parsed?.isPossible()) {
    return {
      ok: false,
      problem: `${text} is not a possible phone number: check the country code and the number of digits.`,
    };
  }
  // Validity (the number ranges in use) is not required: reserved test ranges such as the UK's
  // +44 7700 900xxx must work in a sandbox, and the vendor refuses a number nobody can reach.
  const type = parsed.getType();
  if (
    type === 'PREMIUM_RATE' ||
    type === 'SHARED_COST' ||
    type === 'TOLL_FREE' ||
    type === 'PAGER' ||
    type === 'UAN'
  ) {
    return { ok: false, problem: 'That number cannot receive a code: use a mobile or a direct line.' };
  }
  const e164 = parsed.number;
  return {
    ok: true,
    e164,
    digits: e164.slice(1),
    countryCallingCode: parsed.countryCallingCode,
    country: parsed.country ?? null,
    masked: maskPhone(e164),
  };
};

/**
 * Seals numbers for the store, and keys them for comparison. A person's number is sealed under
 * their own data key (`sealFor`, `keyFor`: src/people/personKeys.ts), so forgetting them makes
 * every copy unreadable; a number nobody owns (an SMS from an unknown number) is sealed under the
 * data key ring (`seal`: `sealed:v2:<ring key id>:…`, src/core/keyRing.ts), and keyed under a key
 * the ring derives (`key`). Records written before person keys existed (`sealed:v1:`, under a key
 * derived from VONAGE_SIGNATURE_SECRET) open through the ring's legacy entries.
 *
 * `key` is an HMAC under a key derived from the ring's sealing key, not a stored one: it only
 * names the stream of replies from a number nobody verified (`pagerreply-<key>`), which needs no
 * continuity, so a key put in front of the ring giving such a number a new stream costs nothing,
 * and there is no further key to store, back up or re-wrap. A verified person's number is keyed
 * under their own data key (`keyFor`), which a ring rotation does not change.
 */
export type PhoneSealer = Readonly<{
  /** `sealed:v2:…` of the E.164 digits, under the data key ring (a number of nobody known). */
  seal(digits: string): string;
  /** The digits of a `sealed:` value; throws SB_VALIDATION when nothing on the ring opens it. */
  open(sealed: string): string;
  /** 32 hex characters, the same for the same number under the same ring's first key. */
  key(digits: string): string;
  /**
   * A keyed hash (32 hex characters) of what someone sent to the paging number, kept instead of
   * the text: the same text gives the same hash, and without the key nobody can test a guess (a
   * one-time code has a million values; an unkeyed hash would give it away). A key of its own,
   * apart from the numbers' (`key`), so neither hash can be matched against the other.
   */
  textKey(text: string): string;
  /** `personal:v1:…`: the digits sealed under the person's data key. */
  sealFor(slackUserId: string, digits: string): Promise<string>;
  /** The person's blind index of the number (an HMAC under their data key). */
  keyFor(slackUserId: string, digits: string): Promise<string>;
  /**
   * The digits of any sealed number; null when it cannot be opened: the person's key was forgotten,
   * or it cannot be unwrapped (a lost or rotated secret). Either way the number must be verified
   * again; nothing here throws for it.
   */
  openAny(sealed: string): Promise<string | null>;
  /**
   * The digits, for a call that needs them; a number that cannot be opened is a permanent refusal
   * (SB_VALIDATION, reason `phone_forgotten`), never retried.
   */
  openForUse(sealed: string): Promise<string>;
}>;

export const createPhoneSealer = (ring: KeyRing, keys?: PersonKeys): PhoneSealer => {
  const sealer = ring.sealer(PHONE_NUMBER_PURPOSE);
  const hmacKey = ring.derive('phone-number-key');
  const key = (digits: string) => createHmac('sha256', hmacKey).update(digits).digest('hex').slice(0, 32);
  // Its own key (not the numbers'): a text that is a number cannot be matched against a number.
  const textHmacKey = ring.derive('reply-text-key');
  const openAny = async (sealed: string): Promise<string | null> => {
    if (isPersonalSealed(sealed)) return keys ? keys.open(sealed) : null;
    // Digits recorded before numbers were sealed come back as they are; a value sealed under a
    // ring key since removed (or a legacy secret no longer configured) is as unreadable as a
    // forgotten one.
    return sealer.tryOpen(sealed);
  };
  return {
    seal: (digits) => sealer.seal(digits),
    open: (sealed) => sealer.open(sealed),
    key,
    textKey: (text) => createHmac('sha256', textHmacKey).update(text, 'utf8').digest('hex').slice(0, 32),
    sealFor: (slackUserId, digits) =>
      keys ? keys.seal(slackUserId, digits) : Promise.resolve(sealer.seal(digits)),
    keyFor: (slackUserId, digits) =>
      keys ? keys.blindIndex(slackUserId, digits) : Promise.resolve(key(digits)),
    openAny,
    async openForUse(sealed) {
      const digits = await openAny(sealed);
      if (digits === null) {
        throw new ChatOpsError(
          'SB_VALIDATION',
          'the number must be verified again (`/verify <your number>`)',
          {
            details: { reason: 'phone_forgotten' },
          },
        );
      }
      return digits;
    },
  };
};

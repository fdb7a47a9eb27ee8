import { createHmac, hkdfSync } from 'node:crypto';
import { parsePhoneNumberFromString } from 'libphonenumber-js/max';
import { ChatOpsError, hasCode } from '../core/errors.ts';
import { createSealer, type Sealer } from '../core/sealed.ts';
import { isPersonalSealed, type PersonKeys } from '../people/personKeys.ts';

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
 * every copy unreadable; a number nobody owns (an SMS from an unknown number) and the records
 * written before person keys existed use keys derived from the configured secret (`seal`, `key`).
 */
export type PhoneSealer = Readonly<{
  /** `sealed:v1:…` of the E.164 digits, under the configured secret (a number of nobody known). */
  seal(digits: string): string;
  /** The digits of a `sealed:v1:` value; throws SB_VALIDATION when sealed under another key. */
  open(sealed: string): string;
  /** 32 hex characters, the same for the same number under the same secret. */
  key(digits: string): string;
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

/**
 * Runs `use` with the person's data key; a key that can no longer be unwrapped (SB_VALIDATION: it
 * was wrapped under a secret this process does not have) is replaced by a new one first. Whatever
 * it sealed is already unreadable, and the person is giving their number again (`/verify`), so
 * nothing readable is lost; without this, `/verify` could never work again for them (issue 18).
 */
const withUsableKey = async <T>(keys: PersonKeys, slackUserId: string, use: () => Promise<T>): Promise<T> => {
  try {
    return await use();
  } catch (error) {
    if (!hasCode(error, 'SB_VALIDATION')) throw error;
    await keys.forget(slackUserId);
    return use();
  }
};

export const createPhoneSealer = (secret: string, keys?: PersonKeys): PhoneSealer => {
  const sealer: Sealer = createSealer(secret, 'phone-number');
  const hmacKey = Buffer.from(hkdfSync('sha256', secret, 'switchboard', 'phone-number-key', 32));
  const key = (digits: string) => createHmac('sha256', hmacKey).update(digits).digest('hex').slice(0, 32);
  const openAny = async (sealed: string): Promise<string | null> => {
    if (isPersonalSealed(sealed)) {
      if (!keys) return null;
      try {
        return await keys.open(sealed);
      } catch (error) {
        // The person's data key cannot be unwrapped (sealed under another secret): as unreadable
        // as a forgotten one. A store that cannot be read is not that: it throws on.
        if (hasCode(error, 'SB_VALIDATION')) return null;
        throw error;
      }
    }
    try {
      return sealer.open(sealed);
    } catch {
      return null; // sealed under a secret since rotated: as unreadable as a forgotten one
    }
  };
  return {
    seal: (digits) => sealer.seal(digits),
    open: (sealed) => sealer.open(sealed),
    key,
    sealFor: (slackUserId, digits) =>
      keys
        ? withUsableKey(keys, slackUserId, () => keys.seal(slackUserId, digits))
        : Promise.resolve(sealer.seal(digits)),
    keyFor: (slackUserId, digits) =>
      keys
        ? withUsableKey(keys, slackUserId, () => keys.blindIndex(slackUserId, digits))
        : Promise.resolve(key(digits)),
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

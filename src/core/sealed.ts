import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { ChatOpsError } from './errors.ts';

/**
 * Values that must be kept to be used later but must not be readable in the store: a Slack
 * `response_url` is a bearer capability (anyone holding it can post into the conversation for
 * 30 minutes), yet the reply processor needs it after a restart. Sealed with AES-256-GCM, so the
 * store file, a backup or the event browser shows `sealed:…` instead.
 *
 * Today values are sealed under the data key ring (`sealed:v2:<ring key id>:…`, src/core/keyRing.ts,
 * SWITCHBOARD_DATA_KEYS). `createSealer` is the older scheme, `sealed:v1:…` under a key derived
 * (HKDF-SHA256) from a vendor secret: kept so values sealed before the ring still open (the ring
 * reads it as its legacy entries), never used to seal anything new.
 *
 * @example
 * const sealer = keyRing.sealer('response_url');
 * const stored = sealer.seal(body.response_url); // 'sealed:v2:k1:…'
 * await post(sealer.open(stored), message);
 */
export type Sealer = Readonly<{
  seal(plain: string): string;
  /** The plain value; a value that was never sealed (recorded before sealing existed) as it is. */
  open(value: string): string;
  isSealed(value: string): boolean;
}>;

const PREFIX = 'sealed:v1:';
/** A value sealed under a key derived from a vendor secret (before the data key ring). */
export const SEALED_V1_PREFIX = PREFIX;
/** A value sealed under the data key ring: `sealed:v2:<ring key id>:<base64url>`. */
export const SEALED_V2_PREFIX = 'sealed:v2:';

/** The purpose Slack `response_url`s are sealed under (the inbox seals, the reply poster opens). */
export const RESPONSE_URL_PURPOSE = 'response_url';

/** Whether a stored value is sealed (by any sealer, either scheme): safe to keep at rest. */
export const isSealedValue = (value: string): boolean =>
  value.startsWith(PREFIX) || value.startsWith(SEALED_V2_PREFIX);
const IV_BYTES = 12;
const TAG_BYTES = 16;

/**
 * AES-256-GCM of `plain` under `key` (32 bytes) bound to `aad`: base64url of IV ‖ tag ‖ ciphertext.
 * The one cipher every sealed value here uses (sealers, the code vault, people's own keys).
 */
export const gcmSeal = (key: Buffer, aad: Buffer, plain: string): string => {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(aad);
  const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url');
};

/** What `gcmSeal` sealed, or null when it does not open under `key` and `aad` (or is not one). */
export const gcmOpen = (key: Buffer, aad: Buffer, packed: string): string | null => {
  const raw = Buffer.from(packed, 'base64url');
  if (raw.length < IV_BYTES + TAG_BYTES) return null;
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, IV_BYTES));
    decipher.setAAD(aad);
    decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString(
      'utf8',
    );
  } catch {
    return null;
  }
};

/** The `sealed:v1:` key of `purpose` under `secret`: HKDF-SHA256, as `createSealer` derives it. */
export const v1SealKey = (secret: string, purpose: string): Buffer =>
  Buffer.from(hkdfSync('sha256', secret, 'switchboard', `sealed:${purpose}`, 32));

/** The AAD a `sealed:v1:` value of `purpose` is bound to. */
export const v1SealAad = (purpose: string): Buffer => Buffer.from(purpose);

/**
 * @deprecated Seals under a vendor secret, which rotates: use `KeyRing.sealer(purpose)`
 * (src/core/keyRing.ts). Kept for values sealed before the key ring (the ring opens them as legacy).
 */
export const createSealer = (secret: string, purpose: string): Sealer => {
  if (secret === '') throw new ChatOpsError('SB_CONFIG', 'a sealer needs a non-empty secret');
  const key = v1SealKey(secret, purpose);
  const aad = v1SealAad(purpose);
  const isSealed = (value: string) => value.startsWith(PREFIX);
  return {
    isSealed,
    seal(plain) {
      return `${PREFIX}${gcmSeal(key, aad, plain)}`;
    },
    open(value) {
      if (!isSealed(value)) return value;
      const plain = gcmOpen(key, aad, value.slice(PREFIX.length));
      if (plain === null) {
        // Never the value itself in the message: it is the secret.
        throw new ChatOpsError(
          'SB_VALIDATION',
          `a sealed ${purpose} could not be opened (sealed under another key)`,
        );
      }
      return plain;
    },
  };
};

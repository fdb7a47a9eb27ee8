import { hkdfSync, randomBytes } from 'node:crypto';
import { ChatOpsError } from './errors.ts';
import {
  gcmOpen,
  gcmSeal,
  SEALED_V1_PREFIX,
  SEALED_V2_PREFIX,
  type Sealer,
  v1SealAad,
  v1SealKey,
} from './sealed.ts';

/**
 * The data key ring: Switchboard's own encryption keys for what it keeps sealed at rest (each
 * person's data key, numbers of people nobody verified, Slack `response_url`s), separate from every
 * vendor secret so rotating a webhook secret never makes stored data unreadable.
 *
 * - Configured as `SWITCHBOARD_DATA_KEYS=<id>:<base64>[,<id>:<base64>…]`: each key exactly 32
 *   random bytes (base64 or base64url), each id 1-32 of `[A-Za-z0-9_-]`. The **first** key seals;
 *   **every** key opens. `npm run keys -- generate [id]` prints a new entry.
 * - A sealed value names the ring key that sealed it: `sealed:v2:<ring key id>:<base64url>`
 *   (AES-256-GCM under a per-purpose key derived from the ring key with HKDF-SHA256, the purpose
 *   and the id bound as additional data), so a value sealed for one purpose never opens as another,
 *   and a missing key is named rather than guessed at.
 * - Rotation is adding a key in front: new values are sealed under it, the older keys keep opening
 *   what they sealed, and long-lived values (person keys) are re-wrapped (src/people/personKeys.ts).
 * - Legacy: values sealed before the ring (`sealed:v1:`, a key derived from a vendor secret) keep
 *   opening while that secret is configured: the candidate secrets per purpose are the ring's
 *   legacy entries (`createKeyRing(keys, { 'person-key': [vonageSignatureSecret, …] })`).
 *
 * @example
 * const parsed = parseKeyRing(config.dataKeysText); // { ok: true, keys } or { ok: false, problem }
 * const ring = createKeyRing(keys, { response_url: [slackSigningSecret] });
 * const sealer = ring.sealer('response_url');
 * const stored = sealer.seal('https://hooks.slack.com/…'); // 'sealed:v2:k2026:…'
 * sealer.open(stored); // the URL
 * sealer.keyIdOf(stored); // 'k2026'
 */

/** One key of the ring: its id (named in every value it seals) and its 32 bytes. */
export type RingKey = Readonly<{ id: string; key: Buffer }>;

/** Candidate secrets per purpose that sealed `sealed:v1:` values before the ring existed. */
export type LegacySecrets = Readonly<Record<string, readonly string[]>>;

/** What `keyIdOf` answers for a `sealed:v1:` value (sealed before the ring): not a valid ring id. */
export const LEGACY_KEY_ID = '(legacy)';

/** The environment variable that holds the ring. */
export const DATA_KEYS_VARIABLE = 'SWITCHBOARD_DATA_KEYS';

export const RING_KEY_ID = /^[A-Za-z0-9_-]{1,32}$/;
const KEY_BYTES = 32;
/** base64 (`+/`, padded or not) or base64url (`-_`) of exactly 32 bytes: 43 characters and an optional `=`. */
const KEY_TEXT = /^[A-Za-z0-9+/_-]{43}=?$/;
const MAX_KEYS = 32;

export type ParsedKeyRing =
  | Readonly<{ ok: true; keys: readonly RingKey[] }>
  | Readonly<{ ok: false; problem: string }>;

/**
 * Parses `SWITCHBOARD_DATA_KEYS`. A problem names the entry (its position, and its id when the id
 * itself is fine) and never shows key material.
 */
export const parseKeyRing = (text: string): ParsedKeyRing => {
  const fail = (problem: string): ParsedKeyRing => ({ ok: false, problem });
  const trimmed = text.trim();
  if (trimmed === '') return fail('is empty: give at least one key, <id>:<base64 of 32 bytes>');
  const entries = trimmed.split(',').map((e) => e.trim());
  if (entries.length > MAX_KEYS) return fail(`has ${entries.length} keys: at most ${MAX_KEYS}`);
  const keys: RingKey[] = [];
  for (const [i, entry] of entries.entries()) {
    const n = i + 1;
    if (entry === '') return fail(`has an empty entry (entry ${n}): entries are separated by single commas`);
    const colon = entry.indexOf(':');
    if (colon < 0) return fail(`entry ${n} is not <id>:<base64 key> (no colon)`);
    const id = entry.slice(0, colon).trim();
    const text = entry.slice(colon + 1).trim();
    if (!RING_KEY_ID.test(id)) {
      return fail(`entry ${n} has a malformed id: an id is 1-32 letters, digits, '-' or '_'`);
    }
    const key = KEY_TEXT.test(text) ? Buffer.from(text, 'base64') : undefined;
    if (key?.length !== KEY_BYTES) {
      const bytes = /^[A-Za-z0-9+/_-]*={0,2}$/.test(text) ? Buffer.from(text, 'base64').length : undefined;
      return fail(
        `key "${id}" is not ${KEY_BYTES} bytes of base64${bytes === undefined ? '' : ` (it decodes to ${bytes} bytes)`}`,
      );
    }
    const same = keys.find((k) => k.id === id);
    if (same) return fail(`key id "${id}" appears twice: each key needs its own id`);
    const twin = keys.find((k) => k.key.equals(key));
    if (twin) return fail(`keys "${twin.id}" and "${id}" are the same key: each entry needs its own key`);
    keys.push({ id, key });
  }
  return { ok: true, keys };
};

/** The ring key parts of a `SWITCHBOARD_DATA_KEYS` value, for the log scrubber (never logged). */
export const keyRingSecrets = (text: string): string[] =>
  text
    .split(',')
    .map((e) => e.slice(e.indexOf(':') + 1).trim())
    .filter((k) => k.length > 0);

/**
 * A new ring entry, `<id>:<base64 of 32 random bytes>`, to put in front of SWITCHBOARD_DATA_KEYS.
 * The default id is the date and 4 random hex digits (`k20261123-3f9a`), so ids sort by age.
 */
export const generateRingEntry = (
  options: Readonly<{ id?: string; now?: Date; random?: (bytes: number) => Buffer }> = {},
): string => {
  const random = options.random ?? randomBytes;
  const id =
    options.id ??
    `k${(options.now ?? new Date()).toISOString().slice(0, 10).replaceAll('-', '')}-${random(2).toString('hex')}`;
  if (!RING_KEY_ID.test(id)) {
    throw new ChatOpsError(
      'SB_VALIDATION',
      `a key id is 1-32 letters, digits, '-' or '_', not ${JSON.stringify(id)}`,
    );
  }
  return `${id}:${random(KEY_BYTES).toString('base64')}`;
};

/** A sealer for one purpose on the ring: seals under the first key, opens under any (and legacy). */
export type RingSealer = Sealer &
  Readonly<{
    /** The plain value; null when nothing on the ring (nor a legacy secret) opens it. A value never sealed, as it is. */
    tryOpen(value: string): string | null;
    /**
     * The ring key a sealed value names (`sealed:v2:<id>:…`), `LEGACY_KEY_ID` for a `sealed:v1:`
     * value, null for a value that is not sealed.
     */
    keyIdOf(value: string): string | null;
    /** True for a sealed value not sealed under the first ring key (an older key, or legacy): re-wrap it. */
    needsRewrap(value: string): boolean;
  }>;

export type KeyRing = Readonly<{
  /** The ids in order: the first seals, every one opens. */
  ids: readonly string[];
  /** The id of the key that seals (the first). */
  sealingKeyId: string;
  has(id: string): boolean;
  /** The sealer of `purpose` (`person-key`, `phone-number`, `response_url`, …); the same one each call. */
  sealer(purpose: string): RingSealer;
  /**
   * A 32-byte key for `purpose` derived (HKDF-SHA256) from the sealing key, for keyed hashes that
   * are not sealing (a blind index): it changes when a key is put in front of the ring.
   */
  derive(purpose: string): Buffer;
  /** The candidate legacy secrets of `purpose` (how many; never the secrets). */
  legacyCount(purpose: string): number;
}>;

const derive = (ikm: Buffer, info: string): Buffer =>
  Buffer.from(hkdfSync('sha256', ikm, 'switchboard', info, KEY_BYTES));

/**
 * Builds the ring from parsed keys (`parseKeyRing`) and the legacy secrets per purpose (the vendor
 * secrets values were sealed under before the ring; empty ones are ignored).
 * @throws ChatOpsError SB_CONFIG for an empty ring or a malformed key (parse first to say why).
 */
export const createKeyRing = (keys: readonly RingKey[], legacy: LegacySecrets = {}): KeyRing => {
  if (keys.length === 0) throw new ChatOpsError('SB_CONFIG', `${DATA_KEYS_VARIABLE} needs at least one key`);
  for (const k of keys) {
    if (!RING_KEY_ID.test(k.id) || k.key.length !== KEY_BYTES) {
      throw new ChatOpsError('SB_CONFIG', `${DATA_KEYS_VARIABLE}: key "${k.id}" is malformed`);
    }
  }
  const byId = new Map(keys.map((k) => [k.id, k.key]));
  const first = keys[0]!;
  const sealers = new Map<string, RingSealer>();

  const makeSealer = (purpose: string): RingSealer => {
    // Per-purpose keys, derived once per ring key on first use.
    const purposeKeys = new Map<string, Buffer>();
    const keyFor = (id: string): Buffer | undefined => {
      const ringKey = byId.get(id);
      if (!ringKey) return undefined;
      let k = purposeKeys.get(id);
      if (!k) {
        k = derive(ringKey, `${SEALED_V2_PREFIX}${purpose}`);
        purposeKeys.set(id, k);
      }
      return k;
    };
    const aad = (id: string) => Buffer.from(`${SEALED_V2_PREFIX}${id}:${purpose}`);
    const legacyKeys = [...new Set((legacy[purpose] ?? []).filter((s) => s !== ''))].map((s) =>
      v1SealKey(s, purpose),
    );
    const legacyAad = v1SealAad(purpose);

    const isSealed = (value: string) =>
      value.startsWith(SEALED_V2_PREFIX) || value.startsWith(SEALED_V1_PREFIX);
    const split = (value: string): { id: string; packed: string } | null => {
      const rest = value.slice(SEALED_V2_PREFIX.length);
      const colon = rest.indexOf(':');
      if (colon < 1) return null;
      return { id: rest.slice(0, colon), packed: rest.slice(colon + 1) };
    };
    const keyIdOf = (value: string): string | null => {
      if (value.startsWith(SEALED_V1_PREFIX)) return LEGACY_KEY_ID;
      if (!value.startsWith(SEALED_V2_PREFIX)) return null;
      return split(value)?.id ?? null;
    };
    const tryOpen = (value: string): string | null => {
      if (value.startsWith(SEALED_V1_PREFIX)) {
        const packed = value.slice(SEALED_V1_PREFIX.length);
        for (const k of legacyKeys) {
          const plain = gcmOpen(k, legacyAad, packed);
          if (plain !== null) return plain;
        }
        return null;
      }
      if (!value.startsWith(SEALED_V2_PREFIX)) return value;
      const parts = split(value);
      const key = parts ? keyFor(parts.id) : undefined;
      if (!parts || !key) return null;
      return gcmOpen(key, aad(parts.id), parts.packed);
    };
    return {
      isSealed,
      keyIdOf,
      tryOpen,
      seal: (plain) => `${SEALED_V2_PREFIX}${first.id}:${gcmSeal(keyFor(first.id)!, aad(first.id), plain)}`,
      open(value) {
        const plain = tryOpen(value);
        if (plain !== null) return plain;
        // Never the value itself in the message: it is the secret.
        const id = keyIdOf(value);
        const why =
          id === LEGACY_KEY_ID
            ? 'sealed before the data key ring, under a secret no longer configured'
            : id !== null && byId.has(id)
              ? `ring key "${id}" does not open it`
              : `sealed under ring key "${id ?? '?'}", which ${DATA_KEYS_VARIABLE} does not hold`;
        throw new ChatOpsError('SB_VALIDATION', `a sealed ${purpose} could not be opened (${why})`, {
          details: { reason: 'sealed_under_missing_key', ringKeyId: id },
        });
      },
      needsRewrap: (value) => {
        const id = keyIdOf(value);
        return id !== null && id !== first.id;
      },
    };
  };

  return {
    ids: keys.map((k) => k.id),
    sealingKeyId: first.id,
    has: (id) => byId.has(id),
    sealer(purpose) {
      let s = sealers.get(purpose);
      if (!s) {
        s = makeSealer(purpose);
        sealers.set(purpose, s);
      }
      return s;
    },
    derive: (purpose) => derive(first.key, `derived:${purpose}`),
    legacyCount: (purpose) => new Set((legacy[purpose] ?? []).filter((s) => s !== '')).size,
  };
};

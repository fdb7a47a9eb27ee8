import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import { ConcurrencyError, ValidationError } from '../core/errors.ts';
import { createSealer, gcmOpen, gcmSeal } from '../core/sealed.ts';
import type { EventStore } from '../eventStore/eventStore.ts';

/**
 * A data key per person, for personal data that must be made unreadable on demand
 * (crypto-shredding): a verified phone number is sealed under its owner's key wherever it is
 * recorded, and forgetting the person deletes the key, so every sealed copy (in events, commands,
 * inbox records, backups) can no longer be opened by anyone. Nothing is rewritten.
 *
 * - The key is 32 random bytes (AES-256-GCM), made on first use and kept in the stream
 *   `personkey-<slackUserId>` (`PersonKeyCreated`), itself sealed under the configured master
 *   secret, so the store alone does not give it away.
 * - `forget` deletes that stream for good (`EventStore.deleteStream`: SQLite overwrites the rows
 *   and truncates its WAL; KurrentDB deletes the stream and scavenging removes the bytes).
 * - Lookups by value use a blind index: `blindIndex` is an HMAC of the value under the person's
 *   key, so equal values can be matched (the stream of a phone's replies) without any record
 *   revealing the value, and after `forget` it is unlinkable too.
 * - Sealed values read `personal:v1:<slackUserId>:<keyId>:<base64url>`; the key id tells a value
 *   sealed under a forgotten key (it opens to null) from one sealed under the current key.
 *
 * Keys are read from the store at each use (no cache), so a key forgotten by one replica opens
 * nothing on another.
 *
 * @example
 * const keys = createPersonKeys({ store, secret: config.signatureSecret });
 * const sealed = await keys.seal('U0ANA', '447700900123'); // 'personal:v1:U0ANA:…'
 * await keys.open(sealed); // '447700900123'
 * await keys.forget('U0ANA');
 * await keys.open(sealed); // null
 */
export type PersonKeys = Readonly<{
  /** Seals `plain` under the person's key (made now if they have none). */
  seal(slackUserId: string, plain: string): Promise<string>;
  /** The plain value, or null when its key was forgotten (or it is not a personal sealed value). */
  open(sealed: string): Promise<string | null>;
  /** 32 hex characters: the same for the same value and person while their key lives. */
  blindIndex(slackUserId: string, plain: string): Promise<string>;
  /** Deletes the person's key: whatever it sealed can no longer be opened. Idempotent. */
  forget(slackUserId: string): Promise<void>;
  /** Whether the person has a key now. */
  has(slackUserId: string): Promise<boolean>;
}>;

export const PERSON_KEY_STREAM_PREFIX = 'personkey-';
export const PERSON_KEY_CREATED = 'PersonKeyCreated';
export const PERSONAL_PREFIX = 'personal:v1:';

const SLACK_USER = /^[UW][A-Z0-9]{2,30}$/;

export const personKeyStreamId = (slackUserId: string): string => {
  if (!SLACK_USER.test(slackUserId)) throw new ValidationError('a person key belongs to a Slack user');
  return `${PERSON_KEY_STREAM_PREFIX}${slackUserId}`;
};

/** Whether a stored value is sealed under a person's key. */
export const isPersonalSealed = (value: string): boolean => value.startsWith(PERSONAL_PREFIX);

/** The person a personal sealed value belongs to, or null. */
export const ownerOfSealed = (value: string): string | null => {
  if (!isPersonalSealed(value)) return null;
  const user = value.slice(PERSONAL_PREFIX.length).split(':')[0] ?? '';
  return SLACK_USER.test(user) ? user : null;
};

type Key = Readonly<{ keyId: string; key: Buffer }>;

export const createPersonKeys = (deps: Readonly<{ store: EventStore; secret: string }>): PersonKeys => {
  const { store } = deps;
  const master = createSealer(deps.secret, 'person-key');

  const current = async (slackUserId: string): Promise<Key | null> => {
    const [first] = await store.readStream(personKeyStreamId(slackUserId), { maxCount: 1 });
    if (first?.type !== PERSON_KEY_CREATED) return null;
    const d = first.data as { keyId?: unknown; sealedKey?: unknown };
    if (typeof d.keyId !== 'string' || typeof d.sealedKey !== 'string') return null;
    return { keyId: d.keyId, key: Buffer.from(master.open(d.sealedKey), 'base64') };
  };

  const keyOf = async (slackUserId: string): Promise<Key> => {
    const held = await current(slackUserId);
    if (held) return held;
    const key = randomBytes(32);
    const keyId = randomUUID().replaceAll('-', '').slice(0, 16);
    try {
      await store.appendToStream(
        personKeyStreamId(slackUserId),
        [
          {
            id: randomUUID(),
            type: PERSON_KEY_CREATED,
            data: { slackUserId, keyId, sealedKey: master.seal(key.toString('base64')) },
          },
        ],
        { expectedRevision: 'no_stream' },
      );
      return { keyId, key };
    } catch (e) {
      // Made at the same moment elsewhere: use that one.
      if (!(e instanceof ConcurrencyError)) throw e;
      const made = await current(slackUserId);
      if (!made) throw e;
      return made;
    }
  };

  const aad = (slackUserId: string, keyId: string) => Buffer.from(`person:${slackUserId}:${keyId}`);

  return {
    async seal(slackUserId, plain) {
      const { keyId, key } = await keyOf(slackUserId);
      return `${PERSONAL_PREFIX}${slackUserId}:${keyId}:${gcmSeal(key, aad(slackUserId, keyId), plain)}`;
    },

    async open(sealed) {
      if (!isPersonalSealed(sealed)) return null;
      const [slackUserId, keyId, packed] = sealed.slice(PERSONAL_PREFIX.length).split(':');
      if (!slackUserId || !keyId || !packed || !SLACK_USER.test(slackUserId)) return null;
      const held = await current(slackUserId);
      if (!held || held.keyId !== keyId) return null;
      return gcmOpen(held.key, aad(slackUserId, keyId), packed);
    },

    async blindIndex(slackUserId, plain) {
      const { key } = await keyOf(slackUserId);
      return createHmac('sha256', key).update(`blind:${plain}`).digest('hex').slice(0, 32);
    },

    async forget(slackUserId) {
      await store.deleteStream(personKeyStreamId(slackUserId));
    },

    has: async (slackUserId) => (await current(slackUserId)) !== null,
  };
};

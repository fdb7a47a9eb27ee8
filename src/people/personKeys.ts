import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import { ChatOpsError, ConcurrencyError, ValidationError } from '../core/errors.ts';
import { DATA_KEYS_VARIABLE, type KeyRing, LEGACY_KEY_ID } from '../core/keyRing.ts';
import { gcmOpen, gcmSeal } from '../core/sealed.ts';
import type { EventStore, RecordedEvent } from '../eventStore/eventStore.ts';

/**
 * A data key per person, for personal data that must be made unreadable on demand
 * (crypto-shredding): a verified phone number is sealed under its owner's key wherever it is
 * recorded, and forgetting the person deletes the key, so every sealed copy (in events, commands,
 * inbox records, backups) can no longer be opened by anyone. Nothing is rewritten.
 *
 * - The key is 32 random bytes (AES-256-GCM), made on first use and kept in the stream
 *   `personkey-<slackUserId>`: `PersonKeyCreated { keyId, sealedKey }`, the key wrapped under the
 *   data key ring (src/core/keyRing.ts, SWITCHBOARD_DATA_KEYS: `sealed:v2:<ring key id>:…`), so the
 *   store alone does not give it away. Keys made before the ring were wrapped under a key derived
 *   from VONAGE_SIGNATURE_SECRET (`sealed:v1:`): the ring opens them through its legacy entries.
 * - Re-wrapping (a key put in front of the ring, or a legacy wrap) appends
 *   `PersonKeyRewrapped { keyId, sealedKey, ringKeyId }`: the same key, wrapped under the ring's
 *   first key. Readers use the latest wrap. `rewrap()` does it for everyone (at every start, and
 *   `npm run keys -- rewrap`); it is safe on several replicas at once (expected revisions).
 * - `forget` deletes that stream for good (`EventStore.deleteStream`: SQLite overwrites the rows
 *   and truncates its WAL; KurrentDB deletes the stream and scavenging removes the bytes), every
 *   wrap of the key with it.
 * - Lookups by value use a blind index: `blindIndex` is an HMAC of the value under the person's
 *   key, so equal values can be matched (the stream of a phone's replies) without any record
 *   revealing the value, and after `forget` it is unlinkable too. Re-wrapping keeps the key, so
 *   blind indexes and sealed values stay as they are.
 * - Sealed values read `personal:v1:<slackUserId>:<keyId>:<base64url>`; the key id tells a value
 *   sealed under a forgotten key (it opens to null) from one sealed under the current key.
 * - A key the ring cannot unwrap (its ring key was removed or lost) opens nothing: `open` gives
 *   null, never throws. The start refuses such a ring first (`preparePersonKeys`), and
 *   `forgetUnreadable` is the way out when a ring key is lost for good.
 *
 * Keys are read from the store at each use (no cache), so a key forgotten by one replica opens
 * nothing on another.
 *
 * @example
 * const keys = createPersonKeys({ store, ring: keyRing });
 * const sealed = await keys.seal('U0ANA', '447700900123'); // 'personal:v1:U0ANA:…'
 * await keys.open(sealed); // '447700900123'
 * await keys.forget('U0ANA');
 * await keys.open(sealed); // null
 */
export type PersonKeys = Readonly<{
  /** Seals `plain` under the person's key (made now if they have none). */
  seal(slackUserId: string, plain: string): Promise<string>;
  /**
   * The plain value, or null when its key was forgotten, cannot be unwrapped by the ring, or it is
   * not a personal sealed value. Never throws for a key it cannot open.
   */
  open(sealed: string): Promise<string | null>;
  /** 32 hex characters: the same for the same value and person while their key lives. */
  blindIndex(slackUserId: string, plain: string): Promise<string>;
  /** Deletes the person's key: whatever it sealed can no longer be opened. Idempotent. */
  forget(slackUserId: string): Promise<void>;
  /** Whether the person has a key now (readable or not). */
  has(slackUserId: string): Promise<boolean>;
  /** Every person key in the store: which ring key wraps it, and whether this ring opens it. */
  survey(): Promise<PersonKeySurvey>;
  /**
   * Re-wraps under the ring's first key every person key wrapped under another (an older ring key,
   * or the legacy derivation). Keys the ring cannot open are left as they are and reported.
   * `found`: a survey just made, to skip making another (each key is read again before its re-wrap).
   */
  rewrap(found?: PersonKeySurvey): Promise<RewrapReport>;
  /** Deletes (crypto-shreds) the person keys nothing on the ring opens; returns whose. */
  forgetUnreadable(): Promise<readonly string[]>;
}>;

/** One person's key as stored: the ring key id of its latest wrap (LEGACY_KEY_ID before the ring). */
export type PersonKeyWrap = Readonly<{
  slackUserId: string;
  keyId: string;
  /** The ring key id its latest wrap names, `LEGACY_KEY_ID` for a wrap from before the ring, null if unsealed. */
  ringKeyId: string | null;
  readable: boolean;
  /** The stream's last revision (for the re-wrap's expected revision). */
  revision: number;
}>;

export type PersonKeySurvey = Readonly<{
  keys: readonly PersonKeyWrap[];
  /** How many person keys each wrap names: ring key ids, `LEGACY_KEY_ID`. */
  byRingKey: Readonly<Record<string, number>>;
  unreadable: readonly PersonKeyWrap[];
}>;

export type RewrapReport = Readonly<{
  /** Re-wrapped here under the first ring key. */
  rewrapped: number;
  /** Already under the first ring key. */
  current: number;
  /** Re-wrapped (or forgotten) by someone else meanwhile: another replica starting too. */
  elsewhere: number;
  /** Not re-wrapped: nothing on the ring opens them. */
  unreadable: readonly PersonKeyWrap[];
}>;

export const PERSON_KEY_STREAM_PREFIX = 'personkey-';
export const PERSON_KEY_CREATED = 'PersonKeyCreated';
export const PERSON_KEY_REWRAPPED = 'PersonKeyRewrapped';
export const PERSONAL_PREFIX = 'personal:v1:';
/** The ring purpose person keys are wrapped under (its legacy entries: VONAGE_SIGNATURE_SECRET). */
export const PERSON_KEY_PURPOSE = 'person-key';

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

type Wrapped = Readonly<{ keyId: string; sealedKey: string; revision: number }>;

/**
 * The latest wrap of a person's key from its stream's events (in order): `PersonKeyCreated` starts
 * it, each `PersonKeyRewrapped` of the same key id replaces the wrap. Null when there is none.
 */
const foldWraps = (events: readonly RecordedEvent[]): Wrapped | null => {
  let wrap: { keyId: string; sealedKey: string } | null = null;
  for (const e of events) {
    const d = e.data as { keyId?: unknown; sealedKey?: unknown };
    if (typeof d.keyId !== 'string' || typeof d.sealedKey !== 'string') continue;
    if (e.type === PERSON_KEY_CREATED) wrap = { keyId: d.keyId, sealedKey: d.sealedKey };
    else if (e.type === PERSON_KEY_REWRAPPED && wrap !== null && wrap.keyId === d.keyId) {
      wrap = { keyId: wrap.keyId, sealedKey: d.sealedKey };
    }
  }
  const last = events.at(-1);
  return wrap && last ? { ...wrap, revision: last.revision } : null;
};

type Held =
  | Readonly<{ status: 'none' }>
  | Readonly<{ status: 'unreadable'; keyId: string; ringKeyId: string | null; revision: number }>
  | Readonly<{ status: 'ok'; keyId: string; key: Buffer; ringKeyId: string | null; revision: number }>;

export const createPersonKeys = (deps: Readonly<{ store: EventStore; ring: KeyRing }>): PersonKeys => {
  const { store, ring } = deps;
  const wrapper = ring.sealer(PERSON_KEY_PURPOSE);

  /** The key a wrap holds, or null when the ring cannot unwrap it (or it is not a 32-byte key). */
  const unwrap = (wrap: Wrapped): Buffer | null => {
    if (!wrapper.isSealed(wrap.sealedKey)) return null;
    const plain = wrapper.tryOpen(wrap.sealedKey);
    if (plain === null) return null;
    const key = Buffer.from(plain, 'base64');
    return key.length === 32 ? key : null;
  };

  const held = (wrap: Wrapped | null): Held => {
    if (!wrap) return { status: 'none' };
    const ringKeyId = wrapper.keyIdOf(wrap.sealedKey);
    const key = unwrap(wrap);
    return key
      ? { status: 'ok', keyId: wrap.keyId, key, ringKeyId, revision: wrap.revision }
      : { status: 'unreadable', keyId: wrap.keyId, ringKeyId, revision: wrap.revision };
  };

  const current = async (slackUserId: string): Promise<Held> =>
    held(foldWraps(await store.readStream(personKeyStreamId(slackUserId))));

  const unreadableError = (slackUserId: string, ringKeyId: string | null) =>
    new ChatOpsError(
      'SB_CONFIG',
      `the data key of ${slackUserId} cannot be opened: ${describeWrap(ringKeyId, ring)}`,
      { details: { reason: 'person_key_unreadable', variable: DATA_KEYS_VARIABLE, ringKeyId } },
    );

  const keyOf = async (slackUserId: string): Promise<{ keyId: string; key: Buffer }> => {
    const found = await current(slackUserId);
    if (found.status === 'ok') return found;
    if (found.status === 'unreadable') throw unreadableError(slackUserId, found.ringKeyId);
    const key = randomBytes(32);
    const keyId = randomUUID().replaceAll('-', '').slice(0, 16);
    try {
      await store.appendToStream(
        personKeyStreamId(slackUserId),
        [
          {
            id: randomUUID(),
            type: PERSON_KEY_CREATED,
            data: { slackUserId, keyId, sealedKey: wrapper.seal(key.toString('base64')) },
          },
        ],
        { expectedRevision: 'no_stream' },
      );
      return { keyId, key };
    } catch (e) {
      // Made at the same moment elsewhere: use that one.
      if (!(e instanceof ConcurrencyError)) throw e;
      const made = await current(slackUserId);
      if (made.status === 'ok') return made;
      if (made.status === 'unreadable') throw unreadableError(slackUserId, made.ringKeyId);
      throw e;
    }
  };

  const aad = (slackUserId: string, keyId: string) => Buffer.from(`person:${slackUserId}:${keyId}`);

  const survey = async (): Promise<PersonKeySurvey> => {
    // Every person-key event in global order (deleted streams are gone from it), folded per stream.
    // A sparse read: a start surveys the keys, and on SQLite that costs the keys, not the history.
    const byStream = new Map<string, RecordedEvent[]>();
    let after: bigint | undefined;
    for (;;) {
      const batch = await store.readAll({
        ...(after === undefined ? {} : { after }),
        filter: {
          streamPrefixes: [PERSON_KEY_STREAM_PREFIX],
          eventTypes: [PERSON_KEY_CREATED, PERSON_KEY_REWRAPPED],
          sparse: true,
        },
        maxCount: 1_000,
      });
      for (const e of batch) {
        if (e.kind !== 'event') continue;
        byStream.set(e.streamId, [...(byStream.get(e.streamId) ?? []), e]);
      }
      after = batch.at(-1)?.position ?? after;
      if (batch.length < 1_000) break;
    }
    const keys: PersonKeyWrap[] = [];
    for (const [streamId, events] of byStream) {
      const slackUserId = streamId.slice(PERSON_KEY_STREAM_PREFIX.length);
      if (!SLACK_USER.test(slackUserId)) continue;
      const h = held(foldWraps(events));
      if (h.status === 'none') continue;
      keys.push({
        slackUserId,
        keyId: h.keyId,
        ringKeyId: h.ringKeyId,
        readable: h.status === 'ok',
        revision: h.revision,
      });
    }
    const byRingKey: Record<string, number> = {};
    for (const k of keys) {
      const id = k.ringKeyId ?? 'unsealed';
      byRingKey[id] = (byRingKey[id] ?? 0) + 1;
    }
    return { keys, byRingKey, unreadable: keys.filter((k) => !k.readable) };
  };

  /** Re-wraps one key, read afresh; 'elsewhere' when someone else re-wrapped or forgot it meanwhile. */
  const rewrapOne = async (
    slackUserId: string,
    keyId: string,
  ): Promise<'rewrapped' | 'current' | 'elsewhere' | 'unreadable'> => {
    for (let attempt = 0; attempt < 5; attempt++) {
      const found = await current(slackUserId);
      if (found.status === 'none' || found.keyId !== keyId) return 'elsewhere';
      if (found.status === 'unreadable') return 'unreadable';
      if (found.ringKeyId === ring.sealingKeyId) return attempt === 0 ? 'current' : 'elsewhere';
      try {
        await store.appendToStream(
          personKeyStreamId(slackUserId),
          [
            {
              id: randomUUID(),
              type: PERSON_KEY_REWRAPPED,
              data: {
                slackUserId,
                keyId,
                sealedKey: wrapper.seal(found.key.toString('base64')),
                ringKeyId: ring.sealingKeyId,
              },
            },
          ],
          { expectedRevision: found.revision },
        );
        return 'rewrapped';
      } catch (e) {
        // Another replica re-wrapped it (or the person was forgotten) since it was read: look again.
        if (!(e instanceof ConcurrencyError)) throw e;
      }
    }
    return 'elsewhere';
  };

  return {
    async seal(slackUserId, plain) {
      const { keyId, key } = await keyOf(slackUserId);
      return `${PERSONAL_PREFIX}${slackUserId}:${keyId}:${gcmSeal(key, aad(slackUserId, keyId), plain)}`;
    },

    async open(sealed) {
      if (!isPersonalSealed(sealed)) return null;
      const [slackUserId, keyId, packed] = sealed.slice(PERSONAL_PREFIX.length).split(':');
      if (!slackUserId || !keyId || !packed || !SLACK_USER.test(slackUserId)) return null;
      const found = await current(slackUserId);
      if (found.status !== 'ok' || found.keyId !== keyId) return null;
      return gcmOpen(found.key, aad(slackUserId, keyId), packed);
    },

    async blindIndex(slackUserId, plain) {
      const { key } = await keyOf(slackUserId);
      return createHmac('sha256', key).update(`blind:${plain}`).digest('hex').slice(0, 32);
    },

    async forget(slackUserId) {
      await store.deleteStream(personKeyStreamId(slackUserId));
    },

    has: async (slackUserId) => (await current(slackUserId)).status !== 'none',

    survey,

    async rewrap(surveyed) {
      const found = surveyed ?? (await survey());
      let rewrapped = 0;
      let currentCount = 0;
      let elsewhere = 0;
      const unreadable: PersonKeyWrap[] = [];
      for (const wrap of found.keys) {
        if (!wrap.readable) {
          unreadable.push(wrap);
          continue;
        }
        if (wrap.ringKeyId === ring.sealingKeyId) {
          currentCount++;
          continue;
        }
        const outcome = await rewrapOne(wrap.slackUserId, wrap.keyId);
        if (outcome === 'rewrapped') rewrapped++;
        else if (outcome === 'current') currentCount++;
        else if (outcome === 'elsewhere') elsewhere++;
        else unreadable.push(wrap);
      }
      return { rewrapped, current: currentCount, elsewhere, unreadable };
    },

    async forgetUnreadable() {
      const { unreadable } = await survey();
      for (const k of unreadable) await store.deleteStream(personKeyStreamId(k.slackUserId));
      return unreadable.map((k) => k.slackUserId);
    },
  };
};

/** Why a wrap does not open, in words for operators (never key material). */
export const describeWrap = (ringKeyId: string | null, ring: KeyRing): string =>
  ringKeyId === LEGACY_KEY_ID
    ? ring.legacyCount(PERSON_KEY_PURPOSE) > 0
      ? 'it was wrapped before the data key ring, under a VONAGE_SIGNATURE_SECRET that is no longer configured'
      : 'it was wrapped before the data key ring, under VONAGE_SIGNATURE_SECRET, which is not configured'
    : ringKeyId === null
      ? 'its wrap is not sealed'
      : ring.has(ringKeyId)
        ? `ring key "${ringKeyId}" in ${DATA_KEYS_VARIABLE} does not open it (another key under the same id?)`
        : `it is wrapped under ring key "${ringKeyId}", which ${DATA_KEYS_VARIABLE} does not hold`;

/**
 * The start's check and repair of person keys, before any processor runs or request is taken:
 * refuses (SB_CONFIG, naming SWITCHBOARD_DATA_KEYS, the ring key ids missing and how many people
 * are affected) a ring that cannot open every person key in the store, then re-wraps the keys not
 * under the ring's first key.
 * @throws ChatOpsError SB_CONFIG when some person key cannot be opened; nothing is written then.
 */
export const preparePersonKeys = async (keys: PersonKeys, ring: KeyRing): Promise<RewrapReport> => {
  const found = await keys.survey();
  if (found.unreadable.length > 0) throw unreadablePersonKeysError(found.unreadable, ring);
  const report = await keys.rewrap(found);
  if (report.unreadable.length > 0) throw unreadablePersonKeysError(report.unreadable, ring);
  return report;
};

/** The refusal of a ring that cannot open some person keys: what is missing, how many, what to do. */
export const unreadablePersonKeysError = (
  unreadable: readonly PersonKeyWrap[],
  ring: KeyRing,
): ChatOpsError => {
  const groups = new Map<string | null, number>();
  for (const k of unreadable) groups.set(k.ringKeyId, (groups.get(k.ringKeyId) ?? 0) + 1);
  const people = (n: number) => (n === 1 ? '1 person' : `${n} people`);
  const reasons = [...groups].map(([id, n]) => `${people(n)}: ${describeWrap(id, ring)}`);
  const missing = [...groups.keys()].filter(
    (id): id is string => id !== null && id !== LEGACY_KEY_ID && !ring.has(id),
  );
  return new ChatOpsError(
    'SB_CONFIG',
    [
      `${DATA_KEYS_VARIABLE} cannot open the data keys of ${people(unreadable.length)} in the store (their verified phone numbers):`,
      ...reasons.map((r) => `  - ${r}`),
      missing.length > 0
        ? `Put ${missing.map((id) => `"${id}"`).join(', ')} back in ${DATA_KEYS_VARIABLE} (after the key that seals, e.g. ${ring.sealingKeyId}:…,${missing[0]}:…) and start again.`
        : `Configure the secret those keys were wrapped under and start again.`,
      'If a key is lost for good, `npm run keys -- forget-unreadable` deletes the data keys nobody can open: those people must verify their phones again (docs/operations.md, "The data key ring").',
    ].join('\n'),
    {
      details: {
        reason: 'person_keys_unreadable',
        variable: DATA_KEYS_VARIABLE,
        missingRingKeyIds: missing,
        people: unreadable.length,
      },
    },
  );
};

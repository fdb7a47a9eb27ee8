import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import type { KeyRing } from '../../src/core/keyRing.ts';
import { createSealer, gcmSeal } from '../../src/core/sealed.ts';
import {
  createSqliteEventStore,
  type SqliteEventStore,
} from '../../src/eventStore/sqlite/sqliteEventStore.ts';
import { createPersonKeys, ownerOfSealed, preparePersonKeys } from '../../src/people/personKeys.ts';
import { caught } from '../support/caught.ts';
import { ringEntry, testKeyRing } from '../support/dataKeys.ts';

/** A data key per person (crypto-shredding): sealed values open while the key lives, never after. */
let store: SqliteEventStore | undefined;
afterEach(async () => {
  await store?.close();
  store = undefined;
});

const OLD = ringEntry('old', 1);
const NEW = ringEntry('new', 2);

const open = (ring: KeyRing = testKeyRing()) => {
  store = createSqliteEventStore({ path: ':memory:' });
  return { store, keys: createPersonKeys({ store, ring }) };
};

const types = async (s: SqliteEventStore, user: string) =>
  (await s.readStream(`personkey-${user}`)).map((e) => e.type);

describe('person keys', () => {
  it('seals under the person’s own key, opens while it lives, and nothing after forget, not even under a new key', async () => {
    const { store: s, keys } = open();
    const sealed = await keys.seal('U0ANA', '447700900101');
    expect(sealed).toMatch(/^personal:v1:U0ANA:/);
    expect(sealed).not.toContain('447700900101');
    expect(ownerOfSealed(sealed)).toBe('U0ANA');
    expect(await keys.open(sealed)).toBe('447700900101');
    // The key at rest is wrapped under the data key ring, naming its key, never in clear.
    const [created] = await s.readStream('personkey-U0ANA');
    expect(String(created?.data.sealedKey)).toMatch(/^sealed:v2:test:/);

    const blind = await keys.blindIndex('U0ANA', '447700900101');
    expect(blind).toMatch(/^[0-9a-f]{32}$/);
    expect(await keys.blindIndex('U0ANA', '447700900101')).toBe(blind);
    expect(await keys.blindIndex('U0BEN', '447700900101')).not.toBe(blind);

    await keys.forget('U0ANA');
    expect(await keys.has('U0ANA')).toBe(false);
    expect(await keys.open(sealed)).toBeNull();
    await keys.forget('U0ANA');

    // A new key (after verifying again) opens its own values, not the old ones.
    const again = await keys.seal('U0ANA', '447700900101');
    expect(await keys.open(again)).toBe('447700900101');
    expect(await keys.open(sealed)).toBeNull();
    expect(await keys.blindIndex('U0ANA', '447700900101')).not.toBe(blind);
  });

  it('opens nothing forged: another person’s name on the value, a changed byte, a plain value', async () => {
    const { keys } = open();
    const sealed = await keys.seal('U0ANA', '447700900101');
    await keys.seal('U0BEN', 'x');
    expect(await keys.open(sealed.replace('U0ANA', 'U0BEN'))).toBeNull();
    // One character of the ciphertext changed (a middle one: every bit of it is data, never padding).
    const at = sealed.length - 8;
    const tampered = `${sealed.slice(0, at)}${sealed[at] === 'A' ? 'B' : 'A'}${sealed.slice(at + 1)}`;
    expect(tampered).not.toBe(sealed);
    expect(await keys.open(tampered)).toBeNull();
    expect(await keys.open('447700900101')).toBeNull();
    expect(await keys.open('personal:v1:../etc:x:y')).toBeNull();
  });

  it('a key another key-holder made at the same moment is used, not replaced', async () => {
    const { store: s } = open();
    const a = createPersonKeys({ store: s, ring: testKeyRing() });
    const b = createPersonKeys({ store: s, ring: testKeyRing() });
    const [x, y] = await Promise.all([a.seal('U0ANA', 'one'), b.seal('U0ANA', 'two')]);
    expect(await b.open(x)).toBe('one');
    expect(await a.open(y)).toBe('two');
    expect(await s.readStream('personkey-U0ANA')).toHaveLength(1);
  });
});

describe('person keys on a rotating key ring', () => {
  it('a key put in front: old wraps still open, rewrap wraps them under it (same key), then the old ring key can go', async () => {
    const { store: s, keys: before } = open(testKeyRing(OLD));
    const ana = await before.seal('U0ANA', '447700900101');
    const blind = await before.blindIndex('U0ANA', '447700900101');
    await before.seal('U0BEN', '447700900102');

    const rotated = createPersonKeys({ store: s, ring: testKeyRing(`${NEW},${OLD}`) });
    expect(await rotated.open(ana)).toBe('447700900101');
    expect((await rotated.survey()).byRingKey).toEqual({ old: 2 });
    // A key made now is wrapped under the new key.
    await rotated.seal('U0CHEN', 'x');
    expect((await rotated.survey()).byRingKey).toEqual({ old: 2, new: 1 });

    const report = await rotated.rewrap();
    expect(report).toEqual({ rewrapped: 2, current: 1, elsewhere: 0, unreadable: [] });
    expect(await types(s, 'U0ANA')).toEqual(['PersonKeyCreated', 'PersonKeyRewrapped']);
    const [, rewrapped] = await s.readStream('personkey-U0ANA');
    expect(rewrapped?.data).toMatchObject({ slackUserId: 'U0ANA', ringKeyId: 'new' });
    expect(String(rewrapped?.data.sealedKey)).toMatch(/^sealed:v2:new:/);
    expect((await rotated.survey()).byRingKey).toEqual({ new: 3 });
    // Nothing left to do: a second run changes nothing.
    expect(await rotated.rewrap()).toEqual({ rewrapped: 0, current: 3, elsewhere: 0, unreadable: [] });

    // Without the old key: everything still opens, blind indexes unchanged (the key is the same).
    const after = createPersonKeys({ store: s, ring: testKeyRing(NEW) });
    expect(await after.open(ana)).toBe('447700900101');
    expect(await after.blindIndex('U0ANA', '447700900101')).toBe(blind);
    expect((await after.survey()).unreadable).toEqual([]);

    // Forgetting still shreds every wrap of the key.
    await after.forget('U0ANA');
    expect(await s.readStream('personkey-U0ANA')).toEqual([]);
    expect(await after.open(ana)).toBeNull();
  });

  it('a key no ring key opens: open gives null (never throws), sealing refuses naming the ring key, the start check refuses, forgetUnreadable shreds it', async () => {
    const { store: s, keys: before } = open(testKeyRing(OLD));
    const ana = await before.seal('U0ANA', '447700900101');
    const ringWithout = testKeyRing(NEW);
    const without = createPersonKeys({ store: s, ring: ringWithout });
    await without.seal('U0BEN', 'fine');

    expect(await without.open(ana)).toBeNull();
    expect(await without.has('U0ANA')).toBe(true);
    const refused = await caught(without.seal('U0ANA', 'again'));
    expect(refused).toMatchObject({
      code: 'SB_CONFIG',
      details: { reason: 'person_key_unreadable', ringKeyId: 'old' },
    });
    expect(String(refused)).toContain('ring key "old", which SWITCHBOARD_DATA_KEYS does not hold');
    expect((await without.survey()).unreadable.map((k) => [k.slackUserId, k.ringKeyId])).toEqual([
      ['U0ANA', 'old'],
    ]);

    const stopped = await caught(preparePersonKeys(without, ringWithout));
    expect(stopped).toMatchObject({
      code: 'SB_CONFIG',
      details: { variable: 'SWITCHBOARD_DATA_KEYS', missingRingKeyIds: ['old'], people: 1 },
    });
    expect(String(stopped)).toContain('SWITCHBOARD_DATA_KEYS cannot open the data keys of 1 person');
    expect(String(stopped)).toContain('Put "old" back in SWITCHBOARD_DATA_KEYS');
    expect(String(stopped)).toContain('npm run keys -- forget-unreadable');
    expect(String(stopped)).not.toContain(Buffer.alloc(32, 1).toString('base64'));
    // Refused before writing anything: Ben's key was not re-wrapped (it needs nothing anyway) and Ana's is as it was.
    expect(await types(s, 'U0ANA')).toEqual(['PersonKeyCreated']);

    expect(await without.forgetUnreadable()).toEqual(['U0ANA']);
    expect(await s.readStream('personkey-U0ANA')).toEqual([]);
    expect(await without.has('U0BEN')).toBe(true);
    expect(await preparePersonKeys(without, ringWithout)).toEqual({
      rewrapped: 0,
      current: 1,
      elsewhere: 0,
      unreadable: [],
    });
  });

  it('a key wrapped before the ring (under the VONAGE_SIGNATURE_SECRET derivation) opens through the legacy entry and is re-wrapped', async () => {
    const secret = 'vonage-signature-secret-before-the-ring';
    const { store: s } = open();
    // Written as the code before the ring wrote it.
    const key = Buffer.alloc(32, 7);
    const keyId = 'legacykey0000001';
    await s.appendToStream(
      'personkey-U0ANA',
      [
        {
          id: randomUUID(),
          type: 'PersonKeyCreated',
          data: {
            slackUserId: 'U0ANA',
            keyId,
            sealedKey: createSealer(secret, 'person-key').seal(key.toString('base64')),
          },
        },
      ],
      { expectedRevision: 'no_stream' },
    );
    const sealed = `personal:v1:U0ANA:${keyId}:${gcmSeal(key, Buffer.from(`person:U0ANA:${keyId}`), '447700900101')}`;

    expect(await createPersonKeys({ store: s, ring: testKeyRing() }).open(sealed)).toBeNull();
    const ring = testKeyRing(undefined, { 'person-key': ['some-newer-secret', secret] });
    const keys = createPersonKeys({ store: s, ring });
    expect(await keys.open(sealed)).toBe('447700900101');
    expect((await keys.survey()).byRingKey).toEqual({ '(legacy)': 1 });
    expect(await preparePersonKeys(keys, ring)).toMatchObject({ rewrapped: 1 });
    // Now the vendor secret can rotate: the ring alone opens it.
    expect(await createPersonKeys({ store: s, ring: testKeyRing() }).open(sealed)).toBe('447700900101');

    // Without the secret, the start check says what it was wrapped under.
    const { store: other } = { store: createSqliteEventStore({ path: ':memory:' }) };
    try {
      await other.appendToStream('personkey-U0BEN', [
        {
          id: randomUUID(),
          type: 'PersonKeyCreated',
          data: {
            slackUserId: 'U0BEN',
            keyId,
            sealedKey: createSealer(secret, 'person-key').seal(key.toString('base64')),
          },
        },
      ]);
      const plain = testKeyRing();
      const stopped = await caught(preparePersonKeys(createPersonKeys({ store: other, ring: plain }), plain));
      expect(String(stopped)).toContain('wrapped before the data key ring, under VONAGE_SIGNATURE_SECRET');
      expect(stopped).toMatchObject({ details: { missingRingKeyIds: [], people: 1 } });
    } finally {
      await other.close();
    }
  });

  it('two replicas re-wrapping at once: one re-wrap recorded, no error on either', async () => {
    const { store: s, keys: before } = open(testKeyRing(OLD));
    for (const user of ['U0ANA', 'U0BEN', 'U0CHEN']) await before.seal(user, 'x');
    const ring = testKeyRing(`${NEW},${OLD}`);
    const a = createPersonKeys({ store: s, ring });
    const b = createPersonKeys({ store: s, ring });
    const [ra, rb] = await Promise.all([a.rewrap(), b.rewrap()]);
    expect(ra.rewrapped + rb.rewrapped).toBe(3);
    expect(ra.rewrapped + ra.current + ra.elsewhere).toBe(3);
    expect(rb.rewrapped + rb.current + rb.elsewhere).toBe(3);
    for (const user of ['U0ANA', 'U0BEN', 'U0CHEN']) {
      expect(await types(s, user)).toEqual(['PersonKeyCreated', 'PersonKeyRewrapped']);
    }
  });
});

import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  createKeyRing,
  generateRingEntry,
  keyRingSecrets,
  LEGACY_KEY_ID,
  parseKeyRing,
  type RingKey,
} from '../../src/core/keyRing.ts';
import { createSealer, isSealedValue } from '../../src/core/sealed.ts';

/** The data key ring (SWITCHBOARD_DATA_KEYS): parsing, sealing under the first key, opening under any, legacy. */

const key = (fill: number) => Buffer.alloc(32, fill);
const entry = (id: string, fill: number, encoding: 'base64' | 'base64url' = 'base64') =>
  `${id}:${key(fill).toString(encoding)}`;
const ring = (...keys: RingKey[]) => createKeyRing(keys);
const parsed = (text: string): readonly RingKey[] => {
  const r = parseKeyRing(text);
  if (!r.ok) throw new Error(r.problem);
  return r.keys;
};
const problem = (text: string): string => {
  const r = parseKeyRing(text);
  if (r.ok) throw new Error(`parsed: ${text}`);
  return r.problem;
};

describe('parseKeyRing', () => {
  it('reads id:base64 entries in order, base64 or base64url, padded or not, spaces around commas', () => {
    const url = key(0xfb).toString('base64url'); // has - and _
    expect(url).toMatch(/[-_]/);
    const keys = parsed(
      ` new:${key(1).toString('base64')} , old_2024:${url} ,x-1:${key(3).toString('base64').replace(/=$/, '')}`,
    );
    expect(keys.map((k) => k.id)).toEqual(['new', 'old_2024', 'x-1']);
    expect(keys[0]!.key.equals(key(1))).toBe(true);
    expect(keys[1]!.key.equals(key(0xfb))).toBe(true);
    expect(keys[2]!.key.equals(key(3))).toBe(true);
  });

  it('refuses an empty ring, an empty entry, an entry without an id, a malformed or too long id', () => {
    expect(problem('')).toMatch(/is empty/);
    expect(problem('   ')).toMatch(/is empty/);
    expect(problem(`${entry('a', 1)},,${entry('b', 2)}`)).toMatch(/empty entry \(entry 2\)/);
    expect(problem(`${entry('a', 1)},`)).toMatch(/empty entry \(entry 2\)/);
    expect(problem(key(1).toString('base64'))).toMatch(/entry 1 is not <id>:<base64 key>/);
    expect(problem(entry('has space', 1))).toMatch(/entry 1 has a malformed id/);
    expect(problem(entry('dot.ted', 1))).toMatch(/malformed id/);
    expect(problem(entry('', 1))).toMatch(/malformed id/);
    expect(problem(entry('a'.repeat(33), 1))).toMatch(/malformed id/);
    expect(parsed(entry('a'.repeat(32), 1))).toHaveLength(1);
  });

  it('refuses a key that is not exactly 32 bytes of base64, and never shows the key', () => {
    const short = randomBytes(16).toString('base64');
    const long = randomBytes(48).toString('base64');
    const notBase64 = `${'!'.repeat(43)}=`;
    for (const [text, says] of [
      [`k:${short}`, /key "k" is not 32 bytes of base64 \(it decodes to 16 bytes\)/],
      [`k:${long}`, /decodes to 48 bytes/],
      [`k:${notBase64}`, /key "k" is not 32 bytes of base64$/],
      ['k:', /key "k" is not 32 bytes/],
    ] as const) {
      const p = problem(text);
      expect(p).toMatch(says);
      const material = text.slice(2);
      if (material.length > 3) expect(p).not.toContain(material);
    }
  });

  it('refuses the same id twice and the same key under two ids', () => {
    expect(problem(`${entry('a', 1)},${entry('a', 2)}`)).toMatch(/key id "a" appears twice/);
    expect(problem(`${entry('a', 1)},${entry('b', 1, 'base64url')}`)).toMatch(/"a" and "b" are the same key/);
  });

  it('gives the scrubber every key part', () => {
    const text = `${entry('a', 1)},${entry('b', 2)}`;
    expect(keyRingSecrets(text)).toEqual([key(1).toString('base64'), key(2).toString('base64')]);
  });
});

describe('generateRingEntry', () => {
  it('makes an entry the parser takes: the given id, or a dated one, and 32 fresh bytes', () => {
    const a = generateRingEntry({ id: 'next' });
    const b = generateRingEntry({ now: new Date('2026-11-23T10:00:00Z') });
    expect(a).toMatch(/^next:[A-Za-z0-9+/]{43}=$/);
    expect(b).toMatch(/^k20261123-[0-9a-f]{4}:/);
    const keys = parsed(`${a},${b}`);
    expect(keys[0]!.key.equals(keys[1]!.key)).toBe(false);
    expect(() => generateRingEntry({ id: 'no spaces' })).toThrow(/a key id is 1-32/);
  });
});

describe('the ring', () => {
  const k1 = { id: 'k1', key: key(1) };
  const k2 = { id: 'k2', key: key(2) };

  it('seals under the first key, naming it; opens under any key of the ring', () => {
    const old = ring(k1).sealer('response_url');
    const sealedOld = old.seal('https://hooks.slack.com/x');
    expect(sealedOld).toMatch(/^sealed:v2:k1:[A-Za-z0-9_-]+$/);
    expect(sealedOld).not.toContain('hooks.slack.com');
    expect(isSealedValue(sealedOld)).toBe(true);

    const rotated = ring(k2, k1);
    expect(rotated.ids).toEqual(['k2', 'k1']);
    expect(rotated.sealingKeyId).toBe('k2');
    const s = rotated.sealer('response_url');
    expect(s.open(sealedOld)).toBe('https://hooks.slack.com/x');
    expect(s.keyIdOf(sealedOld)).toBe('k1');
    expect(s.needsRewrap(sealedOld)).toBe(true);
    const sealedNew = s.seal('https://hooks.slack.com/y');
    expect(s.keyIdOf(sealedNew)).toBe('k2');
    expect(s.needsRewrap(sealedNew)).toBe(false);
    // Two seals of one value differ (a fresh IV each time).
    expect(s.seal('v')).not.toBe(s.seal('v'));
  });

  it('a value whose key left the ring does not open: open says which key, tryOpen gives null', () => {
    const sealed = ring(k1).sealer('person-key').seal('secret bytes');
    const without = ring(k2).sealer('person-key');
    expect(without.tryOpen(sealed)).toBeNull();
    expect(() => without.open(sealed)).toThrow(
      'a sealed person-key could not be opened (sealed under ring key "k1", which SWITCHBOARD_DATA_KEYS does not hold)',
    );
    // Another key under the same id: named as the key that does not open it.
    const impostor = ring({ id: 'k1', key: key(9) }).sealer('person-key');
    expect(() => impostor.open(sealed)).toThrow('ring key "k1" does not open it');
  });

  it('binds the purpose and the key id: a value never opens as another purpose or under another id', () => {
    const r = ring(k1, k2);
    const sealed = r.sealer('phone-number').seal('447700900101');
    expect(r.sealer('response_url').tryOpen(sealed)).toBeNull();
    expect(r.sealer('phone-number').tryOpen(sealed.replace('sealed:v2:k1:', 'sealed:v2:k2:'))).toBeNull();
    // One character of the ciphertext changed (a middle one: every bit of it is data, never padding).
    const at = sealed.length - 8;
    const tampered = `${sealed.slice(0, at)}${sealed[at] === 'A' ? 'B' : 'A'}${sealed.slice(at + 1)}`;
    expect(tampered).not.toBe(sealed);
    expect(r.sealer('phone-number').tryOpen(tampered)).toBeNull();
    expect(r.sealer('phone-number').tryOpen('sealed:v2:k1')).toBeNull();
    expect(r.sealer('phone-number').tryOpen('sealed:v2::abc')).toBeNull();
  });

  it('a value that was never sealed opens as itself (records from before sealing)', () => {
    const s = ring(k1).sealer('response_url');
    expect(s.open('https://hooks.slack.com/plain')).toBe('https://hooks.slack.com/plain');
    expect(s.keyIdOf('plain')).toBeNull();
    expect(s.needsRewrap('plain')).toBe(false);
    expect(s.isSealed('plain')).toBe(false);
  });

  it('opens legacy sealed:v1: values under any candidate secret of their purpose, and only those', () => {
    const legacy = createSealer('vonage-signature-secret-old', 'person-key').seal('a person key');
    const r = createKeyRing([k1], {
      'person-key': ['rotated-away-secret', 'vonage-signature-secret-old'],
      'phone-number': ['vonage-signature-secret-old'],
    });
    const s = r.sealer('person-key');
    expect(s.open(legacy)).toBe('a person key');
    expect(s.keyIdOf(legacy)).toBe(LEGACY_KEY_ID);
    expect(s.needsRewrap(legacy)).toBe(true);
    expect(r.legacyCount('person-key')).toBe(2);
    // The purpose is bound: the same secret for another purpose does not open it.
    expect(r.sealer('phone-number').tryOpen(legacy)).toBeNull();
    // Without the secret it was sealed under, it does not open, and says why.
    expect(() => ring(k1).sealer('person-key').open(legacy)).toThrow(
      'a sealed person-key could not be opened (sealed before the data key ring, under a secret no longer configured)',
    );
  });

  it('derives keys for keyed hashes from the sealing key: stable for one ring, new after a rotation', () => {
    const a = ring(k1).derive('phone-number-key');
    expect(a).toHaveLength(32);
    expect(ring(k1, k2).derive('phone-number-key').equals(a)).toBe(true);
    expect(ring(k2, k1).derive('phone-number-key').equals(a)).toBe(false);
    expect(ring(k1).derive('other').equals(a)).toBe(false);
  });

  it('refuses an empty ring or a malformed key', () => {
    expect(() => createKeyRing([])).toThrow(/SWITCHBOARD_DATA_KEYS needs at least one key/);
    expect(() => createKeyRing([{ id: 'k', key: Buffer.alloc(16) }])).toThrow(/malformed/);
  });
});

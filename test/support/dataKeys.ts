import { createKeyRing, type KeyRing, type LegacySecrets, parseKeyRing } from '../../src/core/keyRing.ts';

/** The tests' data key ring (SWITCHBOARD_DATA_KEYS): one key, id `test`, 32 fixed bytes. */
export const TEST_DATA_KEYS = `test:${Buffer.alloc(32, 0x5b).toString('base64')}`;

/** A ring entry with fixed bytes, for rotation tests: `ringEntry('new', 7)`. */
export const ringEntry = (id: string, fill: number): string =>
  `${id}:${Buffer.alloc(32, fill).toString('base64')}`;

/**
 * A key ring from `SWITCHBOARD_DATA_KEYS` text (default the tests' ring), with legacy secrets.
 * @example const ring = testKeyRing(); const other = testKeyRing(ringEntry('other', 1));
 */
export const testKeyRing = (text: string = TEST_DATA_KEYS, legacy: LegacySecrets = {}): KeyRing => {
  const parsed = parseKeyRing(text);
  if (!parsed.ok) throw new Error(`test key ring: ${parsed.problem}`);
  return createKeyRing(parsed.keys, legacy);
};

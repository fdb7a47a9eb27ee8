import { afterEach, describe, expect, it } from 'vitest';
import {
  createSqliteEventStore,
  type SqliteEventStore,
} from '../../src/eventStore/sqlite/sqliteEventStore.ts';
import { createPersonKeys, ownerOfSealed } from '../../src/people/personKeys.ts';

/** A data key per person (crypto-shredding): sealed values open while the key lives, never after. */
let store: SqliteEventStore | undefined;
afterEach(async () => {
  await store?.close();
  store = undefined;
});

const open = () => {
  store = createSqliteEventStore({ path: ':memory:' });
  return { store, keys: createPersonKeys({ store, secret: 'master-secret-for-tests' }) };
};

describe('person keys', () => {
  it('seals under the person’s own key, opens while it lives, and nothing after forget, not even under a new key', async () => {
    const { store: s, keys } = open();
    const sealed = await keys.seal('U0ANA', '447700900101');
    expect(sealed).toMatch(/^personal:v1:U0ANA:/);
    expect(sealed).not.toContain('447700900101');
    expect(ownerOfSealed(sealed)).toBe('U0ANA');
    expect(await keys.open(sealed)).toBe('447700900101');
    // The key at rest is sealed under the master secret, never in clear.
    const [created] = await s.readStream('personkey-U0ANA');
    expect(String(created?.data.sealedKey)).toMatch(/^sealed:v1:/);

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
    const tampered = `${sealed.slice(0, -2)}${sealed.endsWith('A') ? 'B' : 'A'}${sealed.slice(-1)}`;
    expect(await keys.open(tampered)).toBeNull();
    expect(await keys.open('447700900101')).toBeNull();
    expect(await keys.open('personal:v1:../etc:x:y')).toBeNull();
  });

  it('a key another key-holder made at the same moment is used, not replaced', async () => {
    const { store: s } = open();
    const a = createPersonKeys({ store: s, secret: 'master-secret-for-tests' });
    const b = createPersonKeys({ store: s, secret: 'master-secret-for-tests' });
    const [x, y] = await Promise.all([a.seal('U0ANA', 'one'), b.seal('U0ANA', 'two')]);
    expect(await b.open(x)).toBe('one');
    expect(await a.open(y)).toBe('two');
    expect(await s.readStream('personkey-U0ANA')).toHaveLength(1);
  });
});

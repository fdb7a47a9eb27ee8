import { describe, expect, it } from 'vitest';
import { manualClock } from '../../src/core/clock.ts';
import { CODE_VAULT_TTL_MS, createCodeVault } from '../../src/verification/codeVault.ts';

describe('code vault', () => {
  it('seals a code so only this vault opens it, and only until the key is dropped', () => {
    const clock = manualClock();
    const vault = createCodeVault({ now: () => clock.now() });
    const sealed = vault.seal('check-1', '482913');
    expect(sealed).toMatch(/^vault:v1:check-1:/);
    expect(sealed).not.toContain('482913');
    expect(Buffer.from(sealed.split(':').at(-1) ?? '', 'base64url').toString('latin1')).not.toContain(
      '482913',
    );
    expect(vault.open(sealed)).toBe('482913');
    // Another process (another vault) has no key: the stored value is unreadable there.
    expect(createCodeVault({ now: () => clock.now() }).open(sealed)).toBeNull();
    vault.drop('check-1');
    expect(vault.open(sealed)).toBeNull();
    expect(vault.size()).toBe(0);
  });

  it('a redelivered submission seals under the same key: the first sealed value still opens', () => {
    const clock = manualClock();
    const vault = createCodeVault({ now: () => clock.now() });
    const first = vault.seal('check-r', '246810');
    const again = vault.seal('check-r', '246810');
    expect(again).not.toBe(first);
    expect(vault.open(first)).toBe('246810');
    expect(vault.size()).toBe(1);
  });

  it('forgets keys after 15 minutes', () => {
    const clock = manualClock();
    const vault = createCodeVault({ now: () => clock.now() });
    const sealed = vault.seal('check-2', '1234');
    clock.advance(CODE_VAULT_TTL_MS - 1);
    expect(vault.open(sealed)).toBe('1234');
    clock.advance(1);
    expect(vault.open(sealed)).toBeNull();
  });

  it('refuses a tampered value', () => {
    const clock = manualClock();
    const vault = createCodeVault({ now: () => clock.now() });
    const sealed = vault.seal('check-3', '123456');
    const body = Buffer.from(sealed.split(':').at(-1) ?? '', 'base64url');
    body[body.length - 1] = (body[body.length - 1] ?? 0) ^ 1;
    expect(vault.open(`vault:v1:check-3:${body.toString('base64url')}`)).toBeNull();
    expect(vault.open('vault:v1:check-3')).toBeNull();
    expect(vault.open('123456')).toBeNull();
  });
});

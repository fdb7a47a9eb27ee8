import { randomBytes } from 'node:crypto';
import { gcmOpen, gcmSeal } from '../core/sealed.ts';

/**
 * Where a typed one-time code waits between the modal submission and the vendor's check, so the
 * code is never readable in the store, a backup, a log or the event browser.
 *
 * The code travels in the command and the `VerificationCodeSubmitted` fact sealed with AES-256-GCM
 * under a random key made for that one submission (the check's request id). The key lives only in
 * this process's memory: the check processor opens the code, calls the vendor, records only the
 * outcome, and drops the key. Keys not used within 15 minutes are dropped too. So once the check is
 * answered, or the process restarts, the sealed value in the store can be opened by no one, this
 * process included (crypto-shredding). A restart between the submission and the check finds no
 * key: the person is asked, in a DM, to enter the code again.
 *
 * @example
 * const vault = createCodeVault({ now: () => clock.now() });
 * const sealed = vault.seal(checkId, '123456'); // 'vault:v1:<checkId>:…'
 * vault.open(sealed); // '123456', or null when the key is gone
 * vault.drop(checkId);
 */
export type CodeVault = Readonly<{
  /** Seals `code` under the key of `keyId`, made on first use. */
  seal(keyId: string, code: string): string;
  /** The code, or null when its key is gone (used, expired, or made by another process). */
  open(sealed: string): string | null;
  /** Forgets the key: what it sealed can no longer be opened. */
  drop(keyId: string): void;
  /** How many keys are held (for tests). */
  size(): number;
}>;

export const CODE_VAULT_TTL_MS = 15 * 60_000;
const PREFIX = 'vault:v1:';

export const createCodeVault = (options: Readonly<{ now: () => Date; ttlMs?: number }>): CodeVault => {
  const ttl = options.ttlMs ?? CODE_VAULT_TTL_MS;
  const keys = new Map<string, { key: Buffer; until: number }>();
  const sweep = () => {
    const now = options.now().getTime();
    for (const [id, k] of keys) {
      if (k.until <= now) {
        k.key.fill(0);
        keys.delete(id);
      }
    }
  };
  const drop = (keyId: string) => {
    keys.get(keyId)?.key.fill(0);
    keys.delete(keyId);
  };
  return {
    seal(keyId, code) {
      sweep();
      if (!/^[A-Za-z0-9:-]{1,200}$/.test(keyId)) throw new TypeError('a vault key id is a plain id');
      // A redelivered submission (the same check id) reuses the key, so the value recorded the
      // first time still opens.
      const held = keys.get(keyId);
      const key = held?.key ?? randomBytes(32);
      if (!held) keys.set(keyId, { key, until: options.now().getTime() + ttl });
      return `${PREFIX}${keyId}:${gcmSeal(key, Buffer.from(keyId), code)}`;
    },
    open(sealed) {
      sweep();
      if (!sealed.startsWith(PREFIX)) return null;
      const rest = sealed.slice(PREFIX.length);
      const cut = rest.lastIndexOf(':');
      if (cut <= 0) return null;
      const keyId = rest.slice(0, cut);
      const held = keys.get(keyId);
      if (!held) return null;
      return gcmOpen(held.key, Buffer.from(keyId), rest.slice(cut + 1));
    },
    drop,
    size: () => {
      sweep();
      return keys.size;
    },
  };
};

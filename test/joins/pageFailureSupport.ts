import type { EventStore } from '../../src/eventStore/eventStore.ts';
import { createPersonKeys, personKeyStreamId } from '../../src/people/personKeys.ts';

/**
 * Issue 18's failure tests share these: making a person's data key unreadable the way a lost or
 * rotated secret does, and the scan for internal words on every surface people see.
 */

/**
 * Replaces the person's data key with one wrapped under a secret this app does not have: every
 * number sealed under their key can no longer be opened, and opening it fails as it does after a
 * restart with another secret (the data key cannot be unwrapped), not as after a forget (no key).
 */
export const makePersonKeyUnreadable = async (store: EventStore, slackUserId: string): Promise<void> => {
  await store.deleteStream(personKeyStreamId(slackUserId));
  await createPersonKeys({ store, secret: 'a-secret-this-app-never-had' }).seal(slackUserId, 'unused');
};

/**
 * What people must never read (issue 18 item 8): key, seal, stream, error codes (`SB_…`) and
 * snake_case codes (`must_verify_again`, `phone_unreadable`), a vendor's numeric code (`1300 Absent
 * subscriber`). Slack's emoji (`:no_bell:`) and
 * mentions are not words; "keypad" is not "key".
 */
export const internalWords = (texts: readonly string[]): string[] => {
  const found: string[] = [];
  for (const raw of texts) {
    const text = raw.replace(/:[a-z0-9_+-]+:/g, ' ').replace(/<[@#!][^>]*>/g, ' ');
    const hit =
      /\b(keys?|seal(ed|s)?|unseal\w*|streams?|SB_[A-Z_]+|[a-z]+_[a-z_]+)\b/i.exec(text) ??
      // A vendor's numeric error code in front of its words (`1300 Absent subscriber`).
      /\b[0-9]{3,5} [A-Z][a-z]/.exec(text);
    if (hit) found.push(`${hit[0]} in: ${raw.slice(Math.max(0, hit.index - 60), hit.index + 60)}`);
  }
  return found;
};

import type { EventStore } from '../../src/eventStore/eventStore.ts';
import { createPersonKeys, personKeyStreamId } from '../../src/people/personKeys.ts';
import { ringEntry, testKeyRing } from '../support/dataKeys.ts';
import type { JoinsHarness } from './harness.ts';
import { PHONES } from './harness.ts';

/**
 * Issue 18's failure tests share these: making a person's data key unreadable the way a lost or
 * rotated secret does, and the scan for internal words on every surface people see.
 */

/**
 * The person's data key is lost the way a lost ring key loses it: wrapped under a ring key this app
 * does not have, then shredded as the operator's way out does (`npm run keys -- forget-unreadable
 * --yes`; until then the start refuses). Every number sealed under it can no longer be opened: the
 * person must verify again.
 */
export const makePersonKeyUnreadable = async (store: EventStore, slackUserId: string): Promise<void> => {
  await store.deleteStream(personKeyStreamId(slackUserId));
  await createPersonKeys({ store, ring: testKeyRing(ringEntry('lost', 0x42)) }).seal(slackUserId, 'unused');
  const forgotten = await createPersonKeys({ store, ring: testKeyRing() }).forgetUnreadable();
  if (!forgotten.includes(slackUserId)) throw new Error(`the key of ${slackUserId} was not shredded`);
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

/** Every string under a `text` key (Block Kit text objects, messages, views), anywhere in `value`. */
const textsIn = (value: unknown, out: string[] = []): string[] => {
  if (Array.isArray(value)) for (const v of value) textsIn(v, out);
  else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (k === 'text' && typeof v === 'string') out.push(v);
      else textsIn(v, out);
    }
  }
  return out;
};

/**
 * Everything people were shown or told (issue 18 item 8): every Slack message posted or updated,
 * ephemeral, `response_url` answer, modal and App Home view (their texts and blocks), every SMS to
 * the team's phones and every word a call spoke.
 */
export const everythingPeopleSaw = (j: JoinsHarness): string[] => [
  ...[
    'chat.postMessage',
    'chat.update',
    'chat.postEphemeral',
    'views.open',
    'views.update',
    'views.push',
    'views.publish',
  ].flatMap((method) => j.fake.callsOf(method).flatMap((c) => textsIn(c.params))),
  ...j.fake.responsePosts.flatMap((p) => textsIn(p.body)),
  ...Object.values(PHONES).flatMap((n) => [
    ...j.smsTo(n).map((m) => m.text),
    ...j.vonage.phones.calls(n).flatMap((c) => c.spoken),
  ]),
];

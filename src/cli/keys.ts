import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConfigError, type Env, formatConfigProblems, loadKeysConfig, processEnv } from '../config.ts';
import { asError, isChatOpsError } from '../core/errors.ts';
import {
  createKeyRing,
  DATA_KEYS_VARIABLE,
  generateRingEntry,
  type KeyRing,
  LEGACY_KEY_ID,
} from '../core/keyRing.ts';
import type { EventStore } from '../eventStore/eventStore.ts';
import { openEventStore } from '../eventStore/openEventStore.ts';
import { ALL_LIFECYCLES } from '../lifecycleList.ts';
import { createPersonKeys, describeWrap, type PersonKeySurvey } from '../people/personKeys.ts';

/**
 * The data key ring CLI: `npm run keys -- <command>`, with the same environment as `npm start`
 * (EVENT_STORE_URL, SWITCHBOARD_DATA_KEYS, and VONAGE_* for person keys wrapped before the ring).
 *
 *   generate [id]              prints a new ring entry, `<id>:<base64 of 32 random bytes>`
 *   status [--json]            each ring key, how many person keys it wraps, and in words when a
 *                              key that no longer seals is safe to remove (exit 1 when some
 *                              person key cannot be opened)
 *   rewrap                     re-wraps every person key under the ring's first key (Switchboard
 *                              also does it at every start)
 *   forget-unreadable [--yes]  deletes (crypto-shreds) the person keys nothing on the ring opens:
 *                              without --yes it only lists them
 *
 * Never prints key material, except the new entry `generate` makes.
 */

const USAGE = `usage: npm run keys -- <command>

  generate [id]               print a new data key ring entry (<id>:<base64 of 32 random bytes>)
  status [--json]             each ring key, the person keys it wraps, which keys are safe to remove
  rewrap                      re-wrap every person key under the first ring key (also done at every start)
  forget-unreadable [--yes]   delete the person keys no ring key opens (those people verify again)

Environment: as for npm start: EVENT_STORE_URL (default sqlite:./data/switchboard.db),
${DATA_KEYS_VARIABLE}, and the VONAGE_* variables when person keys were made before the ring.`;

/** How long a Slack response_url lives: values sealed under a retired key stop mattering after it. */
const RESPONSE_URL_LIFETIME = '30 minutes';

export type KeysCliIo = Readonly<{
  env: Env;
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  /** Use this store instead of opening EVENT_STORE_URL (it is not closed). */
  store?: EventStore;
  /** Directory that relative store paths are read from (default: the process's). */
  cwd?: string;
  /** The date a generated key's default id carries (default now). */
  now?: () => Date;
}>;

class UsageError extends Error {}

type Opened = { ring: KeyRing; store: EventStore; close: () => Promise<void> };

const openWithRing = async (io: KeysCliIo): Promise<Opened> => {
  const config = loadKeysConfig(io.env, ALL_LIFECYCLES);
  const ring = createKeyRing(config.dataKeys.ring, config.dataKeys.legacy);
  if (io.store) return { ring, store: io.store, close: async () => undefined };
  const url = config.eventStoreUrl;
  if (url.startsWith('sqlite:')) {
    const path = url.slice('sqlite:'.length);
    if (path !== ':memory:' && !existsSync(resolve(io.cwd ?? process.cwd(), path))) {
      throw new UsageError(`no event store at ${path} (EVENT_STORE_URL=${url}): has Switchboard run here?`);
    }
  }
  const store = await openEventStore(
    url.startsWith('sqlite:') && url !== 'sqlite::memory:'
      ? `sqlite:${resolve(io.cwd ?? process.cwd(), url.slice('sqlite:'.length))}`
      : url,
  );
  return { ring, store, close: () => store.close() };
};

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** The status as data: each ring key with its count, and who cannot be opened. */
const statusOf = (ring: KeyRing, survey: PersonKeySurvey) => {
  const count = (id: string) => survey.keys.filter((k) => k.readable && k.ringKeyId === id).length;
  const keys = ring.ids.map((id, i) => ({
    id,
    seals: i === 0,
    personKeys: count(id),
    safeToRemove: i > 0 && count(id) === 0,
  }));
  const unreadable = new Map<string | null, number>();
  for (const k of survey.unreadable) unreadable.set(k.ringKeyId, (unreadable.get(k.ringKeyId) ?? 0) + 1);
  return {
    keys,
    legacy: count(LEGACY_KEY_ID),
    unreadable: [...unreadable].map(([ringKeyId, personKeys]) => ({ ringKeyId, personKeys })),
  };
};

const status = async (io: KeysCliIo, json: boolean): Promise<number> => {
  const { ring, store, close } = await openWithRing(io);
  try {
    const survey = await createPersonKeys({ store, ring }).survey();
    const s = statusOf(ring, survey);
    if (json) {
      io.stdout(JSON.stringify(s));
      return s.unreadable.length > 0 ? 1 : 0;
    }
    io.stdout(
      `${DATA_KEYS_VARIABLE}: ${plural(ring.ids.length, 'key')}; "${ring.sealingKeyId}" seals, every one opens. ${plural(survey.keys.length, 'person key')} in the store.`,
    );
    const width = Math.max(3, ...ring.ids.map((id) => id.length));
    io.stdout(`  ${'KEY'.padEnd(width)}  ${'ROLE'.padEnd(12)}  PERSON KEYS IT WRAPS`);
    for (const k of s.keys) {
      io.stdout(
        `  ${k.id.padEnd(width)}  ${(k.seals ? 'seals, opens' : 'opens').padEnd(12)}  ${k.personKeys}`,
      );
    }
    const lines: string[] = [];
    for (const k of s.keys) {
      if (k.seals) continue;
      lines.push(
        k.safeToRemove
          ? `"${k.id}" is safe to remove: no person key is wrapped under it any more. Slack response URLs sealed under it live ${RESPONSE_URL_LIFETIME}: remove it once every Switchboard replica has run with "${ring.sealingKeyId}" in front for ${RESPONSE_URL_LIFETIME} (replies still waiting on an older URL are then not sent). Numbers of unknown senders sealed under it, kept for the record only, become unreadable.`
          : `"${k.id}" still wraps ${plural(k.personKeys, 'person key')}: not safe to remove. Restart Switchboard (it re-wraps at start) or run \`npm run keys -- rewrap\`, then look again.`,
      );
    }
    if (s.legacy > 0) {
      lines.push(
        `${plural(s.legacy, 'person key is', 'person keys are')} still wrapped the way it was done before the ring (under VONAGE_SIGNATURE_SECRET): restart Switchboard or run \`npm run keys -- rewrap\`, and keep VONAGE_SIGNATURE_SECRET until they are re-wrapped.`,
      );
    }
    for (const u of s.unreadable) {
      lines.push(
        `${plural(u.personKeys, 'person key')} cannot be opened: ${describeWrap(u.ringKeyId, ring)}. Switchboard will not start until they can: put the key back in ${DATA_KEYS_VARIABLE}, or, if it is lost for good, \`npm run keys -- forget-unreadable\` (those people verify their phones again).`,
      );
    }
    if (lines.length === 0)
      lines.push(`Every person key is wrapped under "${ring.sealingKeyId}": nothing to do.`);
    io.stdout('');
    for (const l of lines) io.stdout(l);
    return s.unreadable.length > 0 ? 1 : 0;
  } finally {
    await close();
  }
};

const rewrap = async (io: KeysCliIo): Promise<number> => {
  const { ring, store, close } = await openWithRing(io);
  try {
    const report = await createPersonKeys({ store, ring }).rewrap();
    io.stdout(
      `Re-wrapped ${plural(report.rewrapped, 'person key')} under "${ring.sealingKeyId}"; ${report.current} already were${report.elsewhere > 0 ? `; ${report.elsewhere} changed meanwhile (re-wrapped by a running Switchboard, or forgotten)` : ''}.`,
    );
    if (report.unreadable.length > 0) {
      io.stderr(
        `${plural(report.unreadable.length, 'person key')} cannot be opened, so were not re-wrapped: see \`npm run keys -- status\`.`,
      );
      return 1;
    }
    return 0;
  } finally {
    await close();
  }
};

const forgetUnreadable = async (io: KeysCliIo, yes: boolean): Promise<number> => {
  const { ring, store, close } = await openWithRing(io);
  try {
    const keys = createPersonKeys({ store, ring });
    const { unreadable } = await keys.survey();
    if (unreadable.length === 0) {
      io.stdout('Every person key opens under the ring: nothing to forget.');
      return 0;
    }
    if (!yes) {
      io.stdout(`${plural(unreadable.length, 'person key')} cannot be opened by ${DATA_KEYS_VARIABLE}:`);
      for (const k of unreadable) io.stdout(`  ${k.slackUserId}: ${describeWrap(k.ringKeyId, ring)}`);
      io.stdout(
        'Deleting them makes their verified phone numbers unreadable for good (crypto-shredding): those people must verify again with /verify. If the missing key can be found, put it back in SWITCHBOARD_DATA_KEYS instead. Run again with --yes to delete them.',
      );
      return 0;
    }
    const forgotten = await keys.forgetUnreadable();
    io.stdout(
      `Deleted ${plural(forgotten.length, 'person key')} nothing could open: ${forgotten.join(', ')}. They must verify their phones again (/verify).`,
    );
    return 0;
  } finally {
    await close();
  }
};

/** Runs the CLI; resolves with the exit code. */
export const runKeysCli = async (argv: readonly string[], io: KeysCliIo): Promise<number> => {
  const positional = argv.filter((a) => !a.startsWith('--'));
  const flags = new Set(argv.filter((a) => a.startsWith('--')));
  const name = positional[0];
  if (!name || flags.has('--help') || name === 'help') {
    (name ? io.stdout : io.stderr)(USAGE);
    return name ? 0 : 2;
  }
  const known: Record<string, readonly string[]> = {
    generate: [],
    status: ['--json'],
    rewrap: [],
    'forget-unreadable': ['--yes'],
  };
  const allowed = known[name];
  if (!allowed) {
    io.stderr(`unknown command ${name}\n\n${USAGE}`);
    return 2;
  }
  const unknownFlag = [...flags].find((f) => !allowed.includes(f));
  if (unknownFlag || positional.length > (name === 'generate' ? 2 : 1)) {
    io.stderr(`${unknownFlag ? `unknown option ${unknownFlag}` : 'too many arguments'}\n\n${USAGE}`);
    return 2;
  }
  try {
    switch (name) {
      case 'generate': {
        const id = positional[1];
        io.stdout(generateRingEntry({ ...(id ? { id } : {}), now: io.now?.() ?? new Date() }));
        io.stderr(
          `Put it in front of ${DATA_KEYS_VARIABLE} (${DATA_KEYS_VARIABLE}=<this entry>,<the keys you have>), restart, then \`npm run keys -- status\`. Keep a copy apart from the store's backups.`,
        );
        return 0;
      }
      case 'status':
        return await status(io, flags.has('--json'));
      case 'rewrap':
        return await rewrap(io);
      default:
        return await forgetUnreadable(io, flags.has('--yes'));
    }
  } catch (e) {
    if (e instanceof ConfigError) {
      io.stderr(`keys ${name}: the configuration is incomplete:\n${formatConfigProblems(e.problems)}`);
      return 2;
    }
    if (e instanceof UsageError) {
      io.stderr(e.message);
      return 1;
    }
    io.stderr(`keys ${name} failed: ${isChatOpsError(e) ? `${e.code}: ` : ''}${asError(e).message}`);
    return 1;
  }
};

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = await runKeysCli(process.argv.slice(2), {
    env: processEnv(),
    stdout: (text) => process.stdout.write(`${text}\n`),
    stderr: (text) => process.stderr.write(`${text}\n`),
  });
}

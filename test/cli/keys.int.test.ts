import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runKeysCli } from '../../src/cli/keys.ts';
import { parseKeyRing } from '../../src/core/keyRing.ts';
import { createSealer } from '../../src/core/sealed.ts';
import { openEventStore } from '../../src/eventStore/openEventStore.ts';
import { createPersonKeys } from '../../src/people/personKeys.ts';
import { ringEntry, testKeyRing } from '../support/dataKeys.ts';
import { NODE24, ROOT, tempDir } from '../support/startApp.ts';

/** `npm run keys`: generate, status, rewrap, forget-unreadable, on a SQLite store file. */
const tmp = tempDir('keys-cli-');
afterAll(() => tmp.cleanup());

const A = ringEntry('a2026', 0x11);
const B = ringEntry('b2027', 0x12);
const LOST = ringEntry('lost', 0x13);

const cli = async (argv: readonly string[], env: Record<string, string>) => {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runKeysCli(argv, {
    env,
    stdout: (t) => out.push(t),
    stderr: (t) => err.push(t),
    now: () => new Date('2026-11-23T09:00:00Z'),
  });
  return { code, stdout: out.join('\n'), stderr: err.join('\n') };
};

/** A store with Ana and Ben under ring key a2026, Chen under one nobody has any more. */
const storeFile = async (name: string): Promise<string> => {
  const path = join(tmp.dir, name);
  const store = await openEventStore(`sqlite:${path}`);
  try {
    const a = createPersonKeys({ store, ring: testKeyRing(A) });
    await a.seal('U0ANA', '447700900101');
    await a.seal('U0BEN', '447700900102');
    await createPersonKeys({ store, ring: testKeyRing(LOST) }).seal('U0CHEN', '447700900103');
  } finally {
    await store.close();
  }
  return path;
};

describe('npm run keys', () => {
  it('generate prints one entry (the only output on stdout) and how to use it on stderr', async () => {
    const r = await cli(['generate'], {});
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^k20261123-[0-9a-f]{4}:[A-Za-z0-9+/]{43}=$/);
    expect(parseKeyRing(r.stdout).ok).toBe(true);
    expect(r.stderr).toContain('Put it in front of SWITCHBOARD_DATA_KEYS');
    const named = await cli(['generate', 'next'], {});
    expect(named.stdout).toMatch(/^next:/);
    expect((await cli(['generate', 'two', 'ids'], {})).code).toBe(2);
    const bad = await cli(['generate', 'no spaces!'], {});
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('a key id is 1-32');
  });

  it('status: each key with the person keys it wraps, what is safe to remove, and what cannot be opened', async () => {
    const db = await storeFile('status.db');
    const env = { EVENT_STORE_URL: `sqlite:${db}`, SWITCHBOARD_DATA_KEYS: `${B},${A}` };
    const r = await cli(['status'], env);
    expect(r.code).toBe(1); // Chen's key cannot be opened
    expect(r.stdout).toContain(
      'SWITCHBOARD_DATA_KEYS: 2 keys; "b2027" seals, every one opens. 3 person keys in the store.',
    );
    expect(r.stdout).toMatch(/b2027\s+seals, opens\s+0/);
    expect(r.stdout).toMatch(/a2026\s+opens\s+2/);
    expect(r.stdout).toContain('"a2026" still wraps 2 person keys: not safe to remove');
    expect(r.stdout).toContain('1 person key cannot be opened: it is wrapped under ring key "lost"');
    for (const entry of [A, B, LOST]) expect(r.stdout + r.stderr).not.toContain(entry.split(':')[1]);

    const json = await cli(['status', '--json'], env);
    expect(JSON.parse(json.stdout)).toEqual({
      keys: [
        { id: 'b2027', seals: true, personKeys: 0, safeToRemove: false },
        { id: 'a2026', seals: false, personKeys: 2, safeToRemove: false },
      ],
      legacy: 0,
      unreadable: [{ ringKeyId: 'lost', personKeys: 1 }],
    });

    // rewrap: Ana and Ben under b2027; Chen left as he is, and said.
    const rewrapped = await cli(['rewrap'], env);
    expect(rewrapped.code).toBe(1);
    expect(rewrapped.stdout).toContain('Re-wrapped 2 person keys under "b2027"; 0 already were.');
    expect(rewrapped.stderr).toContain('1 person key cannot be opened, so were not re-wrapped');
    const after = await cli(['status'], env);
    expect(after.stdout).toContain('"a2026" is safe to remove: no person key is wrapped under it any more');
    expect(after.stdout).toContain('live 30 minutes');

    // forget-unreadable: a dry run first, then --yes.
    const dry = await cli(['forget-unreadable'], env);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain('U0CHEN: it is wrapped under ring key "lost"');
    expect(dry.stdout).toContain('Run again with --yes to delete them.');
    const done = await cli(['forget-unreadable', '--yes'], env);
    expect(done.stdout).toContain(
      'Deleted 1 person key nothing could open: U0CHEN. They must verify their phones again',
    );
    const clean = await cli(['status'], { ...env, SWITCHBOARD_DATA_KEYS: B });
    expect(clean.code).toBe(0);
    expect(clean.stdout).toContain('Every person key is wrapped under "b2027": nothing to do.');
    expect((await cli(['forget-unreadable'], env)).stdout).toContain('nothing to forget');
  });

  it('sees legacy wraps through VONAGE_SIGNATURE_SECRET and re-wraps them', async () => {
    const db = join(tmp.dir, 'legacy.db');
    const store = await openEventStore(`sqlite:${db}`);
    try {
      await store.appendToStream('personkey-U0ANA', [
        {
          id: 'legacy-ana',
          type: 'PersonKeyCreated',
          data: {
            slackUserId: 'U0ANA',
            keyId: 'legacy0000000001',
            sealedKey: createSealer('sig-secret-1', 'person-key').seal(
              Buffer.alloc(32, 5).toString('base64'),
            ),
          },
        },
      ]);
    } finally {
      await store.close();
    }
    const env = {
      EVENT_STORE_URL: `sqlite:${db}`,
      SWITCHBOARD_DATA_KEYS: A,
      VONAGE_API_KEY: 'key123',
      VONAGE_API_SECRET: 'secret123',
      VONAGE_APPLICATION_ID: 'app-1',
      VONAGE_PRIVATE_KEY: '-----BEGIN PRIVATE KEY-----\\nabc\\n-----END PRIVATE KEY-----',
      VONAGE_SIGNATURE_SECRET: 'sig-secret-1',
      VONAGE_FROM_NUMBER: '+15550001111',
    };
    const before = await cli(['status'], env);
    expect(before.stdout).toContain('1 person key is still wrapped the way it was done before the ring');
    expect((await cli(['rewrap'], env)).stdout).toContain('Re-wrapped 1 person key under "a2026"');
    // Without the Vonage variables it would not open (and says so), but it no longer needs them.
    const { VONAGE_SIGNATURE_SECRET: _s, ...rest } = env;
    expect(
      (await cli(['status'], { EVENT_STORE_URL: rest.EVENT_STORE_URL, SWITCHBOARD_DATA_KEYS: A })).code,
    ).toBe(0);
  });

  it('says what is missing: the ring (exit 2), the store file, a command or option it does not know', async () => {
    const noRing = await cli(['status'], { EVENT_STORE_URL: `sqlite:${join(tmp.dir, 'x.db')}` });
    expect(noRing.code).toBe(2);
    expect(noRing.stderr).toContain(
      'SWITCHBOARD_DATA_KEYS is not set: make a key with `npm run keys -- generate`',
    );
    const noStore = await cli(['status'], {
      EVENT_STORE_URL: `sqlite:${join(tmp.dir, 'missing.db')}`,
      SWITCHBOARD_DATA_KEYS: A,
    });
    expect(noStore.code).toBe(1);
    expect(noStore.stderr).toContain('no event store at');
    expect((await cli(['rotate'], {})).code).toBe(2);
    expect((await cli(['status', '--force'], {})).stderr).toContain('unknown option --force');
    expect((await cli([], {})).code).toBe(2);
  });

  it('runs as a command, what `npm run keys` execs', async () => {
    const out = await new Promise<{ code: number | null; stdout: string }>((resolve) => {
      const child = spawn(NODE24, [join(ROOT, 'src/cli/keys.ts'), 'generate', 'viaScript'], {
        cwd: ROOT,
        env: { PATH: process.env['PATH'] ?? '' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      child.stdout.on('data', (c: Buffer) => {
        stdout += c.toString();
      });
      child.on('exit', (code) => resolve({ code, stdout }));
    });
    expect(out.code).toBe(0);
    expect(out.stdout.trim()).toMatch(/^viaScript:[A-Za-z0-9+/]{43}=$/);
  });
});

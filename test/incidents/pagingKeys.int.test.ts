import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runKeysCli } from '../../src/cli/keys.ts';
import { manualClock } from '../../src/core/clock.ts';
import { createSealer, gcmSeal } from '../../src/core/sealed.ts';
import { openEventStore } from '../../src/eventStore/openEventStore.ts';
import { createPeopleDirectory } from '../../src/people/directory.ts';
import { ringEntry, TEST_DATA_KEYS } from '../support/dataKeys.ts';
import { waitFor } from '../support/waitFor.ts';
import { CHEN, MINUTE, type PagingHarness, startPagingHarness } from './pagingHarness.ts';

/**
 * Issue 18 item 1: a verified phone keeps being paged across restarts and secret rotations. Chen
 * (level 1 of Platform Gateway) verified his phone the way a checked code links it: sealed under
 * his own data key, itself wrapped under the data key ring (SWITCHBOARD_DATA_KEYS). Each test
 * restarts the app on the same SQLite file, triggers an incident, and waits for the SMS page on
 * Chen's phone, then resolves it with a reply (so the reply path opens his number too).
 */
let h: PagingHarness;
const clock = manualClock('2026-11-23T09:00:00.000Z');
const NEW = ringEntry('new', 0x21);

beforeAll(async () => {
  h = await startPagingHarness({ clock });
  await h.verifyPhoneSealed(CHEN.slack, CHEN.phone);
});
afterAll(async () => {
  await h.stop();
});

const inbox = (digits: string, harness = h) => harness.vonage.phones.inbox(digits).map((m) => m.text);

/** `npm run keys -- <argv>` with the app's environment, on its store file. */
const keys = async (argv: readonly string[], env = h.env) => {
  let stdout = '';
  let stderr = '';
  const code = await runKeysCli(argv, {
    env,
    stdout: (t) => {
      stdout += `${t}\n`;
    },
    stderr: (t) => {
      stderr += `${t}\n`;
    },
  });
  return { code, stdout, stderr };
};

/** Events some processor parked in the store file (none, ever, in these tests). */
const parkedEvents = async (dbPath: string) => {
  const store = await openEventStore(`sqlite:${dbPath}`);
  try {
    return await store.readAll({ filter: { eventTypes: ['ProcessorEventParked'] } });
  } finally {
    await store.close();
  }
};

/** Triggers an incident, waits for Chen's SMS page, and resolves it by replying 6 from his phone. */
const pagedAndResolved = async (title: string, harness = h): Promise<void> => {
  const h = harness;
  const { number, incidentId } = await h.trigger(title);
  const before = inbox(CHEN.phone, h).length;
  await h.advance(5 * MINUTE);
  const sms = await waitFor(() => inbox(CHEN.phone, h).slice(before).at(0), {
    what: `the SMS page about “${title}”`,
  });
  expect(sms).toMatch(
    new RegExp(
      `^\\[Switchboard\\] #${number} ${title}, triggered today, \\d\\d:\\d\\d UTC — reply 4 to acknowledge, 6 to resolve$`,
    ),
  );
  expect((await h.vonage.phones.replySms(CHEN.phone, '6')).ok).toBe(true);
  await h.idle();
  await waitFor(() => h.pd.state.incidents.get(incidentId)?.status === 'resolved' || undefined, {
    what: `#${number} resolved by Chen's reply`,
  });
};

describe('paging across restarts and rotations', () => {
  it('pages a verified phone after a restart on the same store', async () => {
    await pagedAndResolved('Before any restart');
    await h.restart();
    await pagedAndResolved('After a plain restart');
  });

  it('rotating VONAGE_SIGNATURE_SECRET keeps paging', async () => {
    const next = 'vonage-signature-secret-after-rotation-5d1c';
    h.vonage.rotateSignatureSecret(next);
    await h.restart({ VONAGE_SIGNATURE_SECRET: next });
    await pagedAndResolved('After the webhook secret rotated');
  });

  it('rotating the ring: a key in front is re-wrapped to at start, keys status says the old one can go, and without it paging goes on', async () => {
    expect((await h.stream('personkey-U0CHEN')).map((e) => e.type)).toEqual(['PersonKeyCreated']);
    await h.restart({ SWITCHBOARD_DATA_KEYS: `${NEW},${TEST_DATA_KEYS}` });
    const wraps = await h.stream('personkey-U0CHEN');
    expect(wraps.map((e) => e.type)).toEqual(['PersonKeyCreated', 'PersonKeyRewrapped']);
    expect(wraps[1]?.data).toMatchObject({
      ringKeyId: 'new',
      sealedKey: expect.stringMatching(/^sealed:v2:new:/),
    });
    expect(
      h.logs.lines().some((l) => /re-wrapped 1 person key\(s\) under data ring key new/.test(String(l.msg))),
    ).toBe(true);

    const status = await keys(['status']);
    expect(status.code).toBe(0);
    expect(status.stdout).toContain('"new" seals');
    expect(status.stdout).toMatch(/new\s+seals, opens\s+1/);
    expect(status.stdout).toMatch(/test\s+opens\s+0/);
    expect(status.stdout).toContain('"test" is safe to remove: no person key is wrapped under it any more');
    expect(status.stdout).toContain('live 30 minutes');
    // No key material in what it prints.
    expect(status.stdout + status.stderr).not.toContain(TEST_DATA_KEYS.slice(5));
    expect(status.stdout + status.stderr).not.toContain(NEW.slice(4));

    await h.restart({ SWITCHBOARD_DATA_KEYS: NEW });
    await pagedAndResolved('After the ring rotated');
  });

  it('a ring missing the key in use is refused at start, naming SWITCHBOARD_DATA_KEYS, and nothing is parked', async () => {
    const refused = await h.restart({ SWITCHBOARD_DATA_KEYS: ringEntry('other', 0x44) }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(refused).toMatchObject({
      code: 'SB_CONFIG',
      details: { variable: 'SWITCHBOARD_DATA_KEYS', missingRingKeyIds: ['new'], people: 1 },
    });
    const message = String((refused as Error).message);
    expect(message).toContain('SWITCHBOARD_DATA_KEYS cannot open the data keys of 1 person');
    expect(message).toContain('ring key "new", which SWITCHBOARD_DATA_KEYS does not hold');
    // Refused before taking traffic: nothing listens.
    await expect(fetch(`${h.url}/healthz`)).rejects.toThrow();
    expect(await parkedEvents(h.dbPath)).toEqual([]);
    const status = await keys(['status'], { ...h.env, SWITCHBOARD_DATA_KEYS: ringEntry('other', 0x44) });
    expect(status.code).toBe(1);
    expect(status.stdout).toContain('1 person key cannot be opened: it is wrapped under ring key "new"');

    await h.restart({ SWITCHBOARD_DATA_KEYS: NEW });
    await pagedAndResolved('After a refused start');
    expect(await parkedEvents(h.dbPath)).toEqual([]);
  });
});

describe('a store written before the key ring', () => {
  it('opens a person key wrapped under the VONAGE_SIGNATURE_SECRET derivation, re-wraps it at start, and pages after the secret rotates', async () => {
    const legacyClock = manualClock('2026-11-23T09:00:00.000Z');
    // Written as Switchboard wrote it before SWITCHBOARD_DATA_KEYS: the person key sealed under a
    // key derived from VONAGE_SIGNATURE_SECRET, the link holding the number sealed under it.
    const seed = async (dbPath: string, env: Readonly<Record<string, string>>) => {
      const store = await openEventStore(`sqlite:${dbPath}`);
      try {
        const key = Buffer.alloc(32, 0x3c);
        const keyId = 'a1b2c3d4e5f60718';
        await store.appendToStream(
          'personkey-U0CHEN',
          [
            {
              id: randomUUID(),
              type: 'PersonKeyCreated',
              data: {
                slackUserId: 'U0CHEN',
                keyId,
                sealedKey: createSealer(env['VONAGE_SIGNATURE_SECRET']!, 'person-key').seal(
                  key.toString('base64'),
                ),
              },
            },
          ],
          { expectedRevision: 'no_stream' },
        );
        const number = gcmSeal(key, Buffer.from(`person:U0CHEN:${keyId}`), CHEN.phone);
        await createPeopleDirectory({ store, now: () => legacyClock.now() }).link('U0CHEN', {
          system: 'phone',
          externalId: `personal:v1:U0CHEN:${keyId}:${number}`,
          email: null,
          name: null,
        });
      } finally {
        await store.close();
      }
    };
    const legacy = await startPagingHarness({ clock: legacyClock, seed });
    try {
      const wraps = await legacy.stream('personkey-U0CHEN');
      expect(wraps.map((e) => e.type)).toEqual(['PersonKeyCreated', 'PersonKeyRewrapped']);
      expect(String(wraps[0]?.data.sealedKey)).toMatch(/^sealed:v1:/);
      expect(wraps[1]?.data).toMatchObject({ ringKeyId: 'test' });
      await pagedAndResolved('Paged from an older store', legacy);

      const next = 'vonage-signature-secret-rotated-after-upgrade';
      legacy.vonage.rotateSignatureSecret(next);
      await legacy.restart({ VONAGE_SIGNATURE_SECRET: next });
      await pagedAndResolved('Paged after the upgrade and a rotation', legacy);
      expect(await parkedEvents(legacy.dbPath)).toEqual([]);
    } finally {
      await legacy.stop();
    }
  });
});

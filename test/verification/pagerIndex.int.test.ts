import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { runEventsCli } from '../../src/cli/events.ts';
import { systemClock } from '../../src/core/clock.ts';
import { newId } from '../../src/core/ids.ts';
import type { EventStore, RecordedEvent } from '../../src/eventStore/eventStore.ts';
import { openEventStore } from '../../src/eventStore/openEventStore.ts';
import { createPeopleDirectory } from '../../src/people/directory.ts';
import { createPersonKeys } from '../../src/people/personKeys.ts';
import { createProcessorRunner, type ProcessorRunner } from '../../src/processors/runner.ts';
import { readSnapshot, snapshotStreamId } from '../../src/processors/snapshots.ts';
import { createPagerIndex, PAGER_INDEX_ID } from '../../src/verification/paging/pagerIndex.ts';
import { createPhoneSealer } from '../../src/verification/phone.ts';
import { testKeyRing } from '../support/dataKeys.ts';
import { createLogSink } from '../support/logSink.ts';
import { waitFor } from '../support/waitFor.ts';
import { ANA, PHONE_A, startVerificationHarness, type VerificationHarness } from './harness.ts';

/**
 * The pager's index resumes from snapshots like every read model (issue 21 item 2), and a snapshot
 * holds no phone number, not even sealed: who has a verified phone (Slack ids and their link's
 * revision), the pages and the calls. The numbers are opened again after a start, in memory, from
 * each person's own stream. Proved on the real SQLite store (its file and WAL read as bytes) and
 * end to end on the app.
 */

let dir: string | undefined;
let store: EventStore | undefined;
let runners: ProcessorRunner[] = [];
let h: VerificationHarness | undefined;

afterEach(async () => {
  for (const r of runners) await r.stop();
  runners = [];
  await store?.close();
  store = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
  await h?.stop();
  h = undefined;
});

const ANA_ID = 'U0ANA';
const BEN_ID = 'U0BEN';
const CHEN_ID = 'U0CHEN';
const DIGITS = { ana: '447700900101', ben: '447700900102', benNew: '447700900112', chen: '447700900103' };

/** The store file and its WAL, as bytes. */
const storeBytes = (path: string): string =>
  [path, `${path}-wal`]
    .filter((p) => existsSync(p))
    .map((p) => readFileSync(p).toString('latin1'))
    .join('\n');

/** Every snapshot the index wrote, its state as JSON text. */
const snapshotStates = async (s: EventStore): Promise<string[]> =>
  (await s.readStream(snapshotStreamId(PAGER_INDEX_ID))).map((e) =>
    gunzipSync(Buffer.from(String(e.data.state), 'base64')).toString('utf8'),
  );

/** The real store, counting the events of streams starting with `prefix` that reach the process. */
const counting = (inner: EventStore, prefix: string): { store: EventStore; read: () => number } => {
  let read = 0;
  const count = (events: readonly RecordedEvent[]) => {
    read += events.filter((e) => e.streamId.startsWith(prefix)).length;
  };
  return {
    read: () => read,
    store: {
      ...inner,
      readAll: async (options) => {
        const events = await inner.readAll(options);
        count(events);
        return events;
      },
      readStream: async (streamId, options) => {
        const events = await inner.readStream(streamId, options);
        count(events);
        return events;
      },
      subscribe: (options) =>
        inner.subscribe({
          ...options,
          onEvent: (event) => {
            count([event]);
            return options.onEvent(event);
          },
        }),
    },
  };
};

const ring = testKeyRing();

/** An index over `s` with its processor running (stopped, it writes its snapshot). */
const startIndex = async (s: EventStore, keysStore: EventStore = s) => {
  const phones = createPhoneSealer(ring, createPersonKeys({ store: keysStore, ring }));
  const index = createPagerIndex({ store: s, openPhone: (sealed) => phones.openAny(sealed) });
  const runner = createProcessorRunner({
    store: s,
    logger: createLogSink().logger(),
    clock: systemClock,
    processors: [index.processor],
  });
  runners.push(runner);
  await runner.start();
  await runner.waitForIdle(10_000);
  return {
    index,
    stop: async () => {
      await runner.stop();
      runners = runners.filter((r) => r !== runner);
    },
  };
};

const page = async (s: EventStore, slackUserId: string, n: number, phone: string, callUuid?: string) => {
  const pageId = `page-${n}-1-${slackUserId}`;
  const at = new Date(Date.UTC(2026, 10, 23, 9, n)).toISOString();
  await s.appendToStream(`pager-${slackUserId}`, [
    {
      id: newId(),
      type: 'PageRequested',
      data: {
        pageId,
        reportTo: `incident-i${n}`,
        number: n,
        label: `#${n} Checkout 5xx`,
        phone,
        text: `[Switchboard] #${n} Checkout 5xx`,
        spokenText: `Incident ${n}`,
        callDueAt: null,
        at,
      },
    },
    ...(callUuid ? [{ id: newId(), type: 'PageCallPlaced', data: { pageId, callUuid, at } }] : []),
  ]);
  return pageId;
};

const expectNoNumberIn = (texts: readonly string[]) => {
  for (const text of texts) {
    for (const digits of Object.values(DIGITS)) expect(text).not.toContain(digits.slice(2));
    // Not even sealed.
    expect(text).not.toMatch(/personal:v1:|sealed:v[12]:/);
  }
};

describe('the pager index resumes from snapshots, with no number in them', () => {
  it('a restart reads only what came after the snapshot, opens the numbers again, and finds people, pages and calls', async () => {
    dir = mkdtempSync(join(tmpdir(), 'sb-pager-index-'));
    const path = join(dir, 'store.db');
    const s = await openEventStore(`sqlite:${path}`);
    store = s;
    const people = createPeopleDirectory({ store: s, now: () => new Date() });
    const phones = createPhoneSealer(ring, createPersonKeys({ store: s, ring }));
    // Ana and Chen verified today (sealed under their own keys); Ben before numbers were sealed.
    const anaSealed = await phones.sealFor(ANA_ID, DIGITS.ana);
    const chenSealed = await phones.sealFor(CHEN_ID, DIGITS.chen);
    await people.link(ANA_ID, { system: 'phone', externalId: anaSealed, email: null, name: null });
    await people.link(CHEN_ID, { system: 'phone', externalId: chenSealed, email: null, name: null });
    await people.link(BEN_ID, { system: 'phone', externalId: `+${DIGITS.ben}`, email: null, name: null });
    for (let n = 1; n <= 40; n++)
      await page(s, n % 2 === 0 ? ANA_ID : BEN_ID, n, n % 2 === 0 ? anaSealed : DIGITS.ben);
    const called = await page(s, ANA_ID, 41, anaSealed, 'call-41');

    const head = await s.headPosition();
    const first = await startIndex(s);
    await first.index.catchUp();
    expect(first.index.personOfPhone(DIGITS.ana)).toBe(ANA_ID);
    await first.stop();
    const written = await readSnapshot(s, PAGER_INDEX_ID);
    expect(written?.position).toBe(head);

    // Chen's key is gone (a ring key lost, say): his number cannot be read after the restart.
    await s.deleteStream(`personkey-${CHEN_ID}`);

    const counted = counting(s, 'pager-');
    const second = await startIndex(counted.store, s);
    await second.index.catchUp();
    expect(second.index.resumable.appliedSinceStart()).toBe(0);
    expect(counted.read()).toBe(0);
    expect(second.index.personOfPhone(DIGITS.ana)).toBe(ANA_ID);
    expect(second.index.personOfPhone(`+${DIGITS.ben}`)).toBe(BEN_ID);
    expect(second.index.phoneOf(ANA_ID)).toMatchObject({ digits: DIGITS.ana, stored: anaSealed });
    // A link recorded before sealing keeps its digits as its stored value, as pages record it.
    expect(second.index.phoneOf(BEN_ID)).toMatchObject({ digits: DIGITS.ben, stored: DIGITS.ben });
    // Linked, but no longer readable: must verify again (as a replay from the first event says).
    expect(second.index.phoneOf(CHEN_ID)).toMatchObject({ digits: null, stored: chenSealed });
    expect(second.index.personOfPhone(DIGITS.chen)).toBeNull();
    expect(second.index.pageOfCall('call-41')?.pageId).toBe(called);
    expect(second.index.pagesAbout('incident-i7').map((p) => p.slackUserId)).toEqual([BEN_ID]);
    expect(second.index.page('page-8-1-U0ANA')).toMatchObject({ reportTo: 'incident-i8', number: 8 });

    // After the snapshot: Ben verifies a new number, Ana's phone is forgotten, a page goes out.
    await people.link(BEN_ID, { system: 'phone', externalId: `+${DIGITS.benNew}`, email: null, name: null });
    await people.unlink(ANA_ID, 'phone', 'left');
    await page(s, BEN_ID, 42, DIGITS.benNew, 'call-42');
    await second.index.catchUp();
    expect(second.index.personOfPhone(DIGITS.ben)).toBeNull();
    expect(second.index.personOfPhone(DIGITS.benNew)).toBe(BEN_ID);
    expect(second.index.phoneOf(ANA_ID)).toBeNull();
    await second.stop();

    const third = await startIndex(s);
    await third.index.catchUp();
    expect(third.index.personOfPhone(DIGITS.benNew)).toBe(BEN_ID);
    expect(third.index.personOfPhone(DIGITS.ana)).toBeNull();
    expect(third.index.phoneOf(ANA_ID)).toBeNull();
    expect(third.index.pageOfCall('call-42')?.slackUserId).toBe(BEN_ID);
    await third.stop();
    // `npm run events -- rebuild pager-index` needs no key: it writes a snapshot without numbers too.
    const out: string[] = [];
    const io = { env: {}, stdout: (t: string) => out.push(t), stderr: () => {}, tty: false, store: s };
    expect(await runEventsCli(['rebuild', PAGER_INDEX_ID, '--json'], io)).toBe(0);
    expect(JSON.parse(out.at(-1)!)).toMatchObject({ readModel: PAGER_INDEX_ID });

    // No number in any snapshot, not even sealed; only Ben's clear links (recorded before numbers
    // were sealed) are in the file, never Ana's or Chen's.
    const states = await snapshotStates(s);
    expect(states.length).toBeGreaterThanOrEqual(3);
    expectNoNumberIn(states);
    const bytes = storeBytes(path);
    expect(bytes).not.toContain(DIGITS.ana);
    expect(bytes).not.toContain(DIGITS.chen);
  });

  it('end to end: after a restart the app resumes the index from a snapshot without the number, still knows her phone and pages it', async () => {
    h = await startVerificationHarness();
    await h.verify(PHONE_A.typed);
    await h.dm(/sent a 6-digit code/);
    const code = await waitFor(() => h!.sim.phones.lastCode(PHONE_A.digits), { what: 'the code' });
    await h.enterCode(code);
    await h.dm(/is verified/);
    await waitFor(() => h!.sb.people.linkOf(ANA, 'phone'), { what: 'the phone link' });
    const pager = () => h!.sb.ports.require('pager', 'the test');
    const pageAna = (n: number) =>
      pager().page({
        person: { slackUserId: ANA },
        text: `#${n} Checkout 5xx: reply 4 to acknowledge`,
        pageId: `page-${n}-1-${ANA}`,
        reportTo: `incident-PTEST${n}`,
        number: n,
        label: `#${n} Checkout 5xx`,
        callAfterMs: null,
        maxPerHour: 10,
      });
    expect(await pageAna(7)).toBe('paged');
    await waitFor(() => h!.sim.phones.inbox(PHONE_A.digits).find((m) => m.text.includes('#7 ')), {
      what: 'the first SMS page',
    });
    await h.idle();

    await h.restart();
    await waitFor(() => h!.logs.text().includes('"readModel":"pager-index"') || undefined, {
      what: 'the pager index restored from its snapshot',
    });
    expect(h.logs.text()).toMatch(/"readModel":"pager-index"[^\n]*read model restored from snapshot/);
    // Her phone is still known: a page reaches it, and a text from it is hers.
    expect(await pageAna(8)).toBe('paged');
    await waitFor(() => h!.sim.phones.inbox(PHONE_A.digits).find((m) => m.text.includes('#8 ')), {
      what: 'the SMS page after the restart',
    });
    expect((await h.sim.phones.replySms(PHONE_A.digits, 'STOP')).ok).toBe(true);
    await waitFor(async () => ((await h!.sb.people.linkOf(ANA, 'phone')) === undefined ? true : undefined), {
      what: 'her STOP recognised as hers',
    });
    await h.idle();

    const states = await snapshotStates(h.sb.store);
    expect(states.length).toBeGreaterThanOrEqual(1);
    for (const state of states) {
      expect(state).toContain(ANA);
      expect(state).not.toContain(PHONE_A.digits.slice(2));
      expect(state).not.toMatch(/personal:v1:|sealed:v[12]:/);
    }
    expect(storeBytes(h.dbPath)).not.toContain(PHONE_A.digits);
  });
});

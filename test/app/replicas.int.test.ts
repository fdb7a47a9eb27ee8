import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  type PagerDutySimulator,
  startPagerDutySimulator,
} from '../../sandbox/simulators/pagerduty/index.ts';
import { type FakeSlack, startFakeSlack } from '../../sandbox/simulators/slack/fakeSlack.ts';
import { SLACK_INBOX_STREAM } from '../../src/application/inbox.ts';
import { openEventStore } from '../../src/eventStore/openEventStore.ts';
import { CLAIM_STREAM_PREFIX } from '../../src/processors/claims.ts';
import {
  cardsOf,
  claimsOf,
  REPLICA_CHANNEL,
  REPLICA_USER,
  REPLICA_WEBHOOK_SECRET,
  sendTrigger,
  spawnReplica,
} from '../support/replicas.ts';
import {
  killAll,
  type MainProcess,
  TEST_BOT_TOKEN,
  TEST_SIGNING_SECRET,
  tempDir,
} from '../support/startApp.ts';
import { waitFor } from '../support/waitFor.ts';

/**
 * Issue 13 items 2 and 3: three real app processes (src/main.ts) on one SQLite file (WAL), each
 * taking signed Slack commands; the incident-service simulator sends its webhooks to one of them.
 * The replica that holds the processors' claims is killed with SIGKILL under load; another takes
 * over from the stored checkpoints. Every acknowledged command becomes one incident upstream and
 * one card in Slack: nothing skipped, nothing repeated.
 */
let pd: PagerDutySimulator;
let fake: FakeSlack;
let tmp: ReturnType<typeof tempDir>;
const mains: MainProcess[] = [];

beforeAll(async () => {
  pd = await startPagerDutySimulator({
    webhookSecret: REPLICA_WEBHOOK_SECRET,
    webhooks: { retryDelaysMs: [50, 200, 500, 1_000], timeoutMs: 3_000 },
  });
  fake = await startFakeSlack({
    botToken: TEST_BOT_TOKEN,
    signingSecret: TEST_SIGNING_SECRET,
    users: [{ id: REPLICA_USER.slack, name: 'ana', real_name: 'Ana Silva', email: REPLICA_USER.email }],
    channels: [{ id: REPLICA_CHANNEL, name: 'ops', is_im: false }],
  });
  tmp = tempDir('switchboard-replicas-');
});
afterEach(async () => {
  await killAll(mains);
});
afterAll(async () => {
  await pd.stop();
  await fake.close();
  tmp.cleanup();
});

const EXPIRY_SECONDS = 3;

describe('three replicas on one SQLite file', () => {
  it('kill -9 of the claim holder under load: another takes over within 10 s; every acknowledged command is handled once', async () => {
    const dbPath = join(tmp.dir, 'replicas.db');
    const start = async (id: string) => {
      const main = await spawnReplica({ id, dbPath, fake, pd, claimExpirySeconds: EXPIRY_SECONDS });
      mains.push(main);
      return main;
    };
    // A starts first and claims every processor that runs on one replica; B and C find them held.
    const a = await start('replica-a');
    const claimed = await waitFor(
      async () => {
        const held = await claimsOf(a.url);
        return held.size > 0 && [...held.values()].every(Boolean) ? [...held.keys()] : undefined;
      },
      { what: 'replica A holding every claim', timeoutMs: 20_000 },
    );
    expect(claimed).toEqual(expect.arrayContaining(['inbox-dispatch', 'scheduler']));
    const b = await start('replica-b');
    const c = await start('replica-c');
    for (const other of [b, c]) {
      const held = await claimsOf(other.url);
      expect([...held.keys()].sort()).toEqual([...claimed].sort());
      expect([...held.values()].some(Boolean)).toBe(false);
      // Ready, and saying who runs the processors it does not.
      const ready = await fetch(`${other.url}/readyz`);
      expect(ready.status).toBe(200);
      const detail = ((await ready.json()) as { probes: { processors: { detail?: string } } }).probes
        .processors.detail;
      expect(detail).toContain('held by replica-a: ');
      expect(detail).toContain('inbox-dispatch');
      // Lag is the holder's to report: none here for what another replica runs.
      const metrics = await (await fetch(`${other.url}/metrics`)).text();
      expect(metrics).toContain('switchboard_processor_lag_events{processor="inbox-dispatch"} 0');
    }
    // The incident service's webhooks reach replica C (the load balancer's choice).
    await pd.connect(c.url);

    // Steady load: one signed command after another, round robin over the replicas in the pool.
    const pool: MainProcess[] = [a, b, c];
    const sent: { title: string; acked: boolean }[] = [];
    let loading = true;
    let n = 0;
    const load = (async () => {
      while (loading) {
        const target = pool[n % pool.length]!;
        const title = `replica load ${n}`;
        n += 1;
        sent.push({ title, acked: await sendTrigger(target.url, fake, title) });
        await new Promise((resolve) => setTimeout(resolve, 30));
      }
    })();

    await waitFor(() => sent.filter((s) => s.acked).length >= 12 || undefined, {
      what: 'a dozen commands acknowledged before the kill',
      timeoutMs: 20_000,
    });
    pool.splice(pool.indexOf(a), 1);
    const killedAt = Date.now();
    a.child.kill('SIGKILL');
    expect(await a.exited).toBe('SIGKILL');

    // Another replica takes every claim over (each processor held by exactly one of B and C).
    await waitFor(
      async () => {
        const [hb, hc] = [await claimsOf(b.url), await claimsOf(c.url)];
        return (
          claimed.every((p) => Number(hb.get(p) === true) + Number(hc.get(p) === true) === 1) || undefined
        );
      },
      { what: 'B or C holding every claim', timeoutMs: 30_000, intervalMs: 50 },
    );
    const takeoverMs = Date.now() - killedAt;
    expect(takeoverMs).toBeLessThan(10_000);

    const ackedBefore = sent.filter((s) => s.acked).length;
    await waitFor(() => sent.filter((s) => s.acked).length >= ackedBefore + 12 || undefined, {
      what: 'a dozen more commands acknowledged after the takeover',
      timeoutMs: 20_000,
    });
    loading = false;
    await load;

    const acked = sent.filter((s) => s.acked).map((s) => s.title);
    const incidentsTitled = (title: string) =>
      [...pd.state.incidents.values()].filter((i) => i.title === title);
    // Every acknowledged command: one incident upstream and one card.
    await waitFor(
      () =>
        acked.every((title) => {
          const incident = incidentsTitled(title)[0];
          return incident !== undefined && cardsOf(fake, incident.number).length > 0;
        }) || undefined,
      { what: 'an incident and a card for every acknowledged command', timeoutMs: 60_000, intervalMs: 50 },
    );
    for (const { title } of sent) {
      const incidents = incidentsTitled(title);
      expect(incidents.length, title).toBeLessThanOrEqual(1);
      if (acked.includes(title)) expect(incidents, title).toHaveLength(1);
      for (const incident of incidents) expect(cardsOf(fake, incident.number), title).toHaveLength(1);
    }

    // The store agrees: one incident stream per acknowledged command, claims handed over from A.
    const store = await openEventStore(`sqlite:${dbPath}`);
    try {
      const inbox = await store.readStream(SLACK_INBOX_STREAM);
      expect(inbox.length).toBeGreaterThanOrEqual(acked.length);
      const claimStreams = await store.listStreams({ prefix: CLAIM_STREAM_PREFIX });
      expect(claimStreams.map((s) => s.streamId.slice(CLAIM_STREAM_PREFIX.length)).sort()).toEqual(
        [...claimed].sort(),
      );
      for (const s of claimStreams) {
        const owners = (await store.readStream(s.streamId)).map((e) => e.data['owner']);
        expect(owners[0], s.streamId).toBe('replica-a');
        expect(['replica-b', 'replica-c'], s.streamId).toContain(owners.at(-1));
      }
    } finally {
      await store.close();
    }
  }, 150_000);
});

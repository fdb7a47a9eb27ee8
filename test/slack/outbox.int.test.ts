import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type FakeSlack, startFakeSlack } from '../../sandbox/simulators/slack/fakeSlack.ts';
import { loadConfig } from '../../src/config.ts';
import type { EventStore } from '../../src/eventStore/eventStore.ts';
import { openEventStore } from '../../src/eventStore/openEventStore.ts';
import { ALL_LIFECYCLES } from '../../src/lifecycleList.ts';
import { createMetrics } from '../../src/metrics.ts';
import type { SlackMessage } from '../../src/slack/blocks/format.ts';
import {
  createSlackOutbox,
  HISTORY_SETTLE_MS,
  noticeLedger,
  type OutboxContext,
  type SlackOutbox,
} from '../../src/slack/outbox.ts';
import { slackOutboxTransport } from '../../src/slack/outboxTransport.ts';
import { createSlackWebClient, type SwitchboardWebClient } from '../../src/slack/webClient.ts';
import { TEST_DATA_KEYS } from '../support/dataKeys.ts';
import { createLogSink } from '../support/logSink.ts';
import { waitFor } from '../support/waitFor.ts';

/**
 * The outbox (src/slack/outbox.ts) against the fake Slack (real HTTP) with the real Web API client
 * and a real SQLite store: post once by key, across a crash that lost the record (a new outbox is a
 * restarted process), update in place, identical redraws skipped, Retry-After per method and
 * channel, fallbacks. Slack's time (Retry-After, the history settle) runs on a manual clock the
 * tests move: nothing here waits on the wall clock but for the fake to answer.
 */
const TOKEN = 'xoxb-outbox-test-token';
const OPS = 'C0OPS';
const DEV = 'C0DEV';
const ANA = 'U0ANA';

let fake: FakeSlack;
let slack: SwitchboardWebClient;
let store: EventStore;
const logs = createLogSink();

const ledger = noticeLedger({
  name: 'test-notices',
  streamPrefix: 'testNotice-',
  streamSeed: 'test-notice',
  eventSeed: 'test-notice-sent',
  eventType: 'TestNoticeSent',
});

/** Slack's time for the outbox: `sleep` resolves when the test moves the time past it. */
const manualTime = () => {
  let t = 1_000_000;
  const timers: { at: number; resolve: () => void }[] = [];
  return {
    now: () => t,
    sleep: (ms: number, signal: AbortSignal) =>
      new Promise<void>((resolve, reject) => {
        const timer = { at: t + ms, resolve };
        timers.push(timer);
        signal.addEventListener('abort', () => reject(new Error('aborted')), { once: true });
      }),
    /** Sleeps not yet over. */
    waiting: () => timers.length,
    advance(ms: number) {
      t += ms;
      for (const timer of timers.splice(0)) {
        if (timer.at <= t) timer.resolve();
        else timers.push(timer);
      }
    },
  };
};
type ManualTime = ReturnType<typeof manualTime>;

let time: ManualTime;
const newOutbox = (): SlackOutbox =>
  createSlackOutbox({
    transport: slackOutboxTransport(slack),
    logger: logs.logger(),
    now: time.now,
    sleep: time.sleep,
  });

const ctx = (redelivery = false, processorId = 'test-notices'): OutboxContext => ({
  processorId,
  store,
  now: () => new Date('2026-11-23T09:00:00Z'),
  logger: logs.logger(),
  signal: new AbortController().signal,
  redelivery,
});

const message = (text: string): SlackMessage => ({
  text,
  blocks: [{ type: 'section', text: { type: 'mrkdwn', text } }],
});

/** The fake is shared by the file: the calls of the test running. */
let firstCall = 0;
const callsOf = (method: string) => fake.calls.slice(firstCall).filter((c) => c.method === method);
const postsOf = (text: string) =>
  callsOf('chat.postMessage').filter((c) => String(c.params['text']).includes(text));

beforeAll(async () => {
  fake = await startFakeSlack({
    botToken: TOKEN,
    users: [{ id: ANA, name: 'ana', real_name: 'Ana Silva', email: 'ana@example.org' }],
    channels: [
      { id: OPS, name: 'ops', is_im: false },
      { id: DEV, name: 'dev', is_im: false, members: ['U0SOMEONE'] },
    ],
  });
  const config = loadConfig(
    {
      SLACK_BOT_TOKEN: TOKEN,
      SLACK_SIGNING_SECRET: 's3cret-signing',
      SLACK_API_URL: fake.apiUrl,
      SWITCHBOARD_DATA_KEYS: TEST_DATA_KEYS,
    },
    ALL_LIFECYCLES,
  );
  slack = createSlackWebClient({ slack: config.slack, logger: logs.logger(), metrics: createMetrics() });
});
afterAll(async () => {
  await fake.close();
});
beforeEach(async () => {
  time = manualTime();
  store = await openEventStore('sqlite::memory:');
  logs.clear();
  firstCall = fake.calls.length;
});
afterEach(async () => {
  fake.clearBehaviour();
  await store.close();
});

describe('post once by key', () => {
  it('posts, records, and posts nothing the second time (nor after a restart)', async () => {
    const first = await newOutbox().post(ctx(), {
      ledger,
      key: 'k1',
      channel: OPS,
      message: message('once k1'),
    });
    expect(first.outcome).toBe('posted');
    const again = await newOutbox().post(ctx(true), {
      ledger,
      key: 'k1',
      channel: OPS,
      message: message('once k1'),
    });
    expect(again).toMatchObject({ outcome: 'recorded', record: { key: 'k1', channel: OPS } });
    expect(postsOf('once k1')).toHaveLength(1);
    expect(callsOf('conversations.history')).toHaveLength(0);
    // Marked, so that a crash before the record can be looked up.
    expect(fake.messages(OPS).at(-1)?.metadata).toEqual({
      event_type: 'switchboard_notice',
      event_payload: { record: ledger.streamOf('k1') },
    });
  });

  it('a crash after Slack took the post and before its record: the restarted process finds it in the history and records it', async () => {
    // Slack applies the post and the answer is lost (the process dies before recording it).
    fake.failNext('chat.postMessage', { status: 500, afterApply: true });
    await expect(
      newOutbox().post(ctx(), { ledger, key: 'k2', channel: OPS, message: message('crash k2') }),
    ).rejects.toMatchObject({ code: 'SB_UPSTREAM_UNAVAILABLE' });
    expect(await ledger.find({ store, now: () => new Date() }, 'k2')).toBeNull();

    // The restarted process: the event comes again (a redelivery), with the message as it is now.
    const restarted = newOutbox();
    const result = restarted.post(ctx(true), {
      ledger,
      key: 'k2',
      channel: OPS,
      message: message('crash k2, now'),
      since: new Date(Date.now() - 60_000),
    });
    // The history is read only once the doubt is HISTORY_SETTLE_MS old.
    await waitFor(() => time.waiting() === 1 || undefined, { what: 'the settle wait' });
    expect(callsOf('conversations.history')).toHaveLength(0);
    time.advance(HISTORY_SETTLE_MS);
    expect(await result).toMatchObject({ outcome: 'found' });
    const posted = fake.messages(OPS).filter((m) => m.text.startsWith('crash k2'));
    // One message, brought up to date, and recorded.
    expect(posted.map((m) => m.text)).toEqual(['crash k2, now']);
    expect(postsOf('crash k2')).toHaveLength(1);
    expect(await ledger.find({ store, now: () => new Date() }, 'k2')).toMatchObject({ ts: posted[0]!.ts });
  });

  it('the same for a DM: the history of the app’s DM with the person is read', async () => {
    fake.failNext('chat.postMessage', { status: 503, afterApply: true });
    await expect(
      newOutbox().post(ctx(), { ledger, key: 'dm', channel: ANA, message: message('dm crash') }),
    ).rejects.toMatchObject({ code: 'SB_UPSTREAM_UNAVAILABLE' });
    const restarted = newOutbox();
    const result = restarted.post(ctx(true), {
      ledger,
      key: 'dm',
      channel: ANA,
      message: message('dm crash'),
    });
    await waitFor(() => time.waiting() === 1 || undefined, { what: 'the settle wait' });
    time.advance(HISTORY_SETTLE_MS);
    expect(await result).toMatchObject({ outcome: 'found' });
    const dm = fake.dmChannel(ANA).id;
    expect(fake.messages(dm).filter((m) => m.text === 'dm crash')).toHaveLength(1);
    expect(callsOf('conversations.history').at(-1)?.params).toMatchObject({ channel: dm });
    // Identical: found as it is, not updated.
    expect(callsOf('chat.update')).toHaveLength(0);
  });

  it('an answer lost in this process: the retry looks first, and posts when Slack had not taken it', async () => {
    const outbox = newOutbox();
    fake.failNext('chat.postMessage', { status: 502 });
    await expect(
      outbox.post(ctx(), { ledger, key: 'k3', channel: OPS, message: message('lost k3') }),
    ).rejects.toMatchObject({ code: 'SB_UPSTREAM_UNAVAILABLE' });
    // Never retried blind inside the call.
    expect(postsOf('lost k3').map((c) => c.status)).toEqual([502]);
    const retry = outbox.post(ctx(), { ledger, key: 'k3', channel: OPS, message: message('lost k3') });
    await waitFor(() => time.waiting() === 1 || undefined, { what: 'the settle wait' });
    time.advance(HISTORY_SETTLE_MS);
    expect(await retry).toMatchObject({ outcome: 'posted' });
    expect(postsOf('lost k3').map((c) => c.status)).toEqual([502, 200]);
    expect(callsOf('conversations.history')).toHaveLength(1);
  });

  it('without a history scope, a post in doubt is posted as before and that is logged once per kind of conversation', async () => {
    const scoped = await startFakeSlack({ botToken: TOKEN, scopes: ['chat:write', 'im:write'] });
    try {
      const config = loadConfig(
        {
          SLACK_BOT_TOKEN: TOKEN,
          SLACK_SIGNING_SECRET: 's3cret-signing',
          SLACK_API_URL: scoped.apiUrl,
          SWITCHBOARD_DATA_KEYS: TEST_DATA_KEYS,
        },
        ALL_LIFECYCLES,
      );
      const client = createSlackWebClient({
        slack: config.slack,
        logger: logs.logger(),
        metrics: createMetrics(),
      });
      const outbox = createSlackOutbox({
        transport: slackOutboxTransport(client),
        logger: logs.logger(),
        now: time.now,
        sleep: async () => {},
      });
      for (const key of ['a', 'b']) {
        await outbox.post(ctx(true), {
          ledger,
          key,
          channel: 'C0INCIDENTS',
          message: message(`scope ${key}`),
        });
      }
      expect(scoped.callsOf('chat.postMessage')).toHaveLength(2);
      expect(scoped.callsOf('conversations.history').map((c) => c.error)).toEqual(['missing_scope']);
      const said = logs.lines().filter((l) => String(l['msg']).startsWith('Slack history unreadable'));
      expect(said).toHaveLength(1);
      expect(String(said[0]?.['msg'])).toContain('channels:history');
    } finally {
      await scoped.close();
    }
  });
});

describe('update in place', () => {
  it('updates the message, skips a redraw that shows the same, and redraws once after a restart', async () => {
    const outbox = newOutbox();
    const posted = await outbox.post(ctx(), { ledger, key: 'u1', channel: OPS, message: message('v1') });
    if (posted.outcome !== 'posted' || !posted.sent) throw new Error('not posted');
    const at = posted.sent;
    // What was just posted is what it shows: nothing to send.
    expect(await outbox.update(ctx(), at, message('v1'))).toEqual({ outcome: 'same' });
    expect(await outbox.update(ctx(), at, message('v2'))).toEqual({ outcome: 'updated' });
    expect(await outbox.update(ctx(), at, message('v2'))).toEqual({ outcome: 'same' });
    expect(callsOf('chat.update')).toHaveLength(1);
    const shown = fake.messages(OPS).find((m) => m.ts === at.ts);
    expect(shown?.text).toBe('v2');
    expect(shown?.edits).toBe(1);
    // In memory: a restarted process sends its first redraw again.
    expect(await newOutbox().update(ctx(), at, message('v2'))).toEqual({ outcome: 'updated' });
    expect(callsOf('chat.update')).toHaveLength(2);
  });

  it('by the key it was posted under, built from its record; nothing posted under a key: missing', async () => {
    const outbox = newOutbox();
    await outbox.post(ctx(), {
      ledger,
      key: 'u2',
      channel: OPS,
      message: async () => ({ message: message('card v1'), extras: { balance: 3 } }),
    });
    const updated = await outbox.update(ctx(), { ledger, key: 'u2' }, async (record) =>
      message(`card v2, balance ${String(record['balance'])}`),
    );
    expect(updated).toEqual({ outcome: 'updated' });
    expect(fake.messages(OPS).find((m) => m.text.startsWith('card v'))?.text).toBe('card v2, balance 3');
    expect(await outbox.update(ctx(), { ledger, key: 'never' }, message('x'))).toEqual({
      outcome: 'missing',
    });
  });

  it('a message Slack says is gone is not an error', async () => {
    expect(await newOutbox().update(ctx(), { channel: OPS, ts: '1.000099' }, message('x'))).toEqual({
      outcome: 'gone',
      slackError: 'message_not_found',
    });
  });
});

describe("Slack's rate limits", () => {
  it('a Retry-After holds back posts in that channel only, for every caller, then the call is made', async () => {
    const outbox = newOutbox();
    fake.failNext('chat.postMessage', { status: 429, retryAfter: 5, channel: OPS });
    const limited = outbox.post(ctx(), { ledger, key: 'r1', channel: OPS, message: message('limited r1') });
    await waitFor(() => time.waiting() === 1 || undefined, { what: 'the wait for Retry-After' });
    // Another channel is not held back.
    const other = await outbox.post(ctx(), { ledger, key: 'r2', channel: DEV, message: message('other r2') });
    expect(other.outcome).toBe('posted');
    // Another caller posting in the same channel waits too, without calling Slack meanwhile.
    const second = outbox.post(ctx(false, 'another-processor'), {
      ledger,
      key: 'r3',
      channel: OPS,
      message: message('second r3'),
    });
    await waitFor(() => time.waiting() === 2 || undefined, { what: 'the second caller waiting' });
    expect(postsOf('limited r1').map((c) => c.status)).toEqual([429]);
    expect(postsOf('second r3')).toHaveLength(0);
    time.advance(4_999);
    expect(postsOf('limited r1')).toHaveLength(1);
    time.advance(1);
    expect(await limited).toMatchObject({ outcome: 'posted' });
    // Then the channel keeps to about one post a second for a while.
    await waitFor(() => time.waiting() === 1 || undefined, { what: 'the next post spaced' });
    time.advance(1_000);
    expect(await second).toMatchObject({ outcome: 'posted' });
    expect(postsOf('limited r1').map((c) => c.status)).toEqual([429, 200]);
  });

  it('a tiered method (chat.update) is held back across channels: its limit is the workspace’s', async () => {
    const outbox = newOutbox();
    const a = await outbox.post(ctx(), { ledger, key: 't1', channel: OPS, message: message('t1') });
    const b = await outbox.post(ctx(), { ledger, key: 't2', channel: DEV, message: message('t2') });
    if (a.outcome !== 'posted' || b.outcome !== 'posted' || !a.sent || !b.sent) throw new Error('not posted');
    fake.failNext('chat.update', { status: 429, retryAfter: 2 });
    const first = outbox.update(ctx(), a.sent, message('t1 v2'));
    await waitFor(() => time.waiting() === 1 || undefined, { what: 'the wait for Retry-After' });
    const second = outbox.update(ctx(), b.sent, message('t2 v2'));
    await waitFor(() => time.waiting() === 2 || undefined, { what: 'the other channel waiting too' });
    expect(callsOf('chat.update').map((c) => c.status)).toEqual([429]);
    time.advance(2_000);
    expect(await first).toEqual({ outcome: 'updated' });
    await waitFor(() => time.waiting() === 1 || undefined, { what: 'the next update spaced at the tier' });
    time.advance(1_200);
    expect(await second).toEqual({ outcome: 'updated' });
  });

  it('fails with SB_UPSTREAM_RATE_LIMITED for the processor once it has waited enough', async () => {
    const outbox = newOutbox();
    fake.failNext('chat.update', { status: 429, retryAfter: 1 }, 2);
    const update = outbox.update(ctx(), { channel: OPS, ts: '1.1' }, message('x'), { maxRateLimitWaits: 1 });
    await waitFor(() => time.waiting() === 1 || undefined, { what: 'the one wait' });
    time.advance(1_000);
    await expect(update).rejects.toMatchObject({
      code: 'SB_UPSTREAM_RATE_LIMITED',
      details: { retryAfterMs: 1_000 },
    });
    expect(callsOf('chat.update').map((c) => c.status)).toEqual([429, 429]);
  });
});

describe('fallbacks', () => {
  it('a channel that refuses the post: the fallback DM gets it, under the same key', async () => {
    const outbox = newOutbox();
    fake.failNext('chat.postMessage', { error: 'not_in_channel', channel: DEV });
    const result = await outbox.post(ctx(), {
      ledger,
      key: 'f1',
      channel: DEV,
      message: message('for dev'),
      fallback: { channel: ANA, message: message('dev refused it, so here') },
    });
    expect(result).toMatchObject({ outcome: 'posted', fallback: true });
    expect(fake.messages(fake.dmChannel(ANA).id).at(-1)?.text).toBe('dev refused it, so here');
    expect(await ledger.find({ store, now: () => new Date() }, 'f1')).toMatchObject({
      channel: fake.dmChannel(ANA).id,
    });
  });

  it('without a fallback, the refusal comes back and nothing is recorded', async () => {
    fake.failNext('chat.postMessage', { error: 'is_archived', channel: DEV });
    const result = await newOutbox().post(ctx(), { ledger, key: 'f2', channel: DEV, message: message('x') });
    expect(result).toMatchObject({ outcome: 'refused', slackError: 'is_archived', fallback: false });
    expect(await ledger.find({ store, now: () => new Date() }, 'f2')).toBeNull();
  });

  it('an ephemeral Slack cannot show (not a member of the channel) goes by DM', async () => {
    const result = await newOutbox().ephemeral(ctx(), {
      ledger,
      key: 'e1',
      channel: DEV,
      user: ANA,
      message: message('only you'),
      dmFallback: true,
    });
    expect(result).toMatchObject({ outcome: 'posted', fallback: true });
    expect(callsOf('chat.postEphemeral').map((c) => c.error)).toEqual(['user_not_in_channel']);
    expect(fake.messages(fake.dmChannel(ANA).id).at(-1)?.text).toBe('only you');
  });

  it('an ephemeral shown is recorded without a place, once', async () => {
    const outbox = newOutbox();
    const first = await outbox.ephemeral(ctx(), {
      ledger,
      key: 'e2',
      channel: OPS,
      user: ANA,
      message: message('shown once'),
      dmFallback: true,
    });
    expect(first).toMatchObject({ outcome: 'posted', fallback: false, record: { channel: null, ts: null } });
    const again = await outbox.ephemeral(ctx(true), {
      ledger,
      key: 'e2',
      channel: OPS,
      user: ANA,
      message: message('shown once'),
      dmFallback: true,
    });
    expect(again.outcome).toBe('recorded');
    expect(fake.ephemerals.filter((e) => e.text === 'shown once')).toHaveLength(1);
  });
});

describe('times as the reader sees them (issue 19 item 3)', () => {
  const at = Date.parse('2026-11-23T09:05:00Z') / 1000;
  const token = (fallback: string) => `<!date^${at}^{date_short_pretty} at {time}|${fallback}>`;
  const day = `<!date^${at}^{date_short_pretty}|Nov 23 2026 (UTC)>`;
  const zoned = (): SlackOutbox =>
    createSlackOutbox({
      transport: slackOutboxTransport(slack),
      logger: logs.logger(),
      now: time.now,
      sleep: time.sleep,
      zoneOf: async (user) => (user === ANA ? 'Asia/Singapore' : 'UTC'),
    });

  it('a DM: token fallbacks in the reader’s zone, its notification text plain; a channel keeps UTC; a redraw after a restart too', async () => {
    const said = (v: string) => message(`expires ${token('Nov 23, 09:05 UTC')} on ${day}, ${v}`);
    await zoned().post(ctx(), { ledger, key: 'z-ops', channel: OPS, message: said('ops') });
    const ops = fake.messages(OPS).find((m) => m.text.includes(', ops'));
    // A channel has many readers: as built (UTC fallbacks, tokens in the text).
    expect(ops?.text).toBe(`expires ${token('Nov 23, 09:05 UTC')} on ${day}, ops`);

    await zoned().post(ctx(), { ledger, key: 'z-dm', channel: ANA, message: said('v1') });
    const dm = () => fake.messages(fake.dmChannel(ANA).id).find((m) => m.text.startsWith('expires '));
    // The push notification: plain, in her zone (a date-only token names a day: as it was).
    expect(dm()?.text).toBe('expires Nov 23, 17:05 Asia/Singapore on Nov 23 2026 (UTC), v1');
    expect(JSON.stringify(dm()?.blocks)).toContain(
      `expires ${token('Nov 23, 17:05 Asia/Singapore')} on ${day}, v1`,
    );
    // A new process (nothing in memory) redraws it by its key: the record names its reader.
    await zoned().update(ctx(), { ledger, key: 'z-dm' }, said('v2'));
    expect(dm()?.text).toBe('expires Nov 23, 17:05 Asia/Singapore on Nov 23 2026 (UTC), v2');
    expect(JSON.stringify(dm()?.blocks)).toContain(`${token('Nov 23, 17:05 Asia/Singapore')}`);
  });
});

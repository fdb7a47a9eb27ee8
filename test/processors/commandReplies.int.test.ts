import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { createCommandBus } from '../../src/application/dispatch.ts';
import { type ManualClock, manualClock } from '../../src/core/clock.ts';
import { ChatOpsError } from '../../src/core/errors.ts';
import { newId } from '../../src/core/ids.ts';
import type { JsonObject } from '../../src/core/messages.ts';
import type { EventStore } from '../../src/eventStore/eventStore.ts';
import { openEventStore } from '../../src/eventStore/openEventStore.ts';
import { commandReplyRoutes, replyStreamId } from '../../src/processors/commandReplies.decider.ts';
import {
  createCommandRepliesReactor,
  replyRetryTimerId,
} from '../../src/processors/commandReplies.reactor.ts';
import { createInboxDispatchReactor } from '../../src/processors/inboxDispatch.reactor.ts';
import type { SlackReplies } from '../../src/processors/ports.ts';
import { createResponseUrlPoster } from '../../src/processors/responseUrl.ts';
import { createProcessorRunner, type Processor, type ProcessorRunner } from '../../src/processors/runner.ts';
import { createScheduler, readTimer, type Scheduler } from '../../src/processors/scheduler.ts';
import { createLogSink } from '../support/logSink.ts';
import { ticketCommand, ticketRoutes } from '../support/ticketLifecycle.ts';

const T0 = '2026-11-22T02:00:00.000Z';

type Seen = { method: string; path: string; body: Record<string, unknown> };
type Answer = { status: number; body?: string; headers?: Record<string, string> };

/** Stands in for Slack: `response_url` paths under /commands/, Web API under /api/. */
const startFakeSlack = async (answers: Answer[]) => {
  const seen: Seen[] = [];
  const readBody = async (req: IncomingMessage) => {
    let text = '';
    for await (const chunk of req) text += chunk;
    return text ? (JSON.parse(text) as Record<string, unknown>) : {};
  };
  const server: Server = createServer((req, res) => {
    void readBody(req).then((body) => {
      seen.push({ method: req.method ?? '', path: req.url ?? '', body });
      const answer = (req.url ?? '').startsWith('/api/')
        ? { status: 200, body: '{"ok":true}' }
        : (answers.shift() ?? { status: 200 });
      res.writeHead(answer.status, { 'content-type': 'text/plain', ...answer.headers });
      res.end(answer.body ?? 'ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { seen, origin, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
};

type Fake = Awaited<ReturnType<typeof startFakeSlack>>;

/** The composition root's adapter, with Bolt's chat.postEphemeral replaced by a plain HTTP call. */
const slackRepliesFor = (fake: Fake): SlackReplies => ({
  respond: createResponseUrlPoster({ allowedOrigins: [fake.origin], timeoutMs: 2_000 }),
  async postEphemeral(channel, user, message) {
    const r = await request(`${fake.origin}/api/chat.postEphemeral`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ channel, user, text: message.text }),
    });
    await r.body.text();
    if (r.statusCode !== 200) {
      throw new ChatOpsError('SB_UPSTREAM_UNAVAILABLE', 'postEphemeral failed', {
        details: { status: r.statusCode },
      });
    }
  },
});

let store: EventStore | undefined;
let runner: ProcessorRunner | undefined;
let fake: Fake | undefined;

afterEach(async () => {
  await runner?.stop();
  runner = undefined;
  await store?.close();
  store = undefined;
  await fake?.close();
  fake = undefined;
});

type Harness = {
  store: EventStore;
  fake: Fake;
  clock: ManualClock;
  scheduler: Scheduler;
  runner: ProcessorRunner;
  processors: Processor[];
};

const setup = async (answers: Answer[] = []): Promise<Harness> => {
  fake = await startFakeSlack(answers);
  store = await openEventStore('sqlite::memory:');
  const clock = manualClock(T0);
  const bus = createCommandBus(store, { ...ticketRoutes, ...commandReplyRoutes });
  const scheduler = createScheduler({ dispatch: bus.dispatch, pollIntervalMs: 0 });
  const processors = [
    scheduler,
    createInboxDispatchReactor({ dispatch: bus.dispatch }),
    createCommandRepliesReactor({
      replies: slackRepliesFor(fake),
      maxAttempts: 3,
      backoff: { baseMs: 60_000, maxMs: 600_000, jitter: 0 },
    }),
  ];
  runner = createProcessorRunner({
    store,
    logger: createLogSink().logger(),
    clock,
    processors,
    retry: { maxAttempts: 2, baseMs: 1, maxMs: 2 },
  });
  await runner.start();
  return { store, fake, clock, scheduler, runner, processors };
};

/** A refused slash command, as the edge records it. Returns its command id. */
const recordRefusedCommand = async (
  h: Harness,
  metadata: { responseUrl?: string; channelId?: string; actor?: string } = {},
): Promise<string> => {
  const commandId = newId();
  const command = ticketCommand('CloseTicket', 'nope', {
    commandId,
    actor: 'U0ALICE',
    responseUrl: `${h.fake.origin}/commands/T1/42/secret`,
    channelId: 'C0OPS',
    ...metadata,
  });
  for (const key of ['responseUrl', 'channelId'] as const) {
    if (metadata[key] === '') delete (command.metadata as Record<string, unknown>)[key];
  }
  await h.store.appendToStream('inbox-slack', [
    {
      id: newId(),
      type: 'SlackInputReceived',
      kind: 'command',
      data: { commands: [command as unknown as JsonObject] },
    },
  ]);
  return commandId;
};

const replyEvents = async (s: EventStore, commandId: string) =>
  (await s.readStream(replyStreamId(commandId))).filter((m) => m.kind === 'event');

describe('command-replies', () => {
  it('tells the user why a command was refused, through the response_url, once', async () => {
    const h = await setup();
    const commandId = await recordRefusedCommand(h);
    await h.runner.waitForIdle();
    expect(h.fake.seen).toEqual([
      {
        method: 'POST',
        path: '/commands/T1/42/secret',
        body: {
          text: ':warning: CloseTicket is not allowed while notOpened',
          response_type: 'ephemeral',
          replace_original: false,
        },
      },
    ]);
    const events = await replyEvents(h.store, commandId);
    expect(events.map((e) => [e.type, e.data.attempt, e.data.via])).toEqual([
      ['ReplySent', 1, 'response_url'],
    ]);

    // A crash before the checkpoint redelivers the CommandRejected: the reply is not sent again.
    await h.runner.stop();
    await h.store.storeCheckpoint('command-replies', 0n);
    runner = createProcessorRunner({
      store: h.store,
      logger: createLogSink().logger(),
      clock: h.clock,
      processors: h.processors,
    });
    await runner.start();
    await runner.waitForIdle();
    expect(h.fake.seen).toHaveLength(1);
    expect(await replyEvents(h.store, commandId)).toHaveLength(1);
  });

  it('retries a 500 durably through the scheduler, then records the success', async () => {
    const h = await setup([{ status: 500, body: 'oops' }, { status: 200 }]);
    const commandId = await recordRefusedCommand(h);
    await h.runner.waitForIdle();
    expect(h.fake.seen).toHaveLength(1);
    const [failed] = await replyEvents(h.store, commandId);
    expect(failed).toMatchObject({
      type: 'ReplyFailed',
      data: {
        attempt: 1,
        code: 'SB_UPSTREAM_UNAVAILABLE',
        final: false,
        nextAttemptAt: '2026-11-22T02:01:00.000Z',
        failedAt: T0,
      },
    });
    const timerId = replyRetryTimerId(commandId, 1);
    expect((await readTimer(h.store, timerId)).status).toBe('pending');
    expect(h.scheduler.pending().map((t) => t.timerId)).toEqual([timerId]);

    h.clock.set('2026-11-22T02:00:59.000Z');
    expect((await h.scheduler.tick()).fired).toEqual([]);
    h.clock.set('2026-11-22T02:01:01.000Z');
    expect((await h.scheduler.tick()).fired).toEqual([{ timerId, outcome: 'dispatched' }]);
    await h.runner.waitForIdle();
    expect(h.fake.seen).toHaveLength(2);
    expect(h.fake.seen[1]?.body.text).toBe(':warning: CloseTicket is not allowed while notOpened');
    const events = await replyEvents(h.store, commandId);
    expect(events.map((e) => [e.type, e.data.attempt])).toEqual([
      ['ReplyFailed', 1],
      ['ReplyRetryRequested', 2],
      ['ReplySent', 2],
    ]);
    expect(events[2]?.data.sentAt).toBe('2026-11-22T02:01:01.000Z');
  });

  it('gives up after the last attempt with a final ReplyFailed', async () => {
    const h = await setup([{ status: 503 }, { status: 502 }, { status: 500 }, { status: 200 }]);
    const commandId = await recordRefusedCommand(h);
    await h.runner.waitForIdle();
    for (let i = 0; i < 4; i++) {
      h.clock.advance(15 * 60_000);
      await h.scheduler.tick();
      await h.runner.waitForIdle();
    }
    expect(h.fake.seen).toHaveLength(3);
    const events = await replyEvents(h.store, commandId);
    expect(events.map((e) => e.type)).toEqual([
      'ReplyFailed',
      'ReplyRetryRequested',
      'ReplyFailed',
      'ReplyRetryRequested',
      'ReplyFailed',
    ]);
    expect(events[2]?.data.nextAttemptAt).toBe('2026-11-22T02:17:00.000Z'); // 2 min after 02:15
    expect(events[4]?.data).toMatchObject({
      attempt: 3,
      final: true,
      nextAttemptAt: null,
      code: 'SB_UPSTREAM_UNAVAILABLE',
    });
    expect(h.scheduler.pending()).toEqual([]);
  });

  it('falls back to an ephemeral message when the response_url is expired', async () => {
    const h = await setup([{ status: 404, body: 'expired_url' }]);
    const commandId = await recordRefusedCommand(h);
    await h.runner.waitForIdle();
    expect(h.fake.seen.map((s) => s.path)).toEqual(['/commands/T1/42/secret', '/api/chat.postEphemeral']);
    expect(h.fake.seen[1]?.body).toEqual({
      channel: 'C0OPS',
      user: 'U0ALICE',
      text: ':warning: CloseTicket is not allowed while notOpened',
    });
    const events = await replyEvents(h.store, commandId);
    expect(events.map((e) => [e.type, e.data.via])).toEqual([['ReplySent', 'ephemeral']]);
  });

  it("waits as long as Slack's Retry-After says", async () => {
    const h = await setup([{ status: 429, headers: { 'retry-after': '600' } }]);
    const commandId = await recordRefusedCommand(h);
    await h.runner.waitForIdle();
    const [failed] = await replyEvents(h.store, commandId);
    expect(failed?.data).toMatchObject({
      code: 'SB_UPSTREAM_RATE_LIMITED',
      nextAttemptAt: '2026-11-22T02:10:00.000Z',
      final: false,
    });
  });

  it('never calls a response_url off the allowlist, and gives up at once without a channel', async () => {
    const h = await setup();
    const commandId = await recordRefusedCommand(h, {
      responseUrl: 'http://169.254.169.254/latest/meta-data',
      channelId: '',
    });
    await h.runner.waitForIdle();
    expect(h.fake.seen).toEqual([]);
    const events = await replyEvents(h.store, commandId);
    expect(events.map((e) => [e.type, e.data.code, e.data.final])).toEqual([
      ['ReplyFailed', 'SB_VALIDATION', true],
    ]);
  });

  it('records a skip when a refusal has nowhere to go (a webhook command)', async () => {
    const h = await setup();
    const commandId = await recordRefusedCommand(h, {
      actor: 'pagerduty:webhook',
      responseUrl: '',
      channelId: '',
    });
    await h.runner.waitForIdle();
    expect(h.fake.seen).toEqual([]);
    const events = await replyEvents(h.store, commandId);
    expect(events.map((e) => [e.type, e.data.reason])).toEqual([['ReplySkipped', 'no_destination']]);
  });
});

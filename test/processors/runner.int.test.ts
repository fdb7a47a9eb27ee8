import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { manualClock } from '../../src/core/clock.ts';
import { NotFoundError, ValidationError } from '../../src/core/errors.ts';
import { newId } from '../../src/core/ids.ts';
import type { EventStore, RecordedEvent } from '../../src/eventStore/eventStore.ts';
import { openEventStore } from '../../src/eventStore/openEventStore.ts';
import {
  createProcessorRunner,
  type Processor,
  type ProcessorRunner,
  processorStreamId,
} from '../../src/processors/runner.ts';
import { createLogSink } from '../support/logSink.ts';
import { gate, waitFor } from '../support/waitFor.ts';

const FAST_RETRY = { maxAttempts: 3, baseMs: 1, maxMs: 5 };

let dir: string | undefined;
let store: EventStore | undefined;
const runners: ProcessorRunner[] = [];

afterEach(async () => {
  for (const r of runners.splice(0)) await r.stop();
  await store?.close();
  store = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

const openFileStore = async (): Promise<EventStore> => {
  dir ??= mkdtempSync(join(tmpdir(), 'sb-runner-'));
  return openEventStore(`sqlite:${join(dir, 'events.db')}`);
};

const appendWork = async (s: EventStore, count: number, data: Record<string, string | boolean> = {}) => {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const id = newId();
    ids.push(id);
    await s.appendToStream(`work-${i % 5}`, [{ id, type: 'WorkRequested', data: { n: i, ...data } }]);
  }
  return ids;
};

const recorder = (id = 'recorder', extra: Partial<Processor> = {}) => {
  const seen: RecordedEvent[] = [];
  const processor: Processor = {
    id,
    filter: { streamPrefixes: ['work-'] },
    async handle(event) {
      seen.push(event);
    },
    ...extra,
  };
  return { seen, processor };
};

const startRunner = async (s: EventStore, processors: Processor[], sink = createLogSink()) => {
  const runner = createProcessorRunner({
    store: s,
    logger: sink.logger({ level: 'debug' }),
    clock: manualClock(),
    processors,
    retry: FAST_RETRY,
  });
  runners.push(runner);
  await runner.start();
  return runner;
};

describe('processor runner', () => {
  it('delivers every matching event once in global order and resumes after its checkpoint', async () => {
    store = await openFileStore();
    const first = await appendWork(store, 250);
    await store.appendToStream('other-1', [{ id: newId(), type: 'Unrelated', data: {} }]);
    const a = recorder();
    const runner = await startRunner(store, [a.processor]);
    await runner.waitForIdle();
    expect(a.seen.map((e) => e.id)).toEqual(first);
    const positions = a.seen.map((e) => e.position);
    expect([...positions].sort((x, y) => (x < y ? -1 : 1))).toEqual(positions);
    await runner.stop();
    const head = await store.headPosition();
    expect(await store.readCheckpoint('recorder')).toBe(head);

    // A new runner (as after a restart) picks up only what came after the checkpoint.
    const later = await appendWork(store, 10);
    const b = recorder();
    const again = await startRunner(store, [b.processor]);
    await again.waitForIdle();
    expect(b.seen.map((e) => e.id)).toEqual(later);
  });

  it('goes live after catching up: events appended later are delivered too', async () => {
    store = await openEventStore('sqlite::memory:');
    const a = recorder();
    const runner = await startRunner(store, [a.processor]);
    await runner.waitForIdle();
    const ids = await appendWork(store, 7);
    await runner.waitForIdle();
    expect(a.seen.map((e) => e.id)).toEqual(ids);
  });

  it('retries a failing event, parks it, logs it with err, and goes on with the rest', async () => {
    store = await openEventStore('sqlite::memory:');
    const before = await appendWork(store, 3);
    const [poisonId] = await appendWork(store, 1, { poison: true });
    const after = await appendWork(store, 3);
    const attempts = new Map<string, number>();
    const handled: string[] = [];
    const sink = createLogSink();
    const runner = await startRunner(
      store,
      [
        {
          id: 'fragile',
          filter: { streamPrefixes: ['work-'] },
          async handle(event) {
            attempts.set(event.id, (attempts.get(event.id) ?? 0) + 1);
            if (event.data.poison) throw new Error('cannot digest this');
            handled.push(event.id);
          },
        },
      ],
      sink,
    );
    await runner.waitForIdle();
    expect(handled).toEqual([...before, ...after]);
    expect(attempts.get(poisonId!)).toBe(3);

    const parked = await store.readStream(processorStreamId('fragile'));
    expect(parked).toHaveLength(1);
    expect(parked[0]).toMatchObject({
      type: 'ProcessorEventParked',
      data: {
        processorId: 'fragile',
        eventId: poisonId,
        streamId: 'work-0',
        type: 'WorkRequested',
        attempts: 3,
        errorCode: 'UNCODED',
        errorMessage: 'cannot digest this',
        parkedAt: '2026-11-22T02:00:00.000Z',
      },
    });
    const line = sink.lines().find((l) => l.msg === 'event parked');
    expect(line).toMatchObject({ processorId: 'fragile', eventId: poisonId, level: 'error' });
    expect(line?.err).toMatchObject({ message: 'cannot digest this' });
    expect(sink.lines().filter((l) => l.msg === 'event failed; retrying')).toHaveLength(2);

    const [status] = await runner.status();
    expect(status).toMatchObject({ id: 'fragile', parked: 1, caughtUp: true, lag: 0 });
    expect(status!.lastError).toMatchObject({ code: 'UNCODED', eventId: poisonId });
    expect(await runner.listParked('fragile')).toEqual([expect.objectContaining({ eventId: poisonId })]);
  });

  it('parks coded permanent errors at once, without retrying', async () => {
    store = await openEventStore('sqlite::memory:');
    const [id] = await appendWork(store, 1);
    let calls = 0;
    const runner = await startRunner(store, [
      {
        id: 'strict',
        filter: { streamPrefixes: ['work-'] },
        async handle() {
          calls += 1;
          throw new ValidationError('this will never parse');
        },
      },
    ]);
    await runner.waitForIdle();
    expect(calls).toBe(1);
    const [parked] = await store.readStream(processorStreamId('strict'));
    expect(parked?.data).toMatchObject({ eventId: id, attempts: 1, errorCode: 'SB_VALIDATION' });
  });

  it('parks with the error text scrubbed of credentials (Slack tokens, Authorization values, response URLs)', async () => {
    store = await openEventStore('sqlite::memory:');
    await appendWork(store, 1);
    const runner = await startRunner(store, [
      {
        id: 'leaky',
        filter: { streamPrefixes: ['work-'] },
        async handle() {
          throw new ValidationError(
            'bad answer for Authorization: Bearer abcdefgh12345678 with xoxb-1234-5678-secretsecret ' +
              'to https://hooks.slack.com/commands/T1/123/abcdef',
          );
        },
      },
    ]);
    await runner.waitForIdle();
    const [parked] = await store.readStream(processorStreamId('leaky'));
    const text = JSON.stringify(parked?.data);
    expect(text).toContain('bad answer for Authorization: [Redacted]');
    expect(text).not.toMatch(/abcdefgh12345678|xoxb-|hooks\.slack\.com/);
    expect(JSON.stringify(await runner.listParked('leaky'))).not.toContain('xoxb-');
  });

  it('does not park the same event twice when it is redelivered', async () => {
    store = await openEventStore('sqlite::memory:');
    await appendWork(store, 1, { poison: true });
    const failing: Processor = {
      id: 'fragile',
      filter: { streamPrefixes: ['work-'] },
      async handle() {
        throw new ValidationError('no');
      },
    };
    const first = await startRunner(store, [failing]);
    await first.waitForIdle();
    await first.stop();
    await store.storeCheckpoint('fragile', 0n); // as if the checkpoint had not been written
    const second = await startRunner(store, [failing]);
    await second.waitForIdle();
    expect(await store.readStream(processorStreamId('fragile'))).toHaveLength(1);
  });

  it('replays parked events: a success unparks, a failure keeps them parked', async () => {
    store = await openEventStore('sqlite::memory:');
    const [poisonId] = await appendWork(store, 1, { poison: true });
    let healed = false;
    const replays: boolean[] = [];
    const runner = await startRunner(store, [
      {
        id: 'fragile',
        filter: { streamPrefixes: ['work-'] },
        async handle(event, ctx) {
          if (ctx.replay) replays.push(ctx.replay);
          if (event.data.poison && !healed) throw new Error('still broken');
        },
      },
    ]);
    await runner.waitForIdle();
    await expect(runner.replayParked('fragile', newId())).rejects.toBeInstanceOf(NotFoundError);

    const failed = await runner.replayParked('fragile');
    expect(failed.succeeded).toEqual([]);
    expect(failed.failed).toEqual([
      { eventId: poisonId, errorCode: 'UNCODED', errorMessage: 'still broken' },
    ]);
    expect(await runner.listParked()).toHaveLength(1);

    healed = true;
    const ok = await runner.replayParked('fragile', poisonId);
    expect(ok).toEqual({ processorId: 'fragile', succeeded: [poisonId], failed: [] });
    expect(await runner.listParked('fragile')).toEqual([]);
    expect(replays.length).toBeGreaterThanOrEqual(2);
    const bookkeeping = await store.readStream(processorStreamId('fragile'));
    expect(bookkeeping.map((e) => [e.type, e.data.outcome ?? null])).toEqual([
      ['ProcessorEventParked', null],
      ['ProcessorParkedEventReplayed', 'failed'],
      ['ProcessorParkedEventReplayed', 'succeeded'],
    ]);
    const [status] = await runner.status();
    expect(status?.parked).toBe(0);
  });

  it('replays parked events without being started (the CLI case)', async () => {
    store = await openEventStore('sqlite::memory:');
    const [poisonId] = await appendWork(store, 1);
    let broken = true;
    const processor: Processor = {
      id: 'fragile',
      filter: { streamPrefixes: ['work-'] },
      async handle() {
        if (broken) throw new ValidationError('broken');
      },
    };
    const live = await startRunner(store, [processor]);
    await live.waitForIdle();
    await live.stop();
    broken = false;
    const cli = createProcessorRunner({
      store,
      logger: createLogSink().logger(),
      clock: manualClock(),
      processors: [processor],
    });
    expect((await cli.replayParked('fragile')).succeeded).toEqual([poisonId]);
  });

  it('reports lag while behind and caught up once done, ignoring other streams', async () => {
    store = await openEventStore('sqlite::memory:');
    await appendWork(store, 5);
    const hold = gate();
    let handled = 0;
    const runner = await startRunner(store, [
      {
        id: 'slow',
        filter: { streamPrefixes: ['work-'] },
        async handle() {
          await hold.promise;
          handled += 1;
        },
      },
    ]);
    await waitFor(async () => (await runner.status())[0]?.running);
    const [busy] = await runner.status();
    expect(busy).toMatchObject({ id: 'slow', caughtUp: false, running: true });
    expect(busy!.lag).toBeGreaterThan(0);
    expect(busy!.head).toBe(5n);
    await expect(runner.waitForIdle(50)).rejects.toThrow(/not idle.*slow/);

    hold.open();
    await runner.waitForIdle();
    expect(handled).toBe(5);
    // Events on streams this processor does not read move the head, not its lag.
    for (let i = 0; i < 20; i++)
      await store.appendToStream('other-x', [{ id: newId(), type: 'Noise', data: {} }]);
    const [idle] = await runner.waitForIdle();
    expect(idle).toMatchObject({ caughtUp: true, lag: 0, head: 25n, position: 25n, handled: 5 });
    expect(await store.readCheckpoint('slow')).toBe(25n);
  });

  it('stop() waits for the event in hand, checkpoints it, and takes no more', async () => {
    store = await openEventStore('sqlite::memory:');
    const ids = await appendWork(store, 3);
    const hold = gate();
    const started: string[] = [];
    const finished: string[] = [];
    const runner = await startRunner(store, [
      {
        id: 'careful',
        filter: { streamPrefixes: ['work-'] },
        async handle(event) {
          started.push(event.id);
          await hold.promise;
          finished.push(event.id);
        },
      },
    ]);
    await waitFor(() => started.length === 1);
    let stopped = false;
    const stopping = runner.stop().then(() => {
      stopped = true;
    });
    await new Promise((r) => setTimeout(r, 50));
    expect(stopped).toBe(false);
    hold.open();
    await stopping;
    expect(finished).toEqual([ids[0]]);
    expect(started).toEqual([ids[0]]);
    expect(await store.readCheckpoint('careful')).toBe(1n);
  });

  it('stop() abandons an event waiting for a retry; the next start redelivers it', async () => {
    store = await openEventStore('sqlite::memory:');
    const [id] = await appendWork(store, 1);
    let fail = true;
    let calls = 0;
    const processor: Processor = {
      id: 'flaky',
      filter: { streamPrefixes: ['work-'] },
      async handle() {
        calls += 1;
        if (fail) throw new Error('upstream hiccup');
      },
    };
    const runner = createProcessorRunner({
      store,
      logger: createLogSink().logger(),
      clock: manualClock(),
      processors: [processor],
      retry: { maxAttempts: 5, baseMs: 60_000, maxMs: 60_000 },
    });
    await runner.start();
    await waitFor(() => calls === 1);
    await runner.stop();
    expect(await store.readCheckpoint('flaky')).toBeUndefined();
    expect(await store.readStream(processorStreamId('flaky'))).toEqual([]);

    fail = false;
    const seen: string[] = [];
    const next = await startRunner(store, [{ ...processor, handle: async (e) => void seen.push(e.id) }]);
    await next.waitForIdle();
    expect(seen).toEqual([id]);
  });

  it('hides processor-* bookkeeping streams from processors that do not ask for them', async () => {
    store = await openEventStore('sqlite::memory:');
    await appendWork(store, 2, { poison: true });
    const everything: string[] = [];
    const audit: string[] = [];
    const runner = await startRunner(store, [
      {
        id: 'fragile',
        filter: { streamPrefixes: ['work-'] },
        async handle() {
          throw new ValidationError('no');
        },
      },
      {
        id: 'everything',
        async handle(e) {
          everything.push(e.streamId);
        },
      },
      {
        id: 'park-watcher',
        filter: { streamPrefixes: ['processor-'] },
        async handle(e) {
          audit.push(e.type);
        },
      },
    ]);
    await runner.waitForIdle();
    expect(everything.every((s) => s.startsWith('work-'))).toBe(true);
    expect(everything).toHaveLength(2);
    expect(audit).toEqual(['ProcessorEventParked', 'ProcessorEventParked']);
  });

  it('says when an event may have been handled before (ctx.redelivery)', async () => {
    store = await openFileStore();
    const [before] = await appendWork(store, 1, { tag: 'before' });
    const seen: { id: string; attempt: number; redelivery: boolean }[] = [];
    let failOnce = true;
    const processor: Processor = {
      id: 'redeliveries',
      filter: { streamPrefixes: ['work-'] },
      async handle(event, ctx) {
        seen.push({ id: event.id, attempt: ctx.attempt, redelivery: ctx.redelivery });
        if (event.data.tag === 'flaky' && failOnce) {
          failOnce = false;
          throw new Error('try again');
        }
      },
    };
    const runner = await startRunner(store, [processor]);
    const [after] = await appendWork(store, 1, { tag: 'after' });
    const [flaky] = await appendWork(store, 1, { tag: 'flaky' });
    await runner.waitForIdle();
    expect(seen).toEqual([
      // Recorded before this start: a previous run may have handled it (a crash before its checkpoint).
      { id: before, attempt: 1, redelivery: true },
      { id: after, attempt: 1, redelivery: false },
      { id: flaky, attempt: 1, redelivery: false },
      // An in-process retry: the first try may have had its effect.
      { id: flaky, attempt: 2, redelivery: true },
    ]);
  });

  it('rejects processor ids that are not stable kebab-case, and duplicates', () => {
    const make = (ids: string[]) =>
      createProcessorRunner({
        store: {} as EventStore,
        logger: createLogSink().logger(),
        clock: manualClock(),
        processors: ids.map((id) => ({ id, handle: async () => undefined })),
      });
    expect(() => make(['Slack Replies'])).toThrow(ValidationError);
    expect(() => make(['a-b', 'a-b'])).toThrow(/two processors/);
    expect(() => make(['slack-replies', 'scheduler'])).not.toThrow();
  });
});

import { afterEach, describe, expect, it } from 'vitest';
import { pagerDecider } from '../../machines/verification/paging/decider.ts';
import { pagerStreamId } from '../../machines/verification/paging/streams.ts';
import { type CommandBus, createCommandBus } from '../../src/application/dispatch.ts';
import { ChatOpsError } from '../../src/core/errors.ts';
import type { Command } from '../../src/core/messages.ts';
import type { EventStore, RecordedEvent } from '../../src/eventStore/eventStore.ts';
import { openEventStore } from '../../src/eventStore/openEventStore.ts';
import type { ProcessorContext } from '../../src/processors/runner.ts';
import { readTimer } from '../../src/processors/scheduler.ts';
import { createPagingDeliveryReactor } from '../../src/verification/paging/delivery.reactor.ts';
import { createLogSink } from '../support/logSink.ts';

/**
 * The page's calls through the durable upstream-call mechanism, one delivery at a time: the real
 * store, command bus, pager decider and delivery processors, each event handed to the processor as
 * the runner does (again, as a redelivery after a crash); only the phone service is a stand-in that
 * counts what it was asked.
 */
const USER = 'U0CHEN';
const T0 = '2026-11-23T09:00:00.000Z';
let store: EventStore | undefined;
afterEach(async () => {
  await store?.close();
  store = undefined;
});

const phoneService = () => {
  const sms: { to: string; clientRef?: string }[] = [];
  const calls: { to: string }[] = [];
  let failCalls = 0;
  return {
    sms,
    calls,
    failNextCall: () => {
      failCalls += 1;
    },
    client: {
      sendSms: async (input: { to: string; clientRef?: string }) => {
        sms.push({ to: input.to, ...(input.clientRef ? { clientRef: input.clientRef } : {}) });
        return { messageUuid: `m-${sms.length}` };
      },
      createCall: async (input: { to: string }) => {
        if (failCalls > 0) {
          failCalls -= 1;
          throw new ChatOpsError('SB_UPSTREAM_UNAVAILABLE', 'the voice API answered 503', {
            details: { status: 503 },
          });
        }
        calls.push({ to: input.to });
        return { uuid: `call-${calls.length}` };
      },
    },
  };
};

const command = (type: string, data: Record<string, unknown>, id: string): Command =>
  ({ type, data, metadata: { now: T0, commandId: id, actor: 'system:test' } }) as Command;

const setup = async () => {
  store = await openEventStore('sqlite::memory:');
  const route = {
    decider: pagerDecider as never,
    streamId: (c: Command) => pagerStreamId(String(c.data.slackUserId)),
  };
  const types = [
    'RequestPage',
    'RecordPageSmsSent',
    'RecordPageSmsFailed',
    'PlacePageCall',
    'RecordPageCallPlaced',
    'RecordPageCallFailed',
    'RecordPageUpstreamCallFailed',
    'RetryPageUpstreamCall',
    'RecordPageCallHungUp',
    'StopPage',
  ];
  const bus: CommandBus = createCommandBus(store, Object.fromEntries(types.map((t) => [t, route])));
  const vendor = phoneService();
  const deps = {
    client: vendor.client as never,
    from: '447700900000',
    voiceEventUrl: undefined,
    dispatch: () => bus.dispatch,
    openPhone: async () => null,
  };
  const sms = createPagingDeliveryReactor(deps, 'sms');
  const calls = createPagingDeliveryReactor(deps, 'calls');
  const s = store;
  const logger = createLogSink().logger();
  /** Hands the last `type` event of the pager stream to `processor`, as a first delivery or again. */
  const deliver = async (processor: typeof sms, type: string, redelivery = false) => {
    const events = await s.readStream(pagerStreamId(USER));
    const event = events.filter((e) => e.kind === 'event' && e.type === type).at(-1) as RecordedEvent;
    const ctx: ProcessorContext = {
      store: s,
      clock: { now: () => new Date(T0) },
      now: () => new Date(T0),
      logger,
      attempt: 1,
      maxAttempts: 5,
      replay: false,
      redelivery,
      signal: new AbortController().signal,
    } as unknown as ProcessorContext;
    await processor.handle(event, ctx);
  };
  const types_ = async () =>
    (await s.readStream(pagerStreamId(USER))).filter((e) => e.kind === 'event').map((e) => e.type);
  await bus.dispatch(
    command(
      'RequestPage',
      {
        slackUserId: USER,
        pageId: 'page-1',
        reportTo: 'incident-i1',
        number: 1,
        label: '#1 Checkout 5xx',
        phone: '447700900103',
        phoneVerifiedAt: T0,
        text: '[Switchboard] #1 Checkout 5xx',
        spokenText: 'Incident 1',
        callAfterMs: 0,
        maxPerHour: 10,
      },
      'request-1',
    ),
  );
  return { s, bus, vendor, sms, calls, deliver, types: types_ };
};

describe('page delivery, one delivery at a time', () => {
  it('an SMS is sent once with client_ref = the page id; its redelivery finds it recorded and sends nothing', async () => {
    const t = await setup();
    await t.deliver(t.sms, 'PageRequested');
    await t.deliver(t.sms, 'PageRequested', true);
    expect(t.vendor.sms).toEqual([{ to: '447700900103', clientRef: 'page-1' }]);
    expect(await t.types()).toEqual(['PageRequested', 'PageSmsSent']);
    // The call's timer was made sure of before the SMS.
    expect((await readTimer(t.s, 'page-call-page-1')).status).toBe('pending');
  });

  it('a call has no idempotency key: a redelivery finds the call recorded and does not call again', async () => {
    const t = await setup();
    await t.deliver(t.sms, 'PageRequested');
    await t.bus.dispatch(command('PlacePageCall', { slackUserId: USER, pageId: 'page-1' }, 'timer-1'));
    await t.deliver(t.calls, 'PageCallRequested');
    await t.deliver(t.calls, 'PageCallRequested', true);
    expect(t.vendor.calls).toHaveLength(1);
    expect(await t.types()).toEqual(['PageRequested', 'PageSmsSent', 'PageCallRequested', 'PageCallPlaced']);
  });

  it('a failed call attempt is recorded with its retry as a durable timer; the retry places the call once', async () => {
    const t = await setup();
    await t.deliver(t.sms, 'PageRequested');
    await t.bus.dispatch(command('PlacePageCall', { slackUserId: USER, pageId: 'page-1' }, 'timer-1'));
    t.vendor.failNextCall();
    await t.deliver(t.calls, 'PageCallRequested');
    await t.deliver(t.calls, 'PageCallRequested', true);
    expect(t.vendor.calls).toEqual([]);
    const failed = (await t.s.readStream(pagerStreamId(USER))).filter(
      (e) => e.type === 'PageUpstreamCallFailed',
    );
    expect(failed).toHaveLength(1);
    const timer = await readTimer(t.s, 'page-retry-page-1:call-1');
    expect(timer).toMatchObject({ status: 'pending', command: { type: 'RetryPageUpstreamCall' } });
    expect(timer.dueAt?.toISOString()).toBe(failed[0]?.data.nextAttemptAt);
    // The timer fires: attempt 2 starts and places the call.
    await t.bus.dispatch({
      ...(timer.command as Command),
      metadata: { now: T0, commandId: 'fire-1', actor: 'system:scheduler' },
    });
    await t.deliver(t.calls, 'PageUpstreamCallRetried');
    await t.deliver(t.calls, 'PageUpstreamCallRetried', true);
    expect(t.vendor.calls).toHaveLength(1);
    expect((await t.types()).slice(-3)).toEqual([
      'PageUpstreamCallFailed',
      'PageUpstreamCallRetried',
      'PageCallPlaced',
    ]);
  });
});

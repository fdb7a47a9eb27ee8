import { afterEach, describe, expect, it } from 'vitest';
import { type CommandBus, createCommandBus } from '../../src/application/dispatch.ts';
import { manualClock } from '../../src/core/clock.ts';
import { newId } from '../../src/core/ids.ts';
import type { Command, JsonObject } from '../../src/core/messages.ts';
import type { EventStore } from '../../src/eventStore/eventStore.ts';
import { openEventStore } from '../../src/eventStore/openEventStore.ts';
import type { Dispatch } from '../../src/processors/dispatchCommand.ts';
import {
  commandRejectedEventId,
  createInboxDispatchReactor,
} from '../../src/processors/inboxDispatch.reactor.ts';
import {
  createProcessorRunner,
  type ProcessorRunner,
  processorStreamId,
} from '../../src/processors/runner.ts';
import { createLogSink } from '../support/logSink.ts';
import { ticketCommand, ticketRoutes, ticketStreamId } from '../support/ticketLifecycle.ts';

const RESPONSE_URL = 'https://hooks.slack.com/commands/T1/1/abc';

let store: EventStore | undefined;
let runner: ProcessorRunner | undefined;

afterEach(async () => {
  await runner?.stop();
  runner = undefined;
  await store?.close();
  store = undefined;
});

const setup = async (dispatch?: (bus: CommandBus) => Dispatch) => {
  store = await openEventStore('sqlite::memory:');
  const bus = createCommandBus(store, ticketRoutes);
  runner = createProcessorRunner({
    store,
    logger: createLogSink().logger(),
    clock: manualClock('2026-11-22T02:05:00.000Z'),
    processors: [createInboxDispatchReactor({ dispatch: dispatch ? dispatch(bus) : bus.dispatch })],
    retry: { maxAttempts: 2, baseMs: 1, maxMs: 2 },
  });
  await runner.start();
  return { store, bus, runner };
};

const recordSlackInput = async (s: EventStore, commands: readonly unknown[], streamId = 'inbox-slack') => {
  const id = newId();
  await s.appendToStream(streamId, [
    {
      id,
      type: 'SlackInputReceived',
      kind: 'command',
      data: { input: { source: 'slack', name: '/ticket' }, commands: commands as JsonObject[] },
    },
  ]);
  return id;
};

const slackMeta = (commandId: string) => ({
  commandId,
  actor: 'U0ALICE',
  channelId: 'C0OPS',
  teamId: 'T0TEAM',
  responseUrl: RESPONSE_URL,
});

describe('inbox-dispatch', () => {
  it('dispatches the recorded commands in order, with the input as causation', async () => {
    const { store, runner } = await setup();
    const inputId = await recordSlackInput(store, [
      ticketCommand('OpenTicket', 't1', slackMeta('c-open')),
      ticketCommand('TouchTicket', 't1', slackMeta('c-touch')),
    ]);
    await recordSlackInput(store, []);
    await runner.waitForIdle();
    const ticket = await store.readStream(ticketStreamId('t1'));
    expect(ticket.filter((m) => m.kind === 'event').map((m) => m.type)).toEqual([
      'TicketOpened',
      'TicketTouched',
    ]);
    expect(ticket[0]?.metadata).toMatchObject({
      commandId: 'c-open',
      causationId: inputId,
      actor: 'U0ALICE',
    });
    expect((await store.readStream('inbox-slack')).map((m) => m.type)).toEqual([
      'SlackInputReceived',
      'SlackInputReceived',
    ]);
  });

  it('records a coded refusal as CommandRejected in the same inbox stream, for the reply reactor', async () => {
    const { store, runner } = await setup();
    const inputId = await recordSlackInput(store, [
      ticketCommand('CloseTicket', 't404', slackMeta('c-close')),
    ]);
    await runner.waitForIdle();
    const inbox = await store.readStream('inbox-slack');
    expect(inbox.map((m) => m.type)).toEqual(['SlackInputReceived', 'CommandRejected']);
    expect(inbox[1]).toMatchObject({
      id: commandRejectedEventId('c-close'),
      data: {
        commandId: 'c-close',
        commandType: 'CloseTicket',
        code: 'SB_ILLEGAL_STATE',
        message: 'CloseTicket is not allowed while notOpened',
        actor: 'U0ALICE',
        channelId: 'C0OPS',
        teamId: 'T0TEAM',
        responseUrl: RESPONSE_URL,
        inputId,
        rejectedAt: '2026-11-22T02:05:00.000Z',
      },
    });
    expect(inbox[1]!.data.details).toMatchObject({ command: 'CloseTicket', state: 'notOpened' });
  });

  it('refuses commands no lifecycle handles and malformed recorded commands (SB_VALIDATION)', async () => {
    const { store, runner } = await setup();
    await recordSlackInput(store, [
      {
        type: 'LaunchRocket',
        data: {},
        metadata: { commandId: 'c-rocket', actor: 'U0ALICE', now: '2026-11-22T02:00:00Z' },
      },
      { type: 'OpenTicket', data: { ticketId: 'x' }, metadata: { actor: 'U0ALICE' } },
    ]);
    await runner.waitForIdle();
    const rejected = (await store.readStream('inbox-slack')).filter((m) => m.type === 'CommandRejected');
    expect(rejected.map((m) => [m.data.commandType, m.data.code])).toEqual([
      ['LaunchRocket', 'SB_VALIDATION'],
      ['OpenTicket', 'SB_VALIDATION'],
    ]);
    expect(rejected[1]!.data.message).toMatch(/no metadata.commandId.*no valid metadata.now/);
    expect(await store.readStream(ticketStreamId('x'))).toEqual([]);
  });

  it('is safe to redeliver: no second effect, no second rejection', async () => {
    const { store, runner } = await setup();
    await recordSlackInput(store, [
      ticketCommand('OpenTicket', 't1', slackMeta('c-open')),
      ticketCommand('OpenTicket', 't1', slackMeta('c-open-again')),
    ]);
    await runner.waitForIdle();
    await runner.stop();
    const ticketBefore = await store.readStream(ticketStreamId('t1'));
    const inboxBefore = await store.readStream('inbox-slack');
    expect(inboxBefore.filter((m) => m.type === 'CommandRejected')).toHaveLength(1);

    await store.storeCheckpoint('inbox-dispatch', 0n); // as after a crash before the checkpoint
    const again = createProcessorRunner({
      store,
      logger: createLogSink().logger(),
      clock: manualClock(),
      processors: [createInboxDispatchReactor({ dispatch: createCommandBus(store, ticketRoutes).dispatch })],
    });
    await again.start();
    await again.waitForIdle();
    await again.stop();
    expect(await store.readStream(ticketStreamId('t1'))).toEqual(ticketBefore);
    expect(await store.readStream('inbox-slack')).toEqual(inboxBefore);
  });

  it('still reports a refusal when the lifecycle recorded it before a crash', async () => {
    const { store, bus, runner } = await setup();
    await bus.dispatch(ticketCommand('OpenTicket', 't1', slackMeta('c-open')));
    await bus.dispatch(ticketCommand('CloseTicket', 't1', slackMeta('c-close')));
    const late = ticketCommand('TouchTicket', 't1', slackMeta('c-touch'));
    // The refusal was decided and recorded in the ticket stream, then the process died before
    // the inbox got its CommandRejected; the redelivery gets "already handled" from the lifecycle.
    await expect(bus.dispatch(late)).rejects.toMatchObject({ code: 'SB_ILLEGAL_STATE' });
    await recordSlackInput(store, [late]);
    await runner.waitForIdle();
    const rejected = (await store.readStream('inbox-slack')).filter((m) => m.type === 'CommandRejected');
    expect(rejected.map((m) => [m.data.commandId, m.data.code])).toEqual([['c-touch', 'SB_ILLEGAL_STATE']]);
    expect(rejected[0]!.data.message).toBe('TouchTicket is not allowed while closed');
  });

  it('only reads inbox- streams', async () => {
    const { store, runner } = await setup();
    await store.appendToStream('elsewhere-1', [
      {
        id: newId(),
        type: 'SlackInputReceived',
        data: { commands: [ticketCommand('OpenTicket', 't1', slackMeta('c')) as unknown as JsonObject] },
      },
    ]);
    await recordSlackInput(store, [ticketCommand('OpenTicket', 't2', slackMeta('c2'))], 'inbox-pagerduty');
    await runner.waitForIdle();
    expect(await store.readStream(ticketStreamId('t1'))).toEqual([]);
    expect(await store.readStream(ticketStreamId('t2'))).not.toEqual([]);
  });

  it('lets unexpected errors reach the runner, which retries and parks the input', async () => {
    let calls = 0;
    const { store, runner } = await setup((bus) => async (command: Command) => {
      calls += 1;
      if (command.data.ticketId === 'cursed') throw new Error('database on fire');
      return bus.dispatch(command);
    });
    const cursedInput = await recordSlackInput(store, [
      ticketCommand('OpenTicket', 'cursed', slackMeta('c1')),
    ]);
    await recordSlackInput(store, [ticketCommand('OpenTicket', 'fine', slackMeta('c2'))]);
    await runner.waitForIdle();
    expect(calls).toBe(3);
    expect((await store.readStream(ticketStreamId('fine'))).length).toBeGreaterThan(0);
    const parked = await store.readStream(processorStreamId('inbox-dispatch'));
    expect(parked.map((e) => [e.type, e.data.eventId, e.data.errorMessage])).toEqual([
      ['ProcessorEventParked', cursedInput, 'database on fire'],
    ]);
    expect((await store.readStream('inbox-slack')).filter((m) => m.type === 'CommandRejected')).toEqual([]);
  });
});

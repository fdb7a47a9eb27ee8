import { afterEach, describe, expect, it } from 'vitest';
import { createCommandBus } from '../../src/application/dispatch.ts';
import { manualClock } from '../../src/core/clock.ts';
import { newId } from '../../src/core/ids.ts';
import type { JsonObject } from '../../src/core/messages.ts';
import type { EventStore } from '../../src/eventStore/eventStore.ts';
import { openEventStore } from '../../src/eventStore/openEventStore.ts';
import { readIncidentState } from '../../src/incidents/incidentState.ts';
import { incidentRoutes } from '../../src/incidents/routes.ts';
import { createInboxDispatchReactor } from '../../src/processors/inboxDispatch.reactor.ts';
import { createProcessorRunner } from '../../src/processors/runner.ts';
import { caught } from '../support/caught.ts';
import { createLogSink } from '../support/logSink.ts';
import { ticketCommand, ticketRoutes, ticketStreamId } from '../support/ticketLifecycle.ts';

/**
 * Typed from store to decider: every stored event is upcast and parsed with its lifecycle's schema
 * when a stream is folded, and every command's data is parsed with its schema before the decider
 * sees it. What does not parse fails loudly with a coded error that says where.
 */
let store: EventStore | undefined;
afterEach(async () => {
  await store?.close();
  store = undefined;
});

const open = async () => {
  store = await openEventStore('sqlite::memory:');
  return { store, bus: createCommandBus(store, ticketRoutes) };
};

describe('stored events are parsed when folded', () => {
  it('a malformed stored event fails the command with SB_STORE_CORRUPT naming stream, position and type', async () => {
    const { store, bus } = await open();
    await bus.dispatch(ticketCommand('OpenTicket', 't1', { commandId: 'c-open' }));
    const bad = newId();
    const { position } = await store.appendToStream(ticketStreamId('t1'), [
      { id: bad, type: 'TicketTouched', data: { ticketId: 't1', by: 42 } },
    ]);
    const before = await store.readStream(ticketStreamId('t1'));

    const error = await caught(bus.dispatch(ticketCommand('TouchTicket', 't1', { commandId: 'c-touch' })));
    expect(error).toMatchObject({
      code: 'SB_STORE_CORRUPT',
      details: {
        streamId: 'ticket-t1',
        position: position.toString(),
        revision: 2,
        eventId: bad,
        eventType: 'TicketTouched',
        issues: [
          { path: 'data.by', message: expect.any(String) },
          { path: 'data.at', message: expect.any(String) },
        ],
      },
    });
    expect((error as Error).message).toMatch(
      new RegExp(`^stream ticket-t1, position ${position} \\(revision 2\\), event TicketTouched .*data\\.by`),
    );
    // Nothing was decided or written.
    expect(await store.readStream(ticketStreamId('t1'))).toEqual(before);
  });

  it('an old shape is read through its upcaster, and the stored event is never rewritten', async () => {
    const { store, bus } = await open();
    // How TicketOpened was stored once: TicketCreated { name }.
    await store.appendToStream(ticketStreamId('t1'), [
      { id: newId(), type: 'TicketCreated', data: { ticketId: 't1', name: 'old ticket', by: 'U1' } },
    ]);
    const { events, state } = await bus.dispatch(
      ticketCommand('TouchTicket', 't1', { commandId: 'c-touch' }),
    );
    expect(events.map((e) => e.type)).toEqual(['TicketTouched']);
    expect((state as { value: unknown }).value).toBe('open');
    const stored = await store.readStream(ticketStreamId('t1'));
    expect(stored[0]).toMatchObject({ type: 'TicketCreated', data: { name: 'old ticket' } });
  });

  it('the incident state reader parses too', async () => {
    store = await openEventStore('sqlite::memory:');
    const { position } = await store.appendToStream('incident-PBAD001', [
      { id: newId(), type: 'IncidentLinked', data: { upstreamId: 'PBAD001', number: 'seven' } },
    ]);
    const error = await caught(readIncidentState(store, 'incident-PBAD001'));
    expect(error).toMatchObject({
      code: 'SB_STORE_CORRUPT',
      details: { streamId: 'incident-PBAD001', position: position.toString(), eventType: 'IncidentLinked' },
    });
    expect((error as Error).message).toContain('data.number');
  });
});

describe('commands are parsed at dispatch', () => {
  it('a command whose data does not parse is refused as SB_VALIDATION naming the field, before the decider', async () => {
    const { store, bus } = await open();
    const error = await caught(
      bus.dispatch({
        type: 'OpenTicket',
        data: { ticketId: 't1', title: 7 },
        metadata: { now: '2026-11-22T02:00:00.000Z', commandId: 'c-open', actor: 'U1' },
      }),
    );
    expect(error).toMatchObject({
      code: 'SB_VALIDATION',
      message: expect.stringMatching(/^OpenTicket is malformed: data\.title: /),
      details: { reason: 'invalid_command', command: 'OpenTicket', field: 'data.title' },
    });
    expect(await store.readStream(ticketStreamId('t1'))).toEqual([]);
  });

  it('an incident command without the fields its decider reads is refused the same way', async () => {
    store = await openEventStore('sqlite::memory:');
    const bus = createCommandBus(store, incidentRoutes({ streamForUpstreamId: () => undefined }));
    const error = await caught(
      bus.dispatch({
        type: 'AcknowledgeIncident',
        data: { streamId: 'incident-PINC001', by: 'U0ANA', asUser: { id: 'PUSR001', name: null } },
        metadata: { now: '2026-11-22T02:00:00.000Z', commandId: 'c-ack', actor: 'U0ANA' },
      }),
    );
    expect(error).toMatchObject({ code: 'SB_VALIDATION', details: { field: 'data.asUser.email' } });
    expect(await store.readStream('incident-PINC001')).toEqual([]);
  });

  it('a recorded input whose command does not parse gets a CommandRejected the user hears about', async () => {
    const { store, bus } = await open();
    const runner = createProcessorRunner({
      store,
      logger: createLogSink().logger(),
      clock: manualClock(),
      processors: [createInboxDispatchReactor({ dispatch: bus.dispatch })],
    });
    await runner.start();
    const command = ticketCommand('TouchTicket', 't1', { commandId: 'c-touch', responseUrl: 'https://x' });
    await store.appendToStream('inbox-slack', [
      {
        id: newId(),
        type: 'SlackInputReceived',
        kind: 'command',
        data: { commands: [{ ...command, data: { ticketId: '' } } as unknown as JsonObject] },
      },
    ]);
    await runner.waitForIdle();
    await runner.stop();
    const rejected = (await store.readStream('inbox-slack')).filter((e) => e.type === 'CommandRejected');
    expect(rejected.map((e) => [e.data.code, e.data.details])).toEqual([
      ['SB_VALIDATION', expect.objectContaining({ field: 'data.ticketId' })],
    ]);
  });
});

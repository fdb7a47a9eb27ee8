import { assign, setup } from 'xstate';
import { machineDecider } from '../../machines/shared/machineDecider.ts';
import type { CommandRoute } from '../../src/application/dispatch.ts';
import { type Command, type CommandMetadata, type Event, exhaustive } from '../../src/core/messages.ts';

/**
 * A tiny lifecycle for processor tests (a real machineDecider, not a mock): a ticket is opened,
 * touched any number of times, closed. Touching or closing a ticket that is not open is refused
 * (SB_ILLEGAL_STATE). Streams `ticket-<ticketId>`.
 */
export type TicketEvent =
  | Event<'TicketOpened', { ticketId: string; title: string; by: string }>
  | Event<'TicketTouched', { ticketId: string; by: string; at: string }>
  | Event<'TicketClosed', { ticketId: string; by: string }>;

export type TicketCommand =
  | Command<'OpenTicket', { ticketId: string; title: string }>
  | Command<'TouchTicket', { ticketId: string }>
  | Command<'CloseTicket', { ticketId: string }>;

export const ticketMachine = setup({
  types: { context: {} as { touches: number }, events: {} as TicketEvent },
}).createMachine({
  id: 'ticket',
  initial: 'notOpened',
  context: { touches: 0 },
  states: {
    notOpened: { on: { TicketOpened: 'open' } },
    open: {
      on: {
        TicketTouched: { actions: assign({ touches: ({ context }) => context.touches + 1 }) },
        TicketClosed: 'closed',
      },
    },
    closed: { type: 'final' },
  },
});

export const ticketDecider = machineDecider({
  machine: ticketMachine,
  toEvents: (command: TicketCommand): TicketEvent[] => {
    const by = command.metadata.actor;
    switch (command.type) {
      case 'OpenTicket':
        return [
          { type: 'TicketOpened', data: { ticketId: command.data.ticketId, title: command.data.title, by } },
        ];
      case 'TouchTicket':
        return [
          { type: 'TicketTouched', data: { ticketId: command.data.ticketId, by, at: command.metadata.now } },
        ];
      case 'CloseTicket':
        return [{ type: 'TicketClosed', data: { ticketId: command.data.ticketId, by } }];
      default:
        return exhaustive(command, 'ticket command');
    }
  },
});

export const ticketStreamId = (ticketId: string): string => `ticket-${ticketId}`;

const route: CommandRoute = {
  decider: ticketDecider as unknown as CommandRoute['decider'],
  streamId: (command) => ticketStreamId(String(command.data.ticketId)),
};

export const ticketRoutes: Readonly<Record<string, CommandRoute>> = {
  OpenTicket: route,
  TouchTicket: route,
  CloseTicket: route,
};

/** A ticket command as the edge would build it. */
export const ticketCommand = (
  type: TicketCommand['type'],
  ticketId: string,
  metadata: Partial<CommandMetadata> & Pick<CommandMetadata, 'commandId'>,
): Command => ({
  type,
  data: type === 'OpenTicket' ? { ticketId, title: `ticket ${ticketId}` } : { ticketId },
  metadata: { now: '2026-11-22T02:00:00.000Z', actor: 'U0TESTER', ...metadata },
});

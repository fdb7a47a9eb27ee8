import { slackInputOf } from '../../handlers/middleware/slackInput.ts';
import { commandMetadata } from '../../src/application/inbox.ts';
import { ValidationError } from '../../src/core/errors.ts';
import { nonEmptyVariable, urlVariable } from '../../src/lifecycles/config.ts';
import { defineLifecycle } from '../../src/lifecycles/lifecycle.ts';
import type { LifecyclePorts, PortDirectory } from '../../src/lifecycles/ports.ts';
import type { Processor } from '../../src/processors/runner.ts';
import { mrkdwn } from '../../src/slack/blocks/format.ts';
import type { ParkedNotice } from '../../src/slack/parkedNotices.reactor.ts';
import { ticketCommand, ticketRoutes } from './ticketLifecycle.ts';

/**
 * The ticket lifecycle (ticketLifecycle.ts) as a lifecycle module, to test the module interface
 * with a second real module beside incidents: a configuration slice (TICKETS_TOKEN switches it on),
 * `/ticket open|touch|close <id>`, its routes, an App Home section, a refusal text, an enrich step
 * that stamps the command, and whatever ports the test asks it to offer.
 */
export type TicketsOptions = Readonly<{
  provides?: Partial<LifecyclePorts>;
  /**
   * Processors (`ticket-fragile-<n>`, one per id here) that give up at once (a permanent error,
   * so the runner parks it) on every touch of a ticket whose id starts with `BROKEN`: a real park.
   */
  fragile?: readonly string[];
  /**
   * Says whom to tell when an event of a `ticket-` stream is parked (issue 18): the ticket's
   * opener by DM, and `channel` when given. Without it, nobody.
   */
  parkedNotices?: Readonly<{ channel?: string }>;
}>;
export type TicketsApi = Readonly<{ ports: PortDirectory; token: string }>;

const VERBS: Readonly<Record<string, Parameters<typeof ticketCommand>[0]>> = {
  open: 'OpenTicket',
  touch: 'TouchTicket',
  close: 'CloseTicket',
};

export const tickets = defineLifecycle({
  name: 'tickets',
  title: 'Tickets',
  titleIsPlural: true,
  slashCommands: ['/ticket'],
  config: {
    variables: {
      TICKETS_TOKEN: {
        purpose: 'ticket service token (tickets lifecycle)',
        secret: true,
        schema: nonEmptyVariable,
      },
      TICKETS_URL: { purpose: 'ticket service; default https://tickets.example', schema: urlVariable },
    },
    credentials: ['TICKETS_TOKEN'],
    read: (v) => ({
      token: v.required('TICKETS_TOKEN'),
      url: v.optional('TICKETS_URL') ?? 'https://tickets.example',
    }),
  },
  create: (config: { token: string; url: string }, deps, options: TicketsOptions | undefined) => ({
    routes: ticketRoutes,
    listeners: (app, edge) => {
      app.command('/ticket', async ({ command, ack, context }) => {
        const input = slackInputOf(context);
        const [verb = '', id = ''] = command.text.trim().split(/\s+/);
        const type = VERBS[verb];
        if (!type || !id) {
          await ack({ response_type: 'ephemeral', text: 'Usage: /ticket open|touch|close <id>' });
          return;
        }
        await edge.inbox.accept({ input, commands: [ticketCommand(type, id, commandMetadata(input))] });
        await ack();
      });
    },
    home: {
      render: async (user) => [{ type: 'section', text: mrkdwn(`*Tickets* of <@${user}>`) }],
    },
    enrich: async (command) =>
      command.type === 'OpenTicket'
        ? { ...command, data: { ...command.data, title: `[${config.token}] ${String(command.data.title)}` } }
        : command,
    rejectionText: (r) =>
      r.code === 'SB_ILLEGAL_STATE' ? { text: `:ticket: ${r.commandType} refused` } : undefined,
    ...(options?.provides ? { provides: options.provides } : {}),
    processors: (options?.fragile ?? []).map(
      (n): Processor => ({
        id: `ticket-fragile-${n}`,
        filter: { streamPrefixes: ['ticket-'], eventTypes: ['TicketTouched'] },
        async handle(event) {
          if (event.streamId.startsWith('ticket-BROKEN')) {
            throw new ValidationError(`ticket ${event.streamId} cannot be touched by fragile ${n}`);
          }
        },
      }),
    ),
    ...(options?.parkedNotices
      ? {
          parkedNotices: {
            streamPrefixes: ['ticket-'],
            noticesFor: async (parked, ctx) => {
              const history = await ctx.store.readStream(parked.streamId);
              const opened = history.find((e) => e.type === 'TicketOpened')?.data as
                | { ticketId?: string; by?: string }
                | undefined;
              const about = `your ticket ${opened?.ticketId ?? ''}`.trim();
              const text = `Switchboard could not finish updating ${about}; what you see about it may be out of date.`;
              const out: ParkedNotice[] = [];
              if (opened?.by) out.push({ user: opened.by, text });
              const channel = options.parkedNotices?.channel;
              if (channel) out.push({ channel, text: `Switchboard could not finish updating a ticket.` });
              return out;
            },
          },
        }
      : {}),
    api: { ports: deps.ports, token: config.token },
  }),
});

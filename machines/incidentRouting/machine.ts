import { assign, setup } from 'xstate';
import type { IncidentRoutingEvent } from './events.ts';

export type IncidentRoutingContext = Readonly<{
  serviceName: string | null;
  channels: readonly string[];
}>;

/** One state: the set of channels. Guards keep a repeated fact from changing it. */
export const incidentRoutingMachine = setup({
  types: { context: {} as IncidentRoutingContext, events: {} as IncidentRoutingEvent },
  guards: {
    notSubscribed: ({ context, event }) => !context.channels.includes(event.data.channel),
    subscribed: ({ context, event }) => context.channels.includes(event.data.channel),
  },
  actions: {
    add: assign(({ context, event }) =>
      event.type === 'IncidentChannelSubscribed'
        ? { channels: [...context.channels, event.data.channel], serviceName: event.data.serviceName }
        : {},
    ),
    remove: assign(({ context, event }) => ({
      channels: context.channels.filter((c) => c !== event.data.channel),
    })),
  },
}).createMachine({
  id: 'incidentRouting',
  initial: 'active',
  context: { serviceName: null, channels: [] },
  states: {
    active: {
      on: {
        IncidentChannelSubscribed: { guard: 'notSubscribed', actions: 'add' },
        IncidentChannelUnsubscribed: { guard: 'subscribed', actions: 'remove' },
      },
    },
  },
});

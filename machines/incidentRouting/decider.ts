import type { SnapshotFrom } from 'xstate';
import { DecisionRejected, machineDecider } from '../shared/machineDecider.ts';
import { exhaustive } from '../shared/messages.ts';
import { type IncidentRoutingCommand, incidentRoutingCommandDataSchemas } from './commands.ts';
import { type IncidentRoutingEvent, incidentRoutingEventDataSchemas } from './events.ts';
import { incidentRoutingMachine } from './machine.ts';

export type IncidentRoutingState = SnapshotFrom<typeof incidentRoutingMachine>;

/** `DecisionRejected.details.reason` of a routing refusal. */
export type IncidentRoutingRejectionReason = 'already_subscribed' | 'not_subscribed';

const serviceLabel = (name: string | null, id: string): string => (name ? `“${name}”` : id);

const toEvents = (command: IncidentRoutingCommand, state: IncidentRoutingState): IncidentRoutingEvent[] => {
  const { service, channel, by } = command.data;
  const at = command.metadata.now;
  const subscribed = state.context.channels.includes(channel);
  const what = command.data.kind === 'stakeholders' ? 'status updates' : 'cards';
  switch (command.type) {
    case 'SubscribeChannelToIncidents':
      if (subscribed) {
        throw new DecisionRejected(
          `This channel already gets the ${what} of ${serviceLabel(service.name, service.id)} incidents.`,
          { reason: 'already_subscribed', serviceId: service.id, channel },
        );
      }
      return [
        {
          type: 'IncidentChannelSubscribed',
          data: { serviceId: service.id, serviceName: service.name, channel, by, at },
        },
      ];
    case 'UnsubscribeChannelFromIncidents':
      if (!subscribed) {
        throw new DecisionRejected(
          `This channel is not subscribed to ${command.data.kind === 'stakeholders' ? 'the status updates of ' : ''}${serviceLabel(service.name, service.id)} incidents.`,
          { reason: 'not_subscribed', serviceId: service.id, channel },
        );
      }
      return [{ type: 'IncidentChannelUnsubscribed', data: { serviceId: service.id, channel, by, at } }];
    default:
      return exhaustive(command, 'incident routing command');
  }
};

/**
 * Channel subscriptions of one service (`/incident subscribe <service>`): subscribing twice or
 * unsubscribing a channel that is not subscribed is refused with a reason the user reads.
 *
 * @example
 * incidentRoutingDecider.decide(subscribe, state); // [IncidentChannelSubscribed]
 */
export const incidentRoutingDecider = machineDecider<
  typeof incidentRoutingMachine,
  IncidentRoutingCommand,
  IncidentRoutingEvent
>({
  machine: incidentRoutingMachine,
  toEvents,
  events: { schemas: incidentRoutingEventDataSchemas },
  commands: incidentRoutingCommandDataSchemas,
});

import type { Event } from '../shared/messages.ts';

/**
 * Which Slack channels get a card for each new incident of an incident-service service
 * (`/incident subscribe <service>` in a channel). One stream per service: see streams.ts.
 */
export type IncidentChannelSubscribed = Event<
  'IncidentChannelSubscribed',
  Readonly<{ serviceId: string; serviceName: string | null; channel: string; by: string; at: string }>
>;
export type IncidentChannelUnsubscribed = Event<
  'IncidentChannelUnsubscribed',
  Readonly<{ serviceId: string; channel: string; by: string; at: string }>
>;

export type IncidentRoutingEvent = IncidentChannelSubscribed | IncidentChannelUnsubscribed;

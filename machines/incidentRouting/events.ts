import { z } from 'zod';
import type { Event } from '../shared/messages.ts';

/**
 * Which Slack channels get a card for each new incident of an incident-service service
 * (`/incident subscribe <service>` in a channel). One stream per service: see streams.ts.
 * The schemas are the source of the event types and check every stored event when it is folded.
 */
export const incidentRoutingEventDataSchemas = {
  IncidentChannelSubscribed: z.object({
    serviceId: z.string().min(1),
    serviceName: z.string().nullable(),
    channel: z.string().min(1),
    by: z.string().min(1),
    at: z.string().min(1),
  }),
  IncidentChannelUnsubscribed: z.object({
    serviceId: z.string().min(1),
    channel: z.string().min(1),
    by: z.string().min(1),
    at: z.string().min(1),
  }),
} as const;

type DataOf<T extends keyof typeof incidentRoutingEventDataSchemas> = z.infer<
  (typeof incidentRoutingEventDataSchemas)[T]
>;

export type IncidentChannelSubscribed = Event<
  'IncidentChannelSubscribed',
  DataOf<'IncidentChannelSubscribed'>
>;
export type IncidentChannelUnsubscribed = Event<
  'IncidentChannelUnsubscribed',
  DataOf<'IncidentChannelUnsubscribed'>
>;

export type IncidentRoutingEvent = IncidentChannelSubscribed | IncidentChannelUnsubscribed;

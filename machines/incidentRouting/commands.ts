import type { Command } from '../shared/messages.ts';
import type { ServiceRef } from '../shared/serviceRef.ts';

/** `by` is the Slack user; the service is resolved (id and name) before dispatch. */
export type SubscribeChannelToIncidents = Command<
  'SubscribeChannelToIncidents',
  Readonly<{ service: ServiceRef; channel: string; by: string }>
>;
export type UnsubscribeChannelFromIncidents = Command<
  'UnsubscribeChannelFromIncidents',
  Readonly<{ service: ServiceRef; channel: string; by: string }>
>;

export type IncidentRoutingCommand = SubscribeChannelToIncidents | UnsubscribeChannelFromIncidents;

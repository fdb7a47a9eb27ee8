import { z } from 'zod';
import type { Command } from '../shared/messages.ts';
import { serviceRefSchema } from '../shared/serviceRef.ts';

/** `by` is the Slack user; the service is resolved (id and name) before dispatch. */
const subscriptionSchema = z.object({
  service: serviceRefSchema,
  channel: z.string().min(1),
  by: z.string().min(1),
  /**
   * Issue 22 item 3: `stakeholders` subscribes the channel to the service's status updates (its
   * own stream, see src/incidents/routes.ts) instead of its cards. Absent: cards.
   */
  kind: z.enum(['cards', 'stakeholders']).optional(),
});

export type SubscribeChannelToIncidents = Command<
  'SubscribeChannelToIncidents',
  z.infer<typeof subscriptionSchema>
>;
export type UnsubscribeChannelFromIncidents = Command<
  'UnsubscribeChannelFromIncidents',
  z.infer<typeof subscriptionSchema>
>;

export type IncidentRoutingCommand = SubscribeChannelToIncidents | UnsubscribeChannelFromIncidents;

/** The schema of each routing command's `data`: the command bus checks it before the decider. */
export const incidentRoutingCommandDataSchemas = {
  SubscribeChannelToIncidents: subscriptionSchema,
  UnsubscribeChannelFromIncidents: subscriptionSchema,
} as const satisfies Readonly<Record<IncidentRoutingCommand['type'], z.ZodType>>;

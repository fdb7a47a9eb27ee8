import { commandMetadata, type SlackInput } from '../../src/application/inbox.ts';
import type { Command } from '../../src/core/messages.ts';

/**
 * The command `/incident channel <n>` and the card's "Create channel" record (issue 22 item 7):
 * who asks is the input's actor, never a payload's.
 */
export const incidentChannelCommand = (input: SlackInput, streamId: string): Command => {
  const metadata = commandMetadata(input, 0);
  return { type: 'CreateIncidentChannel', data: { streamId, by: metadata.actor }, metadata };
};

import type { Actor } from '../../../machines/incident/events.ts';
import { escapeMrkdwn, mention } from '../../slack/blocks/format.ts';

/** Who did it: a mention when we know the Slack user, else the incident-service name. */
export const actorText = (actor: Actor | null | undefined): string => {
  if (actor?.slackUserId) return mention(actor.slackUserId);
  if (actor?.name) return escapeMrkdwn(actor.name);
  if (actor?.upstreamUserId) return escapeMrkdwn(actor.upstreamUserId);
  return 'someone outside Slack';
};

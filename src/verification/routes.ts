import { verificationCommandDataSchemas } from '../../machines/verification/commands.ts';
import { verificationDecider } from '../../machines/verification/decider.ts';
import { verificationStreamId } from '../../machines/verification/streams.ts';
import type { CommandRoute } from '../application/dispatch.ts';
import { ValidationError } from '../core/errors.ts';
import type { Command } from '../core/messages.ts';

/**
 * Where each verification command goes: the stream of the person it names (`data.slackUserId`).
 * Who may act on it is the decider's business (a Slack command's actor must be that person).
 */
const streamOf = (command: Command): string => {
  const user = (command.data as { slackUserId?: unknown }).slackUserId;
  if (typeof user !== 'string') {
    throw new ValidationError(`${command.type} names no person`, { details: { reason: 'no_person' } });
  }
  try {
    return verificationStreamId(user);
  } catch {
    throw new ValidationError(`${command.type} names no Slack user`, { details: { reason: 'no_person' } });
  }
};

const route: CommandRoute = {
  decider: verificationDecider as unknown as CommandRoute['decider'],
  streamId: streamOf,
};

export const verificationRoutes: Readonly<Record<string, CommandRoute>> = Object.fromEntries(
  Object.keys(verificationCommandDataSchemas).map((type) => [type, route]),
);

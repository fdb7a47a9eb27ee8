import type { TimeOffCommand, TimeOffCommandType } from '../../machines/timeOff/commands.ts';
import { commandMetadata, type SlackInput } from '../../src/application/inbox.ts';
import type { CommandMetadata } from '../../src/core/messages.ts';
import type { SlackMessage } from '../../src/slack/blocks/format.ts';

/** An ephemeral answer body (slash command ack, response_url post). */
export type Ephemeral = Readonly<{
  response_type: 'ephemeral';
  text: string;
  blocks?: SlackMessage['blocks'];
}>;

export const ephemeral = (m: SlackMessage | string): Ephemeral =>
  typeof m === 'string' ? { response_type: 'ephemeral', text: m } : { response_type: 'ephemeral', ...m };

type Request = {
  [T in TimeOffCommandType]: Readonly<{ type: T; data: Extract<TimeOffCommand, { type: T }>['data'] }>;
}[TimeOffCommandType];

/** The typed command recorded from a Slack input (deterministic id from the input; actor = the Slack user). */
export const timeOffCommand = (
  input: SlackInput,
  request: Request,
  overrides: Partial<CommandMetadata> = {},
): TimeOffCommand =>
  ({
    type: request.type,
    data: request.data,
    metadata: commandMetadata(input, 0, overrides),
  }) as TimeOffCommand;

/** The command id the input's first command gets: a new request's id (a UUID). */
export const requestIdOf = (input: SlackInput): string => commandMetadata(input, 0).commandId;

export { type PolicyTypes, within } from '../../src/timeOff/policyTypes.ts';

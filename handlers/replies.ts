import type { CommandOwner } from '../src/lifecycles/compose.ts';
import { escapeMrkdwn } from '../src/slack/blocks/format.ts';

/**
 * Texts of the ephemeral answers the edge gives when no lifecycle handles an input, when a
 * lifecycle is switched off, when an input does not parse, and when it could not be recorded.
 * Lifecycles use these too, so users see one voice.
 */

/** "`/a help`, `/b help` or `/c help`". */
const helpList = (commands: readonly string[]): string => {
  const items = commands.map((c) => `\`${c} help\``);
  return items.length <= 1 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} or ${items.at(-1)}`;
};

export type EphemeralReply = Readonly<{ response_type: 'ephemeral'; text: string }>;

const ephemeral = (text: string): EphemeralReply => ({ response_type: 'ephemeral', text });

export const replies = {
  /** The command belongs to a lifecycle whose upstream is not configured. */
  lifecycleOff: (command: string, owner: Pick<CommandOwner, 'title' | 'titleIsPlural'>): EphemeralReply =>
    ephemeral(
      `${owner.title} ${owner.titleIsPlural ? 'are' : 'is'} switched off in this Switchboard, so \`${command}\` can't do anything yet. ` +
        'An admin can switch it on by configuring its upstream service (see the README, "Configuration").',
    ),
  /** Nothing handles this command (yet); `helpCommands` are the lifecycles' main commands. */
  unknownCommand: (command: string, helpCommands: readonly string[] = []): EphemeralReply =>
    ephemeral(
      `Switchboard doesn't know \`${command}\` yet.${helpCommands.length ? ` Try ${helpList(helpCommands)}.` : ''}`,
    ),
  /**
   * The input did not parse; `usage` says what would. `message` is mrkdwn with anything the user
   * typed already escaped (parse.ts); `usage` is escaped here (`<id or number>` is no link).
   */
  invalid: (message: string, usage?: string): EphemeralReply =>
    ephemeral(`${message}${usage ? `\nUsage: ${escapeMrkdwn(usage)}` : ''}`),
  /** The store could not take the input: nothing happened, and the user should try again. */
  notRecorded: (): EphemeralReply =>
    ephemeral(
      "Switchboard couldn't record that just now, so nothing happened. Please try again in a minute.",
    ),
} as const;

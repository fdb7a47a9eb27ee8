import type { LifecycleSwitches } from '../src/config.ts';

/**
 * Texts of the ephemeral answers the edge gives when no lifecycle handles an input, when a
 * lifecycle is switched off, when an input does not parse, and when it could not be recorded.
 * Lifecycles use these too, so users see one voice.
 */

/** Which lifecycle owns each slash command (manifest.yml declares them). */
export const COMMAND_LIFECYCLE: Readonly<Record<string, keyof LifecycleSwitches>> = {
  '/incident': 'incidents',
  '/oncall': 'incidents',
  '/verify': 'verification',
  '/timeoff': 'timeOff',
  '/whosout': 'timeOff',
};

const LIFECYCLE_NAMES: Readonly<Record<keyof LifecycleSwitches, string>> = {
  incidents: 'Incidents',
  verification: 'Phone verification',
  timeOff: 'Time off',
};

export type EphemeralReply = Readonly<{ response_type: 'ephemeral'; text: string }>;

const ephemeral = (text: string): EphemeralReply => ({ response_type: 'ephemeral', text });

export const replies = {
  /** The command belongs to a lifecycle whose upstream is not configured. */
  lifecycleOff: (command: string, lifecycle: keyof LifecycleSwitches): EphemeralReply =>
    ephemeral(
      `${LIFECYCLE_NAMES[lifecycle]} ${lifecycle === 'timeOff' ? 'is' : 'are'} switched off in this Switchboard, so \`${command}\` can't do anything yet. ` +
        'An admin can switch it on by configuring its upstream service (see the README, "Configuration").',
    ),
  /** Nothing handles this command (yet). */
  unknownCommand: (command: string): EphemeralReply =>
    ephemeral(
      `Switchboard doesn't know \`${command}\` yet. Try \`/incident help\`, \`/verify help\` or \`/timeoff help\`.`,
    ),
  /** The input did not parse; `usage` says what would. */
  invalid: (message: string, usage?: string): EphemeralReply =>
    ephemeral(`${message}${usage ? `\nUsage: ${usage}` : ''}`),
  /** The store could not take the input: nothing happened, and the user should try again. */
  notRecorded: (): EphemeralReply =>
    ephemeral(
      "Switchboard couldn't record that just now, so nothing happened. Please try again in a minute.",
    ),
} as const;

import { isChatOpsError } from '../core/errors.ts';
import type { ReaderZones, SlackProfileZone } from '../slack/time.ts';
import type { SwitchboardWebClient } from '../slack/webClient.ts';
import type { SlackUserProfile } from './identity.ts';

/**
 * The two Slack lookups an identity resolver needs, on the Web API client: a user's profile
 * (`users.info`, needs `users:read` and `users:read.email`) and the user with an email
 * (`users.lookupByEmail`; Slack's `users_not_found` means nobody, not a failure).
 *
 * @example
 * const identity = createIdentityResolver({ ...slackUserLookups(slack), directory, system, … });
 */
export type SlackUserLookups = Readonly<{
  slackUser(slackUserId: string): Promise<SlackUserProfile>;
  slackUserByEmail(email: string): Promise<string | null>;
}>;

export const slackUserLookups = (
  slack: Pick<SwitchboardWebClient, 'users'>,
  /** Told each profile looked up, so the reader's zone costs no second `users.info` (issue 19). */
  zones?: Pick<ReaderZones, 'remember'>,
): SlackUserLookups => ({
  slackUserByEmail: async (email) => {
    try {
      return (await slack.users.lookupByEmail({ email })).user?.id ?? null;
    } catch (e) {
      if (isChatOpsError(e) && e.details.slackError === 'users_not_found') return null;
      throw e;
    }
  },
  slackUser: async (user) => {
    const r = await slack.users.info({ user });
    zones?.remember(user, r.user as SlackProfileZone | undefined);
    return {
      email: r.user?.profile?.email ?? null,
      name: r.user?.real_name ?? r.user?.profile?.real_name ?? null,
      deleted: r.user?.deleted === true,
      isBot: r.user?.is_bot === true,
    };
  },
});

import { ChatOpsError } from '../core/errors.ts';
import { shouldRetry } from '../processors/retryPolicy.ts';
import type { PeopleDirectory, PersonLink } from './directory.ts';
import type { PersonSystem } from './events.ts';

/**
 * Who a Slack user is in another system, found by email: Slack user → email (`users.info`) → the
 * system's user with exactly that email (`findUpstreamUser`). The answer is recorded in the people
 * directory (a `PersonLinked` event in `identity-<slackUserId>`) and looked up again once it is
 * older than `refreshAfterMs` (24 h). Only positive answers are recorded: a user an admin adds
 * later works on their next click. The incident lifecycle resolves into the incident service with
 * it (`system: 'incidents'`); time off will resolve into HR the same way (`system: 'hr'`).
 *
 * The email recorded is what goes in `From` on every incident-service write the user asks for; it
 * never comes from anything the user typed or clicked, so nobody can act as someone else by
 * editing a payload.
 *
 * @example
 * const identity = createIdentityResolver({ directory: people, system: 'incidents', systemName: 'the incident service', slackUser, findUpstreamUser, now: () => clock.now() });
 * const asUser = await identity.resolve('U0ALICE'); // { id: 'PUSR001', email: 'ana@…', name: 'Ana Silva' }
 */

/** What the resolver needs from Slack (`users.info`), adapted at the composition root. */
export type SlackUserProfile = Readonly<{
  email: string | null;
  name: string | null;
  deleted: boolean;
  isBot: boolean;
}>;

/** A person as the other system knows them. */
export type UpstreamPerson = Readonly<{ id: string; name: string; email: string }>;

/** Who a Slack user acts as in the other system (`email` is what goes in `From`). */
export type ResolvedPerson = Readonly<{ id: string; email: string; name: string | null }>;

export type IdentityResolverDeps = Readonly<{
  /** Where links are recorded and read (the shared people directory). */
  directory: Pick<PeopleDirectory, 'linkOf' | 'link'>;
  /** The system this resolver finds people in. */
  system: PersonSystem;
  /** How users read that system in refusals: "the incident service". */
  systemName: string;
  /** `users.info` → profile; throws coded errors (SB_UPSTREAM_*) on failure. */
  slackUser(slackUserId: string): Promise<SlackUserProfile>;
  /** The system's user whose email is exactly this one, or undefined. */
  findUpstreamUser(email: string): Promise<UpstreamPerson | undefined>;
  now(): Date;
  /** Links older than this are looked up again. Default 24 h. */
  refreshAfterMs?: number;
  /** The other direction, for mentioning people the system names (optional). */
  upstreamUser?(upstreamUserId: string): Promise<UpstreamPerson>;
  /** `users.lookupByEmail` → the Slack user id, or null when nobody in Slack has that email. */
  slackUserByEmail?(email: string): Promise<string | null>;
}>;

/** Whose identity is being resolved, for the wording of a refusal. */
export type Subject = Readonly<{ kind: 'actor' } | { kind: 'target'; slackUserId: string }>;

export type IdentityResolver = Readonly<{
  /**
   * The system's user a Slack user acts as. Throws ChatOpsError SB_UNMAPPED_USER (a refusal the
   * user reads) when there is none, and the upstream's coded error when a lookup failed and
   * nothing usable is recorded.
   */
  resolve(slackUserId: string, subject?: Subject): Promise<ResolvedPerson>;
  /** The last recorded link, without any lookup. */
  cached(slackUserId: string): Promise<PersonLink | undefined>;
  /**
   * The Slack user with the same email as one of the system's users (someone acting in the
   * vendor's web app, an assignee), recorded as a link like a forward lookup; null when there is
   * none or the lookup failed (not asked again for a while). Never throws.
   */
  slackUserFor(upstreamUserId: string): Promise<string | null>;
}>;

const DAY_MS = 24 * 60 * 60 * 1000;
const SLACK_USER_ID = /^[UW][A-Z0-9]{2,}$/;

const whose = (subject: Subject): { your: string; you: string } =>
  subject.kind === 'actor'
    ? { your: 'Your', you: 'you' }
    : { your: `<@${subject.slackUserId}>'s`, you: `<@${subject.slackUserId}>` };

const unmapped = (message: string, details: Record<string, unknown>): ChatOpsError =>
  new ChatOpsError('SB_UNMAPPED_USER', message, { details });

export const createIdentityResolver = (deps: IdentityResolverDeps): IdentityResolver => {
  const refreshAfterMs = deps.refreshAfterMs ?? DAY_MS;
  const { directory, system, systemName } = deps;
  /** The system's users with no Slack user (or whose lookup failed), until when not to ask again. */
  const noSlackUser = new Map<string, number>();

  const cached = (slackUserId: string): Promise<PersonLink | undefined> =>
    directory.linkOf(slackUserId, system);

  const record = (slackUserId: string, user: UpstreamPerson): Promise<PersonLink> =>
    directory.link(slackUserId, { system, externalId: user.id, email: user.email, name: user.name });

  const lookUp = async (slackUserId: string, subject: Subject): Promise<PersonLink> => {
    const w = whose(subject);
    const profile = await deps.slackUser(slackUserId);
    if (profile.deleted || profile.isBot) {
      throw unmapped(`${w.your} Slack account can't act in ${systemName} (it is a bot or deactivated).`, {
        reason: profile.isBot ? 'bot' : 'deactivated',
        slackUserId,
      });
    }
    const email = profile.email?.trim();
    if (!email) {
      throw unmapped(
        `Switchboard can't see ${subject.kind === 'actor' ? 'your' : `${w.you}'s`} Slack email address, so it can't find ${w.you} in ${systemName}. Ask an admin to check the app's users:read.email scope.`,
        { reason: 'no_email', slackUserId },
      );
    }
    const user = await deps.findUpstreamUser(email);
    if (!user) {
      throw unmapped(
        `${w.your} Slack email ${email} has no user in ${systemName}; ask an admin to add it (or to use the same email in both).`,
        { reason: 'no_upstream_user', slackUserId, email },
      );
    }
    return record(slackUserId, user);
  };

  return {
    cached,
    async slackUserFor(upstreamUserId) {
      const now = deps.now().getTime();
      if ((noSlackUser.get(upstreamUserId) ?? 0) > now || !deps.upstreamUser || !deps.slackUserByEmail)
        return null;
      try {
        const user = await deps.upstreamUser(upstreamUserId);
        const slackUserId = await deps.slackUserByEmail(user.email);
        if (!slackUserId) {
          noSlackUser.set(upstreamUserId, now + 60 * 60_000);
          return null;
        }
        await record(slackUserId, user);
        return slackUserId;
      } catch {
        noSlackUser.set(upstreamUserId, now + 5 * 60_000);
        return null;
      }
    },
    async resolve(slackUserId, subject = { kind: 'actor' }) {
      if (!SLACK_USER_ID.test(slackUserId)) {
        throw unmapped(`${slackUserId} is not a Slack user Switchboard can act for.`, {
          reason: 'not_a_slack_user',
          slackUserId,
        });
      }
      // A link without an email cannot sign a write (`From`): look the person up again.
      const hit = await cached(slackUserId);
      const usable = hit?.email ? hit : undefined;
      const fresh = usable && deps.now().getTime() - Date.parse(usable.at) < refreshAfterMs;
      let link = fresh ? usable : undefined;
      if (!link) {
        try {
          link = await lookUp(slackUserId, subject);
        } catch (error) {
          // A stale link beats no answer while Slack or the other system is down.
          if (usable && shouldRetry(error)) link = usable;
          else throw error;
        }
      }
      return { id: link.externalId, email: link.email ?? '', name: link.name };
    },
  };
};

import type { UpstreamUser } from '../../machines/incident/events.ts';
import { ChatOpsError } from '../core/errors.ts';
import { uuidv5 } from '../core/ids.ts';
import type { JsonObject } from '../core/messages.ts';
import type { EventStore } from '../eventStore/eventStore.ts';
import { shouldRetry } from '../processors/retryPolicy.ts';

/**
 * Who a Slack user is in the incident service (design.md "Identity"): Slack user → email
 * (`users.info`) → incident-service user with exactly that email (`findUserByEmail`). The answer is
 * cached as an event, `SlackUserMapped`, in `identity-<slackUserId>`, and looked up again once it is
 * older than `refreshAfterMs` (24 h). Only positive answers are cached: a user an admin adds later
 * works on their next click.
 *
 * The email in the cache is what goes in `From` on every write the user asks for; it never comes
 * from anything the user typed or clicked (platform-facts T11, X8).
 *
 * @example
 * const identity = createIdentityResolver({ store, slackUsers, findUpstreamUser, now: () => clock.now() });
 * const asUser = await identity.resolve('U0ALICE'); // { id: 'PUSR001', email: 'ana@…', name: 'Ana Silva' }
 */

export const IDENTITY_STREAM_PREFIX = 'identity-';
export const SLACK_USER_MAPPED = 'SlackUserMapped';
export const identityStreamId = (slackUserId: string): string => `${IDENTITY_STREAM_PREFIX}${slackUserId}`;

export type SlackUserMappedData = Readonly<{
  slackUserId: string;
  email: string;
  pagerDutyUserId: string;
  name: string | null;
  at: string;
}>;

/** What the resolver needs from Slack (`users.info`), adapted at the composition root. */
export type SlackUserProfile = Readonly<{
  email: string | null;
  name: string | null;
  deleted: boolean;
  isBot: boolean;
}>;

export type IdentityResolverDeps = Readonly<{
  store: EventStore;
  /** `users.info` → profile; throws coded errors (SB_UPSTREAM_*) on failure. */
  slackUser(slackUserId: string): Promise<SlackUserProfile>;
  /** The incident-service user whose email is exactly this one, or undefined. */
  findUpstreamUser(email: string): Promise<{ id: string; name: string; email: string } | undefined>;
  now(): Date;
  /** Cached mappings older than this are looked up again. Default 24 h. */
  refreshAfterMs?: number;
  /** The other direction, for mentioning people the incident service names (optional). */
  upstreamUser?(upstreamUserId: string): Promise<{ id: string; name: string; email: string }>;
  /** `users.lookupByEmail` → the Slack user id, or null when nobody in Slack has that email. */
  slackUserByEmail?(email: string): Promise<string | null>;
}>;

/** Whose identity is being resolved, for the wording of a refusal. */
export type Subject = Readonly<{ kind: 'actor' } | { kind: 'target'; slackUserId: string }>;

export type IdentityResolver = Readonly<{
  /**
   * The incident-service user a Slack user acts as. Throws ChatOpsError SB_UNMAPPED_USER (a
   * refusal the user reads) when there is none, and the upstream's coded error when a lookup
   * failed and nothing usable is cached.
   */
  resolve(slackUserId: string, subject?: Subject): Promise<UpstreamUser>;
  /** The last cached mapping, without any lookup. */
  cached(slackUserId: string): Promise<SlackUserMappedData | undefined>;
  /**
   * The Slack user with the same email as an incident-service user (someone acting in the web
   * app, an assignee), recorded as `SlackUserMapped` like a forward lookup; null when there is
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
  /** Incident-service users with no Slack user (or whose lookup failed), until when not to ask again. */
  const noSlackUser = new Map<string, number>();

  const cached = async (slackUserId: string): Promise<SlackUserMappedData | undefined> => {
    const [last] = await deps.store.readStream(identityStreamId(slackUserId), {
      direction: 'backwards',
      maxCount: 1,
    });
    return last?.type === SLACK_USER_MAPPED ? (last.data as unknown as SlackUserMappedData) : undefined;
  };

  const record = async (data: SlackUserMappedData): Promise<void> => {
    await deps.store.appendToStream(identityStreamId(data.slackUserId), [
      {
        id: uuidv5(`identity:${data.slackUserId}:${data.pagerDutyUserId}:${data.at}`),
        type: SLACK_USER_MAPPED,
        data: data as unknown as JsonObject,
      },
    ]);
  };

  const lookUp = async (slackUserId: string, subject: Subject): Promise<SlackUserMappedData> => {
    const w = whose(subject);
    const profile = await deps.slackUser(slackUserId);
    if (profile.deleted || profile.isBot) {
      throw unmapped(
        `${w.your} Slack account can't act in the incident service (it is a bot or deactivated).`,
        {
          reason: profile.isBot ? 'bot' : 'deactivated',
          slackUserId,
        },
      );
    }
    const email = profile.email?.trim();
    if (!email) {
      throw unmapped(
        `Switchboard can't see ${subject.kind === 'actor' ? 'your' : `${w.you}'s`} Slack email address, so it can't find ${w.you} in the incident service. Ask an admin to check the app's users:read.email scope.`,
        { reason: 'no_email', slackUserId },
      );
    }
    const user = await deps.findUpstreamUser(email);
    if (!user) {
      throw unmapped(
        `${w.your} Slack email ${email} has no user in the incident service; ask an admin to add it (or to use the same email in both).`,
        { reason: 'no_upstream_user', slackUserId, email },
      );
    }
    const data: SlackUserMappedData = {
      slackUserId,
      email: user.email,
      pagerDutyUserId: user.id,
      name: user.name,
      at: deps.now().toISOString(),
    };
    await record(data);
    return data;
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
        await record({
          slackUserId,
          email: user.email,
          pagerDutyUserId: user.id,
          name: user.name,
          at: deps.now().toISOString(),
        });
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
      const hit = await cached(slackUserId);
      const fresh = hit && deps.now().getTime() - Date.parse(hit.at) < refreshAfterMs;
      let mapping = fresh ? hit : undefined;
      if (!mapping) {
        try {
          mapping = await lookUp(slackUserId, subject);
        } catch (error) {
          // A stale mapping beats no answer while Slack or the incident service is down.
          if (hit && shouldRetry(error)) mapping = hit;
          else throw error;
        }
      }
      return { id: mapping.pagerDutyUserId, email: mapping.email, name: mapping.name };
    },
  };
};

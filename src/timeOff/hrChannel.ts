import { isHrChannelApprover, type TimeOffPerson } from '../../machines/timeOff/events.ts';
import { hasCode } from '../core/errors.ts';
import type { Logger } from '../logger.ts';
import type { SwitchboardWebClient } from '../slack/webClient.ts';
import type { TimeOffPeople } from './people.ts';

/**
 * Issue 12: a request sent to the HR channel (`TIME_OFF_HR_CHANNEL`) may be decided by any member
 * of that channel but the requester. Membership is asked of Slack (`conversations.members`) at each
 * decision, never read from the click, and the member must be someone HR knows (HR is given their
 * id as approver). The enrich step (enrich.ts) vouches for a member on the command (`asHr`) and the
 * decider judges; the edge asks the same through the queries (queries.ts) before it opens a form.
 */

/** What Slack and HR say of someone deciding a request. */
export type HrChannelMembership =
  /** Not a request sent to the HR channel, or the requester themself (the decider refuses that). */
  | Readonly<{ kind: 'none' }>
  | Readonly<{ kind: 'member'; asHr: Readonly<{ channel: string; by: TimeOffPerson }> }>
  | Readonly<{ kind: 'notMember'; channel: string }>
  /** Slack did not list the members, or HR's directory did not answer for the member. */
  | Readonly<{ kind: 'unavailable'; what: 'members' | 'directory'; error: unknown }>
  /** A member HR does not know (SB_UNMAPPED_USER, saying what is missing). */
  | Readonly<{ kind: 'unknownToHr'; error: Error }>;

export type HrChannelDeps = Readonly<{
  /** The channel's members (`conversations.members`). */
  channelMembers(channel: string): Promise<readonly string[]>;
  people: Pick<TimeOffPeople, 'employee'>;
  logger: Logger;
}>;

/** The words of a refusal for the person (Slack or HR did not answer just now). */
export const MEMBERS_UNAVAILABLE =
  "Slack didn't say who is in the HR channel just now, so nothing was changed. Click again in a minute.";
export const DIRECTORY_UNAVAILABLE =
  "Switchboard couldn't look you up in HR's directory just now, so nothing was changed. Click again in a minute.";

export const hrChannelMembership = async (
  deps: HrChannelDeps,
  request: Readonly<{ approver: TimeOffPerson; requester: TimeOffPerson }>,
  clicker: string,
): Promise<HrChannelMembership> => {
  if (!isHrChannelApprover(request.approver) || clicker === request.requester.slackUserId) {
    return { kind: 'none' };
  }
  const channel = request.approver.slackUserId;
  let members: readonly string[];
  try {
    members = await deps.channelMembers(channel);
  } catch (error) {
    deps.logger.warn({ err: error, channel }, 'could not list the HR channel members');
    return { kind: 'unavailable', what: 'members', error };
  }
  if (!members.includes(clicker)) return { kind: 'notMember', channel };
  try {
    return { kind: 'member', asHr: { channel, by: await deps.people.employee(clicker) } };
  } catch (error) {
    return hasCode(error, 'SB_UNMAPPED_USER')
      ? { kind: 'unknownToHr', error }
      : { kind: 'unavailable', what: 'directory', error };
  }
};

/** Every member of a channel, page by page (`conversations.members`, at most 50 pages of 1,000). */
export const slackChannelMembers =
  (slack: SwitchboardWebClient) =>
  async (channel: string): Promise<readonly string[]> => {
    const members: string[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 50; page++) {
      const r = await slack.conversations.members({
        channel,
        limit: 1000,
        ...(cursor ? { cursor } : {}),
      });
      members.push(...(r.members ?? []));
      cursor = r.response_metadata?.next_cursor || undefined;
      if (!cursor) break;
    }
    return members;
  };

import type { TimeOffCommandOf } from '../../machines/timeOff/commands.ts';
import { timeOffDecider } from '../../machines/timeOff/decider.ts';
import { parseTimeOffRequestId, timeOffStreamId } from '../../machines/timeOff/streams.ts';
import { foldHistory } from '../application/fold.ts';
import { IllegalStateError } from '../core/errors.ts';
import type { Command } from '../core/messages.ts';
import type { Enrich } from '../lifecycles/lifecycle.ts';
import type { Absences } from '../lifecycles/ports.ts';
import { shouldRetry } from '../processors/retryPolicy.ts';
import type { ProcessorContext } from '../processors/runner.ts';
import { coverAway } from './coverRanking.ts';
import {
  DIRECTORY_UNAVAILABLE,
  type HrChannelDeps,
  hrChannelMembership,
  MEMBERS_UNAVAILABLE,
} from './hrChannel.ts';
import type { TimeOffReadModel } from './readModel.projection.ts';
import { calendarDayOf, ownLeaveOverlapping } from './standing.ts';

/**
 * The inbox dispatcher's enrich step for time-off commands: what the edge could not know within
 * Slack's 3 s, filled in right before Approve and Deny reach the decider, which judges.
 *
 * - A request sent to the HR channel (issue 12): whether Slack says the clicking user is a member
 *   (`conversations.members`, asked at each decision) and who they are in HR → `asHr`; absent when
 *   they are not a member, so the decider refuses them. Whatever the edge recorded there is
 *   overwritten: membership never comes from a payload.
 * - "Approve and cover with …": whether the colleague picked is away during the shifts to cover
 *   now (the ranked choice was drawn earlier) → `cover.away`, which the decider refuses.
 *
 * - Issue 20: an ask (`RequestTimeOff`, `ResubmitTimeOff`): the requester's own leave it overlaps
 *   and their day now (src/timeOff/standing.ts) → `overlapping`, `calendarDay`, found again here
 *   with the read model caught up, so an ask recorded right after another overlapping one is
 *   refused by the decider even when the edge did not see the first yet.
 *
 * Refusals reach the clicker as an ephemeral reply (rejections.ts): a member HR does not know
 * (SB_UNMAPPED_USER, in words). A lookup that fails for a transient reason is thrown, so the runner
 * retries it; from the `giveUpAfter`-th delivery it becomes a refusal that says so, instead of the
 * input being parked and the person hearing nothing.
 *
 * @example
 * enrich: createTimeOffEnricher({ readModel, absences, hrChannel: { channelMembers, people, logger } }),
 */
export type TimeOffEnricherDeps = Readonly<{
  readModel: TimeOffReadModel;
  absences: Absences;
  hrChannel: HrChannelDeps;
  /** Delivery attempt from which transient lookup failures become refusals (default 4). */
  giveUpAfter?: number;
}>;

type Decision = TimeOffCommandOf<'ApproveTimeOff'> | TimeOffCommandOf<'DenyTimeOff'>;

type Ask = TimeOffCommandOf<'RequestTimeOff'> | TimeOffCommandOf<'ResubmitTimeOff'>;

const isAsk = (command: Command): command is Ask =>
  command.type === 'RequestTimeOff' || command.type === 'ResubmitTimeOff';

const isDecision = (command: Command): command is Decision =>
  command.type === 'ApproveTimeOff' || command.type === 'DenyTimeOff';

export const createTimeOffEnricher = (deps: TimeOffEnricherDeps): Enrich => {
  const giveUpAfter = deps.giveUpAfter ?? 4;

  /** Retried while the runner's delivery attempts last, then refused in `words`. */
  const unavailable = (ctx: ProcessorContext, error: unknown, words: string, reason: string): Error => {
    if (shouldRetry(error) && ctx.attempt < giveUpAfter)
      return error instanceof Error ? error : new Error(String(error));
    return new IllegalStateError(words, { cause: error, details: { reason } });
  };

  /** `asHr` for a member of the HR channel the request was sent to; undefined otherwise. */
  const asHrOf = async (command: Decision, ctx: ProcessorContext) => {
    const id = parseTimeOffRequestId(command.data.timeOffId);
    if (id === null) return undefined;
    const request = foldHistory(timeOffDecider, await ctx.store.readStream(timeOffStreamId(id))).context
      .request;
    if (!request) return undefined;
    const m = await hrChannelMembership(deps.hrChannel, request, command.metadata.actor);
    switch (m.kind) {
      case 'member':
        return m.asHr;
      case 'unknownToHr':
        throw m.error;
      case 'unavailable':
        throw m.what === 'members'
          ? unavailable(ctx, m.error, MEMBERS_UNAVAILABLE, 'members_unavailable')
          : unavailable(ctx, m.error, DIRECTORY_UNAVAILABLE, 'lookup_unavailable');
      default:
        return undefined;
    }
  };

  /** Issue 20: the ask's standing, found now (whatever the edge recorded is overwritten). */
  const withStanding = async (command: Ask, ctx: ProcessorContext): Promise<Ask> => {
    await deps.readModel.catchUp();
    const d = command.data;
    const stored =
      command.type === 'ResubmitTimeOff' ? deps.readModel.state(d.timeOffId)?.context.request : null;
    const requester = command.type === 'RequestTimeOff' ? command.data.requester : stored?.requester;
    if (!requester) return command;
    const zone = command.type === 'RequestTimeOff' ? command.data.zone : stored?.zone;
    const overlapping = ownLeaveOverlapping(deps.readModel, requester.hrId, d, d.timeOffId);
    const calendarDay = calendarDayOf(d, zone ?? 'UTC', ctx.now());
    return { ...command, data: { ...command.data, overlapping, calendarDay } } as Ask;
  };

  return async (command, ctx) => {
    if (isAsk(command)) return withStanding(command, ctx);
    if (!isDecision(command)) return command;
    const { asHr: _recorded, ...data } = command.data;
    const asHr = await asHrOf(command, ctx);
    const withHr = { ...data, ...(asHr ? { asHr } : {}) };
    if (command.type === 'DenyTimeOff') return { ...command, data: withHr };
    const cover = command.data.cover;
    if (!cover) return { ...command, data: withHr };
    const away = await coverAway(deps, command.data.timeOffId, cover.slackUserId);
    return { ...command, data: { ...withHr, cover: { slackUserId: cover.slackUserId, away } } };
  };
};

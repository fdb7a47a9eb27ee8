import type { OwnLeave } from '../../machines/timeOff/commands.ts';
import { decisionRefusal, resubmitRefusal, timeOffPhaseOf } from '../../machines/timeOff/decider.ts';
import { employeeById } from '../../machines/timeOff/directory.ts';
import type { TimeOffAsk, TimeOffPerson } from '../../machines/timeOff/events.ts';
import type { Clock } from '../core/clock.ts';
import type { Logger } from '../logger.ts';
import type { SlackMessage } from '../slack/blocks/format.ts';
import type { HiBobClient } from '../upstream/hibob.ts';
import { type BalanceRow, balanceMessage, timeOffStatusMessage, whosOutMessage } from './blocks/answers.ts';
import type { TimeOffView } from './blocks/timeOffView.ts';
import {
  DIRECTORY_UNAVAILABLE,
  type HrChannelDeps,
  type HrChannelMembership,
  hrChannelMembership,
  MEMBERS_UNAVAILABLE,
} from './hrChannel.ts';
import type { RoutedRequest, TimeOffPeople } from './people.ts';
import { createPolicyTypes, type PolicyTypes } from './policyTypes.ts';
import type { TimeOffReadModel } from './readModel.projection.ts';
import { ownLeaveOverlapping } from './standing.ts';
import { managesOrIs, mergeWhosOut } from './whosOut.ts';

/**
 * What the time-off handlers may ask (handlers translate; they never touch the store, the read
 * model, HR or Slack's Web API, and the rules stay in the decider): the requests as they stand,
 * who a person is in HR and who approves them, HR's policy types, and the answers of `/timeoff
 * status`, `/timeoff balance` and `/whosout`, ready to send. Like src/incidents/queries.ts.
 *
 * @example
 * const people = await queries.route(command.user_id, ask.startDate); // throws SB_UNMAPPED_USER in words
 * await ack({ response_type: 'ephemeral', ...(await queries.status(command.user_id)) });
 */
export type TimeOffQueries = Readonly<{
  /** The person's requests whose id starts with `prefix` (the short id `/timeoff status` shows, or more of it). */
  ownRequests(slackUserId: string, prefix: string): Promise<TimeOffView[]>;
  /** `/timeoff status`: the person's requests. */
  status(slackUserId: string): Promise<SlackMessage>;
  /**
   * The requester and who approves a request starting `firstDay` (around managers away or gone,
   * issue 12); throws SB_UNMAPPED_USER saying what is missing.
   */
  route(slackUserId: string, firstDay: string): Promise<RoutedRequest>;
  /** The person as HR knows them; throws SB_UNMAPPED_USER saying what is missing. */
  employee(slackUserId: string): Promise<TimeOffPerson>;
  /**
   * Issue 20: the requester's own leave overlapping the ask (`exclude`: the request being fixed),
   * as the enrich step finds it again before the decider (standing.ts).
   */
  ownLeave(
    employeeHrId: string,
    ask: Pick<TimeOffAsk, 'startDate' | 'endDate' | 'startPortion' | 'endPortion'>,
    exclude?: string,
  ): Promise<OwnLeave[]>;
  /** Issue 20: a request as it stands (the requester and zone of one being fixed), or null. */
  view(timeOffId: string): Promise<TimeOffView | null>;
  /** HR's policy types, cached for some minutes on the app's clock. */
  policyTypes: PolicyTypes;
  /**
   * `/timeoff balance`: the person's balance of each policy on `date`, their today in `zone` (a
   * policy HR does not answer for says so).
   */
  balance(
    person: TimeOffPerson,
    policyTypes: readonly string[],
    date: string,
    zone: string,
  ): Promise<SlackMessage>;
  /**
   * `/whosout`: everyone out in `range`, the reader's days in their `zone` (each absence's dates are
   * its person's days); the kind of leave only for the reader and their managers.
   */
  whosOut(
    range: Readonly<{ from: string; to: string; label: string; zone: string }>,
    readerSlackUserId: string,
  ): Promise<SlackMessage>;
  /**
   * A request sent to the HR channel: whether Slack says the person is a member who may decide it
   * (checked at each decision), or the refusal in words. `none`: not such a request.
   */
  hrChannelCheck(timeOffId: string, slackUserId: string): Promise<HrChannelCheck>;
  /**
   * Whether the person may deny the request now, by the decider's rule (the designated approver,
   * or a member of the HR channel it was sent to, never the requester), or the refusal in words.
   */
  mayDecide(timeOffId: string, slackUserId: string): Promise<DecisionCheck>;
  /**
   * Whether the person may fix and send again the request now, by the decider's rule (its
   * requester, while HR's refusal stands), or the rule's reason (`not_requester`,
   * `nothing_to_resubmit`).
   */
  mayResubmit(
    timeOffId: string,
    slackUserId: string,
  ): Promise<
    | Readonly<{ kind: 'allowed'; request: TimeOffView }>
    | Readonly<{ kind: 'unknown' }>
    | Readonly<{ kind: 'refused'; reason: string; phase: string }>
  >;
}>;

/** What was refused, for the record (`why`, `reason`) and for the person (`text`). */
export type Refusal = Readonly<{ kind: 'refused'; why: string; text: string; reason: string }>;

export type HrChannelCheck = Readonly<{ kind: 'none' }> | Readonly<{ kind: 'member' }> | Refusal;

export type DecisionCheck =
  | Readonly<{ kind: 'allowed'; request: TimeOffView }>
  | Readonly<{ kind: 'unknown' }>
  | Refusal;

export type TimeOffQueriesDeps = Readonly<{
  readModel: TimeOffReadModel;
  people: TimeOffPeople;
  client: HiBobClient;
  clock: Clock;
  logger: Logger;
  /** The channel's members (`conversations.members`). */
  channelMembers: HrChannelDeps['channelMembers'];
}>;

/** A membership that refuses the decision, in words (the same words the decider and the enrich step use). */
const refusalOf = (m: Exclude<HrChannelMembership, Readonly<{ kind: 'none' | 'member' }>>): Refusal => {
  switch (m.kind) {
    case 'notMember':
      return {
        kind: 'refused',
        why: 'someone outside the HR channel tried to decide a request sent there',
        text: `:no_entry: Only members of <#${m.channel}> can approve or deny time off sent to HR.`,
        reason: 'not_approver',
      };
    case 'unknownToHr':
      return {
        kind: 'refused',
        why: 'an HR channel member HR does not know tried to decide',
        text: `:bust_in_silhouette: ${m.error.message}`,
        reason: 'not_approver',
      };
    case 'unavailable':
      return m.what === 'members'
        ? {
            kind: 'refused',
            why: 'the HR channel members could not be listed',
            text: `:warning: ${MEMBERS_UNAVAILABLE}`,
            reason: 'members_unavailable',
          }
        : {
            kind: 'refused',
            why: 'an HR channel member HR does not know tried to decide',
            text: `:warning: ${DIRECTORY_UNAVAILABLE}`,
            reason: 'not_approver',
          };
  }
};

export const createTimeOffQueries = (deps: TimeOffQueriesDeps): TimeOffQueries => {
  const { readModel, people, client, logger } = deps;
  const hrChannel: HrChannelDeps = { channelMembers: deps.channelMembers, people, logger };

  const request = async (timeOffId: string): Promise<TimeOffView | null> => {
    await readModel.catchUp();
    return readModel.view(timeOffId);
  };

  const hrChannelCheck = async (timeOffId: string, slackUserId: string): Promise<HrChannelCheck> => {
    const view = await request(timeOffId);
    if (!view) return { kind: 'none' };
    const m = await hrChannelMembership(hrChannel, view, slackUserId);
    return m.kind === 'none' || m.kind === 'member' ? { kind: m.kind } : refusalOf(m);
  };

  return {
    async ownRequests(slackUserId, prefix) {
      await readModel.catchUp();
      return prefix.length <= 6
        ? readModel.findByShortId(slackUserId, prefix)
        : readModel.requestsOf(slackUserId).filter((v) => v.timeOffId.startsWith(prefix));
    },

    async status(slackUserId) {
      await readModel.catchUp();
      return timeOffStatusMessage(readModel.requestsOf(slackUserId));
    },

    route: (slackUserId, firstDay) => people.route(slackUserId, firstDay),

    async ownLeave(employeeHrId, ask, exclude) {
      await readModel.catchUp();
      return ownLeaveOverlapping(readModel, employeeHrId, ask, exclude ?? null);
    },

    view: request,

    employee: (slackUserId) => people.employee(slackUserId),

    policyTypes: createPolicyTypes(client, deps.clock, logger),

    async balance(person, policyTypes, date, zone) {
      const rows: BalanceRow[] = await Promise.all(
        policyTypes.map(async (policyType): Promise<BalanceRow> => {
          try {
            const b = await client.balance(person.hrId, policyType, date);
            return {
              policyType,
              days: b.totalBalanceAsOfDate,
              allowance: b.annualAllowance,
              taken: b.totalTaken,
            };
          } catch (e) {
            logger.warn({ err: e, policyType }, 'HR did not give a balance');
            return { policyType, days: null };
          }
        }),
      );
      return balanceMessage(rows, date, zone);
    },

    async whosOut(range, readerSlackUserId) {
      const fromHr = await client
        .whosOut({ from: range.from, to: range.to, includePending: true })
        .then((v) => ({ ok: true as const, v }))
        .catch((e: unknown) => {
          logger.warn({ err: e }, "HR did not say who's out");
          return { ok: false as const };
        });
      await readModel.catchUp();
      const known = readModel.absences({ from: range.from, to: range.to });
      const directory = readModel.directory();
      const rows = mergeWhosOut(known, fromHr.ok ? fromHr.v : [], {
        slackUserOf: (id) => readModel.slackUserOfEmployee(id),
        nameOf: (id) => employeeById(directory, id)?.displayName ?? null,
      });
      // The kind of leave (sick, parental…) is shown to the person and to their managers only.
      const reader = await people.employee(readerSlackUserId).then(
        (p) => p.hrId,
        () => null,
      );
      const shown = rows.map((r) =>
        reader !== null && managesOrIs(directory, reader, r.employeeHrId) ? r : { ...r, policyType: null },
      );
      return whosOutMessage({ range, rows: shown, hrUnreachable: !fromHr.ok });
    },

    hrChannelCheck,

    async mayDecide(timeOffId, slackUserId) {
      await readModel.catchUp();
      const view = readModel.view(timeOffId);
      const requestState = readModel.state(timeOffId)?.context.request;
      if (!view || !requestState) return { kind: 'unknown' };
      const m = await hrChannelMembership(hrChannel, view, slackUserId);
      // Slack or HR did not answer, or HR does not know the member: nothing for the rule to judge.
      if (m.kind === 'unavailable' || m.kind === 'unknownToHr') return refusalOf(m);
      const refusal = decisionRefusal(requestState, slackUserId, m.kind === 'member' ? m.asHr : undefined);
      if (!refusal) return { kind: 'allowed', request: view };
      const reason = String(refusal.details.reason);
      return {
        kind: 'refused',
        why:
          refusal.details.hrChannel === true
            ? 'someone outside the HR channel tried to decide a request sent there'
            : reason === 'own_request'
              ? 'a requester tried to deny their own request'
              : 'someone other than the approver tried to deny',
        text: `:no_entry: ${refusal.message}`,
        reason,
      };
    },

    async mayResubmit(timeOffId, slackUserId) {
      await readModel.catchUp();
      const view = readModel.view(timeOffId);
      const state = readModel.state(timeOffId);
      const requestState = state?.context.request;
      if (!view || !state || !requestState) return { kind: 'unknown' };
      const refusal = resubmitRefusal(requestState, timeOffPhaseOf(state), slackUserId);
      return refusal
        ? { kind: 'refused', reason: String(refusal.details.reason), phase: view.phase }
        : { kind: 'allowed', request: view };
    },
  };
};

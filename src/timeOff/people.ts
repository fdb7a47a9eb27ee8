import { employeeByEmail, employeeById, managerOf } from '../../machines/timeOff/directory.ts';
import { type ApproverSkip, hrChannelApprover, type TimeOffPerson } from '../../machines/timeOff/events.ts';
import { ChatOpsError } from '../core/errors.ts';
import type { PeopleDirectory } from '../people/directory.ts';
import { createIdentityResolver, type IdentityResolver } from '../people/identity.ts';
import { type SlackUserLookups, slackUserLookups } from '../people/slackUsers.ts';
import { type ReaderZones, UTC_ZONE } from '../slack/time.ts';
import type { SwitchboardWebClient } from '../slack/webClient.ts';
import { type ApproverRoute, awayUntilAt, reportingLine, routeApprover } from './approvers.ts';
import { absenceInterval, candidateDays } from './localDays.ts';
import type { TimeOffReadModel } from './readModel.projection.ts';

/**
 * Who a Slack user is in HR, and who approves their time off, without spending an HR people
 * search: Slack user → email (`users.info`) → the employee with that email in the directory the
 * lifecycle keeps as events (refreshed by one full search an hour and by HR's webhooks) → their
 * manager in HR (`work.reportsTo`) → the manager's Slack user (by email). Links are recorded in the
 * shared people directory (`system: 'hr'`).
 *
 * Every "cannot" is a ChatOpsError SB_UNMAPPED_USER whose message says what is missing, for the
 * person to read: not in HR, left, no manager in HR, a manager who has no Slack account.
 */
export type TimeOffPeople = Readonly<{
  /** The requester and their approver; throws SB_UNMAPPED_USER saying what is missing. */
  requesterAndApprover(
    slackUserId: string,
  ): Promise<Readonly<{ requester: TimeOffPerson; approver: TimeOffPerson }>>;
  /**
   * Issue 12: the requester and who approves a request starting `firstDay`, around managers who
   * are away, left or not in Slack (approvers.ts), with who was passed over and why. Throws
   * SB_UNMAPPED_USER saying what is missing when nobody can approve it (and no HR channel is set).
   */
  route(slackUserId: string, firstDay: string): Promise<RoutedRequest>;
  /** The approver rule for an existing requester (by HR id), as of now: for handing requests on. */
  approverRoute(requesterHrId: string, firstDay: string): Promise<ApproverRoute>;
  /**
   * The last day of the approved leave covering now (its interval in its own zone, issue 19) or
   * `firstDay`, or null (not away).
   */
  awayUntil(employeeHrId: string, firstDay: string): Promise<string | null>;
  /** The person as HR knows them; throws SB_UNMAPPED_USER saying what is missing. */
  employee(slackUserId: string): Promise<TimeOffPerson>;
  /** The Slack user of an HR employee (by email), or null when they have none. Never throws. */
  slackUserOfEmployee(employeeHrId: string): Promise<string | null>;
  identity: IdentityResolver;
}>;

export type RoutedRequest = Readonly<{
  requester: TimeOffPerson;
  approver: TimeOffPerson;
  skipped: readonly ApproverSkip[];
  /** The approver is away too and nobody else could take it (no HR channel): it waits for them. */
  approverAwayUntil: string | null;
}>;

const unmapped = (message: string, reason: string) =>
  new ChatOpsError('SB_UNMAPPED_USER', message, { details: { reason } });

export const createTimeOffPeople = (
  deps: Readonly<{
    readModel: TimeOffReadModel;
    people: PeopleDirectory;
    slack: SwitchboardWebClient;
    now(): Date;
    /** Issue 12: where a request goes when the reporting line ends (TIME_OFF_HR_CHANNEL). */
    hrChannel?: string | null;
    /** Tests may replace the Slack lookups. */
    lookups?: SlackUserLookups;
    /** Told each profile looked up, so a reader's zone costs no second `users.info` (issue 19). */
    zones?: Pick<ReaderZones, 'remember' | 'of'>;
  }>,
): TimeOffPeople => {
  const { readModel } = deps;
  const lookups = deps.lookups ?? slackUserLookups(deps.slack, deps.zones);
  const identity = createIdentityResolver({
    directory: deps.people,
    system: 'hr',
    systemName: 'HR',
    now: deps.now,
    findUpstreamUser: async (email) => {
      await readModel.catchUp();
      const e = employeeByEmail(readModel.directory(), email);
      return e && e.status !== 'left' ? { id: e.hrId, name: e.displayName, email: e.email } : undefined;
    },
    upstreamUser: async (id) => {
      await readModel.catchUp();
      const e = employeeById(readModel.directory(), id);
      if (!e)
        throw unmapped(`HR employee ${id} is not in the directory Switchboard keeps.`, 'unknown_employee');
      return { id: e.hrId, name: e.displayName, email: e.email };
    },
    ...lookups,
    // The directory changes (people join, managers change): look again after an hour, not a day.
    refreshAfterMs: 60 * 60_000,
  });

  const employee = async (slackUserId: string): Promise<TimeOffPerson> => {
    const resolved = await identity.resolve(slackUserId);
    await readModel.catchUp();
    const e = employeeById(readModel.directory(), resolved.id);
    if (!e || e.status === 'left') {
      throw unmapped(
        'HR lists you as no longer employed, so Switchboard cannot ask for time off for you. Ask HR to check your record.',
        'left',
      );
    }
    return { hrId: e.hrId, slackUserId, displayName: e.displayName || resolved.name || slackUserId };
  };

  const slackUserOfEmployee = async (employeeHrId: string): Promise<string | null> => {
    await readModel.catchUp();
    const linked = readModel.slackUserOfEmployee(employeeHrId);
    if (linked) return linked;
    const e = employeeById(readModel.directory(), employeeHrId);
    if (!e) return null;
    try {
      const slackUserId = await lookups.slackUserByEmail(e.email);
      if (!slackUserId) return null;
      await deps.people.link(slackUserId, {
        system: 'hr',
        externalId: e.hrId,
        email: e.email,
        name: e.displayName,
      });
      return slackUserId;
    } catch {
      return null;
    }
  };

  /**
   * Issue 19: leave is an interval in its own zone (a Switchboard request's recorded zone; leave
   * known only from HR: the person's Slack zone), so someone off on Tuesday in Singapore is away
   * from Tuesday 00:00 there (Monday 16:00 UTC), not from Tuesday 00:00 UTC.
   */
  const awayUntil = async (employeeHrId: string, firstDay: string): Promise<string | null> => {
    const now = deps.now();
    const near = candidateDays({ since: now, until: new Date(now.getTime() + 1) });
    const approved = readModel
      .absences(
        {
          from: near.from < firstDay ? near.from : firstDay,
          to: near.to > firstDay ? near.to : firstDay,
        },
        employeeHrId,
      )
      .filter((a) => a.status === 'approved');
    // Leave known only from HR is in the person's own Slack zone (looked up once, if needed).
    let ownZone: Promise<string> | undefined;
    const zoneOfPerson = (slackUserId: string | null): Promise<string> => {
      ownZone ??= (async () => {
        const user = slackUserId ?? (await slackUserOfEmployee(employeeHrId));
        return user && deps.zones ? (await deps.zones.of(user).catch(() => UTC_ZONE)).tz : 'UTC';
      })();
      return ownZone;
    };
    const withIntervals = await Promise.all(
      approved.map(async (a) => ({
        startDate: a.startDate,
        endDate: a.endDate,
        ...absenceInterval(a, a.zone ?? (await zoneOfPerson(a.slackUserId))),
      })),
    );
    return awayUntilAt(withIntervals, now, firstDay);
  };

  const approverRoute = async (requesterHrId: string, firstDay: string): Promise<ApproverRoute> => {
    await readModel.catchUp();
    const line = reportingLine(readModel.directory(), requesterHrId);
    // Slack users are looked up (by email, for people not linked yet) only as far up the line as
    // the walk goes: up to the first manager who is here and in Slack.
    const slack = new Map<string, string | null>();
    const away = new Map<string, string | null>();
    for (const e of line) {
      if (e.status === 'left') continue;
      const found = await slackUserOfEmployee(e.hrId);
      slack.set(e.hrId, found);
      if (found === null) continue;
      const until = await awayUntil(e.hrId, firstDay);
      away.set(e.hrId, until);
      if (until === null) break;
    }
    return routeApprover(line, {
      awayUntil: (hrId) => away.get(hrId) ?? null,
      slackOf: (hrId) => slack.get(hrId) ?? readModel.slackUserOfEmployee(hrId),
      hrChannel: deps.hrChannel ?? null,
    });
  };

  return {
    identity,
    employee,
    slackUserOfEmployee,
    awayUntil,
    approverRoute,
    async route(slackUserId, firstDay) {
      const requester = await employee(slackUserId);
      const route = await approverRoute(requester.hrId, firstDay);
      switch (route.kind) {
        case 'person':
          return {
            requester,
            approver: {
              hrId: route.approver.hrId,
              slackUserId: route.slackUserId,
              displayName: route.approver.displayName,
            },
            skipped: route.skipped,
            approverAwayUntil: route.awayUntil,
          };
        case 'hr_channel':
          return {
            requester,
            approver: hrChannelApprover(route.channel),
            skipped: route.skipped,
            approverAwayUntil: null,
          };
        default:
          throw route.why === 'no_manager'
            ? unmapped(
                'HR has no manager for you, and Switchboard has no HR channel to send your time off to. Ask HR to set who you report to.',
                'no_manager',
              )
            : unmapped(
                `Nobody in your reporting line can approve your time off now (${route.skipped
                  .map((s) => `${s.displayName} ${s.reason === 'left' ? 'has left' : 'has no Slack account'}`)
                  .join(
                    ', ',
                  )}), and Switchboard has no HR channel to send it to. Ask HR to set who you report to now.`,
                'no_approver',
              );
      }
    },
    async requesterAndApprover(slackUserId) {
      const requester = await employee(slackUserId);
      const manager = managerOf(readModel.directory(), requester.hrId);
      if (!manager) {
        throw unmapped(
          'HR has no manager for you, and your manager approves your time off. Ask HR to set who you report to.',
          'no_manager',
        );
      }
      if (manager.status === 'left') {
        throw unmapped(
          `Your manager in HR, ${manager.displayName}, has left, so nobody can approve your time off yet. Ask HR to set who you report to now.`,
          'manager_left',
        );
      }
      const approverSlack = await slackUserOfEmployee(manager.hrId);
      if (!approverSlack) {
        throw unmapped(
          `Your manager in HR, ${manager.displayName}, has no Slack account with their HR email (${manager.email}), so Switchboard cannot ask them. Ask them or an admin to use the same email in both.`,
          'approver_not_in_slack',
        );
      }
      return {
        requester,
        approver: { hrId: manager.hrId, slackUserId: approverSlack, displayName: manager.displayName },
      };
    },
  };
};

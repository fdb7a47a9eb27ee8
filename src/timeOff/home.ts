import { employeeById, teamOf } from '../../machines/timeOff/directory.ts';
import { isChatOpsError } from '../core/errors.ts';
import type { HomeSection } from '../lifecycles/lifecycle.ts';
import { escapeMrkdwn, type KnownBlock, mrkdwn, plain } from '../slack/blocks/format.ts';
import { pendingApprovalsSection, upcomingTimeOffSection } from './blocks/home.ts';
import { formatRange } from './blocks/timeOffView.ts';
import { dayIn } from './localDays.ts';
import type { TimeOffPeople } from './people.ts';
import type { AbsenceEntry, TimeOffReadModel } from './readModel.projection.ts';

/** How far ahead HR's own entries are listed under "Your upcoming time off". */
const HR_HORIZON_DAYS = 366;
const MAX_HR_ROWS = 10;

const addDays = (date: string, days: number): string =>
  new Date(Date.parse(`${date}T00:00:00.000Z`) + days * 86_400_000).toISOString().slice(0, 10);

/** Time off HR has for the person that Switchboard did not handle (asked in the HR web app). */
export const hrOnlyTimeOffBlocks = (entries: readonly AbsenceEntry[]): KnownBlock[] => {
  const hrOnly = entries.filter((a) => a.timeOffId === null);
  if (hrOnly.length === 0) return [];
  const lines = hrOnly
    .slice(0, MAX_HR_ROWS)
    .map(
      (a) =>
        `• *${escapeMrkdwn(a.policyType)}*: ${formatRange(a)} — ${a.status === 'approved' ? 'approved in HR' : 'waiting for approval in HR'}`,
    );
  if (hrOnly.length > MAX_HR_ROWS) lines.push(`…and ${hrOnly.length - MAX_HR_ROWS} more.`);
  return [
    {
      type: 'section',
      text: mrkdwn(`*In HR* (asked in the HR web app; change it there)\n${lines.join('\n')}`),
    },
  ];
};

/**
 * The App Home's time-off section: the approver's pending approvals (with Approve / Deny with
 * reason) when they have any or manage a team, and the person's upcoming time off: Switchboard's
 * requests (with Cancel) and what HR has that was asked in the HR web app. Someone not in HR
 * gets one line saying so. Read from the read model only (no HR call when the tab opens).
 */
export const createTimeOffHomeSection = (
  deps: Readonly<{
    readModel: TimeOffReadModel;
    people?: TimeOffPeople;
    /** The person's Slack time zone: "upcoming" counts from their today (absent: UTC). */
    zoneOf?: (slackUserId: string) => Promise<string>;
  }>,
): HomeSection => ({
  async render(slackUserId, ctx) {
    const { readModel } = deps;
    await readModel.catchUp();
    const pending = readModel.pendingApprovalsOf(slackUserId);
    const requests = readModel.requestsOf(slackUserId);
    let hrId = readModel.employeeOfSlackUser(slackUserId);
    let notInHr: string | null = null;
    if (hrId === null) {
      try {
        if (deps.people) hrId = (await deps.people.employee(slackUserId)).hrId;
        else notInHr = 'Switchboard can’t find you in HR, so it has no time off to show.';
      } catch (error) {
        // Not in HR (or left): said in one line. Anything else is retried (the tab is published again).
        if (!(isChatOpsError(error) && error.code === 'SB_UNMAPPED_USER')) throw error;
        notInHr = error.message;
      }
    }
    const blocks: KnownBlock[] = [];
    const manages = hrId !== null && teamOf(readModel.directory(), hrId).length > 0;
    // Requests waiting for this person are Switchboard's own: shown even if HR lost track of them.
    if (pending.length > 0 || manages) blocks.push(...pendingApprovalsSection(slackUserId, pending));
    if (hrId === null && requests.length === 0) {
      if (blocks.length === 0) blocks.push({ type: 'header', text: plain('Time off') });
      blocks.push({
        type: 'context',
        elements: [mrkdwn(`:information_source: ${escapeMrkdwn(notInHr ?? '')}`)],
      });
      return blocks;
    }
    // The person's today, in their zone (issue 19): leave on a day not over for them is upcoming.
    const today = dayIn(ctx.now(), deps.zoneOf ? await deps.zoneOf(slackUserId).catch(() => 'UTC') : 'UTC');
    blocks.push(...upcomingTimeOffSection(slackUserId, requests, today));
    if (hrId !== null) {
      const hr = readModel.absences({ from: today, to: addDays(today, HR_HORIZON_DAYS) }, hrId);
      blocks.push(...hrOnlyTimeOffBlocks(hr));
      if (employeeById(readModel.directory(), hrId)?.status === 'left') {
        blocks.push({ type: 'context', elements: [mrkdwn('HR lists you as having left.')] });
      }
    }
    return blocks;
  },
});

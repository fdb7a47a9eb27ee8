import type { ApprovalRules } from '../../machines/timeOff/commands.ts';
import type { Clock } from '../../src/core/clock.ts';
import type { HandlerDeps } from '../../src/lifecycles/lifecycle.ts';
import type { ModalView } from '../../src/slack/blocks/format.ts';
import type { TimeOffQueries } from '../../src/timeOff/queries.ts';

/** What the time-off listeners get from the module (handlers/timeOff/module.ts). */
export type TimeOffHandlerDeps = Readonly<{
  /** What the listeners may ask: requests, people, HR's policy types, the answers of queries. */
  queries: TimeOffQueries;
  openView(triggerId: string, view: ModalView): Promise<void>;
  /** Public holidays and approval rules, carried on RequestTimeOff / ResubmitTimeOff. */
  holidays: readonly string[];
  approvalRules: ApprovalRules;
  /** Issue 20: policy types that may be asked for past days (TIME_OFF_PAST_POLICIES). */
  pastPolicies: readonly string[];
  clock: Clock;
  /** A person's Slack time zone (IANA; UTC when unknown): their "today" and their days are theirs. */
  zoneOf(slackUserId: string): Promise<string>;
}>;

export type TimeOffListenerDeps = HandlerDeps & Readonly<{ timeOff: TimeOffHandlerDeps }>;

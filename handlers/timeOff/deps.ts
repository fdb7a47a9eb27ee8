import type { ApprovalRules } from '../../machines/timeOff/commands.ts';
import type { Clock } from '../../src/core/clock.ts';
import type { HandlerDeps } from '../../src/lifecycles/lifecycle.ts';
import type { ModalView } from '../../src/slack/blocks/format.ts';
import type { TimeOffPeople } from '../../src/timeOff/people.ts';
import type { TimeOffReadModel } from '../../src/timeOff/readModel.projection.ts';
import type { HiBobClient } from '../../src/upstream/hibob.ts';

/** What the time-off listeners get from the module (handlers/timeOff/module.ts). */
export type TimeOffHandlerDeps = Readonly<{
  readModel: TimeOffReadModel;
  /** Who the clicking / typing person is in HR, and their approver (no HR search). */
  people: TimeOffPeople;
  /** The HR client: policy types, balance, who's out (no people search from the edge). */
  client: HiBobClient;
  openView(triggerId: string, view: ModalView): Promise<void>;
  /** Public holidays and approval rules, carried on RequestTimeOff / ResubmitTimeOff. */
  holidays: readonly string[];
  approvalRules: ApprovalRules;
  clock: Clock;
  /** Issue 12: the HR channel (TIME_OFF_HR_CHANNEL) requests go to when nobody in the line can decide. */
  hrChannel: string | null;
  /** Whether the person picked to cover a request is away during its shifts now (who, and why), or null. */
  coverAway(timeOffId: string, slackUserId: string): Promise<Readonly<{ name: string; why: string }> | null>;
  /** The channel's members (`conversations.members`): who may decide a request sent there. */
  channelMembers(channel: string): Promise<readonly string[]>;
}>;

export type TimeOffListenerDeps = HandlerDeps & Readonly<{ timeOff: TimeOffHandlerDeps }>;

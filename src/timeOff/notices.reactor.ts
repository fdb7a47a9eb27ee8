import type { Logger } from '../logger.ts';
import type { Dispatch } from '../processors/dispatchCommand.ts';
import type { Processor } from '../processors/runner.ts';
import type { SlackMessage } from '../slack/blocks/format.ts';
import type { HiBobClient } from '../upstream/hibob.ts';
import type { TimeOffReadModel } from './readModel.projection.ts';

// CONTRACT STUB (slice slack): replaced by the DMs (approval card, requester's steps, reminders).
export const TIME_OFF_NOTICES_PROCESSOR = 'timeoff-notices';

export type TimeOffNoticesSlack = Readonly<{
  /** `channel` a user id: the app's DM with them. */
  postMessage(channel: string, message: SlackMessage): Promise<{ channel: string; ts: string }>;
  updateMessage(channel: string, ts: string, message: SlackMessage): Promise<void>;
}>;

export type TimeOffNoticesOptions = Readonly<{
  slack: TimeOffNoticesSlack;
  dispatch: Dispatch;
  readModel: TimeOffReadModel;
  /** Balance after the request (HR's balance API) for the approval card. */
  client: HiBobClient;
  holidays: readonly string[];
  logger: Logger;
}>;

export const createTimeOffNoticesReactor = (_options: TimeOffNoticesOptions): Processor => ({
  id: TIME_OFF_NOTICES_PROCESSOR,
  filter: { streamPrefixes: ['timeoff-'], eventTypes: [] },
  async handle() {},
});

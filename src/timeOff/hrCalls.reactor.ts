import type { Logger } from '../logger.ts';
import type { Dispatch } from '../processors/dispatchCommand.ts';
import type { RetryPolicy } from '../processors/retryPolicy.ts';
import type { Processor } from '../processors/runner.ts';
import type { HiBobClient } from '../upstream/hibob.ts';
import type { TimeOffReadModel } from './readModel.projection.ts';

// CONTRACT STUB (slice hr): replaced by the HR calls reactor (submit, find the id, read back, cancel).
export const TIME_OFF_HR_CALLS_PROCESSOR = 'timeoff-hr-calls';

export type TimeOffHrCallsOptions = Readonly<{
  client: HiBobClient;
  dispatch: Dispatch;
  /** Durable retries of failed HR calls (network, 5xx, 429). */
  retry: RetryPolicy;
  /** Retries while HR has not shown a write yet (read-after-write lag, up to ~20 s). */
  lagRetry: RetryPolicy;
  readModel: TimeOffReadModel;
  logger: Logger;
}>;

export const createTimeOffHrCallsReactor = (_options: TimeOffHrCallsOptions): Processor => ({
  id: TIME_OFF_HR_CALLS_PROCESSOR,
  filter: { streamPrefixes: ['timeoff-'], eventTypes: [] },
  async handle() {},
});

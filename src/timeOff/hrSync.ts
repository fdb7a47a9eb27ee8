import type { Clock } from '../core/clock.ts';
import type { Logger } from '../logger.ts';
import type { Dispatch } from '../processors/dispatchCommand.ts';
import type { RetryPolicy } from '../processors/retryPolicy.ts';
import type { Processor } from '../processors/runner.ts';
import type { HiBobClient } from '../upstream/hibob.ts';
import type { TimeOffReadModel } from './readModel.projection.ts';

// CONTRACT STUB (slice hr): replaced by HR sync (webhook re-reads, changes poll, directory refresh).
export type TimeOffHrSync = Readonly<{
  processors: readonly Processor[];
  /** One full people search (inactive included) → RecordDirectorySnapshot. */
  refreshDirectory(): Promise<void>;
  /** HR's time-off changes since the last poll → RecordHrTimeOff (and ours matched). */
  pollChanges(): Promise<void>;
}>;

export type TimeOffHrSyncOptions = Readonly<{
  client: HiBobClient;
  dispatch: Dispatch;
  readModel: TimeOffReadModel;
  clock: Clock;
  logger: Logger;
  retry: RetryPolicy;
  lagRetry: RetryPolicy;
  /** 0: only at start and when asked (tests). */
  directoryRefreshMs: number;
  changesPollMs: number;
}>;

export const createTimeOffHrSync = (_options: TimeOffHrSyncOptions): TimeOffHrSync => ({
  processors: [],
  async refreshDirectory() {},
  async pollChanges() {},
});

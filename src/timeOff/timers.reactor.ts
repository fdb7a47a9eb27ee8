import type { Processor } from '../processors/runner.ts';

// CONTRACT STUB (slice hr): replaced by the reminder and expiry timers.
export const TIME_OFF_TIMERS_PROCESSOR = 'timeoff-timers';
export const createTimeOffTimersReactor = (): Processor => ({
  id: TIME_OFF_TIMERS_PROCESSOR,
  filter: { streamPrefixes: ['timeoff-'], eventTypes: ['TimeOffRequested'] },
  async handle() {},
});

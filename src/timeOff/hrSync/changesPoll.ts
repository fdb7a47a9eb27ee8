import type { Clock } from '../../core/clock.ts';
import type { EventStore } from '../../eventStore/eventStore.ts';
import type { HiBobClient, TimeOffChange } from '../../upstream/hibob.ts';
import { hrEntryOf } from './entries.ts';
import type { HrFacts } from './facts.ts';
import { HR_SYNC_CHANGES_STREAM, lastMark, mark } from './marks.ts';

/**
 * The changes poll: HR's time-off changes since the last poll, re-read with an overlap of HR's lag
 * (a change becomes visible up to the lag after its time), the newest change per request recorded
 * (`RecordHrTimeOff`, and what it means for our own requests). The poll's high-water mark is kept
 * durably.
 */

/** The first poll ever looks this far back. */
const FIRST_POLL_LOOKBACK_MS = 24 * 60 * 60_000;

/** The newest change of each request: what it is now (HR lists them oldest first). */
export const newestPerRequest = (changes: readonly TimeOffChange[]): TimeOffChange[] => {
  const newest = new Map<number, TimeOffChange>();
  for (const c of changes) newest.set(c.requestId, c);
  return [...newest.values()];
};

/** Where a poll starts: the last poll's end less HR's lag, or a day back the first time. */
export const pollSince = (last: Record<string, unknown> | null, now: Date, hrLagMs: number): Date => {
  const until = typeof last?.until === 'string' ? Date.parse(last.until) : Number.NaN;
  return new Date(Number.isNaN(until) ? now.getTime() - FIRST_POLL_LOOKBACK_MS : until - hrLagMs);
};

export const pollChangesOnce = async (
  deps: Readonly<{ client: HiBobClient; store: EventStore; clock: Clock; facts: HrFacts; hrLagMs: number }>,
): Promise<void> => {
  const now = deps.clock.now();
  const since = pollSince(await lastMark(deps.store, HR_SYNC_CHANGES_STREAM), now, deps.hrLagMs);
  const changes = await deps.client.changesSince(since, { includePending: true });
  let recorded = 0;
  for (const c of newestPerRequest(changes)) {
    const entry = hrEntryOf(c);
    if (!entry) continue;
    await deps.facts.recordEntry(entry, `poll:${now.toISOString()}:${entry.hrRequestId}:${entry.status}`);
    recorded += 1;
  }
  await mark(deps.store, HR_SYNC_CHANGES_STREAM, 'HrChangesPolled', {
    since: since.toISOString(),
    until: now.toISOString(),
    changes: recorded,
    at: now.toISOString(),
  });
};

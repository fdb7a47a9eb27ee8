import type { DirectoryEmployee } from '../../../machines/timeOff/directory.ts';
import type { Clock } from '../../core/clock.ts';
import type { EventStore } from '../../eventStore/eventStore.ts';
import type { Logger } from '../../logger.ts';
import type { HiBobClient } from '../../upstream/hibob.ts';
import type { TimeOffReadModel } from '../readModel.projection.ts';
import { DIRECTORY_FIELDS, directoryEmployeeOf } from './entries.ts';
import type { HrFacts } from './facts.ts';
import { HR_SYNC_DIRECTORY_STREAM, lastMark, mark } from './marks.ts';

/**
 * The directory refresh: ONE people search, inactive people included, with only the fields the
 * directory needs → `RecordDirectorySnapshot` (only differences become facts). The only people
 * search the lifecycle spends. Its time is kept durably. People without an email in HR cannot be
 * matched to Slack and are left out.
 */

export type DirectoryRefreshDeps = Readonly<{
  client: HiBobClient;
  store: EventStore;
  clock: Clock;
  logger: Logger;
  facts: HrFacts;
}>;

export const refreshDirectoryOnce = async (deps: DirectoryRefreshDeps): Promise<void> => {
  const now = deps.clock.now();
  const people = await deps.client.searchPeople({ fields: [...DIRECTORY_FIELDS], showInactive: true });
  const byId = new Map<string, DirectoryEmployee>();
  for (const p of people) {
    const e = directoryEmployeeOf(p);
    if (e) byId.set(e.hrId, e);
  }
  await deps.facts.record(
    deps.facts.command(
      'RecordDirectorySnapshot',
      { employees: [...byId.values()] },
      `directory:${now.toISOString()}`,
    ),
  );
  await mark(deps.store, HR_SYNC_DIRECTORY_STREAM, 'HrDirectoryRead', {
    employees: byId.size,
    at: now.toISOString(),
  });
  deps.logger.info(
    { employees: byId.size, searched: people.length },
    'HR directory read (one people search)',
  );
};

/**
 * At start: read the directory when it is empty or older than the interval (`refresh`); else say
 * it is fresh.
 */
export const refreshDirectoryIfStale = async (
  deps: Readonly<{ store: EventStore; clock: Clock; logger: Logger; readModel: TimeOffReadModel }>,
  intervalMs: number,
  refresh: () => Promise<void>,
): Promise<void> => {
  const last = await lastMark(deps.store, HR_SYNC_DIRECTORY_STREAM);
  const at = typeof last?.at === 'string' ? Date.parse(last.at) : Number.NaN;
  await deps.readModel.catchUp();
  const age = Number.isNaN(at) ? null : deps.clock.now().getTime() - at;
  if (deps.readModel.directory().size === 0 || age === null || age >= intervalMs) {
    deps.logger.info({ ageMs: age }, 'HR directory is empty or stale: read at start');
    await refresh();
  } else {
    deps.logger.info({ ageMs: age }, 'HR directory is fresh: not read at start');
  }
};

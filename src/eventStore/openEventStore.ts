import { ChatOpsError } from '../core/errors.ts';
import type { EventStore } from './eventStore.ts';
import { createSqliteEventStore, type SqliteEventStoreOptions } from './sqlite/sqliteEventStore.ts';
import { isKurrentDbUrl } from './storeUrl.ts';

export type OpenEventStoreOptions = Readonly<{
  sqlite?: Omit<SqliteEventStoreOptions, 'path'>;
}>;

/**
 * Opens the store named by `EVENT_STORE_URL`:
 * - `sqlite:./data/switchboard.db` (the embedded default), `sqlite::memory:` (tests);
 * - `kurrentdb://host:2113?tls=false`, `kurrentdb://node1:2113,node2:2113,node3:2113?tls=true` (several
 *   gossip seeds), `kurrentdb+discover://…`, also `kurrent://`, `kdb://`, `esdb://`, `eventstore://`
 *   (storeUrl.ts), for clusters.
 *
 * @example const store = await openEventStore(config.eventStoreUrl);
 */
export const openEventStore = async (
  url: string,
  options: OpenEventStoreOptions = {},
): Promise<EventStore> => {
  if (url.startsWith('sqlite:')) {
    const path = url.slice('sqlite:'.length);
    if (path.length === 0)
      throw new ChatOpsError('SB_CONFIG', 'EVENT_STORE_URL sqlite: needs a path (or :memory:)');
    return createSqliteEventStore({ ...options.sqlite, path });
  }
  if (isKurrentDbUrl(url)) {
    // Loaded on demand: the gRPC client and its native bridge stay out of SQLite deployments.
    const { createKurrentDbEventStore } = await import('./kurrentdb/kurrentDbEventStore.ts');
    return createKurrentDbEventStore({ connectionString: url });
  }
  throw new ChatOpsError(
    'SB_CONFIG',
    `EVENT_STORE_URL must start with sqlite: or kurrentdb:// (got ${JSON.stringify(url.split(':')[0])}:…)`,
  );
};

import { afterAll } from 'vitest';
import { openEventStore } from '../../src/eventStore/openEventStore.ts';
import { createSqliteEventStore } from '../../src/eventStore/sqlite/sqliteEventStore.ts';
import { runEventStoreContract } from './contract.ts';
import { tempDir } from './helpers.ts';

// In memory: every open() is a fresh, empty database (through the URL the app uses).
runEventStoreContract('sqlite::memory:', () => openEventStore('sqlite::memory:'));

// A temp file in WAL mode with synchronous=FULL, the production setup: every open() reopens the
// same file, so the suite also checks that data and checkpoints survive close and open.
const dir = tempDir('switchboard-contract');
afterAll(() => dir.cleanup());
runEventStoreContract(
  'sqlite file (WAL)',
  async () => createSqliteEventStore({ path: dir.file('contract.db') }),
  { reopensSameData: true },
);

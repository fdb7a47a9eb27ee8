import { existsSync, mkdirSync, mkdtempSync, rmSync, statfsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** tmpfs's magic number in statfs(2). */
const TMPFS_MAGIC = 0x01021994;

const RUN_DIR = 'SWITCHBOARD_TEST_TMPDIR';
const DISK_DIR = 'SWITCHBOARD_TEST_DISK_TMPDIR';

/**
 * The folder a test run keeps its temporary files in (SQLite stores, key files): a new folder on
 * the RAM disk (`/dev/shm`) when the machine has one, else in the system's temporary folder. Made
 * once per run (vitest.config.ts hands it to the workers as TMPDIR); `removeTestTempRoot` deletes
 * it when the run ends (test/support/globalSetup.ts).
 */
export const testTempRoot = (): string => {
  const made = process.env[RUN_DIR];
  if (made && existsSync(made)) return made;
  const ram = '/dev/shm';
  let base = tmpdir();
  try {
    if (existsSync(ram) && statfsSync(ram).type === TMPFS_MAGIC) base = ram;
  } catch {
    // no statfs here: the system's temporary folder
  }
  mkdirSync(base, { recursive: true });
  const dir = mkdtempSync(join(base, 'switchboard-tests-'));
  process.env[RUN_DIR] = dir;
  process.env[DISK_DIR] ??= tmpdir();
  return dir;
};

/**
 * Node's compile cache for the app's child processes (src/main.ts spawned by the crash, replica and
 * start-up tests): the first child that exits normally stores every module it compiled (the
 * TypeScript stripped, V8's code), later ones load them from there. Inside the run's folder, so it
 * goes with it; none outside a test run.
 */
export const compileCacheEnv = (): Record<string, string> => {
  const dir = process.env[RUN_DIR];
  return dir ? { NODE_COMPILE_CACHE: join(dir, 'node-compile-cache') } : {};
};

/** The system's temporary folder on disk, for the tests about fsync and the WAL (not the RAM disk). */
export const diskTempDir = (): string => process.env[DISK_DIR] ?? tmpdir();

export const removeTestTempRoot = (): void => {
  const dir = process.env[RUN_DIR];
  if (dir) rmSync(dir, { recursive: true, force: true });
};

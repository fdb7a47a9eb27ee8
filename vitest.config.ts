import { tmpdir } from 'node:os';
import { defineConfig } from 'vitest/config';
import { testTempRoot } from './test/support/tempRoot.ts';

// Test kinds live in the file suffix: *.unit.test.ts are pure, *.int.test.ts use
// real SQLite files, loopback HTTP and child processes, *.e2e.test.ts need an external KurrentDB,
// *.browser.test.ts drive Debian's Chromium.
//
// How `npm test` (unit + int) is run, and why (measured in docs/benchmarks.md, "Test suite"):
// - `isolate: false`: a worker keeps the modules it loaded from one file to the next instead of
//   loading the app (~300 files) again for every test file. Nothing in the suite mocks modules or
//   keeps state in them between files; each test starts its own app, store and simulators.
// - `maxWorkers: 3` on this 2-core machine (vitest's default is one fewer than the cores: one
//   file at a time here). Most of an int test's time is waiting for loopback HTTP, child
//   processes and the app's processors, so three files overlap well (more would share the
//   same two cores with more child processes and push slow files towards their timeouts).
// - Temporary files (the SQLite stores) on a RAM disk when the machine has one (testTempRoot):
//   every commit is `synchronous=FULL`, and an fsync on this VM's shared disk cost more than the
//   rest of a test's store work. A kill -9 loses nothing either way (the page cache outlives the
//   process), so the crash tests mean what they meant.
// - Timeouts bound a test that hangs; they are not what a test waits for (tests wait on
//   conditions: test/support/settle.ts, waitFor.ts), so they are long enough for a loaded machine:
//   the longest int tests take 20-30 s alone here, and a loaded run gives each a third of that.
const tmp = testTempRoot();

export default defineConfig({
  test: {
    isolate: false,
    maxWorkers: 3,
    env: {
      TMPDIR: tmp,
      SWITCHBOARD_TEST_TMPDIR: tmp,
      SWITCHBOARD_TEST_DISK_TMPDIR: process.env['SWITCHBOARD_TEST_DISK_TMPDIR'] ?? tmpdir(),
    },
    globalSetup: ['test/support/globalSetup.ts'],
    projects: [
      { extends: true, test: { name: 'unit', include: ['test/**/*.unit.test.ts'] } },
      {
        extends: true,
        test: {
          name: 'int',
          include: ['test/**/*.int.test.ts'],
          testTimeout: 120_000,
          hookTimeout: 120_000,
        },
      },
      { extends: true, test: { name: 'e2e', include: ['test/**/*.e2e.test.ts'], testTimeout: 60_000 } },
      {
        extends: true,
        test: {
          name: 'browser',
          include: ['test/**/*.browser.test.ts'],
          testTimeout: 60_000,
          hookTimeout: 60_000,
          fileParallelism: false,
        },
      },
    ],
  },
});

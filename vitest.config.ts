import { defineConfig } from 'vitest/config';

// Test kinds live in the file suffix: *.unit.test.ts are pure, *.int.test.ts use
// real SQLite files, loopback HTTP and child processes, *.e2e.test.ts need an external KurrentDB,
// *.browser.test.ts drive Debian's Chromium.
export default defineConfig({
  test: {
    projects: [
      { test: { name: 'unit', include: ['test/**/*.unit.test.ts'] } },
      {
        test: {
          name: 'int',
          include: ['test/**/*.int.test.ts'],
          testTimeout: 30_000,
          hookTimeout: 30_000,
        },
      },
      { test: { name: 'e2e', include: ['test/**/*.e2e.test.ts'], testTimeout: 60_000 } },
      {
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

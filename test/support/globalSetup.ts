import { spawn } from 'node:child_process';
import { join, resolve } from 'node:path';
import { compileCacheEnv, removeTestTempRoot } from './tempRoot.ts';

const ROOT = resolve(import.meta.dirname, '../..');

/**
 * vitest's global setup. Fills the compile cache the app's child processes use (tempRoot.ts) by
 * loading the app once in the background while the first test files run (a child killed with -9
 * stores nothing, so the crash tests would never fill it themselves); the run's temporary folder
 * goes when the run ends.
 */
export default function setup(): () => void {
  const cache = compileCacheEnv();
  const warm = cache.NODE_COMPILE_CACHE
    ? spawn(
        join(ROOT, 'node_modules/.bin/node'),
        ['--input-type=module', '-e', "await import('./src/app.ts'); await import('./src/config.ts');"],
        { cwd: ROOT, env: { PATH: process.env['PATH'] ?? '', ...cache }, stdio: 'ignore' },
      )
    : undefined;
  warm?.on('error', () => undefined);
  return () => {
    if (warm && warm.exitCode === null && warm.signalCode === null) warm.kill('SIGKILL');
    removeTestTempRoot();
  };
}

import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { expect } from 'vitest';
import { connectAll, type Simulator } from '../../sandbox/simulators/simulator.ts';
import { killAll, type MainProcess, spawnMain, tempDir } from './startApp.ts';
import { WAIT_PATIENCE_MS } from './waitFor.ts';

/**
 * The crash tests' rig: processes to `kill -9` in a window and start again on the same files.
 * Either the real app (`src/main.ts`, as `npm start` runs it) or a small fixture script that prints
 * a line at each step; every process it starts is killed by `killAll()` (a test's afterEach), and
 * its folder of stores goes with `cleanup()` (afterAll).
 *
 * @example
 * const rig = createCrashRig('switchboard-incident-crash-');
 * afterEach(() => rig.killAll());
 * afterAll(() => rig.cleanup());
 * let main = await rig.startMain(testEnv(fake, rig.dbPath('ack.db'), simulatorEnv([fake, sim])));
 * await rig.kill9(main);
 * main = await rig.startMain(…same store…);
 */

/** A fixture script in a child process, its stdout read line by line. */
export type FixtureChild = Readonly<{
  process: ChildProcess;
  /** Every stdout line so far. */
  lines: string[];
  /** Resolves with the first line matching `pattern` (one already printed counts). */
  waitForLine(pattern: RegExp, timeoutMs?: number): Promise<string>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stderr(): string;
}>;

export type CrashRig = Readonly<{
  /** The rig's folder (a new one per rig). */
  dir: string;
  /** A file in the rig's folder, e.g. a SQLite store. */
  dbPath(name: string): string;
  /**
   * Starts `src/main.ts` with `env` and resolves once it listens; `connect` points those
   * simulators' webhooks at it.
   */
  startMain(
    env: Record<string, string>,
    options?: Readonly<{ connect?: readonly Simulator[] }>,
  ): Promise<MainProcess>;
  /** Runs a `.ts` fixture with the Node that runs the tests (Node 24, type stripping). */
  runFixture(script: string, args: readonly string[], env?: Record<string, string>): FixtureChild;
  /** `kill -9`, and waits until the process is gone (killed by that signal, not exited by itself). */
  kill9(child: MainProcess | FixtureChild): Promise<void>;
  /** Kills whatever the rig started that still runs: a test's afterEach. */
  killAll(): Promise<void>;
  /** Kills what runs and removes the folder: afterAll. */
  cleanup(): Promise<void>;
}>;

const runFixture = (script: string, args: readonly string[], env: Record<string, string>): FixtureChild => {
  const child = spawn(process.execPath, [script, ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  let buffered = '';
  let err = '';
  const waiters: { pattern: RegExp; resolve: (line: string) => void }[] = [];
  child.stdout.on('data', (chunk: Buffer) => {
    buffered += chunk.toString();
    for (let nl = buffered.indexOf('\n'); nl !== -1; nl = buffered.indexOf('\n')) {
      const line = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      lines.push(line);
      for (const w of waiters.filter((x) => x.pattern.test(line))) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(line);
      }
    }
  });
  child.stderr.on('data', (chunk: Buffer) => {
    err += chunk.toString();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((res) =>
    child.on('exit', (code, signal) => res({ code, signal })),
  );
  return {
    process: child,
    lines,
    stderr: () => err,
    exited,
    waitForLine: (pattern, timeoutMs = WAIT_PATIENCE_MS) =>
      new Promise<string>((res, rej) => {
        const found = lines.find((l) => pattern.test(l));
        if (found) {
          res(found);
          return;
        }
        const bound = Math.max(timeoutMs, WAIT_PATIENCE_MS);
        const timer = setTimeout(
          () => rej(new Error(`no line ${pattern} within ${bound} ms; stderr: ${err.slice(-2000)}`)),
          bound,
        );
        waiters.push({
          pattern,
          resolve: (line) => {
            clearTimeout(timer);
            res(line);
          },
        });
        void exited.then(({ code, signal }) => {
          clearTimeout(timer);
          rej(new Error(`child exited (${code ?? signal}) before ${pattern}; stderr: ${err.slice(-2000)}`));
        });
      }),
  };
};

const isMain = (child: MainProcess | FixtureChild): child is MainProcess => 'url' in child;

export const createCrashRig = (prefix = 'switchboard-crash-'): CrashRig => {
  const tmp = tempDir(prefix);
  const mains: MainProcess[] = [];
  const fixtures: FixtureChild[] = [];
  const rig: CrashRig = {
    dir: tmp.dir,
    dbPath: (name) => join(tmp.dir, name),
    async startMain(env, options = {}) {
      const main = await spawnMain(env);
      mains.push(main);
      if (options.connect) await connectAll(options.connect, main.url);
      return main;
    },
    runFixture(script, args, env = {}) {
      const child = runFixture(script, args, env);
      fixtures.push(child);
      return child;
    },
    async kill9(child) {
      if (isMain(child)) {
        child.child.kill('SIGKILL');
        expect(await child.exited).toBe('SIGKILL');
      } else {
        child.process.kill('SIGKILL');
        expect((await child.exited).signal).toBe('SIGKILL');
      }
    },
    async killAll() {
      await killAll(mains);
      for (const f of fixtures.splice(0)) {
        if (f.process.exitCode === null && f.process.signalCode === null) {
          f.process.kill('SIGKILL');
          await f.exited;
        }
      }
    },
    async cleanup() {
      await rig.killAll();
      tmp.cleanup();
    },
  };
  return rig;
};

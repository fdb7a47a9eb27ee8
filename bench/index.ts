/**
 * `npm run bench`: runs every `bench/*.bench.ts` one after another with this Node (24), passing
 * the arguments through (`npm run bench -- --quick` for a smoke run). Each prints one JSON line
 * per figure on stdout (`{"bench","value","unit","baseline","baselineValue","ratio"}`) and its
 * progress on stderr. Exits non-zero if any bench fails.
 */
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';

const dir = resolve(import.meta.dirname);
const only = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const flags = process.argv.slice(2).filter((a) => a.startsWith('--'));
const benches = readdirSync(dir)
  .filter((f) => f.endsWith('.bench.ts'))
  .filter((f) => only.length === 0 || only.some((o) => f.includes(o)))
  .sort();

let failed = 0;
for (const file of benches) {
  process.stderr.write(`== ${file}\n`);
  const code = await new Promise<number>((done) => {
    const child = spawn(process.execPath, [join(dir, file), ...flags], { stdio: 'inherit' });
    child.on('exit', (c, signal) => done(c ?? (signal ? 1 : 0)));
  });
  if (code !== 0) {
    failed++;
    process.stderr.write(`== ${file} failed (exit ${code})\n`);
  }
}
process.exit(failed === 0 ? 0 : 1);

/**
 * Shared helpers for `bench/*.bench.ts` scripts: one JSON line per figure on stdout, statistics,
 * interleaved candidate/baseline rounds, temp directories.
 *
 * The machine is shared and noisy, so every figure is a candidate measured side by side with its
 * baseline in the same run: rounds alternate (A B, B A, A B, …) and the medians are compared.
 *
 * @example
 * const { candidate, baseline } = await interleave(7, { candidate: runPort, baseline: runRaw });
 * emit({ bench: 'store.append.single', value: candidate, unit: 'appends/s',
 *        baseline: 'raw node:sqlite insert', baselineValue: baseline });
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

export type BenchLine = Readonly<{
  bench: string;
  value: number;
  unit: string;
  baseline: string;
  baselineValue: number;
  /** value / baselineValue; computed by `emit` when omitted. */
  ratio?: number;
  /** The figure's target as the issue states it (`"ratio <= 1.5"`, `"value <= 25 ms"`); omitted when it has none. */
  target?: string;
  /** Whether this run met `target`. */
  met?: boolean;
}>;

const round = (n: number, digits: number): number => {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
};

/**
 * Prints one figure as one JSON line on stdout: `{"bench","value","unit","baseline","baselineValue","ratio"}`,
 * followed by `"target","met"` when the line has a target.
 */
export const emit = (line: BenchLine): void => {
  const ratio = line.ratio ?? line.value / line.baselineValue;
  process.stdout.write(
    `${JSON.stringify({
      bench: line.bench,
      value: round(line.value, 1),
      unit: line.unit,
      baseline: line.baseline,
      baselineValue: round(line.baselineValue, 1),
      ratio: round(ratio, 3),
      ...(line.target === undefined ? {} : { target: line.target }),
      ...(line.met === undefined ? {} : { met: line.met }),
    })}\n`,
  );
};

/** Progress and commentary go to stderr so stdout stays machine-readable. */
export const note = (message: string): void => {
  process.stderr.write(`${message}\n`);
};

/** The p-th percentile (0..100) by nearest rank; `NaN` for no samples. */
export const percentile = (samples: readonly number[], p: number): number => {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank]!;
};

/** The median (mean of the two middle samples for an even count); `NaN` for no samples. */
export const median = (samples: readonly number[]): number => {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

/**
 * Runs `rounds` rounds of candidate and baseline, alternating which goes first, and returns the
 * median of each side's per-round results (each run returns a rate, e.g. events per second) and
 * `pairedRatio`, the median over rounds of candidate / baseline within the round: the two runs of a
 * round are adjacent in time, so a disk or CPU that drifts over the run cancels out of it.
 */
export const interleave = async (
  rounds: number,
  runs: Readonly<{
    candidate: (round: number) => Promise<number>;
    baseline: (round: number) => Promise<number>;
  }>,
): Promise<{
  candidate: number;
  baseline: number;
  pairedRatio: number;
  candidateRounds: number[];
  baselineRounds: number[];
}> => {
  const candidateRounds: number[] = [];
  const baselineRounds: number[] = [];
  for (let r = 0; r < rounds; r++) {
    if (r % 2 === 0) {
      candidateRounds.push(await runs.candidate(r));
      baselineRounds.push(await runs.baseline(r));
    } else {
      baselineRounds.push(await runs.baseline(r));
      candidateRounds.push(await runs.candidate(r));
    }
  }
  return {
    candidate: median(candidateRounds),
    baseline: median(baselineRounds),
    pairedRatio: median(candidateRounds.map((c, i) => c / baselineRounds[i]!)),
    candidateRounds,
    baselineRounds,
  };
};

/** Operations per second of `count` operations that took `ms` milliseconds. */
export const perSecond = (count: number, ms: number): number => (count * 1000) / ms;

/** A fresh directory under the OS temp dir; `cleanup()` removes it with everything inside. */
/** The benches' data key ring (SWITCHBOARD_DATA_KEYS): one fixed key, never a real one. */
export const BENCH_DATA_KEYS = `bench:${Buffer.alloc(32, 0x42).toString('base64')}`;

export const tempDir = (prefix: string): { path: string; cleanup: () => void } => {
  const path = mkdtempSync(join(tmpdir(), `${prefix}-`));
  return { path, cleanup: () => rmSync(path, { recursive: true, force: true }) };
};

export type Server = { url: string; child: ChildProcess; stop(): Promise<void> };

/** Spawns a server script and resolves when it logs `Switchboard is listening` with its port. */
export const startChild = (args: string[], env: Record<string, string>): Promise<Server> =>
  new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, args, {
      cwd: resolve(import.meta.dirname, '..'),
      env: { PATH: process.env['PATH'] ?? '', ...env },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let buffer = '';
    const onData = (chunk: Buffer) => {
      buffer += chunk.toString();
      const m =
        /"msg":"Switchboard is listening"[^\n]*?"port":(\d+)|"port":(\d+)[^\n]*"msg":"Switchboard is listening"/.exec(
          buffer,
        );
      if (!m) return;
      child.stdout?.off('data', onData);
      child.stdout?.resume();
      resolvePromise({
        url: `http://127.0.0.1:${m[1] ?? m[2]}`,
        child,
        stop: () =>
          new Promise((done) => {
            child.once('exit', () => done());
            child.kill('SIGTERM');
          }),
      });
    };
    child.stdout?.on('data', onData);
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited ${code} before listening`)));
  });

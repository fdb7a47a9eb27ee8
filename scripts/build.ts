/**
 * `npm run build [-- <out dir>]`: bundles what the image runs into `dist/` (or the given folder):
 * the app (`main.mjs`, from src/main.ts) and the operator commands (`events.mjs`, `keys.mjs`,
 * `pagerdutyWebhook.mjs`, from src/cli/), with rolldown, as ES modules for Node 24.
 *
 * Why a bundle (docs/benchmarks.md, "Start-up"): Node 24 runs the TypeScript sources as they are,
 * but a start then resolves, reads, strips and compiles some 1,300 files one by one; the bundle is
 * a few files compiled in one go, and a start takes about half the CPU time. Each lifecycle's
 * module stays a chunk of its own, loaded by its dynamic `import()` only when it is switched on;
 * the KurrentDB client stays outside the bundle (in node_modules: a native bridge and gRPC, loaded
 * only for a `kurrentdb://` store). Source maps sit beside the chunks: `NODE_OPTIONS=
 * --enable-source-maps` shows stack traces in the TypeScript sources. Tests and `npm start` run the
 * sources; test/app/bundle.int.test.ts starts the bundle.
 */
import { rmSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { relative, resolve } from 'node:path';
import { rolldown } from 'rolldown';

const ROOT = resolve(import.meta.dirname, '..');

/** The entry points, by the name of the file each becomes. */
export const BUNDLE_ENTRIES = {
  main: 'src/main.ts',
  events: 'src/cli/events.ts',
  keys: 'src/cli/keys.ts',
  pagerdutyWebhook: 'src/cli/pagerdutyWebhook.ts',
} as const;

/** Left to node_modules: Node's own modules, and the KurrentDB client (native bridge, gRPC). */
const EXTERNAL = [/^node:/, ...builtinModules, /^@kurrent\/kurrentdb-client(\/|$)/];

/** A file the build wrote: its name under the out folder and, for a chunk, the module it stands for. */
export type BuiltFile = Readonly<{ fileName: string; module: string | null }>;

/**
 * Builds the bundle into `outDir` (emptied first); resolves with the files written, each chunk
 * with the module it stands for (repository-relative: `handlers/timeOff/module.ts`), if any.
 */
export const buildBundle = async (outDir: string): Promise<BuiltFile[]> => {
  rmSync(outDir, { recursive: true, force: true });
  const bundle = await rolldown({
    cwd: ROOT,
    input: Object.fromEntries(
      Object.entries(BUNDLE_ENTRIES).map(([name, file]) => [name, resolve(ROOT, file)]),
    ),
    platform: 'node',
    external: EXTERNAL,
    // A warning is a bundling problem someone should see, not noise: it fails the build.
    onLog: (level, log) => {
      if (level === 'warn') throw new Error(`rolldown: ${log.message}`);
    },
  });
  try {
    const { output } = await bundle.write({
      dir: outDir,
      format: 'esm',
      entryFileNames: '[name].mjs',
      chunkFileNames: 'chunks/[name]-[hash].mjs',
      sourcemap: true,
    });
    return output.map((o) => ({
      fileName: o.fileName,
      module:
        o.type === 'chunk' && o.facadeModuleId
          ? relative(ROOT, o.facadeModuleId).split('\\').join('/')
          : null,
    }));
  } finally {
    await bundle.close();
  }
};

if (import.meta.main) {
  const out = resolve(process.cwd(), process.argv[2] ?? resolve(ROOT, 'dist'));
  const started = performance.now();
  const files = await buildBundle(out);
  process.stdout.write(
    `built ${files.filter((f) => f.fileName.endsWith('.mjs')).length} files into ${out} in ${Math.round(performance.now() - started)} ms\n`,
  );
}

import { readdirSync, readFileSync } from 'node:fs';
import { join, posix, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * Layers point one way. The product's import graph (every `.ts` file under `src/`, `machines/` and
 * `handlers/`; static imports, `import type`, re-exports and dynamic `import()` alike, relative
 * specifiers resolved against their file) has:
 *
 * - no loop, type imports included;
 * - a shared kernel that never imports a lifecycle or `handlers/`;
 * - lifecycles that never import one another: they meet only through src/lifecycles/ports.ts;
 * - machines that import nothing but machines (pure rules);
 * - `src/` importing `handlers/` only from the composition root.
 *
 * Every product file belongs to exactly one part below; a new folder (a new lifecycle) is named
 * here first (docs/adding-a-lifecycle.md), so nothing slips through unclassified.
 */

const ROOT = resolve(import.meta.dirname, '../..');
const PRODUCT = ['src', 'machines', 'handlers'] as const;

/** The shared kernel: what every lifecycle builds on. */
const KERNEL = [
  'src/application/',
  'src/core/',
  'src/eventStore/',
  'src/http/',
  'src/people/',
  'src/processors/',
  'src/slack/',
  'src/upstream/',
  'src/config.ts',
  'src/logger.ts',
  'src/metrics.ts',
  // The lifecycle interface: what a module declares and plugs in, and how modules are joined.
  'src/lifecycles/lifecycle.ts',
  'src/lifecycles/ports.ts',
  'src/lifecycles/compose.ts',
  'src/lifecycles/config.ts',
  'src/lifecycles/home.reactor.ts',
];

/** Each lifecycle's folders: its rules, its effects and read models, its edge and composition. */
const LIFECYCLES: Readonly<Record<string, readonly string[]>> = {
  incidents: ['machines/incident/', 'machines/incidentRouting/', 'src/incidents/', 'handlers/incident/'],
  verification: ['machines/verification/', 'src/verification/', 'handlers/verification/'],
  timeOff: ['machines/timeOff/', 'src/timeOff/', 'handlers/timeOff/'],
};

/** Pure rules every lifecycle shares. */
const SHARED_RULES = ['machines/shared/'];
/** The Slack edge every lifecycle shares (recording middleware, App Home, the edge's answers). */
const SHARED_EDGE = [
  'handlers/index.ts',
  'handlers/replies.ts',
  'handlers/middleware/',
  'handlers/events/',
  'handlers/webhooks/',
];
/** The composition root: the one place that lists the lifecycles and wires them with the kernel. */
const ROOT_FILES = ['src/app.ts', 'src/main.ts', 'src/lifecycleList.ts'];
/** Operator commands (`npm run events`, `keys`, `pagerduty:webhook`): programs of their own. */
const COMMANDS = ['src/cli/'];

type Part =
  | Readonly<{ kind: 'kernel' | 'sharedRules' | 'sharedEdge' | 'root' | 'commands' }>
  | Readonly<{ kind: 'lifecycle'; name: string }>;

const under = (file: string, prefixes: readonly string[]) =>
  prefixes.some((p) => (p.endsWith('/') ? file.startsWith(p) : file === p));

const partOf = (file: string): Part | undefined => {
  if (under(file, KERNEL)) return { kind: 'kernel' };
  for (const [name, folders] of Object.entries(LIFECYCLES))
    if (under(file, folders)) return { kind: 'lifecycle', name };
  if (under(file, SHARED_RULES)) return { kind: 'sharedRules' };
  if (under(file, SHARED_EDGE)) return { kind: 'sharedEdge' };
  if (under(file, ROOT_FILES)) return { kind: 'root' };
  if (under(file, COMMANDS)) return { kind: 'commands' };
  return undefined;
};

type Graph = ReadonlyMap<string, readonly string[]>;

/** The repository-relative files `file` imports (any kind of import; bare package names skipped). */
const importTargets = (file: string, text: string): string[] =>
  ts
    .preProcessFile(text, true, true)
    .importedFiles.map((i) => i.fileName)
    .filter((spec) => spec.startsWith('./') || spec.startsWith('../'))
    .map((spec) => posix.normalize(posix.join(posix.dirname(file), spec)));

const productFiles = (): string[] =>
  PRODUCT.flatMap((folder) =>
    (readdirSync(join(ROOT, folder), { recursive: true, encoding: 'utf8' }) as string[])
      .map((f) => posix.join(folder, f.split('\\').join('/')))
      .filter((f) => f.endsWith('.ts')),
  ).sort();

const productGraph = (): Graph =>
  new Map(productFiles().map((f) => [f, importTargets(f, readFileSync(join(ROOT, f), 'utf8'))]));

/**
 * The loops of `graph`: its strongly connected components of more than one file (or a file that
 * imports itself), each as its files and the imports that tie them, sorted (Tarjan's algorithm).
 */
const loopsOf = (graph: Graph): string[][] => {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const loops: string[][] = [];
  const visit = (v: string) => {
    index.set(v, index.size);
    low.set(v, index.get(v) ?? 0);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) ?? 0, low.get(w) ?? 0));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v) ?? 0, index.get(w) ?? 0));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    for (let w = stack.pop(); w !== undefined; w = stack.pop()) {
      onStack.delete(w);
      component.push(w);
      if (w === v) break;
    }
    if (component.length > 1 || (graph.get(v) ?? []).includes(v)) {
      const inside = new Set(component);
      loops.push(
        component
          .sort()
          .flatMap((a) => (graph.get(a) ?? []).filter((b) => inside.has(b)).map((b) => `${a} -> ${b}`)),
      );
    }
  };
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) visit(v);
  return loops;
};

/** Why `from` may not import `to`, or undefined when it may. */
const forbiddenImport = (from: string, to: string): string | undefined => {
  const a = partOf(from);
  const b = partOf(to);
  if (!a || !b) return undefined; // reported by the classification test
  if (a.kind === 'kernel' && (b.kind === 'lifecycle' || to.startsWith('handlers/')))
    return 'the kernel imports a lifecycle or handlers/';
  if (a.kind === 'lifecycle' && b.kind === 'lifecycle' && a.name !== b.name)
    return 'a lifecycle imports another one (they meet through src/lifecycles/ports.ts)';
  if (from.startsWith('machines/') && !to.startsWith('machines/'))
    return 'machines/ imports outside machines/ (rules are pure)';
  if (from.startsWith('src/') && to.startsWith('handlers/') && a.kind !== 'root')
    return 'src/ imports handlers/ outside the composition root';
  if (b.kind === 'root' && a.kind !== 'root' && a.kind !== 'commands')
    return 'the composition root is imported from below it';
  return undefined;
};

describe('layers point one way', () => {
  const graph = productGraph();

  it('knows which part of the house every product file is in', () => {
    expect(graph.size).toBeGreaterThan(100);
    expect([...graph.keys()].filter((f) => partOf(f) === undefined)).toEqual([]);
  });

  it('has no import loop, type imports included', () => {
    expect(loopsOf(graph)).toEqual([]);
  });

  it('imports only downwards: kernel ← lifecycles ← composition root, lifecycles apart', () => {
    const found = [...graph].flatMap(([from, targets]) =>
      targets.flatMap((to) => {
        const why = forbiddenImport(from, to);
        return why ? [`${from} -> ${to}: ${why}`] : [];
      }),
    );
    expect(found).toEqual([]);
  });

  it('sees every kind of import, and real loops and wrong turns', () => {
    const text = [
      "import { a } from './a.ts';",
      "import type { B } from '../b.ts';",
      "export * from './c.ts';",
      "export type { D } from './d.ts';",
      "const e = await import('../../handlers/e.ts');",
      "import { z } from 'zod';",
    ].join('\n');
    expect(importTargets('src/http/f.ts', text)).toEqual([
      'src/http/a.ts',
      'src/b.ts',
      'src/http/c.ts',
      'src/http/d.ts',
      'handlers/e.ts',
    ]);
    const loop = new Map([
      ['a.ts', ['b.ts']],
      ['b.ts', ['c.ts', 'd.ts']],
      ['c.ts', ['a.ts']],
      ['d.ts', []],
      ['e.ts', ['e.ts']],
    ]);
    expect(loopsOf(loop)).toEqual([['a.ts -> b.ts', 'b.ts -> c.ts', 'c.ts -> a.ts'], ['e.ts -> e.ts']]);
    expect(forbiddenImport('src/slack/blocks/format.ts', 'machines/incident/events.ts')).toContain('kernel');
    expect(forbiddenImport('src/lifecycles/lifecycle.ts', 'handlers/index.ts')).toContain('kernel');
    expect(forbiddenImport('src/timeOff/x.ts', 'src/incidents/y.ts')).toContain('another');
    expect(forbiddenImport('handlers/timeOff/x.ts', 'machines/incident/y.ts')).toContain('another');
    expect(forbiddenImport('machines/timeOff/x.ts', 'src/core/y.ts')).toContain('pure');
    expect(forbiddenImport('src/timeOff/x.ts', 'handlers/timeOff/y.ts')).toContain('composition root');
    expect(forbiddenImport('src/app.ts', 'handlers/index.ts')).toBeUndefined();
    expect(forbiddenImport('handlers/timeOff/x.ts', 'src/timeOff/y.ts')).toBeUndefined();
    expect(forbiddenImport('src/timeOff/x.ts', 'src/lifecycles/ports.ts')).toBeUndefined();
  });
});

import { readdirSync, readFileSync } from 'node:fs';
import { join, posix, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * The product (what the Docker image holds: `src/`, `handlers/`, `machines/`) never imports the
 * sandbox, the tests or the benches: the image leaves those folders out, and the product must not
 * need them. The sandbox, in turn, is a product command of its own and never imports the tests or
 * the benches. Import specifiers are read with TypeScript's own pre-processor (static, type-only,
 * re-exports and dynamic `import()`), and relative ones are resolved against their file.
 */

const ROOT = resolve(import.meta.dirname, '../..');
const SOURCE = /\.(?:ts|mts|cts|js|mjs|cjs)$/;

type Rule = Readonly<{ folders: readonly string[]; mayNotImport: readonly string[] }>;
const RULES: readonly Rule[] = [
  { folders: ['src', 'handlers', 'machines'], mayNotImport: ['sandbox', 'test', 'bench'] },
  { folders: ['sandbox'], mayNotImport: ['test', 'bench'] },
];

const filesUnder = (folder: string): string[] =>
  (readdirSync(join(ROOT, folder), { recursive: true, encoding: 'utf8' }) as string[])
    .map((f) => posix.join(folder, f.split('\\').join('/')))
    .filter((f) => SOURCE.test(f) && !f.includes('/node_modules/'));

/** The repository-relative targets of `file`'s relative imports (bare package names are skipped). */
const importTargets = (file: string, text: string): string[] =>
  ts
    .preProcessFile(text, true, true)
    .importedFiles.map((i) => i.fileName)
    .filter((spec) => spec.startsWith('./') || spec.startsWith('../') || spec.startsWith('/'))
    .map((spec) =>
      spec.startsWith('/')
        ? posix.relative(ROOT.split('\\').join('/'), spec)
        : posix.normalize(posix.join(posix.dirname(file), spec)),
    );

const forbidden = (target: string, folders: readonly string[]) =>
  target.startsWith('../') || folders.some((f) => target === f || target.startsWith(`${f}/`));

describe('import boundaries', () => {
  for (const rule of RULES) {
    it(`${rule.folders.join(', ')} never import ${rule.mayNotImport.join(', ')}`, () => {
      const files = rule.folders.flatMap(filesUnder);
      expect(files.length).toBeGreaterThan(10);
      const found = files.flatMap((file) =>
        importTargets(file, readFileSync(join(ROOT, file), 'utf8'))
          .filter((t) => forbidden(t, rule.mayNotImport))
          .map((t) => `${file} imports ${t}`),
      );
      expect(found).toEqual([]);
    });
  }

  it('sees every kind of import, resolved against its file', () => {
    const text = [
      "import { a } from '../../sandbox/x.ts';",
      "import type { B } from '../support/y.ts';",
      "export * from './z.ts';",
      "const m = await import('../../bench/w.ts');",
      "import { z } from 'zod';",
    ].join('\n');
    expect(importTargets('src/http/f.ts', text)).toEqual([
      'sandbox/x.ts',
      'src/support/y.ts',
      'src/http/z.ts',
      'bench/w.ts',
    ]);
    expect(forbidden('sandbox/x.ts', ['sandbox', 'test'])).toBe(true);
    expect(forbidden('src/sandboxed.ts', ['sandbox'])).toBe(false);
    expect(forbidden('../elsewhere/x.ts', ['sandbox'])).toBe(true);
  });
});

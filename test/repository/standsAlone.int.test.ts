import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, posix, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The repository stands alone: a clone with nothing beside it runs the sandbox and the tests. So no
 * tracked file (code, comment, Markdown, configuration) may point at a `shared` folder outside the
 * repository, the way the simulators once read the vendor specs from a folder next to the clone.
 *
 * A relative reference (`../…/shared`) is fine only when, resolved against the file it is in, it
 * names a folder of the repository (`machines/shared/`, from `machines/incident/`); one that leaves
 * the repository, or names a folder the repository does not have (prose that meant "beside the
 * clone"), fails. An absolute filesystem path through a `shared` folder always fails.
 */

const ROOT = resolve(import.meta.dirname, '../..');

/** `../` runs followed by `shared`, captured with the runs. */
const RELATIVE = /(?<![\w.-])((?:\.\.\/)+)shared\b/g;
/** An absolute filesystem path through a `shared` folder (URLs are not filesystem paths). */
const ABSOLUTE = /(?<![\w:/.-])(?:\/[\w.-]+)+\/shared\b/g;

type OutsideReference = Readonly<{ file: string; line: number; text: string }>;

/**
 * References in `text` (the content of `file`, a repository-relative path) to a `shared` folder
 * that is not one of `folders` (the repository's folders, repository-relative).
 */
const referencesOutside = (file: string, text: string, folders: ReadonlySet<string>): OutsideReference[] => {
  const found: OutsideReference[] = [];
  const lineOf = (index: number) => text.slice(0, index).split('\n').length;
  for (const m of text.matchAll(RELATIVE)) {
    const target = posix.normalize(posix.join(posix.dirname(file), `${m[1]}shared`));
    if (target.startsWith('../') || !folders.has(target))
      found.push({ file, line: lineOf(m.index), text: m[0] });
  }
  for (const m of text.matchAll(ABSOLUTE)) found.push({ file, line: lineOf(m.index), text: m[0] });
  return found;
};

const foldersOf = (files: readonly string[]): Set<string> => {
  const folders = new Set<string>();
  for (const f of files) for (let d = posix.dirname(f); d !== '.'; d = posix.dirname(d)) folders.add(d);
  return folders;
};

const trackedFiles = (): string[] =>
  execFileSync('git', ['ls-files', '-z'], { cwd: ROOT, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 })
    .split('\0')
    .filter((f) => f !== '');

describe('the repository stands alone', () => {
  it('no tracked file refers to a shared folder outside the repository', () => {
    const files = trackedFiles();
    expect(files.length).toBeGreaterThan(100);
    const folders = foldersOf(files);
    expect(folders.has('machines/shared')).toBe(true);
    const found: OutsideReference[] = [];
    for (const file of files) {
      const bytes = readFileSync(join(ROOT, file));
      if (bytes.includes(0)) continue; // binary
      found.push(...referencesOutside(file, bytes.toString('utf8'), folders));
    }
    expect(found.map((r) => `${r.file}:${r.line}: ${r.text}`)).toEqual([]);
  });

  it('resolves each reference against its own file', () => {
    const folders = foldersOf(['machines/shared/messages.ts', 'machines/incident/events.ts', 'test/a.ts']);
    const up = (n: number) => '../'.repeat(n);
    const check = (file: string, text: string) => referencesOutside(file, text, folders);
    // Leaving the repository: one level up from a top-level file, two from test/.
    expect(check('README.md', `see ${up(1)}shared/specs`)).toHaveLength(1);
    expect(check('test/a.ts', `new URL('${up(2)}shared/specs/', import.meta.url)`)).toHaveLength(1);
    expect(check('a/b/c/d.ts', `'${up(4)}shared/specs'`)).toEqual([
      { file: 'a/b/c/d.ts', line: 1, text: `${up(4)}shared` },
    ]);
    // Inside, but not a folder the repository has: prose meaning "beside the clone".
    expect(check('test/a.ts', `the specs in ${up(1)}shared/specs`)).toHaveLength(1);
    expect(check('docs/x.md', `line one\n[specs](${up(1)}shared/specs)`)).toEqual([
      { file: 'docs/x.md', line: 2, text: `${up(1)}shared` },
    ]);
    // The repository's own shared folder.
    expect(check('machines/incident/e.ts', `from '${up(1)}shared/messages.ts'`)).toEqual([]);
    // Absolute paths through a shared folder; not URLs, not repository paths.
    expect(check('x.md', `cp ${['', 'work', 'shared', 'specs'].join('/')} .`)).toHaveLength(1);
    expect(check('x.md', 'https://example.org/shared/specs and machines/shared/x.ts')).toEqual([]);
  });
});

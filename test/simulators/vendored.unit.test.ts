import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The vendor documents under `sandbox/simulators/<vendor>/{specs,samples}/` are copies, byte for
 * byte, of what the vendors publish. Each folder's README names every file with its sha256; this
 * keeps the README and the folder in step, so an edited, reformatted or unlisted file fails here.
 */

const ROOT = resolve(import.meta.dirname, '../..');
const FOLDERS = [
  'sandbox/simulators/pagerduty/specs',
  'sandbox/simulators/pagerduty/samples',
  'sandbox/simulators/vonage/specs',
];

const listedHashes = (readme: string): Map<string, string> => {
  const out = new Map<string, string>();
  for (const m of readme.matchAll(/^\|\s*`([^`]+)`\s*\|\s*`([0-9a-f]{64})`\s*\|$/gm)) out.set(m[1]!, m[2]!);
  return out;
};

describe('vendored vendor documents', () => {
  for (const folder of FOLDERS) {
    it(`${folder}: every file is listed in its README with the sha256 it has`, () => {
      const dir = join(ROOT, folder);
      const listed = listedHashes(readFileSync(join(dir, 'README.md'), 'utf8'));
      const files = readdirSync(dir).filter((f) => f !== 'README.md');
      expect(files.length).toBeGreaterThan(0);
      expect([...listed.keys()].sort()).toEqual([...files].sort());
      for (const f of files) {
        const actual = createHash('sha256')
          .update(readFileSync(join(dir, f)))
          .digest('hex');
        expect({ file: f, sha256: actual }).toEqual({ file: f, sha256: listed.get(f) });
      }
    });
  }
});

import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BUNDLE_ENTRIES } from '../../scripts/build.ts';

/**
 * No Docker engine runs here, so the image is never built in a test: this keeps the Dockerfile
 * coherent with the bundle instead. Its build stage bundles every product folder with
 * scripts/build.ts, and the image runs what that build writes (test/app/bundle.int.test.ts starts
 * the same bundle), with the dependencies the bundle leaves outside installed.
 */

const ROOT = resolve(import.meta.dirname, '../..');
const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8').replace(/\\\n\s*/g, ' ');
const stages = dockerfile.split(/^FROM /m).slice(1);
const named = (name: string) => stages.find((s) => s.split('\n')[0]?.includes(` AS ${name}`)) ?? '';

describe('the Dockerfile', () => {
  it('bundles every product folder with scripts/build.ts', () => {
    const build = named('build');
    for (const folder of ['src', 'machines', 'handlers'])
      expect(build).toContain(`COPY ${folder} ./${folder}`);
    expect(build).toContain('COPY scripts/build.ts ./scripts/build.ts');
    expect(build).toMatch(/^RUN node scripts\/build\.ts dist$/m);
  });

  it('runs the bundled app, with the operator commands beside it', () => {
    const image = stages.at(-1) ?? '';
    expect(image).toContain('COPY --from=build /app/dist ./dist');
    expect(image).toMatch(/^CMD \["node", "dist\/main\.mjs"\]$/m);
    expect(Object.keys(BUNDLE_ENTRIES)).toEqual(['main', 'events', 'keys', 'pagerdutyWebhook']);
    // What the bundle leaves outside is a production dependency, so the image has it.
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
    };
    expect(pkg.dependencies).toHaveProperty('@kurrent/kurrentdb-client');
    expect(image).toContain('COPY --from=deps /app/node_modules ./node_modules');
  });
});

import { spawnSync } from 'node:child_process';
import { mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHiBobSimulator } from '../../sandbox/simulators/hibob/index.ts';
import { startPagerDutySimulator } from '../../sandbox/simulators/pagerduty/index.ts';
import { type Simulator, simulatorEnv, stopAll } from '../../sandbox/simulators/simulator.ts';
import { type FakeSlack, startFakeSlack } from '../../sandbox/simulators/slack/fakeSlack.ts';
import { slashCommandBody } from '../../sandbox/simulators/slack/signing.ts';
import { startVonageSimulator } from '../../sandbox/simulators/vonage/index.ts';
import { type BuiltFile, buildBundle } from '../../scripts/build.ts';
import {
  NODE24,
  postSigned,
  ROOT,
  spawnMain,
  TEST_BOT_TOKEN,
  tempDir,
  testEnv,
} from '../support/startApp.ts';

/**
 * What the image runs (Dockerfile): the bundle scripts/build.ts makes of src/main.ts and of the
 * operator commands, not the sources every other test runs. It is built once, beside a link to
 * node_modules, as /app/dist sits beside /app/node_modules in the image.
 *
 * A start loads only what its configuration uses: a lifecycle's module (its chunk in the bundle,
 * `handlers/<lifecycle>/module.ts` and what it imports in the sources) only when the lifecycle is
 * switched on, and the store CLI none. Which files a process loaded is read from a module loader
 * hook given to it with `--import`, which prints them when it exits.
 */

const LOADED = 'switchboard-test-loaded:';
const loadedHook = `data:text/javascript,${encodeURIComponent(
  [
    "import { registerHooks } from 'node:module';",
    'const seen = [];',
    'registerHooks({ load(url, context, next) { seen.push(url); return next(url, context); } });',
    `process.on('exit', () => process.stderr.write('\\n${LOADED}' + JSON.stringify(seen) + '\\n'));`,
  ].join('\n'),
)}`;

/** The file URLs a process loaded, from what the hook printed. */
const loadedBy = (output: string): string[] => {
  const line = output.split('\n').find((l) => l.startsWith(LOADED));
  if (!line) throw new Error(`the process printed no list of loaded files:\n${output.slice(-2000)}`);
  return (JSON.parse(line.slice(LOADED.length)) as string[]).filter((u) => u.startsWith('file:'));
};

const LIFECYCLE_FOLDERS = ['incident', 'verification', 'timeOff'].map((l) => `handlers/${l}/`);

let fake: FakeSlack;
let simulators: Simulator[];
const tmp = tempDir('switchboard-bundle-');
const dist = join(tmp.dir, 'app', 'dist');
let built: BuiltFile[];
/** The chunk of each lifecycle's module (`handlers/<lifecycle>/module.ts`), as file URLs. */
let lifecycleChunks: string[];

beforeAll(async () => {
  built = await buildBundle(dist);
  symlinkSync(join(ROOT, 'node_modules'), join(tmp.dir, 'app', 'node_modules'));
  lifecycleChunks = built
    .filter((f) => f.module !== null && LIFECYCLE_FOLDERS.some((d) => f.module?.startsWith(`${d}module.ts`)))
    .map((f) => pathToFileURL(join(dist, f.fileName)).href);
  fake = await startFakeSlack({ botToken: TEST_BOT_TOKEN });
  simulators = [
    fake,
    await startPagerDutySimulator({}),
    await startVonageSimulator(),
    await startHiBobSimulator({}),
  ];
}, 60_000);

afterAll(async () => {
  await stopAll(simulators ?? []);
  tmp.cleanup();
});

let n = 0;
const dbPath = () => {
  const dir = join(tmp.dir, `store-${++n}`);
  mkdirSync(dir);
  return join(dir, 'switchboard.db');
};

describe('the bundle the image runs', () => {
  it('holds the app, the operator commands and one chunk per lifecycle module', () => {
    const names = built.map((f) => f.fileName);
    expect(names).toEqual(
      expect.arrayContaining(['main.mjs', 'events.mjs', 'keys.mjs', 'pagerdutyWebhook.mjs', 'main.mjs.map']),
    );
    expect(lifecycleChunks).toHaveLength(3);
  });

  it('starts with every lifecycle on, loading each module, answers a command, and stops with 0', async () => {
    const db = dbPath();
    const env = testEnv(fake, db, { ...simulatorEnv(simulators.slice(1)), LOG_LEVEL: 'info' });
    const app = await spawnMain(env, 30_000, {
      command: [NODE24, '--import', loadedHook, join(dist, 'main.mjs')],
    });
    try {
      expect((await fetch(`${app.url}/healthz`)).status).toBe(200);
      const res = await postSigned(
        `${app.url}/slack/events`,
        slashCommandBody({ command: '/incident', text: 'help', user_id: 'U0ALICE' }),
        'form',
      );
      expect(res.status).toBe(200);
      expect(await res.text()).toContain('Incidents in Slack');
    } finally {
      app.child.kill('SIGTERM');
    }
    expect(await app.exited).toBe(0);
    const loaded = loadedBy(app.output());
    expect(lifecycleChunks.filter((c) => loaded.includes(c))).toHaveLength(3);
    // Nothing from the sources: the bundle stands alone (the KurrentDB client aside, not needed here).
    expect(loaded.filter((u) => !u.startsWith(pathToFileURL(dist).href))).toEqual([]);

    // The store CLI of the bundle reads the store the app wrote, and loads no lifecycle.
    const cli = spawnSync(NODE24, ['--import', loadedHook, join(dist, 'events.mjs'), 'streams', '--json'], {
      env: { PATH: process.env['PATH'] ?? '', EVENT_STORE_URL: `sqlite:${db}` },
      encoding: 'utf8',
    });
    expect(cli.status).toBe(0);
    expect(cli.stdout).toContain('processor-claim-inbox-dispatch');
    expect(lifecycleChunks.filter((c) => loadedBy(cli.stderr).includes(c))).toEqual([]);
  });

  it('with every lifecycle off, loads none of their modules', async () => {
    const app = await spawnMain(testEnv(fake, dbPath(), { LOG_LEVEL: 'info' }), 30_000, {
      command: [NODE24, '--import', loadedHook, join(dist, 'main.mjs')],
    });
    app.child.kill('SIGTERM');
    expect(await app.exited).toBe(0);
    expect(lifecycleChunks.filter((c) => loadedBy(app.output()).includes(c))).toEqual([]);
  });
});

describe('the sources (npm start)', () => {
  it('with every lifecycle off, load none of their modules, listeners or reactors', async () => {
    const app = await spawnMain(testEnv(fake, dbPath(), { LOG_LEVEL: 'info' }), 30_000, {
      command: [NODE24, '--import', loadedHook, join(ROOT, 'src/main.ts')],
    });
    app.child.kill('SIGTERM');
    expect(await app.exited).toBe(0);
    const repoFiles = loadedBy(app.output())
      .filter((u) => u.startsWith(pathToFileURL(ROOT).href))
      .map((u) => u.slice(pathToFileURL(ROOT).href.length + 1));
    expect(repoFiles).toContain('src/main.ts');
    // Each lifecycle's declaration (its configuration) is read; nothing else of it.
    const ofLifecycles = repoFiles.filter((f) =>
      /^(handlers\/(incident|verification|timeOff)|src\/(incidents|verification|timeOff))\//.test(f),
    );
    expect(
      ofLifecycles.filter((f) => !/^src\/\w+\/(config|pagingConfig|workingConfig)\.ts$/.test(f)),
    ).toEqual([]);
  });
});

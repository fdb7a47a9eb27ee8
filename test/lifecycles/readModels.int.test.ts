import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type FakeSlack, startFakeSlack } from '../../sandbox/simulators/slack/fakeSlack.ts';
import { createSwitchboard, type Switchboard } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { ALL_LIFECYCLES, LIFECYCLES, loadReadModels } from '../../src/lifecycleList.ts';
import { defineLifecycle, type LifecycleModule } from '../../src/lifecycles/lifecycle.ts';
import { createLogger } from '../../src/logger.ts';
import { createResumableState, readModelProcessor } from '../../src/processors/snapshots.ts';
import { caught } from '../support/caught.ts';
import { createLogSink } from '../support/logSink.ts';
import { TEST_BOT_TOKEN, tempDir, testEnv } from '../support/startApp.ts';
import { tickets } from '../support/ticketModule.ts';

/**
 * Every read model that resumes from snapshots is registered once, by the module that keeps it
 * (issue 21 item 2): `loadReadModels()` is what `npm run events -- rebuild` reads, and a start refuses a
 * lifecycle whose snapshotted read model its module does not register.
 */
const running: { sb: Switchboard; fake: FakeSlack; cleanup(): void }[] = [];
afterEach(async () => {
  for (const r of running.splice(0)) {
    await r.sb.stop();
    await r.fake.close();
    r.cleanup();
  }
});

/** The tickets module with one more processor: a read model of ticket counts, resumed from snapshots. */
const withCounts = (registered: boolean): LifecycleModule => {
  const counts = () => {
    let n = 0;
    return createResumableState({
      name: 'ticket-counts',
      version: 1,
      filter: { streamPrefixes: ['ticket-'] },
      apply: () => {
        n += 1;
      },
      save: () => ({ n }),
      load: (state) => {
        n = (state as { n: number }).n;
      },
      reset: () => {
        n = 0;
      },
    });
  };
  return defineLifecycle({
    ...tickets,
    ...(registered ? { readModels: [{ name: 'ticket-counts', create: () => counts() }] } : {}),
    create: (config, deps, options: Parameters<typeof tickets.create>[2]) => ({
      ...tickets.create(config, deps, options),
      processors: [readModelProcessor('ticket-counts', { streamPrefixes: ['ticket-'] }, counts())],
    }),
  }) as LifecycleModule;
};

const start = async (module: LifecycleModule) => {
  const fake = await startFakeSlack({ botToken: TEST_BOT_TOKEN });
  const tmp = tempDir('switchboard-readmodels-');
  const modules = [LIFECYCLES[0], module];
  const config = loadConfig(testEnv(fake, join(tmp.dir, 'switchboard.db'), { TICKETS_TOKEN: 'token-1' }), [
    ...ALL_LIFECYCLES,
    module,
  ]);
  try {
    const sb = await createSwitchboard({
      config,
      logger: createLogger({ level: 'silent', destination: createLogSink().stream }),
      host: '127.0.0.1',
      httpGraceMs: 1_000,
      schedulerPollMs: 20,
      lifecycles: modules,
    });
    running.push({ sb, fake, cleanup: tmp.cleanup });
    await sb.start();
    return sb;
  } catch (e) {
    await fake.close();
    tmp.cleanup();
    throw e;
  }
};

describe('read models are registered once, by their module', () => {
  it('lists the kernel’s and every lifecycle’s, each name once', async () => {
    const names = (await loadReadModels()).map((r) => r.name);
    expect(new Set(names).size).toBe(names.length);
    expect([...names].sort()).toEqual([
      'incident-read-models',
      'pager-index',
      'scheduler',
      'timeoff-read-model',
      'verification-read-model',
    ]);
  });

  it('a start refuses a snapshotted read model its module does not register, and takes one it does', async () => {
    const refused = await caught(start(withCounts(false)));
    expect(refused.code).toBe('SB_CONFIG');
    expect(refused.message).toContain('read model ticket-counts of tickets');
    const sb = await start(withCounts(true));
    expect(sb.config.lifecycles.tickets).toBe(true);
  });
});

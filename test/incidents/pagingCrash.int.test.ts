import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  type PagerDutySimulator,
  startPagerDutySimulator,
} from '../../sandbox/simulators/pagerduty/index.ts';
import { simulatorEnv } from '../../sandbox/simulators/simulator.ts';
import type { FakeSlack } from '../../sandbox/simulators/slack/fakeSlack.ts';
import { startVonageSimulator, type VonageSimulator } from '../../sandbox/simulators/vonage/index.ts';
import { openEventStore } from '../../src/eventStore/openEventStore.ts';
import { createPeopleDirectory } from '../../src/people/directory.ts';
import { createCrashRig } from '../support/crashRig.ts';
import { slackDriver, startTestSlack } from '../support/slackHarness.ts';
import { type MainProcess, testEnv } from '../support/startApp.ts';
import { gate, waitFor } from '../support/waitFor.ts';
import { ANA, CHEN, OPS, PLATFORM, WEBHOOK_SECRET } from './pagingHarness.ts';

/**
 * Issue 10 item 4, durability: `kill -9` of the real app (src/main.ts in a child process) after
 * the page's timer fired and before its SMS reached the communications service. After the restart
 * on the same store the page is sent once: not lost (the delivery is redelivered from the
 * processor's checkpoint), not repeated (the page, its timer and its call timer are recorded once).
 * PAGING_DELAY_MINUTES=0 so the page is due as soon as the incident is triggered.
 */
let pd: PagerDutySimulator;
let vonage: VonageSimulator;
let fake: FakeSlack;
const rig = createCrashRig('switchboard-paging-crash-');
const held = gate();

beforeAll(async () => {
  pd = await startPagerDutySimulator({ webhookSecret: WEBHOOK_SECRET });
  vonage = await startVonageSimulator();
  fake = await startTestSlack({
    users: [
      { id: ANA.slack, name: 'ana', real_name: 'Ana Silva', email: ANA.email },
      { id: CHEN.slack, name: 'chen', real_name: 'Chen Wei', email: CHEN.email },
    ],
    channels: [{ id: OPS, name: 'ops', is_im: false }],
  });
});
afterEach(async () => {
  await rig.killAll();
});
afterAll(async () => {
  held.open();
  await rig.cleanup();
  await pd.stop();
  await vonage.stop();
  await fake.close();
});

const start = (dbPath: string, port: string): Promise<MainProcess> => {
  const sims = [fake, pd, vonage];
  return rig.startMain(
    testEnv(fake, dbPath, {
      ...simulatorEnv(sims),
      LOG_LEVEL: 'info',
      PORT: port,
      PAGING_DELAY_MINUTES: '0',
    }),
    { connect: sims },
  );
};

describe('kill -9 between the page timer and the SMS', () => {
  it('the page is sent once after the restart', async () => {
    const dbPath = rig.dbPath('paging.db');
    // Chen's phone is verified (as a checked code links it).
    const store = await openEventStore(`sqlite:${dbPath}`);
    await createPeopleDirectory({ store, now: () => new Date() }).link(CHEN.slack, {
      system: 'phone',
      externalId: `+${CHEN.phone}`,
      email: null,
      name: null,
    });
    await store.close();

    let main = await start(dbPath, '0');
    const port = new URL(main.url).port;
    // The SMS request reaches the service's door and goes no further: the app dies meanwhile.
    vonage.delayNext('sendSms', { until: held.promise });
    const before = new Set(pd.state.incidents.keys());
    const res = await slackDriver(fake, { url: () => main.url }).slash(
      '/incident',
      `trigger ${PLATFORM} crash while paging`,
      { user: ANA.slack, channel: OPS },
    );
    expect(res.status).toBe(200);
    await waitFor(() => [...pd.state.incidents.values()].find((i) => !before.has(i.id)), {
      what: 'the incident upstream',
      timeoutMs: 10_000,
    });
    await waitFor(() => vonage.requestsFor('sendSms').length === 1 || undefined, {
      what: 'the SMS on its way',
      timeoutMs: 15_000,
    });
    await rig.kill9(main);
    expect(vonage.phones.inbox(CHEN.phone)).toEqual([]);

    main = await start(dbPath, port);
    const sms = await waitFor(() => vonage.phones.inbox(CHEN.phone).at(0), {
      what: 'the page after the restart',
      timeoutMs: 15_000,
    });
    expect(sms.text).toMatch(
      /crash while paging, triggered today, \d\d:\d\d UTC — reply 4 to acknowledge, 6 to resolve/,
    );
    // Recorded once: wait until the send is recorded, then count.
    const read = await openEventStore(`sqlite:${dbPath}`);
    try {
      const pages = await waitFor(
        async () => {
          const events = await read.readStream(`pager-${CHEN.slack}`);
          return events.some((e) => e.type === 'PageSmsSent') ? events : undefined;
        },
        { what: 'the SMS recorded as sent', timeoutMs: 15_000 },
      );
      expect(pages.filter((e) => e.type === 'PageRequested')).toHaveLength(1);
      expect(pages.filter((e) => e.type === 'PageSmsSent')).toHaveLength(1);
      const timers = await read.listStreams({ prefix: 'timer-', limit: 100 });
      expect(timers.filter((t) => t.streamId.startsWith('timer-incident-page-'))).toHaveLength(1);
      expect(timers.filter((t) => t.streamId.startsWith('timer-page-call-'))).toHaveLength(1);
    } finally {
      await read.close();
    }
    main.child.kill('SIGKILL');
    await main.exited;
    expect(vonage.phones.inbox(CHEN.phone)).toHaveLength(1);
    expect(vonage.requestsFor('sendSms')).toHaveLength(2);
  });
});

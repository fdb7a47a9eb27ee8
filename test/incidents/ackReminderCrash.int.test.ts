import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  type PagerDutySimulator,
  startPagerDutySimulator,
} from '../../sandbox/simulators/pagerduty/index.ts';
import { simulatorEnv } from '../../sandbox/simulators/simulator.ts';
import type { FakeSlack } from '../../sandbox/simulators/slack/fakeSlack.ts';
import { openEventStore } from '../../src/eventStore/openEventStore.ts';
import { readTimer, rescheduleTimer } from '../../src/processors/scheduler.ts';
import { createCrashRig } from '../support/crashRig.ts';
import { slackDriver, startTestSlack } from '../support/slackHarness.ts';
import { type MainProcess, testEnv } from '../support/startApp.ts';
import { waitFor } from '../support/waitFor.ts';
import { ANA, CHEN, OPS, PLATFORM, WEBHOOK_SECRET } from './pagingHarness.ts';

/**
 * Issue 22 item 4, durability (Grafana OnCall's users report reminders silently not sent): the real
 * app (src/main.ts in a child process) is killed with `kill -9` while an acknowledge reminder is
 * pending. While it is down its due time passes (the timer is moved to now in the store, as the
 * scheduler's own API does); after the restart on the same store the reminder reaches the
 * assignee, once.
 */
let pd: PagerDutySimulator;
let fake: FakeSlack;
const rig = createCrashRig('switchboard-ackreminder-crash-');

beforeAll(async () => {
  pd = await startPagerDutySimulator({ webhookSecret: WEBHOOK_SECRET });
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
  await rig.cleanup();
  await pd.stop();
  await fake.close();
});

const start = (dbPath: string, port: string): Promise<MainProcess> =>
  rig.startMain(
    testEnv(fake, dbPath, {
      ...simulatorEnv([fake, pd]),
      LOG_LEVEL: 'info',
      PORT: port,
      INCIDENT_ACK_REMINDER_MINUTES: '30',
    }),
    { connect: [fake, pd] },
  );

const reminders = () =>
  fake.messages(fake.dmChannel(CHEN.slack).id).filter((m) => m.text.includes('still open'));

describe('kill -9 with an acknowledge reminder pending', () => {
  it('the reminder is sent once after the restart', async () => {
    const dbPath = rig.dbPath('ackreminder.db');
    let main = await start(dbPath, '0');
    const port = new URL(main.url).port;
    const slack = slackDriver(fake, { url: () => main.url });
    const before = new Set(pd.state.incidents.keys());
    await slack.slash('/incident', `trigger ${PLATFORM} crash while acknowledged`, {
      user: ANA.slack,
      channel: OPS,
    });
    const incident = await waitFor(() => [...pd.state.incidents.values()].find((i) => !before.has(i.id)), {
      what: 'the incident upstream',
      timeoutMs: 10_000,
    });
    // The card is there once the incident is linked: acknowledge it by number.
    await waitFor(() => fake.messages(OPS).find((m) => m.text.startsWith(`#${incident.number} `)), {
      what: 'the card',
      timeoutMs: 10_000,
    });
    await slack.slash('/incident', `ack ${incident.number}`, { user: ANA.slack, channel: OPS });

    const read = await openEventStore(`sqlite:${dbPath}`);
    let timerId: string;
    try {
      timerId = await waitFor(
        async () =>
          (await read.listStreams({ prefix: 'timer-incident-ackremind-', limit: 10 }))
            .at(0)
            ?.streamId.slice('timer-'.length),
        { what: 'the reminder scheduled', timeoutMs: 15_000 },
      );
    } finally {
      await read.close();
    }
    await rig.kill9(main);
    expect(reminders()).toEqual([]);

    // Down past its due time.
    const store = await openEventStore(`sqlite:${dbPath}`);
    try {
      expect((await readTimer(store, timerId)).status).toBe('pending');
      await rescheduleTimer(store, { timerId, dueAt: new Date(), now: new Date() });
    } finally {
      await store.close();
    }

    main = await start(dbPath, port);
    const dm = await waitFor(() => reminders().at(0), {
      what: 'the reminder after the restart',
      timeoutMs: 15_000,
    });
    expect(dm.text).toContain(`#${incident.number} crash while acknowledged`);
    const after = await openEventStore(`sqlite:${dbPath}`);
    try {
      await waitFor(async () => ((await readTimer(after, timerId)).status === 'fired' ? true : undefined), {
        what: 'the timer recorded as fired',
        timeoutMs: 15_000,
      });
      const sent = await waitFor(
        async () => {
          const streams = await after.listStreams({ prefix: 'incidentackreminder-', limit: 10 });
          const events = streams[0] ? await after.readStream(streams[0].streamId) : [];
          return events.some((e) => e.type === 'IncidentAckReminderSent') ? events : undefined;
        },
        { what: 'the reminder recorded as sent', timeoutMs: 15_000 },
      );
      expect(sent.filter((e) => e.type === 'IncidentAckReminderSent')).toHaveLength(1);
    } finally {
      await after.close();
    }
    expect(reminders()).toHaveLength(1);
  });
});

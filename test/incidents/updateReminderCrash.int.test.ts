import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  type PagerDutySimulator,
  startPagerDutySimulator,
} from '../../sandbox/simulators/pagerduty/index.ts';
import { simulatorEnv } from '../../sandbox/simulators/simulator.ts';
import type { FakeSlack } from '../../sandbox/simulators/slack/fakeSlack.ts';
import { openEventStore } from '../../src/eventStore/openEventStore.ts';
import { updateReminderTimerId } from '../../src/incidents/statusUpdates.reactor.ts';
import { readTimer, rescheduleTimer } from '../../src/processors/scheduler.ts';
import { createCrashRig } from '../support/crashRig.ts';
import { slackDriver, startTestSlack } from '../support/slackHarness.ts';
import { type MainProcess, testEnv } from '../support/startApp.ts';
import { waitFor } from '../support/waitFor.ts';
import { ANA, BEN, CHEN, OPS, WEBHOOK_SECRET } from './harness.ts';

/**
 * Issue 22 item 3, durability: the reminder to post a status update is a durable timer. The real
 * app (src/main.ts in a child process) schedules it when the incident is triggered and is killed
 * with `kill -9`; while it is down its 30 minutes pass (the timer is moved to now through the
 * scheduler's own API: a child process runs on the wall clock, and no test waits 30 minutes). The
 * app started again on the same store fires it: the assignee gets the DM, once.
 */
let sim: PagerDutySimulator;
let fake: FakeSlack;
const rig = createCrashRig('switchboard-update-reminder-crash-');
const PEOPLE = [ANA, BEN, CHEN];

beforeAll(async () => {
  sim = await startPagerDutySimulator({ webhookSecret: WEBHOOK_SECRET });
  fake = await startTestSlack({
    users: PEOPLE.map((p) => ({ id: p.slack, name: p.slack, real_name: p.slack, email: p.email })),
    channels: [{ id: OPS, name: 'ops', is_im: false }],
  });
});
afterEach(async () => {
  await rig.killAll();
});
afterAll(async () => {
  await rig.cleanup();
  await sim.stop();
  await fake.close();
});

const start = (dbPath: string): Promise<MainProcess> =>
  rig.startMain(
    testEnv(fake, dbPath, {
      ...simulatorEnv([fake, sim]),
      LOG_LEVEL: 'info',
      INCIDENT_UPDATE_REMINDER_MINUTES: '30',
    }),
  );

describe('kill -9 with a status update reminder pending', () => {
  it('the reminder fires after the restart, once', async () => {
    const dbPath = rig.dbPath('reminder.db');
    let main = await start(dbPath);
    const title = 'Ledger writes failing';
    const res = await slackDriver(fake, { url: () => main.url }).slash(
      '/incident',
      `trigger Payments API ${title}`,
      { user: ANA.slack, channel: OPS },
    );
    expect(res.status).toBe(200);
    const incident = await waitFor(() => [...sim.state.incidents.values()].find((i) => i.title === title), {
      what: 'the incident upstream',
      timeoutMs: 10_000,
    });
    const card = await waitFor(
      () => fake.messages(OPS).find((m) => m.bot_id !== '' && m.text.startsWith(`#${incident.number} `)),
      { what: 'the card', timeoutMs: 10_000 },
    );
    const streamId = ((card.blocks ?? []) as { elements?: { value?: string }[] }[])
      .flatMap((b) => b.elements ?? [])
      .map((e) => e.value)
      .find((v) => v?.startsWith('incident-'));
    expect(streamId).toBeDefined();
    const assignee = PEOPLE.find((p) => p.pd === incident.assignments[0]?.userId);
    expect(assignee).toBeDefined();
    const reminders = () =>
      fake
        .messages(fake.dmChannel(assignee!.slack).id)
        .filter((m) => m.text.includes('No status update on '));

    // The timer is in the store before the crash.
    const timerId = await waitFor(
      async () => {
        const store = await openEventStore(`sqlite:${dbPath}`);
        try {
          const triggered = (await store.readStream(streamId!)).find((m) => m.type === 'IncidentTriggered');
          const at = (triggered?.data as { at?: string } | undefined)?.at;
          if (!at) return undefined;
          const id = updateReminderTimerId(streamId!, at);
          return (await readTimer(store, id)).status === 'pending' ? id : undefined;
        } finally {
          await store.close();
        }
      },
      { what: 'the reminder timer scheduled', timeoutMs: 10_000 },
    );
    await rig.kill9(main);
    expect(reminders()).toHaveLength(0);

    // Down for 30 minutes: the timer is due.
    const store = await openEventStore(`sqlite:${dbPath}`);
    await rescheduleTimer(store, { timerId, dueAt: new Date(Date.now() - 1_000), now: new Date() });
    await store.close();

    main = await start(dbPath);
    await waitFor(() => (reminders().length === 1 ? true : undefined), {
      what: 'the reminder after the restart',
      timeoutMs: 15_000,
    });
    expect(reminders()[0]?.text).toContain(`/incident update ${incident.number}`);
    await rig.kill9(main);
    expect(reminders()).toHaveLength(1);
  });
});

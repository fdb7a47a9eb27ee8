import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  type PagerDutySimulator,
  startPagerDutySimulator,
} from '../../sandbox/simulators/pagerduty/index.ts';
import { simulatorEnv } from '../../sandbox/simulators/simulator.ts';
import type { FakeSlack } from '../../sandbox/simulators/slack/fakeSlack.ts';
import { createCrashRig } from '../support/crashRig.ts';
import { slackDriver, startTestSlack } from '../support/slackHarness.ts';
import { type MainProcess, testEnv } from '../support/startApp.ts';
import { waitFor } from '../support/waitFor.ts';
import { ANA, BEN, OPS, WEBHOOK_SECRET } from './harness.ts';

/**
 * `kill -9` of the real app (src/main.ts in a child process) in the crash windows of the incident
 * flow: between an upstream call and its recorded outcome. After the restart the request is
 * delivered again; the incident service is checked before the call is repeated, so it is not.
 */
let sim: PagerDutySimulator;
let fake: FakeSlack;
const rig = createCrashRig('switchboard-incident-crash-');

beforeAll(async () => {
  sim = await startPagerDutySimulator({ webhookSecret: WEBHOOK_SECRET });
  fake = await startTestSlack({
    users: [
      { id: ANA.slack, name: 'ana', real_name: 'Ana Silva', email: ANA.email },
      { id: BEN.slack, name: 'ben', real_name: 'Ben Okafor', email: BEN.email },
    ],
    channels: [{ id: OPS, name: 'ops', is_im: false }],
  });
});
afterEach(async () => {
  await rig.killAll();
  sim.clearFaults();
});
afterAll(async () => {
  await rig.cleanup();
  await sim.stop();
  await fake.close();
});

const start = (dbPath: string): Promise<MainProcess> =>
  rig.startMain(testEnv(fake, dbPath, { ...simulatorEnv([fake, sim]), LOG_LEVEL: 'info' }));

/** Ana and Ben in #ops, talking to the app as it runs now. */
const slackTo = (main: MainProcess) => slackDriver(fake, { url: () => main.url });

const cardsOf = (number: number) =>
  fake
    .messages(OPS)
    .filter((m) => Array.isArray(m.blocks) && m.bot_id !== '' && m.text.startsWith(`#${number} `));

/** The value of a card button (the incident's stream id). */
const buttonValue = (number: number, actionId: string): string => {
  const blocks = (cardsOf(number)[0]?.blocks ?? []) as {
    elements?: { action_id?: string; value?: string }[];
  }[];
  const button = blocks.flatMap((b) => b.elements ?? []).find((e) => e.action_id === actionId);
  if (!button?.value) throw new Error(`no ${actionId} button on #${number}'s card`);
  return button.value;
};

const trigger = async (main: MainProcess, title: string) => {
  const before = new Set(sim.state.incidents.keys());
  const res = await slackTo(main).slash('/incident', `trigger Payments API ${title}`, {
    user: ANA.slack,
    channel: OPS,
  });
  expect(res.status).toBe(200);
  const incident = await waitFor(
    () => [...sim.state.incidents.values()].find((i) => !before.has(i.id) && i.title === title),
    { what: 'the incident upstream', timeoutMs: 10_000 },
  );
  await waitFor(() => cardsOf(incident.number).length > 0 || undefined, {
    what: 'the card',
    timeoutMs: 10_000,
  });
  return incident;
};

const click = async (main: MainProcess, actionId: string, value: string, user: string) => {
  const res = await slackTo(main).click(actionId, value, { user, channel: OPS });
  expect(res.status).toBe(200);
};

describe('kill -9 between an upstream call and its recorded outcome', () => {
  it('the acknowledge is not sent again after the restart; the card shows it', async () => {
    const dbPath = rig.dbPath('ack.db');
    let main = await start(dbPath);
    const incident = await trigger(main, 'crash after ack');
    const streamId = buttonValue(incident.number, 'incident.acknowledge');
    // The acknowledge lands upstream; its answer never reaches the app, which dies meanwhile.
    sim.delayNext('updateIncident', { ms: 5_000, afterApply: true });
    await click(main, 'incident.acknowledge', streamId, BEN.slack);
    await waitFor(() => sim.state.incidents.get(incident.id)?.status === 'acknowledged' || undefined, {
      what: 'the acknowledge applied upstream',
    });
    await rig.kill9(main);

    main = await start(dbPath);
    await waitFor(
      () =>
        JSON.stringify(cardsOf(incident.number)[0]?.blocks ?? []).includes('Acknowledged by') || undefined,
      { what: 'the card to show the acknowledgement after the restart', timeoutMs: 15_000 },
    );
    const puts = sim.requestsFor('updateIncident').filter((r) => r.url.includes(incident.id));
    expect(puts).toHaveLength(1);
    expect(sim.state.incidents.get(incident.id)?.acknowledgements).toHaveLength(1);
    expect(cardsOf(incident.number)).toHaveLength(1);
    sim.assertNoViolations();
  });
});

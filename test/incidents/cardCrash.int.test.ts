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
 * Issue 9 item 7, the card half: `kill -9` of the real app (src/main.ts in a child process) after
 * the fake Slack applied the card's `chat.postMessage` and before its answer came back, so before
 * `IncidentCardPosted` could be recorded. After the restart the card is found by its message
 * metadata (conversations.history) and recorded instead of being posted a second time; without the
 * history scope the app posts as before and says so once in the log.
 */
let sim: PagerDutySimulator;
const rig = createCrashRig('switchboard-card-crash-');
const fakes: FakeSlack[] = [];
/** How late the fake answers the post it applied: far longer than the app needs to be killed. */
const LATE_ANSWER_MS = 8_000;

beforeAll(async () => {
  sim = await startPagerDutySimulator({ webhookSecret: WEBHOOK_SECRET });
});
afterEach(async () => {
  await rig.killAll();
});
afterAll(async () => {
  await rig.cleanup();
  await sim.stop();
  for (const f of fakes.splice(0)) await f.close();
});

const newFake = async (scopes?: readonly string[]): Promise<FakeSlack> => {
  const fake = await startTestSlack({
    users: [
      { id: ANA.slack, name: 'ana', real_name: 'Ana Silva', email: ANA.email },
      { id: BEN.slack, name: 'ben', real_name: 'Ben Okafor', email: BEN.email },
    ],
    channels: [{ id: OPS, name: 'ops', is_im: false }],
    ...(scopes ? { scopes } : {}),
  });
  fakes.push(fake);
  return fake;
};

const start = (fake: FakeSlack, dbPath: string): Promise<MainProcess> =>
  rig.startMain(testEnv(fake, dbPath, { ...simulatorEnv([fake, sim]), LOG_LEVEL: 'info' }));

/**
 * The incident's cards in #ops: the bot's posted messages naming its title (a unique one per test),
 * not in a thread (the card's thread tells the story, naming the title too: issue 22).
 */
const cardsOf = (fake: FakeSlack, title: string) =>
  fake
    .messages(OPS)
    .filter(
      (m) =>
        !m.deleted &&
        m.via === 'api' &&
        Array.isArray(m.blocks) &&
        m.thread_ts === undefined &&
        m.text.includes(title),
    );

/** Triggers an incident from #ops and kills the app as soon as Slack has its card (unanswered). */
const triggerAndCrash = async (fake: FakeSlack, main: MainProcess, title: string) => {
  fake.setBehaviour('chat.postMessage', { delayMs: LATE_ANSWER_MS, afterApply: true });
  const before = new Set(sim.state.incidents.keys());
  const res = await slackDriver(fake, { url: () => main.url }).slash(
    '/incident',
    `trigger Payments API ${title}`,
    { user: ANA.slack, channel: OPS },
  );
  expect(res.status).toBe(200);
  const incident = await waitFor(
    () => [...sim.state.incidents.values()].find((i) => !before.has(i.id) && i.title === title),
    { what: 'the incident upstream', timeoutMs: 10_000 },
  );
  await waitFor(() => cardsOf(fake, incident.title).length > 0 || undefined, {
    what: 'the card applied by Slack',
    timeoutMs: 10_000,
  });
  await rig.kill9(main);
  fake.clearBehaviour('chat.postMessage');
  return incident;
};

const acknowledge = async (fake: FakeSlack, main: MainProcess, value: string) => {
  const res = await slackDriver(fake, { url: () => main.url }).click('incident.acknowledge', value, {
    user: BEN.slack,
    channel: OPS,
  });
  expect(res.status).toBe(200);
};

const buttonValue = (fake: FakeSlack, title: string): string => {
  const blocks = cardsOf(fake, title).flatMap((c) => c.blocks ?? []) as {
    elements?: { action_id?: string; value?: string }[];
  }[];
  const button = blocks.flatMap((b) => b.elements ?? []).find((e) => e.action_id === 'incident.acknowledge');
  if (!button?.value) throw new Error(`no acknowledge button on the card of ${title}`);
  return button.value;
};

describe('kill -9 between chat.postMessage and IncidentCardPosted', () => {
  it('the card is found by its metadata after the restart and recorded, not posted again', async () => {
    const fake = await newFake();
    const dbPath = rig.dbPath('card.db');
    const incident = await triggerAndCrash(fake, await start(fake, dbPath), 'crash after card post');
    const [card] = cardsOf(fake, incident.title);
    expect(card?.metadata?.event_type).toBe('switchboard_incident_card');

    const main = await start(fake, dbPath);
    // Recorded: a later change updates that very message in place (and no second card appears).
    // The card Slack already had is brought up to date (it was posted as "Triggering…").
    await waitFor(() => JSON.stringify(card!.blocks).includes('incident.acknowledge') || undefined, {
      what: 'the card posted before the crash showing its buttons',
      timeoutMs: 15_000,
    });
    const streamId = await waitFor(() => buttonValue(fake, incident.title), {
      what: 'the card with its buttons',
      timeoutMs: 15_000,
    });
    await acknowledge(fake, main, streamId);
    await waitFor(
      () =>
        cardsOf(fake, incident.title).some((c) => JSON.stringify(c.blocks).includes('Acknowledged by')) ||
        undefined,
      { what: 'a card updated with the acknowledgement', timeoutMs: 15_000 },
    );
    expect(cardsOf(fake, incident.title).map((c) => c.ts)).toEqual([card!.ts]);
    const history = fake.callsOf('conversations.history')[0]!;
    // A bounded read (form-encoded, as the SDK sends): from before the post, a limited page.
    expect(history.params).toMatchObject({ channel: OPS, include_all_metadata: 'true' });
    expect(Number(history.params['oldest'])).toBeGreaterThan(0);
    expect(Number(history.params['oldest'])).toBeLessThan(Number(card!.ts));
    expect(Number(history.params['limit'])).toBeGreaterThan(0);
    expect(fake.contractViolations()).toEqual([]);
  });

  it('the card is found even when the redelivered events cannot render and a later change does (the search is per incident, not per event)', async () => {
    const fake = await newFake();
    const dbPath = rig.dbPath('card-later-change.db');
    const incident = await triggerAndCrash(fake, await start(fake, dbPath), 'crash then later change');
    const [card] = cardsOf(fake, incident.title);

    // After the restart Slack cannot answer history reads for a while: every render of the events
    // delivered again fails until the cards processor gives up on them (the next change renders).
    fake.setBehaviour('conversations.history', { status: 500 });
    const main = await start(fake, dbPath);
    await waitFor(
      () => main.lines().find((l) => String(l['msg']).startsWith('card render kept failing')) ?? undefined,
      { what: 'the cards processor giving up on the events delivered again', timeoutMs: 30_000 },
    );
    fake.clearBehaviour('conversations.history');
    // A later change, recorded after the restart (so not itself delivered again): Ben acknowledges.
    await waitFor(
      async () => {
        if (sim.state.incidents.get(incident.id)?.status === 'acknowledged') return true;
        await slackDriver(fake, { url: () => main.url }).slash('/incident', `ack ${incident.number}`, {
          user: BEN.slack,
          channel: OPS,
        });
        return undefined;
      },
      { what: 'the incident acknowledged from Slack', timeoutMs: 15_000, intervalMs: 1_000 },
    );
    await waitFor(
      () =>
        cardsOf(fake, incident.title).some((c) => JSON.stringify(c.blocks).includes('Acknowledged by')) ||
        undefined,
      { what: 'a card showing the acknowledgement', timeoutMs: 15_000 },
    );
    // The card Slack took before the crash is the one brought up to date: no second card.
    expect(cardsOf(fake, incident.title).map((c) => c.ts)).toEqual([card!.ts]);
  });

  it('without a history scope the card is posted as before and the missing scope is logged once', async () => {
    const fake = await newFake(['commands', 'chat:write', 'im:write', 'users:read', 'users:read.email']);
    const dbPath = rig.dbPath('card-no-scope.db');
    const incident = await triggerAndCrash(fake, await start(fake, dbPath), 'crash without history scope');

    const main = await start(fake, dbPath);
    await waitFor(() => cardsOf(fake, incident.title).length > 1 || undefined, {
      what: 'the card posted again',
      timeoutMs: 15_000,
    });
    await waitFor(() => main.lines().find((l) => String(l['msg']).includes('missing_scope')) ?? undefined, {
      what: 'the missing scope logged',
      timeoutMs: 15_000,
    });
    expect(fake.callsOf('conversations.history').map((c) => c.error)).toEqual(['missing_scope']);
    expect(main.lines().filter((l) => String(l['msg']).includes('missing_scope'))).toHaveLength(1);
  });
});

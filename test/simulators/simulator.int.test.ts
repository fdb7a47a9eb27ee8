import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { defaultSeed, startPagerDutySimulator } from '../../sandbox/simulators/pagerduty/index.ts';
import {
  assertNoContractViolations,
  connectAll,
  contractViolations,
  exportStates,
  importStates,
  type Simulator,
  simulatorEnv,
  stopAll,
} from '../../sandbox/simulators/simulator.ts';
import { startFakeSlack } from '../../sandbox/simulators/slack/fakeSlack.ts';
import { loadConfig } from '../../src/config.ts';
import { manualClock } from '../../src/core/clock.ts';
import { ALL_LIFECYCLES } from '../../src/lifecycleList.ts';
import { verifyPagerDutySignature } from '../../src/upstream/pagerdutySignature.ts';
import { TEST_DATA_KEYS } from '../support/dataKeys.ts';
import { startRecordingReceiver } from '../support/recordingReceiver.ts';

/**
 * The common simulator interface (sandbox/simulators/simulator.ts), on the real simulators: the
 * environment the bot needs, connecting to the bot, state across a restart, contract violations,
 * stopping.
 */

const ANA = 'ana.silva@example.org';
const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const slackCall = (
  apiUrl: string,
  method: string,
  token: string | undefined,
  body: Record<string, unknown>,
) =>
  request(`${apiUrl}${method}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
    },
    body: JSON.stringify(body),
  }).then(async (r) => (await r.body.json()) as { ok: boolean; error?: string });

describe('env', () => {
  it('gives the bot everything it needs to reach each simulator, in the names its configuration reads', async () => {
    const fake = await startFakeSlack({ botToken: 'xoxb-env-test', signingSecret: 'slack-signing' });
    const sim = await startPagerDutySimulator({ token: 'pd-token', webhookSecret: 'pd-webhook-secret' });
    const simulators: Simulator[] = [fake, sim];
    cleanups.push(() => stopAll(simulators));

    const env = simulatorEnv(simulators);
    expect(env).toEqual({
      SLACK_API_URL: fake.apiUrl,
      SLACK_BOT_TOKEN: 'xoxb-env-test',
      SLACK_SIGNING_SECRET: 'slack-signing',
      PAGERDUTY_API_URL: sim.url,
      PAGERDUTY_EVENTS_URL: sim.eventsUrl,
      PAGERDUTY_TOKEN: 'pd-token',
      PAGERDUTY_WEBHOOK_SECRET: 'pd-webhook-secret',
    });
    // The bot's own configuration accepts it as a whole: Slack and the incidents lifecycle on.
    const config = loadConfig(
      {
        ...env,
        EVENT_STORE_URL: 'sqlite::memory:',
        SWITCHBOARD_DATA_KEYS: TEST_DATA_KEYS,
      },
      ALL_LIFECYCLES,
    );
    expect(config.secrets).toEqual(
      expect.arrayContaining(['xoxb-env-test', 'slack-signing', 'pd-token', 'pd-webhook-secret']),
    );
  });

  it('refuses two simulators that set the same variable', async () => {
    const a = await startFakeSlack();
    const b = await startFakeSlack();
    cleanups.push(() => stopAll([a, b]));
    expect(() => simulatorEnv([a, b])).toThrow('simulators slack and slack both set SLACK_API_URL');
  });
});

describe('connect', () => {
  it('subscribes the bot to the incident service webhooks, signed with the secret env() gave it', async () => {
    const rx = await startRecordingReceiver();
    const sim = await startPagerDutySimulator({ webhookSecret: 'whsec-connect' });
    cleanups.push(
      () => rx.stop(),
      () => sim.stop(),
    );
    const botUrl = rx.url.slice(0, -'/webhooks/pagerduty'.length);

    await connectAll([sim], botUrl);
    sim.webApp.trigger({ serviceId: 'PSVC001', title: 'connected', byEmail: ANA });
    await rx.waitFor(1);

    const got = rx.received[0]!;
    expect(got.url).toBe('/webhooks/pagerduty');
    const signature = got.headers['x-pagerduty-signature'] as string;
    expect(verifyPagerDutySignature(got.rawBody, signature, [sim.env().PAGERDUTY_WEBHOOK_SECRET])).toBe(true);
    expect((got.json as { event: { event_type: string } }).event.event_type).toBe('incident.triggered');
  });
});

describe('exportState / importState', () => {
  it('brings the incident service back with its account, incidents, rotations and counters', async () => {
    const clock = manualClock('2026-11-22T10:00:00.000Z');
    const first = await startPagerDutySimulator({
      clock,
      seed: defaultSeed({ rotationStart: '2026-01-05T09:00:00Z' }),
    });
    cleanups.push(() => first.stop());
    const one = first.webApp.trigger({ serviceId: 'PSVC001', title: 'one', byEmail: ANA });
    first.webApp.addNote(one.id, 'a note', ANA);
    const two = first.webApp.trigger({ serviceId: 'PSVC002', title: 'two', byEmail: ANA });
    first.webApp.acknowledge(two.id, ANA);
    first.state.createOverride('PSCH001', {
      start: '2026-11-22T12:00:00Z',
      end: '2026-11-22T18:00:00Z',
      userId: 'PUSR002',
    });
    first.webApp.createService({ name: 'Search', escalationPolicyId: 'PEP0002' }, ANA);
    const saved = JSON.parse(JSON.stringify(exportStates([first]))) as Record<string, unknown>;
    await first.stop();

    // A new simulator, started as a fresh one would be (its own rotation anchor), then restored.
    const second = await startPagerDutySimulator({
      clock,
      seed: defaultSeed({ rotationStart: '2026-11-16T09:00:00Z' }),
    });
    cleanups.push(() => second.stop());
    importStates([second], saved);

    expect(second.exportState()).toEqual(saved['pagerduty']);
    expect(second.incident(one.number)).toMatchObject({ id: one.id, title: 'one', status: 'triggered' });
    expect(second.incident(two.number)).toMatchObject({ id: two.id, status: 'acknowledged' });
    const primary = second.state.schedules.get('PSCH001')!;
    expect(primary.layers[0]?.rotationVirtualStart).toBe('2026-01-05T09:00:00Z');
    expect(primary.overrides).toHaveLength(1);
    expect([...second.state.services.values()].map((s) => s.name)).toContain('Search');

    // New things never reuse a restored number or id.
    const three = second.webApp.trigger({ serviceId: 'PSVC001', title: 'three', byEmail: ANA });
    expect(three.number).toBe(two.number + 1);
    const restoredIds = new Set(
      [one, two].flatMap((i) => {
        const inc = second.state.incidents.get(i.id)!;
        return [inc.id, ...inc.notes.map((n) => n.id), ...inc.logEntries.map((l) => l.id)];
      }),
    );
    for (const id of [three.id, ...three.logEntries.map((l) => l.id)])
      expect(restoredIds.has(id)).toBe(false);
    const override = second.state.createOverride('PSCH001', {
      start: '2026-11-23T00:00:00Z',
      end: '2026-11-23T06:00:00Z',
      userId: 'PUSR003',
    });
    expect(override.seq).toBeGreaterThan(primary.overrides[0]!.seq);
  });

  it('brings the Slack workspace back, messages and counters included', async () => {
    const first = await startFakeSlack({ botToken: 'xoxb-a' });
    cleanups.push(() => first.stop());
    const posted = await slackCall(first.apiUrl, 'chat.postMessage', 'xoxb-a', {
      channel: 'C0INCIDENTS',
      text: 'before the restart',
    });
    expect(posted.ok).toBe(true);
    const saved = JSON.parse(JSON.stringify(exportStates([first]))) as Record<string, unknown>;
    await first.stop();

    const second = await startFakeSlack({ botToken: 'xoxb-b' });
    cleanups.push(() => second.stop());
    importStates([second], saved);
    expect(second.messages('C0INCIDENTS').map((m) => m.text)).toEqual(['before the restart']);
    await slackCall(second.apiUrl, 'chat.postMessage', 'xoxb-b', { channel: 'C0INCIDENTS', text: 'after' });
    const [before, after] = second.messages('C0INCIDENTS');
    expect(Number(after!.ts)).toBeGreaterThan(Number(before!.ts));
  });
});

describe('contractViolations', () => {
  it('fake Slack: calls the real Slack refuses as malformed or unauthenticated, not refusals a correct app meets', async () => {
    const fake = await startFakeSlack({ botToken: 'xoxb-ok' });
    cleanups.push(() => fake.stop());
    await slackCall(fake.apiUrl, 'chat.postMessage', 'xoxb-ok', { channel: 'C0INCIDENTS', text: 'fine' });
    await slackCall(fake.apiUrl, 'users.lookupByEmail', 'xoxb-ok', { email: 'nobody@example.com' });
    await slackCall(fake.apiUrl, 'views.open', 'xoxb-ok', { trigger_id: 'used', view: { type: 'modal' } });
    await slackCall(fake.apiUrl, 'views.open', 'xoxb-ok', { trigger_id: 'used', view: { type: 'modal' } });
    fake.failNext('chat.update', { error: 'invalid_auth' });
    await slackCall(fake.apiUrl, 'chat.update', 'xoxb-ok', { channel: 'C0INCIDENTS', ts: '1.0', text: 'x' });
    expect(fake.contractViolations()).toEqual([]);

    await slackCall(fake.apiUrl, 'chat.postMessage', undefined, { channel: 'C0INCIDENTS', text: 'no token' });
    await slackCall(fake.apiUrl, 'chat.postMessage', 'xoxb-wrong', { channel: 'C0INCIDENTS', text: 'bad' });
    await slackCall(fake.apiUrl, 'chat.postMesage', 'xoxb-ok', { channel: 'C0INCIDENTS', text: 'typo' });
    expect(fake.contractViolations().map((v) => v.summary.split(':')[0])).toEqual([
      'chat.postMessage answered not_authed',
      'chat.postMessage answered invalid_auth',
      'chat.postMesage answered unknown_method',
    ]);
    expect(fake.contractViolations().every((v) => v.simulator === 'slack')).toBe(true);
  });

  it('incident service: requests its published API description refuses; all of them, across simulators', async () => {
    const fake = await startFakeSlack();
    const sim = await startPagerDutySimulator();
    const simulators: Simulator[] = [fake, sim];
    cleanups.push(() => stopAll(simulators));
    expect(() => assertNoContractViolations(simulators)).not.toThrow();

    const res = await request(`${sim.url}/incidents?status=triggered`, {
      headers: {
        accept: 'application/vnd.pagerduty+json;version=2',
        'content-type': 'application/json',
        authorization: `Token token=${sim.token}`,
      },
    });
    await res.body.dump();
    expect(res.statusCode).toBe(400);
    expect(contractViolations(simulators)).toEqual([
      {
        simulator: 'pagerduty',
        summary: expect.stringMatching(
          /^request rest GET \/incidents \(listIncidents\): query status: not a parameter/,
        ),
      },
    ]);
    expect(() => assertNoContractViolations(simulators)).toThrow(
      /1 contract violation\(s\):\npagerduty: request/,
    );
  });
});

describe('stopAll', () => {
  it('stops every simulator: none answers afterwards', async () => {
    const fake = await startFakeSlack();
    const sim = await startPagerDutySimulator();
    const urls = [fake.url, sim.url, sim.eventsUrl];
    await stopAll([fake, sim]);
    for (const url of urls) await expect(request(url)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type PagerDutySimulator,
  startPagerDutySimulator,
} from '../../sandbox/simulators/pagerduty/index.ts';
import { type FakeSlack, startFakeSlack } from '../../sandbox/simulators/slack/fakeSlack.ts';
import { manualClock } from '../../src/core/clock.ts';
import type { EventStore } from '../../src/eventStore/eventStore.ts';
import { openEventStore } from '../../src/eventStore/openEventStore.ts';
import { createIncidentReadModels } from '../../src/incidents/readModels.projection.ts';
import { createLogger } from '../../src/logger.ts';
import { createMetrics } from '../../src/metrics.ts';
import { createPeopleDirectory } from '../../src/people/directory.ts';
import { personStreamId } from '../../src/people/events.ts';
import { createIdentityResolver, type IdentityResolver } from '../../src/people/identity.ts';
import { slackUserLookups } from '../../src/people/slackUsers.ts';
import { createSlackWebClient } from '../../src/slack/webClient.ts';
import { createPagerDutyClient } from '../../src/upstream/pagerduty.ts';
import { createLogSink } from '../support/logSink.ts';

/**
 * A store written before people were shared holds only `SlackUserMapped` events in
 * `identity-<slackUserId>`. They are never rewritten: read through the upcaster, they still
 * resolve people, feed the incident read models, and are followed by new-shape facts.
 */
const TOKEN = 'xoxb-old-events-test';
const clock = manualClock('2026-11-22T02:00:00.000Z');
let sim: PagerDutySimulator;
let fake: FakeSlack;
let store: EventStore;
let identity: IdentityResolver;

const oldMapping = (slackUserId: string, pagerDutyUserId: string, email: string, name: string, at: string) =>
  store.appendToStream(personStreamId(slackUserId), [
    {
      id: crypto.randomUUID(),
      type: 'SlackUserMapped',
      data: { slackUserId, email, pagerDutyUserId, name, at },
    },
  ]);

beforeAll(async () => {
  sim = await startPagerDutySimulator();
  fake = await startFakeSlack({
    botToken: TOKEN,
    users: [
      { id: 'U0ANA', name: 'ana', real_name: 'Ana Silva', email: 'ana.silva@example.org' },
      { id: 'U0BEN', name: 'ben', real_name: 'Ben Okafor', email: 'ben.okafor@example.org' },
    ],
  });
  store = await openEventStore('sqlite::memory:');
  await oldMapping('U0ANA', 'PUSR001', 'ana.silva@example.org', 'Ana Silva', '2026-11-21T23:00:00.000Z');
  await oldMapping('U0BEN', 'PUSR002', 'ben.okafor@example.org', 'Ben Okafor', '2026-11-01T08:00:00.000Z');
  const slack = createSlackWebClient({
    slack: {
      botToken: TOKEN,
      signingSecret: 's',
      signingSecrets: ['s'],
      appToken: undefined,
      socketMode: false,
      apiUrl: fake.apiUrl,
    },
    logger: createLogger({ level: 'silent', destination: createLogSink().stream }),
    metrics: createMetrics(),
    retries: 0,
  });
  const pd = createPagerDutyClient({ apiUrl: sim.url, eventsUrl: sim.eventsUrl, token: sim.token });
  identity = createIdentityResolver({
    directory: createPeopleDirectory({ store, now: () => clock.now() }),
    system: 'incidents',
    systemName: 'the incident service',
    now: () => clock.now(),
    findUpstreamUser: (email) => pd.findUserByEmail(email),
    ...slackUserLookups(slack),
  });
});
afterAll(async () => {
  sim.assertNoViolations();
  await store.close();
  await sim.stop();
  await fake.close();
});

describe('a store holding only SlackUserMapped events', () => {
  it('resolves a person from a fresh old mapping without asking Slack', async () => {
    expect(await identity.resolve('U0ANA')).toEqual({
      id: 'PUSR001',
      email: 'ana.silva@example.org',
      name: 'Ana Silva',
    });
    expect(await identity.cached('U0ANA')).toMatchObject({ system: 'incidents', externalId: 'PUSR001' });
    expect(fake.callsOf('users.info')).toHaveLength(0);
  });

  it('looks a stale old mapping up again and records the answer in the new shape, after the old one', async () => {
    expect(await identity.resolve('U0BEN')).toMatchObject({ id: 'PUSR002' });
    expect(fake.callsOf('users.info')).toHaveLength(1);
    const stream = await store.readStream(personStreamId('U0BEN'));
    expect(stream.map((e) => e.type)).toEqual(['SlackUserMapped', 'PersonLinked']);
    expect(stream[0]?.data).toMatchObject({ pagerDutyUserId: 'PUSR002' });
  });

  it('feeds the incident read models: cards can mention people mapped by old events', async () => {
    const readModels = createIncidentReadModels({ store });
    await readModels.catchUp();
    expect(readModels.slackUserOf('PUSR001')).toBe('U0ANA');
    expect(readModels.slackUserOf('PUSR002')).toBe('U0BEN');
    expect(readModels.slackUserOf('PUSR003')).toBeNull();
  });
});

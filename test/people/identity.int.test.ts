import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type PagerDutySimulator,
  startPagerDutySimulator,
} from '../../sandbox/simulators/pagerduty/index.ts';
import { type FakeSlack, startFakeSlack } from '../../sandbox/simulators/slack/fakeSlack.ts';
import { manualClock } from '../../src/core/clock.ts';
import type { EventStore } from '../../src/eventStore/eventStore.ts';
import { openEventStore } from '../../src/eventStore/openEventStore.ts';
import { createLogger } from '../../src/logger.ts';
import { createMetrics } from '../../src/metrics.ts';
import { createPeopleDirectory } from '../../src/people/directory.ts';
import { personStreamId as identityStreamId } from '../../src/people/events.ts';
import { createIdentityResolver, type IdentityResolver } from '../../src/people/identity.ts';
import { createSlackWebClient } from '../../src/slack/webClient.ts';
import { createPagerDutyClient } from '../../src/upstream/pagerduty.ts';
import { createLogSink } from '../support/logSink.ts';

/**
 * Slack user ↔ incident-service user by email, against the fake Slack Web API and the PagerDuty
 * simulator: recorded in the people directory, refreshed after 24 h, a stale answer kept while
 * Slack is down, and the other direction for mentions.
 */
const TOKEN = 'xoxb-identity-test';
let sim: PagerDutySimulator;
let fake: FakeSlack;
let store: EventStore;
let identity: IdentityResolver;
const clock = manualClock('2026-11-22T02:00:00.000Z');

beforeAll(async () => {
  sim = await startPagerDutySimulator();
  fake = await startFakeSlack({
    botToken: TOKEN,
    users: [
      { id: 'U0ANA', name: 'ana', real_name: 'Ana Silva', email: 'Ana.Silva@example.org' },
      { id: 'U0NORA', name: 'nora', real_name: 'Nora', email: 'nora@example.com' },
      { id: 'U0BEN', name: 'ben', real_name: 'Ben Okafor', email: 'ben.okafor@example.org' },
      { id: 'U0GHOST', name: 'ghost', real_name: 'Ghost' },
    ],
  });
  store = await openEventStore('sqlite::memory:');
  const logger = createLogger({ level: 'silent', destination: createLogSink().stream });
  const slack = createSlackWebClient({
    slack: {
      botToken: TOKEN,
      signingSecret: 's',
      signingSecrets: ['s'],
      appToken: undefined,
      socketMode: false,
      apiUrl: fake.apiUrl,
    },
    logger,
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
    upstreamUser: (id) => pd.getUser(id),
    slackUserByEmail: async (email) => {
      try {
        return (await slack.users.lookupByEmail({ email })).user?.id ?? null;
      } catch {
        return null;
      }
    },
    slackUser: async (user) => {
      const r = await slack.users.info({ user });
      return {
        email: r.user?.profile?.email ?? null,
        name: r.user?.real_name ?? null,
        deleted: r.user?.deleted === true,
        isBot: r.user?.is_bot === true,
      };
    },
  });
});
afterAll(async () => {
  sim.assertNoViolations();
  await store.close();
  await sim.stop();
  await fake.close();
});

const infoCalls = () => fake.callsOf('users.info').length;

describe('identity', () => {
  it('maps by exact email (case-insensitive), records it, and answers from the record after that', async () => {
    expect(await identity.resolve('U0ANA')).toEqual({
      id: 'PUSR001',
      email: 'ana.silva@example.org',
      name: 'Ana Silva',
    });
    const calls = infoCalls();
    expect(await identity.resolve('U0ANA')).toMatchObject({ id: 'PUSR001' });
    expect(infoCalls()).toBe(calls);
    const recorded = await store.readStream(identityStreamId('U0ANA'));
    expect(recorded.map((e) => e.type)).toEqual(['PersonLinked']);
  });

  it('looks again after 24 h, and keeps the old answer while Slack is down', async () => {
    clock.advance(25 * 3600_000);
    fake.failNext('users.info', { status: 503 });
    expect(await identity.resolve('U0ANA')).toMatchObject({ id: 'PUSR001' });
    expect((await store.readStream(identityStreamId('U0ANA'))).length).toBe(1);
    const calls = infoCalls();
    expect(await identity.resolve('U0ANA')).toMatchObject({ id: 'PUSR001' });
    expect(infoCalls()).toBe(calls + 1);
    expect((await store.readStream(identityStreamId('U0ANA'))).length).toBe(2);
  });

  it('says what is missing for users it cannot map', async () => {
    await expect(identity.resolve('U0NORA')).rejects.toMatchObject({
      code: 'SB_UNMAPPED_USER',
      message: expect.stringContaining(
        'Your Slack email nora@example.com has no user in the incident service',
      ),
    });
    await expect(identity.resolve('U0GHOST')).rejects.toMatchObject({
      code: 'SB_UNMAPPED_USER',
      details: { reason: 'no_email' },
    });
    await expect(identity.resolve('U0BEN', { kind: 'target', slackUserId: 'U0BEN' })).resolves.toMatchObject({
      id: 'PUSR002',
    });
    expect((await store.readStream(identityStreamId('U0NORA'))).length).toBe(0);
  });

  it('finds the Slack user of an incident-service user, once, and not at all when there is none', async () => {
    expect(await identity.slackUserFor('PUSR003')).toBeNull(); // Chen has no Slack user here
    const lookups = fake.callsOf('users.lookupByEmail').length;
    expect(await identity.slackUserFor('PUSR003')).toBeNull();
    expect(fake.callsOf('users.lookupByEmail').length).toBe(lookups);
    fake.addUser({
      id: 'U0FRANK',
      name: 'frank',
      real_name: 'Frank Moreau',
      email: 'frank.moreau@example.org',
    });
    expect(await identity.slackUserFor('PUSR006')).toBe('U0FRANK');
    expect(await identity.cached('U0FRANK')).toMatchObject({ system: 'incidents', externalId: 'PUSR006' });
  });
});

import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { incidentRoutingDecider } from '../../machines/incidentRouting/decider.ts';
import { incidentRoutingStreamId } from '../../machines/incidentRouting/streams.ts';
import {
  type PagerDutySimulator,
  startPagerDutySimulator,
} from '../../sandbox/simulators/pagerduty/index.ts';
import { defaultSeed } from '../../sandbox/simulators/pagerduty/model.ts';
import { type FakeSlack, startFakeSlack } from '../../sandbox/simulators/slack/fakeSlack.ts';
import { handleCommand } from '../../src/application/handleCommand.ts';
import { manualClock } from '../../src/core/clock.ts';
import type { EventStore } from '../../src/eventStore/eventStore.ts';
import { openEventStore } from '../../src/eventStore/openEventStore.ts';
import {
  createOnCallLookups,
  createScheduleOverridesPort,
  ON_CALL_WINDOW_MS,
} from '../../src/incidents/onCall.ts';
import {
  createIncidentReadModels,
  type IncidentReadModels,
} from '../../src/incidents/readModels.projection.ts';
import { createServiceDirectory } from '../../src/incidents/services.ts';
import type { OnCallLookups, ScheduleOverrides } from '../../src/lifecycles/ports.ts';
import { createLogger } from '../../src/logger.ts';
import { createMetrics } from '../../src/metrics.ts';
import { createPeopleDirectory } from '../../src/people/directory.ts';
import { createIdentityResolver } from '../../src/people/identity.ts';
import { slackUserLookups } from '../../src/people/slackUsers.ts';
import { createSlackWebClient } from '../../src/slack/webClient.ts';
import { createPagerDutyClient, type PagerDutyClient, paginate } from '../../src/upstream/pagerduty.ts';
import { createLogSink } from '../support/logSink.ts';

/**
 * The on-call lookups and schedule overrides the incident lifecycle offers the other lifecycles,
 * against the PagerDuty simulator: people come in as Slack users, ranges longer than the service
 * answers are asked in 90-day windows, every page is followed, and a range past the service's
 * 90-day horizon is answered up to it.
 */
const TOKEN = 'xoxb-oncall-test';
const DAY = 24 * 3600_000;
const T0 = Date.parse('2026-11-22T02:00:00.000Z');
const clock = manualClock(new Date(T0).toISOString());
const DANA = 'U0DANA'; // PUSR004: every other day on Payments Secondary (level 2)
const FRANK = 'U0FRANK'; // PUSR006: named directly by both escalation policies (always on call)
const ANA = 'U0ANA'; // PUSR001, Payments Primary (weekly: Ana, Ben, Chen)
const BEN = 'U0BEN'; // PUSR002
const CHEN = 'U0CHEN'; // PUSR003 (Asia/Singapore), also level 1 of Platform directly

let sim: PagerDutySimulator;
let fake: FakeSlack;
let store: EventStore;
let pd: PagerDutyClient;
let onCall: OnCallLookups;
let overrides: ScheduleOverrides;
let readModels: IncidentReadModels;

beforeAll(async () => {
  // Rotations that started a month before "now", so the past has shifts too.
  sim = await startPagerDutySimulator({
    clock,
    seed: defaultSeed({ rotationStart: new Date(T0 - 30 * DAY).toISOString() }),
  });
  fake = await startFakeSlack({
    botToken: TOKEN,
    users: [
      { id: DANA, name: 'dana', real_name: 'Dana Kowalski', email: 'dana.kowalski@example.org' },
      // Eve (PUSR005) has no Slack user.
      { id: ANA, name: 'ana', real_name: 'Ana Silva', email: 'ana.silva@example.org' },
      { id: BEN, name: 'ben', real_name: 'Ben Okafor', email: 'ben.okafor@example.org' },
      { id: CHEN, name: 'chen', real_name: 'Chen Wei', email: 'chen.wei@example.org' },
      { id: FRANK, name: 'frank', real_name: 'Frank Moreau', email: 'frank.moreau@example.org' },
      { id: 'U0NORA', name: 'nora', real_name: 'Nora', email: 'nora@example.com' },
    ],
  });
  store = await openEventStore('sqlite::memory:');
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
  pd = createPagerDutyClient({ apiUrl: sim.url, eventsUrl: sim.eventsUrl, token: sim.token });
  const identity = createIdentityResolver({
    directory: createPeopleDirectory({ store, now: () => clock.now() }),
    system: 'incidents',
    systemName: 'the incident service',
    now: () => clock.now(),
    findUpstreamUser: (email) => pd.findUserByEmail(email),
    upstreamUser: (id) => pd.getUser(id),
    ...slackUserLookups(slack),
  });
  readModels = createIncidentReadModels({ store });
  const services = createServiceDirectory({
    now: () => clock.now().getTime(),
    listServices: async () => {
      const out: { id: string; name: string; escalationPolicyId: string | null }[] = [];
      for await (const s of paginate((p) => pd.listServices(p))) {
        out.push({ id: s.id, name: s.name, escalationPolicyId: s.escalation_policy.id });
      }
      return out;
    },
  });
  onCall = createOnCallLookups({
    pagerduty: pd,
    identity,
    readModels,
    services,
    store,
    now: () => clock.now(),
    pageSize: 7,
  });
  overrides = createScheduleOverridesPort({ pagerduty: pd, identity, now: () => clock.now() });
});
afterAll(async () => {
  sim.assertNoViolations();
  await store.close();
  await sim.stop();
  await fake.close();
});

/** The simulator's own answer for one range, in one window, every page. */
const direct = async (userId: string, since: number, until: number) => {
  const out: string[] = [];
  for await (const o of paginate((p) =>
    pd.listOnCalls({
      ...p,
      userIds: [userId],
      since: new Date(since).toISOString(),
      until: new Date(until).toISOString(),
    }),
  )) {
    const iso = (t: string | null | undefined) => (t ? new Date(t).toISOString() : null);
    out.push(
      `${o.escalation_policy.id}|${o.escalation_level}|${o.schedule?.id ?? ''}|${iso(o.start)}|${iso(o.end)}`,
    );
  }
  return out.sort();
};

const keys = (shifts: Awaited<ReturnType<OnCallLookups['shiftsOf']>>['shifts']) =>
  shifts
    .map(
      (s) =>
        `${s.escalationPolicy.id}|${s.level}|${s.schedule?.id ?? ''}|${s.start?.toISOString() ?? null}|${s.end?.toISOString() ?? null}`,
    )
    .sort();

describe('on-call lookups', () => {
  it('answers a 120-day range in 90-day windows, following every page, with each shift once', async () => {
    const since = T0 - 30 * DAY;
    const until = T0 + 90 * DAY;
    const before = sim.requestsFor('listOnCalls').length;
    const answer = await onCall.shiftsOf(
      { slackUserId: DANA },
      { since: new Date(since), until: new Date(until) },
    );
    const asked = sim.requestsFor('listOnCalls').slice(before);

    expect(answer.knownUntil.toISOString()).toBe(new Date(until).toISOString());
    expect(answer.shifts.length).toBeGreaterThan(55); // every other day for 120 days
    expect(answer.shifts.every((s) => s.person.slackUserId === DANA && s.schedule?.id === 'PSCH002')).toBe(
      true,
    );
    expect(answer.shifts.every((s) => s.level === 2 && s.escalationPolicy.id === 'PEP0001')).toBe(true);
    const starts = answer.shifts.map((s) => s.start!.getTime());
    expect(starts).toEqual([...starts].sort((a, b) => a - b));
    expect(new Set(starts).size).toBe(starts.length);
    // The same shifts the service lists for the whole range at once.
    expect(keys(answer.shifts)).toEqual(await direct('PUSR004', since, until));

    const windows = new Set<string>();
    for (const r of asked) {
      const q = new URL(r.url, sim.url).searchParams;
      expect(q.getAll('user_ids[]')).toEqual(['PUSR004']);
      const span = Date.parse(q.get('until')!) - Date.parse(q.get('since')!);
      expect(span).toBeLessThanOrEqual(ON_CALL_WINDOW_MS);
      expect(q.get('limit')).toBe('7');
      windows.add(`${q.get('since')}..${q.get('until')}`);
    }
    expect(windows.size).toBe(2);
    // 7 a page: many requests per window, each page after the first asked at the next offset.
    expect(asked.length).toBeGreaterThan(8);
    expect(asked.some((r) => new URL(r.url, sim.url).searchParams.get('offset') === '7')).toBe(true);
  });

  it('answers a range reaching past the 90-day horizon up to it, and one beyond it with nothing', async () => {
    const horizon = T0 + ON_CALL_WINDOW_MS;
    const far = await onCall.shiftsOf(
      { slackUserId: DANA },
      { since: new Date(T0 + 80 * DAY), until: new Date(T0 + 200 * DAY) },
    );
    expect(far.knownUntil.getTime()).toBe(horizon);
    expect(far.shifts.length).toBeGreaterThan(3);
    expect(far.shifts.every((s) => s.start!.getTime() <= horizon)).toBe(true);

    const beyond = await onCall.shiftsOf(
      { slackUserId: DANA },
      { since: new Date(T0 + 100 * DAY), until: new Date(T0 + 110 * DAY) },
    );
    expect(beyond).toEqual({ shifts: [], knownUntil: new Date(T0 + 100 * DAY) });
  });

  it('reports someone the escalation policies name directly as on call without bounds', async () => {
    const { shifts } = await onCall.shiftsOf(
      { slackUserId: FRANK },
      { since: new Date(T0), until: new Date(T0 + 7 * DAY) },
    );
    // Unbounded shifts come first, by level.
    expect(shifts.map((s) => [s.escalationPolicy.id, s.level, s.schedule, s.start, s.end])).toEqual([
      ['PEP0002', 2, null, null, null],
      ['PEP0001', 3, null, null, null],
    ]);
  });

  it('refuses a person with no incident-service user, saying so', async () => {
    await expect(
      onCall.shiftsOf({ slackUserId: 'U0NORA' }, { since: new Date(T0), until: new Date(T0 + DAY) }),
    ).rejects.toMatchObject({
      code: 'SB_UNMAPPED_USER',
      message: expect.stringContaining(
        "<@U0NORA>'s Slack email nora@example.com has no user in the incident service",
      ),
    });
  });
});

describe('schedule overrides', () => {
  it('puts a person on a schedule for a slot, which the on-call lookups then report', async () => {
    const start = new Date(T0 + 10 * DAY);
    const end = new Date(T0 + 11 * DAY);
    const [result] = await overrides.create([
      { scheduleId: 'PSCH001', person: { slackUserId: DANA }, start, end },
    ]);
    expect(result).toMatchObject({ ok: true, id: expect.any(String) });
    expect(
      sim.state.schedules
        .get('PSCH001')
        ?.overrides.map((o) => [o.userId, Date.parse(o.start), Date.parse(o.end)]),
    ).toContainEqual(['PUSR004', start.getTime(), end.getTime()]);
    const { shifts } = await onCall.shiftsOf({ slackUserId: DANA }, { since: start, until: end });
    expect(shifts.filter((s) => s.schedule?.id === 'PSCH001').map((s) => [s.level, s.start, s.end])).toEqual([
      [1, start, end],
    ]);
  });
});

describe('check first: is a slot already covered', () => {
  it('answers from GET /oncalls filtered by schedule and person: an override made before, their own turn', async () => {
    // The override of the test above: Dana on Payments Primary for [T0+10d, T0+11d).
    const slot = { scheduleId: 'PSCH001', person: { slackUserId: DANA } };
    const before = sim.requestsFor('listOnCalls').length;
    expect(
      await overrides.covered({ ...slot, start: new Date(T0 + 10 * DAY), end: new Date(T0 + 11 * DAY) }),
    ).toBe(true);
    const asked = new URL(sim.requestsFor('listOnCalls').at(before)!.url, sim.url).searchParams;
    expect(asked.getAll('schedule_ids[]')).toEqual(['PSCH001']);
    expect(asked.getAll('user_ids[]')).toEqual(['PUSR004']);
    // Half of it is someone else's.
    expect(
      await overrides.covered({ ...slot, start: new Date(T0 + 10 * DAY), end: new Date(T0 + 12 * DAY) }),
    ).toBe(false);
    // Ben's own weekly turn [T0-2d, T0+5d) covers a day in it; Chen's turn starts at T0+5d.
    expect(
      await overrides.covered({
        scheduleId: 'PSCH001',
        person: { slackUserId: BEN },
        start: new Date(T0),
        end: new Date(T0 + DAY),
      }),
    ).toBe(true);
    expect(
      await overrides.covered({
        scheduleId: 'PSCH001',
        person: { slackUserId: CHEN },
        start: new Date(T0 + 4 * DAY),
        end: new Date(T0 + 6 * DAY),
      }),
    ).toBe(false);
    // Not on that schedule at all.
    expect(
      await overrides.covered({
        scheduleId: 'PSCH002',
        person: { slackUserId: BEN },
        start: new Date(T0),
        end: new Date(T0 + DAY),
      }),
    ).toBe(false);
  });

  it('past the 90-day horizon of GET /oncalls, reads the schedule’s final rota instead', async () => {
    const slot = {
      scheduleId: 'PSCH001',
      person: { slackUserId: DANA },
      start: new Date(T0 + 100 * DAY),
      end: new Date(T0 + 101 * DAY),
    };
    expect(await overrides.covered(slot)).toBe(false);
    const [made] = await overrides.create([slot]);
    expect(made).toMatchObject({ ok: true });
    const before = sim.requestsFor('getSchedule').length;
    expect(await overrides.covered(slot)).toBe(true);
    expect(sim.requestsFor('getSchedule').length).toBe(before + 1);
    expect(await overrides.covered({ ...slot, end: new Date(T0 + 102 * DAY) })).toBe(false);
  });
});

describe('who could cover a shift', () => {
  const shift = {
    person: { slackUserId: ANA },
    escalationPolicy: { id: 'PEP0001', name: 'Payments' },
    level: 1,
    schedule: { id: 'PSCH001', name: 'Payments Primary' },
    start: new Date(T0 + 5 * DAY),
    end: new Date(T0 + 12 * DAY),
  };

  it('names the schedule’s people and every level of its policy, but the shift’s own person and people with no Slack user', async () => {
    // Payments Primary: Ana, Ben, Chen; the policy adds Payments Secondary (Dana, Eve) and Frank.
    // Eve has no Slack user.
    expect(await onCall.colleaguesOf(shift)).toEqual([
      { slackUserId: BEN },
      { slackUserId: CHEN },
      { slackUserId: DANA },
      { slackUserId: FRANK },
    ]);
    // A shift on Payments Secondary (Dana's) at level 2: the same people, Dana out, Ana in.
    expect(
      await onCall.colleaguesOf({
        ...shift,
        person: { slackUserId: DANA },
        level: 2,
        schedule: { id: 'PSCH002', name: 'Payments Secondary' },
      }),
    ).toEqual([{ slackUserId: ANA }, { slackUserId: BEN }, { slackUserId: CHEN }, { slackUserId: FRANK }]);
    // Named directly by the policy (no schedule): everyone else it names.
    expect(
      await onCall.colleaguesOf({ ...shift, person: { slackUserId: FRANK }, level: 3, schedule: null }),
    ).toEqual([{ slackUserId: ANA }, { slackUserId: BEN }, { slackUserId: CHEN }, { slackUserId: DANA }]);
  });

  it('reads each schedule and policy once for a DM listing several shifts, and nobody’s Slack user twice', async () => {
    const count = () =>
      sim.requestsFor('getSchedule').length +
      sim.requestsFor('getEscalationPolicy').length +
      sim.requestsFor('getUser').length;
    const before = count();
    for (let week = 0; week < 3; week++) {
      await onCall.colleaguesOf({
        ...shift,
        start: new Date(T0 + (5 + 7 * week) * DAY),
        end: new Date(T0 + (12 + 7 * week) * DAY),
      });
    }
    // All kept from the test above (within 5 minutes): nothing asked again.
    expect(count()).toBe(before);
  });
});

describe('policies naming a person', () => {
  it('lists the escalation policies with the person as a user target, at each level, asked with user_ids[]', async () => {
    const before = sim.requestsFor('listEscalationPolicies').length;
    expect(await onCall.policiesNaming({ slackUserId: FRANK })).toEqual([
      { id: 'PEP0001', name: 'Payments', level: 3 },
      { id: 'PEP0002', name: 'Platform', level: 2 },
    ]);
    const asked = new URL(sim.requestsFor('listEscalationPolicies').at(before)!.url, sim.url).searchParams;
    expect(asked.getAll('user_ids[]')).toEqual(['PUSR006']);
    expect(await onCall.policiesNaming({ slackUserId: CHEN })).toEqual([
      { id: 'PEP0002', name: 'Platform', level: 1 },
    ]);
    // On a schedule a policy names, but not named by one.
    expect(await onCall.policiesNaming({ slackUserId: ANA })).toEqual([]);
  });
});

describe('channels for a rota', () => {
  it('finds the channels subscribed to services whose policy is the one given, or names the schedule', async () => {
    const subscribe = async (service: { id: string; name: string }, channel: string) =>
      handleCommand(store, incidentRoutingDecider, incidentRoutingStreamId(service.id), {
        type: 'SubscribeChannelToIncidents',
        data: { service, channel, by: FRANK },
        metadata: { now: clock.now().toISOString(), commandId: `sub-${service.id}-${channel}`, actor: FRANK },
      });
    await subscribe({ id: 'PSVC001', name: 'Payments API' }, 'C0PAY');
    await subscribe({ id: 'PSVC002', name: 'Payments DB' }, 'C0PAYDB');
    await subscribe({ id: 'PSVC002', name: 'Payments DB' }, 'C0PAY');
    await subscribe({ id: 'PSVC003', name: 'Platform Gateway' }, 'C0EDGE');

    expect([...(await onCall.channelsFor({ scheduleId: 'PSCH002' }))].sort()).toEqual(['C0PAY', 'C0PAYDB']);
    expect([...(await onCall.channelsFor({ escalationPolicyId: 'PEP0002' }))]).toEqual(['C0EDGE']);
    expect([...(await onCall.channelsFor({ escalationPolicyId: 'PEP9999' }))]).toEqual([]);
  });
});

describe('night pages', () => {
  it('counts the pages sent to the person between 22:00 and 07:00 in their time zone, from the store', async () => {
    let n = 0;
    const page = async (slackUserId: string, kind: string, at: string) => {
      n += 1;
      await store.appendToStream(`incident-night-${n}`, [
        {
          id: randomUUID(),
          type: 'RecordIncidentPageActivity',
          kind: 'command',
          data: {
            streamId: `incident-night-${n}`,
            kind,
            slackUserId,
            name: null,
            level: null,
            detail: null,
            via: null,
          },
          metadata: {
            now: at,
            commandId: `night-${n}`,
            actor: 'system:paging',
            commandType: 'RecordIncidentPageActivity',
          },
        },
      ]);
    };
    // Chen is in Asia/Singapore (UTC+8).
    await onCall.policiesNaming({ slackUserId: CHEN }); // recorded who Chen is
    await page(CHEN, 'sms_submitted', '2026-11-19T15:00:00.000Z'); // 23:00 there: night
    await page(CHEN, 'sms_delivered', '2026-11-19T15:00:05.000Z'); // a receipt, not a page
    await page(CHEN, 'sms_submitted', '2026-11-19T03:00:00.000Z'); // 11:00 there: day
    await page(CHEN, 'sms_failed', '2026-11-20T22:30:00.000Z'); // 06:30 there: night (sent, not delivered)
    await page(CHEN, 'sms_submitted', '2026-11-02T16:00:00.000Z'); // night, three weeks back
    // Someone the incident service does not know: UTC.
    await page('U0NOBODY', 'sms_submitted', '2026-11-19T23:00:00.000Z');
    await page('U0NOBODY', 'sms_submitted', '2026-11-19T12:00:00.000Z');

    const users = sim.requestsFor('getUser').length;
    expect(await onCall.nightPagesOf({ slackUserId: CHEN }, new Date(T0 - 7 * DAY))).toBe(2);
    expect(await onCall.nightPagesOf({ slackUserId: CHEN }, new Date(T0 - 30 * DAY))).toBe(3);
    expect(await onCall.nightPagesOf({ slackUserId: 'U0NOBODY' }, new Date(T0 - 7 * DAY))).toBe(1);
    expect(await onCall.nightPagesOf({ slackUserId: BEN }, new Date(T0 - 7 * DAY))).toBe(0);
    // The time zone is asked once, not per page.
    expect(sim.requestsFor('getUser').length - users).toBeLessThanOrEqual(1);
  });
});

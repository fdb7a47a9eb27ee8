import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type PagerDutySimulator,
  startPagerDutySimulator,
} from '../../sandbox/simulators/pagerduty/index.ts';
import { defaultSeed } from '../../sandbox/simulators/pagerduty/model.ts';
import { type FakeSlack, startFakeSlack } from '../../sandbox/simulators/slack/fakeSlack.ts';
import { manualClock } from '../../src/core/clock.ts';
import type { EventStore } from '../../src/eventStore/eventStore.ts';
import { openEventStore } from '../../src/eventStore/openEventStore.ts';
import {
  createOnCallLookups,
  createScheduleOverridesPort,
  ON_CALL_WINDOW_MS,
} from '../../src/incidents/onCall.ts';
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

let sim: PagerDutySimulator;
let fake: FakeSlack;
let store: EventStore;
let pd: PagerDutyClient;
let onCall: OnCallLookups;
let overrides: ScheduleOverrides;

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
      { id: FRANK, name: 'frank', real_name: 'Frank Moreau', email: 'frank.moreau@example.org' },
      { id: 'U0NORA', name: 'nora', real_name: 'Nora', email: 'nora@example.com' },
    ],
  });
  store = await openEventStore('sqlite::memory:');
  const slack = createSlackWebClient({
    slack: {
      botToken: TOKEN,
      signingSecret: 's',
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
    ...slackUserLookups(slack),
  });
  onCall = createOnCallLookups({ pagerduty: pd, identity, now: () => clock.now(), pageSize: 7 });
  overrides = createScheduleOverridesPort({ pagerduty: pd, identity });
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

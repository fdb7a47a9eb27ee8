import { Agent } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  defaultSeed,
  type PagerDutySimulator,
  startPagerDutySimulator,
} from '../../sandbox/simulators/pagerduty/index.ts';
import { type ManualClock, manualClock } from '../../src/core/clock.ts';
import {
  createPagerDutyClient,
  PAGERDUTY_BULK_UPDATE_MAX,
  type PagerDutyClient,
  paginate,
} from '../../src/upstream/pagerduty.ts';
import { caught } from '../support/caught.ts';

// Sunday 2026-11-22 10:00 UTC: Ana has the weekly primary (since Mon 11-16 09:00), Eve the daily secondary.
const NOW = '2026-11-22T10:00:00.000Z';
/** Rotations pinned to a Monday 09:00 UTC so the shifts these tests compute by hand hold on NOW. */
const ROTATION_START = '2026-01-05T09:00:00Z';
const ANA = 'ana.silva@example.org';
const BEN = 'ben.okafor@example.org';
const ROUTING_KEY = 'a1b2c3d4e5f60718293a4b5c6d7e8f90';

let sim: PagerDutySimulator;
let clock: ManualClock;
let dispatcher: Agent;
let pd: PagerDutyClient;

const client = (overrides: Partial<Parameters<typeof createPagerDutyClient>[0]> = {}) =>
  createPagerDutyClient({
    apiUrl: sim.url,
    eventsUrl: sim.eventsUrl,
    token: sim.token,
    dispatcher,
    ...overrides,
  });

beforeEach(async () => {
  clock = manualClock(NOW);
  sim = await startPagerDutySimulator({
    clock,
    seed: defaultSeed({ rotationStart: ROTATION_START }),
    readOnlyTokens: ['read-only-key'],
  });
  dispatcher = new Agent();
  pd = client();
});

afterEach(async () => {
  try {
    sim.assertNoViolations();
  } finally {
    await sim.stop();
    await dispatcher.close();
  }
});

describe('headers', () => {
  it('sends the token, the versioned Accept and JSON content type on every call, and From on writes only', async () => {
    const created = await pd.createIncident({ from: ANA, serviceId: 'PSVC001', title: 'Checkout 500s' });
    await pd.getIncident(created.id);
    await pd.addIncidentNote(created.id, { from: BEN, content: 'on it' });
    for (const r of sim.requests) {
      expect(r.headers.authorization).toBe(`Token token=${sim.token}`);
      expect(r.headers.accept).toBe('application/vnd.pagerduty+json;version=2');
      expect(r.headers['content-type']).toBe('application/json');
    }
    expect(sim.requestsFor('createIncident')[0]?.headers.from).toBe(ANA);
    expect(sim.requestsFor('createIncidentNote')[0]?.headers.from).toBe(BEN);
    expect(sim.requestsFor('getIncident')[0]?.headers.from).toBeUndefined();
  });

  it('refuses a write without a plausible From email before sending anything', async () => {
    const err = await caught(pd.createIncident({ from: 'ana', serviceId: 'PSVC001', title: 'x' }));
    expect(err.code).toBe('SB_VALIDATION');
    expect(sim.requests).toHaveLength(0);
  });
});

describe('incidents', () => {
  it('creates an incident assigned to the level-1 on-call, with a string body and an incident key', async () => {
    const inc = await pd.createIncident({
      from: ANA,
      serviceId: 'PSVC001',
      title: 'Checkout 500s',
      details: 'error rate 12% on /pay',
      incidentKey: 'checkout/5xx',
      urgency: 'high',
      priorityId: 'PPRI002',
    });
    expect(inc).toMatchObject({
      status: 'triggered',
      title: 'Checkout 500s',
      incident_key: 'checkout/5xx',
      urgency: 'high',
    });
    expect(inc.assignments.map((a) => a.assignee.id)).toEqual(['PUSR001']);
    expect(inc.priority?.id).toBe('PPRI002');
    expect(sim.requestsFor('createIncident')[0]?.body).toMatchObject({
      incident: { type: 'incident', body: { type: 'incident_body', details: 'error rate 12% on /pay' } },
    });
    expect(sim.state.incidents.get(inc.id)?.details).toBe('error rate 12% on /pay');
  });

  it('refuses a second open incident with the same incident key (idempotent create)', async () => {
    await pd.createIncident({ from: ANA, serviceId: 'PSVC001', title: 'a', incidentKey: 'k-1' });
    const err = await caught(
      pd.createIncident({ from: ANA, serviceId: 'PSVC001', title: 'a again', incidentKey: 'k-1' }),
    );
    expect(err.code).toBe('SB_UPSTREAM_REJECTED');
    expect(err.details).toMatchObject({ reason: 'duplicate_incident_key', status: 400, retryable: false });
    expect((await pd.listIncidents({ incidentKey: 'k-1' })).items).toHaveLength(1);
  });

  it('rejects assignees together with an escalation policy client-side', async () => {
    const err = await caught(
      pd.createIncident({
        from: ANA,
        serviceId: 'PSVC001',
        title: 'x',
        assigneeIds: ['PUSR002'],
        escalationPolicyId: 'PEP0002',
      }),
    );
    expect(err.code).toBe('SB_VALIDATION');
    expect(sim.requests).toHaveLength(0);
  });

  it('gets an incident by id and by number', async () => {
    await pd.createIncident({ from: ANA, serviceId: 'PSVC001', title: 'first' });
    const second = await pd.createIncident({ from: ANA, serviceId: 'PSVC002', title: 'second' });
    expect((await pd.getIncident(second.id)).title).toBe('second');
    expect((await pd.getIncident(second.incident_number)).id).toBe(second.id);
    expect((await pd.getIncident(String(second.incident_number))).id).toBe(second.id);
    const err = await caught(pd.getIncident('QNOPE99'));
    expect(err.code).toBe('SB_NOT_FOUND');
    expect(err.details).toMatchObject({ vendorCode: 2100, status: 404 });
  });

  it('filters by status, service, team, urgency and date range with the vendor query syntax', async () => {
    const a = await pd.createIncident({ from: ANA, serviceId: 'PSVC001', title: 'a', urgency: 'high' });
    clock.advance(60_000);
    const b = await pd.createIncident({ from: ANA, serviceId: 'PSVC003', title: 'b', urgency: 'low' });
    clock.advance(60_000);
    const c = await pd.createIncident({ from: ANA, serviceId: 'PSVC002', title: 'c' });
    await pd.acknowledgeIncident(c.id, BEN);
    const ids = async (p: Parameters<PagerDutyClient['listIncidents']>[0]) =>
      (await pd.listIncidents(p)).items.map((i) => i.id);

    expect(await ids({ statuses: ['triggered'] })).toEqual([a.id, b.id]);
    expect(await ids({ statuses: ['triggered', 'acknowledged'] })).toEqual([a.id, b.id, c.id]);
    expect(await ids({ serviceIds: ['PSVC001', 'PSVC002'] })).toEqual([a.id, c.id]);
    expect(await ids({ teamIds: ['PTEAM02'] })).toEqual([b.id]);
    expect(await ids({ urgencies: ['low'] })).toEqual([b.id]);
    expect(await ids({ userIds: ['PUSR001'] })).toEqual([a.id, c.id]);
    expect(await ids({ since: '2026-11-22T10:00:30Z', until: '2026-11-22T10:01:30Z' })).toEqual([b.id]);
    expect(await ids({ sortBy: ['incident_number:desc'] })).toEqual([c.id, b.id, a.id]);
    // Older than the default one-month window: only date_range=all finds it.
    clock.advance(40 * 24 * 3600 * 1000);
    expect(await ids({})).toEqual([]);
    expect(await ids({ dateRange: 'all' })).toHaveLength(3);

    const q = new URL(sim.requestsFor('listIncidents')[1]!.url, sim.url).searchParams;
    expect(q.getAll('statuses[]')).toEqual(['triggered', 'acknowledged']);
  });

  it('pages with limit/offset/more and follows more to the end', async () => {
    for (let i = 0; i < 7; i++) sim.webApp.trigger({ serviceId: 'PSVC001', title: `inc ${i}`, byEmail: ANA });
    const first = await pd.listIncidents({ limit: 3, total: true });
    expect(first).toMatchObject({ limit: 3, offset: 0, more: true, total: 7 });
    const last = await pd.listIncidents({ limit: 3, offset: 6 });
    expect(last).toMatchObject({ more: false, total: null });
    expect(last.items.map((i) => i.title)).toEqual(['inc 6']);

    const all = await pd.listAllIncidents({}, {});
    expect(all.map((i) => i.title)).toEqual([0, 1, 2, 3, 4, 5, 6].map((i) => `inc ${i}`));
    const seen: number[] = [];
    for await (const inc of paginate((p) => pd.listIncidents({ ...p }), { limit: 2, maxItems: 5 })) {
      seen.push(inc.incident_number);
    }
    expect(seen).toEqual([1, 2, 3, 4, 5]);
    expect(sim.requestsFor('listIncidents').at(-1)?.url).toContain('limit=2');
  });

  it('enforces limit ≤ 100 and limit + offset ≤ 10,000 before calling', async () => {
    for (const bad of [
      { limit: 101 },
      { limit: 0 },
      { offset: -1 },
      { limit: 100, offset: 9_901 },
      { offset: 9_990 },
    ]) {
      const err = await caught(pd.listIncidents(bad));
      expect(err.code).toBe('SB_VALIDATION');
    }
    expect(sim.requests).toHaveLength(0);
    const edge = await pd.listIncidents({ limit: 100, offset: 9_900 });
    expect(edge.items).toEqual([]);
  });

  it('acknowledges, escalates, reprioritises, reassigns and resolves one incident', async () => {
    const inc = await pd.createIncident({ from: ANA, serviceId: 'PSVC001', title: 'db down' });
    const acked = await pd.acknowledgeIncident(inc.id, BEN);
    expect(acked.status).toBe('acknowledged');
    expect(acked.acknowledgements.map((a) => a.acknowledger.id)).toEqual(['PUSR002']);

    const escalated = await pd.escalateIncident(inc.id, BEN, 2);
    expect(escalated.assignments.map((a) => a.assignee.id)).toEqual(['PUSR005']);
    expect(sim.state.incidents.get(inc.id)?.escalationLevel).toBe(2);

    const prioritised = await pd.updateIncident(inc.id, {
      from: BEN,
      priority: 'P1',
      urgency: 'low',
      title: 'db down (primary)',
    });
    expect(prioritised).toMatchObject({ urgency: 'low', title: 'db down (primary)' });
    expect(prioritised.priority?.summary).toBe('P1');
    expect((await pd.updateIncident(inc.id, { from: BEN, priority: { id: 'PPRI003' } })).priority?.id).toBe(
      'PPRI003',
    );

    const reassigned = await pd.reassignIncident(inc.id, BEN, { userIds: ['PUSR003'] });
    expect(reassigned.assignments.map((a) => a.assignee.id)).toEqual(['PUSR003']);
    const delegated = await pd.reassignIncident(inc.id, BEN, { escalationPolicyId: 'PEP0002' });
    expect(delegated.escalation_policy?.id).toBe('PEP0002');
    expect(delegated.assignments.map((a) => a.assignee.id)).toEqual(['PUSR003']);

    const resolved = await pd.resolveIncident(inc.id, BEN, 'disk freed');
    expect(resolved).toMatchObject({ status: 'resolved', assignments: [] });
    expect(sim.requestsFor('updateIncident').at(-1)?.body).toEqual({
      incident: { type: 'incident_reference', status: 'resolved', resolution: 'disk freed' },
    });
    const again = await caught(pd.resolveIncident(inc.id, BEN));
    expect(again.code).toBe('SB_UPSTREAM_REJECTED');
    expect(again.details).toMatchObject({ reason: 'already_resolved', vendorCode: 1001 });
  });

  it('maps a From email that is no user to SB_UNMAPPED_USER', async () => {
    const inc = await pd.createIncident({ from: ANA, serviceId: 'PSVC001', title: 'x' });
    const err = await caught(pd.acknowledgeIncident(inc.id, 'stranger@example.org'));
    expect(err.code).toBe('SB_UNMAPPED_USER');
    expect(err.details).toMatchObject({ reason: 'requester_not_found', vendorCode: 1008 });
    expect(sim.state.incidents.get(inc.id)?.status).toBe('triggered');
  });

  it(`bulk-acknowledges in chunks of ${PAGERDUTY_BULK_UPDATE_MAX}`, async () => {
    const ids = Array.from(
      { length: 260 },
      (_, i) => sim.webApp.trigger({ serviceId: 'PSVC001', title: `n${i}`, byEmail: ANA }).id,
    );
    const updated = await pd.bulkUpdateStatus({ from: BEN, incidentIds: ids, status: 'acknowledged' });
    expect(updated).toHaveLength(260);
    expect(updated.every((i) => i.status === 'acknowledged')).toBe(true);
    const calls = sim
      .requestsFor('updateIncidents')
      .map((r) => (r.body as { incidents: unknown[] }).incidents.length);
    expect(calls).toEqual([250, 10]);
    expect(sim.requestsFor('updateIncidents').every((r) => r.headers.from === BEN)).toBe(true);
  });

  it('reports what a partly failed bulk update did change', async () => {
    const ids = Array.from(
      { length: 251 },
      (_, i) => sim.webApp.trigger({ serviceId: 'PSVC002', title: `m${i}`, byEmail: ANA }).id,
    );
    let calls = 0;
    sim.failNext((r) => r.operationId === 'updateIncidents' && ++calls === 2, { status: 503 });
    const err = await caught(
      pd.bulkUpdateStatus({ from: BEN, incidentIds: ids, status: 'resolved', resolution: 'cleanup' }),
    );
    expect(err.code).toBe('SB_UPSTREAM_UNAVAILABLE');
    expect((err.details.updatedIds as string[]).length).toBe(250);
    expect(sim.state.incidents.get(ids[250]!)?.status).toBe('triggered');
  });

  it('lists and adds notes, and lists alerts', async () => {
    const { dedupKey } = await pd.enqueueEvent({
      routingKey: ROUTING_KEY,
      eventAction: 'trigger',
      dedupKey: 'disk/db-primary',
      payload: {
        summary: 'disk 95%',
        source: 'db-primary',
        severity: 'critical',
        customDetails: { free: '5%' },
      },
    });
    const [inc] = (await pd.listIncidents({ incidentKey: dedupKey })).items;
    expect(inc).toBeDefined();
    await pd.addIncidentNote(inc!.id, { from: BEN, content: 'rotating logs' });
    const note = await pd.addIncidentNote(inc!.id, { from: ANA, content: 'freed 20%' });
    expect(note.user?.id).toBe('PUSR001');
    expect((await pd.listIncidentNotes(inc!.id)).map((n) => n.content)).toEqual([
      'rotating logs',
      'freed 20%',
    ]);
    const alerts = await pd.listIncidentAlerts(inc!.id, { statuses: ['triggered'] });
    expect(alerts.items).toHaveLength(1);
    expect(alerts.items[0]).toMatchObject({
      alert_key: 'disk/db-primary',
      status: 'triggered',
      severity: 'critical',
    });
  });
});

describe('services, schedules, on-calls, escalation policies, users', () => {
  it('lists and gets services', async () => {
    const all = await pd.listServices();
    expect(all.items.map((s) => s.name)).toEqual(['Payments API', 'Payments DB', 'Platform Gateway']);
    expect((await pd.listServices({ query: 'payments' })).items).toHaveLength(2);
    expect((await pd.listServices({ teamIds: ['PTEAM02'] })).items.map((s) => s.id)).toEqual(['PSVC003']);
    const svc = await pd.getService('PSVC002');
    expect(svc).toMatchObject({ name: 'Payments DB', escalation_policy: { id: 'PEP0001' } });
  });

  it('lists who is on call now, per level, including direct user targets', async () => {
    const now = await pd.listOnCalls({ escalationPolicyIds: ['PEP0001'] });
    expect(
      now.items.map((o) => [o.escalation_level, o.user.id, o.schedule?.id ?? null, o.start ?? null]),
    ).toEqual([
      [1, 'PUSR001', 'PSCH001', '2026-11-16T09:00:00Z'],
      [2, 'PUSR005', 'PSCH002', '2026-11-22T09:00:00Z'],
      [3, 'PUSR006', null, null],
    ]);
    const mine = await pd.listOnCalls({ userIds: ['PUSR006'] });
    expect(mine.items.map((o) => [o.escalation_policy.id, o.escalation_level])).toEqual([
      ['PEP0002', 2],
      ['PEP0001', 3],
    ]);
    const withUsers = await pd.listOnCalls({ scheduleIds: ['PSCH001'], include: ['users'] });
    expect(withUsers.items[0]?.user.email).toBe(ANA);
  });

  it('finds the next shifts with earliest over a time range', async () => {
    const next = await pd.listOnCalls({
      scheduleIds: ['PSCH001'],
      since: '2026-11-22T10:00:00Z',
      until: '2026-12-10T00:00:00Z',
      earliest: true,
    });
    expect(next.items.map((o) => [o.user.id, o.start, o.end])).toEqual([
      ['PUSR001', '2026-11-16T09:00:00Z', '2026-11-23T09:00:00Z'],
      ['PUSR002', '2026-11-23T09:00:00Z', '2026-11-30T09:00:00Z'],
      ['PUSR003', '2026-11-30T09:00:00Z', '2026-12-07T09:00:00Z'],
    ]);
  });

  it('renders a schedule for a range and applies an override', async () => {
    const before = await pd.getSchedule('PSCH001', {
      since: '2026-11-22T00:00:00Z',
      until: '2026-11-30T12:00:00Z',
    });
    expect(before.final_schedule?.rendered_schedule_entries.map((e) => [e.start, e.end, e.user?.id])).toEqual(
      [
        ['2026-11-22T00:00:00Z', '2026-11-23T09:00:00Z', 'PUSR001'],
        ['2026-11-23T09:00:00Z', '2026-11-30T09:00:00Z', 'PUSR002'],
        ['2026-11-30T09:00:00Z', '2026-11-30T12:00:00Z', 'PUSR003'],
      ],
    );
    const results = await pd.createScheduleOverrides('PSCH001', [
      { start: '2026-11-25T00:00:00Z', end: '2026-11-26T00:00:00Z', userId: 'PUSR005' },
      { start: '2026-11-27T00:00:00Z', end: '2026-11-28T00:00:00Z', userId: 'PNOBODY' },
    ]);
    expect(results.map((r) => r.status)).toEqual([201, 400]);
    expect(results[0]?.override?.user.id).toBe('PUSR005');
    const after = await pd.getSchedule('PSCH001', {
      since: '2026-11-24T00:00:00Z',
      until: '2026-11-27T00:00:00Z',
    });
    expect(after.final_schedule?.rendered_schedule_entries.map((e) => e.user?.id)).toEqual([
      'PUSR002',
      'PUSR005',
      'PUSR002',
    ]);
    const onCall = await pd.listOnCalls({
      scheduleIds: ['PSCH001'],
      since: '2026-11-25T12:00:00Z',
      until: '2026-11-25T12:00:00Z',
    });
    expect(onCall.items.map((o) => o.user.id)).toEqual(['PUSR005']);
    const err = await caught(
      pd.createScheduleOverrides('PSCH001', [
        { start: '2026-11-27T00:00:00Z', end: '2026-11-26T00:00:00Z', userId: 'PUSR005' },
      ]),
    );
    expect(err.code).toBe('SB_VALIDATION');
  });

  it('gets an escalation policy with its levels', async () => {
    const ep = await pd.getEscalationPolicy('PEP0001');
    expect(
      ep.escalation_rules.map((r) => [
        r.escalation_delay_in_minutes,
        r.targets.map((t) => `${t.type}:${t.id}`),
      ]),
    ).toEqual([
      [30, ['schedule_reference:PSCH001']],
      [30, ['schedule_reference:PSCH002']],
      [30, ['user_reference:PUSR006']],
    ]);
    expect(ep.services.map((s) => s.id)).toEqual(['PSVC001', 'PSVC002']);
  });

  it('finds a user by exact email although the API query matches substrings', async () => {
    const loose = await pd.listUsers({ query: ANA });
    expect(loose.items.map((u) => u.email).sort()).toEqual([
      'ana.silva@example.org',
      'ana.silva@example.org.contractor.test',
      'juliana.silva@example.org',
    ]);
    expect((await pd.findUserByEmail(ANA))?.id).toBe('PUSR001');
    expect((await pd.findUserByEmail('  ANA.Silva@Example.org '))?.id).toBe('PUSR001');
    expect(await pd.findUserByEmail('silva@example.org')).toBeUndefined();
    expect((await pd.getUser('PUSR002')).email).toBe(BEN);
  });

  it('finds an exact email on a later page of substring matches', async () => {
    for (let i = 0; i < 120; i++) {
      sim.state.addUser({
        name: `Ops ${String(i).padStart(3, '0')}`,
        email: `o${i}.ops@example.org`,
        timeZone: 'UTC',
        role: 'user',
        teamIds: [],
      });
    }
    sim.state.addUser({
      name: 'Zed Ops',
      email: 'ops@example.org',
      timeZone: 'UTC',
      role: 'user',
      teamIds: [],
    });
    const found = await pd.findUserByEmail('ops@example.org');
    expect(found?.name).toBe('Zed Ops');
    expect(sim.requestsFor('listUsers').length).toBeGreaterThan(1);
  });
});

describe('Events API v2', () => {
  it('triggers, deduplicates, acknowledges and resolves by dedup_key', async () => {
    const trigger = {
      routingKey: ROUTING_KEY,
      eventAction: 'trigger' as const,
      dedupKey: 'srv01/mysql',
      payload: { summary: 'mysql down', source: 'srv01', severity: 'critical' as const },
      client: 'Monitoring',
      clientUrl: 'https://monitoring.example.org',
      links: [{ href: 'https://monitoring.example.org/srv01', text: 'graph' }],
    };
    expect(await pd.enqueueEvent(trigger)).toEqual({
      dedupKey: 'srv01/mysql',
      status: 'success',
      message: 'Event processed',
    });
    await pd.enqueueEvent(trigger);
    const open = await pd.listIncidents({ incidentKey: 'srv01/mysql' });
    expect(open.items).toHaveLength(1);
    expect(open.items[0]?.title).toBe('mysql down');

    await pd.enqueueEvent({ routingKey: ROUTING_KEY, eventAction: 'acknowledge', dedupKey: 'srv01/mysql' });
    expect((await pd.getIncident(open.items[0]!.id)).status).toBe('acknowledged');
    await pd.enqueueEvent({ routingKey: ROUTING_KEY, eventAction: 'resolve', dedupKey: 'srv01/mysql' });
    expect((await pd.getIncident(open.items[0]!.id)).status).toBe('resolved');
    // A resolve for nothing open is accepted and dropped.
    expect(
      (await pd.enqueueEvent({ routingKey: ROUTING_KEY, eventAction: 'resolve', dedupKey: 'never-seen' }))
        .status,
    ).toBe('success');

    const sent = sim.requests.filter((r) => r.server === 'events');
    expect(sent.every((r) => r.headers.authorization === undefined)).toBe(true);
    expect(sent[0]?.body).toMatchObject({
      routing_key: ROUTING_KEY,
      event_action: 'trigger',
      dedup_key: 'srv01/mysql',
    });
  });

  it('returns the dedup key the service generated when none was given', async () => {
    const out = await pd.enqueueEvent({
      routingKey: ROUTING_KEY,
      eventAction: 'trigger',
      payload: { summary: 'cpu hot', source: 'web-3', severity: 'warning' },
    });
    expect(out.dedupKey).toMatch(/^[0-9a-f]{32}$/);
    expect((await pd.listIncidents({ incidentKey: out.dedupKey })).items[0]?.urgency).toBe('low');
  });

  it('records change events', async () => {
    const out = await pd.sendChangeEvent({
      routingKey: ROUTING_KEY,
      summary: 'deploy #42',
      source: 'ci',
      customDetails: { sha: 'abc' },
    });
    expect(out.status).toBe('success');
    expect(sim.state.changeEvents.map((c) => [c.serviceId, c.summary])).toEqual([['PSVC001', 'deploy #42']]);
  });

  it('checks routing keys and dedup keys client-side, and maps an unknown key to a validation error', async () => {
    const short = await caught(
      pd.enqueueEvent({ routingKey: 'short', eventAction: 'resolve', dedupKey: 'x' }),
    );
    expect(short.code).toBe('SB_VALIDATION');
    const long = await caught(
      pd.enqueueEvent({ routingKey: ROUTING_KEY, eventAction: 'resolve', dedupKey: 'x'.repeat(256) }),
    );
    expect(long.code).toBe('SB_VALIDATION');
    expect(sim.requests).toHaveLength(0);
    const unknown = await caught(
      pd.enqueueEvent({ routingKey: 'f'.repeat(32), eventAction: 'acknowledge', dedupKey: 'x' }),
    );
    expect(unknown.code).toBe('SB_VALIDATION');
    expect(unknown.details).toMatchObject({
      vendor: 'pagerduty-events',
      status: 400,
      vendorErrors: ['Invalid routing key'],
    });
  });

  it('maps an Events API 429 to SB_UPSTREAM_RATE_LIMITED with a default wait', async () => {
    sim.failNext('createV2Event', { status: 429, bare: true });
    const err = await caught(
      pd.enqueueEvent({ routingKey: ROUTING_KEY, eventAction: 'resolve', dedupKey: 'k' }),
    );
    expect(err.code).toBe('SB_UPSTREAM_RATE_LIMITED');
    expect(err.details).toMatchObject({ retryAfterMs: 5_000, retryAfterSource: 'default', retryable: true });
  });
});

describe('errors', () => {
  it('maps 401 to SB_UPSTREAM_AUTH, not retryable, without the token anywhere', async () => {
    const secret = 'u+wrong-token-very-secret';
    const err = await caught(client({ token: secret }).listServices());
    expect(err.code).toBe('SB_UPSTREAM_AUTH');
    expect(err.details).toMatchObject({ status: 401, retryable: false });
    const everything = `${err.message} ${JSON.stringify(err.details)} ${String(err.cause)} ${err.stack}`;
    expect(everything).not.toContain(secret);
  });

  it('maps 403 (read-only key writing) to SB_UPSTREAM_AUTH with the vendor code', async () => {
    const ro = client({ token: 'read-only-key' });
    expect((await ro.listServices()).items.length).toBe(3);
    const err = await caught(ro.createIncident({ from: ANA, serviceId: 'PSVC001', title: 'x' }));
    expect(err.code).toBe('SB_UPSTREAM_AUTH');
    expect(err.details).toMatchObject({
      status: 403,
      vendorCode: 2010,
      reason: 'access_denied',
      retryable: false,
    });
  });

  it('maps a 429 to SB_UPSTREAM_RATE_LIMITED honouring ratelimit-reset seconds', async () => {
    // The client counts its request budget on the simulator's clock.
    const pd = client({ clock });
    sim.failNext('listIncidents', { status: 429, resetSeconds: 7 });
    const err = await caught(pd.listIncidents());
    expect(err.code).toBe('SB_UPSTREAM_RATE_LIMITED');
    expect(err.details).toMatchObject({
      retryAfterMs: 7_000,
      retryAfterSource: 'headers',
      retryable: true,
      vendorCode: 2020,
    });
    // Until the reset the client sends nothing more (the budget is closed); then it goes through.
    const sent = sim.requests.length;
    expect((await caught(pd.listIncidents())).details).toMatchObject({ retryAfterSource: 'budget' });
    expect(sim.requests.length).toBe(sent);
    clock.advance(7_000);
    expect((await pd.listIncidents()).items).toEqual([]);
  });

  it('hits the configured per-minute limit and reads its reset header', async () => {
    const pd = client({ clock });
    sim.setRequestsPerMinute(2);
    await pd.listServices();
    clock.advance(15_000);
    await pd.listServices();
    const err = await caught(pd.listServices());
    expect(err.code).toBe('SB_UPSTREAM_RATE_LIMITED');
    expect(err.details.retryAfterMs).toBe(45_000);
    clock.advance(45_000);
    expect((await pd.listServices()).items).toHaveLength(3);
  });

  it.each([500, 502, 503, 504] as const)('maps %i to retryable SB_UPSTREAM_UNAVAILABLE', async (status) => {
    sim.failNext({ method: 'GET', path: '/services' }, { status });
    const err = await caught(pd.listServices());
    expect(err.code).toBe('SB_UPSTREAM_UNAVAILABLE');
    expect(err.details).toMatchObject({ status, retryable: true, maybeApplied: false });
  });

  it('maps a dropped connection to SB_UPSTREAM_UNAVAILABLE (network)', async () => {
    sim.failNext('getService', { status: 'reset' });
    const err = await caught(pd.getService('PSVC001'));
    expect(err.code).toBe('SB_UPSTREAM_UNAVAILABLE');
    expect(err.details).toMatchObject({ reason: 'network', retryable: true });
  });

  it('maps a slow answer to a timeout', async () => {
    sim.delayNext('getService', { ms: 1_000 });
    const err = await caught(client({ timeouts: { totalMs: 150 } }).getService('PSVC001'));
    expect(err.code).toBe('SB_UPSTREAM_UNAVAILABLE');
    expect(err.details).toMatchObject({ reason: 'timeout', retryable: true });
  });

  it('flags a write that failed after it was applied as maybeApplied', async () => {
    const inc = await pd.createIncident({ from: ANA, serviceId: 'PSVC001', title: 'x' });
    sim.failNext('updateIncident', { status: 500, afterApply: true });
    const err = await caught(pd.acknowledgeIncident(inc.id, BEN));
    expect(err.details).toMatchObject({ retryable: true, maybeApplied: true });
    expect(sim.state.incidents.get(inc.id)?.status).toBe('acknowledged');
  });

  it('maps a connection refused to SB_UPSTREAM_UNAVAILABLE that cannot have been applied', async () => {
    const gone = await startPagerDutySimulator();
    const url = gone.url;
    await gone.stop();
    const err = await caught(
      createPagerDutyClient({ apiUrl: url, eventsUrl: url, token: 't', dispatcher }).createIncident({
        from: ANA,
        serviceId: 'PSVC001',
        title: 'x',
      }),
    );
    expect(err.code).toBe('SB_UPSTREAM_UNAVAILABLE');
    expect(err.details).toMatchObject({
      reason: 'network',
      transportCode: 'ECONNREFUSED',
      maybeApplied: false,
    });
  });
});

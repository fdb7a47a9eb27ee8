import { Agent } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type HiBobSimulator,
  type HiBobSimulatorOptions,
  startHiBobSimulator,
} from '../../sandbox/simulators/hibob/index.ts';
import { type ManualClock, manualClock } from '../../src/core/clock.ts';
import {
  createHiBobClient,
  type HiBobAuthAlert,
  type HiBobClient,
  type HiBobClientOptions,
} from '../../src/upstream/hibob.ts';
import { createLogSink, type LogSink } from '../support/logSink.ts';
import { waitFor } from '../support/waitFor.ts';

/**
 * The HR client against the HR simulator over loopback, on one manual clock: both answer shapes of
 * people search, time off through the read-after-write lag, each error of the contract (400 naming
 * the field or policy, 403 naming the permission, 304 as success, 429 waited out, 401 stopping
 * every call for five minutes), the search budget (a storm queues; the simulator's own arrival
 * times prove the pace), and credentials that never reach an error or a log.
 */
const NOW = '2026-11-23T10:00:00.000Z';
const ANA = '3332883804594373011';
const ANA_EMAIL = 'ana.silva@switchboard.example';
const LAG_MS = 1_000;

let sim: HiBobSimulator;
let clock: ManualClock;
let dispatcher: Agent;
let hr: HiBobClient;
let timers: ReturnType<typeof manualTimers>;
let sink: LogSink;
let alerts: HiBobAuthAlert[];

/** Waits on the manual clock: a test lets the earliest wait go with `fireNext()`. */
const manualTimers = (c: ManualClock) => {
  const waiting: Array<{ at: number; resolve: () => void }> = [];
  return {
    waitUntil: (at: number) =>
      c.now().getTime() >= at
        ? Promise.resolve()
        : new Promise<void>((resolve) => waiting.push({ at, resolve })),
    pending: () => waiting.length,
    fireNext() {
      waiting.sort((a, b) => a.at - b.at);
      const next = waiting[0];
      if (!next) return;
      if (c.now().getTime() < next.at) c.set(new Date(next.at));
      for (const w of waiting.filter((x) => x.at <= c.now().getTime())) {
        waiting.splice(waiting.indexOf(w), 1);
        w.resolve();
      }
    },
  };
};

/** Runs the work, moving the clock to the next wait only when no search is out. */
const drive = async <T>(work: () => Promise<T>): Promise<T> => {
  let finished = false;
  const out = work().finally(() => {
    finished = true;
  });
  out.catch(() => undefined);
  while (!finished) {
    await waitFor(() => finished || (timers.pending() > 0 && hr.searchInFlight() === 0), {
      what: 'every request let go to be answered',
    });
    if (!finished) timers.fireNext();
  }
  return out;
};

const start = async (
  simOptions: HiBobSimulatorOptions = {},
  clientOptions: Partial<HiBobClientOptions> = {},
) => {
  clock = manualClock(NOW);
  timers = manualTimers(clock);
  dispatcher = new Agent();
  sink = createLogSink();
  alerts = [];
  sim = await startHiBobSimulator({ clock, lagMs: LAG_MS, ...simOptions });
  hr = createHiBobClient({
    ...sim.clientOptions(),
    dispatcher,
    clock,
    waitUntil: timers.waitUntil,
    logger: sink.logger(),
    onAuthAlert: (a) => alerts.push(a),
    ...clientOptions,
  });
};

afterEach(async () => {
  sim.assertNoViolations();
  await sim.stop();
  await dispatcher.close();
});

const failure = (p: Promise<unknown>) =>
  p.then(
    () => {
      throw new Error('expected a failure');
    },
    (e: unknown) => e as { code: string; message: string; details: Record<string, unknown> },
  );

describe('people', () => {
  it.each([
    ['slash', 'object'],
    ['slash', 'string'],
    ['nested', 'object'],
    ['nested', 'string'],
    ['both', 'object'],
  ] as const)(
    'search answers in %s notation with reportsTo as %s parse to the same employees',
    async (answerShape, reportsToShape) => {
      await start({ answerShape, reportsToShape });
      const people = await hr.searchPeople();
      const ana = people.find((p) => p.id === ANA);
      expect(ana).toEqual({
        id: ANA,
        email: ANA_EMAIL,
        displayName: 'Ana Silva',
        firstName: 'Ana',
        surname: 'Silva',
        title: 'Site Reliability Engineer',
        department: 'Engineering',
        site: 'Lisbon',
        managerId: sim.employee('dana.kowalski@switchboard.example')?.id,
        startDate: '2022-03-01',
        status: 'employed',
      });
      expect(people.every((p) => p.status === 'employed')).toBe(true);
      const raw = sim.requestsFor('searchPeople')[0]?.body as Record<string, unknown>;
      expect(raw.showInactive).toBe(false);
    },
  );

  it('filters by email with one filter, includes inactive people only when asked, reads one by email', async () => {
    await start();
    const found = await hr.searchPeople({ filter: { fieldPath: 'root.email', values: [ANA_EMAIL] } });
    expect(found.map((p) => p.id)).toEqual([ANA]);
    expect(sim.requestsFor('searchPeople')[0]?.body).toMatchObject({
      filters: [{ fieldPath: 'root.email', operator: 'equals', values: [ANA_EMAIL] }],
    });
    const everyone = await hr.searchPeople({ showInactive: true });
    const active = await hr.searchPeople();
    expect(everyone.length).toBe(active.length + 1);
    expect(everyone.find((p) => p.status === 'terminated')?.email).toBe(
      'former.employee@switchboard.example',
    );
    expect((await hr.getEmployee(ANA_EMAIL)).id).toBe(ANA);
    expect((await failure(hr.getEmployee('nobody@switchboard.example'))).code).toBe('SB_NOT_FOUND');
  });

  it('a no-op update (304) is success without a change; a real change is one', async () => {
    await start();
    expect(await hr.updateEmployee(ANA, { work: { title: 'Site Reliability Engineer' } })).toEqual({
      changed: false,
    });
    expect(sim.requestsFor('updateEmployee')[0]?.status).toBe(304);
    expect(await hr.updateEmployee(ANA, { work: { title: 'Staff SRE' } })).toEqual({ changed: true });
  });
});

describe('time off through the read-after-write lag', () => {
  it('a submitted request is found through the changes feed, read, out and counted only once the lag has passed', async () => {
    await start();
    const manager = sim.employee(ANA)!.managerId!;
    const before = await hr.balance(ANA, 'Holiday', '2026-12-01');
    const since = clock.now();
    await hr.submitTimeOff(ANA, {
      policyType: 'Holiday',
      startDate: '2026-12-01',
      endDate: '2026-12-03',
      description: 'family visit',
      skipManagerApproval: true,
      approver: manager,
    });
    expect(sim.requestsFor('submitTimeOff')[0]?.body).toEqual({
      requestRangeType: 'days',
      policyType: 'Holiday',
      startDate: '2026-12-01',
      endDate: '2026-12-03',
      startDatePortion: 'all_day',
      endDatePortion: 'all_day',
      description: 'family visit',
      skipManagerApproval: true,
      approver: manager,
    });
    const match = { policyType: 'Holiday', startDate: '2026-12-01', endDate: '2026-12-03' };
    // Within the lag every read shows the old state.
    clock.advance(LAG_MS - 1);
    expect(await hr.findSubmittedRequest(ANA, match, since)).toBeUndefined();
    expect(await hr.whosOut({ from: '2026-12-01', to: '2026-12-31' })).toEqual([]);
    expect((await hr.balance(ANA, 'Holiday', '2026-12-01')).totalBalanceAsOfDate).toBe(
      before.totalBalanceAsOfDate,
    );
    // Then it shows.
    clock.advance(1);
    const created = await hr.findSubmittedRequest(ANA, match, since);
    expect(created).toMatchObject({ changeType: 'Created', employeeId: ANA, status: 'approved' });
    const read = await hr.getTimeOffRequest(ANA, created!.requestId);
    expect(read).toMatchObject({
      status: 'approved',
      startDate: '2026-12-01',
      endDate: '2026-12-03',
      totalDuration: 3,
    });
    expect((await hr.whosOut({ from: '2026-12-01', to: '2026-12-31' })).map((o) => o.requestId)).toEqual([
      created!.requestId,
    ]);
    expect((await hr.balance(ANA, 'Holiday', '2026-12-01')).totalBalanceAsOfDate).toBe(
      before.totalBalanceAsOfDate - 3,
    );

    // Cancelling: the write acts at once, the reads catch up after the lag.
    await hr.cancelTimeOffRequest(ANA, created!.requestId);
    expect((await hr.getTimeOffRequest(ANA, created!.requestId)).status).toBe('approved');
    clock.advance(LAG_MS);
    expect((await hr.getTimeOffRequest(ANA, created!.requestId)).status).toBe('canceled');
    expect((await hr.changesSince(since)).map((c) => c.changeType)).toEqual(['Created', 'Canceled']);
    expect(await hr.policyTypes()).toEqual(['Holiday', 'Sick']);
  });
});

describe('time off made in the HR web app', () => {
  it('a pending request shows in the changes feed and who is out only with includePending, after the lag', async () => {
    await start();
    const since = clock.now();
    const id = sim.webApp.requestTimeOff({
      employeeId: ANA,
      policyType: 'Sick',
      startDate: '2026-11-24',
      endDate: '2026-11-24',
      startDatePortion: 'afternoon',
    });
    expect(await hr.changesSince(since, { includePending: true })).toEqual([]);
    clock.advance(LAG_MS);
    expect(await hr.changesSince(since)).toEqual([]);
    expect(await hr.changesSince(since, { includePending: true })).toMatchObject([
      {
        changeType: 'Created',
        requestId: id,
        employeeId: ANA,
        status: 'pending',
        startDatePortion: 'afternoon',
      },
    ]);
    expect(await hr.whosOut({ from: '2026-11-24', to: '2026-11-24' })).toEqual([]);
    expect(await hr.whosOut({ from: '2026-11-24', to: '2026-11-24', includePending: true })).toMatchObject([
      { requestId: id, employeeId: ANA, employeeDisplayName: 'Ana Silva', status: 'pending' },
    ]);
    expect((await hr.getTimeOffRequest(ANA, id)).totalDuration).toBe(0.5);
  });
});

describe('errors', () => {
  it('400 names the unknown policy or the refused field, in words for the requester', async () => {
    await start();
    const policy = await failure(
      hr.submitTimeOff(ANA, { policyType: 'Holidy', startDate: '2026-12-01', endDate: '2026-12-01' }),
    );
    expect(policy.code).toBe('SB_VALIDATION');
    expect(policy.details.policy).toBe('Holidy');
    expect(policy.details.forRequester).toContain('no time-off policy called "Holidy"');

    await hr.submitTimeOff(ANA, { policyType: 'Sick', startDate: '2026-12-07', endDate: '2026-12-08' });
    const overlap = await failure(
      hr.submitTimeOff(ANA, { policyType: 'Holiday', startDate: '2026-12-08', endDate: '2026-12-09' }),
    );
    expect(overlap.code).toBe('SB_VALIDATION');
    expect(overlap.details.field).toBe('startDate');
    expect(overlap.details.forRequester).toBe(
      'HR refused the start date (or the dates overlap time off you already have). Check it and try again.',
    );
  });

  it('bad input is refused before anything is sent, naming what was wrong', async () => {
    await start();
    const cases = [
      hr.submitTimeOff(ANA, { policyType: 'Holiday', startDate: '2026-02-30', endDate: '2026-03-01' }),
      hr.submitTimeOff(ANA, { policyType: 'Holiday', startDate: '2026-12-02', endDate: '2026-12-01' }),
      hr.submitTimeOff('../people', {
        policyType: 'Holiday',
        startDate: '2026-12-01',
        endDate: '2026-12-01',
      }),
      hr.submitTimeOff(ANA, {
        policyType: 'Holiday',
        startDate: '2026-12-01',
        endDate: '2026-12-01',
        approver: ANA,
      }),
      hr.getTimeOffRequest(ANA, -1),
      hr.getEmployee('a/b'),
    ];
    const fields = [];
    for (const c of cases) {
      const e = await failure(c);
      expect(e.code).toBe('SB_VALIDATION');
      fields.push(e.details.field);
    }
    expect(fields).toEqual(['startDate', 'endDate', 'employeeId', 'approver', 'requestId', 'identifier']);
    expect(sim.requests).toHaveLength(0);
  });

  it('403 names the missing permission for an operator', async () => {
    await start();
    sim.setPermissions(sim.clientOptions().serviceUserId, [
      'People: view',
      'Time off: view',
      'Time off: edit',
    ]);
    const e = await failure(
      hr.submitTimeOff(ANA, {
        policyType: 'Holiday',
        startDate: '2026-12-01',
        endDate: '2026-12-01',
        skipManagerApproval: true,
        approver: sim.employee(ANA)!.managerId!,
      }),
    );
    expect(e.code).toBe('SB_UPSTREAM_AUTH');
    expect(e.details.permission).toBe('Time off: import');
    expect(e.message).toContain('Time off: import');
    // A 403 is not a credentials failure: the next call goes.
    expect(hr.authCircuit().open).toBe(false);
    expect((await failure(hr.policyTypes())).details.permission).toBe('Time off: settings');
  });

  it('429 waits until X-RateLimit-Reset, then goes again', async () => {
    await start();
    sim.failNext('whosOut', { status: 429 });
    const outs = await drive(() => hr.whosOut({ from: '2026-12-01', to: '2026-12-02' }));
    expect(outs).toEqual([]);
    const [first, second] = sim.requestsFor('whosOut');
    expect(first?.status).toBe(429);
    expect(second?.status).toBe(200);
    expect(second!.at).toBeGreaterThanOrEqual(Math.ceil(first!.at / 1000) * 1000 + 1000);
  });

  it('the token never reaches an error, even when the service echoes the Authorization header', async () => {
    await start();
    const { token, serviceUserId } = sim.clientOptions();
    sim.failNext('getEmployee', { status: 500, echoAuthorization: true });
    const e = await failure(hr.getEmployee(ANA));
    expect(e.code).toBe('SB_UPSTREAM_UNAVAILABLE');
    const basic = Buffer.from(`${serviceUserId}:${token}`).toString('base64');
    for (const secret of [token, basic]) {
      expect(JSON.stringify({ m: e.message, d: e.details })).not.toContain(secret);
    }
  });
});

describe('401: every HR call stops for five minutes', () => {
  it('one 401 opens the circuit: nothing reaches the service for five minutes, then one probe goes', async () => {
    await start();
    const { token } = sim.clientOptions();
    sim.failNext('whosOut', { status: 401, echoAuthorization: true });
    const first = await failure(hr.whosOut({ from: '2026-12-01', to: '2026-12-01' }));
    expect(first.code).toBe('SB_UPSTREAM_AUTH');
    expect(first.details.retryAt).toBe('2026-11-23T10:05:00.000Z');
    expect(JSON.stringify({ m: first.message, d: first.details })).not.toContain(token);
    expect(alerts).toEqual([
      { operation: 'whosOut', at: NOW, retryAt: '2026-11-23T10:05:00.000Z', failures: 1 },
    ]);
    const alert = sink.lines().find((l) => l.code === 'HIBOB_AUTH_FAILED');
    expect(alert?.level).toBe('error');
    expect(sink.text()).not.toContain(token);

    const sent = sim.requests.length;
    for (const call of [
      () => hr.searchPeople(),
      () => hr.getEmployee(ANA),
      () => hr.policyTypes(),
      () => hr.submitTimeOff(ANA, { policyType: 'Holiday', startDate: '2026-12-01', endDate: '2026-12-01' }),
    ]) {
      const e = await failure(call());
      expect(e.code).toBe('SB_UPSTREAM_AUTH');
      expect(e.details).toMatchObject({ reason: 'auth_circuit_open', retryAt: '2026-11-23T10:05:00.000Z' });
    }
    clock.advance(5 * 60_000 - 1);
    expect((await failure(hr.policyTypes())).details.reason).toBe('auth_circuit_open');
    expect(sim.requests.length).toBe(sent);

    // The block is over: one probe goes; while it is out, every other call is still refused.
    clock.advance(1);
    let open!: () => void;
    sim.delayNext('policyTypes', { until: new Promise<void>((r) => (open = r)) });
    const probe = hr.policyTypes();
    await waitFor(() => sim.requestsFor('policyTypes').length === 1, { what: 'the probe to arrive' });
    expect((await failure(hr.getEmployee(ANA))).details.reason).toBe('auth_circuit_open');
    open();
    expect(await probe).toEqual(['Holiday', 'Sick']);
    expect(sim.requests.length).toBe(sent + 1);
    // The credentials were accepted: the circuit is closed again.
    expect(hr.authCircuit().open).toBe(false);
    expect((await hr.getEmployee(ANA)).id).toBe(ANA);
  });

  it('calls already out when the circuit opens count their 401s, and the operator is told once', async () => {
    await start();
    sim.failNext('policyTypes', { status: 401, times: 2 });
    const [a, b] = await Promise.all([failure(hr.policyTypes()), failure(hr.policyTypes())]);
    expect([a.details.reason, b.details.reason]).toEqual(['auth_failed', 'auth_failed']);
    expect(sim.requestsFor('policyTypes')).toHaveLength(2);
    expect(hr.authCircuit()).toMatchObject({ open: true, failures: 2 });
    expect(alerts).toHaveLength(1);
    expect(sink.lines().filter((l) => l.code === 'HIBOB_AUTH_FAILED')).toHaveLength(1);
  });

  it('searches queued for the budget when a 401 opens the circuit are never sent', async () => {
    await start();
    sim.failNext('searchPeople', { status: 401 });
    const outcomes = await drive(() =>
      Promise.allSettled(Array.from({ length: 60 }, () => hr.searchPeople())),
    );
    // The ten of the second minute waited past the 401: refused unsent, whatever the first 50 did.
    const arrivals = sim.requestsFor('searchPeople');
    expect(arrivals.length).toBeLessThanOrEqual(50);
    expect(arrivals.every((r) => r.at === Date.parse(NOW))).toBe(true);
    const refused = outcomes.filter((o) => o.status === 'rejected');
    expect(refused.length).toBeGreaterThanOrEqual(11);
    expect(
      refused.every(
        (o) => ((o as PromiseRejectedResult).reason as { code: string }).code === 'SB_UPSTREAM_AUTH',
      ),
    ).toBe(true);
    expect(alerts).toHaveLength(1);
  });

  it('wrong credentials: the first 401 stops the client, long before the service would block the address', async () => {
    await start({}, { token: 'wrong-token' });
    const e = await failure(hr.searchPeople());
    expect(e.code).toBe('SB_UPSTREAM_AUTH');
    for (let i = 0; i < 60; i++) await failure(hr.searchPeople());
    expect(sim.requests).toHaveLength(1);
    expect(alerts).toHaveLength(1);
    sim.clearViolations();
  });
});

describe('the search budget', () => {
  it('120 searches at once queue at 50 a minute: no 429, and no 60 s window of arrivals holds more than 50', async () => {
    await start({}, { maxQueueMs: 180_000 });
    const all = await drive(() => Promise.all(Array.from({ length: 120 }, () => hr.searchPeople())));
    expect(all).toHaveLength(120);
    const arrivals = sim.requestsFor('searchPeople');
    expect(arrivals.every((r) => r.status === 200)).toBe(true);
    const ats = arrivals.map((r) => r.at).sort((a, b) => a - b);
    for (let i = 50; i < ats.length; i++) expect(ats[i]! - ats[i - 50]!).toBeGreaterThanOrEqual(60_000);
    // It took the two minutes it had to: no faster, as the service counts.
    expect(ats.at(-1)! - ats[0]!).toBeGreaterThanOrEqual(120_000);
  });

  it('a search that would queue longer than maxQueueMs is refused unsent, naming when to come back', async () => {
    await start();
    const outcomes = await drive(() =>
      Promise.allSettled(Array.from({ length: 150 }, () => hr.searchPeople())),
    );
    const refused = outcomes.filter((o) => o.status === 'rejected');
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(100);
    expect(refused).toHaveLength(50);
    const e = (refused[0] as PromiseRejectedResult).reason as {
      code: string;
      details: Record<string, unknown>;
    };
    expect(e.code).toBe('SB_UPSTREAM_RATE_LIMITED');
    expect(e.details).toMatchObject({ vendor: 'hibob', retryAfterSource: 'budget' });
    expect(sim.requestsFor('searchPeople')).toHaveLength(100);
  });
});

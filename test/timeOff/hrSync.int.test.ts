import { afterEach, describe, expect, it } from 'vitest';
import { employeeById } from '../../machines/timeOff/directory.ts';
import { signHiBobWebhook } from '../../src/upstream/hibobSignature.ts';
import { waitFor } from '../support/waitFor.ts';
import { HR_IDS, startTimeOffHarness, type TimeOffHarness } from './harness.ts';
import { advance, advanceUntil, approve, phaseOf, requestTimeOff, settle } from './hrFixtures.ts';

let h: TimeOffHarness | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
});

const DECEMBER = { from: '2026-12-01', to: '2026-12-31' };

const absencesOf = async (harness: TimeOffHarness, employeeHrId: string) => {
  await harness.api.readModel.catchUp();
  return harness.api.readModel.absences(DECEMBER, employeeHrId);
};

/** What the inbox recorded of HR's webhooks (inputs, kept as commands). */
const inbox = async (harness: TimeOffHarness) =>
  (await harness.sb.store.readStream('inbox-hibob')).filter((e) => e.type === 'WebhookReceived');

const post = (harness: TimeOffHarness, body: string, signature: string) =>
  fetch(`${harness.url}/webhooks/hibob`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'bob-signature': signature },
    body,
  });

const payload = (type: string, data: Record<string, unknown>) =>
  JSON.stringify({
    companyId: 640_001,
    type,
    triggeredBy: 'system',
    triggeredAt: '2026-11-23T09:00:00.000000',
    version: 'v2',
    data,
  });

describe('HR sync: requests made in the HR web app', () => {
  it('a request made and then cancelled in HR shows in absences through its webhooks', async () => {
    h = await startTimeOffHarness();
    const hrId = h.sim.webApp.requestTimeOff({
      employeeId: HR_IDS.ben,
      policyType: 'Holiday',
      startDate: '2026-12-07',
      endDate: '2026-12-08',
    });
    await settle(h);
    // The webhook came at once; HR shows the request only after its lag: nothing read yet.
    expect(await absencesOf(h, HR_IDS.ben)).toEqual([]);
    await advanceUntil(h, async () => (await absencesOf(h!, HR_IDS.ben)).length === 1);
    expect((await absencesOf(h, HR_IDS.ben))[0]).toMatchObject({
      hrRequestId: String(hrId),
      timeOffId: null,
      displayName: 'Ben Okafor',
      startDate: '2026-12-07',
      endDate: '2026-12-08',
      status: 'requested',
    });
    h.sim.webApp.cancel(hrId);
    await advanceUntil(h, async () => (await absencesOf(h!, HR_IDS.ben)).length === 0);
    expect(h.api.readModel.hrEntry(String(hrId))?.status).toBe('cancelled');
  });

  it('with the webhooks lost, the changes poll finds the request and its cancel', async () => {
    h = await startTimeOffHarness();
    h.sim.connect('http://127.0.0.1:9');
    const hrId = h.sim.webApp.requestTimeOff({
      employeeId: HR_IDS.chen,
      policyType: 'Sick',
      startDate: '2026-12-02',
      endDate: '2026-12-02',
    });
    await h.sim.webhooks.idle();
    await advance(h, 21_000);
    expect(await absencesOf(h, HR_IDS.chen)).toEqual([]);
    await h.api.sync.pollChanges();
    expect(await absencesOf(h, HR_IDS.chen)).toMatchObject([
      { hrRequestId: String(hrId), policyType: 'Sick' },
    ]);
    h.sim.webApp.cancel(hrId);
    await advance(h, 21_000);
    await h.api.sync.pollChanges();
    expect(await absencesOf(h, HR_IDS.chen)).toEqual([]);
    expect(h.sim.webhooks.attempts.some((a) => a.outcome === 'delivered')).toBe(false);
    // Each poll asks from where the last one ended, with an overlap of HR's lag (30 s), durably.
    const polls = h.sim.requestsFor('timeOffChanges');
    expect(polls.length).toBe(2);
    const sinceOf = (url: string) => new URL(url, 'http://hr.test').searchParams.get('since');
    expect(sinceOf(polls[1]!.url)).toBe(new Date(polls[0]!.at - 30_000).toISOString());
  });
});

describe('POST /webhooks/hibob', () => {
  it('a redelivered webhook is recorded once', async () => {
    h = await startTimeOffHarness();
    h.sim.webApp.requestTimeOff({
      employeeId: HR_IDS.ana,
      policyType: 'Holiday',
      startDate: '2026-12-14',
      endDate: '2026-12-15',
    });
    await settle(h);
    const delivered = h.sim.webhooks.attempts.find((a) => a.outcome === 'delivered');
    expect(delivered).toBeDefined();
    const before = (await inbox(h)).length;
    expect(before).toBe(1);
    const again = await post(h, delivered!.body, delivered!.headers['bob-signature']!);
    expect(again.status).toBe(200);
    expect(await again.json()).toMatchObject({ duplicate: true });
    expect((await inbox(h)).length).toBe(before);
    const reads = (await h.sb.store.readAll({ filter: { streamPrefixes: ['hrread-'] } })).filter(
      (e) => e.type === 'HrReReadRequested',
    );
    expect(reads).toHaveLength(1);
  });

  it('a forged Bob-Signature is refused 401 and nothing is stored', async () => {
    h = await startTimeOffHarness();
    const before = (await h.sb.store.readAll({})).length;
    const body = payload('employee.left', { employeeId: HR_IDS.chen });
    const res = await post(h, body, signHiBobWebhook(body, 'not-the-secret'));
    expect(res.status).toBe(401);
    const missing = await fetch(`${h.url}/webhooks/hibob`, { method: 'POST', body });
    expect(missing.status).toBe(401);
    expect((await h.sb.store.readAll({})).length).toBe(before);
  });

  it('an unknown type is answered 200 and recorded; a malformed payload or a hostile id is 400', async () => {
    h = await startTimeOffHarness();
    const unknown = payload('payroll.run.completed', { runId: 7 });
    const res = await post(h, unknown, signHiBobWebhook(unknown, h.sim.webhookSecret));
    expect(res.status).toBe(200);
    expect((await inbox(h)).length).toBe(1);
    const malformed = JSON.stringify({ type: 'employee.updated' });
    expect((await post(h, malformed, signHiBobWebhook(malformed, h.sim.webhookSecret))).status).toBe(400);
    const hostile = payload('timeoff.request.requested', {
      employeeId: HR_IDS.ana,
      timeoffRequestId: '1/../2',
    });
    expect((await post(h, hostile, signHiBobWebhook(hostile, h.sim.webhookSecret))).status).toBe(400);
    const hostileEmployee = payload('employee.updated', { employeeId: '../people/search' });
    expect(
      (await post(h, hostileEmployee, signHiBobWebhook(hostileEmployee, h.sim.webhookSecret))).status,
    ).toBe(400);
    expect((await inbox(h)).length).toBe(1);
  });
});

describe('HR sync: the directory', () => {
  it('a full refresh spends one people search; an employee webhook re-reads one employee, no search', async () => {
    h = await startTimeOffHarness();
    expect(h.sim.requestsFor('searchPeople')).toHaveLength(1);
    h.sim.webApp.terminate(HR_IDS.chen);
    const chen = async () => {
      await h!.api.readModel.catchUp();
      return employeeById(h!.api.readModel.directory(), HR_IDS.chen);
    };
    expect((await chen())?.status).toBe('active');
    await advanceUntil(h, async () => (await chen())?.status === 'left');
    expect(h.sim.requestsFor('searchPeople')).toHaveLength(1);
    expect(h.sim.requestsFor('getEmployee').length).toBeGreaterThan(0);

    h.sim.connect('http://127.0.0.1:9');
    h.sim.webApp.update(HR_IDS.ben, { site: 'Porto' });
    await advance(h, 21_000);
    await h.api.sync.refreshDirectory();
    await h.api.readModel.catchUp();
    expect(h.sim.requestsFor('searchPeople')).toHaveLength(2);
    const search = h.sim.requestsFor('searchPeople')[1]!;
    expect(search.body).toMatchObject({ showInactive: true });
    expect(employeeById(h.api.readModel.directory(), HR_IDS.ben)?.site).toBe('Porto');
    expect(employeeById(h.api.readModel.directory(), HR_IDS.chen)?.status).toBe('left');
    const fields = (search.body as { fields: string[] }).fields;
    expect(fields).toEqual(
      expect.arrayContaining(['root.email', 'work.reportsTo', 'work.site', 'internal.lifecycleStatus']),
    );
  });

  it('at start the directory is read only when it is empty or older than the interval', async () => {
    h = await startTimeOffHarness({ timeOff: { directoryRefreshMs: 60 * 60_000 } });
    const searches = () => h!.sim.requestsFor('searchPeople').length;
    const said = (msg: string) => h!.logs.lines().filter((l) => l.msg === msg).length;
    const FRESH = 'HR directory is fresh: not read at start';
    const STALE = 'HR directory is empty or stale: read at start';
    const READ = 'HR directory read (one people search)';
    // The first start decides (and reads when it found nothing), besides the harness's own read.
    await waitFor(() => said(FRESH) + said(STALE) === 1 && said(READ) === 1 + said(STALE), {
      what: 'the decision at the first start',
    });
    const first = searches();
    const fresh = said(FRESH);
    const stale = said(STALE);
    await h.restart();
    await waitFor(() => said(FRESH) + said(STALE) === 2, { what: 'the decision after a restart' });
    expect(said(FRESH)).toBe(fresh + 1);
    expect(searches()).toBe(first);
    h.clock.advance(61 * 60_000);
    await h.restart();
    await waitFor(() => said(STALE) === stale + 1 && searches() === first + 1, {
      what: 'the stale directory read again',
    });
  });
});

describe('HR sync: our own submissions', () => {
  it('a submission HR took but showed too late for the lookups is still found by its webhook, never resubmitted', async () => {
    h = await startTimeOffHarness({
      timeOff: { lagRetry: { baseMs: 1_000, maxMs: 1_000, jitter: 0, maxAttempts: 2 } },
    });
    const id = await requestTimeOff(h);
    await approve(h, id);
    await waitFor(async () => (await h!.types(id)).includes('TimeOffSubmissionSent'), { what: 'sent' });
    await advanceUntil(h, async () => {
      const events = await h!.sb.store.readStream(`timeoff-${id}`);
      return events.some(
        (e) => e.type === 'TimeOffUpstreamCallFailed' && (e.data as { final: boolean }).final,
      );
    });
    const final = (await h.sb.store.readStream(`timeoff-${id}`)).find(
      (e) => e.type === 'TimeOffUpstreamCallFailed' && (e.data as { final: boolean }).final,
    );
    expect(final?.data).toMatchObject({ action: 'submit', code: 'SB_HR_NOT_VISIBLE' });
    expect(await phaseOf(h, id)).toBe('approved');
    await advanceUntil(h, async () => (await phaseOf(h!, id)) === 'confirmed');
    expect(h.sim.requestsFor('submitTimeOff')).toHaveLength(1);
    expect(await h.types(id)).not.toContain('TimeOffSubmissionFailed');
  });
});

import { afterEach, describe, expect, it } from 'vitest';
import { ChatOpsError } from '../../src/core/errors.ts';
import { createHiBobClient } from '../../src/upstream/hibob.ts';
import { waitFor } from '../support/waitFor.ts';
import { startTimeOffHarness, type TimeOffHarness } from './harness.ts';
import { advance, advanceUntil, approve, cancel, phaseOf, requestTimeOff } from './hrFixtures.ts';

let h: TimeOffHarness | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
});

const eventsOf = async (harness: TimeOffHarness, timeOffId: string) =>
  (await harness.sb.store.readStream(`timeoff-${timeOffId}`)).filter((e) => e.kind === 'event');

const atOf = async (
  harness: TimeOffHarness,
  timeOffId: string,
  type: string,
): Promise<number | undefined> => {
  const e = (await eventsOf(harness, timeOffId)).find((x) => x.type === type);
  return e ? Date.parse(String((e.data as { at: string }).at)) : undefined;
};

describe('time off in HR: submit, find the id, read back', () => {
  it('approve → submitted → confirmed, only once the clock passes HR’s 20 s lag; posted once', async () => {
    h = await startTimeOffHarness();
    const id = await requestTimeOff(h);
    await approve(h, id);
    await h.idle();
    const approvedAt = await atOf(h, id, 'TimeOffApproved');
    await waitFor(async () => (await h!.types(id)).includes('TimeOffSubmissionSent'), {
      what: 'the submission sent',
    });
    expect(h.sim.requestsFor('submitTimeOff')).toHaveLength(1);
    expect(await phaseOf(h, id)).toBe('approved');

    await advanceUntil(h, async () => (await phaseOf(h!, id)) === 'confirmed');
    const submittedAt = await atOf(h, id, 'TimeOffSubmitted');
    const confirmedAt = await atOf(h, id, 'TimeOffConfirmed');
    expect(submittedAt! - approvedAt!).toBeGreaterThanOrEqual(20_000);
    expect(confirmedAt!).toBeGreaterThanOrEqual(submittedAt!);
    // Looking for the id was recorded as failed attempts on the lag policy, never a sleep.
    const looks = (await eventsOf(h, id)).filter(
      (e) =>
        e.type === 'TimeOffUpstreamCallFailed' && (e.data as { code: string }).code === 'SB_HR_NOT_VISIBLE',
    );
    expect(looks.length).toBeGreaterThan(0);
    expect(looks.every((e) => typeof (e.data as { nextAttemptAt: unknown }).nextAttemptAt === 'string')).toBe(
      true,
    );
    expect(h.sim.requestsFor('submitTimeOff')).toHaveLength(1);
    const inHr = h.sim.timeOffRequests().filter((r) => r.employeeId === '3332883804594373003');
    expect(inHr).toHaveLength(1);
    expect(inHr[0]).toMatchObject({
      status: 'approved',
      approver: '3332883804594373002',
      policyType: 'Holiday',
    });
    expect(h.api.readModel.hrRequestIdOf(id)).toBe(String(inHr[0]!.requestId));
  });

  it('a restart after HR took the POST never posts it again', async () => {
    h = await startTimeOffHarness();
    const id = await requestTimeOff(h);
    await approve(h, id);
    await waitFor(async () => (await h!.types(id)).includes('TimeOffSubmissionSent'), {
      what: 'the submission sent',
    });
    await h.restart();
    await advanceUntil(h, async () => (await phaseOf(h!, id)) === 'confirmed');
    await h.restart();
    await advance(h, 60_000);
    expect(h.sim.requestsFor('submitTimeOff')).toHaveLength(1);
    expect(h.sim.timeOffRequests()).toHaveLength(1);
  });

  it('an invalid policy is refused by HR and told in words; it can be fixed and sent again', async () => {
    h = await startTimeOffHarness();
    const id = await requestTimeOff(h, { policyType: 'Sabbatical' });
    await approve(h, id);
    await waitFor(async () => (await phaseOf(h!, id)) === 'submissionFailed', { what: 'refused' });
    const failed = (await eventsOf(h, id)).find((e) => e.type === 'TimeOffSubmissionFailed');
    expect((failed?.data as { reason?: string } | undefined)?.reason).toBe(
      'HR has no time-off policy called "Sabbatical". Pick one of the policies HR offers.',
    );
  });

  it('401: no HR call for 5 minutes, then the retry goes through', async () => {
    h = await startTimeOffHarness();
    h.sim.failNext('submitTimeOff', { status: 401 });
    const id = await requestTimeOff(h);
    await approve(h, id);
    await waitFor(async () => (await h!.types(id)).includes('TimeOffUpstreamCallFailed'), {
      what: 'the 401',
    });
    const failure = (await eventsOf(h, id)).find((e) => e.type === 'TimeOffUpstreamCallFailed');
    expect(failure?.data).toMatchObject({ code: 'SB_UPSTREAM_AUTH', final: false });
    const calls = h.sim.requests.length;
    for (let i = 0; i < 29; i++) await advance(h, 10_000);
    expect(h.sim.requests.length).toBe(calls);
    expect(await phaseOf(h, id)).toBe('approved');
    await advanceUntil(h, async () => (await phaseOf(h!, id)) === 'confirmed');
    expect(h.sim.requestsFor('submitTimeOff').filter((r) => r.status === 200)).toHaveLength(1);
    expect(h.logs.lines().some((r) => r.code === 'HIBOB_AUTH_FAILED')).toBe(true);
  });

  it('429: the retry waits for X-RateLimit-Reset, then the request is recorded', async () => {
    h = await startTimeOffHarness();
    h.sim.failNext('submitTimeOff', { status: 429, times: 2 });
    const id = await requestTimeOff(h);
    await approve(h, id);
    await waitFor(async () => (await h!.types(id)).includes('TimeOffUpstreamCallFailed'), {
      what: 'the 429',
    });
    const failure = (await eventsOf(h, id)).find((e) => e.type === 'TimeOffUpstreamCallFailed');
    expect(failure?.data).toMatchObject({ code: 'SB_UPSTREAM_RATE_LIMITED', final: false });
    await advanceUntil(h, async () => (await phaseOf(h!, id)) === 'confirmed');
    expect(h.sim.requestsFor('submitTimeOff').filter((r) => r.status === 200)).toHaveLength(1);
  });

  it('403: a final failure in words for the requester, and an operator alert naming the permission', async () => {
    h = await startTimeOffHarness();
    h.sim.setPermissions(h.sim.env().HIBOB_SERVICE_USER_ID!, [
      'People: view',
      'Time off: view',
      'Time off: edit',
    ]);
    const id = await requestTimeOff(h);
    await approve(h, id);
    await waitFor(async () => (await phaseOf(h!, id)) === 'submissionFailed', { what: 'refused' });
    const failed = (await eventsOf(h, id)).find((e) => e.type === 'TimeOffSubmissionFailed');
    expect((failed?.data as { reason?: string } | undefined)?.reason).toBe(
      "HR refused Switchboard's permission to record time off; an admin has been told.",
    );
    expect((failed?.data as { reason?: string } | undefined)?.reason).not.toContain('Time off: import');
    const alert = h.logs.lines().find((r) => r.code === 'HIBOB_PERMISSION_MISSING');
    expect(alert).toMatchObject({ permission: 'Time off: import', level: 'error' });
    const metrics = await h.sb.metrics.registry.render();
    expect(metrics).toMatch(
      /switchboard_hibob_permission_refused_total\{[^}]*permission="Time off: import"[^}]*\} 1/,
    );
  });

  it('cancel after submission cancels it in HR', async () => {
    h = await startTimeOffHarness();
    const id = await requestTimeOff(h);
    await approve(h, id);
    await advanceUntil(h, async () => (await phaseOf(h!, id)) === 'confirmed');
    await cancel(h, id);
    await waitFor(async () => (await phaseOf(h!, id)) === 'cancelled', { what: 'cancelled' });
    expect(h.sim.timeOffRequests()[0]?.status).toBe('canceled');
    expect(h.sim.requestsFor('cancelTimeOffRequest')).toHaveLength(1);
  });
});

describe('time off in HR: cancels on both sides', () => {
  it('cancelled while HR had not shown the submission yet: its HR request is cancelled once found', async () => {
    h = await startTimeOffHarness();
    const id = await requestTimeOff(h);
    await approve(h, id);
    await waitFor(async () => (await h!.types(id)).includes('TimeOffSubmissionSent'), { what: 'sent' });
    await cancel(h, id);
    expect(await phaseOf(h, id)).toBe('cancelling');
    await advanceUntil(h, async () => (await phaseOf(h!, id)) === 'cancelled');
    expect(h.sim.timeOffRequests()).toMatchObject([{ status: 'canceled' }]);
    expect(h.sim.requestsFor('submitTimeOff')).toHaveLength(1);
    // The cancel replaced the read-back once HR's id was known.
    expect(await h.types(id)).toContain('TimeOffSubmitted');
    expect(await h.types(id)).not.toContain('TimeOffConfirmed');
  });

  it('a confirmed request cancelled in the HR web app is cancelled in Switchboard too', async () => {
    h = await startTimeOffHarness();
    const id = await requestTimeOff(h);
    await approve(h, id);
    await advanceUntil(h, async () => (await phaseOf(h!, id)) === 'confirmed');
    const hrId = Number(h.api.readModel.hrRequestIdOf(id));
    h.sim.webApp.cancel(hrId);
    await advanceUntil(h, async () => (await phaseOf(h!, id)) === 'cancelled');
    const cancelled = (await eventsOf(h, id)).find((e) => e.type === 'TimeOffCancelled');
    expect(cancelled?.data).toMatchObject({ by: 'hr', cancelRequestId: null });
    expect(h.sim.requestsFor('cancelTimeOffRequest')).toHaveLength(0);
  });
});

describe('time off in HR: a POST whose answer was lost', () => {
  it('is not posted again: the retry waits out HR’s lag, finds it and records it', async () => {
    let lose = 1;
    h = await startTimeOffHarness({
      hrClient: (sim, clock) => {
        const hr = createHiBobClient({ ...sim.clientOptions(), clock });
        return {
          ...hr,
          async submitTimeOff(...args) {
            await hr.submitTimeOff(...args);
            // HR took it; the answer never came back.
            if (lose-- > 0) throw new ChatOpsError('SB_TIMEOUT', 'hibob submitTimeOff: no answer in time');
          },
        };
      },
    });
    const id = await requestTimeOff(h);
    await approve(h, id);
    await advanceUntil(h, async () => (await phaseOf(h!, id)) === 'confirmed');
    expect(h.sim.requestsFor('submitTimeOff')).toHaveLength(1);
    expect(h.sim.timeOffRequests()).toHaveLength(1);
    const codes = (await eventsOf(h, id))
      .filter((e) => e.type === 'TimeOffUpstreamCallFailed')
      .map((e) => (e.data as { code: string }).code);
    expect(codes.slice(0, 2)).toEqual(['SB_TIMEOUT', 'SB_HR_NOT_VISIBLE']);
  });
});

describe('time off in HR: the same days asked twice', () => {
  it('the second is not taken for the first one’s HR request: HR refuses the overlap, in words', async () => {
    h = await startTimeOffHarness();
    const first = await requestTimeOff(h);
    await approve(h, first);
    await advanceUntil(h, async () => (await phaseOf(h!, first)) === 'confirmed');
    const second = await requestTimeOff(h);
    await approve(h, second);
    await advanceUntil(h, async () => (await phaseOf(h!, second)) === 'submissionFailed');
    expect(h.api.readModel.hrRequestIdOf(second)).toBeNull();
    const failed = (await eventsOf(h, second)).find((e) => e.type === 'TimeOffSubmissionFailed');
    expect((failed?.data as { reason?: string } | undefined)?.reason).toContain(
      'overlap time off you already have',
    );
    expect(h.sim.timeOffRequests()).toHaveLength(1);
  });
});

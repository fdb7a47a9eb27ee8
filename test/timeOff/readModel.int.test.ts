import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Command } from '../../src/core/messages.ts';
import { shortTimeOffId } from '../../src/timeOff/blocks/timeOffIds.ts';
import { caught } from '../support/caught.ts';
import {
  ANA,
  BEN,
  DANA,
  GIL,
  HR_EMPLOYEES,
  HR_IDS,
  startTimeOffHarness,
  type TimeOffHarness,
} from './harness.ts';

/**
 * The read model, the people lookups and the `absences` port, on the real store, fed by the
 * lifecycle's own commands (the directory snapshot, requests, HR's calendar entries).
 */
let h: TimeOffHarness;

const command = (type: string, data: Record<string, unknown>, actor = 'system:test'): Command =>
  ({
    type,
    data,
    metadata: { now: h.clock.now().toISOString(), commandId: randomUUID(), actor },
  }) as Command;

const snapshot = (changes: Record<string, Partial<{ managerHrId: string | null; status: string }>> = {}) =>
  command('RecordDirectorySnapshot', {
    employees: HR_EMPLOYEES.map((e) => ({
      hrId: e.id,
      email: e.email,
      displayName: e.displayName,
      managerHrId: e.managerId,
      site: e.site,
      status: 'active',
      ...changes[e.id],
    })),
  });

const request = async (timeOffId: string, ask: Partial<Record<string, string>> = {}) => {
  const { requester, approver } = await h.api.people.requesterAndApprover(ANA);
  await h.sb.bus.dispatch(
    command(
      'RequestTimeOff',
      {
        timeOffId,
        requester,
        approver,
        policyType: 'Holiday',
        startDate: '2026-12-07',
        endDate: '2026-12-09',
        startPortion: 'all_day',
        endPortion: 'all_day',
        description: 'family trip',
        holidays: [],
        approvalRules: null,
        ...ask,
      },
      ANA,
    ),
  );
};

beforeEach(async () => {
  h = await startTimeOffHarness();
  await h.sb.bus.dispatch(snapshot());
});
afterEach(async () => {
  await h.stop();
});

describe('who asks and who approves, from the directory', () => {
  it('finds the requester by their Slack email and their manager as approver, and links both', async () => {
    const { requester, approver } = await h.api.people.requesterAndApprover(ANA);
    expect(requester).toEqual({ hrId: HR_IDS.ana, slackUserId: ANA, displayName: 'Ana Silva' });
    expect(approver).toEqual({ hrId: HR_IDS.dana, slackUserId: DANA, displayName: 'Dana Lee' });
    await h.api.readModel.catchUp();
    expect(h.api.readModel.employeeOfSlackUser(ANA)).toBe(HR_IDS.ana);
    expect(h.api.readModel.slackUserOfEmployee(HR_IDS.dana)).toBe(DANA);
    // No HR people search was spent on it.
    expect(h.sim.requestsFor('searchPeople').length).toBeLessThanOrEqual(1);
  });

  it('says what is missing: not in HR, no manager, a manager who left', async () => {
    const notInHr = await caught(h.api.people.requesterAndApprover(GIL));
    expect(notInHr).toMatchObject({ code: 'SB_UNMAPPED_USER' });
    expect(String((notInHr as Error).message)).toMatch(/gil@example\.org has no user in HR/);

    await h.sb.bus.dispatch(snapshot({ [HR_IDS.ana]: { managerHrId: null } }));
    const noManager = await caught(h.api.people.requesterAndApprover(ANA));
    expect(String((noManager as Error).message)).toMatch(/HR has no manager for you/);

    await h.sb.bus.dispatch(snapshot({ [HR_IDS.dana]: { status: 'left' } }));
    const managerLeft = await caught(h.api.people.requesterAndApprover(BEN));
    expect(String((managerLeft as Error).message)).toMatch(/Dana Lee, has left/);
  });
});

describe('the read model', () => {
  it('lists a request for its requester and its approver, and finds it by short id', async () => {
    const id = randomUUID();
    await request(id);
    const rm = h.api.readModel;
    await rm.catchUp();
    expect(rm.view(id)).toMatchObject({ phase: 'requested', workingDays: 3, policyType: 'Holiday' });
    expect(rm.requestsOf(ANA).map((v) => v.timeOffId)).toEqual([id]);
    expect(rm.pendingApprovalsOf(DANA).map((v) => v.timeOffId)).toEqual([id]);
    expect(rm.pendingApprovalsOf(ANA)).toEqual([]);
    expect(rm.findByShortId(ANA, shortTimeOffId(id).toUpperCase()).map((v) => v.timeOffId)).toEqual([id]);
    // Only the requester's own requests; too short a prefix finds nothing.
    expect(rm.findByShortId(BEN, shortTimeOffId(id))).toEqual([]);
    expect(rm.findByShortId(ANA, shortTimeOffId(id).slice(0, 3))).toEqual([]);
    expect(rm.state(randomUUID())).toBeNull();
  });

  it('merges Switchboard requests and HR entries into absences, once per request', async () => {
    const id = randomUUID();
    await request(id);
    // Ben's leave was made in the HR web app; an old cancelled one must not show.
    for (const entry of [
      {
        hrRequestId: '501',
        employeeId: HR_IDS.ben,
        startDate: '2026-12-08',
        endDate: '2026-12-10',
        status: 'approved',
      },
      {
        hrRequestId: '502',
        employeeId: HR_IDS.ben,
        startDate: '2026-12-01',
        endDate: '2026-12-01',
        status: 'cancelled',
      },
      {
        hrRequestId: '503',
        employeeId: HR_IDS.dana,
        startDate: '2027-01-04',
        endDate: '2027-01-05',
        status: 'pending',
      },
    ]) {
      await h.sb.bus.dispatch(
        command('RecordHrTimeOff', {
          entry: { policyType: 'Holiday', startPortion: 'all_day', endPortion: 'all_day', ...entry },
        }),
      );
    }
    const rm = h.api.readModel;
    await rm.catchUp();
    const december = rm.absences({ from: '2026-12-01', to: '2026-12-31' });
    expect(december.map((a) => [a.displayName, a.status, a.startDate])).toEqual([
      ['Ana Silva', 'requested', '2026-12-07'],
      ['Ben Okafor', 'approved', '2026-12-08'],
    ]);
    expect(rm.absences({ from: '2026-12-10', to: '2026-12-10' }).map((a) => a.displayName)).toEqual([
      'Ben Okafor',
    ]);
    expect(
      rm.absences({ from: '2026-12-01', to: '2027-01-31' }, HR_IDS.dana).map((a) => a.hrRequestId),
    ).toEqual(['503']);
    // A cancelled request no longer holds days.
    await h.sb.bus.dispatch(command('CancelTimeOff', { timeOffId: id }, ANA));
    await rm.catchUp();
    expect(rm.absences({ from: '2026-12-01', to: '2026-12-31' }).map((a) => a.displayName)).toEqual([
      'Ben Okafor',
    ]);
  });
});

describe('the absences port', () => {
  it('answers for a person and for everyone, with Slack users found by email', async () => {
    const id = randomUUID();
    await request(id);
    await h.sb.bus.dispatch(
      command('RecordHrTimeOff', {
        entry: {
          hrRequestId: '777',
          employeeId: HR_IDS.ben,
          policyType: 'Sick',
          startDate: '2026-12-08',
          endDate: '2026-12-08',
          startPortion: 'all_day',
          endPortion: 'all_day',
          status: 'approved',
        },
      }),
    );
    const absences = h.sb.ports.require('absences', 'test');
    const week = { since: new Date('2026-12-07T00:00:00Z'), until: new Date('2026-12-12T00:00:00Z') };
    const ana = await absences.absencesOf({ slackUserId: ANA }, week);
    expect(ana).toEqual([
      {
        person: { slackUserId: ANA },
        start: new Date('2026-12-07T00:00:00Z'),
        end: new Date('2026-12-10T00:00:00Z'),
        kind: 'Holiday',
        status: 'requested',
        // Her last day as she counts days (issue 19: the port says it, for "on leave until").
        lastDay: '2026-12-09',
      },
    ]);
    const everyone = await absences.whoIsOut(week);
    expect(everyone.map((a) => [a.person.slackUserId, a.kind])).toEqual([
      [ANA, 'Holiday'],
      [BEN, 'Sick'],
    ]);
    // A range that ends at midnight does not reach into the next day.
    const before = { since: new Date('2026-12-01T00:00:00Z'), until: new Date('2026-12-07T00:00:00Z') };
    expect(await absences.absencesOf({ slackUserId: ANA }, before)).toEqual([]);
    // Someone HR does not know is away on no day.
    expect(await absences.absencesOf({ slackUserId: GIL }, week)).toEqual([]);
  });
});

describe('after a restart', () => {
  it('resumes from its snapshot: the same answers, without reading the history again', async () => {
    const id = randomUUID();
    await request(id);
    await h.sb.bus.dispatch(
      command('RecordHrTimeOff', {
        entry: {
          hrRequestId: '901',
          employeeId: HR_IDS.ben,
          policyType: 'Holiday',
          startDate: '2026-12-08',
          endDate: '2026-12-08',
          startPortion: 'all_day',
          endPortion: 'all_day',
          status: 'approved',
        },
      }),
    );
    await h.idle();
    const rm = () => h.api.readModel;
    await rm().catchUp();
    const december = { from: '2026-12-01', to: '2026-12-31' };
    const before = {
      view: rm().view(id),
      absences: rm().absences(december),
      pending: rm()
        .pendingApprovalsOf(DANA)
        .map((v) => v.timeOffId),
      dana: rm().slackUserOfEmployee(HR_IDS.dana),
      directory: rm().directory().size,
    };
    expect(before.absences).toHaveLength(2);

    await h.restart();
    await h.idle();
    await rm().catchUp();
    // Everything it knew came from the snapshot written at the stop, not from the history.
    expect(rm().resumable.appliedSinceStart()).toBe(0);
    expect({
      view: rm().view(id),
      absences: rm().absences(december),
      pending: rm()
        .pendingApprovalsOf(DANA)
        .map((v) => v.timeOffId),
      dana: rm().slackUserOfEmployee(HR_IDS.dana),
      directory: rm().directory().size,
    }).toEqual(before);

    // A restored request still moves on: its machine state came back whole.
    await h.sb.bus.dispatch(command('CancelTimeOff', { timeOffId: id }, ANA));
    await rm().catchUp();
    expect(rm().view(id)?.phase).toBe('cancelled');
    expect(
      rm()
        .absences(december)
        .map((a) => a.displayName),
    ).toEqual(['Ben Okafor']);
  });
});

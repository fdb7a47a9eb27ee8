import { describe, expect, it } from 'vitest';
import { timeOff } from '../../handlers/timeOff/module.ts';
import {
  type DirectoryEmployee,
  type DirectoryState,
  directoryDecider,
} from '../../machines/timeOff/directory.ts';
import { ConfigError, lifecycleConfig, loadConfig } from '../../src/config.ts';
import { ALL_LIFECYCLES } from '../../src/lifecycleList.ts';
import {
  type ApproverFacts,
  awayUntilAt,
  awayUntilOf,
  reportingLine,
  routeApprover,
} from '../../src/timeOff/approvers.ts';
import { absenceInterval } from '../../src/timeOff/localDays.ts';
import { TEST_DATA_KEYS } from '../support/dataKeys.ts';

/** Frank → Dana → Ana, plus Gus (reports to Frank, no Slack). */
const person = (
  hrId: string,
  name: string,
  managerHrId: string | null,
  status: DirectoryEmployee['status'] = 'active',
): DirectoryEmployee => ({
  hrId,
  email: `${name.toLowerCase()}@example.org`,
  displayName: name,
  managerHrId,
  site: null,
  status,
});

const directoryOf = (people: readonly DirectoryEmployee[]): DirectoryState =>
  people.reduce(
    (state, e) => directoryDecider.evolve(state, { type: 'DirectoryEmployeeAdded', data: { ...e, at: '' } }),
    directoryDecider.initialState(),
  );

const ORG = [person('1', 'Frank', null), person('2', 'Dana', '1'), person('3', 'Ana', '2')];
const SLACK: Record<string, string> = { '1': 'U0FRANK', '2': 'U0DANA', '3': 'U0ANA' };

const facts = (over: Partial<ApproverFacts> & { away?: Record<string, string> } = {}): ApproverFacts => ({
  awayUntil: (hrId) => over.away?.[hrId] ?? null,
  slackOf: (hrId) => SLACK[hrId] ?? null,
  hrChannel: null,
  ...over,
});

describe('the approver chain rule', () => {
  it('is the manager when they are here', () => {
    const route = routeApprover(reportingLine(directoryOf(ORG), '3'), facts());
    expect(route).toMatchObject({
      kind: 'person',
      approver: { hrId: '2' },
      slackUserId: 'U0DANA',
      skipped: [],
      awayUntil: null,
    });
  });

  it('goes past a manager on leave to their manager, saying who and until when', () => {
    const route = routeApprover(reportingLine(directoryOf(ORG), '3'), facts({ away: { '2': '2026-12-04' } }));
    expect(route).toEqual({
      kind: 'person',
      approver: expect.objectContaining({ hrId: '1' }),
      slackUserId: 'U0FRANK',
      skipped: [
        { hrId: '2', slackUserId: 'U0DANA', displayName: 'Dana', reason: 'away', until: '2026-12-04' },
      ],
      awayUntil: null,
    });
  });

  it('goes past a manager who left or has no Slack account', () => {
    const org = [person('1', 'Frank', null), person('2', 'Dana', '1', 'left'), person('3', 'Ana', '2')];
    expect(routeApprover(reportingLine(directoryOf(org), '3'), facts())).toMatchObject({
      kind: 'person',
      approver: { hrId: '1' },
      skipped: [{ hrId: '2', reason: 'left', until: null }],
    });
    const noSlack = facts({ slackOf: (hrId) => (hrId === '2' ? null : (SLACK[hrId] ?? null)) });
    expect(routeApprover(reportingLine(directoryOf(ORG), '3'), noSlack)).toMatchObject({
      kind: 'person',
      approver: { hrId: '1' },
      skipped: [{ hrId: '2', reason: 'no_slack', slackUserId: null }],
    });
  });

  it('ends in the HR channel when everyone up the line is away or gone', () => {
    const route = routeApprover(
      reportingLine(directoryOf(ORG), '3'),
      facts({ away: { '2': '2026-12-04', '1': '2026-12-10' }, hrChannel: 'C0PEOPLE' }),
    );
    expect(route).toMatchObject({
      kind: 'hr_channel',
      channel: 'C0PEOPLE',
      skipped: [
        { hrId: '2', reason: 'away' },
        { hrId: '1', reason: 'away' },
      ],
    });
  });

  it('without an HR channel, waits for the nearest manager who is only away; nobody when all left', () => {
    const route = routeApprover(
      reportingLine(directoryOf(ORG), '3'),
      facts({ away: { '2': '2026-12-04', '1': '2026-12-10' } }),
    );
    expect(route).toMatchObject({
      kind: 'person',
      approver: { hrId: '2' },
      awayUntil: '2026-12-04',
      skipped: [{ hrId: '1', reason: 'away' }],
    });
    const gone = [
      person('1', 'Frank', null, 'left'),
      person('2', 'Dana', '1', 'left'),
      person('3', 'Ana', '2'),
    ];
    expect(routeApprover(reportingLine(directoryOf(gone), '3'), facts())).toMatchObject({
      kind: 'nobody',
      why: 'nobody_left',
    });
    // The top of the line has no manager at all.
    expect(routeApprover(reportingLine(directoryOf(ORG), '1'), facts())).toMatchObject({
      kind: 'nobody',
      why: 'no_manager',
    });
    expect(
      routeApprover(reportingLine(directoryOf(ORG), '1'), facts({ hrChannel: 'C0PEOPLE' })),
    ).toMatchObject({
      kind: 'hr_channel',
    });
  });

  it('never waits for someone away whom Switchboard cannot reach in Slack', () => {
    const noSlack = facts({
      away: { '2': '2026-12-04', '1': '2026-12-10' },
      slackOf: (hrId) => (hrId === '2' ? null : (SLACK[hrId] ?? null)),
    });
    expect(routeApprover(reportingLine(directoryOf(ORG), '3'), noSlack)).toMatchObject({
      kind: 'person',
      approver: { hrId: '1' },
      awayUntil: '2026-12-10',
      skipped: [{ hrId: '2', reason: 'away', slackUserId: null }],
    });
  });

  it('is loop-safe: a reporting loop in HR ends the line, and the requester never approves', () => {
    const loop = [person('1', 'Frank', '3'), person('2', 'Dana', '1'), person('3', 'Ana', '2')];
    expect(reportingLine(directoryOf(loop), '3').map((e) => e.hrId)).toEqual(['2', '1']);
    const self = [person('9', 'Ivy', '9')];
    expect(reportingLine(directoryOf(self), '9')).toEqual([]);
    const route = routeApprover(
      reportingLine(directoryOf(loop), '3'),
      facts({ away: { '2': '2026-12-04', '1': '2026-12-04' }, hrChannel: 'C0PEOPLE' }),
    );
    expect(route.kind).toBe('hr_channel');
  });

  it('counts leave covering today or the first day, and says its last day', () => {
    const leave = [
      { startDate: '2026-11-20', endDate: '2026-11-24' },
      { startDate: '2026-12-01', endDate: '2026-12-04' },
    ];
    expect(awayUntilOf(leave, '2026-11-23', '2026-12-10')).toBe('2026-11-24');
    expect(awayUntilOf(leave, '2026-11-26', '2026-12-02')).toBe('2026-12-04');
    expect(awayUntilOf(leave, '2026-11-23', '2026-12-02')).toBe('2026-12-04');
    expect(awayUntilOf(leave, '2026-11-26', '2026-12-07')).toBeNull();
  });

  it('issue 19: away while now is inside the leave’s own interval (its zone), not its UTC dates', () => {
    // Tuesday 24 Nov off in Singapore: [Mon 16:00 UTC, Tue 16:00 UTC).
    const tuesday = absenceInterval({ startDate: '2026-11-24', endDate: '2026-11-24' }, 'Asia/Singapore');
    const leave = [{ startDate: '2026-11-24', endDate: '2026-11-24', ...tuesday }];
    const at = (iso: string) => awayUntilAt(leave, new Date(iso), '2026-12-07');
    expect(at('2026-11-23T15:59:00Z')).toBeNull(); // Mon 23:59 there
    expect(at('2026-11-23T16:00:00Z')).toBe('2026-11-24'); // Tue 00:00 there (still Mon in UTC)
    expect(at('2026-11-24T15:59:00Z')).toBe('2026-11-24');
    expect(at('2026-11-24T16:00:00Z')).toBeNull(); // Wed 00:00 there (still Tue in UTC)
    // The request's first day is a date: its leave's dates cover it.
    expect(awayUntilAt(leave, new Date('2026-11-20T12:00:00Z'), '2026-11-24')).toBe('2026-11-24');
  });
});

describe('TIME_OFF_HR_CHANNEL', () => {
  const base = {
    SLACK_BOT_TOKEN: 'xoxb-1-secret-bot-token',
    SLACK_SIGNING_SECRET: 'signing-secret-value-123',
    SWITCHBOARD_DATA_KEYS: TEST_DATA_KEYS,
    HIBOB_SERVICE_USER_ID: 'SERVICE-1',
    HIBOB_SERVICE_USER_TOKEN: 'hr-token-secret-value',
    HIBOB_WEBHOOK_SECRET: 'hr-webhook-secret-value',
  };
  const problems = (env: Record<string, string>): string => {
    try {
      loadConfig(env, ALL_LIFECYCLES);
    } catch (e) {
      if (e instanceof ConfigError) return e.message;
      throw e;
    }
    throw new Error('expected a ConfigError');
  };

  it('is optional, and a channel id when set', () => {
    const plain = lifecycleConfig(loadConfig(base, ALL_LIFECYCLES), timeOff);
    expect(plain).toMatchObject({ serviceUserId: 'SERVICE-1' });
    expect(plain?.hrChannel).toBeUndefined();
    expect(
      lifecycleConfig(loadConfig({ ...base, TIME_OFF_HR_CHANNEL: 'C0PEOPLE' }, ALL_LIFECYCLES), timeOff)
        ?.hrChannel,
    ).toBe('C0PEOPLE');
    expect(
      lifecycleConfig(loadConfig({ ...base, TIME_OFF_HR_CHANNEL: 'G01PRIVATE' }, ALL_LIFECYCLES), timeOff)
        ?.hrChannel,
    ).toBe('G01PRIVATE');
  });

  it('names a channel name, a user or a DM given instead of a channel id', () => {
    for (const wrong of ['#people-ops', 'people-ops', 'U0DANA', 'D0DANA']) {
      expect(problems({ ...base, TIME_OFF_HR_CHANNEL: wrong })).toMatch(/TIME_OFF_HR_CHANNEL.*channel id/s);
    }
  });
});

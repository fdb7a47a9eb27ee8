import { describe, expect, it } from 'vitest';
import { handoffPost, shiftStartDm } from '../../src/incidents/blocks/shiftNotices.ts';
import { planWatch, type RotaEntry } from '../../src/incidents/shiftPlan.ts';

/** Issue 20 item 4: the on-call watch's rules and messages, on instants of a fixed origin. */
const T0 = Date.UTC(2030, 0, 7); // any Monday 00:00 UTC
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const NOTICE = 12 * HOUR;

const entry = (userId: string, start: number, end: number | null, scheduleId = 'PSCH1'): RotaEntry => ({
  scheduleId,
  scheduleName: 'Primary',
  escalationPolicyId: 'PEP1',
  userId,
  start,
  end,
});

const rota = [entry('BEN', T0 - 7 * DAY, T0), entry('ANA', T0, T0 + 7 * DAY)];

describe('the on-call watch plan', () => {
  it('a shift is due from its notice until it starts, never before, never after', () => {
    const at = (t: number) => planWatch({ entries: rota, at: t, noticeMs: NOTICE, lookbackMs: HOUR });
    expect(at(T0 - NOTICE - 1).shifts).toEqual([]);
    expect(at(T0 - NOTICE).shifts.map((s) => s.userId)).toEqual(['ANA']);
    expect(at(T0 - 1).shifts.map((s) => s.userId)).toEqual(['ANA']);
    expect(at(T0).shifts).toEqual([]);
    // One key per shift, whenever it is seen.
    expect(at(T0 - NOTICE).shifts[0]?.key).toBe(at(T0 - HOUR).shifts[0]?.key);
  });

  it('looks next when a notice falls due or a shift starts, else on the next whole hour, in whole minutes', () => {
    expect(
      planWatch({ entries: rota, at: T0 - NOTICE - 30 * MINUTE, noticeMs: NOTICE, lookbackMs: HOUR }).nextAt,
    ).toBe(T0 - NOTICE);
    expect(planWatch({ entries: rota, at: T0 - 90 * 1000, noticeMs: NOTICE, lookbackMs: HOUR }).nextAt).toBe(
      T0,
    );
    const quiet = planWatch({
      entries: rota,
      at: T0 + 2 * HOUR + 17 * MINUTE + 5_000,
      noticeMs: NOTICE,
      lookbackMs: HOUR,
    });
    expect(quiet.nextAt).toBe(T0 + 3 * HOUR);
    // Never the same minute again.
    const edge = planWatch({ entries: rota, at: T0 - NOTICE - 10_000, noticeMs: NOTICE, lookbackMs: HOUR });
    expect(edge.nextAt).toBe(T0 - NOTICE);
  });

  it('a handoff names who hands to whom, within the lookback only; the same person going on is none', () => {
    const now = planWatch({ entries: rota, at: T0 + 5 * MINUTE, noticeMs: NOTICE, lookbackMs: HOUR });
    expect(now.handoffs.map((h) => [h.from, h.to, h.at])).toEqual([['BEN', 'ANA', T0]]);
    expect(
      planWatch({ entries: rota, at: T0 + 2 * HOUR, noticeMs: NOTICE, lookbackMs: HOUR }).handoffs,
    ).toEqual([]);
    const sameAgain = [entry('ANA', T0 - DAY, T0), entry('ANA', T0, T0 + DAY)];
    const plan = planWatch({ entries: sameAgain, at: T0 - HOUR, noticeMs: NOTICE, lookbackMs: HOUR });
    expect(plan.shifts).toEqual([]);
    expect(planWatch({ entries: sameAgain, at: T0, noticeMs: NOTICE, lookbackMs: HOUR }).handoffs).toEqual(
      [],
    );
  });

  it('a schedule listed at several levels or policies is one shift', () => {
    const twice = [...rota, { ...entry('ANA', T0, T0 + 7 * DAY), escalationPolicyId: 'PEP2' }];
    expect(
      planWatch({ entries: twice, at: T0 - HOUR, noticeMs: NOTICE, lookbackMs: HOUR }).shifts,
    ).toHaveLength(1);
  });
});

describe('the shift messages', () => {
  it('escape the incident service’s names; times are date tokens; the phone line says what to do', () => {
    const dm = shiftStartDm({
      scheduleId: 'PSCH1',
      scheduleName: '<!channel> *Primary*',
      start: T0,
      end: T0 + DAY,
      open: [],
      phone: 'none',
    });
    const all = JSON.stringify(dm);
    expect(all).not.toContain('<!channel>');
    expect(all).toContain('&lt;!channel&gt;');
    expect(all).toContain(`<!date^${T0 / 1000}^`);
    expect(dm.text).toContain('verify your phone now or you cannot be paged'.replace('verify', 'Verify'));
    const pageable = shiftStartDm({
      scheduleId: 'P',
      scheduleName: 'P',
      start: T0,
      end: null,
      open: [],
      phone: 'pageable',
    });
    expect(JSON.stringify(pageable)).toContain('you can be paged');
    const off = shiftStartDm({
      scheduleId: 'P',
      scheduleName: 'P',
      start: T0,
      end: null,
      open: [],
      phone: null,
    });
    expect(JSON.stringify(off)).not.toContain('paged');
  });

  it('a handoff with nobody before says who is on call from when', () => {
    const post = handoffPost({
      scheduleId: 'P',
      scheduleName: 'Primary',
      from: null,
      to: { slackUserId: 'U0ANA', name: 'Ana' },
      at: T0,
      end: null,
      open: [{ label: '#3 Disk', status: 'acknowledged' }],
    });
    expect(post.text).toContain('<@U0ANA> is on call from');
    expect(JSON.stringify(post)).toContain('#3 Disk (acknowledged)');
  });
});

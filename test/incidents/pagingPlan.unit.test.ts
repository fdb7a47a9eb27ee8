import { describe, expect, it } from 'vitest';
import {
  type Leave,
  type OnCallAtLevel,
  type PlannedPerson,
  planPages,
  rotationsNeeded,
} from '../../machines/incident/pagingPlan.ts';

/**
 * Leave-aware paging, the rule: given who is on call at every level and who is on approved leave,
 * who is paged (and under which level's page id), who is skipped and why.
 */
const person = (name: string): PlannedPerson => ({
  upstreamUserId: `P${name.toUpperCase()}`,
  name,
  slackUserId: `U0${name.toUpperCase()}`,
});
const ANA = person('ana');
const BEN = person('ben');
const CHEN = person('chen');
const DANA = person('dana');
const EVE = person('eve');
const FRANK = person('frank');
const PRIMARY = { id: 'PSCH001', name: 'Payments Primary' };
const SECONDARY = { id: 'PSCH002', name: 'Payments Secondary' };

const at = (p: PlannedPerson, level: number, schedule: OnCallAtLevel['schedule'] = null): OnCallAtLevel => ({
  ...p,
  level,
  schedule,
});
/** Payments: level 1 the primary rota (Ana now), level 2 the secondary (Dana now), level 3 Frank. */
const PAYMENTS = [at(ANA, 1, PRIMARY), at(DANA, 2, SECONDARY), at(FRANK, 3)];
const ROTATIONS: Record<string, PlannedPerson[]> = {
  PSCH001: [ANA, BEN, CHEN],
  PSCH002: [DANA, EVE],
};

const plan = (
  onCall: readonly OnCallAtLevel[],
  away: Record<string, string>,
  level = 1,
  rotations: Record<string, PlannedPerson[]> = ROTATIONS,
) => {
  const awayOf = (u: string): Leave | null => (away[u] ? { lastDay: away[u] } : null);
  return planPages({ level, onCall, awayOf, rotation: (id) => rotations[id] ?? [] }).map((s) => {
    switch (s.kind) {
      case 'page':
        return `page ${s.person.name} @${s.level}${s.standsInFor ? ` for ${s.standsInFor.slackUserId} (${s.standsInFor.schedule})` : ''}`;
      case 'on_leave':
        return `skip ${s.person.name} @${s.level} until ${s.lastDay}`;
      case 'no_slack_user':
        return `no slack ${s.person.name} @${s.level}`;
      case 'nobody_on_call':
        return `nobody @${s.level}`;
      case 'level_on_leave':
        return `level ${s.level} away: level ${s.nextLevel}`;
      default:
        return `everyone away from @${s.level}`;
    }
  });
};

describe('leave-aware paging: the plan', () => {
  it('without leave, pages everyone on call at the level, as before', () => {
    expect(plan(PAYMENTS, {})).toEqual(['page ana @1']);
    expect(plan([...PAYMENTS, at(BEN, 1)], {})).toEqual(['page ana @1', 'page ben @1']);
    expect(plan(PAYMENTS, {}, 2)).toEqual(['page dana @2']);
    expect(plan(PAYMENTS, {}, 4)).toEqual(['nobody @4']);
    expect(plan([at({ ...ANA, slackUserId: null }, 1)], {})).toEqual(['no slack ana @1']);
  });

  it('skips someone on approved leave and pages the next person in their schedule’s rotation, under the level’s page id', () => {
    expect(plan(PAYMENTS, { U0ANA: '2026-12-03' })).toEqual([
      'skip ana @1 until 2026-12-03',
      'page ben @1 for U0ANA (Payments Primary)',
    ]);
  });

  it('passes over the next in the rotation when they are away too', () => {
    expect(plan(PAYMENTS, { U0ANA: '2026-12-03', U0BEN: '2026-12-01' })).toEqual([
      'skip ana @1 until 2026-12-03',
      'page chen @1 for U0ANA (Payments Primary)',
    ]);
  });

  it('passes over someone with no Slack user and someone already on call at the level', () => {
    const rotations = { PSCH001: [ANA, { ...BEN, slackUserId: null }, CHEN, EVE] };
    expect(plan([...PAYMENTS, at(CHEN, 1)], { U0ANA: '2026-12-03' }, 1, rotations)).toEqual([
      'skip ana @1 until 2026-12-03',
      'page eve @1 for U0ANA (Payments Primary)',
      'page chen @1',
    ]);
  });

  it('leaves it to the level’s other targets when the person on leave is named directly', () => {
    expect(plan([at(FRANK, 1), at(CHEN, 1), at(DANA, 2)], { U0FRANK: '2026-12-03' })).toEqual([
      'skip frank @1 until 2026-12-03',
      'page chen @1',
    ]);
  });

  it('pages the next level when everyone at the level is away, under that level’s page id', () => {
    expect(plan(PAYMENTS, { U0ANA: '2026-12-03', U0BEN: '2026-12-03', U0CHEN: '2026-12-04' })).toEqual([
      'skip ana @1 until 2026-12-03',
      'level 1 away: level 2',
      'page dana @2',
    ]);
    // A level named directly, nobody else there.
    expect(plan([at(FRANK, 1), at(CHEN, 2)], { U0FRANK: '2026-12-03' })).toEqual([
      'skip frank @1 until 2026-12-03',
      'level 1 away: level 2',
      'page chen @2',
    ]);
  });

  it('goes on up, level by level, and says so when every level is away; nobody on leave is paged', () => {
    const everyone = { U0ANA: 'x', U0BEN: 'x', U0CHEN: 'x', U0DANA: 'x', U0EVE: 'x' };
    expect(plan(PAYMENTS, everyone)).toEqual([
      'skip ana @1 until x',
      'level 1 away: level 2',
      'skip dana @2 until x',
      'level 2 away: level 3',
      'page frank @3',
    ]);
    expect(plan(PAYMENTS, { ...everyone, U0FRANK: 'x' })).toEqual([
      'skip ana @1 until x',
      'level 1 away: level 2',
      'skip dana @2 until x',
      'level 2 away: level 3',
      'skip frank @3 until x',
      'everyone away from @1',
    ]);
  });

  it('pages a person once, even when they stand in at one level and are on call at the next', () => {
    expect(plan([at(ANA, 1, PRIMARY), at(BEN, 2)], { U0ANA: 'x' })).toEqual([
      'skip ana @1 until x',
      'page ben @1 for U0ANA (Payments Primary)',
    ]);
  });

  it('asks for the rotations of schedules whose people are away at the level and above only', () => {
    const awayOf = (u: string) => (u === 'U0DANA' ? { lastDay: 'x' } : null);
    expect(rotationsNeeded({ level: 1, onCall: PAYMENTS, awayOf })).toEqual(['PSCH002']);
    expect(rotationsNeeded({ level: 3, onCall: PAYMENTS, awayOf })).toEqual([]);
    expect(rotationsNeeded({ level: 1, onCall: PAYMENTS, awayOf: () => null })).toEqual([]);
  });
});

/**
 * Issue 18: a page that cannot be delivered (no verified phone, a number that must be verified
 * again, STOP, the per-hour limit, the SMS refused, the call failed, busy or unanswered, the phone
 * service given up on) makes its person unreachable for the round: the same rule as leave picks
 * who is paged next, and the plan says so when nobody is left.
 */
describe('undeliverable pages: the plan', () => {
  const planWith = (
    onCall: readonly OnCallAtLevel[],
    unreachable: Record<string, string>,
    away: Record<string, string> = {},
    level = 1,
  ) =>
    planPages({
      level,
      onCall,
      awayOf: (u) => (away[u] ? { lastDay: away[u] } : null),
      rotation: (id) => ROTATIONS[id] ?? [],
      unreachableOf: (u) => (unreachable[u] as never) ?? null,
    }).map((s) => {
      switch (s.kind) {
        case 'page':
          return `page ${s.person.name} @${s.level}${s.standsInFor ? ` for ${s.standsInFor.slackUserId}` : ''}`;
        case 'unreachable':
          return `cannot page ${s.person.name} @${s.level}: ${s.reason}`;
        case 'on_leave':
          return `skip ${s.person.name} @${s.level}`;
        case 'level_unreachable':
          return `nobody at ${s.level} could be paged: level ${s.nextLevel}`;
        case 'level_on_leave':
          return `level ${s.level} away: level ${s.nextLevel}`;
        case 'nobody_reachable':
          return `nobody could be paged from @${s.level}`;
        default:
          return s.kind;
      }
    });

  it('pages the next in the schedule’s rotation in place of someone who cannot be reached', () => {
    expect(planWith(PAYMENTS, { U0ANA: 'must_verify_again' })).toEqual([
      'cannot page ana @1: must_verify_again',
      'page ben @1 for U0ANA',
    ]);
    // The stand-in cannot be reached either: the one after them.
    expect(planWith(PAYMENTS, { U0ANA: 'no_verified_phone', U0BEN: 'sms_refused' })).toEqual([
      'cannot page ana @1: no_verified_phone',
      'page chen @1 for U0ANA',
    ]);
    // Away and unreachable people are both passed over.
    expect(planWith(PAYMENTS, { U0ANA: 'busy' }, { U0BEN: 'x' })).toEqual([
      'cannot page ana @1: busy',
      'page chen @1 for U0ANA',
    ]);
  });

  it('leaves it to the level’s others, else pages the next level, and says when nobody is left', () => {
    expect(planWith([at(FRANK, 1), at(CHEN, 1), at(DANA, 2)], { U0FRANK: 'opted_out' })).toEqual([
      'cannot page frank @1: opted_out',
      'page chen @1',
    ]);
    expect(planWith([at(CHEN, 1), at(FRANK, 2)], { U0CHEN: 'gave_up' })).toEqual([
      'cannot page chen @1: gave_up',
      'nobody at 1 could be paged: level 2',
      'page frank @2',
    ]);
    expect(planWith([at(CHEN, 1), at(FRANK, 2)], { U0CHEN: 'unanswered', U0FRANK: 'held_back' })).toEqual([
      'cannot page chen @1: unanswered',
      'nobody at 1 could be paged: level 2',
      'cannot page frank @2: held_back',
      'nobody could be paged from @1',
    ]);
    // Away at one level, unreachable at the next: nobody could be paged (not "everyone on leave").
    expect(planWith([at(CHEN, 1), at(FRANK, 2)], { U0FRANK: 'call_failed' }, { U0CHEN: 'x' })).toEqual([
      'skip chen @1',
      'level 1 away: level 2',
      'cannot page frank @2: call_failed',
      'nobody could be paged from @1',
    ]);
  });

  it('says leave rather than the phone for someone both away and unreachable', () => {
    expect(planWith(PAYMENTS, { U0ANA: 'no_verified_phone' }, { U0ANA: '2026-12-03' })).toEqual([
      'skip ana @1',
      'page ben @1 for U0ANA',
    ]);
  });

  it('asks for the rotations of schedules whose people cannot be reached', () => {
    const unreachableOf = (u: string) => (u === 'U0ANA' ? ('busy' as const) : null);
    expect(rotationsNeeded({ level: 1, onCall: PAYMENTS, awayOf: () => null, unreachableOf })).toEqual([
      'PSCH001',
    ]);
  });
});

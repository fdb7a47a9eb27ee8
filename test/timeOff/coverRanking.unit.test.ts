import { describe, expect, it } from 'vitest';
import type { Absences, OnCallLookups, OnCallShift } from '../../src/lifecycles/ports.ts';
import {
  type CandidateFacts,
  clipShift,
  coverCandidates,
  rankCandidates,
} from '../../src/timeOff/coverRanking.ts';
import { formatSpan } from '../../src/timeOff/coverText.ts';

const fact = (id: string, name: string, o: Partial<CandidateFacts> = {}): CandidateFacts => ({
  person: { slackUserId: id },
  displayName: name,
  shiftsShared: 1,
  awayDuring: false,
  onCallDuring: false,
  nightPages: 0,
  ...o,
});

describe('ranking who could cover', () => {
  it('leaves out the away and the already on call; fewest night pages, then more shared shifts, then name', () => {
    const ranked = rankCandidates([
      fact('U0ZED', 'Zed Moon', { nightPages: 0 }),
      fact('U0AWAY', 'Away Person', { awayDuring: true, nightPages: 0 }),
      fact('U0BUSY', 'Busy Person', { onCallDuring: true, nightPages: 0 }),
      fact('U0CHEN', 'Chen Wei', { nightPages: 3 }),
      fact('U0BEN', 'Ben Okafor', { nightPages: 1 }),
      fact('U0UNK', 'Una Known', { nightPages: null }),
      fact('U0BOTH', 'Both Shifts', { shiftsShared: 2, nightPages: 1 }),
      fact('U0ADA', 'Ada Moon', { nightPages: 0 }),
    ]);
    expect(ranked.map((c) => c.slackUserId)).toEqual([
      'U0ADA',
      'U0ZED',
      'U0BOTH',
      'U0BEN',
      'U0CHEN',
      'U0UNK',
    ]);
    expect(ranked[3]).toEqual({
      slackUserId: 'U0BEN',
      displayName: 'Ben Okafor',
      firstName: 'Ben',
      nightPages: 1,
    });
  });

  it('keeps at most 20', () => {
    const many = Array.from({ length: 30 }, (_, i) => fact(`U0P${String(i).padStart(2, '0')}`, `P ${i}`));
    expect(rankCandidates(many)).toHaveLength(20);
  });
});

const range = { since: new Date('2026-11-30T00:00:00Z'), until: new Date('2026-12-05T00:00:00Z') };
const shift = (o: Partial<OnCallShift> = {}): OnCallShift => ({
  person: { slackUserId: 'U0ANA' },
  escalationPolicy: { id: 'PEPPAY', name: 'Payments' },
  level: 1,
  schedule: { id: 'PSCHPAY', name: 'Payments primary' },
  start: new Date('2026-11-30T00:00:00Z'),
  end: new Date('2026-12-07T00:00:00Z'),
  ...o,
});

describe('conflicting shifts', () => {
  it('are clipped to the request, unbounded ones too; one outside it is none', () => {
    expect(clipShift(shift(), range)).toMatchObject({
      scheduleId: 'PSCHPAY',
      start: '2026-11-30T00:00:00.000Z',
      end: '2026-12-05T00:00:00.000Z',
    });
    expect(clipShift(shift({ schedule: null, start: null, end: null, level: 2 }), range)).toMatchObject({
      scheduleId: null,
      level: 2,
      start: '2026-11-30T00:00:00.000Z',
      end: '2026-12-05T00:00:00.000Z',
    });
    expect(clipShift(shift({ start: new Date('2026-12-05T00:00:00Z'), end: null }), range)).toBeNull();
  });

  it('are shown in the reader’s zone, named', () => {
    expect(formatSpan('2026-11-30T00:00:00.000Z', '2026-12-05T00:00:00.000Z', 'Europe/Warsaw')).toBe(
      'Mon 30 Nov 01:00 – Sat 5 Dec 2026 01:00 CET (Europe/Warsaw)',
    );
    expect(formatSpan('2026-11-30T00:00:00.000Z', '2026-11-30T08:00:00.000Z', 'UTC')).toBe(
      'Mon 30 Nov 00:00 – 08:00 UTC',
    );
    expect(formatSpan('2026-11-30T00:00:00.000Z', '2026-11-30T08:00:00.000Z', 'Not/AZone')).toBe(
      'Mon 30 Nov 00:00 – 08:00 UTC',
    );
  });
});

describe('gathering the candidates through the ports', () => {
  it('asks colleagues per coverable shift, drops the away, the on call and the unmapped, ranks by night pages', async () => {
    const onCall: OnCallLookups = {
      async shiftsOf(person) {
        if (person.slackUserId === 'U0GIL')
          throw Object.assign(new Error('unmapped'), { code: 'SB_UNMAPPED_USER' });
        return {
          shifts: person.slackUserId === 'U0CHEN' ? [shift({ person, start: null, end: null })] : [],
          knownUntil: range.until,
        };
      },
      async colleaguesOf() {
        return [
          { slackUserId: 'U0BEN' },
          { slackUserId: 'U0CHEN' },
          { slackUserId: 'U0DANA' },
          { slackUserId: 'U0GIL' },
          { slackUserId: 'U0FRANK' },
          { slackUserId: 'U0ANA' },
        ];
      },
      async nightPagesOf(person) {
        return person.slackUserId === 'U0FRANK' ? 0 : 4;
      },
      async policiesNaming() {
        return [];
      },
      async channelsFor() {
        return [];
      },
      async openIncidentsOf() {
        return [];
      },
    };
    const leavers = new Set<string>();
    const absences: Absences = {
      async absencesOf(person) {
        if (leavers.has(person.slackUserId)) {
          return [
            { person, start: range.since, end: new Date(8.64e15), kind: 'Left the company', status: 'left' },
          ];
        }
        return person.slackUserId === 'U0DANA'
          ? [
              {
                person,
                start: new Date('2026-12-01T00:00:00Z'),
                end: new Date('2026-12-02T00:00:00Z'),
                kind: 'Holiday',
                status: 'approved',
              },
            ]
          : [];
      },
      async whoIsOut() {
        return [];
      },
    };
    const names: Record<string, string> = { U0BEN: 'Ben Okafor', U0FRANK: 'Frank Moreau' };
    const slot = clipShift(shift(), range);
    if (!slot) throw new Error('no slot');
    const ranked = await coverCandidates(
      {
        onCall,
        absences,
        nameOf: async (id) => names[id] ?? id,
        logger: {
          debug() {},
          info() {},
          warn() {},
          error() {},
          child() {
            return this;
          },
        } as never,
      },
      {
        requester: { slackUserId: 'U0ANA' },
        shifts: [{ shift: shift(), slot }],
        now: new Date('2026-11-23T09:00:00Z'),
      },
    );
    expect(ranked.map((c) => [c.firstName, c.nightPages])).toEqual([
      ['Frank', 0],
      ['Ben', 4],
    ]);
    // Someone HR says left is never asked to cover.
    leavers.add('U0FRANK');
    const withoutLeaver = await coverCandidates(
      {
        onCall,
        absences,
        nameOf: async (id) => names[id] ?? id,
        logger: {
          debug() {},
          info() {},
          warn() {},
          error() {},
          child() {
            return this;
          },
        } as never,
      },
      {
        requester: { slackUserId: 'U0ANA' },
        shifts: [{ shift: shift(), slot }],
        now: new Date('2026-11-23T09:00:00Z'),
      },
    );
    expect(withoutLeaver.map((c) => c.firstName)).toEqual(['Ben']);
    leavers.clear();
    // Only shifts on a schedule can be covered: none, no candidates.
    const direct = clipShift(shift({ schedule: null }), range);
    if (!direct) throw new Error('no slot');
    expect(
      await coverCandidates(
        { onCall, absences, nameOf: async (id) => id, logger: {} as never },
        {
          requester: { slackUserId: 'U0ANA' },
          shifts: [{ shift: shift({ schedule: null }), slot: direct }],
          now: new Date(),
        },
      ),
    ).toEqual([]);
  });
});

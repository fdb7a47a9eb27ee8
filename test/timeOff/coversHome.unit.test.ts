import { describe, expect, it } from 'vitest';
import { type CoverEvent, coverDecider } from '../../machines/timeOff/cover.ts';
import { coversHomeBlocks } from '../../src/timeOff/coverText.ts';

/** Ben's App Home lists the shifts he covers (issue 20), in his zone; a withdrawn cover is not listed. */
const COVER = '0b7c2a10-5b6e-4f8a-9c1d-2e3f4a5b6c7d';
const T0 = '2026-11-23T10:00:00.000Z';
const requested: CoverEvent = {
  type: 'CoverRequested',
  data: {
    coverId: COVER,
    absent: { slackUserId: 'U0ANA', displayName: 'Ana Silva' },
    cover: { slackUserId: 'U0BEN', displayName: 'Ben Okafor' },
    slots: [
      {
        scheduleId: 'PSCHPAY',
        scheduleName: 'Payments <primary>',
        escalationPolicyId: 'PEPPAY',
        escalationPolicyName: 'Payments',
        level: 1,
        start: '2026-11-30T00:00:00.000Z',
        end: '2026-12-05T00:00:00.000Z',
      },
    ],
    requestedBy: 'U0DANA',
    reason: { kind: 'time_off', timeOffId: '7d3c2a10-5b6e-4f8a-9c1d-2e3f4a5b6c7d' },
    notify: ['U0DANA'],
    at: T0,
  },
};
const created: CoverEvent = {
  type: 'CoverSlotCreated',
  data: { coverId: COVER, index: 0, overrideId: 'O1', alreadyThere: false, at: T0 },
};
const fold = (events: CoverEvent[]) => events.reduce(coverDecider.evolve, coverDecider.initialState());
const text = (blocks: ReturnType<typeof coversHomeBlocks>) => JSON.stringify(blocks);

describe('App Home: the shifts you cover (issue 20)', () => {
  it('lists a created override in the reader’s zone, escaped; nothing for others, withdrawn or over', () => {
    const now = new Date(T0);
    const blocks = coversHomeBlocks([fold([requested, created])], 'U0BEN', now, 'Europe/London');
    expect(text(blocks)).toContain('*Shifts you cover* (times in Europe/London');
    expect(text(blocks)).toContain(
      '*Payments &lt;primary&gt;*, Mon 30 Nov 00:00 – Sat 5 Dec 2026 00:00 GMT (Europe/London): for <@U0ANA>',
    );
    // Not Ana's own home; not before the override exists; not once withdrawn; not once over.
    expect(coversHomeBlocks([fold([requested, created])], 'U0ANA', now, 'UTC')).toEqual([]);
    expect(coversHomeBlocks([fold([requested])], 'U0BEN', now, 'UTC')).toEqual([]);
    const withdrawn: CoverEvent = {
      type: 'CoverWithdrawn',
      data: { coverId: COVER, reason: 'Ben Okafor can’t cover', declinedBy: 'U0BEN', at: T0 },
    };
    expect(coversHomeBlocks([fold([requested, created, withdrawn])], 'U0BEN', now, 'UTC')).toEqual([]);
    expect(
      coversHomeBlocks([fold([requested, created])], 'U0BEN', new Date('2026-12-06T00:00:00Z'), 'UTC'),
    ).toEqual([]);
  });
});

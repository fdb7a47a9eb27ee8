import { describe, expect, it } from 'vitest';
import { type CoverAskEvent, coverAskDecider } from '../../machines/timeOff/coverAsk.ts';
import {
  COVER_ASK_ACTION,
  coverAskExpiry,
  coverAskIdFor,
  openCoverAskCommand,
} from '../../src/timeOff/coverAskIds.ts';
import { coverAskDm, coverAskExpiredDm, coverAskPost } from '../../src/timeOff/coverAskText.ts';

const ASK = '1b7c2a10-5b6e-4f8a-9c1d-2e3f4a5b6c7d';
const SLOT = {
  scheduleId: 'PSCHED1',
  scheduleName: 'Payments <!channel> *primary*',
  escalationPolicyId: 'PPOL1',
  escalationPolicyName: 'Payments',
  level: 1,
  start: '2026-11-30T00:00:00.000Z',
  end: '2026-12-07T00:00:00.000Z',
};
const opened: CoverAskEvent = {
  type: 'CoverAskOpened',
  data: {
    askId: ASK,
    slot: SLOT,
    absent: { slackUserId: 'U0ANA', displayName: 'Ana Silva' },
    asked: [
      { slackUserId: 'U0BEN', displayName: 'Ben Okafor' },
      { slackUserId: 'U0CHEN', displayName: 'Chen Wei' },
    ],
    anyone: false,
    announce: false,
    expiresAt: '2026-11-29T23:00:00.000Z',
    openedBy: 'U0DANA',
    notify: ['U0DANA'],
    reason: { kind: 'time_off', timeOffId: 'req-1' },
    at: '2026-11-23T09:00:00.000Z',
  },
};
const fold = (events: CoverAskEvent[]) =>
  events.reduce(coverAskDecider.evolve, coverAskDecider.initialState());
const text = (m: { blocks: unknown[] }) => JSON.stringify(m.blocks);
const buttons = (m: { blocks: unknown[] }) =>
  (m.blocks as { elements?: { action_id?: string }[] }[])
    .flatMap((b) => b.elements ?? [])
    .map((e) => e.action_id);

describe('cover ask words (issue 20)', () => {
  it('the DM: the shift in the reader’s zone, the schedule escaped, Accept / Can’t while open', () => {
    const dm = coverAskDm(fold([opened]), 'U0CHEN', 'Asia/Singapore');
    expect(text(dm)).toContain('Mon 30 Nov 08:00');
    expect(text(dm)).toContain('Asia/Singapore');
    expect(text(dm)).not.toContain('<!channel>');
    expect(text(dm)).toContain('&lt;!channel&gt;');
    expect(buttons(dm)).toEqual([COVER_ASK_ACTION.accept, COVER_ASK_ACTION.decline]);
    expect(dm.text).not.toContain(ASK);
  });

  it('updated in place: taken (the winner, the others), declined, expired', () => {
    const taken: CoverAskEvent = {
      type: 'CoverAskTaken',
      data: {
        askId: ASK,
        cover: { slackUserId: 'U0BEN', displayName: 'Ben Okafor' },
        by: 'U0BEN',
        coverId: ASK,
        at: '2026-11-24T09:00:00.000Z',
      },
    };
    expect(text(coverAskDm(fold([opened, taken]), 'U0BEN', 'UTC'))).toContain('You cover it');
    const other = coverAskDm(fold([opened, taken]), 'U0CHEN', 'UTC');
    expect(text(other)).toContain('<@U0BEN> took it');
    expect(buttons(other)).toEqual([]);
    const declined: CoverAskEvent = {
      type: 'CoverAskDeclined',
      data: { askId: ASK, slackUserId: 'U0CHEN', at: '2026-11-24T09:00:00.000Z' },
    };
    expect(text(coverAskDm(fold([opened, declined]), 'U0CHEN', 'UTC'))).toContain('You said you can’t');
    expect(buttons(coverAskDm(fold([opened, declined]), 'U0BEN', 'UTC'))).toHaveLength(2);
    const expired: CoverAskEvent = {
      type: 'CoverAskExpired',
      data: { askId: ASK, at: '2026-11-29T23:00:00.000Z' },
    };
    expect(text(coverAskDm(fold([opened, expired]), 'U0BEN', 'UTC'))).toContain('Nobody took it');
    const told = coverAskExpiredDm(fold([opened, declined, expired]), 'Europe/Warsaw');
    expect(told.text).toContain('2 colleagues were asked; 1 said they can’t');
    expect(told.text).toContain('Europe/Warsaw');
  });

  it('the hole post: Slack date tokens, a Cover… with a confirm', () => {
    const post = coverAskPost(fold([{ ...opened, data: { ...opened.data, anyone: true, announce: true } }]));
    expect(text(post)).toContain('<!date^');
    const [cover] = (post.blocks as { elements?: { action_id?: string; confirm?: unknown }[] }[]).flatMap(
      (b) => b.elements ?? [],
    );
    expect(cover?.action_id).toBe(COVER_ASK_ACTION.take);
    expect(cover?.confirm).toBeDefined();
  });

  it('ids and expiry: one ask per reason and slot; an hour before the shift, or its end once under way', () => {
    const reason = { kind: 'time_off' as const, timeOffId: 'req-1' };
    expect(coverAskIdFor(reason, SLOT)).toBe(coverAskIdFor(reason, { ...SLOT }));
    expect(coverAskIdFor(reason, SLOT)).not.toBe(coverAskIdFor(reason, SLOT, 1));
    expect(coverAskIdFor(reason, SLOT)).not.toBe(coverAskIdFor({ kind: 'on_call' }, SLOT));
    expect(coverAskExpiry(SLOT, new Date('2026-11-23T09:00:00Z'))).toBe('2026-11-29T23:00:00.000Z');
    expect(coverAskExpiry(SLOT, new Date('2026-11-30T01:00:00Z'))).toBe(SLOT.end);
    const { command } = openCoverAskCommand(
      {
        slot: SLOT,
        absent: { slackUserId: 'U0ANA', displayName: 'Ana' },
        asked: [
          { slackUserId: 'U0ANA', displayName: 'Ana' },
          { slackUserId: 'U0BEN', displayName: 'Ben' },
          { slackUserId: 'U0BEN', displayName: 'Ben' },
        ],
        anyone: false,
        announce: false,
        openedBy: 'U0DANA',
        notify: ['U0DANA', 'U0DANA'],
        reason,
        now: new Date('2026-11-23T09:00:00Z'),
      },
      { now: '2026-11-23T09:00:00Z', commandId: 'c1', actor: 'U0DANA' },
    );
    // Never the absent person, nobody twice.
    expect(command.data['asked']).toEqual([{ slackUserId: 'U0BEN', displayName: 'Ben' }]);
    expect(command.data['notify']).toEqual(['U0DANA']);
  });
});

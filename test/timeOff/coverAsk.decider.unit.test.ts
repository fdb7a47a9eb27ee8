import { describe, expect, it } from 'vitest';
import {
  type CoverAskCommand,
  type CoverAskEvent,
  coverAskDecider,
  coverAskIdOfStream,
  coverAskStreamId,
  parseCoverAskId,
} from '../../machines/timeOff/coverAsk.ts';
import { deciderSpec } from '../support/deciderSpec.ts';

const spec = deciderSpec(coverAskDecider);
const ASK = '1b7c2a10-5b6e-4f8a-9c1d-2e3f4a5b6c7d';
const COVER = '2b7c2a10-5b6e-4f8a-9c1d-2e3f4a5b6c7d';
const T0 = '2026-11-23T10:00:00.000Z';
const LATER = '2026-11-29T23:00:00.000Z';
const SYSTEM = 'system:timeoff-cover-asks';
const ANA = { slackUserId: 'U0ANA', displayName: 'Ana Silva' };
const BEN = { slackUserId: 'U0BEN', displayName: 'Ben Okafor' };
const CHEN = { slackUserId: 'U0CHEN', displayName: 'Chen Wei' };
const SLOT = {
  scheduleId: 'PSCHED1',
  scheduleName: 'Payments primary',
  escalationPolicyId: 'PPOL1',
  escalationPolicyName: 'Payments',
  level: 1,
  start: '2026-11-30T00:00:00.000Z',
  end: '2026-12-07T00:00:00.000Z',
};
const open = {
  askId: ASK,
  slot: SLOT,
  absent: ANA,
  asked: [BEN, CHEN],
  anyone: false,
  announce: false,
  expiresAt: LATER,
  openedBy: 'U0DANA',
  notify: ['U0DANA'],
  reason: { kind: 'time_off' as const, timeOffId: 'req-1' },
};
const meta = (commandId: string, actor = SYSTEM, now = T0) => ({ commandId, actor, now });
const opened: CoverAskEvent = { type: 'CoverAskOpened', data: { ...open, at: T0 } };
const accept = (
  who: typeof BEN,
  o: Readonly<{ by?: string; now?: string; actor?: string }> = {},
): CoverAskCommand => ({
  type: 'AcceptCoverAsk',
  data: { askId: ASK, cover: who, by: o.by ?? who.slackUserId, coverId: COVER },
  metadata: meta(`accept-${who.slackUserId}`, o.actor ?? o.by ?? who.slackUserId, o.now ?? T0),
});
const takenBy = (who: typeof BEN, by = who.slackUserId): CoverAskEvent => ({
  type: 'CoverAskTaken',
  data: { askId: ASK, cover: who, by, coverId: COVER, at: T0 },
});

describe('cover ask decider', () => {
  it('ids: only UUIDs name a stream', () => {
    expect(coverAskStreamId(ASK)).toBe(`timeoffcoverask-${ASK}`);
    expect(coverAskIdOfStream(`timeoffcoverask-${ASK}`)).toBe(ASK);
    expect(parseCoverAskId('../x')).toBeNull();
    expect(() => coverAskStreamId('x')).toThrow();
  });

  it('opens once; the same open again is nothing new, other content under the id is refused', () => {
    const state = spec
      .given([])
      .when({ type: 'OpenCoverAsk', data: open, metadata: meta('o1') })
      .then([opened]);
    expect(state.status).toBe('open');
    spec
      .given([opened])
      .when({ type: 'OpenCoverAsk', data: open, metadata: meta('o2') })
      .then([]);
    spec
      .given([opened])
      .when({ type: 'OpenCoverAsk', data: { ...open, asked: [CHEN] }, metadata: meta('o3') })
      .then({ code: 'SB_ILLEGAL_STATE', details: { reason: 'already_open' } });
  });

  it('never asks the absent person, and only in the opener’s own name', () => {
    spec
      .given([])
      .when({ type: 'OpenCoverAsk', data: { ...open, asked: [ANA, BEN] }, metadata: meta('o') })
      .then({ code: 'SB_ILLEGAL_STATE', details: { reason: 'self_cover' } });
    spec
      .given([])
      .when({ type: 'OpenCoverAsk', data: open, metadata: meta('o', 'U0EVE') })
      .then({ code: 'SB_ILLEGAL_STATE', details: { reason: 'not_opener' } });
  });

  it('first accept wins: the second is refused naming the first; the same accept again is nothing new', () => {
    const state = spec
      .given([opened])
      .when(accept(BEN))
      .then([takenBy(BEN)]);
    expect(state.taken?.coverId).toBe(COVER);
    spec
      .given([opened, takenBy(BEN)])
      .when(accept(CHEN))
      .then({ code: 'SB_ILLEGAL_STATE', details: { reason: 'already_taken', coverSlackUserId: 'U0BEN' } });
    expect(() => coverAskDecider.decide(accept(CHEN), spec.given([opened, takenBy(BEN)]).state)).toThrow(
      'Ben Okafor already covers this shift.',
    );
    spec
      .given([opened, takenBy(BEN)])
      .when(accept(BEN))
      .then([]);
  });

  it('an ask to named people: only they accept, for themselves', () => {
    spec
      .given([opened])
      .when(accept({ slackUserId: 'U0EVE', displayName: 'Eve' }))
      .then({ code: 'SB_ILLEGAL_STATE', details: { reason: 'not_asked' } });
    spec
      .given([opened])
      .when(accept(CHEN, { by: 'U0BEN' }))
      .then({ code: 'SB_ILLEGAL_STATE', details: { reason: 'not_asked' } });
    spec
      .given([opened])
      .when(accept(BEN, { by: 'U0BEN', actor: 'U0CHEN' }))
      .then({ code: 'SB_ILLEGAL_STATE', details: { reason: 'not_actor' } });
  });

  it('an ask open to anyone: anyone but the absent person, for themselves or someone they pick', () => {
    const hole: CoverAskEvent = {
      type: 'CoverAskOpened',
      data: { ...open, asked: [], anyone: true, at: T0 },
    };
    const eve = { slackUserId: 'U0EVE', displayName: 'Eve' };
    spec
      .given([hole])
      .when(accept(eve))
      .then([takenBy(eve)]);
    spec
      .given([hole])
      .when(accept(CHEN, { by: 'U0DANA' }))
      .then([takenBy(CHEN, 'U0DANA')]);
    spec
      .given([hole])
      .when(accept(ANA, { by: 'U0DANA' }))
      .then({ code: 'SB_ILLEGAL_STATE', details: { reason: 'self_cover' } });
  });

  it('can’t: recorded once, the ask stays open for the others', () => {
    const decline: CoverAskCommand = {
      type: 'DeclineCoverAsk',
      data: { askId: ASK, slackUserId: 'U0BEN' },
      metadata: meta('d', 'U0BEN'),
    };
    const declined: CoverAskEvent = {
      type: 'CoverAskDeclined',
      data: { askId: ASK, slackUserId: 'U0BEN', at: T0 },
    };
    const state = spec.given([opened]).when(decline).then([declined]);
    expect(state.status).toBe('open');
    spec.given([opened, declined]).when(decline).then([]);
    spec
      .given([opened, declined])
      .when(accept(CHEN))
      .then([takenBy(CHEN)]);
    spec
      .given([opened])
      .when({ ...decline, data: { askId: ASK, slackUserId: 'U0EVE' }, metadata: meta('d', 'U0EVE') })
      .then({ code: 'SB_ILLEGAL_STATE', details: { reason: 'not_asked' } });
  });

  it('expires when due, not before; nothing after it is taken; an accept after expiry is refused', () => {
    const expire = (now: string): CoverAskCommand => ({
      type: 'ExpireCoverAsk',
      data: { askId: ASK },
      metadata: meta('e', 'system:scheduler', now),
    });
    spec
      .given([opened])
      .when(expire(T0))
      .then({ code: 'SB_ILLEGAL_STATE', details: { reason: 'not_due' } });
    const expired: CoverAskEvent = { type: 'CoverAskExpired', data: { askId: ASK, at: LATER } };
    spec.given([opened]).when(expire(LATER)).then([expired]);
    spec
      .given([opened, takenBy(BEN)])
      .when(expire(LATER))
      .then([]);
    spec
      .given([opened, expired])
      .when(accept(BEN, { now: LATER }))
      .then({ code: 'SB_ILLEGAL_STATE', details: { reason: 'expired' } });
    spec
      .given([opened])
      .when(accept(BEN, { now: SLOT.end }))
      .then({ code: 'SB_ILLEGAL_STATE', details: { reason: 'over' } });
  });

  it('cancelled: no longer taken', () => {
    const cancelled: CoverAskEvent = {
      type: 'CoverAskCancelled',
      data: { askId: ASK, reason: 'the time off was cancelled', at: T0 },
    };
    spec
      .given([opened])
      .when({
        type: 'CancelCoverAsk',
        data: { askId: ASK, reason: 'the time off was cancelled' },
        metadata: meta('c'),
      })
      .then([cancelled]);
    spec
      .given([opened, cancelled])
      .when(accept(BEN))
      .then({ code: 'SB_ILLEGAL_STATE', details: { reason: 'cancelled' } });
  });

  it('a hole re-opened after a can’t: the one who said it is refused, anyone else takes it', () => {
    const reopened: CoverAskEvent = {
      type: 'CoverAskOpened',
      data: { ...open, asked: [], anyone: true, announce: true, excluded: ['U0BEN'], at: T0 },
    };
    spec
      .given([reopened])
      .when(accept(BEN))
      .then({ code: 'SB_ILLEGAL_STATE', details: { reason: 'excluded' } });
    spec
      .given([reopened])
      .when(accept(CHEN))
      .then([
        { type: 'CoverAskTaken', data: { askId: ASK, cover: CHEN, by: 'U0CHEN', coverId: COVER, at: T0 } },
      ]);
  });
});

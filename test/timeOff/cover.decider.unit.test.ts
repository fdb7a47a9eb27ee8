import { describe, expect, it } from 'vitest';
import {
  type CoverCommand,
  type CoverEvent,
  coverDecider,
  coverRemovalRequestId,
  coverSettled,
  coverSlotRequestId,
  coverStreamId,
  parseCoverId,
  pendingCoverCall,
  removalsSettled,
} from '../../machines/timeOff/cover.ts';
import { deciderSpec } from '../support/deciderSpec.ts';

const spec = deciderSpec(coverDecider);
const COVER = '0b7c2a10-5b6e-4f8a-9c1d-2e3f4a5b6c7d';
const TIME_OFF = '7d3c2a10-5b6e-4f8a-9c1d-2e3f4a5b6c7d';
const T0 = '2026-11-23T10:00:00.000Z';
const SYSTEM = 'system:timeoff-cover';
const ANA = { slackUserId: 'U0ANA', displayName: 'Ana Silva' };
const BEN = { slackUserId: 'U0BEN', displayName: 'Ben Okafor' };
const SLOT = {
  scheduleId: 'PSCHED1',
  scheduleName: 'Platform primary',
  escalationPolicyId: 'PPOL1',
  escalationPolicyName: 'Platform',
  level: 1,
  start: '2026-11-30T00:00:00.000Z',
  end: '2026-12-05T00:00:00.000Z',
};
const SLOT2 = { ...SLOT, scheduleId: 'PSCHED2', scheduleName: 'Database' };
const slot0 = coverSlotRequestId(COVER, 0);
const slot1 = coverSlotRequestId(COVER, 1);

const meta = (commandId: string, actor = SYSTEM, now = T0) => ({ commandId, actor, now });
const ask = {
  coverId: COVER,
  absent: ANA,
  cover: BEN,
  slots: [SLOT, SLOT2],
  requestedBy: 'U0DANA',
  reason: { kind: 'time_off' as const, timeOffId: TIME_OFF },
  notify: ['U0DANA', 'U0ANA'],
};
const requestCover = (data: Partial<typeof ask> = {}, actor = SYSTEM): CoverCommand => ({
  type: 'RequestCover',
  data: { ...ask, ...data },
  metadata: meta('c-request', actor),
});
const requested: CoverEvent = { type: 'CoverRequested', data: { ...ask, at: T0 } };
const created0: CoverEvent = {
  type: 'CoverSlotCreated',
  data: { coverId: COVER, index: 0, overrideId: 'PO1', alreadyThere: false, at: T0 },
};
const withdrawn: CoverEvent = {
  type: 'CoverWithdrawn',
  data: { coverId: COVER, reason: 'leave cancelled', at: T0 },
};

describe('cover decider', () => {
  it('records the cover with one pending call per slot', () => {
    const state = spec.given([]).when(requestCover()).then([requested]);
    expect(state.slots.map((s) => [s.requestId, s.status, s.attempt])).toEqual([
      [slot0, 'pending', 1],
      [slot1, 'pending', 1],
    ]);
    expect(pendingCoverCall(state, slot0)?.action).toBe('create_override');
    expect(coverSettled(state)).toBe(false);
  });

  it('takes the same request again as nothing new, and refuses another under the same id', () => {
    spec.given([requested]).when(requestCover()).then([]);
    spec
      .given([requested])
      .when(requestCover({ cover: { slackUserId: 'U0CHEN', displayName: 'Chen Wei' } }))
      .then({ code: 'SB_ILLEGAL_STATE', details: { reason: 'already_requested' } });
  });

  it('refuses a person asking in someone else’s name, and the absent person covering themselves', () => {
    spec
      .given([])
      .when(requestCover({}, 'U0EVE'))
      .then({ code: 'SB_ILLEGAL_STATE', details: { reason: 'not_requester' } });
    spec
      .given([])
      .when(requestCover({}, 'U0DANA'))
      .then([{ ...requested }]);
    spec
      .given([])
      .when(requestCover({ cover: ANA }))
      .then({ code: 'SB_ILLEGAL_STATE', details: { reason: 'self_cover' } });
    spec
      .given([])
      .when(requestCover({ slots: [{ ...SLOT, end: SLOT.start }] }))
      .then({ code: 'SB_ILLEGAL_STATE', details: { reason: 'invalid_slot' } });
  });

  it('records each slot once: created, then a repeat is nothing new', () => {
    const created: CoverCommand = {
      type: 'RecordCoverSlotCreated',
      data: { coverId: COVER, requestId: slot0, overrideId: 'PO1', alreadyThere: false },
      metadata: meta('c-created'),
    };
    spec.given([requested]).when(created).then([created0]);
    spec.given([requested, created0]).when(created).then([]);
  });

  it('a refused slot fails alone; the cover is settled once every slot has its answer', () => {
    const refused: CoverCommand = {
      type: 'RecordCoverSlotRefused',
      data: { coverId: COVER, requestId: slot1, problem: 'User cannot be scheduled' },
      metadata: meta('c-refused'),
    };
    const failed: CoverEvent = {
      type: 'CoverSlotFailed',
      data: { coverId: COVER, index: 1, problem: 'User cannot be scheduled', at: T0 },
    };
    const state = spec.given([requested, created0]).when(refused).then([failed]);
    expect(coverSettled(state)).toBe(true);
    expect(state.slots.map((s) => s.status)).toEqual(['created', 'failed']);
  });

  it('a transient failure waits for its retry; a final one fails the slot in words', () => {
    const failure = (attempt: number, nextAttemptAt: string | null): CoverCommand => ({
      type: 'RecordCoverUpstreamCallFailed',
      data: {
        coverId: COVER,
        requestId: slot0,
        action: 'create_override',
        attempt,
        maxAttempts: 2,
        code: 'SB_UPSTREAM_UNAVAILABLE',
        message: 'the incident service answered 503',
        nextAttemptAt,
      },
      metadata: meta(`c-failed-${attempt}`),
    });
    const failed1: CoverEvent = {
      type: 'CoverUpstreamCallFailed',
      data: {
        coverId: COVER,
        requestId: slot0,
        action: 'create_override',
        attempt: 1,
        maxAttempts: 2,
        code: 'SB_UPSTREAM_UNAVAILABLE',
        message: 'the incident service answered 503',
        nextAttemptAt: '2026-11-23T10:00:02.000Z',
        final: false,
        at: T0,
      },
    };
    spec.given([requested]).when(failure(1, '2026-11-23T10:00:02.000Z')).then([failed1]);
    // The same report again (a redelivery): nothing new.
    spec.given([requested, failed1]).when(failure(1, '2026-11-23T10:00:02.000Z')).then([]);
    const retry: CoverCommand = {
      type: 'RetryCoverUpstreamCall',
      data: { coverId: COVER, requestId: slot0, action: 'create_override', attempt: 2 },
      metadata: meta('c-retry'),
    };
    const retried: CoverEvent = {
      type: 'CoverUpstreamCallRetried',
      data: { coverId: COVER, requestId: slot0, action: 'create_override', attempt: 2, at: T0 },
    };
    spec.given([requested, failed1]).when(retry).then([retried]);
    const final = spec.given([requested, failed1, retried]).when(failure(2, null));
    const state = final.then([
      {
        type: 'CoverUpstreamCallFailed',
        data: { ...failed1.data, attempt: 2, nextAttemptAt: null, final: true },
      },
      {
        type: 'CoverSlotFailed',
        data: {
          coverId: COVER,
          index: 0,
          problem: 'the incident service could not be reached (the incident service answered 503)',
          at: T0,
        },
      },
    ]);
    expect(pendingCoverCall(state, slot0)).toBeNull();
  });

  it('withdrawing drops the pending slots; an override that lands afterwards is still recorded', () => {
    const withdraw: CoverCommand = {
      type: 'WithdrawCover',
      data: { coverId: COVER, reason: 'leave cancelled' },
      metadata: meta('c-withdraw'),
    };
    const state = spec.given([requested, created0]).when(withdraw).then([withdrawn]);
    expect(state.slots.map((s) => s.status)).toEqual(['created', 'dropped']);
    expect(pendingCoverCall(state, slot1)).toBeNull();
    spec.given([requested, created0, withdrawn]).when(withdraw).then([]);
    spec
      .given([requested, created0, withdrawn])
      .when({
        type: 'RecordCoverSlotCreated',
        data: { coverId: COVER, requestId: slot1, overrideId: 'PO2', alreadyThere: false },
        metadata: meta('c-late'),
      })
      .then([
        {
          type: 'CoverSlotCreated',
          data: { coverId: COVER, index: 1, overrideId: 'PO2', alreadyThere: false, at: T0 },
        },
      ]);
    spec
      .given([requested])
      .when({ ...withdraw, metadata: meta('c-w', 'U0EVE') })
      .then({ code: 'SB_ILLEGAL_STATE', details: { reason: 'not_requester' } });
  });

  it('the cover says they can’t (issue 20): only they may; the cover is withdrawn, pending slots dropped, once', () => {
    const cant = (actor: string, now = T0): CoverCommand => ({
      type: 'DeclineCover',
      data: { coverId: COVER },
      metadata: meta('c-cant', actor, now),
    });
    const declined: CoverEvent = {
      type: 'CoverWithdrawn',
      data: { coverId: COVER, reason: 'Ben Okafor can’t cover', declinedBy: 'U0BEN', at: T0 },
    };
    const state = spec.given([requested, created0]).when(cant('U0BEN')).then([declined]);
    expect(state.slots.map((s) => s.status)).toEqual(['created', 'dropped']);
    expect(state.declinedBy).toBe('U0BEN');
    // Pressed again (a double click, a redelivery): nothing new.
    spec.given([requested, created0, declined]).when(cant('U0BEN')).then([]);
    // Anyone else (the approver, the absent person, a stranger, Switchboard itself): refused.
    for (const actor of ['U0DANA', 'U0ANA', 'U0EVE', SYSTEM]) {
      spec
        .given([requested])
        .when(cant(actor))
        .then({ code: 'SB_ILLEGAL_STATE', details: { reason: 'not_cover' } });
    }
    // Already withdrawn (the leave was cancelled): nothing to decline, said.
    spec
      .given([requested, withdrawn])
      .when(cant('U0BEN'))
      .then({ code: 'SB_ILLEGAL_STATE', details: { reason: 'cover_withdrawn' } });
    // Every shift is over: nothing left to decline.
    spec
      .given([requested])
      .when(cant('U0BEN', '2026-12-06T00:00:00.000Z'))
      .then({ code: 'SB_ILLEGAL_STATE', details: { reason: 'cover_over' } });
    spec
      .given([])
      .when(cant('U0BEN'))
      .then({ code: 'SB_ILLEGAL_STATE', details: { reason: 'unknown_cover' } });
  });

  it('a withdrawn cover’s created overrides are removed by a durable call (issue 20); one with no id cannot be', () => {
    const remove0 = coverRemovalRequestId(COVER, 0);
    const state = spec
      .given([requested, created0])
      .when({
        type: 'WithdrawCover',
        data: { coverId: COVER, reason: 'leave cancelled' },
        metadata: meta('c-withdraw'),
      })
      .then([withdrawn]);
    expect(pendingCoverCall(state, remove0)).toMatchObject({ action: 'delete_override', attempt: 1 });
    expect(removalsSettled(state)).toBe(false);
    // A transient failure waits for its retry; then the service answers.
    const failed = spec.given([requested, created0, withdrawn]).when({
      type: 'RecordCoverUpstreamCallFailed',
      data: {
        coverId: COVER,
        requestId: remove0,
        action: 'delete_override',
        attempt: 1,
        maxAttempts: 3,
        code: 'SB_UPSTREAM_UNAVAILABLE',
        message: '503',
        nextAttemptAt: '2026-11-23T10:01:00.000Z',
      },
      metadata: meta('c-f'),
    });
    const waiting = failed.events();
    expect(waiting.events.map((e) => e.type)).toEqual(['CoverUpstreamCallFailed']);
    expect(pendingCoverCall(waiting.state, remove0)).toMatchObject({
      action: 'delete_override',
      failedAttempts: 1,
      nextAttemptAt: '2026-11-23T10:01:00.000Z',
    });
    const removed: CoverEvent = {
      type: 'CoverOverrideRemoved',
      data: { coverId: COVER, index: 0, outcome: 'deleted', at: T0 },
    };
    const after = spec
      .given([requested, created0, withdrawn])
      .when({
        type: 'RecordCoverOverrideRemoved',
        data: { coverId: COVER, requestId: remove0, outcome: 'deleted' },
        metadata: meta('c-removed'),
      })
      .then([removed]);
    expect(removalsSettled(after)).toBe(true);
    expect(after.slots[0]?.removal).toMatchObject({ status: 'removed', outcome: 'deleted' });
    // Recorded again: nothing new.
    spec
      .given([requested, created0, withdrawn, removed])
      .when({
        type: 'RecordCoverOverrideRemoved',
        data: { coverId: COVER, requestId: remove0, outcome: 'deleted' },
        metadata: meta('c-removed'),
      })
      .then([]);
    // Refused (a past override): failed, in words.
    spec
      .given([requested, created0, withdrawn])
      .when({
        type: 'RecordCoverOverrideRemoveRefused',
        data: { coverId: COVER, requestId: remove0, problem: 'You cannot remove a past override' },
        metadata: meta('c-refused'),
      })
      .then([
        {
          type: 'CoverOverrideRemoveFailed',
          data: { coverId: COVER, index: 0, problem: 'You cannot remove a past override', at: T0 },
        },
      ]);
    // Found already there (no override id): nothing Switchboard can delete.
    const foundThere: CoverEvent = {
      type: 'CoverSlotCreated',
      data: { coverId: COVER, index: 0, overrideId: null, alreadyThere: true, at: T0 },
    };
    const none = spec
      .given([requested, foundThere])
      .when({
        type: 'WithdrawCover',
        data: { coverId: COVER, reason: 'leave cancelled' },
        metadata: meta('c-withdraw'),
      })
      .then([withdrawn]);
    expect(none.slots[0]?.removal).toBeNull();
  });

  it('names streams only from cover ids', () => {
    expect(coverStreamId(COVER)).toBe(`timeoffcover-${COVER}`);
    expect(parseCoverId('../x')).toBeNull();
    expect(() => coverStreamId('nope')).toThrow();
    spec
      .given([])
      .when({ type: 'WithdrawCover', data: { coverId: COVER, reason: 'x' }, metadata: meta('c') })
      .then({ code: 'SB_ILLEGAL_STATE', details: { reason: 'unknown_cover' } });
  });
});

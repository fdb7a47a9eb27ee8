import { describe, expect, it } from 'vitest';
import { ChatOpsError, StoreUnavailableError, ValidationError } from '../../src/core/errors.ts';
import type { JsonObject } from '../../src/core/messages.ts';
import type { RecordedEvent } from '../../src/eventStore/eventStore.ts';
import { retryDecision } from '../../src/processors/runner/handling.ts';
import { foldParked, parkedEventId } from '../../src/processors/runner/parked.ts';

const RETRY = { maxAttempts: 3 };

describe('the retry/park decision', () => {
  it('retries a transient failure until the last attempt, then gives up', () => {
    const error = new ChatOpsError('SB_UPSTREAM_UNAVAILABLE', 'vendor down');
    expect(retryDecision(error, 1, false, RETRY)).toEqual({ kind: 'retry' });
    expect(retryDecision(error, 2, false, RETRY)).toEqual({ kind: 'retry' });
    expect(retryDecision(error, 3, false, RETRY)).toEqual({ kind: 'giveUp' });
    expect(retryDecision(new Error('uncoded'), 1, false, RETRY)).toEqual({ kind: 'retry' });
  });

  it('gives up at once on a permanent coded error', () => {
    expect(retryDecision(new ValidationError('bad'), 1, false, RETRY)).toEqual({ kind: 'giveUp' });
    expect(retryDecision(new ChatOpsError('SB_UPSTREAM_AUTH', 'no'), 1, true, RETRY)).toEqual({
      kind: 'giveUp',
    });
  });

  it('waits for the store while live, however many attempts; a replay reports it like any failure', () => {
    const down = new StoreUnavailableError('store down');
    expect(retryDecision(down, 1, false, RETRY)).toEqual({ kind: 'waitForStore' });
    expect(retryDecision(down, 99, false, RETRY)).toEqual({ kind: 'waitForStore' });
    expect(retryDecision(down, 1, true, RETRY)).toEqual({ kind: 'retry' });
    expect(retryDecision(down, 3, true, RETRY)).toEqual({ kind: 'giveUp' });
  });
});

let position = 0n;
const recorded = (type: string, data: Record<string, unknown>): RecordedEvent => {
  position += 1n;
  return {
    id: `e${position}`,
    streamId: 'processor-p',
    type,
    data: data as JsonObject,
    metadata: {},
    kind: 'event',
    revision: Number(position) - 1,
    position,
    recordedAt: new Date(0),
  };
};
const parkedData = (eventId: string, errorCode = 'SB_TIMEOUT') => ({
  processorId: 'p',
  position: '7',
  eventId,
  streamId: 'work-1',
  type: 'WorkRequested',
  attempts: 5,
  errorCode,
  errorMessage: 'took too long',
  parkedAt: '2026-11-22T02:00:00.000Z',
});
const replayed = (eventId: string, outcome: 'succeeded' | 'failed', errorCode?: string) => ({
  processorId: 'p',
  position: '7',
  eventId,
  streamId: 'work-1',
  type: 'WorkRequested',
  outcome,
  attempts: 1,
  ...(errorCode ? { errorCode, errorMessage: `failed with ${errorCode}` } : {}),
  replayedAt: '2026-11-22T03:00:00.000Z',
});

describe('the parked list', () => {
  it('keeps what is parked, with the last failure of its replays, and drops what a replay fixed', () => {
    const list = foldParked([
      recorded('ProcessorEventParked', parkedData('a')),
      recorded('ProcessorEventParked', parkedData('b')),
      recorded('ProcessorParkedEventReplayed', replayed('a', 'failed', 'SB_UPSTREAM_UNAVAILABLE')),
      recorded('ProcessorParkedEventReplayed', replayed('b', 'succeeded')),
      recorded('SomethingElse', {}),
    ]);
    expect([...list.parked.keys()]).toEqual(['a']);
    expect(list.parked.get('a')).toMatchObject({
      errorCode: 'SB_UPSTREAM_UNAVAILABLE',
      errorMessage: 'failed with SB_UPSTREAM_UNAVAILABLE',
      attempts: 5,
    });
    expect(list.replays).toEqual(new Map([['b', 1]]));
  });

  it('parks an event again after a successful replay, under a new id', () => {
    const list = foldParked([
      recorded('ProcessorEventParked', parkedData('a')),
      recorded('ProcessorParkedEventReplayed', replayed('a', 'succeeded')),
      recorded('ProcessorEventParked', parkedData('a', 'SB_VALIDATION')),
    ]);
    expect(list.parked.get('a')?.errorCode).toBe('SB_VALIDATION');
    const first = parkedEventId('p', 'a', 0);
    expect(parkedEventId('p', 'a', 0)).toBe(first);
    expect(parkedEventId('p', 'a', list.replays.get('a') ?? 0)).not.toBe(first);
    expect(parkedEventId('q', 'a', 0)).not.toBe(first);
  });
});

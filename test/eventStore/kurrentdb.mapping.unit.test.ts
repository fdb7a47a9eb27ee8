import {
  AccessDeniedError,
  CancelledError,
  DeadlineExceededError,
  END,
  InvalidArgumentError,
  MaxAppendSizeExceededError,
  NotLeaderError,
  START,
  StreamDeletedError,
  StreamNotFoundError,
  TimeoutError,
  UnavailableError,
  WrongExpectedVersionError,
} from '@kurrent/kurrentdb-client';
import { describe, expect, it } from 'vitest';
import { ChatOpsError, ConcurrencyError, ValidationError } from '../../src/core/errors.ts';
import type { NewEvent } from '../../src/eventStore/eventStore.ts';
import {
  acceptsEvent,
  CHECKPOINT_EVENT_TYPE,
  CHECKPOINT_STREAM_PREFIX,
  checkpointStreamId,
  describeStreamState,
  fromCheckpointData,
  fromResolvedEvent,
  isAfter,
  isInternalEvent,
  isStreamNotFound,
  isWrongExpectedVersion,
  normalizeConnectionString,
  redactConnectionString,
  satisfiesExpected,
  toBackwardsReadPosition,
  toCheckpointData,
  toEventData,
  toGlobalPosition,
  toReadPosition,
  toReadStreamOptions,
  toRecordedEvent,
  toServerFilter,
  toStreamState,
  translateError,
  UNKNOWN_POSITION,
  type VendorRecordedEvent,
  validateAppend,
} from '../../src/eventStore/kurrentdb/mapping.ts';

const ID = '0f8fad5b-d9cb-469f-a165-70867728950e';
const created = new Date('2026-03-01T12:00:00.000Z');

/** What the client hands back for a JSON event, shaped like its RecordedEvent. */
const vendorEvent = (overrides: Partial<VendorRecordedEvent> = {}): VendorRecordedEvent => ({
  streamId: 'incident-P1',
  id: ID,
  type: 'IncidentTriggered',
  revision: 3n,
  created,
  isJson: true,
  data: { title: 'db down' },
  metadata: { actor: 'U1', $kind: 'event' },
  position: { commit: 4096n, prepare: 4096n },
  ...overrides,
});

describe('revisions ↔ stream states', () => {
  it('maps each expected revision onto the client constant or a bigint revision', () => {
    expect(toStreamState('no_stream')).toBe('no_stream');
    expect(toStreamState('stream_exists')).toBe('stream_exists');
    expect(toStreamState('any')).toBe('any');
    expect(toStreamState(0)).toBe(0n);
    expect(toStreamState(41)).toBe(41n);
    expect(toStreamState(Number.MAX_SAFE_INTEGER)).toBe(BigInt(Number.MAX_SAFE_INTEGER));
  });

  it('refuses revisions KurrentDB would misread', () => {
    for (const bad of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => toStreamState(bad)).toThrow(ValidationError);
    }
  });

  it('renders vendor stream states the way ConcurrencyError renders ours', () => {
    expect(describeStreamState(7n)).toBe('7');
    expect(describeStreamState('no_stream')).toBe('no_stream');
    expect(describeStreamState('stream_exists')).toBe('stream_exists');
    expect(describeStreamState(undefined)).toBe('unknown');
  });

  it('decides empty appends client-side with the same rule as the server', () => {
    expect(satisfiesExpected('any', undefined)).toBe(true);
    expect(satisfiesExpected('any', 4)).toBe(true);
    expect(satisfiesExpected('no_stream', undefined)).toBe(true);
    expect(satisfiesExpected('no_stream', 0)).toBe(false);
    expect(satisfiesExpected('stream_exists', undefined)).toBe(false);
    expect(satisfiesExpected('stream_exists', 0)).toBe(true);
    expect(satisfiesExpected(2, 2)).toBe(true);
    expect(satisfiesExpected(2, 3)).toBe(false);
    expect(satisfiesExpected(0, undefined)).toBe(false);
  });
});

describe('positions ↔ checkpoints', () => {
  it('uses the commit position as our global position', () => {
    expect(toGlobalPosition({ commit: 1234n, prepare: 1234n })).toBe(1234n);
    expect(toGlobalPosition({ commit: 1234n, prepare: 1000n })).toBe(1234n);
    expect(toGlobalPosition(undefined)).toBeUndefined();
    // KurrentDB's "no position" sentinel (ulong.MaxValue) and negatives are not positions.
    expect(
      toGlobalPosition({ commit: 0xffff_ffff_ffff_ffffn, prepare: 0xffff_ffff_ffff_ffffn }),
    ).toBeUndefined();
    expect(toGlobalPosition({ commit: -1n, prepare: -1n })).toBeUndefined();
  });

  it('resumes at { commit: p, prepare: p }, and at the start for nothing or 0', () => {
    expect(toReadPosition(undefined)).toBe(START);
    expect(toReadPosition(0n)).toBe(START);
    expect(toReadPosition(-5n)).toBe(START);
    expect(toReadPosition(98_765n)).toEqual({ commit: 98_765n, prepare: 98_765n });
    expect(toBackwardsReadPosition(undefined)).toBe(END);
    expect(toBackwardsReadPosition(77n)).toEqual({ commit: 77n, prepare: 77n });
  });

  it('round-trips positions beyond 2^53 exactly (they are bigints all the way)', () => {
    const big = 2n ** 60n + 12_345n;
    const resume = toReadPosition(big);
    expect(resume).toEqual({ commit: big, prepare: big });
    expect(toGlobalPosition(resume as { commit: bigint; prepare: bigint })).toBe(big);
    expect(fromCheckpointData(toCheckpointData('p', big), 'x')).toBe(big);
  });

  it('treats `after` as exclusive', () => {
    expect(isAfter(10n, undefined)).toBe(true);
    expect(isAfter(10n, 9n)).toBe(true);
    expect(isAfter(10n, 10n)).toBe(false);
    expect(isAfter(10n, 11n)).toBe(false);
  });

  it('keeps each processor checkpoint in its own $-free stream, as a decimal string', () => {
    expect(checkpointStreamId('slack-replies')).toBe(`${CHECKPOINT_STREAM_PREFIX}slack-replies`);
    expect(checkpointStreamId('slack-replies').startsWith('$')).toBe(false);
    expect(() => checkpointStreamId('')).toThrow(ValidationError);
    expect(() => checkpointStreamId('a b')).toThrow(ValidationError);
    expect(toCheckpointData('slack-replies', 42n)).toEqual({ processorId: 'slack-replies', position: '42' });
    expect(() => toCheckpointData('p', -1n)).toThrow(ValidationError);
    expect(fromCheckpointData({ processorId: 'p', position: '0' }, 's')).toBe(0n);
  });

  it('calls a malformed checkpoint corruption, not "never ran"', () => {
    for (const bad of [undefined, null, {}, { position: 42 }, { position: '-1' }, { position: '4x' }]) {
      expect(() => fromCheckpointData(bad, 'switchboardCheckpoint-p')).toThrow(
        expect.objectContaining({ code: 'SB_STORE_CORRUPT' }),
      );
    }
  });
});

describe('stream read options', () => {
  it('reads forwards from the start, or backwards from the end, by default', () => {
    expect(toReadStreamOptions()).toEqual({ direction: 'forwards', fromRevision: START });
    expect(toReadStreamOptions({ direction: 'backwards' })).toEqual({
      direction: 'backwards',
      fromRevision: END,
    });
  });

  it('passes a start revision and a count through', () => {
    expect(toReadStreamOptions({ fromRevision: 5, maxCount: 2 })).toEqual({
      direction: 'forwards',
      fromRevision: 5n,
      maxCount: 2,
    });
    expect(toReadStreamOptions({ direction: 'backwards', fromRevision: 9, maxCount: 0 })).toEqual({
      direction: 'backwards',
      fromRevision: 9n,
      maxCount: 0,
    });
  });

  it('refuses negative or fractional numbers', () => {
    expect(() => toReadStreamOptions({ fromRevision: -1 })).toThrow(ValidationError);
    expect(() => toReadStreamOptions({ maxCount: 1.5 })).toThrow(ValidationError);
  });
});

describe('recorded events', () => {
  it('carries kind in metadata on the way in', () => {
    const e: NewEvent = {
      id: ID,
      type: 'AcknowledgeIncident',
      data: { by: 'U1' },
      metadata: { a: 1 },
      kind: 'command',
    };
    expect(toEventData(e)).toEqual({
      id: ID,
      contentType: 'application/json',
      type: 'AcknowledgeIncident',
      data: { by: 'U1' },
      metadata: { a: 1, $kind: 'command' },
    });
    expect(toEventData({ id: ID, type: 'T', data: {} }).metadata).toEqual({ $kind: 'event' });
  });

  it('maps a recorded event back, kind split out of the metadata', () => {
    expect(toRecordedEvent(vendorEvent())).toEqual({
      id: ID,
      streamId: 'incident-P1',
      type: 'IncidentTriggered',
      data: { title: 'db down' },
      metadata: { actor: 'U1' },
      kind: 'event',
      revision: 3,
      position: 4096n,
      recordedAt: created,
    });
    expect(toRecordedEvent(vendorEvent({ metadata: { $kind: 'command' } }))).toMatchObject({
      kind: 'command',
      metadata: {},
    });
  });

  it('round-trips a new event through the wire shape', () => {
    const e: NewEvent = {
      id: ID,
      type: 'NoteAdded',
      data: { text: 'naïve café — 日本語 🚨', nested: { list: [1, 'two', null, true] } },
      metadata: { correlationId: 'c-1' },
      kind: 'command',
    };
    const wire = toEventData(e);
    const back = toRecordedEvent(
      vendorEvent({ id: wire.id, type: wire.type, data: wire.data, metadata: wire.metadata, revision: 0n }),
    );
    expect({
      id: back.id,
      type: back.type,
      data: back.data,
      metadata: back.metadata,
      kind: back.kind,
    }).toEqual({
      id: e.id,
      type: e.type,
      data: e.data,
      metadata: e.metadata,
      kind: e.kind,
    });
  });

  it('defaults metadata to {} and kind to event when there is none (events from other writers)', () => {
    expect(toRecordedEvent(vendorEvent({ metadata: undefined }))).toMatchObject({
      metadata: {},
      kind: 'event',
    });
    expect(toRecordedEvent(vendorEvent({ metadata: new Uint8Array([1, 2]) }))).toMatchObject({
      metadata: {},
      kind: 'event',
    });
  });

  it('wraps data that is not a JSON object instead of dropping it', () => {
    expect(toRecordedEvent(vendorEvent({ data: [1, 2] })).data).toEqual({ $value: [1, 2] });
    expect(toRecordedEvent(vendorEvent({ data: 'not json' })).data).toEqual({ $value: 'not json' });
    expect(toRecordedEvent(vendorEvent({ isJson: false, data: new Uint8Array([104, 105]) })).data).toEqual({
      $base64: 'aGk=',
    });
  });

  it('takes the position from the event, else the resolved commit position, else UNKNOWN_POSITION', () => {
    expect(toRecordedEvent(vendorEvent(), 1n).position).toBe(4096n);
    expect(toRecordedEvent(vendorEvent({ position: undefined }), 8192n).position).toBe(8192n);
    expect(toRecordedEvent(vendorEvent({ position: undefined })).position).toBe(UNKNOWN_POSITION);
  });

  it('reads resolved events: the event, with the resolved commit position as fallback', () => {
    expect(fromResolvedEvent({})).toBeUndefined();
    expect(
      fromResolvedEvent({ event: vendorEvent({ position: undefined }), commitPosition: 512n })?.position,
    ).toBe(512n);
    expect(
      fromResolvedEvent({
        event: vendorEvent({ position: undefined }),
        commitPosition: 0xffff_ffff_ffff_ffffn,
      })?.position,
    ).toBe(UNKNOWN_POSITION);
  });

  it('marks KurrentDB system events and checkpoint bookkeeping as internal', () => {
    expect(isInternalEvent({ streamId: '$stats-127.0.0.1:2113', type: '$statsCollected' })).toBe(true);
    expect(isInternalEvent({ streamId: '$$incident-P1', type: '$metadata' })).toBe(true);
    expect(isInternalEvent({ streamId: 'incident-P1', type: '$>' })).toBe(true);
    expect(isInternalEvent({ streamId: checkpointStreamId('p'), type: CHECKPOINT_EVENT_TYPE })).toBe(true);
    expect(isInternalEvent({ streamId: 'incident-P1', type: 'IncidentTriggered' })).toBe(false);
  });
});

describe('append validation', () => {
  const ok = (): NewEvent => ({ id: ID, type: 'T', data: {} });

  it('accepts a well-formed append (ids in any letter case)', () => {
    expect(() => validateAppend('incident-P1', [ok()])).not.toThrow();
    expect(() => validateAppend('incident-P1', [{ ...ok(), id: ID.toUpperCase() }])).not.toThrow();
    expect(() => validateAppend('incident-P1', [])).not.toThrow();
  });

  it.each([
    ['a non-UUID id', 'incident-P1', [{ id: 'msg-1', type: 'T', data: {} }]],
    [
      'the same id twice (letter case aside)',
      'incident-P1',
      [
        { id: ID, type: 'T', data: {} },
        { id: ID.toUpperCase(), type: 'T', data: {} },
      ],
    ],
    ['an empty type', 'incident-P1', [{ id: ID, type: '', data: {} }]],
    ['a $-type', 'incident-P1', [{ id: ID, type: '$>', data: {} }]],
    ['a reserved metadata key', 'incident-P1', [{ id: ID, type: 'T', data: {}, metadata: { $kind: 'x' } }]],
    ['a $-stream', '$incident-P1', [{ id: ID, type: 'T', data: {} }]],
    ['a checkpoint stream', `${CHECKPOINT_STREAM_PREFIX}p`, [{ id: ID, type: 'T', data: {} }]],
    ['a stream id with a space', 'incident P1', [{ id: ID, type: 'T', data: {} }]],
    ['a stream id starting with -', '-P1', [{ id: ID, type: 'T', data: {} }]],
  ] as [string, string, NewEvent[]][])('refuses %s', (_name, streamId, events) => {
    expect(() => validateAppend(streamId, events)).toThrow(ValidationError);
  });
});

describe('filters', () => {
  it('sends stream prefixes to the server when there are any', () => {
    expect(
      toServerFilter({ streamPrefixes: ['incident-', 'incident-', 'timeOff-'], eventTypes: ['X'] }),
    ).toMatchObject({ filterOn: 'streamName', prefixes: ['incident-', 'timeOff-'] });
  });

  it('else sends the event types as prefixes', () => {
    expect(toServerFilter({ eventTypes: ['IncidentTriggered'] })).toMatchObject({
      filterOn: 'eventType',
      prefixes: ['IncidentTriggered'],
    });
    expect(toServerFilter({ streamPrefixes: [], eventTypes: ['A', 'B'] })).toMatchObject({
      filterOn: 'eventType',
      prefixes: ['A', 'B'],
    });
  });

  it('else excludes system events on the server', () => {
    for (const filter of [undefined, {}, { streamPrefixes: [], eventTypes: [] }]) {
      expect(toServerFilter(filter)).toMatchObject({ filterOn: 'eventType', regex: '^[^$].*' });
    }
  });

  it('finishes exact event types client-side (the server matched them as prefixes)', () => {
    const filter = { eventTypes: ['IncidentTriggered'] };
    expect(acceptsEvent({ streamId: 'incident-P1', type: 'IncidentTriggered' }, filter)).toBe(true);
    expect(acceptsEvent({ streamId: 'incident-P1', type: 'IncidentTriggeredAgain' }, filter)).toBe(false);
  });

  it('ANDs stream prefixes with event types, and never lets internal events through', () => {
    const filter = { streamPrefixes: ['incident-'], eventTypes: ['IncidentTriggered'] };
    expect(acceptsEvent({ streamId: 'incident-P1', type: 'IncidentTriggered' }, filter)).toBe(true);
    expect(acceptsEvent({ streamId: 'timeOff-1', type: 'IncidentTriggered' }, filter)).toBe(false);
    expect(acceptsEvent({ streamId: 'incident-P1', type: 'IncidentResolved' }, filter)).toBe(false);
    expect(acceptsEvent({ streamId: checkpointStreamId('p'), type: CHECKPOINT_EVENT_TYPE }, undefined)).toBe(
      false,
    );
    expect(
      acceptsEvent({ streamId: checkpointStreamId('p'), type: 'T' }, { streamPrefixes: ['switch'] }),
    ).toBe(false);
    expect(acceptsEvent({ streamId: '$ce-incident', type: '$>' }, { streamPrefixes: ['$ce-'] })).toBe(false);
  });
});

describe('connection strings', () => {
  it('turns the deprecated and our own schemes into kurrentdb://', () => {
    expect(normalizeConnectionString('esdb://h:2113?tls=false')).toBe('kurrentdb://h:2113?tls=false');
    expect(normalizeConnectionString('esdb+discover://h:2113')).toBe('kurrentdb+discover://h:2113');
    expect(normalizeConnectionString('eventstore://h:2113')).toBe('kurrentdb://h:2113');
    expect(normalizeConnectionString('kurrentdb://h:2113')).toBe('kurrentdb://h:2113');
    expect(normalizeConnectionString('kdb+discover://a,b,c')).toBe('kdb+discover://a,b,c');
  });

  it('hides credentials for logs and messages', () => {
    expect(redactConnectionString('kurrentdb://admin:changeit@h:2113?tls=true')).toBe(
      'kurrentdb://***@h:2113?tls=true',
    );
    expect(redactConnectionString('kurrentdb://h:2113')).toBe('kurrentdb://h:2113');
  });
});

describe('vendor errors → coded errors', () => {
  const wrongVersion = (expected: bigint | 'no_stream' | 'any', current: bigint | 'no_stream') =>
    new WrongExpectedVersionError(undefined, { streamName: 'incident-P1', expected, current });

  it('WrongExpectedVersion → ConcurrencyError with our expected and the actual revision', () => {
    const e = translateError(wrongVersion(2n, 5n), {
      operation: 'append',
      streamId: 'incident-P1',
      expected: 2,
    });
    expect(e).toBeInstanceOf(ConcurrencyError);
    expect(e).toMatchObject({
      code: 'SB_CONCURRENCY',
      streamId: 'incident-P1',
      expected: '2',
      actual: '5',
      message: 'stream incident-P1: expected revision 2, actual 5',
    });
    expect(
      translateError(wrongVersion('no_stream', 0n), { operation: 'append', expected: 'no_stream' }),
    ).toMatchObject({ expected: 'no_stream', actual: '0' });
    // Without our own expectation at hand, the server's is rendered.
    expect(translateError(wrongVersion(3n, 'no_stream'), { operation: 'append' })).toMatchObject({
      expected: '3',
      actual: 'no_stream',
    });
    expect(isWrongExpectedVersion(wrongVersion(1n, 2n))).toBe(true);
  });

  it('StreamNotFound → NotFoundError (readers answer [] before it gets this far)', () => {
    const raw = new StreamNotFoundError(undefined, 'incident-P9');
    expect(isStreamNotFound(raw)).toBe(true);
    expect(translateError(raw, { operation: 'read stream' })).toMatchObject({
      code: 'SB_NOT_FOUND',
      details: { streamId: 'incident-P9' },
    });
  });

  it.each([
    [
      'NotLeader',
      () =>
        new NotLeaderError({
          metadata: { 'leader-endpoint-host': 'n2', 'leader-endpoint-port': '2113' },
          message: 'not leader',
          code: 5,
        } as never),
    ],
    ['Unavailable', () => new UnavailableError(undefined, 'connection refused')],
    ['DeadlineExceeded', () => new DeadlineExceededError(undefined, 'deadline')],
    ['Timeout (commit timeout)', () => new TimeoutError(undefined, 'commit timeout')],
    ['Cancelled by the server', () => new CancelledError(undefined, 'cancelled')],
    [
      'a raw gRPC UNAVAILABLE',
      () => Object.assign(new Error('14 UNAVAILABLE: No connection established'), { code: 14 }),
    ],
    ['a raw gRPC DEADLINE_EXCEEDED', () => Object.assign(new Error('4 DEADLINE_EXCEEDED'), { code: 4 })],
    [
      'a refused socket',
      () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:2113'), { code: 'ECONNREFUSED' }),
    ],
  ])('%s → StoreUnavailableError', (_name, make) => {
    const raw = make();
    const e = translateError(raw, { operation: 'append', streamId: 'incident-P1' });
    expect(e).toMatchObject({ code: 'SB_STORE_UNAVAILABLE', name: 'StoreUnavailableError', cause: raw });
    expect((e as Error).message).toContain('KurrentDB append on incident-P1');
  });

  it('AccessDenied and gRPC auth failures → SB_CONFIG (an operator must act)', () => {
    expect(
      translateError(new AccessDeniedError(undefined, 'denied'), { operation: 'read $all' }),
    ).toMatchObject({
      code: 'SB_CONFIG',
      message: expect.stringContaining('credentials'),
    });
    expect(
      translateError(Object.assign(new Error('16 UNAUTHENTICATED'), { code: 16 }), { operation: 'append' }),
    ).toMatchObject({ code: 'SB_CONFIG' });
  });

  it('an append over the server MaxAppendSize → SB_CONFIG naming the limit', () => {
    expect(
      translateError(MaxAppendSizeExceededError.fromMaxAppendSize(1_048_576), { operation: 'append' }),
    ).toMatchObject({
      code: 'SB_CONFIG',
      details: { limit: 1_048_576 },
      message: expect.stringContaining('MaxAppendSize'),
    });
  });

  it("the client's own argument checks → ValidationError", () => {
    expect(
      translateError(new InvalidArgumentError('bad revision'), { operation: 'read stream' }),
    ).toMatchObject({
      code: 'SB_VALIDATION',
    });
  });

  it('leaves our own errors and anything unrecognised as they are', () => {
    const ours = new ChatOpsError('SB_TIMEOUT', 'ours');
    expect(translateError(ours, { operation: 'append' })).toBe(ours);
    const deleted = StreamDeletedError.fromStreamName('incident-P1');
    expect(translateError(deleted, { operation: 'append' })).toBe(deleted);
    const bug = new TypeError('x is not a function');
    expect(translateError(bug, { operation: 'append' })).toBe(bug);
    expect(translateError('a string', { operation: 'append' })).toBe('a string');
  });
});

/**
 * Pure translation between our event store port and `@kurrent/kurrentdb-client` 1.x: stream
 * states, positions, recorded events, filters, connection strings and vendor errors. No I/O here,
 * so every rule is unit-tested without a server (test/eventStore/kurrentdb.mapping.unit.test.ts).
 *
 * @example
 * const streamState = toStreamState(options.expectedRevision ?? 'any'); // 'no_stream' | 4n | …
 * const recorded = fromResolvedEvent(resolved);                          // RecordedEvent | undefined
 * throw translateError(vendorError, { operation: 'append', streamId });  // coded error
 */

import {
  ANY,
  type AppendStreamState,
  type CurrentStreamState,
  END,
  eventTypeFilter,
  excludeSystemEvents,
  type Filter,
  type JSONEventData,
  NO_STREAM,
  type Position,
  type ReadPosition,
  type ReadRevision,
  START,
  STREAM_EXISTS,
  streamNameFilter,
} from '@kurrent/kurrentdb-client';
import {
  ChatOpsError,
  ConcurrencyError,
  NotFoundError,
  StoreUnavailableError,
  ValidationError,
} from '../../core/errors.ts';
import type { JsonObject } from '../../core/messages.ts';
import {
  describeExpected,
  type EventFilter,
  type ExpectedRevision,
  type MessageKind,
  matchesFilter,
  type NewEvent,
  type ReadStreamOptions,
  type RecordedEvent,
} from '../eventStore.ts';

/** Metadata key that carries `kind` (`event` | `command`); stripped again on read. */
export const KIND_METADATA_KEY = '$kind';

/**
 * Checkpoints live in one ordinary stream per processor (`$`-free name: system streams need admin
 * rights in a secured cluster) with `$maxCount: 1`. Their event type starts with `$`, so the
 * server's own "exclude system events" filter keeps them out of every read and subscription of
 * `$all`; the client-side check below catches them when a stream-prefix filter is in force.
 */
export const CHECKPOINT_STREAM_PREFIX = 'switchboardCheckpoint-';
export const CHECKPOINT_EVENT_TYPE = '$SwitchboardCheckpointStored';

/** Stands for "the server did not say": only old servers (< 22.6) omit positions on stream reads. */
export const UNKNOWN_POSITION = -1n;

/** KurrentDB writes `ulong.MaxValue` where a log position does not apply. */
const NO_POSITION_SENTINEL = 0xffff_ffff_ffff_ffffn;

// ---------------------------------------------------------------------------------------------
// Revisions ↔ stream states

/**
 * Our expected revision → the client's `streamState`. Numbers are the revision of the stream's
 * last event (KurrentDB's convention too), so they map one to one onto a bigint.
 */
export const toStreamState = (expected: ExpectedRevision): AppendStreamState => {
  switch (expected) {
    case 'no_stream':
      return NO_STREAM;
    case 'stream_exists':
      return STREAM_EXISTS;
    case 'any':
      return ANY;
    default:
      if (!Number.isSafeInteger(expected) || expected < 0) {
        throw new ValidationError(
          `expectedRevision must be 'no_stream', 'stream_exists', 'any' or an integer ≥ 0 (got ${String(expected)})`,
        );
      }
      return BigInt(expected);
  }
};

/** Renders a vendor stream state the way ConcurrencyError shows ours (`3`, `no_stream`, `any`). */
export const describeStreamState = (state: AppendStreamState | CurrentStreamState | undefined): string =>
  state === undefined ? 'unknown' : typeof state === 'bigint' ? state.toString() : state;

/** True when a stream whose last revision is `current` satisfies `expected` (for empty appends). */
export const satisfiesExpected = (expected: ExpectedRevision, current: number | undefined): boolean =>
  expected === 'any' ||
  (expected === 'no_stream' && current === undefined) ||
  (expected === 'stream_exists' && current !== undefined) ||
  (typeof expected === 'number' && current === expected);

// ---------------------------------------------------------------------------------------------
// Positions ↔ checkpoints

/**
 * A `$all` position → our one bigint: the commit position.
 *
 * Why one number is enough: since EventStoreDB 20 every append is an implicit transaction whose
 * events are committed in their own prepare records, and `$all` reports each such event at
 * `{ commit: p, prepare: p }` where `p` is the event's own log position (`AllReader`: "new
 * CommitEventRecord(eventRecord, eventRecord.LogPosition)"). Commit positions are therefore
 * distinct per event and strictly increase in log order; only legacy explicit TCP transactions
 * shared a commit position, and this adapter never writes those. Gaps are normal (positions are
 * byte offsets). `undefined` when the server gave no position (or the "none" sentinel).
 */
export const toGlobalPosition = (position: Position | undefined): bigint | undefined => {
  if (position === undefined) return undefined;
  const { commit } = position;
  if (commit < 0n || commit >= NO_POSITION_SENTINEL) return undefined;
  return commit;
};

/**
 * Our bigint → where to start reading or subscribing on `$all`. Resuming at `{ commit: p,
 * prepare: p }` is exactly where the event at `p` sits (see toGlobalPosition); reads of `$all` are
 * inclusive of that event and subscriptions exclusive, so callers also drop `position <= after`.
 * `undefined` or ≤ 0 means the start of the log.
 */
export const toReadPosition = (after: bigint | undefined): ReadPosition =>
  after === undefined || after <= 0n ? START : { commit: after, prepare: after };

/** Where a backwards read of `$all` starts: the end, or just before `before` (exclusive). */
export const toBackwardsReadPosition = (before: bigint | undefined): ReadPosition =>
  before === undefined ? END : { commit: before, prepare: before };

/** True when a read event lies strictly after the exclusive start `after`. */
export const isAfter = (position: bigint, after: bigint | undefined): boolean =>
  after === undefined || position > after;

/** The stream that holds one processor's checkpoint. */
export const checkpointStreamId = (processorId: string): string => {
  if (processorId.length === 0 || /\s/.test(processorId)) {
    throw new ValidationError(`invalid processor id ${JSON.stringify(processorId)}`);
  }
  return `${CHECKPOINT_STREAM_PREFIX}${processorId}`;
};

export type CheckpointData = Readonly<{ processorId: string; position: string }>;

/** The checkpoint event's data: the position as a decimal string (JSON has no bigint). */
export const toCheckpointData = (processorId: string, position: bigint): CheckpointData => {
  if (position < 0n) throw new ValidationError(`checkpoint position must be ≥ 0 (got ${position})`);
  return { processorId, position: position.toString() };
};

/** Reads a checkpoint event's data back; a malformed one is corruption, not "never ran". */
export const fromCheckpointData = (data: unknown, streamId: string): bigint => {
  const position = (data as { position?: unknown } | null)?.position;
  if (typeof position !== 'string' || !/^\d+$/.test(position)) {
    throw new ChatOpsError('SB_STORE_CORRUPT', `checkpoint stream ${streamId} holds a malformed checkpoint`, {
      details: { streamId },
    });
  }
  return BigInt(position);
};

// ---------------------------------------------------------------------------------------------
// Stream reads

export type VendorReadStreamOptions = Readonly<{
  direction: 'forwards' | 'backwards';
  fromRevision: ReadRevision;
  maxCount?: number;
}>;

/** Our readStream options → the client's (backwards without a start reads from the end). */
export const toReadStreamOptions = (options: ReadStreamOptions = {}): VendorReadStreamOptions => {
  const backwards = options.direction === 'backwards';
  const { fromRevision, maxCount } = options;
  if (fromRevision !== undefined && (!Number.isSafeInteger(fromRevision) || fromRevision < 0)) {
    throw new ValidationError(`fromRevision must be an integer ≥ 0 (got ${String(fromRevision)})`);
  }
  if (maxCount !== undefined && (!Number.isSafeInteger(maxCount) || maxCount < 0)) {
    throw new ValidationError(`maxCount must be an integer ≥ 0 (got ${String(maxCount)})`);
  }
  return {
    direction: backwards ? 'backwards' : 'forwards',
    fromRevision: fromRevision !== undefined ? BigInt(fromRevision) : backwards ? END : START,
    ...(maxCount !== undefined ? { maxCount } : {}),
  };
};

// ---------------------------------------------------------------------------------------------
// Events

const UUID_SHAPE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Stream ids this adapter refuses to append to, and why (undefined when fine). */
export const streamIdProblem = (streamId: string): string | undefined => {
  if (!/^[^\s-][^\s]*$/.test(streamId) || streamId.length > 512) {
    return `invalid stream id ${JSON.stringify(streamId)}: want <category>-<id>, no spaces`;
  }
  if (streamId.startsWith('$')) return `stream id ${JSON.stringify(streamId)}: $-streams belong to KurrentDB`;
  if (streamId.startsWith(CHECKPOINT_STREAM_PREFIX)) {
    return `stream id ${JSON.stringify(streamId)}: ${CHECKPOINT_STREAM_PREFIX}* holds processor checkpoints`;
  }
  return undefined;
};

/** Checks one append the way the SQLite adapter does, plus KurrentDB's own rules. */
export const validateAppend = (streamId: string, events: readonly NewEvent[]): void => {
  const problem = streamIdProblem(streamId);
  if (problem) throw new ValidationError(problem);
  const seen = new Set<string>();
  for (const e of events) {
    if (typeof e.id !== 'string' || !UUID_SHAPE.test(e.id)) {
      throw new ValidationError(`event of type ${e.type} needs a UUID id (got ${JSON.stringify(e.id)})`);
    }
    const id = e.id.toLowerCase();
    if (seen.has(id)) throw new ValidationError(`event id ${e.id} appears twice in one append`);
    seen.add(id);
    if (typeof e.type !== 'string' || e.type.length === 0)
      throw new ValidationError(`event ${e.id} has no type`);
    if (e.type.startsWith('$')) {
      throw new ValidationError(`event ${e.id}: types starting with $ are KurrentDB system events`);
    }
    if (e.metadata && KIND_METADATA_KEY in e.metadata) {
      throw new ValidationError(`event ${e.id}: metadata key ${KIND_METADATA_KEY} is reserved for the kind`);
    }
  }
};

/** A new event → the client's JSON event; `kind` rides in metadata so readers can split inputs. */
export const toEventData = (event: NewEvent): JSONEventData => ({
  id: event.id,
  contentType: 'application/json',
  type: event.type,
  data: event.data,
  metadata: { ...(event.metadata ?? {}), [KIND_METADATA_KEY]: event.kind ?? 'event' },
});

/** What the adapter needs from the client's recorded event (its union type is assignable). */
export type VendorRecordedEvent = Readonly<{
  streamId: string;
  id: string;
  type: string;
  revision: bigint;
  created: Date;
  isJson: boolean;
  data: unknown;
  metadata?: unknown;
  position?: Position;
}>;

export type VendorResolvedEvent = Readonly<{
  event?: VendorRecordedEvent;
  link?: VendorRecordedEvent;
  commitPosition?: bigint;
}>;

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Uint8Array);

/**
 * Foreign events (written by other tools) may carry non-object JSON or bytes; the port wants an
 * object, so those are wrapped (`{ $value }`, `{ $base64 }`) rather than dropped.
 */
const toData = (event: VendorRecordedEvent): JsonObject => {
  if (!event.isJson || event.data instanceof Uint8Array) {
    const bytes = event.data instanceof Uint8Array ? event.data : new Uint8Array();
    return { $base64: Buffer.from(bytes).toString('base64') };
  }
  return isPlainObject(event.data) ? (event.data as JsonObject) : ({ $value: event.data } as JsonObject);
};

const toMetadata = (metadata: unknown): { metadata: JsonObject; kind: MessageKind } => {
  if (!isPlainObject(metadata)) return { metadata: {}, kind: 'event' };
  const { [KIND_METADATA_KEY]: kind, ...rest } = metadata;
  return { metadata: rest as JsonObject, kind: kind === 'command' ? 'command' : 'event' };
};

/**
 * The client's recorded event → ours. `fallbackPosition` is the resolved event's commit position
 * (present on `$all` reads); revision is a bigint there and a number here (safe below 2^53).
 */
export const toRecordedEvent = (event: VendorRecordedEvent, fallbackPosition?: bigint): RecordedEvent => {
  const { metadata, kind } = toMetadata(event.metadata);
  return {
    id: event.id,
    streamId: event.streamId,
    type: event.type,
    data: toData(event),
    metadata,
    kind,
    revision: Number(event.revision),
    position: toGlobalPosition(event.position) ?? fallbackPosition ?? UNKNOWN_POSITION,
    recordedAt: event.created,
  };
};

/** A resolved event → ours, or `undefined` when it carries no event (unresolved link). */
export const fromResolvedEvent = (resolved: VendorResolvedEvent): RecordedEvent | undefined =>
  resolved.event
    ? toRecordedEvent(
        resolved.event,
        resolved.commitPosition !== undefined && resolved.commitPosition < NO_POSITION_SENTINEL
          ? resolved.commitPosition
          : undefined,
      )
    : undefined;

/** KurrentDB's own events and this adapter's bookkeeping: never shown to port readers of `$all`. */
export const isInternalEvent = (event: Pick<RecordedEvent, 'streamId' | 'type'>): boolean =>
  event.streamId.startsWith('$') ||
  event.type.startsWith('$') ||
  event.streamId.startsWith(CHECKPOINT_STREAM_PREFIX);

// ---------------------------------------------------------------------------------------------
// Filters

const nonEmpty = (list: readonly string[] | undefined): string[] | undefined =>
  list && list.length > 0 ? [...new Set(list)] : undefined;

/**
 * Our filter → one server-side filter. KurrentDB filters on stream name *or* event type, by
 * prefix or regex, one at a time, so: stream prefixes when given (processors subscribe by
 * category), else the event types as prefixes (`Foo` also lets `FooBar` through), else "no system
 * events". Whatever the server lets through is finished by `acceptsEvent`.
 */
export const toServerFilter = (filter: EventFilter | undefined): Filter => {
  const prefixes = nonEmpty(filter?.streamPrefixes);
  if (prefixes) return streamNameFilter({ prefixes });
  const types = nonEmpty(filter?.eventTypes);
  if (types) return eventTypeFilter({ prefixes: types });
  return excludeSystemEvents();
};

/** The client-side half of a filter: no internal events, exact event types, stream prefixes. */
export const acceptsEvent = (
  event: Pick<RecordedEvent, 'streamId' | 'type'>,
  filter: EventFilter | undefined,
): boolean => !isInternalEvent(event) && matchesFilter(event, filter);

// ---------------------------------------------------------------------------------------------
// Connection strings

/**
 * `EVENT_STORE_URL` → what the client parses. `esdb://` still works in the client but prints a
 * deprecation warning to the console, and `eventstore://` is ours only; both become `kurrentdb://`.
 */
export const normalizeConnectionString = (url: string): string =>
  url.replace(/^(?:esdb|eventstore)(\+discover)?:\/\//, (_m, discover: string | undefined) => {
    return `kurrentdb${discover ?? ''}://`;
  });

/** A connection string fit for logs and error messages: credentials replaced. */
export const redactConnectionString = (url: string): string => url.replace(/\/\/[^@/?#]*@/, '//***@');

// ---------------------------------------------------------------------------------------------
// Vendor errors → coded errors

export type ErrorContext = Readonly<{
  /** What we were doing, for the message: `append`, `read stream`, `subscribe`… */
  operation: string;
  streamId?: string;
  expected?: ExpectedRevision;
}>;

/** The client's `ErrorType` strings we translate (its classes carry them in `type`). */
const UNAVAILABLE_TYPES = new Set(['unavailable', 'not-leader', 'deadline-exceeded', 'timeout', 'cancelled']);
const TOO_LARGE_TYPES = new Set([
  'maximum-append-size-exceeded',
  'append-record-size-exceeded',
  'transaction-max-size-exceeded',
]);
/** gRPC status codes: UNAVAILABLE, DEADLINE_EXCEEDED, and the two authentication failures. */
const GRPC_UNAVAILABLE = new Set([14, 4]);
const GRPC_AUTH = new Set([16, 7]);
const SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

const vendorType = (e: unknown): string | undefined => {
  const type = (e as { type?: unknown } | null)?.type;
  return typeof type === 'string' ? type : undefined;
};

const messageOf = (e: unknown): string => {
  const m = e instanceof Error ? e.message : String(e);
  return m.length > 0 ? m : ((e as { type?: string } | null)?.type ?? 'no message');
};

/** True for a KurrentDB `StreamNotFoundError` (reads answer `[]`/`undefined` for those). */
export const isStreamNotFound = (e: unknown): boolean => vendorType(e) === 'stream-not-found';

/** True for a KurrentDB `WrongExpectedVersionError`. */
export const isWrongExpectedVersion = (e: unknown): boolean => vendorType(e) === 'wrong-expected-version';

/**
 * A vendor error → one of our coded errors, at the adapter boundary (callers branch on `code`):
 * - WrongExpectedVersion → ConcurrencyError (SB_CONCURRENCY) with expected and actual rendered;
 * - StreamNotFound → NotFoundError (callers that read turn it into `[]`/`undefined` first);
 * - NotLeader, Unavailable, DeadlineExceeded, Timeout, Cancelled, gRPC UNAVAILABLE /
 *   DEADLINE_EXCEEDED, refused or reset sockets → StoreUnavailableError (SB_STORE_UNAVAILABLE:
 *   webhooks answer 503 and the sender retries);
 * - AccessDenied, gRPC UNAUTHENTICATED / PERMISSION_DENIED → ChatOpsError SB_CONFIG (credentials
 *   or ACLs: an operator has to act, retrying will not help);
 * - append too large for the server's MaxAppendSize → SB_CONFIG;
 * - the client's own InvalidArgument → ValidationError.
 * Anything else (stream deleted, unknown server errors, our own bugs) is returned unchanged and
 * propagates to the caller's error handler.
 */
export const translateError = (e: unknown, context: ErrorContext): unknown => {
  if (e instanceof ChatOpsError) return e;
  const type = vendorType(e);
  const what = `KurrentDB ${context.operation}${context.streamId ? ` on ${context.streamId}` : ''}`;
  if (type === 'wrong-expected-version') {
    const w = e as {
      streamName?: string;
      expectedState?: AppendStreamState;
      actualState?: CurrentStreamState;
    };
    return new ConcurrencyError(
      w.streamName || context.streamId || 'unknown',
      context.expected !== undefined
        ? describeExpected(context.expected)
        : describeStreamState(w.expectedState),
      describeStreamState(w.actualState),
      { cause: e },
    );
  }
  if (type === 'stream-not-found') {
    const name = (e as { streamName?: string }).streamName || context.streamId || 'unknown';
    return new NotFoundError(`stream ${name} not found`, { cause: e, details: { streamId: name } });
  }
  if (type !== undefined && UNAVAILABLE_TYPES.has(type)) {
    return new StoreUnavailableError(`${what} failed: ${type} (${messageOf(e)})`, {
      cause: e,
      details: { vendorError: type },
    });
  }
  if (type === 'access-denied') {
    return new ChatOpsError(
      'SB_CONFIG',
      `${what} was denied: check the credentials in EVENT_STORE_URL and the stream ACLs (reading $all needs them too)`,
      { cause: e, details: { vendorError: type } },
    );
  }
  if (type !== undefined && TOO_LARGE_TYPES.has(type)) {
    const limit =
      (e as { maxAppendSize?: number; maxSize?: number }).maxAppendSize ??
      (e as { maxSize?: number }).maxSize;
    return new ChatOpsError(
      'SB_CONFIG',
      `${what} is larger than the server accepts${limit ? ` (${limit} bytes)` : ''}: raise KurrentDB's MaxAppendSize`,
      { cause: e, details: { vendorError: type, ...(limit ? { limit } : {}) } },
    );
  }
  if (type === 'invalid-argument') return new ValidationError(`${what}: ${messageOf(e)}`, { cause: e });
  const code = (e as { code?: unknown } | null)?.code;
  if (typeof code === 'number' && GRPC_UNAVAILABLE.has(code)) {
    return new StoreUnavailableError(`${what} failed: ${messageOf(e)}`, {
      cause: e,
      details: { grpcStatus: code },
    });
  }
  if (typeof code === 'number' && GRPC_AUTH.has(code)) {
    return new ChatOpsError('SB_CONFIG', `${what} was refused (gRPC status ${code}): check credentials`, {
      cause: e,
      details: { grpcStatus: code },
    });
  }
  if (typeof code === 'string' && SOCKET_CODES.has(code)) {
    return new StoreUnavailableError(`${what} failed: ${code}`, { cause: e, details: { socketError: code } });
  }
  return e;
};

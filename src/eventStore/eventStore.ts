/**
 * The event store port: one interface, two adapters (SQLite embedded, KurrentDB), one contract
 * test suite both pass (`test/eventStore/contract.ts`).
 *
 * Vocabulary:
 * - A stream is `<category>-<id>` (`incident-PABC123`, `inbox-slack`). The category is the text
 *   before the first `-`, as KurrentDB's by-category projection splits it.
 * - A stream revision is the 0-based index of an event in its stream (KurrentDB's "revision").
 * - A global position orders every event in the store; it only grows, and has gaps in KurrentDB.
 * - Messages are events (`kind: 'event'`) or recorded inputs/commands (`kind: 'command'`): the
 *   stream is inbox and outbox (emmett RFC 001). Deciders fold only events.
 *
 * @example
 * const store = await openEventStore('sqlite::memory:');
 * const r = await store.appendToStream('incident-P1', [{ id, type: 'IncidentTriggered', data }], {
 *   expectedRevision: 'no_stream',
 * });
 * for (const e of await store.readStream('incident-P1')) console.log(e.revision, e.type);
 */

import type { JsonObject } from '../core/messages.ts';

export type MessageKind = 'event' | 'command';

/**
 * What the stream must look like for an append to go ahead.
 * - `'no_stream'`: the stream has no events.
 * - `'stream_exists'`: it has at least one.
 * - `'any'`: no check (idempotency by event id still applies).
 * - a number: the revision of the stream's last event (so `0` after one event).
 */
export type ExpectedRevision = 'no_stream' | 'stream_exists' | 'any' | number;

export type NewEvent = Readonly<{
  /** UUID. Appending an id that is already stored is a no-op that reports the original. */
  id: string;
  type: string;
  data: JsonObject;
  metadata?: JsonObject;
  /** Defaults to `'event'`. */
  kind?: MessageKind;
}>;

export type RecordedEvent = Readonly<{
  id: string;
  streamId: string;
  type: string;
  data: JsonObject;
  metadata: JsonObject;
  kind: MessageKind;
  /** 0-based index in its stream. */
  revision: number;
  /** Global order; strictly increasing in append order. */
  position: bigint;
  /** When the store took it (store clock; business time travels on the command's `now`). */
  recordedAt: Date;
}>;

export type AppendOptions = Readonly<{ expectedRevision?: ExpectedRevision }>;

export type AppendResult = Readonly<{
  /** Revision of the stream's last event after the append: pass it as the next `expectedRevision`. */
  nextExpectedRevision: number;
  /** Global position of the last event of this append (of the original, when deduplicated). */
  position: bigint;
  /**
   * True when every event id was already stored in this stream (a retried append): nothing was
   * written and the positions are the originals'. Mixed new and old ids are an error.
   */
  deduplicated: boolean;
}>;

export type ReadStreamOptions = Readonly<{
  direction?: 'forwards' | 'backwards';
  /** Inclusive start revision; for backwards reads, the highest revision to return. */
  fromRevision?: number;
  maxCount?: number;
}>;

/** Subscription / read-all filter. Both lists are ORed within, ANDed between; empty means all. */
export type EventFilter = Readonly<{
  streamPrefixes?: readonly string[];
  eventTypes?: readonly string[];
  /**
   * A hint for a read: few events in the store match (a handful of small streams, such as the
   * person keys), so an adapter may find them through its index of streams instead of reading the
   * store in order (SQLite does, for `readAll` with `streamPrefixes`): the cost is the events that
   * match, not the whole history. The events read are the same.
   */
  sparse?: boolean;
}>;

export type ReadAllOptions = Readonly<{
  /** Exclusive: return events strictly after this position. Omit to start at the beginning. */
  after?: bigint;
  maxCount?: number;
  filter?: EventFilter;
}>;

export type SubscribeOptions = Readonly<{
  /** Exclusive start: events strictly after this position; `'start'` for all, `'end'` for live only. */
  from: bigint | 'start' | 'end';
  filter?: EventFilter;
  /**
   * Called once per event, in global order, one at a time. The next event is not delivered until
   * the returned promise settles. A rejection stops the subscription (see `Subscription.done`).
   */
  onEvent: (event: RecordedEvent) => Promise<void>;
  /** Called once when the subscription switches from catch-up to live. */
  onCaughtUp?: (position: bigint | undefined) => void;
}>;

export type Subscription = Readonly<{
  /** Stops delivering; resolves after the event in hand (if any) has been handled. */
  stop(): Promise<void>;
  /** Settles when the subscription ends: resolves after `stop()`, rejects if `onEvent` threw. */
  done: Promise<void>;
}>;

export type EventStore = Readonly<{
  /** Which adapter this is (`sqlite`, `kurrentdb`), for logs and metrics. */
  kind: string;
  appendToStream(
    streamId: string,
    events: readonly NewEvent[],
    options?: AppendOptions,
  ): Promise<AppendResult>;
  /** Events of one stream; `[]` when the stream does not exist. */
  readStream(streamId: string, options?: ReadStreamOptions): Promise<RecordedEvent[]>;
  /** Revision of the stream's last event, or `undefined` when it has none. */
  streamRevision(streamId: string): Promise<number | undefined>;
  /** Events of every stream in global order. */
  readAll(options?: ReadAllOptions): Promise<RecordedEvent[]>;
  /** Position of the last event in the store, or `undefined` when it is empty. */
  headPosition(): Promise<bigint | undefined>;
  /** Names of streams, optionally by prefix, with their last revision. */
  listStreams(options?: Readonly<{ prefix?: string; limit?: number }>): Promise<StreamInfo[]>;
  /** Catch-up then live subscription; see SubscribeOptions. */
  subscribe(options: SubscribeOptions): Subscription;
  /** Last position a processor finished, or `undefined` if it never ran. */
  readCheckpoint(processorId: string): Promise<bigint | undefined>;
  /** Durably records that `processorId` finished everything up to and including `position`. */
  storeCheckpoint(processorId: string, position: bigint): Promise<void>;
  /**
   * Deletes a stream for good: its events can no longer be read (by `readStream`, `readAll` or a
   * subscription), and a later append starts it afresh at revision 0. For data that must become
   * unreadable (a person's data key, crypto-shredding: src/people/personKeys.ts), never for
   * business history. SQLite removes the rows with `secure_delete` on (the bytes are overwritten)
   * and truncates the WAL; KurrentDB deletes the stream (scavenging then removes the bytes; see
   * src/eventStore/kurrentdb/README.md). A stream that does not exist is a no-op.
   */
  deleteStream(streamId: string): Promise<void>;
  /** True while the store can take writes (for /readyz). */
  isOpen(): boolean;
  close(): Promise<void>;
}>;

export type StreamInfo = Readonly<{
  streamId: string;
  lastRevision: number;
  lastPosition: bigint;
  lastRecordedAt: Date;
}>;

/** The category of a stream id: the text before the first `-`. */
export const streamCategory = (streamId: string): string => {
  const dash = streamId.indexOf('-');
  return dash === -1 ? streamId : streamId.slice(0, dash);
};

/** True when an event passes a filter (used by adapters that filter in process). */
export const matchesFilter = (
  event: Pick<RecordedEvent, 'streamId' | 'type'>,
  filter: EventFilter | undefined,
): boolean => {
  if (!filter) return true;
  const { streamPrefixes, eventTypes } = filter;
  if (
    streamPrefixes &&
    streamPrefixes.length > 0 &&
    !streamPrefixes.some((p) => event.streamId.startsWith(p))
  ) {
    return false;
  }
  if (eventTypes && eventTypes.length > 0 && !eventTypes.includes(event.type)) return false;
  return true;
};

/** Renders an ExpectedRevision for messages and errors. */
export const describeExpected = (expected: ExpectedRevision): string =>
  typeof expected === 'number' ? String(expected) : expected;

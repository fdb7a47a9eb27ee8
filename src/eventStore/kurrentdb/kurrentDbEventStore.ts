import { randomUUID } from 'node:crypto';
import {
  ANY,
  BACKWARDS,
  END,
  excludeSystemEvents,
  type Filter,
  FORWARDS,
  KurrentDBClient,
  type ReadPosition,
  streamNameFilter,
} from '@kurrent/kurrentdb-client';
import { ChatOpsError, ConcurrencyError, hasCode, StoreUnavailableError } from '../../core/errors.ts';
import { type Logger, silentLogger } from '../../logger.ts';
import {
  type AppendOptions,
  type AppendResult,
  describeExpected,
  type EventStore,
  type NewEvent,
  type ReadAllOptions,
  type ReadStreamOptions,
  type RecordedEvent,
  type StreamInfo,
  type SubscribeOptions,
  type Subscription,
} from '../eventStore.ts';
import {
  acceptsEvent,
  CHECKPOINT_EVENT_TYPE,
  checkpointStreamId,
  type ErrorContext,
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
  toReadPosition,
  toReadStreamOptions,
  toServerFilter,
  toStreamState,
  translateError,
  type VendorResolvedEvent,
  validateAppend,
} from './mapping.ts';

export type KurrentDbEventStoreOptions = Readonly<{
  /** `kurrentdb://host:2113?tls=false`, `kurrentdb+discover://…`; `esdb://`/`eventstore://` accepted. */
  connectionString: string;
  /**
   * Bound on reaching the server (ms, default 5000): the first probe in
   * `createKurrentDbEventStore`, and a subscription's wait for the server's confirmation.
   */
  connectTimeoutMs?: number;
  /** Bound on any one read or write (ms, default 10000). Past it: StoreUnavailableError. */
  operationTimeoutMs?: number;
  /**
   * How many of a stream's latest events an append looks through for its own ids (default 100),
   * to report a retried append as deduplicated (see `appendToStream` below).
   */
  idempotencyWindow?: number;
  /** Page size for reads of `$all` (default 1000). */
  pageSize?: number;
  /** `listStreams` reads at most this many events of `$all`, newest first (default 100000). */
  listStreamsScanLimit?: number;
  /** Probe the server before resolving (default true); false gives a store that connects lazily. */
  verifyConnection?: boolean;
  logger?: Logger;
}>;

type Client = KurrentDBClient;

/** While the store is unreachable, the client is replaced at most this often (see renewClient). */
const CLIENT_RENEWAL_MS = 4000;

/** Collects an async iterable into an array; stops early (and closes it) once `signal` aborts. */
const collect = async <T>(iterable: AsyncIterable<T>, signal: AbortSignal): Promise<T[]> => {
  const out: T[] = [];
  for await (const item of iterable) {
    if (signal.aborted) break;
    out.push(item);
  }
  return out;
};

/** Races `work` against a timer; the loser's outcome is dropped (never an unhandled rejection). */
const withTimeout = <T>(work: Promise<T>, ms: number, onTimeout: () => Error): Promise<T> =>
  new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(onTimeout()), ms);
    work.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });

/** An `onEvent` rejection, kept apart from store errors so it ends the subscription as is. */
class HandlerFailure {
  readonly cause: unknown;
  constructor(cause: unknown) {
    this.cause = cause;
  }
}

/**
 * The event store on KurrentDB, for when one machine is not enough:
 * a 3-node cluster behind several bot replicas. Same port and contract suite as the SQLite adapter;
 * what differs, precisely:
 *
 * Appends and idempotency. KurrentDB dedupes a repeated event id only in narrow cases: an append
 * repeated with the same expected revision is acknowledged without writing (E1); with an expected
 * revision lower than the current one the server compares the ids from there on, all present
 * being a no-op (E2); with `any` there is no guarantee (E3), and the client docs promise dedup only
 * for appends "in quick succession", a recent-write window of unstated size (E4). See
 * https://github.com/EventStore/documentation/blob/master/docs/clients/dotnet/21.2/appending/optimistic-concurrency-and-idempotence.md So `appendToStream` first reads the stream's latest `idempotencyWindow`
 * events: if every id of the append is among them, nothing is written and the originals are
 * reported (`deduplicated: true`); if only some are, it is a ConcurrencyError, as in SQLite. Then
 * it appends with the expected revision mapped one to one. If the server acknowledges without
 * advancing the stream past what we read, its own idempotency matched (E2, ids further back than
 * the window): `deduplicated: true` with the originals read back. On WrongExpectedVersion the tail
 * is read again, and if the ids are now all there (a concurrent copy of this very append won) it
 * is reported as deduplicated; otherwise ConcurrencyError.
 * Guaranteed: a sequential retry of an append whose events are within the last
 * `idempotencyWindow` events of the stream writes nothing and reports `deduplicated: true` with
 * the original positions, whatever the expected revision; a retry with the original exact expected
 * revision (or `no_stream`) is deduplicated at any distance. Not guaranteed: (1) with `any` or
 * `stream_exists`, a retry whose originals lie further back than the window may be written again
 * (server dedup is best effort, E3); (2) two copies of one append racing each other with the same
 * exact expected revision are written once, but both may report `deduplicated: false`; (3) ids are
 * not checked across streams (SQLite rejects an id stored in another stream; KurrentDB has no
 * global id index). Event ids must be UUIDs (a KurrentDB rule).
 *
 * Positions. Our bigint position is the `$all` commit position (see mapping `toGlobalPosition`);
 * strictly increasing, with gaps. Reads resume at `{ commit: p, prepare: p }`.
 *
 * Ordering. Per stream: revisions 0, 1, 2… with no gaps. Globally: `readAll` and `subscribe`
 * deliver in `$all` (commit) order, which is the order the cluster leader committed appends.
 *
 * Timeouts. Every operation is bounded by `operationTimeoutMs`; past it, or when the server is
 * unreachable, it fails with StoreUnavailableError (SB_STORE_UNAVAILABLE). A timed-out append may
 * or may not have been stored: retrying it with the same event ids is safe (see above).
 *
 * @example
 * const store = await createKurrentDbEventStore({ connectionString: 'kurrentdb://localhost:2113?tls=false' });
 * await store.appendToStream('incident-P1', [{ id: newId(), type: 'IncidentTriggered', data: {} }]);
 */
export const createKurrentDbEventStore = async (options: KurrentDbEventStoreOptions): Promise<EventStore> => {
  const connectTimeoutMs = options.connectTimeoutMs ?? 5000;
  const operationTimeoutMs = options.operationTimeoutMs ?? 10_000;
  const idempotencyWindow = Math.max(1, options.idempotencyWindow ?? 100);
  const pageSize = Math.max(2, options.pageSize ?? 1000);
  const listStreamsScanLimit = options.listStreamsScanLimit ?? 100_000;
  const safeUrl = redactConnectionString(options.connectionString);
  const log = (options.logger ?? silentLogger()).child({ component: 'eventStore', store: 'kurrentdb' });

  const clientUrl = normalizeConnectionString(options.connectionString);
  let client: Client;
  try {
    client = KurrentDBClient.connectionString(clientUrl);
  } catch (e) {
    throw new ChatOpsError('SB_CONFIG', `EVENT_STORE_URL is not a KurrentDB connection string (${safeUrl})`, {
      cause: e,
    });
  }

  let open = true;
  let healthy = true;
  let probeTimer: NodeJS.Timeout | undefined;
  let clientSince = Date.now();
  const subscriptions = new Set<Subscription>();
  /** Processors whose checkpoint stream got `$maxCount: 1` in this process. */
  const truncatedCheckpointStreams = new Set<string>();

  const timeoutError = (what: string, ms: number) =>
    new StoreUnavailableError(
      `KurrentDB did not answer ${what} within ${ms} ms (${safeUrl})` +
        (what.startsWith('append')
          ? '; the append may or may not be stored, a retry with the same ids is safe'
          : ''),
      { details: { timeoutMs: ms } },
    );

  /** Any successful call proves the server is back; a failed one starts a background probe. */
  const markHealthy = () => {
    healthy = true;
    if (probeTimer) {
      clearInterval(probeTimer);
      probeTimer = undefined;
    }
  };
  /**
   * A new client in place of the current one, which finds the cluster again through the seeds.
   * The client's Rust bridge (every read goes through it) stays with the node it connected to:
   * when that node is gone for good (a leader that died, not one that stepped down and answers
   * NotLeader), its reads fail until the node comes back, while the seeds would name the new
   * leader at once (kurrentdb.fake.int.test.ts, "after the leader goes away"). Subscriptions on
   * the old client end with it and resubscribe from their position on the new one.
   */
  const renewClient = () => {
    if (!open || Date.now() - clientSince < CLIENT_RENEWAL_MS) return;
    const old = client;
    try {
      client = KurrentDBClient.connectionString(clientUrl);
    } catch (e) {
      log.warn({ err: e }, 'KurrentDB client could not be created again; keeping the current one');
      return;
    }
    clientSince = Date.now();
    log.info({ url: safeUrl }, 'KurrentDB client replaced to find the cluster again');
    void old.dispose().catch(() => undefined);
  };

  const markUnavailable = (err: unknown) => {
    if (!open) return;
    if (healthy) log.warn({ err }, 'KurrentDB unavailable');
    healthy = false;
    if (probeTimer) return;
    probeTimer = setInterval(() => {
      void probe(operationTimeoutMs).then(
        () => {
          if (!healthy) log.info({}, 'KurrentDB reachable again');
          markHealthy();
        },
        () => {
          if (!healthy) renewClient();
        },
      );
    }, 2000);
    probeTimer.unref();
  };

  const guardOpen = (what: string) => {
    if (!open) throw new StoreUnavailableError(`KurrentDB store is closed (cannot ${what})`);
  };

  /** Runs one bounded operation and translates whatever it throws into our coded errors. */
  const run = async <T>(
    context: ErrorContext,
    work: (signal: AbortSignal) => Promise<T>,
    timeoutMs = operationTimeoutMs,
  ): Promise<T> => {
    guardOpen(context.operation);
    const abort = new AbortController();
    try {
      const result = await withTimeout(work(abort.signal), timeoutMs, () => {
        abort.abort();
        return timeoutError(context.operation, timeoutMs);
      });
      markHealthy();
      return result;
    } catch (e) {
      const error = translateError(e, context);
      if (hasCode(error, 'SB_STORE_UNAVAILABLE')) markUnavailable(error);
      throw error;
    }
  };

  // -- raw reads (inside `run`) ----------------------------------------------------------------

  const readStreamRaw = async (
    streamId: string,
    opts: ReadStreamOptions,
    signal: AbortSignal,
  ): Promise<RecordedEvent[]> => {
    const vendor = toReadStreamOptions(opts);
    if (vendor.maxCount === 0) return [];
    try {
      const resolved = await collect(
        client.readStream(streamId, {
          direction: vendor.direction === 'backwards' ? BACKWARDS : FORWARDS,
          fromRevision: vendor.fromRevision,
          ...(vendor.maxCount !== undefined ? { maxCount: vendor.maxCount } : {}),
        }),
        signal,
      );
      return resolved.flatMap((r) => fromResolvedEvent(r as VendorResolvedEvent) ?? []);
    } catch (e) {
      if (isStreamNotFound(e)) return [];
      throw e;
    }
  };

  /** Newest first. */
  const readTail = (streamId: string, count: number, signal: AbortSignal) =>
    readStreamRaw(streamId, { direction: 'backwards', maxCount: count }, signal);

  const readAllPage = async (
    from: ReadPosition,
    direction: typeof FORWARDS | typeof BACKWARDS,
    maxCount: number,
    filter: Filter,
    signal: AbortSignal,
  ): Promise<RecordedEvent[]> => {
    const resolved = await collect(
      client.readAll({ fromPosition: from, direction, maxCount, filter }),
      signal,
    );
    return resolved.flatMap((r) => fromResolvedEvent(r as VendorResolvedEvent) ?? []);
  };

  /** Position of the newest event a port reader can see (server filter drops `$` types). */
  const headPositionRaw = async (signal: AbortSignal): Promise<bigint | undefined> => {
    let before: bigint | undefined;
    for (;;) {
      const page = await readAllPage(
        toBackwardsReadPosition(before),
        BACKWARDS,
        64,
        excludeSystemEvents(),
        signal,
      );
      const visible = page.find((e) => !isInternalEvent(e));
      if (visible) return visible.position;
      const last = page.at(-1);
      if (page.length < 64 || last === undefined || signal.aborted) return undefined;
      before = last.position;
    }
  };

  const probe = (timeoutMs: number) =>
    withTimeout(
      collect(
        client.readAll({ fromPosition: END, direction: BACKWARDS, maxCount: 1 }),
        new AbortController().signal,
      ),
      timeoutMs,
      () => timeoutError('a connection probe', timeoutMs),
    );

  // -- appends -----------------------------------------------------------------------------------

  /** The stored events among `tail` whose ids this append carries (ids compare case-blind). */
  const matchIds = (
    tail: readonly RecordedEvent[],
    events: readonly NewEvent[],
  ): { found: RecordedEvent[] } => {
    const byId = new Map(tail.map((e) => [e.id.toLowerCase(), e]));
    return { found: events.flatMap((e) => byId.get(e.id.toLowerCase()) ?? []) };
  };
  const lastOf = (events: readonly RecordedEvent[]): RecordedEvent =>
    events.reduce((a, b) => (b.position > a.position ? b : a));

  const appendRaw = async (
    streamId: string,
    events: readonly NewEvent[],
    opts: AppendOptions,
    signal: AbortSignal,
  ): Promise<AppendResult> => {
    const expected = opts.expectedRevision ?? 'any';
    const streamState = toStreamState(expected);
    const window = Math.max(idempotencyWindow, events.length);
    const tail = await readTail(streamId, window, signal);
    const current = tail[0]?.revision;

    const deduplicated = (found: readonly RecordedEvent[], revision: number | undefined): AppendResult => ({
      nextExpectedRevision: revision ?? lastOf(found).revision,
      position: lastOf(found).position,
      deduplicated: true,
    });
    const partial = (revision: number | undefined) =>
      new ConcurrencyError(streamId, describeExpected(expected), String(revision ?? 'no_stream'), {
        cause: new Error('some but not all event ids of this append are already stored'),
      });

    const before = matchIds(tail, events);
    if (events.length > 0 && before.found.length === events.length)
      return deduplicated(before.found, current);
    if (before.found.length > 0) throw partial(current);

    if (events.length === 0) {
      // Nothing to write: answer from what we read, as the SQLite adapter does.
      if (!satisfiesExpected(expected, current)) {
        throw new ConcurrencyError(streamId, describeExpected(expected), String(current ?? 'no_stream'));
      }
      return { nextExpectedRevision: current ?? -1, position: tail[0]?.position ?? 0n, deduplicated: false };
    }

    let result: Awaited<ReturnType<Client['appendToStream']>>;
    try {
      result = await client.appendToStream(streamId, events.map(toEventData), {
        streamState,
        deadline: operationTimeoutMs,
      });
    } catch (e) {
      if (!isWrongExpectedVersion(e)) throw e;
      // The stream moved between our read and our write. If what moved it is this very append
      // (a concurrent copy of it), the caller's intent is stored: report it as a retry.
      const again = await readTail(streamId, window, signal);
      const after = matchIds(again, events);
      if (after.found.length === events.length) return deduplicated(after.found, again[0]?.revision);
      throw translateError(e, { operation: 'append', streamId, expected });
    }

    const next = Number(result.nextExpectedRevision);
    const first = next - events.length + 1;
    if (current !== undefined && next <= current) {
      // Acknowledged without advancing: the server's own idempotency found these ids (E2).
      const originals = await readStreamRaw(
        streamId,
        { fromRevision: Math.max(0, first), maxCount: events.length },
        signal,
      );
      const match = matchIds(originals, events);
      if (match.found.length === events.length) return deduplicated(match.found, current);
      throw partial(current);
    }
    let position = result.position ? result.position.commit : undefined;
    if (position === undefined) {
      // Old servers answer without a position: take it from the event we just wrote.
      const [written] = await readStreamRaw(streamId, { fromRevision: next, maxCount: 1 }, signal);
      position = written?.position ?? 0n;
    }
    return { nextExpectedRevision: next, position, deduplicated: false };
  };

  // -- subscriptions -----------------------------------------------------------------------------

  const subscribe = (subOptions: SubscribeOptions): Subscription => {
    // On a closed store, as in SQLite: a subscription that delivers nothing and is done at once.
    let stopped = false;
    let current: ReturnType<Client['subscribeToAll']> | undefined;
    let wake: (() => void) | undefined;
    let caughtUpFired = false;
    const sleep = (ms: number) =>
      new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          wake = undefined;
          resolve();
        }, ms);
        wake = () => {
          clearTimeout(timer);
          wake = undefined;
          resolve();
        };
      });

    /**
     * One `subscribeToAll` from `after` (exclusive). Returns when stopped; throws on a dropped
     * subscription (store error) or HandlerFailure. Events go to `onEvent` one at a time: the
     * async iterator pulls the next only after the handler settled, and the client's stream then
     * applies backpressure all the way to the gRPC call.
     */
    const consume = async (state: {
      after: bigint | undefined;
      lastDelivered: bigint | undefined;
      attempt: number;
    }) => {
      const sub = client.subscribeToAll({
        fromPosition: toReadPosition(state.after),
        filter: toServerFilter(subOptions.filter),
      });
      current = sub;
      let received = 0;
      let handled = 0;
      let caughtUpAt: number | undefined;
      let failure: unknown;
      const fireCaughtUp = () => {
        if (caughtUpFired || caughtUpAt === undefined || handled < caughtUpAt || failure !== undefined)
          return;
        caughtUpFired = true;
        try {
          subOptions.onCaughtUp?.(state.lastDelivered ?? state.after);
        } catch (e) {
          failure = new HandlerFailure(e);
          sub.destroy();
        }
      };
      let confirmed = false;
      sub.on('confirmation', () => {
        confirmed = true;
        state.attempt = 0;
        markHealthy();
      });
      // 'caughtUp' is emitted while the client's transform stream parses the server's message, by
      // which time the events before it have been pushed but maybe not yet pulled by us: those
      // still buffered are `readableLength`. onCaughtUp waits until they are handled too.
      sub.on('caughtUp', () => {
        if (caughtUpFired || caughtUpAt !== undefined) return;
        caughtUpAt = received + sub.readableLength;
        fireCaughtUp();
      });
      const watchdog = setTimeout(() => {
        if (!confirmed) {
          sub.destroy(
            new StoreUnavailableError(
              `KurrentDB did not confirm a subscription within ${connectTimeoutMs} ms`,
            ),
          );
        }
      }, connectTimeoutMs);
      try {
        for await (const resolved of sub as AsyncIterable<VendorResolvedEvent>) {
          received += 1;
          if (stopped) break;
          const event = fromResolvedEvent(resolved);
          if (event && isAfter(event.position, state.after)) {
            state.after = event.position;
            if (acceptsEvent(event, subOptions.filter)) {
              try {
                await subOptions.onEvent(event);
              } catch (e) {
                throw new HandlerFailure(e);
              }
              state.lastDelivered = event.position;
            }
          }
          handled += 1;
          fireCaughtUp();
          if (failure !== undefined) throw failure;
        }
      } catch (e) {
        if (failure !== undefined) throw failure;
        if (stopped && !(e instanceof HandlerFailure)) return;
        throw e;
      } finally {
        clearTimeout(watchdog);
        current = undefined;
        sub.removeAllListeners('caughtUp');
        sub.removeAllListeners('confirmation');
        await sub.unsubscribe().catch(() => undefined);
      }
      if (failure !== undefined) throw failure;
      if (!stopped) throw new StoreUnavailableError('KurrentDB ended the subscription');
    };

    const loop = async (): Promise<void> => {
      const state = {
        after: undefined as bigint | undefined,
        lastDelivered: undefined as bigint | undefined,
        attempt: 0,
      };
      let resolvedStart = subOptions.from !== 'end';
      if (typeof subOptions.from === 'bigint')
        state.after = subOptions.from > 0n ? subOptions.from : undefined;
      while (!stopped && open) {
        try {
          if (!resolvedStart) {
            // 'end' means "after the newest event now", resolved once so a resubscription after a
            // dropped connection does not skip what was appended meanwhile.
            state.after = await run({ operation: 'subscribe (find the end of $all)' }, headPositionRaw);
            resolvedStart = true;
          }
          await consume(state);
          return;
        } catch (e) {
          if (e instanceof HandlerFailure) throw e.cause;
          if (stopped || !open) return;
          const error = translateError(e, { operation: 'subscribe' });
          if (!hasCode(error, 'SB_STORE_UNAVAILABLE')) throw error;
          markUnavailable(error);
          const delay = Math.min(5000, 200 * 2 ** state.attempt);
          state.attempt += 1;
          log.warn(
            { err: error, attempt: state.attempt, retryInMs: delay },
            'KurrentDB subscription dropped; resubscribing',
          );
          await sleep(delay);
        }
      }
    };

    const done = loop();
    const subscription: Subscription = {
      stop: async () => {
        stopped = true;
        wake?.();
        await current?.unsubscribe().catch(() => undefined);
        subscriptions.delete(subscription);
        await done.catch(() => undefined);
      },
      done,
    };
    subscriptions.add(subscription);
    void done.then(
      () => subscriptions.delete(subscription),
      () => subscriptions.delete(subscription),
    );
    return subscription;
  };

  // -- the port ----------------------------------------------------------------------------------

  const store: EventStore = {
    kind: 'kurrentdb',

    async appendToStream(streamId, events, opts = {}) {
      validateAppend(streamId, events);
      return run(
        {
          operation: 'append',
          streamId,
          ...(opts.expectedRevision !== undefined ? { expected: opts.expectedRevision } : {}),
        },
        (signal) => appendRaw(streamId, events, opts, signal),
      );
    },

    readStream(streamId, opts = {}) {
      return run({ operation: 'read stream', streamId }, (signal) => readStreamRaw(streamId, opts, signal));
    },

    streamRevision(streamId) {
      return run({ operation: 'read stream revision', streamId }, async (signal) => {
        const [last] = await readTail(streamId, 1, signal);
        return last?.revision;
      });
    },

    readAll(opts: ReadAllOptions = {}) {
      return run({ operation: 'read $all' }, async (signal) => {
        const want = opts.maxCount ?? Number.POSITIVE_INFINITY;
        const out: RecordedEvent[] = [];
        if (want <= 0) return out;
        const filter = toServerFilter(opts.filter);
        let after = opts.after;
        for (;;) {
          // One more than still wanted: the read includes the event at `after`, which we skip.
          const size = Math.max(2, Math.min(pageSize, want - out.length + 1));
          const page = await readAllPage(toReadPosition(after), FORWARDS, size, filter, signal);
          let last: bigint | undefined;
          for (const event of page) {
            // $all reads include the event at the start position; our `after` is exclusive.
            if (!isAfter(event.position, after)) continue;
            last = event.position;
            if (!acceptsEvent(event, opts.filter)) continue;
            out.push(event);
            if (out.length >= want) return out;
          }
          if (page.length < size || last === undefined || signal.aborted) return out;
          after = last;
        }
      });
    },

    headPosition() {
      return run({ operation: 'read the head of $all' }, headPositionRaw);
    },

    /**
     * Best effort, and not cheap: KurrentDB keeps no table of streams we can query without the
     * `$streams` system projection (off by default, and it lists streams, not their last
     * revisions). So this reads `$all` backwards, filtered on the prefix by the server, and keeps
     * the first (newest) event of each stream, until `limit` streams are found or
     * `listStreamsScanLimit` events were read. Cost grows with the events written since the
     * oldest stream returned; a stream last written further back than the scan limit is missed.
     */
    listStreams(opts: { prefix?: string; limit?: number } = {}) {
      return run({ operation: 'list streams' }, async (signal) => {
        const limit = opts.limit ?? 1000;
        const found = new Map<string, StreamInfo>();
        if (limit <= 0) return [];
        const filter = opts.prefix ? streamNameFilter({ prefixes: [opts.prefix] }) : excludeSystemEvents();
        let before: bigint | undefined;
        let scanned = 0;
        while (found.size < limit && scanned < listStreamsScanLimit) {
          const page = await readAllPage(
            toBackwardsReadPosition(before),
            BACKWARDS,
            pageSize,
            filter,
            signal,
          );
          for (const e of page) {
            if (found.size >= limit) break;
            if (isInternalEvent(e) || found.has(e.streamId)) continue;
            if (opts.prefix && !e.streamId.startsWith(opts.prefix)) continue;
            found.set(e.streamId, {
              streamId: e.streamId,
              lastRevision: e.revision,
              lastPosition: e.position,
              lastRecordedAt: e.recordedAt,
            });
          }
          scanned += page.length;
          const last = page.at(-1);
          if (page.length < pageSize || last === undefined || signal.aborted) break;
          before = last.position;
        }
        return [...found.values()];
      });
    },

    subscribe,

    async readCheckpoint(processorId) {
      const streamId = checkpointStreamId(processorId);
      return run({ operation: 'read checkpoint', streamId }, async (signal) => {
        const [last] = await readTail(streamId, 1, signal);
        return last === undefined ? undefined : fromCheckpointData(last.data, streamId);
      });
    },

    async storeCheckpoint(processorId, position) {
      const streamId = checkpointStreamId(processorId);
      const data = toCheckpointData(processorId, position);
      return run({ operation: 'store checkpoint', streamId }, async () => {
        if (!truncatedCheckpointStreams.has(streamId)) {
          // Only the latest checkpoint matters; `$maxCount: 1` lets scavenging drop the rest.
          try {
            await client.setStreamMetadata(streamId, { maxCount: 1 }, { deadline: operationTimeoutMs });
          } catch (e) {
            const error = translateError(e, { operation: 'set checkpoint stream metadata', streamId });
            if (!hasCode(error, 'SB_CONFIG')) throw e;
            log.warn({ err: error, streamId }, 'cannot set $maxCount on a checkpoint stream; it will grow');
          }
          truncatedCheckpointStreams.add(streamId);
        }
        await client.appendToStream(
          streamId,
          {
            id: randomUUID(),
            contentType: 'application/json',
            type: CHECKPOINT_EVENT_TYPE,
            data,
            metadata: undefined,
          },
          { streamState: ANY, deadline: operationTimeoutMs },
        );
      });
    },

    /**
     * A (soft) delete: the stream reads as absent at once and may be written again (a person who
     * verifies a phone again gets a new key); the bytes go at the next scavenge, so run scavenges
     * (README.md). Not a tombstone, which would forbid the stream for ever.
     */
    deleteStream(streamId) {
      return run({ operation: 'delete stream', streamId }, async () => {
        try {
          await client.deleteStream(streamId, { deadline: operationTimeoutMs });
        } catch (e) {
          // Deleting a stream that does not exist (or is already deleted) is a no-op.
          if (e instanceof Error && /not ?found|StreamNotFound|StreamDeleted/i.test(`${e.name} ${e.message}`))
            return;
          throw e;
        }
      });
    },

    isOpen: () => open && healthy,

    async close() {
      if (!open) return;
      for (const s of [...subscriptions]) await s.stop();
      open = false;
      if (probeTimer) clearInterval(probeTimer);
      probeTimer = undefined;
      await client.dispose();
    },
  };

  if (options.verifyConnection ?? true) {
    try {
      await run({ operation: 'connect' }, () => probe(connectTimeoutMs), connectTimeoutMs);
    } catch (e) {
      open = false;
      if (probeTimer) clearInterval(probeTimer);
      await client.dispose().catch(() => undefined);
      if (hasCode(e, 'SB_STORE_UNAVAILABLE')) {
        throw new StoreUnavailableError(`cannot reach KurrentDB at ${safeUrl}: ${e.message}`, { cause: e });
      }
      throw e;
    }
    log.info({ url: safeUrl }, 'KurrentDB event store connected');
  }
  return store;
};

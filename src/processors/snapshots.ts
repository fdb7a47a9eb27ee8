import { gunzipSync, gzipSync } from 'node:zlib';
import { asError } from '../core/errors.ts';
import { uuidv5 } from '../core/ids.ts';
import type { JsonObject } from '../core/messages.ts';
import type { EventFilter, EventStore, RecordedEvent } from '../eventStore/eventStore.ts';
import type { Processor, ProcessorLifecycleContext } from './runner.ts';

/**
 * Read models (and the scheduler's pending timers) that resume: their in-memory state is kept as a
 * snapshot with the position it covers, so a start reads only what happened since.
 *
 * Where snapshots live: as events, `ReadModelSnapshot` in stream `snapshot-<name>`, through the
 * store port. One mechanism for both adapters, covered by the store contract (append, last event of
 * a stream), nothing to migrate, and a replica on another machine finds them (a local cache beside
 * a KurrentDB deployment would not survive a pod being rescheduled). The price is that old
 * snapshots stay in the store: the state is gzipped (about 30 bytes per incident), a snapshot is
 * taken while live after `snapshotEvery` applied events or one per 32 bytes of the last snapshot,
 * whichever is more, on catching up after a long read and on a graceful stop (docs/operations.md
 * has the sizes, and how to cap the streams on KurrentDB).
 *
 * The snapshot's `position` is a promise: every event the filter takes at or below it is in the
 * state. It is the larger of the last applied event and the store head read before a final catch-up,
 * so a read model whose events are rare does not re-scan the history after it.
 *
 * Versioned: `version` is the shape of the state and of `apply`. Bump it when either changes; a
 * start that finds a snapshot of another version ignores it and rebuilds from zero (and writes a new
 * one when caught up). `npm run events -- rebuild <name>` rebuilds one from zero on demand.
 *
 * Read-your-writes stays: `catchUp()` applies whatever the store has past the last applied event;
 * the processor's deliveries and `catchUp()` skip anything at or below it, so both may run.
 */
export const SNAPSHOT_STREAM_PREFIX = 'snapshot-';
export const SNAPSHOT_EVENT_TYPE = 'ReadModelSnapshot';
export const snapshotStreamId = (name: string): string => `${SNAPSHOT_STREAM_PREFIX}${name}`;

/** Data of `ReadModelSnapshot` in stream `snapshot-<name>`. */
export type ReadModelSnapshotData = Readonly<{
  readModel: string;
  version: number;
  /** Decimal global position the state covers (every matching event at or below it). */
  position: string;
  /** `gzip+base64`: `state` is the state's JSON, gzipped, in base64. */
  encoding: 'gzip+base64';
  state: string;
  /** Events applied into this state since it was last built from zero (for operators). */
  applied: number;
  takenAt: string;
}>;

export type Snapshot = Readonly<{
  version: number;
  position: bigint;
  state: unknown;
  applied: number;
  takenAt: string;
}>;

/** The newest snapshot of a read model, whatever its version; undefined when it has none. */
export const readSnapshot = async (store: EventStore, name: string): Promise<Snapshot | undefined> => {
  const [last] = await store.readStream(snapshotStreamId(name), { direction: 'backwards', maxCount: 1 });
  if (!last || last.type !== SNAPSHOT_EVENT_TYPE) return undefined;
  const d = last.data as unknown as ReadModelSnapshotData;
  return {
    version: d.version,
    position: BigInt(d.position),
    state: JSON.parse(gunzipSync(Buffer.from(d.state, 'base64')).toString('utf8')) as unknown,
    applied: d.applied,
    takenAt: d.takenAt,
  };
};

/** Appends a snapshot (deduplicated by name, version and position). */
export const writeSnapshot = async (
  store: EventStore,
  name: string,
  snapshot: Readonly<{ version: number; position: bigint; state: unknown; applied: number; now: Date }>,
): Promise<{ bytes: number }> => {
  const state = gzipSync(JSON.stringify(snapshot.state)).toString('base64');
  const data: ReadModelSnapshotData = {
    readModel: name,
    version: snapshot.version,
    position: snapshot.position.toString(),
    encoding: 'gzip+base64',
    state,
    applied: snapshot.applied,
    takenAt: snapshot.now.toISOString(),
  };
  await store.appendToStream(snapshotStreamId(name), [
    {
      id: uuidv5(`snapshot:${name}:${snapshot.version}:${snapshot.position}`),
      type: SNAPSHOT_EVENT_TYPE,
      data: data as unknown as JsonObject,
    },
  ]);
  return { bytes: state.length };
};

export type ResumableStateOptions = Readonly<{
  /** The read model's name: its processor id and its snapshot stream (`snapshot-<name>`). */
  name: string;
  /** Version of the state's shape and of `apply`: bump it to rebuild from zero on the next start. */
  version: number;
  filter: EventFilter;
  /** For `catchUp()` before the processor starts; the processor's store is used once it has. */
  store?: EventStore;
  /** Applies one event (called once per event, in order, never for one already applied). */
  apply(event: RecordedEvent): void;
  /** The state as JSON (bigints as strings), taken synchronously. */
  save(): unknown;
  /** Replaces the (just reset) state with a snapshot's. */
  load(state: unknown): void;
  /** Empties the state. */
  reset(): void;
  /**
   * Snapshot after this many events applied while live (default 10,000), or after one event per 32
   * bytes of the last snapshot when that is more (a large state is written less often).
   */
  snapshotEvery?: number;
  /** A catch-up at start that applied at least this many events is snapshotted at once (default 1,000). */
  snapshotAfterCatchUp?: number;
  now?: () => Date;
}>;

export type ResumableState = Readonly<{
  /** Applies every matching event the store holds past the last applied one. */
  catchUp(): Promise<void>;
  /** The processor's delivery: applies the event unless already applied; may snapshot. */
  handle(event: RecordedEvent): Promise<void>;
  /** Resets the state, loads the newest snapshot of this version, and returns its position. */
  restore(ctx: Pick<ProcessorLifecycleContext, 'store' | 'logger'>): Promise<bigint | undefined>;
  /** The processor went live: snapshot if the catch-up was long. */
  caughtUp(): void;
  /** Graceful stop: snapshot what changed since the last one. */
  stop(): Promise<void>;
  /**
   * Empties the state, reads every matching event of `store` from the first, and writes a snapshot
   * of the result (`npm run events -- rebuild <name>`).
   */
  rebuild(store: EventStore): Promise<{ position: bigint | undefined; bytes: number; applied: number }>;
  /** Catches up and writes a snapshot now. */
  snapshot(): Promise<{ position: bigint | undefined; bytes: number } | undefined>;
  /** Position of the last applied event (or of the snapshot loaded). */
  applied(): bigint | undefined;
  /** Events applied since this state was last reset (for tests and logs). */
  appliedSinceStart(): number;
}>;

export const createResumableState = (options: ResumableStateOptions): ResumableState => {
  const { name, version, filter } = options;
  const every = options.snapshotEvery ?? 10_000;
  const afterCatchUp = options.snapshotAfterCatchUp ?? 1_000;
  const now = options.now ?? (() => new Date());
  let store = options.store;
  let logger: ProcessorLifecycleContext['logger'] | undefined;
  let applied: bigint | undefined;
  /** Events applied into the state since it was built from zero (carried in snapshots). */
  let total = 0;
  let sinceStart = 0;
  let sinceSnapshot = 0;
  let snapshotAt: bigint | undefined;
  let live = false;
  let background: Promise<void> = Promise.resolve();
  let interval = every;
  /** Restore, catch-ups and snapshots run one after another. */
  let chain: Promise<unknown> = Promise.resolve();
  const serial = <T>(run: () => Promise<T>): Promise<T> => {
    const next = chain.then(run, run);
    chain = next.catch(() => undefined);
    return next;
  };

  const applyOne = (event: RecordedEvent): void => {
    if (applied !== undefined && event.position <= applied) return;
    applied = event.position;
    options.apply(event);
    total += 1;
    sinceStart += 1;
    sinceSnapshot += 1;
  };

  const readPastApplied = async (): Promise<void> => {
    if (!store) return;
    for (;;) {
      const page = await store.readAll({
        ...(applied === undefined ? {} : { after: applied }),
        filter,
        maxCount: 1_000,
      });
      for (const e of page) applyOne(e);
      if (page.length < 1_000) return;
    }
  };

  const takeSnapshot = async (): Promise<{ position: bigint | undefined; bytes: number } | undefined> => {
    if (!store) return undefined;
    const s = store;
    const head = await s.headPosition();
    await readPastApplied();
    // Synchronously with the state: everything matching at or below both is in it.
    const position = applied === undefined || (head !== undefined && head > applied) ? head : applied;
    if (position === undefined) return { position, bytes: 0 };
    const state = options.save();
    const count = total;
    sinceSnapshot = 0;
    snapshotAt = position;
    const { bytes } = await writeSnapshot(s, name, { version, position, state, applied: count, now: now() });
    // A bigger state is snapshotted less often: about one snapshot byte per 32 events applied, so
    // snapshots stay a small part of the store however large the state grows.
    interval = Math.max(every, Math.ceil(bytes / 32));
    logger?.info({ readModel: name, position: Number(position), bytes }, 'read model snapshot written');
    return { position, bytes };
  };

  const snapshotQuietly = async (): Promise<void> => {
    try {
      await serial(takeSnapshot);
    } catch (error) {
      // The state in memory is fine; the next start reads a little more.
      logger?.warn({ err: asError(error), readModel: name }, 'read model snapshot failed');
    }
  };

  /**
   * True when the store has moved on far past the snapshot (events this read model does not take):
   * a new snapshot moves the start past them, so a read model whose events are rare does not scan
   * them again.
   */
  const farBehindHead = async (): Promise<boolean> => {
    const head = await store?.headPosition().catch(() => undefined);
    return head !== undefined && (snapshotAt === undefined || head - snapshotAt > BigInt(afterCatchUp));
  };

  const clear = (): void => {
    live = false;
    options.reset();
    applied = undefined;
    total = 0;
    sinceStart = 0;
    sinceSnapshot = 0;
    snapshotAt = undefined;
  };

  return {
    catchUp: () => serial(readPastApplied),

    rebuild: (target) =>
      serial(async () => {
        store = target;
        clear();
        const written = await takeSnapshot();
        return { position: written?.position, bytes: written?.bytes ?? 0, applied: total };
      }),

    async handle(event) {
      applyOne(event);
      if (live && sinceSnapshot >= interval) await snapshotQuietly();
    },

    restore: (ctx) =>
      serial(async () => {
        store = ctx.store;
        logger = ctx.logger;
        clear();
        let snapshot: Snapshot | undefined;
        try {
          snapshot = await readSnapshot(ctx.store, name);
        } catch (error) {
          ctx.logger.warn(
            { err: asError(error), readModel: name },
            'unreadable snapshot; rebuilding from zero',
          );
        }
        if (snapshot && snapshot.version !== version) {
          ctx.logger.info(
            { readModel: name, snapshotVersion: snapshot.version, version },
            'snapshot of another version; rebuilding from zero',
          );
          snapshot = undefined;
        }
        if (!snapshot) return undefined;
        try {
          options.load(snapshot.state);
        } catch (error) {
          // A state this code cannot read (its version should have been bumped): start from zero.
          ctx.logger.warn(
            { err: asError(error), readModel: name },
            'unreadable snapshot; rebuilding from zero',
          );
          options.reset();
          return undefined;
        }
        applied = snapshot.position;
        total = snapshot.applied;
        snapshotAt = snapshot.position;
        ctx.logger.info(
          { readModel: name, position: Number(snapshot.position), takenAt: snapshot.takenAt },
          'read model restored from snapshot',
        );
        return snapshot.position;
      }),

    caughtUp() {
      live = true;
      background = (async () => {
        if (snapshotAt === undefined || sinceSnapshot >= afterCatchUp || (await farBehindHead())) {
          await snapshotQuietly();
        }
      })();
    },

    async stop() {
      live = false;
      // A snapshot started on catching up finishes first (the store closes after the processors).
      await background;
      if (sinceSnapshot > 0 || (await farBehindHead())) await snapshotQuietly();
    },

    snapshot: () => serial(takeSnapshot),
    applied: () => applied,
    appliedSinceStart: () => sinceStart,
  };
};

/**
 * A read model that resumes from snapshots, as the module that owns it registers it (a lifecycle's
 * module, `readModels`; the kernel's scheduler, SCHEDULER_READ_MODEL; all of them gathered by
 * `loadReadModels()` in src/lifecycleList.ts): its name (processor id and snapshot stream) and how to build a bare instance over a store, nothing dispatched and nothing
 * running, whose `rebuild()` folds every matching event from the first and writes a snapshot
 * (`npm run events -- rebuild <name>` reads the registrations).
 *
 * @example
 * export const TIME_OFF_READ_MODEL: ReadModelRegistration = {
 *   name: TIME_OFF_READ_MODEL_ID,
 *   create: (store) => createTimeOffReadModel({ store }).resumable,
 * };
 */
export type ReadModelRegistration = Readonly<{ name: string; create(store: EventStore): ResumableState }>;

/**
 * The processor of a read model kept by `resumable`: resumed from its snapshots, and run on every
 * replica (each answers the queries it takes, read-your-writes included).
 */
export const readModelProcessor = (
  id: string,
  filter: EventFilter,
  resumable: ResumableState,
): Processor => ({
  id,
  filter,
  resumeFrom: 'snapshot',
  everyReplica: true,
  restore: resumable.restore,
  handle: resumable.handle,
  onCaughtUp: resumable.caughtUp,
  onStop: resumable.stop,
});

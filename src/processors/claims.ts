import type { Clock } from '../core/clock.ts';
import { ConcurrencyError } from '../core/errors.ts';
import { newId } from '../core/ids.ts';
import type { JsonObject } from '../core/messages.ts';
import type { EventStore, RecordedEvent } from '../eventStore/eventStore.ts';

/**
 * Claims: which replica runs an effectful processor, kept in the store itself so that any number of
 * replicas on one store (SQLite file or KurrentDB) run each such processor once at a time. The same
 * idea as Axon's tracking tokens (owner, expiry, renewal, takeover after expiry), through the
 * EventStore port only:
 *
 * - **Ownership** is the stream `processor-claim-<processorId>`: `ProcessorClaimed { owner }` and
 *   `ProcessorClaimReleased { owner }`, each appended with `expectedRevision` = the revision read
 *   just before. Two replicas racing for one processor: one append wins, the other gets a
 *   ConcurrencyError and leaves it. Ownership changes are rare (start, takeover, stop), so these
 *   streams stay short and are the history of who ran what.
 * - **Liveness** is one lease per replica, renewed every `expiryMs / 3`: the checkpoint
 *   `replica-lease:<replicaId>` holds the time (ms since the epoch, by the replica's clock) until
 *   which its claims hold. A renewal is a last-writer-wins value, not history: a checkpoint (a row
 *   in SQLite, a `$maxCount: 1` stream in KurrentDB) does not grow with time as renewal events would
 *   (a few processors renewed every 5 s would add ~100,000 events a day).
 * - **Takeover**: a replica may claim a processor whose owner's lease is older than its own clock
 *   (or that was released). It appends `ProcessorClaimed` against the revision it read, so it also
 *   fences out an owner that comes back: that owner re-acquires through the same compare-and-set.
 * - **Self-fencing**: the holder treats its claims as valid until `expiryMs * 2/3` after the start
 *   of its last successful renewal, by a monotonic clock (a paused or starved process sees the
 *   pause). Past that it starts no new event and stops the processors (without storing their
 *   checkpoints); it takes them back only through a new `ProcessorClaimed`.
 *
 * The window: another replica can take over no earlier than `expiryMs` after the holder's last
 * renewal (by the taker's clock), and the holder starts no event later than `expiryMs * 2/3` after
 * it (by its own). So with clock skew under `expiryMs / 3`, the only work that can overlap is the
 * event each processor of a paused holder had in hand when the pause began (its handler resumes and
 * finishes that one call); it is idempotent by key like any redelivery.
 *
 * A replica id must be unique among running replicas (a restart keeps it, and then takes its own
 * claims back at once instead of waiting for the expiry).
 */

export const CLAIM_STREAM_PREFIX = 'processor-claim-';
export const claimStreamId = (processorId: string): string => `${CLAIM_STREAM_PREFIX}${processorId}`;
export const leaseKey = (replicaId: string): string => `replica-lease:${replicaId}`;

export const DEFAULT_CLAIM_EXPIRY_MS = 15_000;

export type ProcessorClaimedData = Readonly<{
  processorId: string;
  owner: string;
  previousOwner: string | null;
  claimedAt: string;
}>;

export type ProcessorClaimReleasedData = Readonly<{ processorId: string; owner: string; releasedAt: string }>;

/** Who holds a processor, as its claim stream says. */
export type ClaimRecord = Readonly<{
  /** The owner's replica id; undefined when never claimed or released. */
  owner: string | undefined;
  /** Revision of the claim stream's last event (undefined: no stream). */
  revision: number | undefined;
}>;

export type ClaimsOptions = Readonly<{
  store: EventStore;
  /** For lease expiry times (stored, compared across replicas). */
  clock: Clock;
  replicaId: string;
  /** How long a lease holds without renewal (default 15 s). */
  expiryMs?: number;
  /** Monotonic ms for self-fencing (default `performance.now`); tests pass their own. */
  monotonicNow?: () => number;
}>;

export type Claims = Readonly<{
  replicaId: string;
  expiryMs: number;
  /** How often the runner renews (expiryMs / 3). */
  renewEveryMs: number;
  /** Writes this replica's lease. True when stored (validity extended). */
  renew(): Promise<boolean>;
  /** True while this replica's claims hold by its own monotonic clock. */
  valid(): boolean;
  read(processorId: string): Promise<ClaimRecord>;
  /**
   * Claims a processor with a new `ProcessorClaimed` when it is free: never claimed, released, held
   * by this replica id (a previous run of it), or held by a replica whose lease has expired.
   * False when another live replica holds it or won the race.
   */
  acquire(processorId: string): Promise<boolean>;
  /** Appends `ProcessorClaimReleased` when this replica still owns it (graceful stop). */
  release(processorId: string): Promise<void>;
}>;

const lastEvent = async (store: EventStore, streamId: string): Promise<RecordedEvent | undefined> =>
  (await store.readStream(streamId, { direction: 'backwards', maxCount: 1 }))[0];

export const createClaims = (options: ClaimsOptions): Claims => {
  const { store, clock, replicaId } = options;
  const expiryMs = options.expiryMs ?? DEFAULT_CLAIM_EXPIRY_MS;
  const monotonic = options.monotonicNow ?? (() => performance.now());
  const renewEveryMs = Math.max(1, Math.floor(expiryMs / 3));
  let validUntil = Number.NEGATIVE_INFINITY;

  const read = async (processorId: string): Promise<ClaimRecord> => {
    const last = await lastEvent(store, claimStreamId(processorId));
    if (!last) return { owner: undefined, revision: undefined };
    const owner = last.type === 'ProcessorClaimed' ? (last.data as ProcessorClaimedData).owner : undefined;
    return { owner, revision: last.revision };
  };

  return {
    replicaId,
    expiryMs,
    renewEveryMs,
    async renew() {
      const startedAt = monotonic();
      try {
        await store.storeCheckpoint(leaseKey(replicaId), BigInt(clock.now().getTime() + expiryMs));
      } catch {
        return false;
      }
      validUntil = startedAt + (expiryMs * 2) / 3;
      return true;
    },
    valid: () => monotonic() < validUntil,
    read,
    async acquire(processorId) {
      const current = await read(processorId);
      if (current.owner !== undefined && current.owner !== replicaId) {
        const lease = await store.readCheckpoint(leaseKey(current.owner));
        if (lease !== undefined && Number(lease) > clock.now().getTime()) return false;
      }
      const data: ProcessorClaimedData = {
        processorId,
        owner: replicaId,
        previousOwner: current.owner ?? null,
        claimedAt: clock.now().toISOString(),
      };
      try {
        await store.appendToStream(
          claimStreamId(processorId),
          [{ id: newId(), type: 'ProcessorClaimed', data: data as unknown as JsonObject }],
          { expectedRevision: current.revision ?? 'no_stream' },
        );
        return true;
      } catch (error) {
        if (error instanceof ConcurrencyError) return false;
        throw error;
      }
    },
    async release(processorId) {
      const current = await read(processorId);
      if (current.owner !== replicaId || current.revision === undefined) return;
      const data: ProcessorClaimReleasedData = {
        processorId,
        owner: replicaId,
        releasedAt: clock.now().toISOString(),
      };
      try {
        await store.appendToStream(
          claimStreamId(processorId),
          [{ id: newId(), type: 'ProcessorClaimReleased', data: data as unknown as JsonObject }],
          { expectedRevision: current.revision },
        );
      } catch (error) {
        if (!(error instanceof ConcurrencyError)) throw error;
      }
    },
  };
};

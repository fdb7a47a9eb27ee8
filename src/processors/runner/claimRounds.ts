import { asError } from '../../core/errors.ts';
import type { Claims } from '../claims.ts';
import type { ProcessorLogger } from '../ports.ts';
import { type RunnerEnv, recordError, type Slot } from './slot.ts';
import { startSlot, stopSlot } from './subscriptions.ts';

/**
 * Claims (several replicas on one store, see claims.ts): whether this replica runs a processor at
 * all. A round stops what this replica may no longer run, renews its lease, checks it still owns
 * what it runs and claims what is free; rounds run at start and every `renewEveryMs`, never
 * overlapping.
 */
export type ClaimRounds = Readonly<{
  /** Starts the first round and the timer of the next ones. */
  start(): Promise<void>;
  /** Stops the timer and waits for a round in progress. */
  stop(): Promise<void>;
  /** Gives up every claim held (on stop, once the checkpoints are stored). */
  releaseClaims(): Promise<void>;
}>;

export const createClaimRounds = (
  env: RunnerEnv,
  claims: Claims,
  slots: ReadonlyMap<string, Slot>,
  logger: ProcessorLogger,
  /** Whether the runner is started: a round claims nothing while it is not. */
  started: () => boolean,
): ClaimRounds => {
  let claimTimer: NodeJS.Timeout | undefined;
  let claimTicking: Promise<void> = Promise.resolve();
  const claimLog = logger.child({ component: 'claims' });

  /** Stops a processor this replica may no longer run, without storing its checkpoint. */
  const letGo = async (slot: Slot, why: string): Promise<void> => {
    slot.fenced = true;
    slot.held = false;
    if (slot.running) await stopSlot(env, slot);
    slot.log.warn({ replica: claims.replicaId, owner: slot.owner ?? null }, why);
  };

  /** One slot's part of a round: keep, lose or take its claim. */
  const claimOne = async (slot: Slot): Promise<void> => {
    try {
      if (slot.held) {
        slot.owner = (await claims.read(slot.processor.id)).owner;
        if (slot.owner !== claims.replicaId)
          await letGo(slot, 'claim taken by another replica; processor stopped');
      } else if (await claims.acquire(slot.processor.id)) {
        slot.owner = claims.replicaId;
        slot.held = true;
        slot.log.info({ replica: claims.replicaId }, 'claimed');
        await startSlot(env, slot);
      } else {
        slot.owner = (await claims.read(slot.processor.id)).owner;
      }
    } catch (error) {
      // Claimed but not started (the store failed meanwhile): claim it afresh next round.
      if (!slot.running) slot.held = false;
      recordError(env, slot, error);
      slot.log.warn({ err: asError(error), replica: claims.replicaId }, 'claim round failed; will retry');
    }
  };

  const claimRound = async (): Promise<void> => {
    const lapsed = !claims.valid();
    for (const slot of slots.values()) {
      if (slot.claimed && slot.held && (lapsed || slot.fenced)) {
        await letGo(slot, 'claim lapsed; processor stopped until claimed again');
      }
    }
    if (!(await claims.renew())) {
      claimLog.warn({ replica: claims.replicaId }, 'claim lease not renewed; will retry');
      return;
    }
    for (const slot of slots.values()) {
      if (!slot.claimed || !started()) continue;
      await claimOne(slot);
    }
  };

  const runClaimRound = (): Promise<void> => {
    claimTicking = claimTicking.then(claimRound).catch((error: unknown) => {
      claimLog.error({ err: asError(error) }, 'claim round failed');
    });
    return claimTicking;
  };

  return {
    async start() {
      await runClaimRound();
      claimTimer = setInterval(() => void runClaimRound(), claims.renewEveryMs);
      claimTimer.unref();
    },
    async stop() {
      if (claimTimer) clearInterval(claimTimer);
      claimTimer = undefined;
      await claimTicking;
    },
    async releaseClaims() {
      for (const slot of slots.values()) {
        if (!slot.claimed || !slot.held) continue;
        slot.held = false;
        try {
          await claims.release(slot.processor.id);
          slot.owner = undefined;
        } catch (error) {
          slot.log.warn({ err: asError(error) }, 'claim not released; it expires instead');
        }
      }
    },
  };
};

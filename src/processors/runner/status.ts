import { flush, markUnsaved } from './checkpoints.ts';
import { readParked } from './parked.ts';
import { accepts, type RunnerEnv, runsHere, type Slot } from './slot.ts';
import type { ProcessorStatus } from './types.ts';

/**
 * Status: how far behind each slot is (for /readyz and /metrics), read from the store, and the
 * wait until every slot this replica runs is idle (tests). A slot with nothing it takes pending up
 * to the head has effectively seen everything up to it.
 */

const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

const PAGE = 500;
const MAX_PAGES = 4;

/**
 * Whether anything this processor takes is waiting at or below `head`. When nothing is, the
 * processor has effectively seen everything up to `head` (filtered-out positions included), so
 * its position moves there: lag reads 0 and the next checkpoint skips the gap.
 */
export const refresh = async (
  env: RunnerEnv,
  slot: Slot,
  head: bigint | undefined,
): Promise<{ caughtUp: boolean; lag: number }> => {
  const behind = () => (head === undefined ? 0 : Math.max(0, Number(head - (slot.position ?? 0n))));
  if (!slot.running || !slot.live || slot.inHand || slot.stopping) return { caughtUp: false, lag: behind() };
  if (head === undefined) return { caughtUp: true, lag: 0 };
  if (await pendingUpTo(env, slot, head)) return { caughtUp: false, lag: behind() };
  if (slot.inHand) return { caughtUp: false, lag: behind() };
  if (slot.position === undefined || head > slot.position) {
    slot.position = head;
    if (slot.storesCheckpoint) markUnsaved(slot);
  }
  return { caughtUp: true, lag: 0 };
};

/** Whether an event the slot takes lies after its position and at or below `head` (undecided after MAX_PAGES pages: yes). */
const pendingUpTo = async (env: RunnerEnv, slot: Slot, head: bigint): Promise<boolean> => {
  let after = slot.position ?? 0n;
  for (let page = 0; page < MAX_PAGES; page++) {
    if (after >= head) return false;
    const events = await env.store.readAll({
      after,
      maxCount: PAGE,
      ...(slot.processor.filter ? { filter: slot.processor.filter } : {}),
    });
    for (const e of events) {
      if (e.position > head) return false;
      if (accepts(slot, e)) return true;
      after = e.position;
    }
    if (events.length < PAGE) return false;
  }
  return true;
};

export const statusOf = async (
  env: RunnerEnv,
  slot: Slot,
  head: bigint | undefined,
): Promise<ProcessorStatus> => {
  const { caughtUp, lag } = await refresh(env, slot, head);
  return {
    id: slot.processor.id,
    checkpoint: slot.checkpoint,
    position: slot.position,
    head,
    lag,
    parked: slot.parked.size,
    caughtUp,
    running: slot.running,
    handled: slot.handled,
    retries: slot.retries,
    ...(slot.lastError ? { lastError: slot.lastError } : {}),
    ...(slot.claimed ? { claim: { owner: slot.owner ?? null, held: slot.held } } : {}),
  };
};

/** Every slot's status, its parked list read afresh. */
export const status = async (
  env: RunnerEnv,
  slots: ReadonlyMap<string, Slot>,
): Promise<ProcessorStatus[]> => {
  const head = await env.store.headPosition();
  const out: ProcessorStatus[] = [];
  for (const slot of slots.values()) {
    slot.parked = (await readParked(env, slot)).parked;
    out.push(await statusOf(env, slot, head));
  }
  return out;
};

/** Resolves when every processor this replica runs has caught up with the head (checkpoints written). */
export const waitForIdle = async (
  env: RunnerEnv,
  slots: ReadonlyMap<string, Slot>,
  timeoutMs: number,
): Promise<ProcessorStatus[]> => {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const head = await env.store.headPosition();
    const statuses: ProcessorStatus[] = [];
    for (const slot of slots.values()) if (runsHere(slot)) statuses.push(await statusOf(env, slot, head));
    if (statuses.every((s) => s.caughtUp)) {
      await Promise.all([...slots.values()].filter(runsHere).map((slot) => flush(env, slot)));
      return statuses.map((s) => ({ ...s, checkpoint: slots.get(s.id)?.checkpoint }));
    }
    if (Date.now() > deadline) {
      const lagging = statuses
        .filter((s) => !s.caughtUp)
        .map((s) => `${s.id} (position ${s.position ?? '-'}, head ${s.head ?? '-'}, running ${s.running})`);
      throw new Error(`processors not idle after ${timeoutMs} ms: ${lagging.join(', ')}`);
    }
    await delay(5);
  }
};

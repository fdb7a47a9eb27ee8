import { randomUUID } from 'node:crypto';
import { waitFor } from '../support/waitFor.ts';
import type { TimeOffHarness } from './harness.ts';
import { ANA, BEN, CHEN, DANA, HR_IDS } from './harness.ts';

/**
 * Requests and decisions through the command bus, for the HR slice's tests (the Slack side is
 * built by another slice): the same commands the listeners record.
 */
const PEOPLE = {
  [ANA]: { hrId: HR_IDS.ana, slackUserId: ANA, displayName: 'Ana Silva' },
  [BEN]: { hrId: HR_IDS.ben, slackUserId: BEN, displayName: 'Ben Okafor' },
  [CHEN]: { hrId: HR_IDS.chen, slackUserId: CHEN, displayName: 'Chen Wei' },
  [DANA]: { hrId: HR_IDS.dana, slackUserId: DANA, displayName: 'Dana Lee' },
} as const;

export type Ask = Partial<{
  policyType: string;
  startDate: string;
  endDate: string;
  description: string;
}>;

const meta = (h: TimeOffHarness, actor: string) => ({
  now: h.clock.now().toISOString(),
  commandId: randomUUID(),
  actor,
});

/** Ana (or `user`) asks for time off; Dana approves it. Returns the request id. */
export const requestTimeOff = async (
  h: TimeOffHarness,
  ask: Ask = {},
  user: keyof typeof PEOPLE = ANA,
): Promise<string> => {
  const timeOffId = randomUUID();
  await h.sb.bus.dispatch({
    type: 'RequestTimeOff',
    data: {
      timeOffId,
      requester: PEOPLE[user],
      approver: PEOPLE[DANA],
      policyType: ask.policyType ?? 'Holiday',
      startDate: ask.startDate ?? '2026-12-01',
      endDate: ask.endDate ?? '2026-12-03',
      startPortion: 'all_day',
      endPortion: 'all_day',
      description: ask.description ?? 'Family visit',
      holidays: [],
      approvalRules: null,
    },
    metadata: meta(h, user),
  });
  return timeOffId;
};

export const approve = async (h: TimeOffHarness, timeOffId: string): Promise<void> => {
  await h.sb.bus.dispatch({
    type: 'ApproveTimeOff',
    data: { timeOffId, card: null },
    metadata: meta(h, DANA),
  });
};

export const cancel = async (h: TimeOffHarness, timeOffId: string, user: string = ANA): Promise<void> => {
  await h.sb.bus.dispatch({ type: 'CancelTimeOff', data: { timeOffId }, metadata: meta(h, user) });
};

/** The request's phase, read-your-writes. */
export const phaseOf = async (h: TimeOffHarness, timeOffId: string): Promise<string | undefined> => {
  await h.api.readModel.catchUp();
  return h.api.readModel.view(timeOffId)?.phase;
};

/** True when no timer is due by the clock and still unfired (the scheduler looks every 20 ms). */
export const timersSettled = async (h: TimeOffHarness): Promise<boolean> => {
  const now = h.clock.now().getTime();
  const timers = new Map<string, { dueAt: number; done: boolean }>();
  for (const e of await h.sb.store.readAll({ filter: { streamPrefixes: ['timer-'] } })) {
    if (e.kind !== 'event') continue;
    const d = e.data as { timerId: string; dueAt?: string };
    const t = timers.get(d.timerId) ?? { dueAt: Number.POSITIVE_INFINITY, done: false };
    if (e.type === 'TimerScheduled' || e.type === 'TimerRescheduled') t.dueAt = Date.parse(String(d.dueAt));
    if (e.type === 'TimerFired' || e.type === 'TimerCancelled') t.done = true;
    timers.set(d.timerId, t);
  }
  return [...timers.values()].every((t) => t.done || t.dueAt > now);
};

/** Waits until every timer due by now has fired and what it caused has settled. */
export const settle = async (h: TimeOffHarness): Promise<void> => {
  for (let i = 0; i < 20; i++) {
    await h.idle();
    if (await timersSettled(h)) {
      await h.idle();
      if (await timersSettled(h)) return;
    }
    await waitFor(() => timersSettled(h), { what: 'due timers fired', timeoutMs: 10_000 });
  }
};

/** Moves the clock by `ms` and lets every timer due fire. */
export const advance = async (h: TimeOffHarness, ms: number): Promise<void> => {
  h.clock.advance(ms);
  await settle(h);
};

/** Moves the clock in steps until `done` (each step lets timers fire and processors settle). */
export const advanceUntil = async (
  h: TimeOffHarness,
  done: () => Promise<boolean>,
  options: Readonly<{ stepMs?: number; maxMs?: number }> = {},
): Promise<number> => {
  const step = options.stepMs ?? 1_000;
  const max = options.maxMs ?? 10 * 60_000;
  let moved = 0;
  for (;;) {
    await settle(h);
    if (await done()) return moved;
    if (moved >= max) throw new Error(`not done after moving the clock ${moved} ms`);
    h.clock.advance(step);
    moved += step;
  }
};

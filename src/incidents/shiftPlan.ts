/**
 * Issue 20 item 4, the rules of the on-call watch (pure): from the on-call entries the incident
 * service lists around `at` (its final rota: overrides included, so a cover is the one on call),
 * which shift-start DMs are due, which handoffs just happened, and when to look next.
 *
 * - A shift's DM is due from `noticeMs` before its start until it starts: never earlier, and not
 *   once it has started (a watch after a long outage sends nothing late). A shift that only
 *   continues the same person's turn on the same schedule (the entry before ends where it starts)
 *   is no new shift.
 * - A handoff is a schedule's entry starting within `lookbackMs` up to `at`, with whoever's entry
 *   ended at that instant on the same schedule (null: nobody was on call just before); the same
 *   person continuing is no handoff.
 * - The next look is the first minute after `at` when a DM falls due or a shift starts, or the
 *   next whole hour: the hour bound makes two chains of watches (one per start) meet.
 *
 * Keys are stable per shift (schedule, user, start), so the outbox sends each once.
 */

export type RotaEntry = Readonly<{
  scheduleId: string;
  scheduleName: string | null;
  escalationPolicyId: string;
  /** The incident-service user on call. */
  userId: string;
  start: number;
  end: number | null;
}>;

export type DueShift = Readonly<{
  key: string;
  scheduleId: string;
  scheduleName: string | null;
  userId: string;
  start: number;
  end: number | null;
}>;

export type Handoff = Readonly<{
  key: string;
  scheduleId: string;
  scheduleName: string | null;
  from: string | null;
  to: string;
  at: number;
  end: number | null;
}>;

export type WatchPlan = Readonly<{ shifts: DueShift[]; handoffs: Handoff[]; nextAt: number }>;

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

export const shiftNoticeKey = (scheduleId: string, userId: string, start: number): string =>
  `shift-start:${scheduleId}:${userId}:${new Date(start).toISOString()}`;

export const handoffKey = (scheduleId: string, at: number): string =>
  `shift-handoff:${scheduleId}:${new Date(at).toISOString()}`;

/** One entry per schedule, user and span (a schedule on several levels or policies is listed for each). */
const distinct = (entries: readonly RotaEntry[]): RotaEntry[] => {
  const seen = new Map<string, RotaEntry>();
  for (const e of entries) seen.set(`${e.scheduleId}|${e.userId}|${e.start}|${e.end ?? ''}`, e);
  return [...seen.values()].sort((a, b) => a.start - b.start || a.scheduleId.localeCompare(b.scheduleId));
};

export const planWatch = (
  input: Readonly<{ entries: readonly RotaEntry[]; at: number; noticeMs: number; lookbackMs: number }>,
): WatchPlan => {
  const { at, noticeMs, lookbackMs } = input;
  const entries = distinct(input.entries);
  const endingAt = (scheduleId: string, instant: number) =>
    entries.filter((e) => e.scheduleId === scheduleId && e.end === instant);
  const shifts: DueShift[] = [];
  const handoffs: Handoff[] = [];
  let nextAt = (Math.floor(at / HOUR) + 1) * HOUR;
  for (const e of entries) {
    const before = endingAt(e.scheduleId, e.start);
    const continues = before.some((b) => b.userId === e.userId);
    if (!continues && e.start - noticeMs <= at && at < e.start) {
      shifts.push({
        key: shiftNoticeKey(e.scheduleId, e.userId, e.start),
        scheduleId: e.scheduleId,
        scheduleName: e.scheduleName,
        userId: e.userId,
        start: e.start,
        end: e.end,
      });
    }
    if (!continues && e.start <= at && e.start > at - lookbackMs) {
      handoffs.push({
        key: handoffKey(e.scheduleId, e.start),
        scheduleId: e.scheduleId,
        scheduleName: e.scheduleName,
        from: before[0]?.userId ?? null,
        to: e.userId,
        at: e.start,
        end: e.end,
      });
    }
    for (const t of [e.start - noticeMs, e.start]) if (t > at && t < nextAt) nextAt = t;
  }
  // Whole minutes, strictly after this one.
  const minuteAfter = (Math.floor(at / MINUTE) + 1) * MINUTE;
  nextAt = Math.max(minuteAfter, Math.ceil(nextAt / MINUTE) * MINUTE);
  return { shifts, handoffs, nextAt };
};

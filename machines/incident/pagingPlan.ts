/**
 * Leave-aware paging (issue 12, capability 4), the rule (pure): who is paged when an escalation
 * level's page is due, given who is on call at every level and who is on approved leave now.
 * The effects (the on-call lookups, the `absences` port, the pager) are in
 * src/incidents/paging.reactor.ts.
 *
 * - Someone on approved leave is never paged: the plan says so (`on_leave`, with their last day).
 * - Their place goes to the next person at that level: for a schedule target, the next person in
 *   that schedule's rotation who is not away and not already paged at the level (`stand_in`,
 *   paged under the level's page id); else the level's other targets, who are paged anyway.
 * - When nobody at the level can be paged because everyone there with a Slack user is away, the
 *   next level with anyone on call is planned the same way (`level_on_leave`), its people paged
 *   under their own level's page id, so a later escalation to that level pages nobody twice.
 * - When every level is away: `everyone_on_leave`, and nobody is paged.
 * - A person is paged at most once per plan. Without leave, the plan is what paging did before:
 *   everyone on call at the level, people with no Slack user named and not paged.
 * - Someone whose page cannot be delivered (issue 18: no verified phone, a number that must be
 *   verified again, opted out, held back, the SMS refused, the call failed, busy or unanswered, the
 *   phone service given up on) is unreachable for the rest of that round: like someone away, with a
 *   reason (`unreachable`). Their place goes to the same stand-in, else the level's others, else the
 *   next level (`level_unreachable`); when nobody anywhere can be paged, `nobody_reachable`.
 *   Leave is said before unreachability (someone on leave is `on_leave`, whatever their phone).
 *
 * @example
 * const plan = planPages({ level: 1, onCall, awayOf: (u) => leave.get(u) ?? null, rotation: (s) => rotations.get(s) ?? [] });
 * // [{ kind: 'on_leave', person: ana, level: 1, lastDay: '2026-12-03' }, { kind: 'page', person: ben, level: 1, standsInFor: ana }]
 */

export type PlannedPerson = Readonly<{
  upstreamUserId: string;
  name: string | null;
  slackUserId: string | null;
}>;

/** Someone on call at a level, through a schedule (its id and name) or named directly. */
export type OnCallAtLevel = PlannedPerson &
  Readonly<{ level: number; schedule: Readonly<{ id: string; name: string | null }> | null }>;

export type Leave = Readonly<{
  /** The last day of leave (YYYY-MM-DD), not the exclusive end; `left` for someone who left the company. */
  lastDay: string;
}>;

/** `Leave.lastDay` (and the `on_leave` activity's detail) of someone HR says left the company. */
export const LEFT_THE_COMPANY = 'left';

/**
 * Why a page cannot reach someone (issue 18): before it is sent (`no_verified_phone`,
 * `must_verify_again` (their number can no longer be read), `opted_out` (STOP), `held_back` (the
 * per-hour limit)) or after (`sms_refused`, `call_failed`, `busy`, `unanswered`, `gave_up`: the
 * phone service failed until the last attempt).
 */
export const UNREACHABLE_REASONS = [
  'no_verified_phone',
  'must_verify_again',
  'opted_out',
  'held_back',
  'sms_refused',
  'call_failed',
  'busy',
  'unanswered',
  'gave_up',
] as const;
export type UnreachableReason = (typeof UNREACHABLE_REASONS)[number];

export type PlanStep =
  /** Page them; `level` is the level whose page id it is (the level they stand in at, or their own). */
  | Readonly<{
      kind: 'page';
      person: PlannedPerson & Readonly<{ slackUserId: string }>;
      level: number;
      /** Paged in the place of someone on leave (a schedule's next person). */
      standsInFor: Readonly<{ slackUserId: string; schedule: string | null }> | null;
    }>
  | Readonly<{
      kind: 'on_leave';
      person: PlannedPerson & Readonly<{ slackUserId: string }>;
      level: number;
      lastDay: string;
    }>
  /** Their page cannot be delivered this round (issue 18): not paged again, someone else is. */
  | Readonly<{
      kind: 'unreachable';
      person: PlannedPerson & Readonly<{ slackUserId: string }>;
      level: number;
      reason: UnreachableReason;
    }>
  | Readonly<{ kind: 'no_slack_user'; person: PlannedPerson; level: number }>
  | Readonly<{ kind: 'nobody_on_call'; level: number }>
  | Readonly<{ kind: 'level_on_leave'; level: number; nextLevel: number }>
  /** Nobody at `level` could be paged (some away, some unreachable): `nextLevel` is planned. */
  | Readonly<{ kind: 'level_unreachable'; level: number; nextLevel: number }>
  | Readonly<{ kind: 'everyone_on_leave'; level: number }>
  /** Every level was tried and nobody could be paged (someone was unreachable, not only away). */
  | Readonly<{ kind: 'nobody_reachable'; level: number }>;

export type PlanInput = Readonly<{
  /** The level whose page is due. */
  level: number;
  /** Everyone on call now, at every level of the policy. */
  onCall: readonly OnCallAtLevel[];
  /** The approved leave the person is on now, or null. */
  awayOf(slackUserId: string): Leave | null;
  /** A schedule's people in rotation order from now (the next turns first). */
  rotation(scheduleId: string): readonly PlannedPerson[];
  /** Why the person's page cannot be delivered this round, or null (default: everyone is reachable). */
  unreachableOf?(slackUserId: string): UnreachableReason | null;
}>;

/**
 * The schedules whose rotation the plan may need: those of people on leave (or unreachable) at
 * `level` and above.
 */
export const rotationsNeeded = (input: Omit<PlanInput, 'rotation'>): string[] => [
  ...new Set(
    input.onCall
      .filter(
        (r) =>
          r.level >= input.level &&
          r.schedule &&
          r.slackUserId &&
          (input.awayOf(r.slackUserId) || input.unreachableOf?.(r.slackUserId)),
      )
      .map((r) => r.schedule!.id),
  ),
];

export const planPages = (input: PlanInput): PlanStep[] => {
  const steps: PlanStep[] = [];
  const paged = new Set<string>();
  const unreachableOf = (slackUserId: string) => input.unreachableOf?.(slackUserId) ?? null;
  const levels = [...new Set(input.onCall.map((r) => r.level))]
    .filter((l) => l >= input.level)
    .sort((a, b) => a - b);
  const atLevel = (level: number) => {
    const seen = new Set<string>();
    return input.onCall.filter(
      (r) => r.level === level && !seen.has(r.upstreamUserId) && seen.add(r.upstreamUserId),
    );
  };

  if (atLevel(input.level).length === 0) return [{ kind: 'nobody_on_call', level: input.level }];

  /** Someone was passed over for their phone, not only for leave: "could not be paged" is said. */
  let anyUnreachable = false;
  for (let i = 0; i < levels.length; i++) {
    const level = levels[i]!;
    const responders = atLevel(level);
    const onTheLevel = new Set(responders.map((r) => r.slackUserId).filter((id) => id !== null));
    let pagedHere = 0;
    let skipped = 0;
    let unreachableHere = false;
    for (const r of responders) {
      if (!r.slackUserId) {
        steps.push({ kind: 'no_slack_user', person: r, level });
        continue;
      }
      const person = { ...r, slackUserId: r.slackUserId };
      const leave = input.awayOf(r.slackUserId);
      const unreachable = leave ? null : unreachableOf(r.slackUserId);
      if (!leave && !unreachable) {
        if (!paged.has(r.slackUserId)) {
          paged.add(r.slackUserId);
          steps.push({ kind: 'page', person, level, standsInFor: null });
        }
        pagedHere += 1;
        continue;
      }
      skipped += 1;
      if (leave) steps.push({ kind: 'on_leave', person, level, lastDay: leave.lastDay });
      else if (unreachable) {
        unreachableHere = true;
        steps.push({ kind: 'unreachable', person, level, reason: unreachable });
      }
      if (!r.schedule) continue; // the level's other targets are paged anyway
      const next = input
        .rotation(r.schedule.id)
        .find(
          (c): c is PlannedPerson & { slackUserId: string } =>
            c.slackUserId !== null &&
            c.slackUserId !== r.slackUserId &&
            !onTheLevel.has(c.slackUserId) &&
            !paged.has(c.slackUserId) &&
            input.awayOf(c.slackUserId) === null &&
            unreachableOf(c.slackUserId) === null,
        );
      if (next) {
        paged.add(next.slackUserId);
        pagedHere += 1;
        steps.push({
          kind: 'page',
          person: next,
          level,
          standsInFor: { slackUserId: r.slackUserId, schedule: r.schedule.name },
        });
      }
    }
    anyUnreachable ||= unreachableHere;
    // Someone here is paged, or nobody here is skipped (only people with no Slack user): done.
    if (pagedHere > 0 || skipped === 0) return steps;
    const nextLevel = levels[i + 1];
    if (nextLevel === undefined) {
      steps.push({ kind: anyUnreachable ? 'nobody_reachable' : 'everyone_on_leave', level: input.level });
      return steps;
    }
    steps.push({ kind: unreachableHere ? 'level_unreachable' : 'level_on_leave', level, nextLevel });
  }
  return steps;
};

import {
  LEFT_THE_COMPANY,
  type Leave,
  type OnCallAtLevel,
  type PlannedPerson,
  planPages,
  rotationsNeeded,
} from '../../machines/incident/pagingPlan.ts';
import type { LifecyclePorts } from '../lifecycles/ports.ts';
import type { Logger } from '../logger.ts';
import { mention } from '../slack/blocks/format.ts';
import type { PagerDutyOnCall } from '../upstream/pagerduty.ts';
import { dayText } from './blocks/incidentTimeline.ts';
import { approvedLeaveAt, type PagingRota } from './paging.reactor.ts';

/**
 * The truth during leave for `/oncall` (issue 20): for each level with someone on approved leave
 * (or who left) now, who is really paged, by the paging plan's own rule
 * (machines/incident/pagingPlan.ts `planPages`, the same look-ups as the paging reactor: the
 * `absences` port, the schedule's rotation). Keyed `<policy id>|<level>|<incident-service user id>`,
 * the words to put after that person: `(on leave until 4 Dec) → <@Ben> is paged instead`.
 * Time off switched off, or nobody away: no words. Leave that cannot be read: as paging does, nobody
 * is taken to be away.
 *
 * @example
 * const notes = await leaveNotes({ absences, rota, slackUserOf, logger }, rows, now);
 * notes.get('PEPPAY|1|PANA001'); // '(on leave until 4 Dec) → <@U0BEN> is paged instead'
 */
export type LeaveNotesDeps = Readonly<{
  absences: LifecyclePorts['absences'] | undefined;
  rota: Pick<PagingRota, 'rotation'>;
  /** The Slack user of an incident-service user: recorded, else looked up by email (as paging does). */
  slackUserOf(upstreamUserId: string): Promise<string | null>;
  logger: Logger;
}>;

export const leaveNoteKey = (policyId: string, level: number, upstreamUserId: string): string =>
  `${policyId}|${level}|${upstreamUserId}`;

const awayWords = (leave: Leave): string => {
  if (leave.lastDay === LEFT_THE_COMPANY) return 'left the company';
  const day = dayText(leave.lastDay);
  return `on leave${day ? ` until ${day}` : ''}`;
};

export const leaveNotes = async (
  deps: LeaveNotesDeps,
  rows: readonly PagerDutyOnCall[],
  now: Date,
): Promise<ReadonlyMap<string, string>> => {
  const notes = new Map<string, string>();
  const { absences } = deps;
  if (!absences) return notes;
  const ctx = { logger: deps.logger };
  const nowMs = now.getTime();
  const current = rows.filter(
    (r) =>
      (r.start ? Date.parse(r.start) : Number.NEGATIVE_INFINITY) <= nowMs &&
      (r.end ? Date.parse(r.end) : Number.POSITIVE_INFINITY) > nowMs,
  );
  const leave = new Map<string, Leave | null>();
  const lookUp = async (people: readonly { slackUserId: string | null }[]) => {
    for (const p of people) {
      if (p.slackUserId && !leave.has(p.slackUserId)) {
        leave.set(p.slackUserId, await approvedLeaveAt(absences, p.slackUserId, now, ctx));
      }
    }
  };
  const awayOf = (slackUserId: string) => leave.get(slackUserId) ?? null;
  for (const policyId of new Set(current.map((r) => r.escalation_policy.id))) {
    const seen = new Set<string>();
    const responders: OnCallAtLevel[] = [];
    for (const r of current) {
      const key = `${r.escalation_level}|${r.user.id}`;
      if (r.escalation_policy.id !== policyId || seen.has(key)) continue;
      seen.add(key);
      responders.push({
        upstreamUserId: r.user.id,
        name: r.user.summary ?? null,
        slackUserId: await deps.slackUserOf(r.user.id),
        level: r.escalation_level,
        schedule: r.schedule ? { id: r.schedule.id, name: r.schedule.summary ?? null } : null,
      });
    }
    await lookUp(responders);
    const levels = [
      ...new Set(responders.filter((r) => r.slackUserId && awayOf(r.slackUserId)).map((r) => r.level)),
    ];
    const rotations = new Map<string, readonly PlannedPerson[]>();
    for (const level of levels) {
      for (const scheduleId of rotationsNeeded({ level, onCall: responders, awayOf })) {
        if (rotations.has(scheduleId)) continue;
        try {
          const people = await deps.rota.rotation(scheduleId, policyId, now);
          rotations.set(scheduleId, people);
          await lookUp(people);
        } catch (error) {
          rotations.set(scheduleId, []);
          deps.logger.warn(
            { err: error, scheduleId },
            'schedule rotation not read: /oncall names no stand-in',
          );
        }
      }
      const plan = planPages({
        level,
        onCall: responders,
        awayOf,
        rotation: (id) => rotations.get(id) ?? [],
      });
      const nextLevel = plan.find((s) => s.kind === 'level_on_leave' && s.level === level);
      const nobody = plan.some((s) => s.kind === 'everyone_on_leave');
      for (const step of plan) {
        if (step.kind !== 'on_leave' || step.level !== level) continue;
        const standIns = plan.flatMap((s) =>
          s.kind === 'page' && s.standsInFor?.slackUserId === step.person.slackUserId ? [s.person] : [],
        );
        const away = `(${awayWords({ lastDay: step.lastDay })})`;
        const then =
          standIns.length > 0
            ? `→ ${standIns.map((p) => mention(p.slackUserId)).join(', ')} ${standIns.length === 1 ? 'is' : 'are'} paged instead`
            : nextLevel?.kind === 'level_on_leave'
              ? `→ nobody at level ${level} can be paged: level ${nextLevel.nextLevel} is paged instead`
              : nobody
                ? '→ nobody can be paged'
                : `→ the others at level ${level} are paged`;
        notes.set(leaveNoteKey(policyId, level, step.person.upstreamUserId), `${away} ${then}`);
      }
    }
  }
  return notes;
};

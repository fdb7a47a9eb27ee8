import { incidentPhase, incidentStatus } from '../../machines/incident/decider.ts';
import type { IncidentEvent } from '../../machines/incident/events.ts';
import { parseIncidentEvent } from '../../machines/incident/events.ts';
import {
  INCIDENT_PAGING_STREAM_PREFIX,
  incidentOfPagingStream,
  incidentPagingStreamId,
  pageTimerId,
  type RecordIncidentPageActivity,
} from '../../machines/incident/paging.ts';
import {
  LEFT_THE_COMPANY,
  type Leave,
  type OnCallAtLevel,
  type PlannedPerson,
  planPages,
  rotationsNeeded,
  type UnreachableReason,
} from '../../machines/incident/pagingPlan.ts';
import { asError } from '../core/errors.ts';
import type { LifecyclePorts } from '../lifecycles/ports.ts';
import type { IdentityResolver } from '../people/identity.ts';
import type { Dispatch } from '../processors/dispatchCommand.ts';
import { dispatchCommand } from '../processors/dispatchCommand.ts';
import type { Processor, ProcessorContext } from '../processors/runner.ts';
import { cancelTimer, scheduleTimer } from '../processors/scheduler.ts';
import type { PagerDutyClient, PagerDutySchedule } from '../upstream/pagerduty.ts';
import { readIncidentState } from './incidentState.ts';
import { createTtlCache, listOnCallsInRange, scheduleUserIds } from './onCall.ts';
import {
  incidentPageId,
  MAX_PAGED_LEVELS,
  markPageUndeliverable,
  pageActivity,
  pageWording,
  pagingRoundOf,
} from './paging.ts';
import { DEFAULT_PAGING, type PagingSettings, pagingDelayMs } from './pagingConfig.ts';
import type { ServiceDirectory } from './services.ts';

/** Someone on call at an escalation level, as the incident service lists them. */
export type OnCallResponder = OnCallAtLevel;

/** Who is on call, and who could stand in (incidents' own lookups of the incident service). */
export type PagingRota = Readonly<{
  /** Everyone on call at every level of the service's escalation policy at `at`. */
  onCallAt(
    serviceId: string,
    at: Date,
  ): Promise<Readonly<{ policyId: string | null; responders: readonly OnCallResponder[] }>>;
  /** The schedule's people in rotation order from `at` (the next turns first). */
  rotation(scheduleId: string, policyId: string, at: Date): Promise<readonly PlannedPerson[]>;
}>;

export type IncidentPagingDeps = Readonly<{
  settings: PagingSettings | undefined;
  dispatch: () => Dispatch;
  /** The verification lifecycle's pager, when it is on. */
  pager: () => LifecyclePorts['pager'] | undefined;
  /** The time-off lifecycle's absences, when it is on: nobody on approved leave is paged. */
  absences: () => LifecyclePorts['absences'] | undefined;
  rota: PagingRota;
  /**
   * Operators' counters (the module registers them): a page that could not be delivered, by
   * reason; an incident where nobody at all could be paged.
   */
  metrics?: Readonly<{ undeliverable(reason: UnreachableReason): void; nobodyReachable(): void }>;
}>;

/** What the pager's answer means for reaching the person: a reason they cannot be, or null. */
const UNDELIVERED: Readonly<Partial<Record<string, UnreachableReason>>> = {
  no_verified_phone: 'no_verified_phone',
  must_verify_again: 'must_verify_again',
  opted_out: 'opted_out',
  held_back: 'held_back',
};

/** The activity kind that says why someone could not be paged (older kinds kept for their words). */
const unreachableKind = (reason: UnreachableReason): RecordIncidentPageActivity['data']['kind'] =>
  reason === 'no_verified_phone' || reason === 'opted_out' || reason === 'held_back'
    ? reason
    : 'undeliverable';

/** Plans of one level in one go, at most (each pass makes one more person unreachable). */
const MAX_PASSES = 50;

/**
 * The approved leave a person is on at `at` (its last day), or null; null too when it cannot be
 * told. Paging's rule for who is away; `/oncall` asks it too (src/incidents/onCallLeave.ts).
 */
export const approvedLeaveAt = async (
  absences: LifecyclePorts['absences'],
  slackUserId: string,
  at: Date,
  ctx: Pick<ProcessorContext, 'logger'>,
): Promise<Leave | null> => {
  try {
    const found = (
      await absences.absencesOf({ slackUserId }, { since: at, until: new Date(at.getTime() + 1) })
    )
      .filter(
        (a) =>
          (a.status === 'approved' || a.status === 'left') &&
          a.start.getTime() <= at.getTime() &&
          at.getTime() < a.end.getTime(),
      )
      .sort((a, b) => b.end.getTime() - a.end.getTime())[0];
    if (!found) return null;
    if (found.status === 'left') return { lastDay: LEFT_THE_COMPANY };
    // The last day as the person counts days (their zone); else the UTC day before the exclusive `end`.
    return { lastDay: found.lastDay ?? new Date(found.end.getTime() - 1).toISOString().slice(0, 10) };
  } catch (error) {
    // Better to wake someone than nobody: paged as if not away.
    ctx.logger.warn({ err: asError(error) }, 'absences could not be read: paging without them');
    return null;
  }
};

const roundOf = pagingRoundOf;

/** Escalation levels paged at most (a timer per level is cancelled on acknowledge). */
const MAX_LEVELS = MAX_PAGED_LEVELS;

type PagingFacts = Readonly<{
  /** Who is unreachable in each round, and why (`IncidentPageUndeliverable`). */
  unreachable: ReadonlyMap<number, ReadonlyMap<string, UnreachableReason>>;
  /** The levels whose page was due in each round (`IncidentPagingDue`), in order. */
  due: ReadonlyMap<number, readonly number[]>;
}>;

/** What `incidentpaging-<id>` recorded: each round's due levels and unreachable people. */
const readPagingFacts = async (ctx: ProcessorContext, incident: string): Promise<PagingFacts> => {
  const unreachable = new Map<number, Map<string, UnreachableReason>>();
  const due = new Map<number, number[]>();
  for (const m of await ctx.store.readStream(incidentPagingStreamId(incident))) {
    if (m.kind !== 'event') continue;
    const d = m.data as { level?: unknown; round?: unknown; slackUserId?: unknown; reason?: unknown };
    const round = typeof d.round === 'number' ? d.round : 0;
    if (m.type === 'IncidentPagingDue' && typeof d.level === 'number') {
      due.set(round, [...(due.get(round) ?? []), d.level]);
    } else if (m.type === 'IncidentPageUndeliverable' && typeof d.slackUserId === 'string') {
      const people = unreachable.get(round) ?? new Map<string, UnreachableReason>();
      people.set(d.slackUserId, d.reason as UnreachableReason);
      unreachable.set(round, people);
    }
  }
  return { unreachable, due };
};

/**
 * `incident-paging`: pages the on-call by phone when an incident stays triggered.
 *
 * - `IncidentTriggered` (and `IncidentEscalated` while still triggered), when the verification
 *   lifecycle is on (it offers the `pager`): a durable timer
 *   `incident-page-<id>-<level>` due N minutes later (PAGING_DELAY_MINUTES, per service
 *   PAGING_DELAY_BY_SERVICE) dispatches `PageIncidentResponders`, recorded once per level as
 *   `IncidentPagingDue`.
 * - `IncidentPagingDue`: if the incident is still triggered at that level, everyone on call at the
 *   level is paged through the `pager` port (SMS now, a call M minutes later), one page per
 *   incident, level and person (a redelivery pages nobody twice). A level with nobody on call, or
 *   phone verification being switched off, is said on the timeline.
 * - Undeliverable pages (issue 18): someone the pager cannot reach (no verified phone, a number
 *   that must be verified again, opted out, over the hourly limit) is made unreachable for the
 *   round (`MarkPageUndeliverable`) and the level planned again at once, so the next person is
 *   paged by the leave rule below; so is someone whose page failed after sending (the
 *   `incidentResponse` port's `report` with a `failure`: the SMS refused, the call failed, busy or
 *   unanswered, the phone service given up on), when `IncidentPageUndeliverable` arrives here. Each
 *   is said on the timeline and the card ("Could not page <@Ana> at level 1: …"), logged
 *   (`SB_PAGE_UNDELIVERABLE`, with the reason) and counted; when nobody is left, "nobody could be
 *   paged" (`SB_PAGE_NOBODY_REACHABLE`).
 * - Leave-aware (issue 12): when the time-off lifecycle is on (it offers `absences`), nobody on
 *   APPROVED leave is paged. The plan (machines/incident/pagingPlan.ts) gives their place to the
 *   next person in their schedule's rotation who is not away (`GET /oncalls` for the schedule over
 *   the next weeks), else leaves it to the level's other targets, else pages the next level under
 *   that level's own page ids (a later escalation there pages nobody twice); when every level is
 *   away it says so and pages nobody. The timeline and the card say who was skipped and until when
 *   ("<@Ana> skipped: on approved leave until 3 Dec"). Absences that cannot be read page as before.
 * - `IncidentAcknowledged` / `IncidentResolved`, from anywhere: the page timers are cancelled and
 *   the pager stops every page about the incident (no call after an acknowledge).
 * - `IncidentUnacknowledged` (the service's acknowledgement timeout put it back to triggered): a
 *   new round, paged again N minutes later with new page ids (round r: `…-r<r>`).
 */
export const createIncidentPagingReactor = (deps: IncidentPagingDeps): Processor => {
  const settings = deps.settings ?? DEFAULT_PAGING;

  /** Records page activity; true when it is new (not a redelivery's repeat). */
  const record = async (command: RecordIncidentPageActivity, ctx: ProcessorContext): Promise<boolean> => {
    const outcome = await dispatchCommand(deps.dispatch(), command);
    if (outcome.outcome === 'rejected') {
      ctx.logger.warn({ code: outcome.code, reason: outcome.message }, 'page activity not recorded');
      return false;
    }
    return !outcome.alreadyHandled;
  };

  /**
   * "Could not page <@Ana> at level 1: …" on the timeline, once per round and person (whoever
   * finds it first: the plan, the pager's answer, or a failure found after sending).
   */
  const recordUnreachable = (
    streamId: string,
    round: number,
    who: Readonly<{ slackUserId: string; level: number; reason: UnreachableReason }>,
    ctx: ProcessorContext,
  ) =>
    record(
      pageActivity(
        {
          streamId,
          kind: unreachableKind(who.reason),
          slackUserId: who.slackUserId,
          name: null,
          level: who.level,
          detail: who.reason === 'held_back' ? `limit ${settings.maxPerHour} an hour` : null,
          via: null,
          reason: who.reason,
        },
        `${streamId}:${round ? `r${round}:` : ''}unreachable:${who.slackUserId}`,
        ctx.now(),
      ),
      ctx,
    );

  const schedule = async (
    streamId: string,
    level: number,
    from: string,
    serviceId: string,
    ctx: ProcessorContext,
    round = 0,
  ) => {
    // Phone verification switched off: nobody can be paged by phone, and the card need not say so.
    if (!deps.pager()) return;
    // From when it happened; never from a time ahead of ours (a webhook's time on another clock).
    const start = Math.min(Date.parse(from), ctx.now().getTime());
    const dueAt = new Date(start + pagingDelayMs(settings, serviceId));
    await scheduleTimer(ctx.store, {
      timerId: pageTimerId(streamId, level, round),
      dueAt,
      command: {
        type: 'PageIncidentResponders',
        data: { incident: streamId, level, ...(round ? { round } : {}) },
      },
      now: ctx.now(),
    });
  };

  const stop = async (streamId: string, reason: string, ctx: ProcessorContext) => {
    const rounds = roundOf(await ctx.store.readStream(streamId));
    for (let round = 0; round <= rounds; round++) {
      for (let level = 1; level <= MAX_LEVELS; level++) {
        await cancelTimer(ctx.store, pageTimerId(streamId, level, round), { now: ctx.now(), reason });
      }
    }
    await deps.pager()?.stop({ reportTo: streamId, reason, at: ctx.now() });
  };

  /**
   * Pages the level whose page is due (`level`, in `round`): plans it (machines/incident/pagingPlan.ts)
   * and pages each person planned; someone the pager cannot reach (no verified phone, must verify
   * again, opted out, held back) is made unreachable for the round and the level is planned again,
   * so whoever comes next is paged now. `replan`: a failure found after sending asks again, while
   * the incident waits at this level or has escalated past it (its own page not due yet).
   */
  const pageLevel = async (
    streamId: string,
    level: number,
    round: number,
    ctx: ProcessorContext,
    replan = false,
  ) => {
    const { state, history } = await readIncidentState(ctx.store, streamId);
    if (roundOf(history) !== round) return; // acknowledged and back since: a newer round pages
    const facts = state.context.incident;
    if (incidentPhase(state) !== 'open' || incidentStatus(state) !== 'triggered' || !facts) return;
    // Escalated since: that level has its own timer (a re-plan still finds this level's next person).
    if (replan ? facts.escalationLevel < level : facts.escalationLevel !== level) return;
    const key = (what: string) => `${streamId}:${level}:${round ? `r${round}:` : ''}${what}`;
    const pager = deps.pager();
    const activity = (
      kind: RecordIncidentPageActivity['data']['kind'],
      rest: Partial<RecordIncidentPageActivity['data']>,
      what: string,
    ) =>
      record(
        pageActivity(
          { streamId, kind, slackUserId: null, name: null, level, detail: null, via: null, ...rest },
          key(what),
          ctx.now(),
        ),
        ctx,
      );
    if (!pager) {
      await activity('no_pager', {}, 'no-pager');
      return;
    }
    const at = ctx.now();
    const { policyId, responders } = await deps.rota.onCallAt(facts.service.id, at);
    // Who is on approved leave now (time off switched off: nobody is known to be away).
    const absences = deps.absences();
    const leave = new Map<string, Leave | null>();
    const lookUp = async (people: readonly { slackUserId: string | null }[]) => {
      if (!absences) return;
      for (const p of people) {
        if (p.slackUserId && !leave.has(p.slackUserId)) {
          leave.set(p.slackUserId, await approvedLeaveAt(absences, p.slackUserId, at, ctx));
        }
      }
    };
    await lookUp(responders.filter((r) => r.level >= level));
    const awayOf = (slackUserId: string) => leave.get(slackUserId) ?? null;
    // Who cannot be reached this round (issue 18): recorded before, and found on the way.
    const unreachable = new Map((await readPagingFacts(ctx, streamId)).unreachable.get(round) ?? []);
    const unreachableOf = (slackUserId: string) => unreachable.get(slackUserId) ?? null;
    const rotations = new Map<string, readonly PlannedPerson[]>();
    const wording = pageWording({
      number: state.context.link?.number ?? null,
      title: facts.title,
      priority: facts.priority?.name ?? null,
      service: facts.service.name,
      triggeredAt: facts.triggeredAt,
    });
    for (let pass = 0; pass < MAX_PASSES; pass++) {
      if (policyId) {
        for (const scheduleId of rotationsNeeded({ level, onCall: responders, awayOf, unreachableOf })) {
          if (rotations.has(scheduleId)) continue;
          try {
            const people = await deps.rota.rotation(scheduleId, policyId, at);
            rotations.set(scheduleId, people);
            await lookUp(people);
          } catch (error) {
            // Nobody to stand in from that schedule: the level's others, or the next level, are paged.
            rotations.set(scheduleId, []);
            ctx.logger.warn({ err: asError(error), scheduleId }, 'schedule rotation not read: no stand-in');
          }
        }
      }
      const plan = planPages({
        level,
        onCall: responders,
        awayOf,
        unreachableOf,
        rotation: (id) => rotations.get(id) ?? [],
      });
      let foundUnreachable = false;
      for (const step of plan) {
        switch (step.kind) {
          case 'nobody_on_call':
            await activity('nobody_on_call', {}, 'nobody');
            continue;
          case 'no_slack_user':
            await activity(
              'no_slack_user',
              { name: step.person.name ?? step.person.upstreamUserId, level: step.level },
              `noslack:${step.person.upstreamUserId}`,
            );
            continue;
          case 'on_leave':
            await activity(
              'on_leave',
              { slackUserId: step.person.slackUserId, level: step.level, detail: step.lastDay },
              `leave:${step.level}:${step.person.slackUserId}`,
            );
            continue;
          case 'unreachable':
            await recordUnreachable(
              streamId,
              round,
              { slackUserId: step.person.slackUserId, level: step.level, reason: step.reason },
              ctx,
            );
            continue;
          case 'level_on_leave':
            await activity(
              'level_on_leave',
              { level: step.level, toLevel: step.nextLevel },
              `levelaway:${step.level}`,
            );
            continue;
          case 'level_unreachable':
            await activity(
              'level_unreachable',
              { level: step.level, toLevel: step.nextLevel },
              `levelunreachable:${step.level}`,
            );
            continue;
          case 'everyone_on_leave':
            await activity('everyone_on_leave', {}, 'everyoneaway');
            continue;
          case 'nobody_reachable':
            if (await activity('nobody_paged', {}, 'nobodypaged')) {
              ctx.logger.error(
                { code: 'SB_PAGE_NOBODY_REACHABLE', incident: streamId, level, round },
                'nobody could be paged: every page at every level failed or was skipped',
              );
              deps.metrics?.nobodyReachable();
            }
            continue;
          case 'page':
            break;
        }
        const r = step.person;
        if (step.standsInFor) {
          await activity(
            'stand_in',
            {
              slackUserId: r.slackUserId,
              level: step.level,
              standsInFor: step.standsInFor.slackUserId,
              detail: step.standsInFor.schedule?.slice(0, 300) ?? null,
            },
            `standin:${step.level}:${r.slackUserId}`,
          );
        }
        const outcome = await pager.page({
          person: { slackUserId: r.slackUserId },
          pageId: incidentPageId(streamId, step.level, r.slackUserId, round),
          reportTo: streamId,
          number: wording.number,
          label: wording.label,
          text: wording.text,
          spokenText: wording.spokenText,
          since: facts.triggeredAt,
          callAfterMs: settings.callAfterMs,
          maxPerHour: settings.maxPerHour,
        });
        const reason = UNDELIVERED[outcome];
        if (!reason) continue;
        // Not reached: unreachable for the round, said, and the level planned again without them.
        unreachable.set(r.slackUserId, reason);
        await recordUnreachable(
          streamId,
          round,
          { slackUserId: r.slackUserId, level: step.level, reason },
          ctx,
        );
        await dispatchCommand(
          deps.dispatch(),
          markPageUndeliverable(
            {
              incident: streamId,
              level: step.level,
              round,
              slackUserId: r.slackUserId,
              reason,
              replan: false,
            },
            ctx.now(),
          ),
        );
        foundUnreachable = true;
        break;
      }
      if (!foundUnreachable) return;
    }
    ctx.logger.error({ code: 'SB_PAGE_UNDELIVERABLE', incident: streamId, level }, 'paging gave up planning');
  };

  /**
   * `IncidentPageUndeliverable`: the operators' line and counter, and for a failure found after
   * sending, the timeline's line and the level planned again now (the latest level due in that
   * round that the incident has reached).
   */
  const undeliverable = async (
    recorded: Readonly<{ data: Record<string, unknown> }>,
    ctx: ProcessorContext,
  ) => {
    const d = recorded.data as {
      incident?: unknown;
      level?: unknown;
      round?: unknown;
      slackUserId?: unknown;
      reason?: unknown;
      replan?: unknown;
    };
    if (typeof d.incident !== 'string' || typeof d.slackUserId !== 'string' || typeof d.level !== 'number') {
      return;
    }
    const reason = d.reason as UnreachableReason;
    const round = typeof d.round === 'number' ? d.round : 0;
    ctx.logger.warn(
      { code: 'SB_PAGE_UNDELIVERABLE', reason, incident: d.incident, level: d.level, round },
      'a page could not be delivered: the next person is paged',
    );
    deps.metrics?.undeliverable(reason);
    if (d.replan !== true) return;
    await recordUnreachable(d.incident, round, { slackUserId: d.slackUserId, level: d.level, reason }, ctx);
    const { state } = await readIncidentState(ctx.store, d.incident);
    const at = state.context.incident?.escalationLevel ?? 0;
    const due = ((await readPagingFacts(ctx, d.incident)).due.get(round) ?? []).filter((l) => l <= at);
    const level = due.length ? Math.max(...due) : null;
    if (level !== null) await pageLevel(d.incident, level, round, ctx, true);
  };

  return {
    id: 'incident-paging',
    filter: {
      streamPrefixes: ['incident-', INCIDENT_PAGING_STREAM_PREFIX],
      eventTypes: [
        'IncidentTriggered',
        'IncidentEscalated',
        'IncidentAcknowledged',
        'IncidentUnacknowledged',
        'IncidentResolved',
        'IncidentPagingDue',
        'IncidentPageUndeliverable',
      ],
    },
    async handle(recorded, ctx) {
      if (recorded.kind !== 'event') return;
      if (recorded.type === 'IncidentPageUndeliverable') {
        if (recorded.streamId.startsWith(INCIDENT_PAGING_STREAM_PREFIX)) await undeliverable(recorded, ctx);
        return;
      }
      if (recorded.type === 'IncidentPagingDue') {
        const data = recorded.data as { level?: unknown; round?: unknown };
        if (typeof data.level !== 'number') return;
        const round = typeof data.round === 'number' ? data.round : 0;
        await pageLevel(incidentOfPagingStream(recorded.streamId), data.level, round, ctx);
        return;
      }
      if (!recorded.streamId.startsWith('incident-')) return;
      let event: IncidentEvent;
      try {
        event = parseIncidentEvent(recorded);
      } catch (error) {
        ctx.logger.warn({ err: asError(error) }, 'incident event not understood: no paging change');
        return;
      }
      switch (event.type) {
        case 'IncidentTriggered': {
          const { state } = await readIncidentState(ctx.store, recorded.streamId);
          if (incidentStatus(state) !== 'triggered') return; // acknowledged or resolved since
          await schedule(
            recorded.streamId,
            event.data.escalationLevel,
            event.data.at,
            event.data.service.id,
            ctx,
          );
          return;
        }
        case 'IncidentEscalated': {
          const { state, history } = await readIncidentState(ctx.store, recorded.streamId);
          const service = state.context.incident?.service.id;
          if (incidentStatus(state) !== 'triggered' || !service) return;
          await schedule(recorded.streamId, event.data.level, event.data.at, service, ctx, roundOf(history));
          return;
        }
        case 'IncidentUnacknowledged': {
          // Back to triggered (the service's acknowledgement timeout): page again, from now.
          const { state, history } = await readIncidentState(ctx.store, recorded.streamId);
          const facts = state.context.incident;
          if (incidentStatus(state) !== 'triggered' || !facts) return;
          const round = roundOf(history.filter((m) => m.position <= recorded.position));
          await schedule(
            recorded.streamId,
            facts.escalationLevel,
            event.data.at,
            facts.service.id,
            ctx,
            round,
          );
          return;
        }
        case 'IncidentAcknowledged':
          await stop(recorded.streamId, 'acknowledged', ctx);
          return;
        case 'IncidentResolved':
          await stop(recorded.streamId, 'resolved', ctx);
          return;
        default:
          return;
      }
    },
  };
};

/**
 * The paging rota from the incident service: who is on call at every level of the service's
 * escalation policy at `at` (`GET /oncalls` for the policy over a minute from `at`), each person
 * once per level, mapped to their Slack user by email where one exists; and a schedule's rotation
 * from `at` (`GET /oncalls` for the schedule over the next five weeks, by start, then anyone else
 * its layers name), for someone to stand in for a person on leave. Schedules are kept 5 minutes.
 */
export const createPagingRota = (
  deps: Readonly<{
    pagerduty: Parameters<typeof listOnCallsInRange>[0]['pagerduty'] & Pick<PagerDutyClient, 'getSchedule'>;
    services: Pick<ServiceDirectory, 'all'>;
    identity: Pick<IdentityResolver, 'slackUserFor'>;
    /** What is recorded (no lookup), before asking by email. */
    slackUserOf?: (upstreamUserId: string) => string | null;
    now(): Date;
  }>,
): PagingRota => {
  const slackUserOf = async (id: string) => deps.slackUserOf?.(id) ?? (await deps.identity.slackUserFor(id));
  const schedules = createTtlCache<PagerDutySchedule>(5 * 60_000, () => deps.now().getTime());
  const nameOf = (user: unknown): string | null => {
    const u = user as { summary?: unknown; name?: unknown };
    const name = u.summary ?? u.name ?? null;
    return typeof name === 'string' ? name : null;
  };
  return {
    async onCallAt(serviceId, at) {
      const service = (await deps.services.all()).find((s) => s.id === serviceId);
      if (!service?.escalationPolicyId) return { policyId: null, responders: [] };
      const rows = await listOnCallsInRange(
        { pagerduty: deps.pagerduty },
        { escalationPolicyIds: [service.escalationPolicyId] },
        { since: at, until: new Date(at.getTime() + 60_000) },
      );
      const seen = new Set<string>();
      const responders: OnCallResponder[] = [];
      for (const row of [...rows].sort((a, b) => a.escalation_level - b.escalation_level)) {
        const key = `${row.escalation_level}|${row.user.id}`;
        if (seen.has(key)) continue;
        seen.add(key);
        responders.push({
          upstreamUserId: row.user.id,
          name: nameOf(row.user),
          slackUserId: await slackUserOf(row.user.id),
          level: row.escalation_level,
          schedule: row.schedule ? { id: row.schedule.id, name: row.schedule.summary ?? null } : null,
        });
      }
      return { policyId: service.escalationPolicyId, responders };
    },
    async rotation(scheduleId, policyId, at) {
      const rows = await listOnCallsInRange(
        { pagerduty: deps.pagerduty },
        { scheduleIds: [scheduleId], escalationPolicyIds: [policyId] },
        { since: at, until: new Date(at.getTime() + ROTATION_LOOKAHEAD_MS) },
      );
      const ordered = rows
        .filter((r) => r.schedule?.id === scheduleId)
        .sort((a, b) => (a.start ? Date.parse(a.start) : 0) - (b.start ? Date.parse(b.start) : 0));
      const names = new Map<string, string | null>();
      for (const r of ordered) names.set(r.user.id, nameOf(r.user));
      const schedule = await schedules(scheduleId, () =>
        deps.pagerduty.getSchedule(scheduleId, { since: at.toISOString(), until: at.toISOString() }),
      );
      for (const id of scheduleUserIds(schedule)) if (!names.has(id)) names.set(id, null);
      const out: PlannedPerson[] = [];
      for (const [id, name] of names) {
        out.push({ upstreamUserId: id, name, slackUserId: await slackUserOf(id) });
      }
      return out;
    },
  };
};

/** How far ahead a schedule's rotation is read for someone to stand in. */
const ROTATION_LOOKAHEAD_MS = 35 * 86_400_000;

import { incidentStatus } from '../../machines/incident/decider.ts';
import { hasCode, ValidationError } from '../core/errors.ts';
import type { EventStore } from '../eventStore/eventStore.ts';
import type {
  AssignedIncident,
  EscalationPolicyMention,
  OnCallLookups,
  OnCallShift,
  PersonRef,
  ScheduleOverrideResult,
  ScheduleOverrides,
} from '../lifecycles/ports.ts';
import type { IdentityResolver } from '../people/identity.ts';
import {
  type PagerDutyClient,
  type PagerDutyEscalationPolicy,
  type PagerDutyOnCall,
  type PagerDutySchedule,
  paginate,
} from '../upstream/pagerduty.ts';
import { readIncidentState } from './incidentState.ts';
import type { IncidentReadModels } from './readModels.projection.ts';
import type { ServiceDirectory } from './services.ts';

/**
 * The ports the incident lifecycle offers the others (src/lifecycles/ports.ts): on-call lookups
 * for a person over a time range, and schedule overrides. People come in as Slack users and are
 * mapped to their incident-service user through the identity resolver (the people directory).
 *
 * The incident service answers `GET /oncalls` for at most 90 days at a time and only up to 90 days
 * ahead (https://developer.pagerduty.com/api-reference/3a6b910f11050-list-all-of-the-on-calls:
 * "On-call shifts are limited to 90 days in the future"). So a range is asked in windows of at
 * most 90 days, each window's pages followed through `more`, and a range reaching past the
 * horizon is answered up to it (`knownUntil`). A shift crossing a window's edge comes back in
 * both windows and is kept once.
 *
 * Issue 12 (joining the lifecycles): who could cover a shift (`colleaguesOf`: the schedule's layers
 * and every level of the escalation policy, schedules and policies kept 5 minutes so a DM listing
 * several shifts reads each once), night pages from our own page records (`nightPagesOf`: the read
 * models' pages sent, in the person's incident-service time zone), the policies naming a person
 * (`GET /escalation_policies?user_ids[]=`), the channels subscribed to a rota's services, and the
 * check before an override (`covered`: `GET /oncalls` by schedule and user over the slot; past the
 * 90-day horizon, the schedule's final rota). A leaver's deactivated Slack account still finds their
 * incident-service user through the link the people directory recorded.
 *
 * @example
 * const onCall = createOnCallLookups({ pagerduty, identity, readModels, services, now: () => clock.now() });
 * const { shifts } = await onCall.shiftsOf({ slackUserId: 'U0ANA' }, { since, until });
 */
export const ON_CALL_WINDOW_MS = 90 * 24 * 3600 * 1000;

export type OnCallLookupsDeps = Readonly<{
  pagerduty: Pick<
    PagerDutyClient,
    'listOnCalls' | 'getSchedule' | 'getEscalationPolicy' | 'listEscalationPolicies' | 'getUser'
  >;
  identity: Pick<IdentityResolver, 'resolve' | 'cached' | 'slackUserFor'>;
  /** Who is who (Slack ↔ incident service), the channels subscribed to services, pages sent. */
  readModels: Pick<
    IncidentReadModels,
    'catchUp' | 'slackUserOf' | 'pagesSentTo' | 'channelsForService' | 'openIncidents'
  >;
  /** The incidents' streams (who an open incident is assigned to). */
  store: EventStore;
  services: Pick<ServiceDirectory, 'all'>;
  now(): Date;
  /** Items per page (1-100; default 100). */
  pageSize?: number;
  /** Longest window per request and furthest horizon ahead (default 90 days). */
  windowMs?: number;
  /** How long a schedule, an escalation policy or a user's time zone is kept (default 5 min). */
  cacheMs?: number;
}>;

const parseTime = (t: string | null | undefined): Date | null => (t ? new Date(t) : null);

const toShift = (slackUserId: string, o: PagerDutyOnCall): OnCallShift => ({
  person: { slackUserId },
  escalationPolicy: { id: o.escalation_policy.id, name: o.escalation_policy.summary ?? null },
  level: o.escalation_level,
  schedule: o.schedule ? { id: o.schedule.id, name: o.schedule.summary ?? null } : null,
  start: parseTime(o.start),
  end: parseTime(o.end),
});

const keyOf = (o: PagerDutyOnCall): string =>
  [
    o.user.id,
    o.escalation_policy.id,
    o.escalation_level,
    o.schedule?.id ?? '',
    o.start ?? '',
    o.end ?? '',
  ].join('|');

const startMs = (s: OnCallShift): number => s.start?.getTime() ?? Number.NEGATIVE_INFINITY;

export type OnCallFilters = Readonly<{
  userIds?: readonly string[];
  escalationPolicyIds?: readonly string[];
  scheduleIds?: readonly string[];
}>;

export type OnCallRangeDeps = Readonly<{
  pagerduty: Pick<PagerDutyClient, 'listOnCalls'>;
  /** Items per page (1-100; default 100). */
  pageSize?: number;
  /** Longest window per request and furthest horizon ahead (default 90 days). */
  windowMs?: number;
}>;

/**
 * Every on-call entry matching `filters` over `[since, until]`, as the incident service lists them:
 * asked in windows of at most `windowMs`, each window's pages followed through `more`, an entry
 * crossing a window's edge kept once. The range must already end within the service's horizon.
 * One implementation for the lifecycle ports and `/oncall`.
 *
 * @example
 * const rows = await listOnCallsInRange({ pagerduty }, { escalationPolicyIds: ['PEP0001'] }, { since, until });
 */
export const listOnCallsInRange = async (
  deps: OnCallRangeDeps,
  filters: OnCallFilters,
  range: Readonly<{ since: Date; until: Date }>,
): Promise<PagerDutyOnCall[]> => {
  const windowMs = deps.windowMs ?? ON_CALL_WINDOW_MS;
  const until = range.until.getTime();
  const seen = new Map<string, PagerDutyOnCall>();
  let from = range.since.getTime();
  do {
    const to = Math.min(from + windowMs, until);
    const window = { since: new Date(from).toISOString(), until: new Date(to).toISOString() };
    for await (const o of paginate(
      (page) =>
        deps.pagerduty.listOnCalls({
          ...page,
          ...window,
          ...(filters.userIds ? { userIds: [...filters.userIds] } : {}),
          ...(filters.escalationPolicyIds ? { escalationPolicyIds: [...filters.escalationPolicyIds] } : {}),
          ...(filters.scheduleIds ? { scheduleIds: [...filters.scheduleIds] } : {}),
        }),
      { limit: deps.pageSize ?? 100 },
    )) {
      seen.set(keyOf(o), o);
    }
    from = to;
  } while (from < until);
  return [...seen.values()];
};

/** A value fetched once per key and kept for `ttlMs`; callers asking at the same time share one fetch. */
export const createTtlCache = <T>(ttlMs: number, now: () => number) => {
  const kept = new Map<string, { value: T; at: number }>();
  const inflight = new Map<string, Promise<T>>();
  return async (key: string, fetch: () => Promise<T>): Promise<T> => {
    const hit = kept.get(key);
    if (hit && now() - hit.at < ttlMs) return hit.value;
    const pending = inflight.get(key);
    if (pending) return pending;
    const p = fetch()
      .then((value) => {
        kept.set(key, { value, at: now() });
        if (kept.size > 1_000) kept.delete(kept.keys().next().value as string);
        return value;
      })
      .finally(() => inflight.delete(key));
    inflight.set(key, p);
    return p;
  };
};

/** The incident-service user ids a schedule names: its layers' users in turn order, then any other. */
export const scheduleUserIds = (schedule: PagerDutySchedule): string[] => {
  const ids = [
    ...(schedule.schedule_layers ?? []).flatMap((l) => l.users.map((u) => u.user.id)),
    ...schedule.users.map((u) => u.id),
  ];
  return [...new Set(ids)];
};

const isUserTarget = (t: Readonly<{ type: string }>): boolean =>
  t.type === 'user_reference' || t.type === 'user';
const isScheduleTarget = (t: Readonly<{ type: string }>): boolean =>
  t.type === 'schedule_reference' || t.type === 'schedule';

const NIGHT_FROM_HOUR = 22;
const NIGHT_UNTIL_HOUR = 7;

/** The hour (0-23) of an instant in a time zone. */
const hourIn = (ms: number, format: Intl.DateTimeFormat): number =>
  Number(format.formatToParts(new Date(ms)).find((p) => p.type === 'hour')?.value ?? '0') % 24;

const hourFormat = (timeZone: string): Intl.DateTimeFormat => {
  try {
    return new Intl.DateTimeFormat('en-GB', { timeZone, hour: '2-digit', hourCycle: 'h23' });
  } catch {
    return new Intl.DateTimeFormat('en-GB', { timeZone: 'UTC', hour: '2-digit', hourCycle: 'h23' });
  }
};

/** Whether an instant is at night (22:00-07:00) in the time zone. */
export const isNightIn = (ms: number, timeZone: string): boolean => {
  const hour = hourIn(ms, hourFormat(timeZone));
  return hour >= NIGHT_FROM_HOUR || hour < NIGHT_UNTIL_HOUR;
};

/** Whether `[from, to)` is covered by the union of the intervals (null bounds: unbounded). */
export const coversWhole = (
  intervals: readonly Readonly<{ start: number | null; end: number | null }>[],
  from: number,
  to: number,
): boolean => {
  const sorted = intervals
    .map((i) => ({ start: i.start ?? Number.NEGATIVE_INFINITY, end: i.end ?? Number.POSITIVE_INFINITY }))
    .sort((a, b) => a.start - b.start);
  let reached = from;
  for (const i of sorted) {
    if (i.start > reached) break;
    reached = Math.max(reached, i.end);
    if (reached >= to) return true;
  }
  return reached >= to;
};

/**
 * The incident-service user of a person. A link recorded in the people directory stands for a
 * Slack account that can no longer be looked up (a leaver, deactivated): reads still find them.
 */
const upstreamUserOf = async (
  identity: Pick<IdentityResolver, 'resolve' | 'cached'>,
  slackUserId: string,
): Promise<string> => {
  try {
    return (await identity.resolve(slackUserId, { kind: 'target', slackUserId })).id;
  } catch (error) {
    const known = hasCode(error, 'SB_UNMAPPED_USER') ? await identity.cached(slackUserId) : undefined;
    if (known) return known.externalId;
    throw error;
  }
};

export const createOnCallLookups = (deps: OnCallLookupsDeps): OnCallLookups => {
  const windowMs = deps.windowMs ?? ON_CALL_WINDOW_MS;
  const cacheMs = deps.cacheMs ?? 5 * 60_000;
  const nowMs = () => deps.now().getTime();
  const schedules = createTtlCache<PagerDutySchedule>(cacheMs, nowMs);
  const policies = createTtlCache<PagerDutyEscalationPolicy>(cacheMs, nowMs);
  const timeZones = createTtlCache<string>(60 * 60_000, nowMs);

  // The layers and users, not the rendered rota: a window of nothing.
  const scheduleOf = (id: string) =>
    schedules(id, () => {
      const at = deps.now().toISOString();
      return deps.pagerduty.getSchedule(id, { since: at, until: at });
    });
  const policyOf = (id: string) => policies(id, () => deps.pagerduty.getEscalationPolicy(id));

  /** The Slack user of an incident-service user, from what is recorded, else looked up by email. */
  const slackUserOf = async (upstreamUserId: string): Promise<string | null> =>
    deps.readModels.slackUserOf(upstreamUserId) ?? (await deps.identity.slackUserFor(upstreamUserId));

  const timeZoneOf = async (slackUserId: string): Promise<string> => {
    const link = await deps.identity.cached(slackUserId);
    if (!link) return 'UTC';
    try {
      return await timeZones(link.externalId, async () => {
        const user = await deps.pagerduty.getUser(link.externalId);
        return user.time_zone || 'UTC';
      });
    } catch {
      return 'UTC';
    }
  };

  return {
    async shiftsOf(person, range) {
      const since = range.since.getTime();
      if (Number.isNaN(since) || Number.isNaN(range.until.getTime()) || range.until.getTime() < since) {
        throw new ValidationError('an on-call range needs since ≤ until');
      }
      const userId = await upstreamUserOf(deps.identity, person.slackUserId);
      const horizon = deps.now().getTime() + windowMs;
      // Nothing is published that far ahead yet.
      if (since > horizon) return { shifts: [], knownUntil: range.since };
      const until = Math.min(range.until.getTime(), horizon);
      const rows = await listOnCallsInRange(
        { pagerduty: deps.pagerduty, windowMs, ...(deps.pageSize ? { pageSize: deps.pageSize } : {}) },
        { userIds: [userId] },
        { since: range.since, until: new Date(until) },
      );
      const shifts = rows
        .filter((o) => o.user.id === userId)
        .map((o) => toShift(person.slackUserId, o))
        .sort((a, b) => startMs(a) - startMs(b) || a.level - b.level);
      return { shifts, knownUntil: new Date(until) };
    },

    async colleaguesOf(shift) {
      // Who the rota names, in order: the shift's schedule (turn order), then each level of the policy.
      const upstreamIds: string[] = [];
      if (shift.schedule) upstreamIds.push(...scheduleUserIds(await scheduleOf(shift.schedule.id)));
      const policy = await policyOf(shift.escalationPolicy.id);
      for (const rule of policy.escalation_rules) {
        for (const target of rule.targets) {
          if (isUserTarget(target)) upstreamIds.push(target.id);
          else if (isScheduleTarget(target))
            upstreamIds.push(...scheduleUserIds(await scheduleOf(target.id)));
        }
      }
      await deps.readModels.catchUp();
      const out: PersonRef[] = [];
      const seen = new Set<string>([shift.person.slackUserId]);
      for (const id of new Set(upstreamIds)) {
        const slackUserId = await slackUserOf(id);
        if (!slackUserId || seen.has(slackUserId)) continue;
        seen.add(slackUserId);
        out.push({ slackUserId });
      }
      return out;
    },

    async nightPagesOf(person, since) {
      await deps.readModels.catchUp();
      const from = since.getTime();
      const to = nowMs();
      const pages = deps.readModels.pagesSentTo(person.slackUserId).filter((t) => t >= from && t <= to);
      if (pages.length === 0) return 0;
      const format = hourFormat(await timeZoneOf(person.slackUserId));
      return pages.filter((t) => {
        const hour = hourIn(t, format);
        return hour >= NIGHT_FROM_HOUR || hour < NIGHT_UNTIL_HOUR;
      }).length;
    },

    async policiesNaming(person) {
      const userId = await upstreamUserOf(deps.identity, person.slackUserId);
      const out: EscalationPolicyMention[] = [];
      for await (const policy of paginate(
        (p) => deps.pagerduty.listEscalationPolicies({ ...p, userIds: [userId] }),
        {
          limit: deps.pageSize ?? 100,
          maxItems: 1_000,
        },
      )) {
        policy.escalation_rules.forEach((rule, i) => {
          if (rule.targets.some((t) => isUserTarget(t) && t.id === userId)) {
            out.push({ id: policy.id, name: policy.name ?? null, level: i + 1 });
          }
        });
      }
      return out;
    },

    async openIncidentsOf(person) {
      await deps.readModels.catchUp();
      const found: AssignedIncident[] = [];
      for (const row of deps.readModels.openIncidents()) {
        const { state } = await readIncidentState(deps.store, row.streamId);
        const facts = state.context.incident;
        const status = incidentStatus(state);
        if (!facts || (status !== 'triggered' && status !== 'acknowledged')) continue;
        const theirs = facts.assignees.some(
          (a) => (a.slackUserId ?? deps.readModels.slackUserOf(a.id)) === person.slackUserId,
        );
        if (!theirs) continue;
        found.push({
          number: state.context.link?.number ?? row.number,
          title: facts.title,
          status,
          serviceId: facts.service.id,
          channels: deps.readModels.channelsForService(facts.service.id),
          incident: row.streamId,
        });
      }
      return found.sort((a, b) => (a.number ?? 0) - (b.number ?? 0));
    },

    async channelsFor(target) {
      const all = await deps.services.all();
      let policyIds: Set<string>;
      if ('escalationPolicyId' in target) {
        policyIds = new Set([target.escalationPolicyId]);
      } else {
        const schedule = await scheduleOf(target.scheduleId);
        if (schedule.escalation_policies) {
          policyIds = new Set(schedule.escalation_policies.map((p) => p.id));
        } else {
          // Not said by the service: look at the policies of the services.
          policyIds = new Set();
          for (const id of new Set(all.map((s) => s.escalationPolicyId).filter((id) => id !== null))) {
            const policy = await policyOf(id);
            if (
              policy.escalation_rules.some((r) =>
                r.targets.some((t) => isScheduleTarget(t) && t.id === target.scheduleId),
              )
            ) {
              policyIds.add(id);
            }
          }
        }
      }
      await deps.readModels.catchUp();
      const channels = new Set<string>();
      for (const service of all) {
        if (service.escalationPolicyId && policyIds.has(service.escalationPolicyId)) {
          for (const c of deps.readModels.channelsForService(service.id)) channels.add(c);
        }
      }
      return [...channels];
    },
  };
};

export type ScheduleOverridesDeps = Readonly<{
  pagerduty: Pick<
    PagerDutyClient,
    'createScheduleOverrides' | 'listOnCalls' | 'getSchedule' | 'deleteScheduleOverride'
  >;
  identity: Pick<IdentityResolver, 'resolve'>;
  now(): Date;
  /** Longest window per request and furthest horizon ahead of `GET /oncalls` (default 90 days). */
  windowMs?: number;
}>;

export const createScheduleOverridesPort = (deps: ScheduleOverridesDeps): ScheduleOverrides => ({
  async remove(ref) {
    try {
      return {
        ok: true,
        outcome: await deps.pagerduty.deleteScheduleOverride(ref.scheduleId, ref.overrideId),
      };
    } catch (error) {
      if (hasCode(error, 'SB_NOT_FOUND')) return { ok: true, outcome: 'gone' };
      if (hasCode(error, 'SB_VALIDATION') || hasCode(error, 'SB_UPSTREAM_REJECTED')) {
        return { ok: false, problem: error instanceof Error ? error.message : String(error) };
      }
      throw error;
    }
  },
  async create(overrides) {
    const results: ScheduleOverrideResult[] = [];
    // One request per schedule, the overrides in the order given; answers come back per item.
    const bySchedule = new Map<string, (typeof overrides)[number][]>();
    for (const o of overrides) bySchedule.set(o.scheduleId, [...(bySchedule.get(o.scheduleId) ?? []), o]);
    for (const [scheduleId, list] of bySchedule) {
      const inputs = [];
      for (const o of list) {
        const user = await deps.identity.resolve(o.person.slackUserId, {
          kind: 'target',
          slackUserId: o.person.slackUserId,
        });
        inputs.push({ start: o.start.toISOString(), end: o.end.toISOString(), userId: user.id });
      }
      const answers = await deps.pagerduty.createScheduleOverrides(scheduleId, inputs);
      list.forEach((override, i) => {
        const a = answers[i];
        results.push(
          a && a.status >= 200 && a.status < 300
            ? { override, ok: true, id: a.override?.id ?? null }
            : {
                override,
                ok: false,
                problem: a?.errors?.join('; ') || `the incident service answered ${a?.status ?? 'nothing'}`,
              },
        );
      });
    }
    return results;
  },
  async covered(override) {
    const user = await deps.identity.resolve(override.person.slackUserId, {
      kind: 'target',
      slackUserId: override.person.slackUserId,
    });
    const from = override.start.getTime();
    const to = override.end.getTime();
    if (Number.isNaN(from) || Number.isNaN(to) || to <= from) {
      throw new ValidationError('an override needs start < end');
    }
    const windowMs = deps.windowMs ?? ON_CALL_WINDOW_MS;
    if (to <= deps.now().getTime() + windowMs) {
      // The person's on-call entries on that schedule over the slot (their turns and overrides).
      const rows = await listOnCallsInRange(
        { pagerduty: deps.pagerduty, windowMs },
        { scheduleIds: [override.scheduleId], userIds: [user.id] },
        { since: override.start, until: override.end },
      );
      return coversWhole(
        rows
          .filter((o) => o.user.id === user.id && o.schedule?.id === override.scheduleId)
          .map((o) => ({
            start: o.start ? Date.parse(o.start) : null,
            end: o.end ? Date.parse(o.end) : null,
          })),
        from,
        to,
      );
    }
    // Past what `GET /oncalls` answers (90 days ahead): the schedule's final rota for the slot.
    const schedule = await deps.pagerduty.getSchedule(override.scheduleId, {
      since: override.start.toISOString(),
      until: override.end.toISOString(),
    });
    return coversWhole(
      (schedule.final_schedule?.rendered_schedule_entries ?? [])
        .filter((e) => e.user?.id === user.id)
        .map((e) => ({ start: Date.parse(e.start), end: Date.parse(e.end) })),
      from,
      to,
    );
  },
});

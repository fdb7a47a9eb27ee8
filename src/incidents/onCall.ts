import { ValidationError } from '../core/errors.ts';
import type {
  OnCallLookups,
  OnCallShift,
  ScheduleOverrideResult,
  ScheduleOverrides,
} from '../lifecycles/ports.ts';
import type { IdentityResolver } from '../people/identity.ts';
import { type PagerDutyClient, type PagerDutyOnCall, paginate } from '../upstream/pagerduty.ts';

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
 * @example
 * const onCall = createOnCallLookups({ pagerduty, identity, now: () => clock.now() });
 * const { shifts } = await onCall.shiftsOf({ slackUserId: 'U0ANA' }, { since, until });
 */
export const ON_CALL_WINDOW_MS = 90 * 24 * 3600 * 1000;

export type OnCallLookupsDeps = Readonly<{
  pagerduty: Pick<PagerDutyClient, 'listOnCalls'>;
  identity: Pick<IdentityResolver, 'resolve'>;
  now(): Date;
  /** Items per page (1-100; default 100). */
  pageSize?: number;
  /** Longest window per request and furthest horizon ahead (default 90 days). */
  windowMs?: number;
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
        }),
      { limit: deps.pageSize ?? 100 },
    )) {
      seen.set(keyOf(o), o);
    }
    from = to;
  } while (from < until);
  return [...seen.values()];
};

export const createOnCallLookups = (deps: OnCallLookupsDeps): OnCallLookups => {
  const windowMs = deps.windowMs ?? ON_CALL_WINDOW_MS;
  return {
    async shiftsOf(person, range) {
      const since = range.since.getTime();
      if (Number.isNaN(since) || Number.isNaN(range.until.getTime()) || range.until.getTime() < since) {
        throw new ValidationError('an on-call range needs since ≤ until');
      }
      const user = await deps.identity.resolve(person.slackUserId, {
        kind: 'target',
        slackUserId: person.slackUserId,
      });
      const horizon = deps.now().getTime() + windowMs;
      // Nothing is published that far ahead yet.
      if (since > horizon) return { shifts: [], knownUntil: range.since };
      const until = Math.min(range.until.getTime(), horizon);
      const rows = await listOnCallsInRange(
        { pagerduty: deps.pagerduty, windowMs, ...(deps.pageSize ? { pageSize: deps.pageSize } : {}) },
        { userIds: [user.id] },
        { since: range.since, until: new Date(until) },
      );
      const shifts = rows
        .filter((o) => o.user.id === user.id)
        .map((o) => toShift(person.slackUserId, o))
        .sort((a, b) => startMs(a) - startMs(b) || a.level - b.level);
      return { shifts, knownUntil: new Date(until) };
    },
    // CONTRACT STUB (slice j-paging): the four lookups below.
    async colleaguesOf() {
      throw new ValidationError('onCall.colleaguesOf is not built yet (issue 12, slice j-paging)');
    },
    async nightPagesOf() {
      throw new ValidationError('onCall.nightPagesOf is not built yet (issue 12, slice j-paging)');
    },
    async policiesNaming() {
      throw new ValidationError('onCall.policiesNaming is not built yet (issue 12, slice j-paging)');
    },
    async channelsFor() {
      throw new ValidationError('onCall.channelsFor is not built yet (issue 12, slice j-paging)');
    },
  };
};

export type ScheduleOverridesDeps = Readonly<{
  pagerduty: Pick<PagerDutyClient, 'createScheduleOverrides'>;
  identity: Pick<IdentityResolver, 'resolve'>;
}>;

export const createScheduleOverridesPort = (deps: ScheduleOverridesDeps): ScheduleOverrides => ({
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
  // CONTRACT STUB (slice j-paging): check first through GET /oncalls.
  async covered() {
    throw new ValidationError('scheduleOverrides.covered is not built yet (issue 12, slice j-paging)');
  },
});

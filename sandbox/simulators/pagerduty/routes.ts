import type { Agent, SimModel, SimUser } from './model.ts';
import { SimApiError } from './model.ts';
import { iso, shiftsOverlapping } from './schedules.ts';
import type { SimViews } from './views.ts';
import type { SubscribeOptions, Subscription, WebhookFilter } from './webhooks.ts';

/** REST handlers by operationId. Requests reaching them already passed auth and spec validation. */

type Json = Record<string, unknown>;

export type RouteContext = {
  readonly params: Readonly<Record<string, string>>;
  /** Coerced by the validator: `statuses[]` etc. are arrays. */
  readonly query: Readonly<Record<string, unknown>>;
  readonly body: unknown;
  /** The `From` user for writes that declare the header (already checked to exist). */
  readonly from: SimUser | undefined;
};

export type RouteResult = { readonly status: number; readonly body: unknown };
export type RouteHandler = (ctx: RouteContext) => RouteResult;

export type RouteDeps = {
  readonly model: SimModel;
  readonly views: SimViews;
  /** Incident views as reads currently see them (lags writes when read lag is on). */
  readonly visibleIncidents: () => Json[];
  readonly visibleIncident: (idOrNumber: string) => Json | undefined;
  /** Marks the end of a write, so lagged reads know a new version exists. */
  readonly committed: () => void;
  readonly subscribe: (opts: SubscribeOptions) => Subscription;
  readonly webhookSubscriptions: () => Subscription[];
  /** Incidents one bulk update may name (the OpenAPI's `PUT /incidents`: at most 250, else 413). */
  readonly bulkLimit: number;
};

/** `PUT /incidents`: "A maximum of 250 incidents may be updated at a time" (the vendored OpenAPI). */
export const BULK_UPDATE_MAX = 250;

const MONTH_MS = 30 * 24 * 3600 * 1000;
const MAX_RANGE_MS = 6 * 31 * 24 * 3600 * 1000;

const list = (q: Readonly<Record<string, unknown>>, key: string): string[] | undefined => {
  const v = q[key];
  return Array.isArray(v) ? v.map(String) : v === undefined ? undefined : [String(v)];
};

const invalid = (...errors: string[]) => new SimApiError(400, 'Invalid Input Provided', 2001, errors);

/**
 * Classic offset pagination: limit ≤ 100 (capped), limit + offset ≤ 10,000
 * (https://github.com/PagerDuty/developer-docs/blob/94224391aa3eac8fa73ea6a6af542dee0613d3e8/docs/REST-API/09-Pagination.md).
 */
export const paginate = <T>(items: readonly T[], q: Readonly<Record<string, unknown>>, key: string): Json => {
  const limit = Math.min(typeof q.limit === 'number' ? q.limit : 25, 100);
  const offset = typeof q.offset === 'number' ? q.offset : 0;
  if (limit < 1 || offset < 0) throw invalid('Limit and offset must be positive');
  if (limit + offset > 10_000) throw invalid('Offset + limit must be less than or equal to 10000');
  const page = items.slice(offset, offset + limit);
  return {
    [key]: page,
    limit,
    offset,
    more: offset + page.length < items.length,
    total: q.total === true ? items.length : null,
  };
};

const agentOf = (from: SimUser | undefined): Agent =>
  from ? { kind: 'user', userId: from.id } : { kind: 'system' };

const ref = (x: unknown): { id: string } | undefined =>
  x && typeof x === 'object' && typeof (x as { id?: unknown }).id === 'string'
    ? { id: (x as { id: string }).id }
    : undefined;

const parseTime = (value: unknown, name: string): number | undefined => {
  if (value === undefined) return undefined;
  const t = Date.parse(String(value));
  if (Number.isNaN(t)) throw invalid(`${name} is not a valid date`);
  return t;
};

const sortIncidents = (items: Json[], sortBy: unknown) => {
  const keys = (Array.isArray(sortBy) ? sortBy : []).map(String);
  const specs = keys.length > 0 ? keys : ['created_at'];
  const rank = (j: Json, field: string): number | string => {
    if (field === 'incident_number') return Number(j.incident_number);
    if (field === 'urgency') return j.urgency === 'high' ? 1 : 0;
    return String(j[field] ?? '');
  };
  return [...items].sort((a, b) => {
    for (const s of specs) {
      const [field = 'created_at', dir = 'asc'] = s.split(':');
      const x = rank(a, field);
      const y = rank(b, field);
      if (x !== y) return (x < y ? -1 : 1) * (dir === 'desc' ? -1 : 1);
    }
    return Number(a.incident_number) - Number(b.incident_number);
  });
};

type UpdateBody = {
  id?: string;
  status?: 'acknowledged' | 'resolved' | 'triggered';
  resolution?: string;
  title?: string;
  urgency?: 'high' | 'low';
  priority?: unknown;
  escalation_level?: number;
  assignments?: Array<{ assignee?: { id?: string } }>;
  escalation_policy?: { id?: string };
};

export const createRestRoutes = (deps: RouteDeps): Record<string, RouteHandler> => {
  const { model, views } = deps;

  const applyUpdate = (id: string, body: UpdateBody, from: SimUser | undefined) => {
    const inc = model.requireIncident(id);
    const priority =
      typeof body.priority === 'string'
        ? body.priority
        : body.priority === undefined
          ? undefined
          : ref(body.priority);
    if (body.priority !== undefined && priority === undefined)
      throw invalid('Priority must be an object with an id or a name');
    const assigneeIds = body.assignments
      ?.map((a) => a.assignee?.id)
      .filter((x): x is string => typeof x === 'string');
    model.updateIncident(
      inc,
      {
        ...(body.status ? { status: body.status } : {}),
        ...(body.resolution !== undefined ? { resolution: body.resolution } : {}),
        ...(body.title !== undefined ? { title: body.title } : {}),
        ...(body.urgency ? { urgency: body.urgency } : {}),
        ...(priority !== undefined ? { priority } : {}),
        ...(body.escalation_level !== undefined ? { escalationLevel: body.escalation_level } : {}),
        ...(assigneeIds && assigneeIds.length > 0 ? { assigneeIds } : {}),
        ...(body.escalation_policy?.id ? { escalationPolicyId: body.escalation_policy.id } : {}),
      },
      agentOf(from),
      'api',
    );
    return inc;
  };

  const routes: Record<string, RouteHandler> = {
    listIncidents: ({ query }) => {
      const now = model.nowMs();
      const statuses = list(query, 'statuses[]');
      const serviceIds = list(query, 'service_ids[]');
      const teamIds = list(query, 'team_ids[]');
      const userIds = list(query, 'user_ids[]');
      const urgencies = list(query, 'urgencies[]');
      const key = query.incident_key === undefined ? undefined : String(query.incident_key);
      let since: number | undefined;
      let until: number | undefined;
      if (query.date_range !== 'all') {
        until = parseTime(query.until, 'until') ?? now;
        since = parseTime(query.since, 'since') ?? until - MONTH_MS;
        if (until < since) throw invalid('until must be after since');
        if (until - since > MAX_RANGE_MS) throw invalid('Date range cannot exceed 6 months');
      }
      const items = deps.visibleIncidents().filter((j) => {
        const created = Date.parse(String(j.created_at));
        if (since !== undefined && until !== undefined && (created < since || created > until)) return false;
        if (statuses && !statuses.includes(String(j.status))) return false;
        if (serviceIds && !serviceIds.includes(String((j.service as Json).id))) return false;
        if (teamIds && !(j.teams as Json[]).some((t) => teamIds.includes(String(t.id)))) return false;
        if (urgencies && !urgencies.includes(String(j.urgency))) return false;
        if (key !== undefined && j.incident_key !== key) return false;
        if (userIds) {
          if (j.status === 'resolved') return false;
          if (!(j.assignments as Json[]).some((a) => userIds.includes(String((a.assignee as Json).id))))
            return false;
        }
        return true;
      });
      return { status: 200, body: paginate(sortIncidents(items, query.sort_by), query, 'incidents') };
    },

    getIncident: ({ params }) => {
      const view = deps.visibleIncident(params.id ?? '');
      if (!view) throw new SimApiError(404, 'Not Found', 2100);
      return { status: 200, body: { incident: view } };
    },

    createIncident: ({ body, from }) => {
      const b = (body as { incident: Json }).incident;
      const details = (b.body as { details?: unknown } | undefined)?.details;
      const bridge = b.conference_bridge as
        | { conference_number?: string; conference_url?: string }
        | undefined;
      const assigneeIds = ((b.assignments as Array<{ assignee?: { id?: string } }> | undefined) ?? [])
        .map((a) => a.assignee?.id)
        .filter((x): x is string => typeof x === 'string');
      const inc = model.createIncident({
        serviceId: String((b.service as Json).id),
        title: String(b.title),
        ...(b.urgency ? { urgency: b.urgency as 'high' | 'low' } : {}),
        ...(ref(b.priority) ? { priorityId: ref(b.priority)!.id } : {}),
        ...(details !== undefined
          ? { details: typeof details === 'string' ? details : JSON.stringify(details) }
          : {}),
        ...(typeof b.incident_key === 'string' ? { incidentKey: b.incident_key } : {}),
        ...(assigneeIds.length > 0 ? { assigneeIds } : {}),
        ...(ref(b.escalation_policy) ? { escalationPolicyId: ref(b.escalation_policy)!.id } : {}),
        ...(bridge ? { conferenceBridge: bridge } : {}),
        agent: agentOf(from),
        source: 'api',
      });
      deps.committed();
      return { status: 201, body: { incident: views.incident(inc) } };
    },

    updateIncident: ({ params, body, from }) => {
      const inc = applyUpdate(params.id ?? '', (body as { incident: UpdateBody }).incident, from);
      deps.committed();
      return { status: 200, body: { incident: views.incident(inc) } };
    },

    updateIncidents: ({ body, from }) => {
      const items = (body as { incidents: UpdateBody[] }).incidents;
      if (items.length > deps.bulkLimit)
        throw new SimApiError(413, 'Request Entity Too Large', undefined, [
          `Too many incidents (max ${deps.bulkLimit})`,
        ]);
      // Check every id first so a bad id changes nothing.
      for (const item of items) model.requireIncident(String(item.id));
      const out = items.map((item) => {
        const inc = model.requireIncident(String(item.id));
        // Bulk status changes skip incidents already in that status instead of failing the batch.
        if (item.status && item.status === inc.status) return inc;
        return applyUpdate(String(item.id), item, from);
      });
      deps.committed();
      return { status: 200, body: { incidents: out.map(views.incident) } };
    },

    listIncidentNotes: ({ params }) => {
      const inc = model.requireIncident(params.id ?? '');
      return { status: 200, body: { notes: inc.notes.map(views.note) } };
    },

    createIncidentNote: ({ params, body, from }) => {
      const inc = model.requireIncident(params.id ?? '');
      const note = model.addNote(
        inc,
        String((body as { note: { content: string } }).note.content),
        agentOf(from),
        'api',
      );
      deps.committed();
      return { status: 200, body: { note: views.note(note) } };
    },

    listIncidentAlerts: ({ params, query }) => {
      const inc = model.requireIncident(params.id ?? '');
      const statuses = list(query, 'statuses[]');
      const key = query.alert_key === undefined ? undefined : String(query.alert_key);
      const alerts = inc.alerts
        .filter(
          (a) => (!statuses || statuses.includes(a.status)) && (key === undefined || a.alertKey === key),
        )
        .map((a) => views.alert(inc, a));
      return { status: 200, body: paginate(alerts, query, 'alerts') };
    },

    listServices: ({ query }) => {
      const q = query.query === undefined ? undefined : String(query.query).toLowerCase();
      const name = query.name === undefined ? undefined : String(query.name);
      const teamIds = list(query, 'team_ids[]');
      const items = [...model.services.values()]
        .filter(
          (s) =>
            (q === undefined || s.name.toLowerCase().includes(q)) && (name === undefined || s.name === name),
        )
        .filter((s) => !teamIds || s.teamIds.some((t) => teamIds.includes(t)))
        .sort((a, b) =>
          query.sort_by === 'name:desc' ? b.name.localeCompare(a.name) : a.name.localeCompare(b.name),
        )
        .map(views.service);
      return { status: 200, body: paginate(items, query, 'services') };
    },

    getService: ({ params }) => {
      const s = model.services.get(params.id ?? '');
      if (!s) throw new SimApiError(404, 'Not Found', 2100);
      return { status: 200, body: { service: views.service(s) } };
    },

    createService: ({ body }) => {
      const b = (body as { service: Json }).service;
      const s = model.createService(
        {
          name: String(b.name),
          escalationPolicyId: String((b.escalation_policy as Json).id),
          ...(typeof b.description === 'string' ? { description: b.description } : {}),
        },
        { kind: 'system' },
        'api',
      );
      return { status: 201, body: { service: views.service(s) } };
    },

    updateService: ({ params, body }) => {
      const b = (body as { service: Json }).service;
      const s = model.updateService(
        params.id ?? '',
        {
          ...(typeof b.name === 'string' ? { name: b.name } : {}),
          ...(typeof b.description === 'string' ? { description: b.description } : {}),
          ...(ref(b.escalation_policy) ? { escalationPolicyId: ref(b.escalation_policy)!.id } : {}),
          ...(typeof b.status === 'string' ? { status: b.status as 'active' } : {}),
        },
        { kind: 'system' },
        'api',
      );
      return { status: 200, body: { service: views.service(s) } };
    },

    listOnCalls: ({ query }) => {
      const now = model.nowMs();
      const since = parseTime(query.since, 'since') ?? now;
      const until = parseTime(query.until, 'until') ?? since;
      if (until < since) throw invalid('The until time cannot be before the since time');
      if (until > now + 90 * 24 * 3600 * 1000)
        throw invalid('On-call shifts are limited to 90 days in the future');
      const userIds = list(query, 'user_ids[]');
      const scheduleIds = list(query, 'schedule_ids[]');
      const policyIds = list(query, 'escalation_policy_ids[]');
      const include = list(query, 'include[]') ?? [];
      const rows: Array<{
        userId: string;
        scheduleId: string | null;
        policyId: string;
        level: number;
        start: number | null;
        end: number | null;
      }> = [];
      for (const p of model.policies.values()) {
        if (policyIds && !policyIds.includes(p.id)) continue;
        p.rules.forEach((rule, i) => {
          for (const t of rule.targets) {
            if (t.type === 'user_reference') {
              if (scheduleIds && !scheduleIds.includes('null')) continue;
              rows.push({
                userId: t.id,
                scheduleId: null,
                policyId: p.id,
                level: i + 1,
                start: null,
                end: null,
              });
            } else {
              if (scheduleIds && !scheduleIds.includes(t.id)) continue;
              const s = model.schedules.get(t.id);
              if (!s) continue;
              for (const e of shiftsOverlapping(s, since, until)) {
                rows.push({
                  userId: e.userId,
                  scheduleId: s.id,
                  policyId: p.id,
                  level: i + 1,
                  start: e.start,
                  end: e.end,
                });
              }
            }
          }
        });
      }
      let filtered = rows.filter((r) => !userIds || userIds.includes(r.userId));
      if (query.earliest === true) {
        const seen = new Map<string, (typeof rows)[number]>();
        for (const r of filtered) {
          const k = `${r.policyId}|${r.level}|${r.userId}`;
          const prev = seen.get(k);
          if (!prev || (r.start ?? 0) < (prev.start ?? 0)) seen.set(k, r);
        }
        filtered = [...seen.values()];
      }
      filtered.sort(
        (a, b) =>
          a.level - b.level || (a.start ?? 0) - (b.start ?? 0) || a.policyId.localeCompare(b.policyId),
      );
      const items = filtered.map((r) => {
        const u = model.users.get(r.userId);
        return {
          escalation_policy: include.includes('escalation_policies')
            ? views.escalationPolicy(model.policies.get(r.policyId)!)
            : views.policyRef(r.policyId),
          escalation_level: r.level,
          schedule: r.scheduleId === null ? null : views.scheduleRef(r.scheduleId),
          user: include.includes('users') && u ? views.user(u) : views.userRef(r.userId),
          start: r.start === null ? null : iso(r.start),
          end: r.end === null ? null : iso(r.end),
        };
      });
      return { status: 200, body: paginate(items, query, 'oncalls') };
    },

    getSchedule: ({ params, query }) => {
      const s = model.schedules.get(params.id ?? '');
      if (!s) throw new SimApiError(404, 'Not Found', 2100);
      const TWO_WEEKS = 14 * 24 * 3600 * 1000;
      const sinceQ = parseTime(query.since, 'since');
      const untilQ = parseTime(query.until, 'until');
      const since = sinceQ ?? (untilQ !== undefined ? untilQ - TWO_WEEKS : model.nowMs());
      const until = untilQ ?? since + TWO_WEEKS;
      if (until < since) throw invalid('until must be after since');
      return { status: 200, body: { schedule: views.schedule(s, since, until) } };
    },

    listSchedules: ({ query }) => {
      const q = query.query === undefined ? undefined : String(query.query).toLowerCase();
      const now = model.nowMs();
      const items = [...model.schedules.values()]
        .filter((s) => q === undefined || s.name.toLowerCase().includes(q))
        .map((s) => views.schedule(s, now, now));
      return { status: 200, body: paginate(items, query, 'schedules') };
    },

    deleteScheduleOverride: ({ params }) => {
      const outcome = model.deleteOverride(params.id ?? '', params.override_id ?? '');
      return { status: outcome === 'deleted' ? 204 : 200, body: undefined };
    },

    createScheduleOverride: ({ params, body }) => {
      if (!model.schedules.has(params.id ?? '')) throw new SimApiError(404, 'Not Found', 2100);
      const overrides = (body as { overrides?: Array<{ start: string; end: string; user: { id: string } }> })
        .overrides;
      if (!overrides || overrides.length === 0) throw invalid('overrides must not be empty');
      const results = overrides.map((o) => {
        try {
          const created = model.createOverride(params.id ?? '', {
            start: o.start,
            end: o.end,
            userId: o.user.id,
          });
          return {
            status: 201,
            override: {
              id: created.id,
              start: created.start,
              end: created.end,
              user: views.userRef(created.userId),
            },
          };
        } catch (err) {
          // The vendor echoes the refused override beside its errors.
          if (err instanceof SimApiError) {
            return {
              status: err.status,
              errors: [...err.errors],
              override: { start: o.start, end: o.end, user: { id: o.user.id, type: 'user_reference' } },
            };
          }
          throw err;
        }
      });
      return { status: 201, body: results };
    },

    getEscalationPolicy: ({ params }) => {
      const p = model.policies.get(params.id ?? '');
      if (!p) throw new SimApiError(404, 'Not Found', 2100);
      return { status: 200, body: { escalation_policy: views.escalationPolicy(p) } };
    },

    listEscalationPolicies: ({ query }) => {
      const q = query.query === undefined ? undefined : String(query.query).toLowerCase();
      // `user_ids[]`: "showing only escalation policies on which any of the users is a target".
      const userIds = list(query, 'user_ids[]');
      const items = [...model.policies.values()]
        .filter((p) => q === undefined || p.name.toLowerCase().includes(q))
        .filter(
          (p) =>
            !userIds ||
            p.rules.some((r) => r.targets.some((t) => t.type === 'user_reference' && userIds.includes(t.id))),
        )
        .map(views.escalationPolicy);
      return { status: 200, body: paginate(items, query, 'escalation_policies') };
    },

    listUsers: ({ query }) => {
      // The vendor documents `query` as a name filter; in practice it is a substring match that
      // also hits emails (https://github.com/martindstone/pagerduty-cli/issues/10). Clients must
      // filter for exact emails.
      const q = query.query === undefined ? undefined : String(query.query).toLowerCase();
      const teamIds = list(query, 'team_ids[]');
      const items = [...model.users.values()]
        .filter(
          (u) => q === undefined || u.name.toLowerCase().includes(q) || u.email.toLowerCase().includes(q),
        )
        .filter((u) => !teamIds || u.teamIds.some((t) => teamIds.includes(t)))
        .sort((a, b) => a.name.localeCompare(b.name))
        .map(views.user);
      return { status: 200, body: paginate(items, query, 'users') };
    },

    getUser: ({ params }) => {
      const u = model.users.get(params.id ?? '');
      if (!u) throw new SimApiError(404, 'Not Found', 2100);
      return { status: 200, body: { user: views.user(u) } };
    },

    getCurrentUser: () => {
      throw new SimApiError(400, 'Invalid Input Provided', 2001, [
        'This endpoint requires a user-level OAuth token; an account API key cannot use it',
      ]);
    },

    listTeams: ({ query }) => {
      const items = [...model.teams.values()].map((t) => ({
        id: t.id,
        type: 'team',
        name: t.name,
        summary: t.name,
        description: t.description ?? '',
        self: views.teamRef(t.id).self,
        html_url: views.teamRef(t.id).html_url,
      }));
      return { status: 200, body: paginate(items, query, 'teams') };
    },

    listPriorities: ({ query }) => {
      const items = [...model.priorities.values()].map((p) => ({
        id: p.id,
        type: 'priority',
        summary: p.name,
        name: p.name,
        description: p.description,
      }));
      return { status: 200, body: paginate(items, query, 'priorities') };
    },

    createWebhookSubscription: ({ body }) => {
      const b = (body as { webhook_subscription: Json }).webhook_subscription;
      const dm = b.delivery_method as {
        url: string;
        custom_headers?: Array<{ name: string; value: string }>;
      };
      const filter = b.filter as { type: WebhookFilter['type']; id?: string };
      if (filter.type !== 'account_reference' && !filter.id)
        throw invalid('filter.id is required for this filter type');
      const sub = deps.subscribe({
        url: dm.url,
        ...(Array.isArray(b.events) ? { events: b.events as string[] } : {}),
        filter: (filter.type === 'account_reference'
          ? { type: 'account_reference' }
          : { type: filter.type, id: filter.id }) as WebhookFilter,
        ...(dm.custom_headers ? { customHeaders: dm.custom_headers } : {}),
        ...(typeof b.description === 'string' ? { description: b.description } : {}),
      });
      return { status: 200, body: { webhook_subscription: subscriptionView(sub, true) } };
    },

    listWebhookSubscriptions: ({ query }) => {
      // `filter_type` / `filter_id` narrow the list to subscriptions with that filter.
      const type = typeof query.filter_type === 'string' ? `${query.filter_type}_reference` : undefined;
      const id = typeof query.filter_id === 'string' ? query.filter_id : undefined;
      const items = deps
        .webhookSubscriptions()
        .filter(
          (s) =>
            (type === undefined || s.filter.type === type) &&
            (id === undefined || ('id' in s.filter && s.filter.id === id)),
        )
        .map((s) => subscriptionView(s, false));
      return { status: 200, body: paginate(items, query, 'webhook_subscriptions') };
    },
  };

  const subscriptionView = (sub: Subscription, withSecret: boolean): Json => ({
    id: sub.id,
    type: 'webhook_subscription',
    active: sub.active,
    delivery_method: {
      id: `${sub.id}-dm`,
      type: 'http_delivery_method',
      url: sub.url,
      // The secret is returned only by the create call.
      secret: withSecret ? (sub.secrets[0] ?? null) : null,
      temporarily_disabled: sub.temporarilyDisabled,
      custom_headers: sub.customHeaders.map((h) => ({
        name: h.name,
        value: withSecret ? h.value : 'redacted',
      })),
    },
    description: sub.description,
    events: sub.events ?? [],
    filter: sub.filter,
  });

  return routes;
};

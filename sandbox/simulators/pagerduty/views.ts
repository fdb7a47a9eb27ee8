import type {
  Agent,
  SimAlert,
  SimEscalationPolicy,
  SimIncident,
  SimModel,
  SimNote,
  SimService,
  SimUser,
} from './model.ts';
import { iso, type RenderedEntry, renderFinal, renderLayer, type SimSchedule } from './schedules.ts';

/** Vendor-shaped JSON for the simulator's resources (the REST API v2 and V3 webhook `data`). */
export type Links = { readonly apiUrl: string; readonly webUrl: string };

type Json = Record<string, unknown>;

export const createViews = (model: SimModel, links: Links) => {
  const self = (path: string) => `${links.apiUrl}${path}`;
  const html = (path: string) => `${links.webUrl}${path}`;

  const userRef = (id: string): Json => ({
    id,
    type: 'user_reference',
    summary: model.users.get(id)?.name ?? null,
    self: self(`/users/${id}`),
    html_url: html(`/users/${id}`),
  });
  const teamRef = (id: string): Json => ({
    id,
    type: 'team_reference',
    summary: model.teams.get(id)?.name ?? null,
    self: self(`/teams/${id}`),
    html_url: html(`/teams/${id}`),
  });
  const serviceRef = (id: string): Json => ({
    id,
    type: 'service_reference',
    summary: model.services.get(id)?.name ?? null,
    self: self(`/services/${id}`),
    html_url: html(`/service-directory/${id}`),
  });
  const policyRef = (id: string): Json => ({
    id,
    type: 'escalation_policy_reference',
    summary: model.policies.get(id)?.name ?? null,
    self: self(`/escalation_policies/${id}`),
    html_url: html(`/escalation_policies/${id}`),
  });
  const scheduleRef = (id: string): Json => ({
    id,
    type: 'schedule_reference',
    summary: model.schedules.get(id)?.name ?? null,
    self: self(`/schedules/${id}`),
    html_url: html(`/schedules/${id}`),
  });
  const priorityRef = (id: string | null): Json | null => {
    if (id === null) return null;
    const p = model.priorities.get(id);
    return {
      id,
      type: 'priority',
      summary: p?.name ?? null,
      name: p?.name ?? null,
      self: self(`/priorities/${id}`),
    };
  };
  const incidentRef = (inc: SimIncident): Json => ({
    id: inc.id,
    type: 'incident_reference',
    summary: `[#${inc.number}] ${inc.title}`,
    self: self(`/incidents/${inc.id}`),
    html_url: html(`/incidents/${inc.id}`),
  });
  const agentRef = (agent: Agent): Json | null =>
    agent.kind === 'user'
      ? userRef(agent.userId)
      : agent.kind === 'service'
        ? serviceRef(agent.serviceId)
        : null;

  const user = (u: SimUser): Json => ({
    id: u.id,
    type: 'user',
    summary: u.name,
    name: u.name,
    email: u.email,
    time_zone: u.timeZone,
    color: 'purple',
    role: u.role,
    job_title: u.jobTitle ?? '',
    invitation_sent: false,
    teams: u.teamIds.map(teamRef),
    contact_methods: [],
    notification_rules: [],
    self: self(`/users/${u.id}`),
    html_url: html(`/users/${u.id}`),
  });

  const service = (s: SimService): Json => ({
    id: s.id,
    type: 'service',
    summary: s.name,
    name: s.name,
    description: s.description,
    status: s.status,
    auto_resolve_timeout: s.autoResolveTimeout,
    acknowledgement_timeout: s.acknowledgementTimeout,
    created_at: s.createdAt,
    escalation_policy: policyRef(s.escalationPolicyId),
    teams: s.teamIds.map(teamRef),
    integrations: [
      {
        id: s.integrationId,
        type: 'events_api_v2_inbound_integration_reference',
        summary: 'Events API v2',
        self: self(`/services/${s.id}/integrations/${s.integrationId}`),
      },
    ],
    incident_urgency_rule: { type: 'constant', urgency: s.defaultUrgency },
    alert_creation: 'create_alerts_and_incidents',
    self: self(`/services/${s.id}`),
    html_url: html(`/service-directory/${s.id}`),
  });

  const incident = (inc: SimIncident): Json => ({
    id: inc.id,
    type: 'incident',
    summary: `[#${inc.number}] ${inc.title}`,
    incident_number: inc.number,
    title: inc.title,
    created_at: inc.createdAt,
    updated_at: inc.updatedAt,
    status: inc.status,
    incident_key: inc.incidentKey,
    service: serviceRef(inc.serviceId),
    assignments: inc.assignments.map((a) => ({ at: a.at, assignee: userRef(a.userId) })),
    assigned_via: inc.assignedVia,
    last_status_change_at: inc.lastStatusChangeAt,
    last_status_change_by: agentRef(inc.lastStatusChangeBy),
    resolved_at: inc.resolvedAt,
    first_trigger_log_entry: inc.logEntries[0]
      ? { id: inc.logEntries[0].id, type: 'trigger_log_entry_reference', summary: inc.logEntries[0].summary }
      : null,
    alert_counts: {
      all: inc.alerts.length,
      triggered: inc.alerts.filter((a) => a.status === 'triggered').length,
      resolved: inc.alerts.filter((a) => a.status === 'resolved').length,
    },
    is_mergeable: true,
    incident_type: { name: 'incident_default' },
    escalation_policy: policyRef(inc.escalationPolicyId),
    teams: inc.teamIds.map(teamRef),
    pending_actions: [],
    acknowledgements: inc.acknowledgements.map((a) => ({ at: a.at, acknowledger: agentRef(a.agent) })),
    priority: priorityRef(inc.priorityId),
    resolve_reason: null,
    conference_bridge: inc.conferenceBridge,
    incidents_responders: [],
    responder_requests: [],
    urgency: inc.urgency,
    self: self(`/incidents/${inc.id}`),
    html_url: html(`/incidents/${inc.id}`),
  });

  /** V3 webhook `data` for incident events, shaped as the vendor's sample `../samples/data-incident.json`. */
  const webhookIncident = (inc: SimIncident): Json => ({
    id: inc.id,
    type: 'incident',
    self: self(`/incidents/${inc.id}`),
    html_url: html(`/incidents/${inc.id}`),
    number: inc.number,
    status: inc.status,
    incident_key: inc.incidentKey,
    created_at: inc.createdAt,
    ...(inc.reopenedAt ? { reopened_at: inc.reopenedAt } : {}),
    title: inc.title,
    incident_type: { name: 'incident_default' },
    service: serviceRef(inc.serviceId),
    assignees: inc.assignments.map((a) => userRef(a.userId)),
    escalation_policy: policyRef(inc.escalationPolicyId),
    teams: inc.teamIds.map(teamRef),
    priority: inc.priorityId
      ? {
          ...priorityRef(inc.priorityId),
          type: 'priority_reference',
          html_url: html('/account/incident_priorities'),
        }
      : null,
    urgency: inc.urgency,
    conference_bridge: inc.conferenceBridge,
    resolve_reason: null,
  });

  const webhookNote = (inc: SimIncident, note: SimNote): Json => ({
    incident: incidentRef(inc),
    id: note.id,
    content: note.content,
    trimmed: false,
    type: 'incident_note',
  });

  const webhookService = (s: SimService): Json => ({
    id: s.id,
    type: 'service',
    summary: s.name,
    self: self(`/services/${s.id}`),
    html_url: html(`/service-directory/${s.id}`),
    alert_creation: 'create_alerts_and_incidents',
    teams: s.teamIds.map(teamRef),
  });

  const note = (n: SimNote): Json => ({
    id: n.id,
    user: n.userId ? userRef(n.userId) : null,
    channel: { summary: 'The PagerDuty website or APIs' },
    content: n.content,
    created_at: n.createdAt,
  });

  const alert = (inc: SimIncident, a: SimAlert): Json => ({
    id: a.id,
    type: 'alert',
    summary: a.summary,
    created_at: a.createdAt,
    status: a.status,
    alert_key: a.alertKey,
    service: serviceRef(inc.serviceId),
    incident: incidentRef(inc),
    suppressed: false,
    severity: a.severity,
    // The live API also returns the event's common fields under `body.cef_details` (source_origin is
    // the event's `payload.source`); the vendored OpenAPI document omits that object.
    body: {
      type: 'alert_body',
      contexts: [],
      details: a.details,
      cef_details: { source_origin: a.source, severity: a.severity, description: a.summary },
    },
    self: self(`/alerts/${a.id}`),
    html_url: html(`/alerts/${a.id}`),
  });

  const entries = (list: RenderedEntry[]) =>
    list.map((e) => ({ start: iso(e.start), end: iso(e.end), user: userRef(e.userId) }));

  const schedule = (s: SimSchedule, since: number, until: number): Json => {
    const userIds = [...new Set(s.layers.flatMap((l) => l.userIds))];
    const overridesOnly: SimSchedule = { ...s, layers: [] };
    return {
      id: s.id,
      type: 'schedule',
      summary: s.name,
      name: s.name,
      time_zone: s.timeZone,
      description: s.description,
      schedule_layers: s.layers.map((l) => ({
        id: l.id,
        name: l.name,
        start: l.start,
        end: l.end ?? null,
        rotation_virtual_start: l.rotationVirtualStart,
        rotation_turn_length_seconds: l.rotationTurnLengthSeconds,
        users: l.userIds.map((id) => ({ user: userRef(id) })),
        restrictions: [],
        rendered_schedule_entries: entries(renderLayer(l, since, until)),
        rendered_coverage_percentage: null,
      })),
      overrides_subschedule: {
        name: 'Overrides',
        rendered_schedule_entries: entries(renderFinal(overridesOnly, since, until)),
      },
      final_schedule: {
        name: 'Final Schedule',
        rendered_schedule_entries: entries(renderFinal(s, since, until)),
      },
      escalation_policies: [...model.policies.values()]
        .filter((p) =>
          p.rules.some((r) => r.targets.some((t) => t.type === 'schedule_reference' && t.id === s.id)),
        )
        .map((p) => policyRef(p.id)),
      users: userIds.map(userRef),
      teams: s.teamIds.map(teamRef),
      self: self(`/schedules/${s.id}`),
      html_url: html(`/schedules/${s.id}`),
    };
  };

  const escalationPolicy = (p: SimEscalationPolicy): Json => ({
    id: p.id,
    type: 'escalation_policy',
    summary: p.name,
    name: p.name,
    description: p.description ?? '',
    num_loops: p.numLoops,
    on_call_handoff_notifications: 'if_has_services',
    escalation_rules: p.rules.map((r) => ({
      id: r.id,
      escalation_delay_in_minutes: r.escalationDelayInMinutes,
      targets: r.targets.map((t) => (t.type === 'user_reference' ? userRef(t.id) : scheduleRef(t.id))),
    })),
    services: [...model.services.values()]
      .filter((s) => s.escalationPolicyId === p.id)
      .map((s) => serviceRef(s.id)),
    teams: p.teamIds.map(teamRef),
    self: self(`/escalation_policies/${p.id}`),
    html_url: html(`/escalation_policies/${p.id}`),
  });

  return {
    userRef,
    teamRef,
    serviceRef,
    policyRef,
    scheduleRef,
    incidentRef,
    agentRef,
    user,
    service,
    incident,
    webhookIncident,
    webhookNote,
    webhookService,
    note,
    alert,
    schedule,
    escalationPolicy,
  };
};

export type SimViews = ReturnType<typeof createViews>;

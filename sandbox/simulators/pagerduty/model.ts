import { randomUUID } from 'node:crypto';
import type { Clock } from '../../../src/core/clock.ts';
import {
  iso,
  onCallAt,
  rotationDescription,
  type SimOverride,
  type SimSchedule,
  type SimScheduleLayer,
} from './schedules.ts';

/**
 * The simulated account: users, teams, schedules, escalation policies, services, priorities,
 * incidents (with alerts, notes, log entries), and the rules that move incidents. Every change
 * is reported through `onChange`, which the simulator turns into V3 webhooks.
 *
 * Rules follow the vendor's documented behaviour (its developer docs,
 * https://github.com/PagerDuty/developer-docs/tree/94224391aa3eac8fa73ea6a6af542dee0613d3e8/docs,
 * and the descriptions in the OpenAPI files in ./specs/):
 * acknowledging or triggering a resolved incident reopens it; resolving a resolved one is refused;
 * an open incident with the same `incident_key` on the service refuses a second create; reassigning
 * puts the incident back to triggered; Events API ack/resolve for an unknown `dedup_key` is dropped.
 */

export type SimUser = {
  readonly id: string;
  name: string;
  email: string;
  timeZone: string;
  role: 'admin' | 'user' | 'limited_user' | 'observer' | 'owner' | 'read_only_user';
  jobTitle?: string;
  teamIds: string[];
};
export type SimTeam = { readonly id: string; name: string; description?: string };
export type SimEscalationRule = {
  readonly id: string;
  escalationDelayInMinutes: number;
  targets: Array<{ type: 'user_reference' | 'schedule_reference'; id: string }>;
};
export type SimEscalationPolicy = {
  readonly id: string;
  name: string;
  description?: string;
  numLoops: number;
  rules: SimEscalationRule[];
  teamIds: string[];
};
export type SimService = {
  readonly id: string;
  name: string;
  description: string;
  status: 'active' | 'warning' | 'critical' | 'maintenance' | 'disabled';
  escalationPolicyId: string;
  teamIds: string[];
  /** Events API v2 integration (routing) key: 32 characters. */
  integrationKey: string;
  readonly integrationId: string;
  /** Seconds before an acknowledged incident goes back to triggered; null disables. */
  acknowledgementTimeout: number | null;
  autoResolveTimeout: number | null;
  defaultUrgency: 'high' | 'low';
  readonly createdAt: string;
};
export type SimPriority = { readonly id: string; name: string; description: string };

export type SimNote = { readonly id: string; content: string; userId: string | null; createdAt: string };
export type SimAlert = {
  readonly id: string;
  status: 'triggered' | 'resolved';
  alertKey: string;
  summary: string;
  severity: 'critical' | 'error' | 'warning' | 'info';
  source: string;
  details: Record<string, unknown>;
  createdAt: string;
  resolvedAt: string | null;
};
export type SimLogEntry = {
  readonly id: string;
  readonly type: string;
  readonly at: string;
  readonly agent: Agent;
  readonly summary: string;
};

export type SimIncident = {
  readonly id: string;
  readonly number: number;
  title: string;
  status: 'triggered' | 'acknowledged' | 'resolved';
  urgency: 'high' | 'low';
  priorityId: string | null;
  readonly serviceId: string;
  escalationPolicyId: string;
  /** 1-based; the REST Incident object does not expose it, the simulator keeps it for tests. */
  escalationLevel: number;
  loopsDone: number;
  teamIds: string[];
  readonly incidentKey: string;
  details: string | undefined;
  assignedVia: 'escalation_policy' | 'direct_assignment';
  assignments: Array<{ at: string; userId: string }>;
  acknowledgements: Array<{ at: string; agent: Agent }>;
  readonly createdAt: string;
  updatedAt: string;
  lastStatusChangeAt: string;
  lastStatusChangeBy: Agent;
  resolvedAt: string | null;
  reopenedAt: string | null;
  /** When the current escalation level started (drives automatic escalation). */
  levelStartedAt: number;
  conferenceBridge: { conference_number?: string; conference_url?: string } | null;
  notes: SimNote[];
  alerts: SimAlert[];
  logEntries: SimLogEntry[];
};

/** Who made a change, as webhook `agent` and log-entry agents show it. */
export type Agent =
  | { readonly kind: 'user'; readonly userId: string }
  | { readonly kind: 'service'; readonly serviceId: string }
  | { readonly kind: 'system' };

/** Where the change came from (webhook `client`): REST API, web app, Events API, timers. */
export type ChangeSource = 'api' | 'web' | 'events' | 'system';

export type IncidentChangeType =
  | 'incident.triggered'
  | 'incident.acknowledged'
  | 'incident.unacknowledged'
  | 'incident.resolved'
  | 'incident.reopened'
  | 'incident.reassigned'
  | 'incident.delegated'
  | 'incident.escalated'
  | 'incident.priority_updated'
  | 'incident.annotated';
export type ServiceChangeType = 'service.created' | 'service.updated';
export type WebhookEventType = IncidentChangeType | ServiceChangeType;

export type ModelChange =
  | {
      readonly type: IncidentChangeType;
      readonly incident: SimIncident;
      readonly agent: Agent;
      readonly source: ChangeSource;
      readonly note?: SimNote;
    }
  | {
      readonly type: ServiceChangeType;
      readonly service: SimService;
      readonly agent: Agent;
      readonly source: ChangeSource;
    };

/** A refusal in the vendor's REST error shape; the server answers it as is. */
export class SimApiError extends Error {
  readonly status: number;
  readonly code: number | undefined;
  readonly errors: readonly string[];
  constructor(status: number, message: string, code?: number, errors: readonly string[] = []) {
    super(message);
    this.status = status;
    this.code = code;
    this.errors = errors;
  }
}

const invalid = (...errors: string[]) => new SimApiError(400, 'Invalid Input Provided', 2001, errors);
const notFound = () => new SimApiError(404, 'Not Found', 2100);

export type SimulatorSeed = {
  readonly users: readonly SimUser[];
  readonly teams: readonly SimTeam[];
  readonly schedules: readonly SimSchedule[];
  readonly escalationPolicies: readonly SimEscalationPolicy[];
  readonly services: readonly SimService[];
  readonly priorities: readonly SimPriority[];
};

/**
 * A small realistic account. Payments has a weekly primary rotation (Ana → Ben → Chen), a daily
 * secondary (Dana ↔ Eve) and the manager Frank as level 3; Platform pages Chen directly. Some
 * emails contain others (`juliana.silva@…` contains `ana.silva@…`) so exact email matching is
 * exercised.
 *
 * Both rotations start at `rotationStart`; the simulator passes {@link rotationAnchor} of its
 * clock, so Ana has the primary and Dana the secondary when it starts, whatever the date. Tests
 * that compute shifts by hand on a manual clock pass a fixed anchor instead.
 */
export const defaultSeed = (options: { readonly rotationStart: string }): SimulatorSeed => {
  const { rotationStart } = options;
  return {
    teams: [
      { id: 'PTEAM01', name: 'Payments', description: 'Payments platform' },
      { id: 'PTEAM02', name: 'Platform', description: 'Core platform' },
    ],
    users: [
      {
        id: 'PUSR001',
        name: 'Ana Silva',
        email: 'ana.silva@example.org',
        timeZone: 'Europe/Lisbon',
        role: 'user',
        teamIds: ['PTEAM01'],
      },
      {
        id: 'PUSR002',
        name: 'Ben Okafor',
        email: 'ben.okafor@example.org',
        timeZone: 'Europe/London',
        role: 'user',
        teamIds: ['PTEAM01'],
      },
      {
        id: 'PUSR003',
        name: 'Chen Wei',
        email: 'chen.wei@example.org',
        timeZone: 'Asia/Singapore',
        role: 'user',
        teamIds: ['PTEAM01', 'PTEAM02'],
      },
      {
        id: 'PUSR004',
        name: 'Dana Kowalski',
        email: 'dana.kowalski@example.org',
        timeZone: 'Europe/Warsaw',
        role: 'user',
        teamIds: ['PTEAM01'],
      },
      {
        id: 'PUSR005',
        name: 'Eve Martin',
        email: 'eve.martin@example.org',
        timeZone: 'America/New_York',
        role: 'user',
        teamIds: ['PTEAM01'],
      },
      {
        id: 'PUSR006',
        name: 'Frank Moreau',
        email: 'frank.moreau@example.org',
        timeZone: 'Europe/Paris',
        role: 'admin',
        teamIds: ['PTEAM01', 'PTEAM02'],
      },
      {
        id: 'PUSR007',
        name: 'Juliana Silva',
        email: 'juliana.silva@example.org',
        timeZone: 'America/Sao_Paulo',
        role: 'limited_user',
        teamIds: ['PTEAM02'],
      },
      {
        id: 'PUSR008',
        name: 'Ana Silva (contractor)',
        email: 'ana.silva@example.org.contractor.test',
        timeZone: 'UTC',
        role: 'limited_user',
        teamIds: [],
      },
    ],
    schedules: [
      {
        id: 'PSCH001',
        name: 'Payments Primary',
        timeZone: 'UTC',
        description: `Primary: ${rotationDescription(rotationStart, 'weekly')}`,
        teamIds: ['PTEAM01'],
        overrides: [],
        layers: [
          {
            id: 'PLAY001',
            name: 'Layer 1',
            start: rotationStart,
            rotationVirtualStart: rotationStart,
            rotationTurnLengthSeconds: 7 * 24 * 3600,
            userIds: ['PUSR001', 'PUSR002', 'PUSR003'],
          },
        ],
      },
      {
        id: 'PSCH002',
        name: 'Payments Secondary',
        timeZone: 'UTC',
        description: `Secondary: ${rotationDescription(rotationStart, 'daily')}`,
        teamIds: ['PTEAM01'],
        overrides: [],
        layers: [
          {
            id: 'PLAY002',
            name: 'Layer 1',
            start: rotationStart,
            rotationVirtualStart: rotationStart,
            rotationTurnLengthSeconds: 24 * 3600,
            userIds: ['PUSR004', 'PUSR005'],
          },
        ],
      },
    ],
    escalationPolicies: [
      {
        id: 'PEP0001',
        name: 'Payments',
        description: 'Primary, then secondary, then the manager',
        numLoops: 1,
        teamIds: ['PTEAM01'],
        rules: [
          {
            id: 'PRUL001',
            escalationDelayInMinutes: 30,
            targets: [{ type: 'schedule_reference', id: 'PSCH001' }],
          },
          {
            id: 'PRUL002',
            escalationDelayInMinutes: 30,
            targets: [{ type: 'schedule_reference', id: 'PSCH002' }],
          },
          {
            id: 'PRUL003',
            escalationDelayInMinutes: 30,
            targets: [{ type: 'user_reference', id: 'PUSR006' }],
          },
        ],
      },
      {
        id: 'PEP0002',
        name: 'Platform',
        numLoops: 0,
        teamIds: ['PTEAM02'],
        rules: [
          {
            id: 'PRUL004',
            escalationDelayInMinutes: 15,
            targets: [{ type: 'user_reference', id: 'PUSR003' }],
          },
          {
            id: 'PRUL005',
            escalationDelayInMinutes: 15,
            targets: [{ type: 'user_reference', id: 'PUSR006' }],
          },
        ],
      },
    ],
    services: [
      {
        id: 'PSVC001',
        name: 'Payments API',
        description: 'Card and transfer API',
        status: 'active',
        escalationPolicyId: 'PEP0001',
        teamIds: ['PTEAM01'],
        integrationKey: 'a1b2c3d4e5f60718293a4b5c6d7e8f90',
        integrationId: 'PINT001',
        acknowledgementTimeout: 1800,
        autoResolveTimeout: null,
        defaultUrgency: 'high',
        createdAt: '2026-01-05T09:00:00Z',
      },
      {
        id: 'PSVC002',
        name: 'Payments DB',
        description: 'Primary Postgres cluster',
        status: 'active',
        escalationPolicyId: 'PEP0001',
        teamIds: ['PTEAM01'],
        integrationKey: 'b2c3d4e5f60718293a4b5c6d7e8f90a1',
        integrationId: 'PINT002',
        acknowledgementTimeout: 1800,
        autoResolveTimeout: null,
        defaultUrgency: 'high',
        createdAt: '2026-01-05T09:00:00Z',
      },
      {
        id: 'PSVC003',
        name: 'Platform Gateway',
        description: 'Edge gateway',
        status: 'active',
        escalationPolicyId: 'PEP0002',
        teamIds: ['PTEAM02'],
        integrationKey: 'c3d4e5f60718293a4b5c6d7e8f90a1b2',
        integrationId: 'PINT003',
        acknowledgementTimeout: null,
        autoResolveTimeout: null,
        defaultUrgency: 'low',
        createdAt: '2026-01-05T09:00:00Z',
      },
    ],
    priorities: [
      { id: 'PPRI001', name: 'P1', description: 'Critical: customer-facing outage' },
      { id: 'PPRI002', name: 'P2', description: 'High' },
      { id: 'PPRI003', name: 'P3', description: 'Moderate' },
      { id: 'PPRI004', name: 'P4', description: 'Low' },
      { id: 'PPRI005', name: 'P5', description: 'Informational' },
    ],
  };
};

export const MAX_NOTES_PER_INCIDENT = 2000;

export type ChangeEventRecord = {
  readonly id: string;
  readonly serviceId: string;
  readonly summary: string;
  readonly receivedAt: string;
  readonly body: unknown;
};

/**
 * Everything the account holds, as plain JSON: what `exportState` returns and `importState` takes,
 * so a simulator can be stopped and started again with the same account (the sandbox keeps its
 * world this way). The counters come along, so new incidents, notes and log entries never reuse a
 * number or id the restored ones have. Schedules keep their layers, so a restored account's
 * rotations stay anchored where they were when it was made.
 */
export type SimState = {
  readonly version: 1;
  readonly account: SimulatorSeed;
  readonly incidents: readonly SimIncident[];
  readonly changeEvents: readonly ChangeEventRecord[];
  readonly counters: { readonly incident: number; readonly id: number; readonly override: number };
};

export const createModel = (seed: SimulatorSeed, clock: Clock, onChange: (change: ModelChange) => void) => {
  const clone = <T>(x: T): T => structuredClone(x);
  const users = new Map(seed.users.map((u) => [u.id, clone(u)]));
  const teams = new Map(seed.teams.map((t) => [t.id, clone(t)]));
  const schedules = new Map(seed.schedules.map((s) => [s.id, clone(s)]));
  const policies = new Map(seed.escalationPolicies.map((p) => [p.id, clone(p)]));
  const services = new Map(seed.services.map((s) => [s.id, clone(s)]));
  const priorities = new Map(seed.priorities.map((p) => [p.id, clone(p)]));
  const incidents = new Map<string, SimIncident>();
  const changeEvents: ChangeEventRecord[] = [];
  let incidentSeq = 0;
  let idSeq = 0;
  let overrideSeq = 0;

  const newId = (prefix: string) => `${prefix}${(++idSeq).toString(36).toUpperCase().padStart(6, '0')}`;
  const nowMs = () => clock.now().getTime();
  const nowIso = () => iso(nowMs());

  const userByEmail = (email: string) => {
    const wanted = email.trim().toLowerCase();
    return [...users.values()].find((u) => u.email.toLowerCase() === wanted);
  };
  const requireUser = (id: string) => {
    const u = users.get(id);
    if (!u) throw invalid(`User ${id} not found`);
    return u;
  };
  const requireIncident = (idOrNumber: string): SimIncident => {
    const inc = /^\d+$/.test(idOrNumber)
      ? [...incidents.values()].find((i) => i.number === Number(idOrNumber))
      : incidents.get(idOrNumber);
    if (!inc) throw notFound();
    return inc;
  };
  const requirePolicy = (id: string) => {
    const p = policies.get(id);
    if (!p) throw invalid(`Escalation policy ${id} not found`);
    return p;
  };

  /** Users a policy level pages right now: direct user targets and whoever is on the target schedules. */
  const levelUsers = (policy: SimEscalationPolicy, level: number, at: number): string[] => {
    const rule = policy.rules[level - 1];
    if (!rule) return [];
    const out: string[] = [];
    for (const t of rule.targets) {
      const id =
        t.type === 'user_reference'
          ? t.id
          : (() => {
              const s = schedules.get(t.id);
              return s ? onCallAt(s, at) : undefined;
            })();
      if (id && !out.includes(id)) out.push(id);
    }
    return out;
  };

  const log = (inc: SimIncident, type: string, agent: Agent, summary: string) => {
    inc.logEntries.push({ id: newId('R'), type, at: nowIso(), agent, summary });
  };

  const emit = (
    type: IncidentChangeType,
    inc: SimIncident,
    agent: Agent,
    source: ChangeSource,
    note?: SimNote,
  ) => onChange(note ? { type, incident: inc, agent, source, note } : { type, incident: inc, agent, source });

  const touch = (inc: SimIncident) => {
    inc.updatedAt = nowIso();
  };

  const setStatus = (inc: SimIncident, status: SimIncident['status'], agent: Agent) => {
    inc.status = status;
    inc.lastStatusChangeAt = nowIso();
    inc.lastStatusChangeBy = agent;
  };

  const assignToLevel = (inc: SimIncident, level: number) => {
    const policy = requirePolicy(inc.escalationPolicyId);
    inc.escalationLevel = level;
    inc.levelStartedAt = nowMs();
    inc.assignedVia = 'escalation_policy';
    inc.assignments = levelUsers(policy, level, nowMs()).map((userId) => ({ at: nowIso(), userId }));
  };

  const openWithKey = (serviceId: string, key: string) =>
    [...incidents.values()].find(
      (i) => i.serviceId === serviceId && i.incidentKey === key && i.status !== 'resolved',
    );

  type CreateInput = {
    serviceId: string;
    title: string;
    urgency?: 'high' | 'low';
    priorityId?: string;
    details?: string;
    incidentKey?: string;
    assigneeIds?: readonly string[];
    escalationPolicyId?: string;
    conferenceBridge?: SimIncident['conferenceBridge'];
    agent: Agent;
    source: ChangeSource;
  };

  const createIncident = (input: CreateInput): SimIncident => {
    const service = services.get(input.serviceId);
    if (!service) throw invalid('Service not found');
    if (input.title.trim() === '') throw invalid('Title cannot be empty');
    if (input.assigneeIds && input.assigneeIds.length > 0 && input.escalationPolicyId) {
      throw invalid('Assignments and escalation policy cannot both be specified');
    }
    if (input.incidentKey && openWithKey(service.id, input.incidentKey)) {
      throw invalid('Open incident with matching dedup key already exists on this service');
    }
    if (input.priorityId && !priorities.has(input.priorityId)) throw invalid('Priority not found');
    const policyId = input.escalationPolicyId ?? service.escalationPolicyId;
    requirePolicy(policyId);
    for (const id of input.assigneeIds ?? []) requireUser(id);
    const now = nowIso();
    const inc: SimIncident = {
      id: newId('Q'),
      number: ++incidentSeq,
      title: input.title,
      status: 'triggered',
      urgency: input.urgency ?? service.defaultUrgency,
      priorityId: input.priorityId ?? null,
      serviceId: service.id,
      escalationPolicyId: policyId,
      escalationLevel: 1,
      loopsDone: 0,
      teamIds: [...service.teamIds],
      incidentKey: input.incidentKey ?? randomUUID().replace(/-/g, ''),
      details: input.details,
      assignedVia: 'escalation_policy',
      assignments: [],
      acknowledgements: [],
      createdAt: now,
      updatedAt: now,
      lastStatusChangeAt: now,
      lastStatusChangeBy: input.agent,
      resolvedAt: null,
      reopenedAt: null,
      levelStartedAt: nowMs(),
      conferenceBridge: input.conferenceBridge ?? null,
      notes: [],
      alerts: [],
      logEntries: [],
    };
    if (input.assigneeIds && input.assigneeIds.length > 0) {
      inc.assignedVia = 'direct_assignment';
      // The vendor honours one assignee on create.
      inc.assignments = [{ at: now, userId: input.assigneeIds[0]! }];
    } else {
      assignToLevel(inc, 1);
    }
    incidents.set(inc.id, inc);
    log(
      inc,
      'trigger_log_entry',
      input.agent,
      input.source === 'events' ? 'Triggered through the API' : 'Triggered',
    );
    emit('incident.triggered', inc, input.agent, input.source);
    // Assigning to yourself starts the incident acknowledged (Incident Creation API docs,
    // docs/REST-API/15-Incident-Creation-API.md).
    const self = input.agent.kind === 'user' ? input.agent.userId : undefined;
    if (self && inc.assignedVia === 'direct_assignment' && inc.assignments.some((a) => a.userId === self)) {
      acknowledge(inc, input.agent, input.source);
    }
    return inc;
  };

  const reopen = (inc: SimIncident, agent: Agent, source: ChangeSource) => {
    inc.resolvedAt = null;
    inc.reopenedAt = nowIso();
    inc.acknowledgements = [];
    inc.loopsDone = 0;
    setStatus(inc, 'triggered', agent);
    assignToLevel(inc, 1);
    log(inc, 'reopen_log_entry', agent, 'Reopened');
    emit('incident.reopened', inc, agent, source);
  };

  function acknowledge(inc: SimIncident, agent: Agent, source: ChangeSource) {
    if (inc.status === 'resolved') {
      reopen(inc, agent, source);
      // Reopened to acknowledged: assigned to the acknowledging user.
      if (agent.kind === 'user') {
        inc.assignedVia = 'direct_assignment';
        inc.assignments = [{ at: nowIso(), userId: agent.userId }];
      }
    }
    const already =
      inc.status === 'acknowledged' &&
      inc.acknowledgements.some((a) => JSON.stringify(a.agent) === JSON.stringify(agent));
    if (already) {
      touch(inc);
      return;
    }
    inc.acknowledgements.push({ at: nowIso(), agent });
    setStatus(inc, 'acknowledged', agent);
    touch(inc);
    log(inc, 'acknowledge_log_entry', agent, 'Acknowledged');
    emit('incident.acknowledged', inc, agent, source);
  }

  const resolve = (inc: SimIncident, agent: Agent, source: ChangeSource, resolution?: string) => {
    if (inc.status === 'resolved')
      throw new SimApiError(400, 'Incident Already Resolved', 1001, ['Incident Already Resolved']);
    setStatus(inc, 'resolved', agent);
    inc.resolvedAt = nowIso();
    inc.assignments = [];
    touch(inc);
    for (const a of inc.alerts) {
      if (a.status === 'triggered') {
        a.status = 'resolved';
        a.resolvedAt = nowIso();
      }
    }
    log(inc, 'resolve_log_entry', agent, resolution ? `Resolved: ${resolution}` : 'Resolved');
    emit('incident.resolved', inc, agent, source);
  };

  const unacknowledge = (inc: SimIncident, agent: Agent, source: ChangeSource) => {
    if (inc.status !== 'acknowledged') throw invalid('Incident is not acknowledged');
    inc.acknowledgements = [];
    setStatus(inc, 'triggered', agent);
    inc.levelStartedAt = nowMs();
    touch(inc);
    log(inc, 'unacknowledge_log_entry', agent, 'Unacknowledged');
    emit('incident.unacknowledged', inc, agent, source);
  };

  const escalate = (inc: SimIncident, level: number, agent: Agent, source: ChangeSource) => {
    if (inc.status === 'resolved') throw invalid('Incident Already Resolved');
    const policy = requirePolicy(inc.escalationPolicyId);
    if (!Number.isInteger(level) || level < 1 || level > policy.rules.length) {
      throw invalid(`Escalation level must be between 1 and ${policy.rules.length}`);
    }
    assignToLevel(inc, level);
    inc.acknowledgements = [];
    if (inc.status === 'acknowledged') setStatus(inc, 'triggered', agent);
    touch(inc);
    log(inc, 'escalate_log_entry', agent, `Escalated to level ${level}`);
    emit('incident.escalated', inc, agent, source);
  };

  const reassign = (
    inc: SimIncident,
    to: { userIds: readonly string[] } | { escalationPolicyId: string },
    agent: Agent,
    source: ChangeSource,
  ) => {
    if (inc.status === 'resolved') throw invalid('Incident Already Resolved');
    if ('userIds' in to) {
      if (to.userIds.length === 0) throw invalid('Assignments cannot be empty');
      for (const id of to.userIds) requireUser(id);
      inc.assignedVia = 'direct_assignment';
      inc.assignments = to.userIds.map((userId) => ({ at: nowIso(), userId }));
    } else {
      requirePolicy(to.escalationPolicyId);
      inc.escalationPolicyId = to.escalationPolicyId;
      inc.loopsDone = 0;
      assignToLevel(inc, 1);
    }
    // A reassigned incident pages its new assignees: back to triggered.
    inc.acknowledgements = [];
    if (inc.status === 'acknowledged') setStatus(inc, 'triggered', agent);
    inc.levelStartedAt = nowMs();
    touch(inc);
    log(inc, 'assign_log_entry', agent, 'Reassigned');
    emit('userIds' in to ? 'incident.reassigned' : 'incident.delegated', inc, agent, source);
  };

  const setPriority = (
    inc: SimIncident,
    priority: { id: string } | string,
    agent: Agent,
    source: ChangeSource,
  ) => {
    const found =
      typeof priority === 'string'
        ? [...priorities.values()].find((p) => p.name === priority)
        : priorities.get(priority.id);
    if (!found) throw invalid('Priority not found');
    if (inc.priorityId === found.id) return;
    inc.priorityId = found.id;
    touch(inc);
    log(inc, 'priority_change_log_entry', agent, `Priority changed to ${found.name}`);
    emit('incident.priority_updated', inc, agent, source);
  };

  /**
   * Another alert grouped into an open incident (the service's alert grouping puts related
   * alerts together); the incident keeps its status. Newest last, as `GET /incidents/{id}/alerts`
   * lists them.
   */
  const addAlert = (
    inc: SimIncident,
    input: { summary: string; severity?: SimAlert['severity']; source?: string },
  ): SimAlert => {
    const alert: SimAlert = {
      id: newId('A'),
      status: 'triggered',
      alertKey: randomUUID().replace(/-/g, ''),
      summary: input.summary,
      severity: input.severity ?? 'error',
      source: input.source ?? 'monitoring',
      details: {},
      createdAt: nowIso(),
      resolvedAt: null,
    };
    inc.alerts.push(alert);
    touch(inc);
    return alert;
  };

  const addNote = (inc: SimIncident, content: string, agent: Agent, source: ChangeSource): SimNote => {
    if (content.trim() === '') throw invalid('Note content cannot be empty');
    if (inc.notes.length >= MAX_NOTES_PER_INCIDENT) throw invalid('Incident has too many notes');
    const note: SimNote = {
      id: newId('N'),
      content,
      userId: agent.kind === 'user' ? agent.userId : null,
      createdAt: nowIso(),
    };
    inc.notes.push(note);
    touch(inc);
    log(inc, 'annotate_log_entry', agent, 'Note added');
    emit('incident.annotated', inc, agent, source, note);
    return note;
  };

  type UpdateInput = {
    status?: 'acknowledged' | 'resolved' | 'triggered';
    resolution?: string;
    title?: string;
    urgency?: 'high' | 'low';
    priority?: { id: string } | string;
    escalationLevel?: number;
    assigneeIds?: readonly string[];
    escalationPolicyId?: string;
  };

  /** `PUT /incidents/{id}` semantics: several changes in one request, status last. */
  const updateIncident = (inc: SimIncident, input: UpdateInput, agent: Agent, source: ChangeSource) => {
    if (input.assigneeIds && input.assigneeIds.length > 0 && input.escalationPolicyId) {
      throw invalid('Assignments and escalation policy cannot both be specified');
    }
    if (input.resolution !== undefined && input.status !== 'resolved') {
      throw invalid('Resolution can only be provided when resolving');
    }
    if (input.status === 'resolved' && inc.status === 'resolved') {
      throw new SimApiError(400, 'Incident Already Resolved', 1001, ['Incident Already Resolved']);
    }
    if (input.escalationPolicyId)
      reassign(inc, { escalationPolicyId: input.escalationPolicyId }, agent, source);
    else if (input.assigneeIds && input.assigneeIds.length > 0)
      reassign(inc, { userIds: input.assigneeIds }, agent, source);
    if (input.escalationLevel !== undefined) escalate(inc, input.escalationLevel, agent, source);
    if (input.priority !== undefined) setPriority(inc, input.priority, agent, source);
    if (input.urgency && input.urgency !== inc.urgency) {
      inc.urgency = input.urgency;
      touch(inc);
      log(inc, 'urgency_change_log_entry', agent, `Urgency changed to ${input.urgency}`);
    }
    if (input.title !== undefined && input.title !== inc.title) {
      if (input.title.trim() === '') throw invalid('Title cannot be empty');
      inc.title = input.title;
      touch(inc);
    }
    if (input.status === 'acknowledged') acknowledge(inc, agent, source);
    else if (input.status === 'resolved') resolve(inc, agent, source, input.resolution);
    else if (input.status === 'triggered') {
      if (inc.status === 'resolved') reopen(inc, agent, source);
      else if (inc.status === 'acknowledged') unacknowledge(inc, agent, source);
    }
    return inc;
  };

  // ------------------------------------------------------------ Events API v2

  type EnqueueBody = {
    routing_key: string;
    event_action: 'trigger' | 'acknowledge' | 'resolve';
    dedup_key?: string;
    payload?: {
      summary: string;
      source: string;
      severity: SimAlert['severity'];
      custom_details?: Record<string, unknown>;
    };
    client?: string;
  };

  const serviceByRoutingKey = (key: string) => [...services.values()].find((s) => s.integrationKey === key);

  /** Returns the dedup key; throws SimApiError(400) for events the vendor refuses. */
  const enqueueEvent = (
    body: EnqueueBody,
  ): {
    dedupKey: string;
    outcome: 'triggered' | 'deduplicated' | 'acknowledged' | 'resolved' | 'dropped';
  } => {
    const service = serviceByRoutingKey(body.routing_key);
    if (!service) throw new SimApiError(400, 'Event object is invalid', undefined, ['Invalid routing key']);
    const agent: Agent = { kind: 'service', serviceId: service.id };
    const openAlert = (key: string) => {
      for (const inc of incidents.values()) {
        if (inc.serviceId !== service.id) continue;
        const alert = inc.alerts.find((a) => a.alertKey === key && a.status === 'triggered');
        if (alert) return { inc, alert };
      }
      return undefined;
    };
    if (body.event_action === 'trigger') {
      if (!body.payload)
        throw new SimApiError(400, 'Event object is invalid', undefined, ["'payload' is missing or blank"]);
      const key = body.dedup_key ?? randomUUID().replace(/-/g, '');
      const existing = openAlert(key);
      if (existing) {
        log(existing.inc, 'trigger_log_entry', agent, 'Deduplicated trigger');
        return { dedupKey: key, outcome: 'deduplicated' };
      }
      const inc = createIncident({
        serviceId: service.id,
        title: body.payload.summary,
        incidentKey: key,
        agent,
        source: 'events',
        urgency:
          body.payload.severity === 'info' || body.payload.severity === 'warning'
            ? 'low'
            : service.defaultUrgency,
      });
      inc.alerts.push({
        id: newId('A'),
        status: 'triggered',
        alertKey: key,
        summary: body.payload.summary,
        severity: body.payload.severity,
        source: body.payload.source,
        details: body.payload.custom_details ?? {},
        createdAt: nowIso(),
        resolvedAt: null,
      });
      return { dedupKey: key, outcome: 'triggered' };
    }
    if (!body.dedup_key)
      throw new SimApiError(400, 'Event object is invalid', undefined, ["'dedup_key' is missing or blank"]);
    const found = openAlert(body.dedup_key);
    // Acknowledge/resolve for no open alert is dropped, still answered 202 (Events API v2 docs,
    // https://github.com/PagerDuty/developer-docs/tree/94224391aa3eac8fa73ea6a6af542dee0613d3e8/docs/events-API-v2).
    if (!found) return { dedupKey: body.dedup_key, outcome: 'dropped' };
    if (body.event_action === 'acknowledge') {
      if (found.inc.status === 'triggered') acknowledge(found.inc, agent, 'events');
      return { dedupKey: body.dedup_key, outcome: 'acknowledged' };
    }
    found.alert.status = 'resolved';
    found.alert.resolvedAt = nowIso();
    if (found.inc.alerts.every((a) => a.status === 'resolved') && found.inc.status !== 'resolved') {
      resolve(found.inc, agent, 'events');
    }
    return { dedupKey: body.dedup_key, outcome: 'resolved' };
  };

  const recordChangeEvent = (body: { routing_key: string; payload: { summary: string } }) => {
    const service = serviceByRoutingKey(body.routing_key);
    if (!service) throw new SimApiError(400, 'Event object is invalid', undefined, ['Invalid routing key']);
    changeEvents.push({
      id: newId('C'),
      serviceId: service.id,
      summary: body.payload.summary,
      receivedAt: nowIso(),
      body: clone(body),
    });
  };

  // ------------------------------------------------------------ timers

  /** Automatic escalation of unacknowledged incidents and acknowledgement timeouts, as of now. */
  const runTimers = () => {
    const now = nowMs();
    for (const inc of incidents.values()) {
      if (inc.status === 'acknowledged') {
        const service = services.get(inc.serviceId);
        const last = inc.acknowledgements[inc.acknowledgements.length - 1];
        if (
          service?.acknowledgementTimeout &&
          last &&
          Date.parse(last.at) + service.acknowledgementTimeout * 1000 <= now
        ) {
          unacknowledge(inc, { kind: 'system' }, 'system');
        }
        continue;
      }
      if (inc.status !== 'triggered' || inc.assignedVia !== 'escalation_policy') continue;
      const policy = policies.get(inc.escalationPolicyId);
      const rule = policy?.rules[inc.escalationLevel - 1];
      if (!policy || !rule || inc.levelStartedAt + rule.escalationDelayInMinutes * 60_000 > now) continue;
      if (inc.escalationLevel < policy.rules.length)
        escalate(inc, inc.escalationLevel + 1, { kind: 'system' }, 'system');
      else if (inc.loopsDone < policy.numLoops) {
        inc.loopsDone += 1;
        escalate(inc, 1, { kind: 'system' }, 'system');
      }
    }
  };

  // ------------------------------------------------------------ schedules and services

  const createOverride = (scheduleId: string, input: { start: string; end: string; userId: string }) => {
    const schedule = schedules.get(scheduleId);
    if (!schedule) throw notFound();
    const start = Date.parse(input.start);
    const end = Date.parse(input.end);
    if (Number.isNaN(start) || Number.isNaN(end) || end <= start)
      throw invalid('Override must end after its start');
    requireUser(input.userId);
    const override: SimOverride = {
      id: newId('O'),
      start: iso(start),
      end: iso(end),
      userId: input.userId,
      seq: ++overrideSeq,
    };
    schedule.overrides.push(override);
    return override;
  };

  /**
   * `DELETE /schedules/{id}/overrides/{override_id}` as the vendor documents it: a future override
   * is deleted (`deleted`, 204), one in progress is truncated to now (`truncated`, 200), a past one
   * cannot be removed (400), an unknown one is 404.
   */
  const deleteOverride = (scheduleId: string, overrideId: string): 'deleted' | 'truncated' => {
    const schedule = schedules.get(scheduleId);
    if (!schedule) throw notFound();
    const at = schedule.overrides.findIndex((o) => o.id === overrideId);
    const found = schedule.overrides[at];
    if (!found) throw notFound();
    const now = nowMs();
    if (Date.parse(found.end) <= now) throw invalid('You cannot remove a past override');
    if (Date.parse(found.start) >= now) {
      schedule.overrides.splice(at, 1);
      return 'deleted';
    }
    schedule.overrides[at] = { ...found, end: iso(now) };
    return 'truncated';
  };

  const createService = (
    input: { name: string; escalationPolicyId: string; description?: string; teamIds?: string[] },
    agent: Agent,
    source: ChangeSource,
  ) => {
    if ([...services.values()].some((s) => s.name === input.name))
      throw invalid('Name has already been taken');
    requirePolicy(input.escalationPolicyId);
    const id = newId('S');
    const service: SimService = {
      id,
      name: input.name,
      description: input.description ?? '',
      status: 'active',
      escalationPolicyId: input.escalationPolicyId,
      teamIds: input.teamIds ?? policies.get(input.escalationPolicyId)?.teamIds ?? [],
      integrationKey: randomUUID().replace(/-/g, ''),
      integrationId: newId('I'),
      acknowledgementTimeout: 1800,
      autoResolveTimeout: null,
      defaultUrgency: 'high',
      createdAt: nowIso(),
    };
    services.set(id, service);
    onChange({ type: 'service.created', service, agent, source });
    return service;
  };

  const updateService = (
    id: string,
    input: {
      name?: string;
      description?: string;
      escalationPolicyId?: string;
      status?: SimService['status'];
    },
    agent: Agent,
    source: ChangeSource,
  ) => {
    const service = services.get(id);
    if (!service) throw notFound();
    if (input.escalationPolicyId) {
      requirePolicy(input.escalationPolicyId);
      service.escalationPolicyId = input.escalationPolicyId;
    }
    if (input.name !== undefined) service.name = input.name;
    if (input.description !== undefined) service.description = input.description;
    if (input.status !== undefined) service.status = input.status;
    onChange({ type: 'service.updated', service, agent, source });
    return service;
  };

  const addUser = (input: Omit<SimUser, 'id'> & { id?: string }) => {
    if (userByEmail(input.email)) throw invalid('Email has already been taken');
    const user: SimUser = { ...input, id: input.id ?? newId('U') };
    users.set(user.id, user);
    return user;
  };

  const exportState = (): SimState =>
    clone({
      version: 1,
      account: {
        users: [...users.values()],
        teams: [...teams.values()],
        schedules: [...schedules.values()],
        escalationPolicies: [...policies.values()],
        services: [...services.values()],
        priorities: [...priorities.values()],
      },
      incidents: [...incidents.values()],
      changeEvents,
      counters: { incident: incidentSeq, id: idSeq, override: overrideSeq },
    });

  /** Replaces the whole account with a saved one (emits nothing: call it before any traffic). */
  const importState = (state: SimState) => {
    if (state.version !== 1)
      throw new Error(`simulator: cannot import state version ${String(state.version)}`);
    const fill = <T extends { readonly id: string }>(map: Map<string, T>, list: readonly T[]) => {
      map.clear();
      for (const x of list) map.set(x.id, clone(x));
    };
    fill(users, state.account.users);
    fill(teams, state.account.teams);
    fill(schedules, state.account.schedules);
    fill(policies, state.account.escalationPolicies);
    fill(services, state.account.services);
    fill(priorities, state.account.priorities);
    fill(incidents, state.incidents);
    changeEvents.splice(0, changeEvents.length, ...clone(state.changeEvents));
    incidentSeq = Math.max(incidentSeq, state.counters.incident);
    idSeq = Math.max(idSeq, state.counters.id);
    overrideSeq = Math.max(overrideSeq, state.counters.override);
  };

  const addScheduleLayer = (scheduleId: string, layer: Omit<SimScheduleLayer, 'id'>) => {
    const schedule = schedules.get(scheduleId);
    if (!schedule) throw notFound();
    const full: SimScheduleLayer = { ...layer, id: newId('L') };
    schedule.layers.push(full);
    return full;
  };

  return {
    users,
    teams,
    schedules,
    policies,
    services,
    priorities,
    incidents,
    changeEvents,
    nowMs,
    nowIso,
    userByEmail,
    requireUser,
    requireIncident,
    requirePolicy,
    levelUsers,
    createIncident,
    updateIncident,
    acknowledge,
    resolve,
    unacknowledge,
    escalate,
    reassign,
    setPriority,
    addAlert,
    addNote,
    enqueueEvent,
    recordChangeEvent,
    runTimers,
    createOverride,
    deleteOverride,
    createService,
    updateService,
    addUser,
    addScheduleLayer,
    exportState,
    importState,
  };
};

export type SimModel = ReturnType<typeof createModel>;

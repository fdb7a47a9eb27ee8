import { type SnapshotFrom, transition } from 'xstate';
import { DecisionRejected, machineDecider } from '../shared/machineDecider.ts';
import { exhaustive } from '../shared/messages.ts';
import { decideFailure, decideRetry } from '../shared/upstreamRequest.ts';
import type {
  AcknowledgeIncident,
  AddIncidentNote,
  EscalateIncident,
  IncidentCommand,
  ReassignIncident,
  RecordIncidentCardPosted,
  RecordIncidentCardUpdated,
  RecordIncidentUpstreamCallFailed,
  RecordIncidentUpstreamCallSucceeded,
  RecordIncidentUpstreamSnapshot,
  RecordIncidentWebhook,
  ResolveIncident,
  RetryIncidentUpstreamCall,
  SetIncidentPriority,
  SetIncidentUrgency,
  TriggerIncident,
  UpstreamIncident,
} from './commands.ts';
import { INCIDENT_USER_COMMANDS, incidentCommandDataSchemas } from './commands.ts';
import {
  type Actor,
  type Assignee,
  type FactSource,
  type IncidentEvent,
  incidentEventDataSchemas,
  incidentEventUpcasters,
  type UpstreamAction,
} from './events.ts';
import { incidentMachine, type PendingRequest, pendingRequests } from './machine.ts';
import { incidentKeyForRequest } from './streams.ts';

export type IncidentState = SnapshotFrom<typeof incidentMachine>;

/** Top-level state: before the incident exists upstream, open (triggered or acknowledged), resolved. */
export type IncidentPhase = 'notTriggered' | 'triggering' | 'triggerFailed' | 'open' | 'resolved';
export type IncidentStatus = 'triggered' | 'acknowledged' | 'resolved';

export const incidentPhase = (state: IncidentState): IncidentPhase =>
  typeof state.value === 'string' ? (state.value as IncidentPhase) : 'open';

/** The upstream status as we know it; null before the incident exists upstream. */
export const incidentStatus = (state: IncidentState): IncidentStatus | null => {
  const phase = incidentPhase(state);
  if (phase === 'resolved') return 'resolved';
  if (phase !== 'open') return null;
  return state.matches({ open: { status: 'acknowledged' } }) ? 'acknowledged' : 'triggered';
};

/**
 * The request, if it is still in flight. The upstream-calls reactor checks this (and that
 * `attempt` matches) right before each call: a request that was superseded (resolved from the web
 * app while our acknowledge waited for a retry) must not be sent, or it would reopen the incident.
 */
export const findPendingRequest = (state: IncidentState, requestId: string): PendingRequest | null =>
  pendingRequests(state.context, incidentPhase(state) === 'triggering').find(
    (r) => r.requestId === requestId,
  ) ?? null;

/** Why a command was refused; `details.reason` of the DecisionRejected. */
export type IncidentRejectionReason =
  | 'not_triggered'
  | 'trigger_in_flight'
  | 'trigger_failed'
  | 'already_triggered'
  | 'already_acknowledged'
  | 'already_resolved'
  | 'acknowledge_in_flight'
  | 'resolve_in_flight'
  | 'escalate_in_flight'
  | 'reassign_in_flight'
  | 'set_priority_in_flight'
  | 'set_urgency_in_flight'
  | 'already_set'
  | 'already_assigned'
  | 'already_at_level'
  | 'incident_mismatch'
  | 'unknown_card';

/**
 * `DecisionRejected.details` for incident refusals, enough to tell the user who got there first:
 * "already acknowledged by <@U123> at 02:04" (`by`, `at`), "acknowledge requested by <@U1> at 02:04
 * is in flight" (`requestedBy`, `requestedAt`).
 */
export type IncidentRejectionDetails = Readonly<{
  reason: IncidentRejectionReason;
  command: IncidentCommand['type'];
  state: unknown;
  by?: Actor | null;
  at?: string | null;
  requestedBy?: string;
  requestedAt?: string;
  number?: number | null;
  level?: number;
  assignees?: readonly Assignee[];
  /** already_set: the priority's name or the urgency it already has. */
  value?: string;
}>;

const actorLabel = (actor: Actor | null | undefined): string =>
  actor?.slackUserId ?? actor?.name ?? actor?.upstreamUserId ?? 'someone outside Slack';

const reject = (
  command: IncidentCommand,
  state: IncidentState,
  reason: IncidentRejectionReason,
  message: string,
  extra: Omit<IncidentRejectionDetails, 'reason' | 'command' | 'state'> = {},
): DecisionRejected =>
  new DecisionRejected(`${command.type}: ${message}`, {
    reason,
    command: command.type,
    state: state.value,
    ...extra,
  });

const fold = (state: IncidentState, event: IncidentEvent): IncidentState =>
  transition(incidentMachine, state, event)[0];

const requester = (r: PendingRequest): Actor => ({
  slackUserId: r.by,
  upstreamUserId: r.asUser.id,
  name: r.asUser.name,
});

const sameAssignees = (a: readonly Assignee[], b: readonly Assignee[]): boolean =>
  a.length === b.length && a.every((x) => b.some((y) => y.id === x.id));

// ---------------------------------------------------------------------------------------------
// User commands

/** Refusals shared by every move on an existing incident, with who/when for the reply. */
const requireOpen = (command: IncidentCommand, state: IncidentState): void => {
  const ctx = state.context;
  switch (incidentPhase(state)) {
    case 'notTriggered':
      throw reject(command, state, 'not_triggered', 'the incident does not exist upstream');
    case 'triggering': {
      const r = ctx.trigger?.request;
      throw reject(command, state, 'trigger_in_flight', 'the incident is still being created', {
        ...(r ? { requestedBy: r.by, requestedAt: r.requestedAt } : {}),
      });
    }
    case 'triggerFailed':
      throw reject(command, state, 'trigger_failed', 'creating the incident failed');
    case 'resolved':
      throw reject(
        command,
        state,
        'already_resolved',
        `already resolved by ${actorLabel(ctx.resolved?.by)} at ${ctx.resolved?.at}`,
        { by: ctx.resolved?.by ?? null, at: ctx.resolved?.at ?? null },
      );
    case 'open':
      return;
  }
};

/** Refuses a move because another user's (or the same user's earlier) request is in flight. */
const rejectInFlight = (
  command: IncidentCommand,
  state: IncidentState,
  r: PendingRequest,
): DecisionRejected =>
  reject(
    command,
    state,
    `${r.action}_in_flight` as IncidentRejectionReason, // notes never block, so never 'note'
    `${r.action} requested by ${r.by} at ${r.requestedAt} is in flight`,
    { requestedBy: r.by, requestedAt: r.requestedAt },
  );

const requestBase = (
  command:
    | AcknowledgeIncident
    | ResolveIncident
    | EscalateIncident
    | ReassignIncident
    | AddIncidentNote
    | SetIncidentPriority
    | SetIncidentUrgency
    | TriggerIncident,
) => ({
  requestId: command.metadata.commandId,
  by: command.data.by,
  asUser: command.data.asUser,
  requestedAt: command.metadata.now,
});

const trigger = (command: TriggerIncident, state: IncidentState): IncidentEvent[] => {
  const phase = incidentPhase(state);
  if (phase === 'triggering') throw rejectInFlight(command, state, state.context.trigger!.request);
  if (phase === 'triggerFailed') {
    throw reject(command, state, 'trigger_failed', 'creating this incident failed; trigger a new one');
  }
  if (phase !== 'notTriggered') {
    const number = state.context.link?.number ?? null;
    throw reject(command, state, 'already_triggered', `this stream already holds incident #${number}`, {
      number,
    });
  }
  const d = command.data;
  if (d.title.trim() === '') throw new TypeError('TriggerIncident needs a title');
  return [
    {
      type: 'IncidentTriggerRequested',
      data: {
        ...requestBase(command),
        title: d.title.trim(),
        service: d.service,
        urgency: d.urgency,
        details: d.details,
        incidentKey: incidentKeyForRequest(command.metadata.commandId),
        channel: d.channel,
      },
    },
  ];
};

const acknowledge = (command: AcknowledgeIncident, state: IncidentState): IncidentEvent[] => {
  requireOpen(command, state);
  const ctx = state.context;
  if (incidentStatus(state) === 'acknowledged') {
    throw reject(
      command,
      state,
      'already_acknowledged',
      `already acknowledged by ${actorLabel(ctx.acknowledged?.by)} at ${ctx.acknowledged?.at}`,
      { by: ctx.acknowledged?.by ?? null, at: ctx.acknowledged?.at ?? null },
    );
  }
  if (ctx.statusRequest) throw rejectInFlight(command, state, ctx.statusRequest);
  const bulk = command.data.bulk;
  return [
    { type: 'IncidentAcknowledgeRequested', data: { ...requestBase(command), ...(bulk ? { bulk } : {}) } },
  ];
};

const resolve = (command: ResolveIncident, state: IncidentState): IncidentEvent[] => {
  requireOpen(command, state);
  const ctx = state.context;
  if (ctx.statusRequest) throw rejectInFlight(command, state, ctx.statusRequest);
  return [
    {
      type: 'IncidentResolveRequested',
      data: {
        ...requestBase(command),
        resolution: command.data.resolution,
        ...(command.data.bulk ? { bulk: command.data.bulk } : {}),
      },
    },
  ];
};

const escalate = (command: EscalateIncident, state: IncidentState): IncidentEvent[] => {
  requireOpen(command, state);
  const ctx = state.context;
  if (ctx.statusRequest?.action === 'resolve') throw rejectInFlight(command, state, ctx.statusRequest);
  if (ctx.assignmentRequest) throw rejectInFlight(command, state, ctx.assignmentRequest);
  const current = ctx.incident?.escalationLevel ?? 1;
  const level = command.data.level ?? current + 1;
  if (!Number.isInteger(level) || level < 1) throw new TypeError(`EscalateIncident: bad level ${level}`);
  if (level === current) {
    throw reject(command, state, 'already_at_level', `already at escalation level ${level}`, { level });
  }
  return [{ type: 'IncidentEscalateRequested', data: { ...requestBase(command), level } }];
};

const reassign = (command: ReassignIncident, state: IncidentState): IncidentEvent[] => {
  requireOpen(command, state);
  const ctx = state.context;
  if (command.data.assignees.length === 0)
    throw new TypeError('ReassignIncident needs at least one assignee');
  if (ctx.statusRequest?.action === 'resolve') throw rejectInFlight(command, state, ctx.statusRequest);
  if (ctx.assignmentRequest) throw rejectInFlight(command, state, ctx.assignmentRequest);
  const current = ctx.incident?.assignees ?? [];
  if (sameAssignees(command.data.assignees, current)) {
    throw reject(command, state, 'already_assigned', 'already assigned to them', { assignees: current });
  }
  return [
    {
      type: 'IncidentReassignRequested',
      data: { ...requestBase(command), assignees: command.data.assignees },
    },
  ];
};

const addNote = (command: AddIncidentNote, state: IncidentState): IncidentEvent[] => {
  // Notes are welcome after resolve (post-mortem context); only a missing incident refuses them.
  if (incidentPhase(state) !== 'resolved') requireOpen(command, state);
  const content = command.data.content.trim();
  if (content === '') throw new TypeError('AddIncidentNote needs content');
  return [{ type: 'IncidentNoteRequested', data: { ...requestBase(command), content } }];
};

/** Priority and urgency: one change of either in flight at a time, none while a resolve is. */
const requireFieldChangeable = (command: SetIncidentPriority | SetIncidentUrgency, state: IncidentState) => {
  requireOpen(command, state);
  const ctx = state.context;
  if (ctx.statusRequest?.action === 'resolve') throw rejectInFlight(command, state, ctx.statusRequest);
  if (ctx.fieldRequest) throw rejectInFlight(command, state, ctx.fieldRequest);
};

const setPriority = (command: SetIncidentPriority, state: IncidentState): IncidentEvent[] => {
  requireFieldChangeable(command, state);
  const current = state.context.incident?.priority ?? null;
  const wanted = command.data.priority;
  if (current?.id === wanted.id) {
    throw reject(command, state, 'already_set', `the priority is already ${current.name}`, {
      value: current.name,
    });
  }
  return [{ type: 'IncidentPriorityChangeRequested', data: { ...requestBase(command), priority: wanted } }];
};

const setUrgency = (command: SetIncidentUrgency, state: IncidentState): IncidentEvent[] => {
  requireFieldChangeable(command, state);
  const wanted = command.data.urgency;
  if (state.context.incident?.urgency === wanted) {
    throw reject(command, state, 'already_set', `the urgency is already ${wanted}`, { value: wanted });
  }
  return [{ type: 'IncidentUrgencyChangeRequested', data: { ...requestBase(command), urgency: wanted } }];
};

/** Whether a vendor time is older than the one we hold (both on the vendor's clock). */
const olderThan = (at: string | null | undefined, held: string | null): boolean =>
  at != null && held !== null && Date.parse(at) < Date.parse(held);

/**
 * The priority and urgency an incident snapshot says (a call's answer, a read-back, a webhook's
 * payload) at vendor time `at`, as facts: only what differs from what we hold, and only when the
 * snapshot is not older than the priority (urgency) we hold. A snapshot without a vendor time
 * changes neither (it cannot be ordered).
 */
const alignFields = (
  state: IncidentState,
  inc: UpstreamIncident,
  at: string | null,
  fact: Omit<FactData, 'upstreamAt'>,
  push: (e: IncidentEvent) => void,
): void => {
  const ctx = state.context;
  const current = ctx.incident;
  if (!current || at === null) return;
  const base = { ...fact, upstreamAt: at };
  if (inc.urgency !== current.urgency && !olderThan(at, ctx.upstreamUrgencyAt)) {
    push({ type: 'IncidentUrgencyChanged', data: { ...base, urgency: inc.urgency } });
  }
  if (
    (inc.priority?.id ?? null) !== (current.priority?.id ?? null) &&
    !olderThan(at, ctx.upstreamPriorityAt)
  ) {
    push({ type: 'IncidentPriorityChanged', data: { ...base, priority: inc.priority } });
  }
};

// ---------------------------------------------------------------------------------------------
// Upstream call outcomes (recorded by the upstream-calls reactor, retried by the scheduler)

/** What every status fact carries (see `factBase` in events.ts). */
type FactData = {
  by: Actor | null;
  at: string;
  source: FactSource;
  requestId: string | null;
  webhookEventId: string | null;
  upstreamAt?: string | null;
};

const triggeredFrom = (inc: UpstreamIncident, fact: FactData, fallbackLevel: number): IncidentEvent[] => [
  {
    type: 'IncidentLinked',
    data: { upstreamId: inc.id, number: inc.number, incidentKey: inc.incidentKey, htmlUrl: inc.htmlUrl },
  },
  {
    type: 'IncidentTriggered',
    data: {
      ...fact,
      id: inc.id,
      number: inc.number,
      title: inc.title,
      service: inc.service,
      urgency: inc.urgency,
      priority: inc.priority,
      assignees: inc.assignees,
      escalationLevel: inc.escalationLevel ?? fallbackLevel,
      htmlUrl: inc.htmlUrl,
      createdAt: inc.createdAt,
      ...(inc.alert ? { alert: inc.alert } : {}),
    },
  },
];

const callSucceeded = (
  command: RecordIncidentUpstreamCallSucceeded,
  state: IncidentState,
): IncidentEvent[] => {
  const d = command.data;
  const ctx = state.context;
  const at = command.metadata.now;
  const source: FactSource = d.via === 'events_api' ? 'events_api' : 'slack';
  // The vendor's time of the status it answered with (its clock): how this answer is ordered
  // against webhooks. Our `at` is for display only.
  const upstreamAt = d.incident?.statusChangedAt ?? null;
  const fact = (r: PendingRequest): FactData => ({
    by: requester(r),
    at,
    source,
    requestId: r.requestId,
    webhookEventId: null,
    upstreamAt,
  });
  switch (d.action) {
    case 'trigger': {
      const r = ctx.trigger?.request;
      if (!r || r.requestId !== d.requestId) return [];
      const phase = incidentPhase(state);
      if (phase === 'open' || phase === 'resolved') {
        // The webhook got here first; the response only confirms it.
        if (d.incident && ctx.link && d.incident.id !== ctx.link.upstreamId) {
          throw reject(
            command,
            state,
            'incident_mismatch',
            `created ${d.incident.id} but this is ${ctx.link.upstreamId}`,
          );
        }
        return [];
      }
      // triggering, or triggerFailed when a late success proves the create landed after all.
      if (!d.incident)
        throw new TypeError('RecordIncidentUpstreamCallSucceeded(trigger) needs the created incident');
      const out: IncidentEvent[] = [];
      let s = state;
      const push = (e: IncidentEvent) => {
        out.push(e);
        s = fold(s, e);
      };
      for (const e of triggeredFrom(d.incident, fact(r), 1)) push(e);
      // Upstream starts a self-assigned incident acknowledged.
      alignStatus(s, d.incident.status, fact(r), push);
      return out;
    }
    case 'acknowledge': {
      const r = ctx.statusRequest;
      if (r?.requestId !== d.requestId || r.action !== 'acknowledge') return [];
      return [{ type: 'IncidentAcknowledged', data: fact(r) }];
    }
    case 'resolve': {
      const r = ctx.statusRequest;
      if (r?.requestId !== d.requestId || r.action !== 'resolve') return [];
      return [{ type: 'IncidentResolved', data: { ...fact(r), resolution: r.resolution } }];
    }
    case 'escalate': {
      const r = ctx.assignmentRequest;
      if (r?.requestId !== d.requestId || r.action !== 'escalate') return [];
      return [
        {
          type: 'IncidentEscalated',
          data: {
            ...fact(r),
            level: d.incident?.escalationLevel ?? r.level ?? (ctx.incident?.escalationLevel ?? 1) + 1,
            assignees: d.incident?.assignees ?? [...(ctx.incident?.assignees ?? [])],
          },
        },
      ];
    }
    case 'reassign': {
      const r = ctx.assignmentRequest;
      if (r?.requestId !== d.requestId || r.action !== 'reassign') return [];
      return [
        {
          type: 'IncidentReassigned',
          data: { ...fact(r), assignees: d.incident?.assignees ?? [...(r.assignees ?? [])] },
        },
      ];
    }
    case 'note': {
      const r = ctx.pendingNotes.find((n) => n.requestId === d.requestId);
      if (!r) return [];
      return [
        { type: 'IncidentNoteAdded', data: { ...fact(r), noteId: d.noteId, content: r.content ?? '' } },
      ];
    }
    case 'set_priority': {
      const r = ctx.fieldRequest;
      if (r?.requestId !== d.requestId || r.action !== 'set_priority') return [];
      // The vendor's time of the answer orders it against a change made meanwhile in the web app.
      const when = d.incident?.updatedAt ?? null;
      const priority = d.incident ? d.incident.priority : (r.priority ?? null);
      const superseded = olderThan(when, ctx.upstreamPriorityAt);
      return [
        {
          type: 'IncidentPriorityChanged',
          data: { ...fact(r), upstreamAt: when, priority, ...(superseded ? { superseded } : {}) },
        },
      ];
    }
    case 'set_urgency': {
      const r = ctx.fieldRequest;
      if (r?.requestId !== d.requestId || r.action !== 'set_urgency') return [];
      const when = d.incident?.updatedAt ?? null;
      const urgency = d.incident?.urgency ?? r.urgency ?? 'high';
      const superseded = olderThan(when, ctx.upstreamUrgencyAt);
      return [
        {
          type: 'IncidentUrgencyChanged',
          data: { ...fact(r), upstreamAt: when, urgency, ...(superseded ? { superseded } : {}) },
        },
      ];
    }
    default:
      return exhaustive(d.action, 'upstream action');
  }
};

const callFailed = (command: RecordIncidentUpstreamCallFailed, state: IncidentState): IncidentEvent[] => {
  const d = command.data;
  // Null when not pending any more (confirmed by a webhook, superseded by a resolve) or repeated.
  const data = decideFailure(findPendingRequest(state, d.requestId), d, command.metadata.now);
  return data ? [{ type: 'IncidentUpstreamCallFailed', data }] : [];
};

const retry = (command: RetryIncidentUpstreamCall, state: IncidentState): IncidentEvent[] => {
  const d = command.data;
  // A retry of something no longer pending is dropped here, so it is never sent.
  const data = decideRetry(findPendingRequest(state, d.requestId), d, command.metadata.now);
  return data ? [{ type: 'IncidentUpstreamCallRetried', data }] : [];
};

// ---------------------------------------------------------------------------------------------
// Webhooks

/** Brings our status to what a (non-stale) upstream snapshot says. */
const alignStatus = (
  state: IncidentState,
  upstream: UpstreamIncident['status'],
  fact: FactData,
  push: (e: IncidentEvent) => void,
  reason: string | null = null,
): void => {
  const ours = incidentStatus(state);
  if (ours === null || ours === 'resolved' || ours === upstream) return;
  if (upstream === 'acknowledged') push({ type: 'IncidentAcknowledged', data: fact });
  else if (upstream === 'resolved') push({ type: 'IncidentResolved', data: { ...fact, resolution: null } });
  else push({ type: 'IncidentUnacknowledged', data: { ...fact, reason } });
};

const webhook = (command: RecordIncidentWebhook, state: IncidentState): IncidentEvent[] => {
  const d = command.data;
  if (state.context.webhookEventIds.includes(d.webhookEventId)) return []; // the same webhook again
  if (state.context.link && state.context.link.upstreamId !== d.incidentId) {
    throw reject(
      command,
      state,
      'incident_mismatch',
      `webhook for ${d.incidentId} in ${state.context.link.upstreamId}'s stream`,
    );
  }
  const inc = d.incident;
  if (d.eventType !== 'incident.annotated' && inc === null) {
    throw new TypeError(`RecordIncidentWebhook(${d.eventType}) needs the incident`);
  }
  const out: IncidentEvent[] = [];
  let s = state;
  const push = (e: IncidentEvent) => {
    out.push(e);
    s = fold(s, e);
  };
  const base = {
    at: d.occurredAt,
    source: 'webhook' as const,
    webhookEventId: d.webhookEventId,
    upstreamAt: d.occurredAt,
  };
  const ctx = () => s.context;
  const status = () => incidentStatus(s);
  // Out of order when it occurred before the status we hold did, both on the vendor's clock. Our
  // own clock never orders the vendor's facts: it may be skewed, and our answers arrive late.
  const stale = () => {
    const changed = ctx().upstreamStatusAt;
    return changed !== null && Date.parse(d.occurredAt) < Date.parse(changed);
  };
  let ignored = false;
  const ignore = (reason: 'already_resolved' | 'stale') => {
    ignored = true;
    push({
      type: 'IncidentWebhookIgnored',
      data: {
        webhookEventId: d.webhookEventId,
        eventType: d.eventType,
        occurredAt: d.occurredAt,
        reason,
        at: command.metadata.now,
      },
    });
  };
  /** Our pending request this webhook confirms (same action, done as our mapped user). */
  const confirms = (r: PendingRequest | null | undefined, action: UpstreamAction): PendingRequest | null =>
    r && r.action === action && d.agent?.upstreamUserId === r.asUser.id ? r : null;
  const attributed = (r: PendingRequest | null) => ({
    ...base,
    by: r ? requester(r) : d.agent,
    requestId: r?.requestId ?? null,
  });

  // First sight of the incident (created outside Slack, or our trigger's webhook beat the response).
  const phase = incidentPhase(s);
  if (phase !== 'open' && phase !== 'resolved') {
    if (inc === null) {
      throw reject(
        command,
        state,
        'not_triggered',
        `a note for ${d.incidentId}, which this stream does not hold yet`,
      );
    }
    const trig = ctx().trigger;
    if (trig && inc.incidentKey !== trig.incidentKey) {
      throw reject(
        command,
        state,
        'incident_mismatch',
        `webhook for ${inc.id} (key ${inc.incidentKey}) in a stream waiting for ${trig.incidentKey}`,
      );
    }
    const by = trig ? requester(trig.request) : d.eventType === 'incident.triggered' ? d.agent : null;
    for (const e of triggeredFrom(
      inc,
      {
        ...base,
        at: inc.createdAt,
        upstreamAt: inc.createdAt,
        by,
        requestId: trig?.request.requestId ?? null,
      },
      1,
    )) {
      if (e.type === 'IncidentLinked' && ctx().link) continue;
      push(e);
    }
  }
  const firstSight = out.length > 0;

  switch (d.eventType) {
    case 'incident.triggered':
      if (!firstSight && status() === 'resolved') ignore('already_resolved');
      break;
    case 'incident.acknowledged':
      if (status() === 'resolved') ignore('already_resolved');
      else if (status() === 'acknowledged') break;
      else if (stale()) ignore('stale');
      else
        push({
          type: 'IncidentAcknowledged',
          data: attributed(confirms(ctx().statusRequest, 'acknowledge')),
        });
      break;
    case 'incident.unacknowledged':
      if (status() === 'resolved') ignore('already_resolved');
      else if (status() === 'triggered') break;
      else if (stale()) ignore('stale');
      else
        push({
          type: 'IncidentUnacknowledged',
          data: { ...attributed(null), reason: 'unacknowledged upstream' },
        });
      break;
    case 'incident.resolved':
      if (status() === 'resolved') break;
      if (stale()) ignore('stale');
      else {
        const r = confirms(ctx().statusRequest, 'resolve');
        push({
          type: 'IncidentResolved',
          data: { ...attributed(r), resolution: inc?.resolveReason ?? r?.resolution ?? null },
        });
      }
      break;
    case 'incident.reopened':
      if (status() !== 'resolved') break;
      if (stale()) ignore('stale');
      else push({ type: 'IncidentReopened', data: attributed(null) });
      break;
    case 'incident.escalated':
    case 'incident.reassigned': {
      if (status() === 'resolved') {
        ignore('already_resolved');
        break;
      }
      const escalation = d.eventType === 'incident.escalated';
      const r = confirms(ctx().assignmentRequest, escalation ? 'escalate' : 'reassign');
      const assignees = inc?.assignees ?? [];
      const current = ctx().incident;
      // An echo of a change we already recorded from our own call's response: same assignees, no
      // request pending. V3 webhooks carry no escalation level, so a level change with identical
      // assignees is indistinguishable from an echo (the card then shows the old level). On first
      // sight the snapshot already has the new assignees, so it is not an echo.
      if (
        !firstSight &&
        !r &&
        current &&
        sameAssignees(assignees, current.assignees) &&
        inc?.escalationLevel == null
      ) {
        break;
      }
      if (escalation) {
        const level = inc?.escalationLevel ?? r?.level ?? (current?.escalationLevel ?? 1) + 1;
        push({ type: 'IncidentEscalated', data: { ...attributed(r), level, assignees } });
      } else {
        push({ type: 'IncidentReassigned', data: { ...attributed(r), assignees } });
      }
      break;
    }
    case 'incident.annotated': {
      const note = d.note;
      if (note === null) throw new TypeError('RecordIncidentWebhook(incident.annotated) needs the note');
      if (ctx().notes.some((n) => n.noteId === note.id)) break;
      // Our own note's webhook may beat the call's response: match it by text and author.
      const r =
        ctx().pendingNotes.find(
          (n) => n.content?.trim() === note.content.trim() && d.agent?.upstreamUserId === n.asUser.id,
        ) ?? null;
      push({ type: 'IncidentNoteAdded', data: { ...attributed(r), noteId: note.id, content: note.content } });
      break;
    }
    case 'incident.priority_updated': {
      if (status() === 'resolved') {
        ignore('already_resolved');
        break;
      }
      // Ordered by the vendor's clock against the priority we hold (our answer, an earlier webhook).
      if (olderThan(d.occurredAt, ctx().upstreamPriorityAt)) {
        ignore('stale');
        break;
      }
      const r = confirms(ctx().fieldRequest, 'set_priority');
      const mine = r && r.priority?.id === inc?.priority?.id ? r : null;
      if (inc && (mine || inc.priority?.id !== ctx().incident?.priority?.id)) {
        push({ type: 'IncidentPriorityChanged', data: { ...attributed(mine), priority: inc.priority } });
      }
      break;
    }
    default:
      return exhaustive(d.eventType, 'incident webhook type');
  }

  // The payload is upstream's truth at `occurredAt`: catch up on what we missed (a status change,
  // urgency, priority), unless the webhook was out of order.
  if (inc && !ignored && incidentPhase(s) === 'open' && !stale()) {
    const { upstreamAt: _at, ...fact } = attributed(null);
    alignFields(s, inc, d.occurredAt, fact, push);
    const wanted =
      inc.status === 'acknowledged' ? 'acknowledge' : inc.status === 'resolved' ? 'resolve' : null;
    const r = wanted ? confirms(ctx().statusRequest, wanted) : null;
    alignStatus(s, inc.status, attributed(r), push, `${d.eventType} upstream`);
  }
  return out;
};

// ---------------------------------------------------------------------------------------------
// Read-backs

/**
 * Converges on the incident as read back from the incident service. Applied only when the vendor's
 * `last_status_change_at` is newer than the vendor time of the status we hold: a read that lags
 * behind (eventual consistency) or repeats what we know changes nothing. The facts are attributed
 * to whoever the vendor says made the change, and confirm our pending request when it was us.
 */
const STATUS_RANK: Readonly<Record<IncidentStatus, number>> = { triggered: 0, acknowledged: 1, resolved: 2 };

const snapshotStatus = (command: RecordIncidentUpstreamSnapshot, state: IncidentState): IncidentEvent[] => {
  const { incident: inc, statusChangedBy } = command.data;
  const ctx = state.context;
  const phase = incidentPhase(state);
  if (phase !== 'open' && phase !== 'resolved') return [];
  if (ctx.link && ctx.link.upstreamId !== inc.id) {
    throw reject(command, state, 'incident_mismatch', `read ${inc.id} into ${ctx.link.upstreamId}'s stream`);
  }
  const at = inc.statusChangedAt ?? null;
  if (at === null) return [];
  const known = ctx.upstreamStatusAt;
  const held = incidentStatus(state);
  if (held === inc.status) return [];
  if (known !== null) {
    const read = Date.parse(at);
    const ours = Date.parse(known);
    // Older than what we hold: a read that lags. At the same instant (the vendor's times are often
    // whole seconds; an acknowledge and a resolve land in the same one), a read only moves the
    // status forward (triggered → acknowledged → resolved): a lagging read cannot show a later
    // status than the vendor had, and a reopen within the same instant is left to its webhook.
    if (read < ours) return [];
    if (read === ours && (held === null || STATUS_RANK[inc.status] <= STATUS_RANK[held])) return [];
  }
  const out: IncidentEvent[] = [];
  let s = state;
  const push = (e: IncidentEvent) => {
    out.push(e);
    s = fold(s, e);
  };
  const wanted: UpstreamAction | null =
    inc.status === 'acknowledged' ? 'acknowledge' : inc.status === 'resolved' ? 'resolve' : null;
  const r = ctx.statusRequest;
  const mine =
    r && wanted && r.action === wanted && statusChangedBy?.upstreamUserId === r.asUser.id ? r : null;
  const fact: FactData = {
    by: mine ? requester(mine) : statusChangedBy,
    at,
    source: 'webhook',
    requestId: mine?.requestId ?? null,
    webhookEventId: null,
    upstreamAt: at,
  };
  if (incidentPhase(s) === 'resolved') push({ type: 'IncidentReopened', data: fact });
  if (inc.status === 'resolved') {
    push({
      type: 'IncidentResolved',
      data: { ...fact, resolution: inc.resolveReason ?? mine?.resolution ?? null },
    });
  } else {
    alignStatus(s, inc.status, fact, push, 'changed in the incident service');
  }
  return out;
};

/**
 * A read-back: its status (above), then its priority and urgency, each applied when the vendor's
 * `updated_at` of the read is not older than the vendor time of the value we hold (a change made in
 * the web app sends no webhook for urgency: this read is how the card learns it).
 */
const snapshot = (command: RecordIncidentUpstreamSnapshot, state: IncidentState): IncidentEvent[] => {
  const out = snapshotStatus(command, state);
  let s = state;
  for (const e of out) s = fold(s, e);
  const inc = command.data.incident;
  if (incidentPhase(s) !== 'open' || (s.context.link && s.context.link.upstreamId !== inc.id)) return out;
  alignFields(
    s,
    inc,
    inc.updatedAt ?? null,
    { by: null, at: command.metadata.now, source: 'webhook', requestId: null, webhookEventId: null },
    (e) => {
      out.push(e);
    },
  );
  return out;
};

// ---------------------------------------------------------------------------------------------

const cardPosted = (command: RecordIncidentCardPosted, state: IncidentState): IncidentEvent[] => {
  const { channel, ts } = command.data;
  if (state.context.cards.some((c) => c.channel === channel && c.ts === ts)) return [];
  return [{ type: 'IncidentCardPosted', data: { channel, ts, at: command.metadata.now } }];
};

const cardUpdated = (command: RecordIncidentCardUpdated, state: IncidentState): IncidentEvent[] => {
  const { channel, ts } = command.data;
  if (!state.context.cards.some((c) => c.channel === channel && c.ts === ts)) {
    throw reject(command, state, 'unknown_card', `no card ${channel}/${ts} was recorded`);
  }
  return [{ type: 'IncidentCardUpdated', data: { channel, ts, at: command.metadata.now } }];
};

const toEvents = (command: IncidentCommand, state: IncidentState): IncidentEvent[] => {
  // A user command whose request is already recorded (a retried delivery) changes nothing.
  if (
    INCIDENT_USER_COMMANDS.has(command.type) &&
    state.context.requestIds.includes(command.metadata.commandId)
  )
    return [];
  switch (command.type) {
    case 'TriggerIncident':
      return trigger(command, state);
    case 'AcknowledgeIncident':
      return acknowledge(command, state);
    case 'ResolveIncident':
      return resolve(command, state);
    case 'EscalateIncident':
      return escalate(command, state);
    case 'ReassignIncident':
      return reassign(command, state);
    case 'AddIncidentNote':
      return addNote(command, state);
    case 'SetIncidentPriority':
      return setPriority(command, state);
    case 'SetIncidentUrgency':
      return setUrgency(command, state);
    case 'RecordIncidentUpstreamCallSucceeded':
      return callSucceeded(command, state);
    case 'RecordIncidentUpstreamCallFailed':
      return callFailed(command, state);
    case 'RetryIncidentUpstreamCall':
      return retry(command, state);
    case 'RecordIncidentWebhook':
      return webhook(command, state);
    case 'RecordIncidentUpstreamSnapshot':
      return snapshot(command, state);
    case 'RecordIncidentCardPosted':
      return cardPosted(command, state);
    case 'RecordIncidentCardUpdated':
      return cardUpdated(command, state);
    default:
      return exhaustive(command, 'incident command');
  }
};

/**
 * The incident decider: `evolve` is `incidentMachine`, `decide` proposes events with the rules
 * above and asks the machine whether each is allowed.
 *
 * Every stored event is parsed with its schema (events.ts) when folded, and every command's data
 * with its schema (commands.ts) before it reaches `decide`.
 *
 * Out-of-order webhooks are decided into an explicit `IncidentWebhookIgnored` fact (recorded for
 * the timeline, no effect), which the machine accepts in every state; so no `ignorable` is needed
 * and replay never meets an event the machine refuses. Exact redeliveries decide to `[]`.
 *
 * @example
 * const state = history.reduce(incidentDecider.evolve, incidentDecider.initialState());
 * incidentDecider.decide(ack, state); // [IncidentAcknowledgeRequested] or throws DecisionRejected
 */
export const incidentDecider = machineDecider<typeof incidentMachine, IncidentCommand, IncidentEvent>({
  machine: incidentMachine,
  toEvents,
  events: { schemas: incidentEventDataSchemas, upcasters: incidentEventUpcasters },
  commands: incidentCommandDataSchemas,
});

export type IncidentMove = 'acknowledge' | 'resolve' | 'escalate' | 'reassign' | 'note';
export type IncidentMoves = Readonly<Record<IncidentMove, boolean>>;

const PROBE_USER = { id: '\u0000probe', email: 'probe@invalid', name: null };

/**
 * Which user moves `decide` would accept now: the buttons a card shows. Asks the decider itself,
 * so a card never offers a move the bot would refuse.
 */
export const availableIncidentMoves = (state: IncidentState): IncidentMoves => {
  const metadata = {
    now: state.context.statusChangedAt ?? '1970-01-01T00:00:00.000Z',
    commandId: '\u0000probe',
    actor: 'probe',
  };
  const by = { by: 'probe', asUser: PROBE_USER };
  const allowed = (command: IncidentCommand): boolean => {
    try {
      return incidentDecider.decide(command, state).length > 0;
    } catch (e) {
      if (e instanceof DecisionRejected) return false;
      throw e;
    }
  };
  return {
    acknowledge: allowed({ type: 'AcknowledgeIncident', data: by, metadata }),
    resolve: allowed({ type: 'ResolveIncident', data: { ...by, resolution: null }, metadata }),
    escalate: allowed({ type: 'EscalateIncident', data: { ...by, level: null }, metadata }),
    reassign: allowed({
      type: 'ReassignIncident',
      data: { ...by, assignees: [{ id: '\u0000probe', name: null, slackUserId: null }] },
      metadata,
    }),
    note: allowed({ type: 'AddIncidentNote', data: { ...by, content: 'probe' }, metadata }),
  };
};

/**
 * Whether `decide` would take a priority or an urgency change now: the card shows its selects only
 * then. Asks the decider itself, like `availableIncidentMoves`.
 */
export const availableIncidentFieldMoves = (
  state: IncidentState,
): Readonly<{ priority: boolean; urgency: boolean }> => {
  const metadata = {
    now: state.context.statusChangedAt ?? '1970-01-01T00:00:00.000Z',
    commandId: '\u0000probe',
    actor: 'probe',
  };
  const by = { by: 'probe', asUser: PROBE_USER };
  const allowed = (command: IncidentCommand): boolean => {
    try {
      return incidentDecider.decide(command, state).length > 0;
    } catch (e) {
      if (e instanceof DecisionRejected) return false;
      throw e;
    }
  };
  return {
    priority: allowed({
      type: 'SetIncidentPriority',
      data: { ...by, priority: { id: '\u0000probe', name: 'probe' } },
      metadata,
    }),
    // Either urgency: the one it has is refused as already set, the other is the move.
    urgency:
      allowed({ type: 'SetIncidentUrgency', data: { ...by, urgency: 'high' }, metadata }) ||
      allowed({ type: 'SetIncidentUrgency', data: { ...by, urgency: 'low' }, metadata }),
  };
};

import {
  availableIncidentFieldMoves,
  availableIncidentMoves,
  type IncidentMoves,
  type IncidentPhase,
  type IncidentState,
  type IncidentStatus,
  incidentPhase,
  incidentStatus,
} from '../../../machines/incident/decider.ts';
import type {
  Assignee,
  MonitoringAlert,
  Priority,
  ServiceRef,
  UpstreamAction,
  Urgency,
} from '../../../machines/incident/events.ts';
import {
  type CardRef,
  type NoteInfo,
  pendingRequests,
  type StatusMark,
  type UpstreamFailure,
} from '../../../machines/incident/machine.ts';

/** Who did something, when, learnt from where. */
export type IncidentMark = StatusMark;

export type PendingView = Readonly<{
  requestId: string;
  action: UpstreamAction;
  /** Slack user who asked. */
  by: string;
  requestedAt: string;
  attempt: number;
  /** escalate: target level; reassign: new assignees; note: text. */
  level: number | null;
  assignees: readonly Assignee[] | null;
  content: string | null;
  /** set_priority / set_urgency: the value asked for. */
  priority?: Priority | null;
  urgency?: Urgency | null;
}>;

/** The last failed attempt as the card shows it (the request id stays inside). */
export type FailureView = Omit<UpstreamFailure, 'requestId'>;

/**
 * Everything a card, a list row or App Home shows about one incident, read-only, derived from
 * the folded stream. Block builders take this, never the machine snapshot.
 */
export type IncidentView = Readonly<{
  streamId: string;
  phase: IncidentPhase;
  /** Upstream status as we know it; null before the incident exists upstream. */
  status: IncidentStatus | null;
  upstreamId: string | null;
  number: number | null;
  htmlUrl: string | null;
  title: string;
  /** What the person who triggered it from Slack typed as details (the form's Details field). */
  details: string | null;
  service: ServiceRef | null;
  urgency: Urgency | null;
  priority: Priority | null;
  /** Severity and source of the monitoring alert that opened it (events route); null otherwise. */
  alert: MonitoringAlert | null;
  assignees: readonly Assignee[];
  escalationLevel: number | null;
  /** The Slack trigger request, when it came from Slack. */
  requested: Readonly<{ by: string; at: string }> | null;
  triggered: IncidentMark | null;
  acknowledged: IncidentMark | null;
  resolved: (IncidentMark & Readonly<{ resolution: string | null }>) | null;
  /** User requests in flight upstream, oldest first. */
  pending: readonly PendingView[];
  lastFailure: FailureView | null;
  noteCount: number;
  lastNote: NoteInfo | null;
  /** Which moves the decider accepts now: the buttons to show. */
  moves: IncidentMoves;
  /** Whether the decider takes a priority / urgency change now: the selects to show. */
  fieldMoves?: Readonly<{ priority: boolean; urgency: boolean }>;
  cards: readonly CardRef[];
}>;

/**
 * The view of an incident stream's folded state.
 *
 * @example
 * const state = events.reduce(incidentDecider.evolve, incidentDecider.initialState());
 * const { text, blocks } = incidentCard(toIncidentView(streamId, state));
 */
export const toIncidentView = (streamId: string, state: IncidentState): IncidentView => {
  const ctx = state.context;
  const phase = incidentPhase(state);
  const incident = ctx.incident;
  const trigger = ctx.trigger;
  const pending = pendingRequests(ctx, phase === 'triggering')
    .map(
      (r): PendingView => ({
        requestId: r.requestId,
        action: r.action,
        by: r.by,
        requestedAt: r.requestedAt,
        attempt: r.attempt,
        level: r.level,
        assignees: r.assignees,
        content: r.content,
        ...(r.priority ? { priority: r.priority } : {}),
        ...(r.urgency ? { urgency: r.urgency } : {}),
      }),
    )
    .sort((a, b) => a.requestedAt.localeCompare(b.requestedAt));
  const f = ctx.lastFailure;
  return {
    streamId,
    phase,
    status: incidentStatus(state),
    upstreamId: ctx.link?.upstreamId ?? null,
    number: ctx.link?.number ?? null,
    htmlUrl: ctx.link?.htmlUrl ?? null,
    title: incident?.title ?? trigger?.title ?? '(untitled incident)',
    details: trigger?.details?.trim() ? trigger.details.trim() : null,
    service: incident?.service ?? trigger?.service ?? null,
    urgency: incident?.urgency ?? trigger?.urgency ?? null,
    priority: incident?.priority ?? null,
    alert: incident?.alert ?? null,
    assignees: incident?.assignees ?? [],
    escalationLevel: incident?.escalationLevel ?? null,
    requested: trigger ? { by: trigger.request.by, at: trigger.request.requestedAt } : null,
    triggered: incident
      ? { by: incident.triggeredBy, at: incident.triggeredAt, source: incident.source }
      : null,
    acknowledged: ctx.acknowledged,
    resolved: ctx.resolved,
    pending,
    lastFailure: f
      ? {
          action: f.action,
          attempt: f.attempt,
          maxAttempts: f.maxAttempts,
          code: f.code,
          message: f.message,
          nextAttemptAt: f.nextAttemptAt,
          final: f.final,
          at: f.at,
        }
      : null,
    noteCount: ctx.notes.length,
    lastNote: ctx.notes.at(-1) ?? null,
    moves: availableIncidentMoves(state),
    fieldMoves: availableIncidentFieldMoves(state),
    cards: ctx.cards,
  };
};

import { getShortestPaths } from 'xstate/graph';
import { type IncidentState, incidentPhase } from '../../../machines/incident/decider.ts';
import type { IncidentEvent } from '../../../machines/incident/events.ts';
import { incidentMachine, pendingRequests } from '../../../machines/incident/machine.ts';
import { ANA_ASSIGNEE, BOB_ASSIGNEE, ev, t, WEB_ACTOR } from './fixtures.ts';

/**
 * A short readable key for a state value: `open(acknowledged,resolving,idle)` for the parallel
 * open state (status, statusRequest, assignmentRequest), the plain name otherwise.
 */
export const stateKey = (state: IncidentState): string => {
  const v = state.value;
  if (typeof v === 'string') return v;
  const open = (v as { open: { status: string; statusRequest: string; assignmentRequest: string } }).open;
  return `open(${open.status},${open.statusRequest},${open.assignmentRequest})`;
};

/**
 * One concrete instance of every fact, shaped to fit the snapshot's context (pending request ids,
 * the linked upstream id), so path generation explores the guarded transitions too.
 */
export const sampleEvents = (state: IncidentState): IncidentEvent[] => {
  const ctx = state.context;
  const fresh = `req-${ctx.requestIds.length + 1}`;
  const at = t('10:00');
  const events: IncidentEvent[] = [
    ev.triggerRequested(),
    ev.linked(),
    ev.triggered(),
    ev.ackRequested(fresh, at),
    ev.acknowledged(null, at),
    ev.unacknowledged(`wh-${ctx.webhookEventIds.length + 1}`, at),
    ev.resolveRequested(fresh, at),
    ev.resolvedByWebhook(`wh-${ctx.webhookEventIds.length + 1}`, at),
    ev.reopened(`wh-${ctx.webhookEventIds.length + 1}`, at),
    ev.escalateRequested(fresh, at, (ctx.incident?.escalationLevel ?? 1) + 1),
    ev.escalated(null, at, (ctx.incident?.escalationLevel ?? 1) + 1),
    ev.reassignRequested(fresh, at, [BOB_ASSIGNEE]),
    ev.reassigned(null, at, [ANA_ASSIGNEE]),
    ev.noteRequested(fresh, at),
    ev.noteAdded(null, at, `note-${ctx.notes.length + 1}`),
    {
      type: 'IncidentPriorityChanged',
      data: {
        at,
        source: 'webhook',
        requestId: null,
        webhookEventId: null,
        by: WEB_ACTOR,
        priority: { id: 'PP1', name: 'P1' },
      },
    },
    {
      type: 'IncidentUrgencyChanged',
      data: { at, source: 'webhook', requestId: null, webhookEventId: null, by: WEB_ACTOR, urgency: 'low' },
    },
    ev.webhookIgnored(
      `wh-${ctx.webhookEventIds.length + 1}`,
      'incident.acknowledged',
      at,
      'already_resolved',
    ),
    ev.cardPosted(at, `1700000000.${String(ctx.cards.length + 1).padStart(6, '0')}`),
  ];
  if (ctx.cards[0]) {
    events.push({
      type: 'IncidentCardUpdated',
      data: { channel: ctx.cards[0].channel, ts: ctx.cards[0].ts, at },
    });
  }
  for (const r of pendingRequests(ctx, incidentPhase(state) === 'triggering')) {
    if (r.failedAttempts < r.attempt) {
      events.push(ev.failed(r.requestId, r.action, at, r.attempt, t('11:00')));
      events.push(ev.failed(r.requestId, r.action, at, r.attempt, null));
    } else {
      events.push(ev.retried(r.requestId, r.action, at, r.attempt + 1));
    }
  }
  return events;
};

/**
 * Shortest fact histories to every state value the machine can reach, one per value. Vertices are
 * the state value plus whether the stream is linked upstream (IncidentLinked changes no state
 * value but enables IncidentTriggered); the rest of the context is left out so the graph is finite.
 */
export const pathsToEveryState = () => {
  const paths = getShortestPaths(incidentMachine, {
    events: sampleEvents,
    serializeState: (s) => JSON.stringify([s.value, s.context.link !== null]),
    serializeEvent: (e) => JSON.stringify(e),
  });
  const shortest = new Map<string, (typeof paths)[number]>();
  for (const p of paths) {
    const key = stateKey(p.state);
    const seen = shortest.get(key);
    if (!seen || p.steps.length < seen.steps.length) shortest.set(key, p);
  }
  return shortest;
};

/** The facts of a path (its first step is xstate's init event, not a fact). */
export const factsOf = (path: { steps: ReadonlyArray<{ event: { type: string } }> }): IncidentEvent[] =>
  path.steps.map((s) => s.event).filter((e): e is IncidentEvent => !e.type.startsWith('xstate.'));

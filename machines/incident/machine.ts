import { and, assign, setup, stateIn } from 'xstate';
import {
  FIRST_ATTEMPT,
  failureApplies,
  retryApplies,
  type UpstreamRequest,
  withFailedAttempt,
  withRetry,
} from '../shared/upstreamRequest.ts';
import type {
  Actor,
  Assignee,
  BulkRequest,
  FactSource,
  IncidentEvent,
  IncidentUpstreamCallFailed,
  MonitoringAlert,
  Priority,
  ServiceRef,
  UpstreamAction,
  UpstreamUser,
  Urgency,
} from './events.ts';

/**
 * A user's request that is in flight upstream (recorded, not yet confirmed or given up): an
 * UpstreamRequest (its attempts follow machines/shared/upstreamRequest.ts) with what the call needs.
 */
export type PendingRequest = UpstreamRequest<UpstreamAction> &
  Readonly<{
    /** Slack user who asked. */
    by: string;
    asUser: UpstreamUser;
    requestedAt: string;
    /** escalate: target level. */
    level: number | null;
    /** reassign: new assignees. */
    assignees: readonly Assignee[] | null;
    /** note: text. */
    content: string | null;
    /** resolve: resolution text. */
    resolution: string | null;
    /** set_priority: the priority asked for (absent on requests recorded before it existed). */
    priority?: Priority | null;
    /** set_urgency: the urgency asked for. */
    urgency?: Urgency | null;
    /** acknowledge / resolve asked for with others at once (one bulk call on the first attempt). */
    bulk?: BulkRequest;
  }>;

export type TriggerInfo = Readonly<{
  request: PendingRequest;
  title: string;
  service: ServiceRef;
  urgency: Urgency;
  details: string | null;
  incidentKey: string;
  channel: string | null;
}>;

export type IncidentLink = Readonly<{
  upstreamId: string;
  number: number;
  incidentKey: string | null;
  htmlUrl: string | null;
}>;

export type IncidentFacts = Readonly<{
  title: string;
  service: ServiceRef;
  urgency: Urgency;
  priority: Priority | null;
  assignees: readonly Assignee[];
  escalationLevel: number;
  createdAt: string;
  triggeredBy: Actor | null;
  /** When we learnt it (the upstream `created_at` for incidents first seen by webhook). */
  triggeredAt: string;
  source: FactSource;
  /** Severity and source of the monitoring alert that opened it; null when none is known. */
  alert: MonitoringAlert | null;
}>;

export type StatusMark = Readonly<{ by: Actor | null; at: string; source: FactSource }>;

export type NoteInfo = Readonly<{
  noteId: string | null;
  content: string;
  by: Actor | null;
  at: string;
  source: FactSource;
}>;

/** The last failed upstream attempt: the `IncidentUpstreamCallFailed` fact as recorded. */
export type UpstreamFailure = Readonly<IncidentUpstreamCallFailed['data']>;

export type CardRef = Readonly<{ channel: string; ts: string; postedAt: string; updatedAt: string | null }>;

export type IncidentContext = Readonly<{
  /** Set when the incident was triggered from Slack. */
  trigger: TriggerInfo | null;
  link: IncidentLink | null;
  incident: IncidentFacts | null;
  acknowledged: StatusMark | null;
  resolved: (StatusMark & Readonly<{ resolution: string | null }>) | null;
  /** Time of the last status change as recorded (for display; never compared with vendor times). */
  statusChangedAt: string | null;
  /**
   * The incident service's time (its clock) of the status we hold, or null when we do not know it.
   * A status webhook that occurred before it is stale; a read-back is applied only when newer.
   */
  upstreamStatusAt: string | null;
  /** Acknowledge or resolve in flight (one status change at a time). */
  statusRequest: PendingRequest | null;
  /** Escalate or reassign in flight. */
  assignmentRequest: PendingRequest | null;
  /** A priority or urgency change in flight (one at a time). */
  fieldRequest: PendingRequest | null;
  /**
   * The incident service's time (its clock) of the priority, and of the urgency, we hold: a fact
   * about either that the vendor dates earlier is out of order and changes nothing.
   */
  upstreamPriorityAt: string | null;
  upstreamUrgencyAt: string | null;
  pendingNotes: readonly PendingRequest[];
  notes: readonly NoteInfo[];
  /** Last failed upstream attempt; cleared when its request is confirmed, a new one starts, or the status changes. */
  lastFailure: UpstreamFailure | null;
  /** Every request id recorded (a repeated command is a no-op). */
  requestIds: readonly string[];
  /** Every webhook event id that produced a fact here (a redelivery is a no-op). */
  webhookEventIds: readonly string[];
  ignoredWebhookCount: number;
  cards: readonly CardRef[];
}>;

export const emptyIncident: IncidentContext = {
  trigger: null,
  link: null,
  incident: null,
  acknowledged: null,
  resolved: null,
  statusChangedAt: null,
  upstreamStatusAt: null,
  statusRequest: null,
  assignmentRequest: null,
  fieldRequest: null,
  upstreamPriorityAt: null,
  upstreamUrgencyAt: null,
  pendingNotes: [],
  notes: [],
  lastFailure: null,
  requestIds: [],
  webhookEventIds: [],
  ignoredWebhookCount: 0,
  cards: [],
};

const pending = (
  data: { requestId: string; by: string; asUser: UpstreamUser; requestedAt: string },
  action: UpstreamAction,
  extra: Partial<
    Pick<PendingRequest, 'level' | 'assignees' | 'content' | 'resolution' | 'priority' | 'urgency' | 'bulk'>
  > = {},
): PendingRequest => ({
  requestId: data.requestId,
  action,
  by: data.by,
  asUser: data.asUser,
  requestedAt: data.requestedAt,
  ...FIRST_ATTEMPT,
  level: extra.level ?? null,
  assignees: extra.assignees ?? null,
  content: extra.content ?? null,
  resolution: extra.resolution ?? null,
  ...(extra.priority ? { priority: extra.priority } : {}),
  ...(extra.urgency ? { urgency: extra.urgency } : {}),
  ...(extra.bulk ? { bulk: extra.bulk } : {}),
});

/** Every request still in flight, wherever it is kept. */
export const pendingRequests = (context: IncidentContext, inTriggering: boolean): PendingRequest[] => [
  ...(inTriggering && context.trigger ? [context.trigger.request] : []),
  ...(context.statusRequest ? [context.statusRequest] : []),
  ...(context.assignmentRequest ? [context.assignmentRequest] : []),
  ...(context.fieldRequest ? [context.fieldRequest] : []),
  ...context.pendingNotes,
];

/** The later of two vendor times (either may be unknown). */
const laterOf = (held: string | null, next: string | null): string | null =>
  next === null ? held : held === null || Date.parse(next) > Date.parse(held) ? next : held;

// The attempt rules are the shared ones: a failure report applies to the attempt in progress, once;
// a retry applies to a request waiting for one, for the next attempt only.
export { failureApplies, retryApplies };

/**
 * The vendor's time of a status fact: `upstreamAt`, or for a webhook's fact recorded before that
 * field existed its `at` (which was the webhook's `occurred_at`). Null when only our clock knows.
 */
const vendorTime = (
  d: Readonly<{
    at: string;
    source: string;
    webhookEventId: string | null;
    upstreamAt?: string | null | undefined;
  }>,
): string | null => d.upstreamAt ?? (d.source === 'webhook' && d.webhookEventId !== null ? d.at : null);

const withWebhook = (ids: readonly string[], id: string | null): readonly string[] =>
  id === null || ids.includes(id) ? ids : [...ids, id];

const withRequest = (ids: readonly string[], id: string): readonly string[] =>
  ids.includes(id) ? ids : [...ids, id];

export const incidentMachine = setup({
  types: { context: {} as IncidentContext, events: {} as IncidentEvent },
  guards: {
    isTriggered: stateIn('#incident.open.status.triggered'),
    newRequest: ({ context, event }) =>
      'requestId' in event.data &&
      typeof event.data.requestId === 'string' &&
      !context.requestIds.includes(event.data.requestId),
    notResolving: ({ context }) => context.statusRequest?.action !== 'resolve',
    notLinked: ({ context }) => context.link === null,
    matchesLink: ({ context, event }) =>
      event.type === 'IncidentTriggered' && context.link?.upstreamId === event.data.id,
    forTrigger: ({ context, event }) =>
      event.type === 'IncidentUpstreamCallFailed' && failureApplies(context.trigger?.request, event.data),
    forStatusRequest: ({ context, event }) =>
      event.type === 'IncidentUpstreamCallFailed' && failureApplies(context.statusRequest, event.data),
    forAssignmentRequest: ({ context, event }) =>
      event.type === 'IncidentUpstreamCallFailed' && failureApplies(context.assignmentRequest, event.data),
    forFieldRequest: ({ context, event }) =>
      event.type === 'IncidentUpstreamCallFailed' && failureApplies(context.fieldRequest, event.data),
    noFieldRequest: ({ context }) => context.fieldRequest === null,
    forPendingNote: ({ context, event }) =>
      event.type === 'IncidentUpstreamCallFailed' &&
      context.pendingNotes.some((n) => failureApplies(n, event.data)),
    isFinalFailure: ({ event }) => event.type === 'IncidentUpstreamCallFailed' && event.data.final,
    retryIsDue: ({ context, event }) =>
      event.type === 'IncidentUpstreamCallRetried' &&
      [context.statusRequest, context.assignmentRequest, context.fieldRequest, ...context.pendingNotes].some(
        (r) => retryApplies(r, event.data),
      ),
    triggerRetryIsDue: ({ context, event }) =>
      event.type === 'IncidentUpstreamCallRetried' && retryApplies(context.trigger?.request, event.data),
    newNote: ({ context, event }) =>
      event.type === 'IncidentNoteAdded' &&
      (event.data.noteId === null || !context.notes.some((n) => n.noteId === event.data.noteId)),
    newWebhook: ({ context, event }) =>
      event.type === 'IncidentWebhookIgnored' && !context.webhookEventIds.includes(event.data.webhookEventId),
    newCard: ({ context, event }) =>
      event.type === 'IncidentCardPosted' &&
      !context.cards.some((c) => c.channel === event.data.channel && c.ts === event.data.ts),
    knownCard: ({ context, event }) =>
      event.type === 'IncidentCardUpdated' &&
      context.cards.some((c) => c.channel === event.data.channel && c.ts === event.data.ts),
  },
  actions: {
    recordTriggerRequest: assign(({ context, event }) => {
      if (event.type !== 'IncidentTriggerRequested') return {};
      const d = event.data;
      return {
        trigger: {
          request: pending(d, 'trigger'),
          title: d.title,
          service: d.service,
          urgency: d.urgency,
          details: d.details,
          incidentKey: d.incidentKey,
          channel: d.channel,
        },
        requestIds: withRequest(context.requestIds, d.requestId),
      };
    }),
    recordLink: assign(({ event }) => {
      if (event.type !== 'IncidentLinked') return {};
      return { link: { ...event.data } };
    }),
    recordTriggered: assign(({ context, event }) => {
      if (event.type !== 'IncidentTriggered') return {};
      const d = event.data;
      return {
        incident: {
          title: d.title,
          service: d.service,
          urgency: d.urgency,
          priority: d.priority,
          assignees: d.assignees,
          escalationLevel: d.escalationLevel,
          createdAt: d.createdAt,
          triggeredBy: d.by,
          triggeredAt: d.at,
          source: d.source,
          alert: d.alert ?? null,
        },
        statusChangedAt: d.at,
        upstreamStatusAt: vendorTime(d),
        lastFailure: null,
        webhookEventIds: withWebhook(context.webhookEventIds, d.webhookEventId),
      };
    }),
    recordStatusRequest: assign(({ context, event }) => {
      if (event.type === 'IncidentAcknowledgeRequested') {
        return {
          statusRequest: pending(event.data, 'acknowledge', event.data.bulk ? { bulk: event.data.bulk } : {}),
          requestIds: withRequest(context.requestIds, event.data.requestId),
          lastFailure: null,
        };
      }
      if (event.type === 'IncidentResolveRequested') {
        return {
          statusRequest: pending(event.data, 'resolve', {
            resolution: event.data.resolution,
            ...(event.data.bulk ? { bulk: event.data.bulk } : {}),
          }),
          requestIds: withRequest(context.requestIds, event.data.requestId),
          lastFailure: null,
        };
      }
      return {};
    }),
    recordAssignmentRequest: assign(({ context, event }) => {
      if (event.type === 'IncidentEscalateRequested') {
        return {
          assignmentRequest: pending(event.data, 'escalate', { level: event.data.level }),
          requestIds: withRequest(context.requestIds, event.data.requestId),
          lastFailure: null,
        };
      }
      if (event.type === 'IncidentReassignRequested') {
        return {
          assignmentRequest: pending(event.data, 'reassign', { assignees: event.data.assignees }),
          requestIds: withRequest(context.requestIds, event.data.requestId),
          lastFailure: null,
        };
      }
      return {};
    }),
    recordNoteRequested: assign(({ context, event }) => {
      if (event.type !== 'IncidentNoteRequested') return {};
      return {
        pendingNotes: [...context.pendingNotes, pending(event.data, 'note', { content: event.data.content })],
        requestIds: withRequest(context.requestIds, event.data.requestId),
        lastFailure: null,
      };
    }),
    recordAcknowledged: assign(({ context, event }) => {
      if (event.type !== 'IncidentAcknowledged') return {};
      const d = event.data;
      return {
        acknowledged: { by: d.by, at: d.at, source: d.source },
        statusChangedAt: d.at,
        upstreamStatusAt: vendorTime(d),
        statusRequest: context.statusRequest?.action === 'acknowledge' ? null : context.statusRequest,
        lastFailure: null,
        webhookEventIds: withWebhook(context.webhookEventIds, d.webhookEventId),
      };
    }),
    recordUnacknowledged: assign(({ context, event }) => {
      if (event.type !== 'IncidentUnacknowledged') return {};
      return {
        acknowledged: null,
        statusChangedAt: event.data.at,
        upstreamStatusAt: vendorTime(event.data),
        lastFailure: null,
        webhookEventIds: withWebhook(context.webhookEventIds, event.data.webhookEventId),
      };
    }),
    recordResolved: assign(({ context, event }) => {
      if (event.type !== 'IncidentResolved') return {};
      const d = event.data;
      return {
        resolved: { by: d.by, at: d.at, source: d.source, resolution: d.resolution },
        statusChangedAt: d.at,
        upstreamStatusAt: vendorTime(d),
        statusRequest: null,
        assignmentRequest: null,
        fieldRequest: null,
        lastFailure: null,
        webhookEventIds: withWebhook(context.webhookEventIds, d.webhookEventId),
      };
    }),
    recordReopened: assign(({ context, event }) => {
      if (event.type !== 'IncidentReopened') return {};
      return {
        acknowledged: null,
        resolved: null,
        statusChangedAt: event.data.at,
        upstreamStatusAt: vendorTime(event.data),
        lastFailure: null,
        webhookEventIds: withWebhook(context.webhookEventIds, event.data.webhookEventId),
      };
    }),
    recordEscalated: assign(({ context, event }) => {
      if (event.type !== 'IncidentEscalated' || !context.incident) return {};
      const d = event.data;
      const mine = context.assignmentRequest?.action === 'escalate';
      return {
        incident: { ...context.incident, escalationLevel: d.level, assignees: d.assignees },
        assignmentRequest: mine ? null : context.assignmentRequest,
        lastFailure: mine ? null : context.lastFailure,
        webhookEventIds: withWebhook(context.webhookEventIds, d.webhookEventId),
      };
    }),
    recordReassigned: assign(({ context, event }) => {
      if (event.type !== 'IncidentReassigned' || !context.incident) return {};
      const d = event.data;
      const mine = context.assignmentRequest?.action === 'reassign';
      return {
        incident: { ...context.incident, assignees: d.assignees },
        assignmentRequest: mine ? null : context.assignmentRequest,
        lastFailure: mine ? null : context.lastFailure,
        webhookEventIds: withWebhook(context.webhookEventIds, d.webhookEventId),
      };
    }),
    recordNoteAdded: assign(({ context, event }) => {
      if (event.type !== 'IncidentNoteAdded') return {};
      const d = event.data;
      const confirms = d.requestId !== null && context.pendingNotes.some((n) => n.requestId === d.requestId);
      return {
        notes: [
          ...context.notes,
          { noteId: d.noteId, content: d.content, by: d.by, at: d.at, source: d.source },
        ],
        pendingNotes: context.pendingNotes.filter((n) => n.requestId !== d.requestId),
        lastFailure: confirms && context.lastFailure?.requestId === d.requestId ? null : context.lastFailure,
        webhookEventIds: withWebhook(context.webhookEventIds, d.webhookEventId),
      };
    }),
    recordPriorityChanged: assign(({ context, event }) => {
      if (event.type !== 'IncidentPriorityChanged' || !context.incident) return {};
      const d = event.data;
      const mine =
        d.requestId !== null &&
        context.fieldRequest?.action === 'set_priority' &&
        context.fieldRequest.requestId === d.requestId;
      return {
        // A superseded fact (our change, already replaced by a later one we show) only confirms.
        incident: d.superseded ? context.incident : { ...context.incident, priority: d.priority },
        upstreamPriorityAt: laterOf(context.upstreamPriorityAt, vendorTime(d)),
        fieldRequest: mine ? null : context.fieldRequest,
        lastFailure: mine ? null : context.lastFailure,
        webhookEventIds: withWebhook(context.webhookEventIds, d.webhookEventId),
      };
    }),
    recordUrgencyChanged: assign(({ context, event }) => {
      if (event.type !== 'IncidentUrgencyChanged' || !context.incident) return {};
      const d = event.data;
      const mine =
        d.requestId !== null &&
        context.fieldRequest?.action === 'set_urgency' &&
        context.fieldRequest.requestId === d.requestId;
      return {
        incident: d.superseded ? context.incident : { ...context.incident, urgency: d.urgency },
        upstreamUrgencyAt: laterOf(context.upstreamUrgencyAt, vendorTime(d)),
        fieldRequest: mine ? null : context.fieldRequest,
        lastFailure: mine ? null : context.lastFailure,
        webhookEventIds: withWebhook(context.webhookEventIds, d.webhookEventId),
      };
    }),
    recordFieldRequest: assign(({ context, event }) => {
      if (event.type === 'IncidentPriorityChangeRequested') {
        return {
          fieldRequest: pending(event.data, 'set_priority', { priority: event.data.priority }),
          requestIds: withRequest(context.requestIds, event.data.requestId),
          lastFailure: null,
        };
      }
      if (event.type === 'IncidentUrgencyChangeRequested') {
        return {
          fieldRequest: pending(event.data, 'set_urgency', { urgency: event.data.urgency }),
          requestIds: withRequest(context.requestIds, event.data.requestId),
          lastFailure: null,
        };
      }
      return {};
    }),
    recordFailure: assign(({ context, event }) => {
      if (event.type !== 'IncidentUpstreamCallFailed') return {};
      const d = event.data;
      // A request given up is dropped; the trigger's is kept (the card shows what was asked), in a
      // state where no retry applies.
      const keep = (r: PendingRequest | null): PendingRequest | null =>
        r && failureApplies(r, d) ? (d.final ? null : withFailedAttempt(r, d)) : r;
      const trigger =
        context.trigger && failureApplies(context.trigger.request, d)
          ? { ...context.trigger, request: withFailedAttempt(context.trigger.request, d) }
          : context.trigger;
      return {
        trigger,
        statusRequest: keep(context.statusRequest),
        assignmentRequest: keep(context.assignmentRequest),
        fieldRequest: keep(context.fieldRequest),
        pendingNotes: context.pendingNotes.flatMap((n) => {
          const next = keep(n);
          return next ? [next] : [];
        }),
        lastFailure: { ...d },
      };
    }),
    recordRetry: assign(({ context, event }) => {
      if (event.type !== 'IncidentUpstreamCallRetried') return {};
      const d = event.data;
      // Request ids are unique, so at most one of these matches.
      const bump = (r: PendingRequest | null): PendingRequest | null =>
        r && retryApplies(r, d) ? withRetry(r, d) : r;
      const trigger =
        context.trigger && retryApplies(context.trigger.request, d)
          ? { ...context.trigger, request: withRetry(context.trigger.request, d) }
          : context.trigger;
      return {
        trigger,
        statusRequest: bump(context.statusRequest),
        assignmentRequest: bump(context.assignmentRequest),
        fieldRequest: bump(context.fieldRequest),
        pendingNotes: context.pendingNotes.map((n) => bump(n) ?? n),
      };
    }),
    recordIgnoredWebhook: assign(({ context, event }) => {
      if (event.type !== 'IncidentWebhookIgnored') return {};
      return {
        webhookEventIds: withWebhook(context.webhookEventIds, event.data.webhookEventId),
        ignoredWebhookCount: context.ignoredWebhookCount + 1,
      };
    }),
    recordCardPosted: assign(({ context, event }) => {
      if (event.type !== 'IncidentCardPosted') return {};
      const d = event.data;
      return { cards: [...context.cards, { channel: d.channel, ts: d.ts, postedAt: d.at, updatedAt: null }] };
    }),
    recordCardUpdated: assign(({ context, event }) => {
      if (event.type !== 'IncidentCardUpdated') return {};
      const d = event.data;
      return {
        cards: context.cards.map((c) =>
          c.channel === d.channel && c.ts === d.ts ? { ...c, updatedAt: d.at } : c,
        ),
      };
    }),
  },
}).createMachine({
  id: 'incident',
  initial: 'notTriggered',
  context: emptyIncident,
  // Facts any state may record: cards (a "Triggering…" card exists before the incident does),
  // retries of whatever is pending, and out-of-order webhooks kept for the timeline only.
  on: {
    IncidentCardPosted: { guard: 'newCard', actions: 'recordCardPosted' },
    IncidentCardUpdated: { guard: 'knownCard', actions: 'recordCardUpdated' },
    IncidentUpstreamCallRetried: { guard: 'retryIsDue', actions: 'recordRetry' },
    IncidentWebhookIgnored: { guard: 'newWebhook', actions: 'recordIgnoredWebhook' },
  },
  states: {
    notTriggered: {
      on: {
        IncidentTriggerRequested: {
          guard: 'newRequest',
          target: 'triggering',
          actions: 'recordTriggerRequest',
        },
        IncidentLinked: { guard: 'notLinked', actions: 'recordLink' },
        IncidentTriggered: { guard: 'matchesLink', target: 'open', actions: 'recordTriggered' },
      },
    },
    /** Trigger requested from Slack; waiting for the create call or its webhook. */
    triggering: {
      on: {
        IncidentLinked: { guard: 'notLinked', actions: 'recordLink' },
        IncidentTriggered: { guard: 'matchesLink', target: 'open', actions: 'recordTriggered' },
        IncidentUpstreamCallRetried: { guard: 'triggerRetryIsDue', actions: 'recordRetry' },
        IncidentUpstreamCallFailed: [
          { guard: and(['forTrigger', 'isFinalFailure']), target: 'triggerFailed', actions: 'recordFailure' },
          { guard: 'forTrigger', actions: 'recordFailure' },
        ],
      },
    },
    /** We gave up creating it; a webhook carrying our incident key still links it (the call may have landed). */
    triggerFailed: {
      on: {
        IncidentLinked: { guard: 'notLinked', actions: 'recordLink' },
        IncidentTriggered: { guard: 'matchesLink', target: 'open', actions: 'recordTriggered' },
      },
    },
    open: {
      type: 'parallel',
      // Moves that keep the status. (A region that handles an event shadows these: XState takes
      // the parallel node's own transitions only when no region takes the event.)
      on: {
        IncidentResolved: { target: 'resolved', actions: 'recordResolved' },
        IncidentEscalated: { actions: 'recordEscalated' },
        IncidentReassigned: { actions: 'recordReassigned' },
        IncidentPriorityChanged: { actions: 'recordPriorityChanged' },
        IncidentUrgencyChanged: { actions: 'recordUrgencyChanged' },
        IncidentPriorityChangeRequested: {
          guard: and(['noFieldRequest', 'newRequest']),
          actions: 'recordFieldRequest',
        },
        IncidentUrgencyChangeRequested: {
          guard: and(['noFieldRequest', 'newRequest']),
          actions: 'recordFieldRequest',
        },
        IncidentNoteRequested: { guard: 'newRequest', actions: 'recordNoteRequested' },
        IncidentNoteAdded: { guard: 'newNote', actions: 'recordNoteAdded' },
        IncidentUpstreamCallFailed: [
          { guard: 'forPendingNote', actions: 'recordFailure' },
          { guard: 'forFieldRequest', actions: 'recordFailure' },
        ],
      },
      states: {
        status: {
          initial: 'triggered',
          states: {
            triggered: {
              on: { IncidentAcknowledged: { target: 'acknowledged', actions: 'recordAcknowledged' } },
            },
            acknowledged: {
              // PagerDuty re-triggers on ack timeout (incident.unacknowledged); ack is allowed again.
              on: { IncidentUnacknowledged: { target: 'triggered', actions: 'recordUnacknowledged' } },
            },
          },
        },
        /** One status change in flight at a time: ack and resolve never race upstream. */
        statusRequest: {
          initial: 'idle',
          states: {
            idle: {
              on: {
                IncidentAcknowledgeRequested: {
                  guard: and(['isTriggered', 'newRequest']),
                  target: 'acknowledging',
                  actions: 'recordStatusRequest',
                },
                IncidentResolveRequested: {
                  guard: 'newRequest',
                  target: 'resolving',
                  actions: 'recordStatusRequest',
                },
              },
            },
            acknowledging: {
              on: {
                IncidentAcknowledged: { target: 'idle' },
                IncidentUpstreamCallFailed: [
                  {
                    guard: and(['forStatusRequest', 'isFinalFailure']),
                    target: 'idle',
                    actions: 'recordFailure',
                  },
                  { guard: 'forStatusRequest', actions: 'recordFailure' },
                ],
              },
            },
            resolving: {
              on: {
                IncidentUpstreamCallFailed: [
                  {
                    guard: and(['forStatusRequest', 'isFinalFailure']),
                    target: 'idle',
                    actions: 'recordFailure',
                  },
                  { guard: 'forStatusRequest', actions: 'recordFailure' },
                ],
              },
            },
          },
        },
        /** Escalate or reassign in flight; neither starts while a resolve is in flight. */
        assignmentRequest: {
          initial: 'idle',
          states: {
            idle: {
              on: {
                IncidentEscalateRequested: {
                  guard: and(['notResolving', 'newRequest']),
                  target: 'escalating',
                  actions: 'recordAssignmentRequest',
                },
                IncidentReassignRequested: {
                  guard: and(['notResolving', 'newRequest']),
                  target: 'reassigning',
                  actions: 'recordAssignmentRequest',
                },
              },
            },
            escalating: {
              on: {
                IncidentEscalated: { target: 'idle', actions: 'recordEscalated' },
                IncidentUpstreamCallFailed: [
                  {
                    guard: and(['forAssignmentRequest', 'isFinalFailure']),
                    target: 'idle',
                    actions: 'recordFailure',
                  },
                  { guard: 'forAssignmentRequest', actions: 'recordFailure' },
                ],
              },
            },
            reassigning: {
              on: {
                IncidentReassigned: { target: 'idle', actions: 'recordReassigned' },
                IncidentUpstreamCallFailed: [
                  {
                    guard: and(['forAssignmentRequest', 'isFinalFailure']),
                    target: 'idle',
                    actions: 'recordFailure',
                  },
                  { guard: 'forAssignmentRequest', actions: 'recordFailure' },
                ],
              },
            },
          },
        },
      },
    },
    /**
     * Terminal for every Slack move and every out-of-order webhook; notes may still be added (for
     * the post-mortem). Only an explicit upstream reopen (`incident.reopened`) leaves it.
     */
    resolved: {
      on: {
        IncidentReopened: { target: 'open', actions: 'recordReopened' },
        IncidentNoteRequested: { guard: 'newRequest', actions: 'recordNoteRequested' },
        IncidentNoteAdded: { guard: 'newNote', actions: 'recordNoteAdded' },
        IncidentUpstreamCallFailed: { guard: 'forPendingNote', actions: 'recordFailure' },
      },
    },
  },
});

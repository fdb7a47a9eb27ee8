import type {
  IncidentCommand,
  RecordIncidentWebhook,
  UpstreamIncident,
} from '../../../machines/incident/commands.ts';
import type {
  Actor,
  Assignee,
  IncidentEvent,
  UpstreamAction,
  UpstreamUser,
} from '../../../machines/incident/events.ts';
import { incidentKeyForRequest } from '../../../machines/incident/streams.ts';

// Data builders for the incident decider tests: a Slack-triggered incident with request id
// TRIGGER_ID, upstream PINC042 #42, two responders (Ana UANA01 / PANA, Bob UBOB02 / PBOB).

export const TRIGGER_ID = '9b2f6c1e-0c1a-5d7e-8f00-0123456789ab';
export const ANA: UpstreamUser = { id: 'PANA', email: 'ana@example.com', name: 'Ana Silva' };
export const BOB: UpstreamUser = { id: 'PBOB', email: 'bob@example.com', name: 'Bob Stone' };
export const ANA_ACTOR: Actor = { slackUserId: 'UANA01', upstreamUserId: 'PANA', name: 'Ana Silva' };
export const BOB_ACTOR: Actor = { slackUserId: 'UBOB02', upstreamUserId: 'PBOB', name: 'Bob Stone' };
export const WEB_ACTOR: Actor = { slackUserId: null, upstreamUserId: 'PWEB', name: 'Wendy Web' };
export const ANA_ASSIGNEE: Assignee = { id: 'PANA', name: 'Ana Silva', slackUserId: 'UANA01' };
export const BOB_ASSIGNEE: Assignee = { id: 'PBOB', name: 'Bob Stone', slackUserId: 'UBOB02' };
export const SERVICE = { id: 'PSVC007', name: 'Payments DB' };

/** `02:mm:ss` on the test night. */
export const t = (mmss: string): string => `2026-11-22T02:${mmss}.000Z`;

export const meta = (commandId: string, now: string, actor = 'UANA01') => ({ commandId, now, actor });

export const upstreamIncident = (over: Partial<UpstreamIncident> = {}): UpstreamIncident => ({
  id: 'PINC042',
  number: 42,
  title: 'db-primary disk 95%',
  status: 'triggered',
  urgency: 'high',
  priority: null,
  service: SERVICE,
  assignees: [ANA_ASSIGNEE],
  htmlUrl: 'https://acme.pagerduty.com/incidents/PINC042',
  createdAt: t('00:30'),
  incidentKey: incidentKeyForRequest(TRIGGER_ID),
  escalationLevel: null,
  resolveReason: null,
  ...over,
});

export const cmd = {
  trigger: (commandId = TRIGGER_ID, now = t('00:00')): IncidentCommand => ({
    type: 'TriggerIncident',
    data: {
      by: 'UANA01',
      asUser: ANA,
      service: SERVICE,
      title: 'db-primary disk 95%',
      urgency: 'high',
      details: null,
      channel: 'C_OPS',
    },
    metadata: meta(commandId, now),
  }),
  ack: (commandId: string, now: string, who: 'ana' | 'bob' = 'ana'): IncidentCommand => ({
    type: 'AcknowledgeIncident',
    data: who === 'ana' ? { by: 'UANA01', asUser: ANA } : { by: 'UBOB02', asUser: BOB },
    metadata: meta(commandId, now, who === 'ana' ? 'UANA01' : 'UBOB02'),
  }),
  resolve: (commandId: string, now: string, who: 'ana' | 'bob' = 'ana'): IncidentCommand => ({
    type: 'ResolveIncident',
    data: {
      ...(who === 'ana' ? { by: 'UANA01', asUser: ANA } : { by: 'UBOB02', asUser: BOB }),
      resolution: null,
    },
    metadata: meta(commandId, now, who === 'ana' ? 'UANA01' : 'UBOB02'),
  }),
  escalate: (commandId: string, now: string, level: number | null = null): IncidentCommand => ({
    type: 'EscalateIncident',
    data: { by: 'UANA01', asUser: ANA, level },
    metadata: meta(commandId, now),
  }),
  reassign: (commandId: string, now: string, assignees: Assignee[] = [BOB_ASSIGNEE]): IncidentCommand => ({
    type: 'ReassignIncident',
    data: { by: 'UANA01', asUser: ANA, assignees },
    metadata: meta(commandId, now),
  }),
  note: (commandId: string, now: string, content = 'disk cleanup running'): IncidentCommand => ({
    type: 'AddIncidentNote',
    data: { by: 'UANA01', asUser: ANA, content },
    metadata: meta(commandId, now),
  }),
  succeeded: (
    requestId: string,
    action: UpstreamAction,
    now: string,
    over: { incident?: UpstreamIncident | null; noteId?: string | null; via?: 'rest' | 'events_api' } = {},
  ): IncidentCommand => ({
    type: 'RecordIncidentUpstreamCallSucceeded',
    data: {
      requestId,
      action,
      via: over.via ?? 'rest',
      incident:
        over.incident === undefined ? (action === 'trigger' ? upstreamIncident() : null) : over.incident,
      noteId: over.noteId ?? null,
    },
    metadata: meta(`result:${requestId}:${now}`, now, 'system:upstream-calls'),
  }),
  failed: (
    requestId: string,
    action: UpstreamAction,
    now: string,
    attempt: number,
    nextAttemptAt: string | null,
  ): IncidentCommand => ({
    type: 'RecordIncidentUpstreamCallFailed',
    data: {
      requestId,
      action,
      attempt,
      maxAttempts: 5,
      code: 'SB_UPSTREAM_UNAVAILABLE',
      message: 'connect ECONNREFUSED',
      nextAttemptAt,
    },
    metadata: meta(`failed:${requestId}:${attempt}`, now, 'system:upstream-calls'),
  }),
  retry: (requestId: string, action: UpstreamAction, now: string, attempt: number): IncidentCommand => ({
    type: 'RetryIncidentUpstreamCall',
    data: { requestId, action, attempt },
    metadata: meta(`retry:${requestId}:${attempt}`, now, 'system:scheduler'),
  }),
  webhook: (
    webhookEventId: string,
    eventType: RecordIncidentWebhook['data']['eventType'],
    occurredAt: string,
    over: Partial<RecordIncidentWebhook['data']> = {},
    now = occurredAt,
  ): IncidentCommand => ({
    type: 'RecordIncidentWebhook',
    data: {
      webhookEventId,
      eventType,
      occurredAt,
      agent: WEB_ACTOR,
      incidentId: 'PINC042',
      incident:
        eventType === 'incident.annotated'
          ? null
          : upstreamIncident({
              status:
                eventType === 'incident.acknowledged'
                  ? 'acknowledged'
                  : eventType === 'incident.resolved'
                    ? 'resolved'
                    : 'triggered',
            }),
      note: null,
      ...over,
    },
    metadata: meta(`webhook:${webhookEventId}`, now, 'pagerduty'),
  }),
  cardPosted: (now: string, ts = '1700000000.000100'): IncidentCommand => ({
    type: 'RecordIncidentCardPosted',
    data: { channel: 'C_OPS', ts },
    metadata: meta(`card:${ts}`, now, 'system:slack-replies'),
  }),
  cardUpdated: (now: string, ts = '1700000000.000100'): IncidentCommand => ({
    type: 'RecordIncidentCardUpdated',
    data: { channel: 'C_OPS', ts },
    metadata: meta(`card-update:${ts}:${now}`, now, 'system:slack-replies'),
  }),
};

// Facts, as the decider produces them for the commands above.

export const ev = {
  triggerRequested: (): IncidentEvent => ({
    type: 'IncidentTriggerRequested',
    data: {
      requestId: TRIGGER_ID,
      by: 'UANA01',
      asUser: ANA,
      requestedAt: t('00:00'),
      title: 'db-primary disk 95%',
      service: SERVICE,
      urgency: 'high',
      details: null,
      incidentKey: incidentKeyForRequest(TRIGGER_ID),
      channel: 'C_OPS',
    },
  }),
  linked: (): IncidentEvent => ({
    type: 'IncidentLinked',
    data: {
      upstreamId: 'PINC042',
      number: 42,
      incidentKey: incidentKeyForRequest(TRIGGER_ID),
      htmlUrl: 'https://acme.pagerduty.com/incidents/PINC042',
    },
  }),
  triggered: (at = t('00:30')): IncidentEvent => ({
    type: 'IncidentTriggered',
    data: {
      at,
      source: 'slack',
      requestId: TRIGGER_ID,
      webhookEventId: null,
      by: ANA_ACTOR,
      id: 'PINC042',
      number: 42,
      title: 'db-primary disk 95%',
      service: SERVICE,
      urgency: 'high',
      priority: null,
      assignees: [ANA_ASSIGNEE],
      escalationLevel: 1,
      htmlUrl: 'https://acme.pagerduty.com/incidents/PINC042',
      createdAt: t('00:30'),
      upstreamAt: null,
    },
  }),
  ackRequested: (requestId: string, at: string, who: 'ana' | 'bob' = 'ana'): IncidentEvent => ({
    type: 'IncidentAcknowledgeRequested',
    data: {
      requestId,
      by: who === 'ana' ? 'UANA01' : 'UBOB02',
      asUser: who === 'ana' ? ANA : BOB,
      requestedAt: at,
    },
  }),
  /** `upstreamAt`: the vendor's time of the status (null when the answer carried none). */
  acknowledged: (
    requestId: string | null,
    at: string,
    by: Actor | null = ANA_ACTOR,
    upstreamAt: string | null = null,
  ): IncidentEvent => ({
    type: 'IncidentAcknowledged',
    data: { at, source: 'slack', requestId, webhookEventId: null, by, upstreamAt },
  }),
  unacknowledged: (webhookEventId: string, at: string): IncidentEvent => ({
    type: 'IncidentUnacknowledged',
    data: {
      at,
      source: 'webhook',
      requestId: null,
      webhookEventId,
      by: WEB_ACTOR,
      reason: 'unacknowledged upstream',
      upstreamAt: at,
    },
  }),
  resolveRequested: (requestId: string, at: string, who: 'ana' | 'bob' = 'ana'): IncidentEvent => ({
    type: 'IncidentResolveRequested',
    data: {
      requestId,
      by: who === 'ana' ? 'UANA01' : 'UBOB02',
      asUser: who === 'ana' ? ANA : BOB,
      requestedAt: at,
      resolution: null,
    },
  }),
  resolved: (
    requestId: string | null,
    at: string,
    by: Actor | null = ANA_ACTOR,
    upstreamAt: string | null = null,
  ): IncidentEvent => ({
    type: 'IncidentResolved',
    data: { at, source: 'slack', requestId, webhookEventId: null, by, resolution: null, upstreamAt },
  }),
  resolvedByWebhook: (webhookEventId: string, at: string): IncidentEvent => ({
    type: 'IncidentResolved',
    data: {
      at,
      source: 'webhook',
      requestId: null,
      webhookEventId,
      by: WEB_ACTOR,
      resolution: null,
      upstreamAt: at,
    },
  }),
  reopened: (webhookEventId: string, at: string): IncidentEvent => ({
    type: 'IncidentReopened',
    data: { at, source: 'webhook', requestId: null, webhookEventId, by: WEB_ACTOR, upstreamAt: at },
  }),
  escalateRequested: (requestId: string, at: string, level = 2): IncidentEvent => ({
    type: 'IncidentEscalateRequested',
    data: { requestId, by: 'UANA01', asUser: ANA, requestedAt: at, level },
  }),
  escalated: (
    requestId: string | null,
    at: string,
    level = 2,
    assignees: Assignee[] = [ANA_ASSIGNEE],
  ): IncidentEvent => ({
    type: 'IncidentEscalated',
    data: {
      at,
      source: 'slack',
      requestId,
      webhookEventId: null,
      by: ANA_ACTOR,
      level,
      assignees,
      upstreamAt: null,
    },
  }),
  reassignRequested: (
    requestId: string,
    at: string,
    assignees: Assignee[] = [BOB_ASSIGNEE],
  ): IncidentEvent => ({
    type: 'IncidentReassignRequested',
    data: { requestId, by: 'UANA01', asUser: ANA, requestedAt: at, assignees },
  }),
  reassigned: (
    requestId: string | null,
    at: string,
    assignees: Assignee[] = [BOB_ASSIGNEE],
  ): IncidentEvent => ({
    type: 'IncidentReassigned',
    data: {
      at,
      source: 'slack',
      requestId,
      webhookEventId: null,
      by: ANA_ACTOR,
      assignees,
      upstreamAt: null,
    },
  }),
  noteRequested: (requestId: string, at: string, content = 'disk cleanup running'): IncidentEvent => ({
    type: 'IncidentNoteRequested',
    data: { requestId, by: 'UANA01', asUser: ANA, requestedAt: at, content },
  }),
  noteAdded: (
    requestId: string | null,
    at: string,
    noteId: string | null,
    content = 'disk cleanup running',
  ): IncidentEvent => ({
    type: 'IncidentNoteAdded',
    data: {
      at,
      source: 'slack',
      requestId,
      webhookEventId: null,
      by: ANA_ACTOR,
      noteId,
      content,
      upstreamAt: null,
    },
  }),
  failed: (
    requestId: string,
    action: UpstreamAction,
    at: string,
    attempt: number,
    nextAttemptAt: string | null,
  ): IncidentEvent => ({
    type: 'IncidentUpstreamCallFailed',
    data: {
      requestId,
      action,
      attempt,
      maxAttempts: 5,
      code: 'SB_UPSTREAM_UNAVAILABLE',
      message: 'connect ECONNREFUSED',
      nextAttemptAt,
      final: nextAttemptAt === null,
      at,
    },
  }),
  retried: (requestId: string, action: UpstreamAction, at: string, attempt: number): IncidentEvent => ({
    type: 'IncidentUpstreamCallRetried',
    data: { requestId, action, attempt, at },
  }),
  webhookIgnored: (
    webhookEventId: string,
    eventType: string,
    occurredAt: string,
    reason: 'already_resolved' | 'stale',
    at = occurredAt,
  ): IncidentEvent => ({
    type: 'IncidentWebhookIgnored',
    data: { webhookEventId, eventType, occurredAt, reason, at },
  }),
  cardPosted: (at: string, ts = '1700000000.000100'): IncidentEvent => ({
    type: 'IncidentCardPosted',
    data: { channel: 'C_OPS', ts, at },
  }),
};

/** A Slack-triggered incident, confirmed upstream at 02:00:30 (acknowledged and resolved: the vendor's times). */
export const OPEN: IncidentEvent[] = [ev.triggerRequested(), ev.linked(), ev.triggered()];
export const ACKED: IncidentEvent[] = [
  ...OPEN,
  ev.ackRequested('ack-1', t('01:00')),
  ev.acknowledged('ack-1', t('01:05'), ANA_ACTOR, t('01:05')),
];
export const RESOLVED: IncidentEvent[] = [
  ...ACKED,
  ev.resolveRequested('res-1', t('04:00')),
  ev.resolved('res-1', t('04:05'), ANA_ACTOR, t('04:05')),
];

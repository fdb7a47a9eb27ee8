import type {
  RecordIncidentUpstreamCallFailed,
  RecordIncidentUpstreamCallSucceeded,
  UpstreamIncident,
} from '../../machines/incident/commands.ts';
import { findPendingRequest, type IncidentState } from '../../machines/incident/decider.ts';
import type { UpstreamAction } from '../../machines/incident/events.ts';
import type { PendingRequest } from '../../machines/incident/machine.ts';
import { ChatOpsError, hasCode, isChatOpsError } from '../core/errors.ts';
import { uuidv5 } from '../core/ids.ts';
import { type Command, exhaustive, type JsonObject } from '../core/messages.ts';
import type { RecordedEvent } from '../eventStore/eventStore.ts';
import { type Dispatch, dispatchCommand } from '../processors/dispatchCommand.ts';
import {
  errorCodeOf,
  errorMessageOf,
  nextAttemptAt,
  type RetryPolicy,
  shouldRetry,
  UPSTREAM_RETRY,
} from '../processors/retryPolicy.ts';
import type { Processor, ProcessorContext } from '../processors/runner.ts';
import { scheduleTimer } from '../processors/scheduler.ts';
import type { PagerDutyClient } from '../upstream/pagerduty.ts';
import { readIncidentState } from './incidentState.ts';
import { type SlackUserOf, upstreamIncidentFromRest } from './pagerdutyMapping.ts';

/**
 * `incident-upstream`: every user request recorded on an incident (`Incident*Requested`) and every
 * retry the scheduler starts (`IncidentUpstreamCallRetried`) becomes one call to the incident
 * service, made as the requesting user (`From` = their mapped email), and its outcome is recorded
 * through the decider: `RecordIncidentUpstreamCallSucceeded` or `RecordIncidentUpstreamCallFailed
 * { attempt, nextAttemptAt }`. A retryable failure (network, 5xx, 429 with the vendor's
 * `ratelimit-reset` honoured) schedules `RetryIncidentUpstreamCall` with the durable scheduler;
 * after `maxAttempts` (5) the failure is final, the card says so and the requester is told
 * (incident-notices).
 *
 * Idempotent under redelivery and safe against late calls: right before each call it folds the
 * stream and checks `findPendingRequest(state, requestId)?.attempt === attempt` (machines/incident
 * decider contract). A request that was confirmed by a webhook, superseded (a resolve from the
 * web app while our acknowledge waited for a retry) or already failed is never sent; an
 * acknowledgement is also checked against the incident's current upstream status first, because
 * acknowledging a resolved incident reopens it upstream. Triggers carry `incident_key` =
 * `switchboard:<request id>`: a repeated create is refused upstream as a duplicate and the
 * existing incident is looked up instead; a retried note is not added twice when the first
 * attempt landed.
 *
 * @example
 * const upstream = createIncidentUpstreamReactor({ pagerduty, dispatch: bus.dispatch, slackUserOf });
 */
export type IncidentUpstreamPort = Pick<
  PagerDutyClient,
  | 'createIncident'
  | 'updateIncident'
  | 'getIncident'
  | 'listIncidents'
  | 'addIncidentNote'
  | 'listIncidentNotes'
>;

export type IncidentUpstreamOptions = Readonly<{
  pagerduty: IncidentUpstreamPort;
  dispatch: Dispatch;
  slackUserOf?: SlackUserOf;
  /** Durable retry policy (default UPSTREAM_RETRY: 5 attempts, 2 s doubling, jitter). */
  retry?: RetryPolicy;
}>;

export const INCIDENT_UPSTREAM_PROCESSOR = 'incident-upstream';
const ACTOR = 'system:incident-upstream';

const REQUEST_EVENT_TYPES = [
  'IncidentTriggerRequested',
  'IncidentAcknowledgeRequested',
  'IncidentResolveRequested',
  'IncidentEscalateRequested',
  'IncidentReassignRequested',
  'IncidentNoteRequested',
  'IncidentUpstreamCallRetried',
] as const;

/** Timer id of the retry after failed attempt `attempt` of a request. */
export const incidentRetryTimerId = (requestId: string, attempt: number): string =>
  `incident-retry-${requestId}-${attempt}`;

type Outcome = { incident: UpstreamIncident | null; noteId: string | null };

export const createIncidentUpstreamReactor = (options: IncidentUpstreamOptions): Processor => {
  const pd = options.pagerduty;
  const policy = options.retry ?? UPSTREAM_RETRY;
  const slackUserOf = options.slackUserOf ?? (() => null);
  const fromRest = (i: Parameters<typeof upstreamIncidentFromRest>[0]) =>
    upstreamIncidentFromRest(i, slackUserOf);

  const record = async (
    ctx: ProcessorContext,
    cause: RecordedEvent,
    command: Pick<RecordIncidentUpstreamCallSucceeded | RecordIncidentUpstreamCallFailed, 'type' | 'data'>,
    key: string,
  ): Promise<void> => {
    const full: Command = {
      type: command.type,
      data: { ...(command.data as unknown as JsonObject), streamId: cause.streamId },
      metadata: {
        now: ctx.now().toISOString(),
        commandId: uuidv5(`${INCIDENT_UPSTREAM_PROCESSOR}:${key}`),
        actor: ACTOR,
        causationId: cause.id,
      },
    };
    const outcome = await dispatchCommand(options.dispatch, full);
    if (outcome.outcome === 'rejected') {
      ctx.logger.warn(
        { code: outcome.code, commandType: command.type },
        `outcome not recorded: ${outcome.message}`,
      );
    }
  };

  const ensureRetryTimer = async (
    ctx: ProcessorContext,
    cause: RecordedEvent,
    r: PendingRequest,
    state: IncidentState,
  ): Promise<void> => {
    const last = state.context.lastFailure;
    if (!last || last.requestId !== r.requestId || last.final || !last.nextAttemptAt) return;
    await scheduleTimer(ctx.store, {
      timerId: incidentRetryTimerId(r.requestId, last.attempt),
      dueAt: last.nextAttemptAt,
      now: ctx.now(),
      command: {
        type: 'RetryIncidentUpstreamCall',
        data: {
          requestId: r.requestId,
          action: r.action,
          attempt: last.attempt + 1,
          streamId: cause.streamId,
        },
        metadata: { actor: ACTOR, causationId: cause.id },
      },
    });
  };

  const upstreamIdOf = (state: IncidentState): string => {
    const id = state.context.link?.upstreamId;
    if (!id) throw new ChatOpsError('SB_ILLEGAL_STATE', 'the incident is not linked to the incident service');
    return id;
  };

  /** The incident we created earlier with this key, if it exists (a retried or repeated create). */
  const findByKey = async (incidentKey: string): Promise<UpstreamIncident | null> => {
    const page = await pd.listIncidents({ incidentKey, dateRange: 'all', limit: 1 });
    const found = page.items[0];
    return found ? fromRest(found) : null;
  };

  const call = async (r: PendingRequest, state: IncidentState, attempt: number): Promise<Outcome> => {
    const from = r.asUser.email;
    switch (r.action) {
      case 'trigger': {
        const t = state.context.trigger;
        if (!t) throw new ChatOpsError('SB_ILLEGAL_STATE', 'no trigger request recorded');
        if (attempt > 1) {
          const existing = await findByKey(t.incidentKey);
          if (existing) return { incident: existing, noteId: null };
        }
        try {
          const created = await pd.createIncident({
            from,
            serviceId: t.service.id,
            title: t.title,
            urgency: t.urgency,
            incidentKey: t.incidentKey,
            ...(t.details ? { details: t.details } : {}),
          });
          return { incident: fromRest(created), noteId: null };
        } catch (error) {
          if (isChatOpsError(error) && error.details.reason === 'duplicate_incident_key') {
            const existing = await findByKey(t.incidentKey);
            if (existing) return { incident: existing, noteId: null };
          }
          throw error;
        }
      }
      case 'acknowledge': {
        const id = upstreamIdOf(state);
        // Acknowledging a resolved incident reopens it upstream: never send a late acknowledgement.
        const current = await pd.getIncident(id);
        if (current.status === 'resolved') {
          throw new ChatOpsError(
            'SB_UPSTREAM_REJECTED',
            'it was already resolved in the incident service, so it was not acknowledged',
            { details: { reason: 'already_resolved', retryable: false } },
          );
        }
        return {
          incident: fromRest(await pd.updateIncident(id, { from, status: 'acknowledged' })),
          noteId: null,
        };
      }
      case 'resolve': {
        const id = upstreamIdOf(state);
        try {
          const resolved = await pd.updateIncident(id, {
            from,
            status: 'resolved',
            ...(r.resolution ? { resolution: r.resolution } : {}),
          });
          return { incident: fromRest(resolved), noteId: null };
        } catch (error) {
          if (!(isChatOpsError(error) && error.details.reason === 'already_resolved')) throw error;
          // Our own earlier attempt may have landed (its answer was lost): it counts if it was us.
          const current = await pd.getIncident(id);
          if (current.status === 'resolved' && current.last_status_change_by?.id === r.asUser.id) {
            return { incident: fromRest(current), noteId: null };
          }
          throw new ChatOpsError('SB_UPSTREAM_REJECTED', 'it was already resolved in the incident service', {
            cause: error,
            details: { reason: 'already_resolved', retryable: false },
          });
        }
      }
      case 'escalate': {
        const level = r.level ?? (state.context.incident?.escalationLevel ?? 1) + 1;
        const updated = await pd.updateIncident(upstreamIdOf(state), { from, escalationLevel: level });
        return { incident: { ...fromRest(updated), escalationLevel: level }, noteId: null };
      }
      case 'reassign': {
        const assigneeIds = (r.assignees ?? []).map((a) => a.id);
        return {
          incident: fromRest(await pd.updateIncident(upstreamIdOf(state), { from, assigneeIds })),
          noteId: null,
        };
      }
      case 'note': {
        const id = upstreamIdOf(state);
        const content = r.content ?? '';
        if (attempt > 1) {
          // An earlier attempt may have added it before its answer was lost.
          const notes = await pd.listIncidentNotes(id);
          const landed = notes.find(
            (n) =>
              n.user?.id === r.asUser.id &&
              n.content.trim() === content.trim() &&
              Date.parse(n.created_at) >= Date.parse(r.requestedAt) - 1_000,
          );
          if (landed) return { incident: null, noteId: landed.id };
        }
        const note = await pd.addIncidentNote(id, { from, content });
        return { incident: null, noteId: note.id };
      }
      default:
        return exhaustive(r.action, 'upstream action');
    }
  };

  return {
    id: INCIDENT_UPSTREAM_PROCESSOR,
    filter: { streamPrefixes: ['incident-'], eventTypes: [...REQUEST_EVENT_TYPES] },
    async handle(event, ctx) {
      if (event.kind !== 'event') return;
      const d = event.data as { requestId?: unknown; attempt?: unknown };
      if (typeof d.requestId !== 'string') return;
      const requestId = d.requestId;
      const attempt =
        event.type === 'IncidentUpstreamCallRetried' && typeof d.attempt === 'number' ? d.attempt : 1;
      const { state } = await readIncidentState(ctx.store, event.streamId);
      const r = findPendingRequest(state, requestId);
      const log = ctx.logger.child({ requestId, attempt });
      if (!r || r.attempt !== attempt) {
        log.debug(
          { pendingAttempt: r?.attempt ?? null },
          'request no longer pending at this attempt: not sent',
        );
        return;
      }
      if (r.failedAttempts >= attempt) {
        // This attempt's failure is recorded (a redelivery after a crash): make sure its retry exists.
        await ensureRetryTimer(ctx, event, r, state);
        return;
      }
      const action: UpstreamAction = r.action;
      let outcome: Outcome;
      try {
        outcome = await call(r, state, attempt);
      } catch (error) {
        if (hasCode(error, 'SB_STORE_UNAVAILABLE')) throw error;
        const retry = shouldRetry(error, { attempt, maxAttempts: policy.maxAttempts });
        const at = retry ? nextAttemptAt(attempt, ctx.now(), { ...policy, error }).toISOString() : null;
        await record(
          ctx,
          event,
          {
            type: 'RecordIncidentUpstreamCallFailed',
            data: {
              requestId,
              action,
              attempt,
              maxAttempts: policy.maxAttempts,
              code: errorCodeOf(error),
              message: errorMessageOf(error, 300),
              nextAttemptAt: at,
            },
          },
          `${requestId}:${attempt}:failed`,
        );
        log.warn(
          { err: error, action, nextAttemptAt: at },
          retry ? 'upstream call failed; retry scheduled' : 'upstream call failed for good',
        );
        if (retry)
          await ensureRetryTimer(ctx, event, r, (await readIncidentState(ctx.store, event.streamId)).state);
        return;
      }
      await record(
        ctx,
        event,
        {
          type: 'RecordIncidentUpstreamCallSucceeded',
          data: { requestId, action, via: 'rest', incident: outcome.incident, noteId: outcome.noteId },
        },
        `${requestId}:${attempt}:succeeded`,
      );
      log.debug({ action }, 'upstream call succeeded');
    },
  };
};

import type {
  RecordIncidentUpstreamCallFailed,
  RecordIncidentUpstreamCallSucceeded,
  RecordIncidentUpstreamSnapshot,
  RetryIncidentUpstreamCall,
  UpstreamIncident,
} from '../../machines/incident/commands.ts';
import { findPendingRequest, type IncidentState, incidentDecider } from '../../machines/incident/decider.ts';
import type { PendingRequest } from '../../machines/incident/machine.ts';
import { asError, ChatOpsError, isChatOpsError } from '../core/errors.ts';
import { uuidv5 } from '../core/ids.ts';
import { exhaustive, type JsonObject } from '../core/messages.ts';
import type { RecordedEvent } from '../eventStore/eventStore.ts';
import { abortableSleep } from '../processors/abortableSleep.ts';
import { type Dispatch, dispatchCommand } from '../processors/dispatchCommand.ts';
import { type RetryPolicy, UPSTREAM_RETRY } from '../processors/retryPolicy.ts';
import type { Processor, ProcessorContext } from '../processors/runner.ts';
import {
  createUpstreamCallProcessor,
  type UpstreamCallArgs,
  type UpstreamCallSpec,
  type UpstreamCallTarget,
} from '../processors/upstreamCall.ts';
import type { PagerDutyClient } from '../upstream/pagerduty.ts';
import { readIncidentState } from './incidentState.ts';
import { actorFromWebhookAgent, type SlackUserOf, upstreamIncidentFromRest } from './pagerdutyMapping.ts';

/**
 * `incident-upstream`: every user request recorded on an incident (`Incident*Requested`) and every
 * retry the scheduler starts (`IncidentUpstreamCallRetried`) becomes one call to the incident
 * service, made as the requesting user (`From` = their mapped email). The shared mechanism for
 * durable upstream calls (src/processors/upstreamCall.ts, rules in machines/shared/upstreamRequest.ts)
 * does the bookkeeping: right before each call it folds the stream and checks the request is still
 * pending at this attempt, records the outcome through the decider
 * (`RecordIncidentUpstreamCallSucceeded` or `RecordIncidentUpstreamCallFailed { attempt,
 * nextAttemptAt }`), schedules `RetryIncidentUpstreamCall` with the durable scheduler after a
 * retryable failure (network, 5xx, 429 with the vendor's `ratelimit-reset` honoured), and after
 * `maxAttempts` (5) records the failure as final: the card says so and the requester is told
 * (incident-notices).
 *
 * What is incident-specific is here: the calls, and what to check before repeating one. A request
 * that was confirmed by a webhook, superseded (a resolve from the web app while our acknowledge
 * waited for a retry) or given up is never sent. An acknowledgement is checked against the
 * incident's current upstream status first, because acknowledging a resolved incident reopens it
 * upstream. Triggers carry `incident_key` = `switchboard:<request id>`: on a retry or a redelivery
 * the incident with that key is looked up first, and a repeated create refused as a duplicate is
 * looked up too; a note whose earlier attempt landed (same author, same text, after the request)
 * is not added twice; an acknowledge (or resolve) is not sent again when the incident is already
 * acknowledged with our user among its acknowledgers (resolved by our user). What remains: a read
 * that lags behind the write (the vendor's reads are eventually consistent) can miss the landed
 * change, and the call is then repeated; for an acknowledge by the same user that is a no-op
 * upstream.
 *
 * After every status fact the incident is read back (`incident-read-back`, below). Vendor facts
 * are ordered by vendor times only (webhook `occurred_at`, an incident's `last_status_change_at`),
 * never by our clock, so an answer that arrives late or a skewed clock cannot make the card
 * disagree with the incident service.
 *
 * @example
 * const upstream = createIncidentUpstreamReactor({ pagerduty, dispatch: bus.dispatch, slackUserOf });
 */
export type IncidentUpstreamPort = Pick<
  PagerDutyClient,
  | 'bulkUpdateStatus'
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
  'IncidentPriorityChangeRequested',
  'IncidentUrgencyChangeRequested',
  'IncidentUpstreamCallRetried',
] as const;

/** How long a bulk call waits for the rest of its chunk to be recorded: 50 polls of 20 ms, at most. */
const BULK_GATHER_POLLS = 50;
const BULK_GATHER_POLL_MS = 20;
/** Incidents a bulk acknowledge reads at once before its PUT (the single acknowledge's check). */
const BULK_READ_CONCURRENCY = 8;

const data = (d: object, target: Pick<UpstreamCallTarget, 'streamId'>): JsonObject =>
  ({ ...d, streamId: target.streamId }) as unknown as JsonObject;

/** Timer id of the retry after failed attempt `attempt` of a request. */
export const incidentRetryTimerId = (requestId: string, attempt: number): string =>
  `incident-retry-${requestId}-${attempt}`;

type Outcome = { incident: UpstreamIncident | null; noteId: string | null };
type Args = UpstreamCallArgs<IncidentState, PendingRequest, UpstreamCallTarget>;

/** The request (and attempt) an incident event asks to call for; null for anything else. */
const targetOf = (event: RecordedEvent): UpstreamCallTarget | null => {
  if (event.kind !== 'event') return null;
  const d = event.data as { requestId?: unknown; attempt?: unknown };
  if (typeof d.requestId !== 'string') return null;
  const attempt =
    event.type === 'IncidentUpstreamCallRetried' && typeof d.attempt === 'number' ? d.attempt : 1;
  return { streamId: event.streamId, requestId: d.requestId, attempt };
};

export const createIncidentUpstreamReactor = (options: IncidentUpstreamOptions): Processor => {
  const pd = options.pagerduty;
  const slackUserOf = options.slackUserOf ?? (() => null);
  // With the vendor's time of its last status change, which orders this answer against webhooks.
  const fromRest = (i: Parameters<typeof upstreamIncidentFromRest>[0]): UpstreamIncident => ({
    ...upstreamIncidentFromRest(i, slackUserOf),
    statusChangedAt: i.last_status_change_at ?? null,
    updatedAt: i.updated_at ?? null,
  });

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

  const triggerOf = (state: IncidentState) => {
    const t = state.context.trigger;
    if (!t) throw new ChatOpsError('SB_ILLEGAL_STATE', 'no trigger request recorded');
    return t;
  };

  /** What the incident service already has of a call whose earlier attempt may have landed. */
  const check = async ({ request: r, state }: Args): Promise<Outcome | null> => {
    switch (r.action) {
      case 'trigger': {
        const existing = await findByKey(triggerOf(state).incidentKey);
        return existing ? { incident: existing, noteId: null } : null;
      }
      case 'note': {
        // An earlier attempt may have added it before its answer was lost.
        const content = r.content ?? '';
        const notes = await pd.listIncidentNotes(upstreamIdOf(state));
        const landed = notes.find(
          (n) =>
            n.user?.id === r.asUser.id &&
            n.content.trim() === content.trim() &&
            Date.parse(n.created_at) >= Date.parse(r.requestedAt) - 1_000,
        );
        return landed ? { incident: null, noteId: landed.id } : null;
      }
      case 'acknowledge': {
        // An earlier attempt's PUT may have landed before its answer was lost (a crash, a reset):
        // the incident acknowledged with our user among its acknowledgers is what the call would
        // have done. No time is compared: the vendor's times are on the vendor's clock.
        const current = await pd.getIncident(upstreamIdOf(state));
        const ours =
          current.status === 'acknowledged' &&
          current.acknowledgements.some((a) => a.acknowledger.id === r.asUser.id);
        return ours ? { incident: fromRest(current), noteId: null } : null;
      }
      case 'resolve': {
        const current = await pd.getIncident(upstreamIdOf(state));
        const ours = current.status === 'resolved' && current.last_status_change_by?.id === r.asUser.id;
        return ours ? { incident: fromRest(current), noteId: null } : null;
      }
      default:
        // Assignment changes are safe to repeat: the same change again is a no-op upstream.
        return null;
    }
  };

  /** ` by <name>` from the incident as read, so the person refused knows whom to ask. */
  const resolvedBy = (current: Awaited<ReturnType<typeof pd.getIncident>>): string => {
    const name = current.last_status_change_by?.summary?.trim();
    return name ? ` by ${name}` : '';
  };

  /** An acknowledge refused because the incident is resolved upstream (sending it would reopen it). */
  const notAcknowledged = (current: Awaited<ReturnType<typeof pd.getIncident>>): ChatOpsError =>
    new ChatOpsError(
      'SB_UPSTREAM_REJECTED',
      `it was already resolved in the incident service${resolvedBy(current)}, so it was not acknowledged`,
      { details: { reason: 'already_resolved', retryable: false } },
    );

  /**
   * The first attempt of an acknowledge (resolve) asked for with others at once: one `PUT
   * /incidents` for every request of its chunk still waiting for its first attempt, made as the
   * same user. The requests of a chunk are recorded one after the other, so this waits (briefly,
   * bounded) until all of them are; a member refused by the decider never is, and the wait ends
   * without it. An acknowledge first reads every member as the single acknowledge does, and leaves
   * out of the PUT any resolved upstream meanwhile (see below). The others' answers are recorded in their own streams here, so their own events
   * find nothing left to call; a member recorded after the call makes its own. A failed bulk call
   * is this request's failed attempt (retried alone, by the scheduler); the other members are still
   * waiting for their first attempt, and the next of their events calls for them.
   */
  const bulkCall = async ({ request: r, target, ctx }: Args): Promise<Outcome> => {
    const bulk = r.bulk!;
    const action = r.action;
    type Ready = { streamId: string; upstreamId: string; requestId: string };
    let ready: Ready[] = [];
    for (let poll = 0; ; poll++) {
      const states = await Promise.all(
        bulk.members.map(async (m) => ({ m, state: (await readIncidentState(ctx.store, m.streamId)).state })),
      );
      ready = states.flatMap(({ m, state }) => {
        const p = findPendingRequest(state, m.requestId);
        const upstreamId = state.context.link?.upstreamId;
        const waiting =
          p &&
          upstreamId &&
          p.action === action &&
          p.asUser.id === r.asUser.id &&
          p.attempt === 1 &&
          p.failedAttempts === 0 &&
          p.bulk?.batchId === bulk.batchId;
        return waiting ? [{ streamId: m.streamId, upstreamId, requestId: m.requestId }] : [];
      });
      const recorded = states.filter(({ m, state }) => state.context.requestIds.includes(m.requestId));
      if (recorded.length === bulk.members.length || poll >= BULK_GATHER_POLLS) break;
      await abortableSleep(BULK_GATHER_POLL_MS, ctx.signal);
    }
    const self = upstreamIdOf(await readIncidentState(ctx.store, target.streamId).then((x) => x.state));
    if (!ready.some((m) => m.streamId === target.streamId)) {
      ready.push({ streamId: target.streamId, upstreamId: self, requestId: r.requestId });
    }
    // The single acknowledge's check, for every member: acknowledging a resolved incident reopens
    // it upstream, so one resolved meanwhile (in the web app, its webhook not here yet) is left
    // out of the PUT. This request is refused as the single acknowledge is; another member stays
    // waiting for its first attempt, and its own event makes the same check and is refused alike.
    let selfResolved: Awaited<ReturnType<typeof pd.getIncident>> | null = null;
    if (action === 'acknowledge') {
      const resolved = new Set<string>();
      for (let i = 0; i < ready.length; i += BULK_READ_CONCURRENCY) {
        await Promise.all(
          ready.slice(i, i + BULK_READ_CONCURRENCY).map(async (m) => {
            const current = await pd.getIncident(m.upstreamId);
            if (current.status !== 'resolved') return;
            resolved.add(m.streamId);
            if (m.streamId === target.streamId) selfResolved = current;
          }),
        );
      }
      ready = ready.filter((m) => !resolved.has(m.streamId));
    }
    const updated = ready.length
      ? await pd.bulkUpdateStatus({
          from: r.asUser.email,
          status: action === 'resolve' ? 'resolved' : 'acknowledged',
          incidentIds: ready.map((m) => m.upstreamId),
        })
      : [];
    const byId = new Map(updated.map((i) => [i.id, fromRest(i)]));
    for (const m of ready) {
      if (m.streamId === target.streamId) continue;
      const d: RecordIncidentUpstreamCallSucceeded['data'] = {
        requestId: m.requestId,
        action,
        via: 'rest',
        incident: byId.get(m.upstreamId) ?? null,
        noteId: null,
      };
      const outcome = await dispatchCommand(options.dispatch, {
        type: 'RecordIncidentUpstreamCallSucceeded',
        data: data(d, { streamId: m.streamId }),
        metadata: {
          now: ctx.now().toISOString(),
          commandId: uuidv5(`${INCIDENT_UPSTREAM_PROCESSOR}:bulk:${m.requestId}:1`),
          actor: ACTOR,
        },
      });
      if (outcome.outcome === 'rejected') {
        ctx.logger.warn(
          { code: outcome.code, streamId: m.streamId },
          `bulk answer not recorded: ${outcome.message}`,
        );
      }
    }
    if (selfResolved) throw notAcknowledged(selfResolved);
    return { incident: byId.get(self) ?? null, noteId: null };
  };

  const call = async (args: Args): Promise<Outcome> => {
    const { request: r, state } = args;
    const from = r.asUser.email;
    if (r.bulk && r.attempt === 1 && (r.action === 'acknowledge' || r.action === 'resolve')) {
      return bulkCall(args);
    }
    switch (r.action) {
      case 'trigger': {
        const t = triggerOf(state);
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
        if (current.status === 'resolved') throw notAcknowledged(current);
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
          throw new ChatOpsError(
            'SB_UPSTREAM_REJECTED',
            `it was already resolved in the incident service${resolvedBy(current)}`,
            {
              cause: error,
              details: { reason: 'already_resolved', retryable: false },
            },
          );
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
        const note = await pd.addIncidentNote(upstreamIdOf(state), { from, content: r.content ?? '' });
        return { incident: null, noteId: note.id };
      }
      // Setting the same value again is a no-op upstream: safe to repeat, no check needed.
      case 'set_priority': {
        if (!r.priority) throw new ChatOpsError('SB_ILLEGAL_STATE', 'no priority recorded on the request');
        const updated = await pd.updateIncident(upstreamIdOf(state), {
          from,
          priority: { id: r.priority.id },
        });
        return { incident: fromRest(updated), noteId: null };
      }
      case 'set_urgency': {
        if (!r.urgency) throw new ChatOpsError('SB_ILLEGAL_STATE', 'no urgency recorded on the request');
        const updated = await pd.updateIncident(upstreamIdOf(state), { from, urgency: r.urgency });
        return { incident: fromRest(updated), noteId: null };
      }
      default:
        return exhaustive(r.action, 'upstream action');
    }
  };

  const spec: UpstreamCallSpec<IncidentState, PendingRequest, UpstreamCallTarget, Outcome> = {
    processorId: INCIDENT_UPSTREAM_PROCESSOR,
    actor: ACTOR,
    policy: options.retry ?? UPSTREAM_RETRY,
    readState: async (store, streamId) => (await readIncidentState(store, streamId)).state,
    pendingRequest: findPendingRequest,
    check,
    call,
    succeeded: ({ request: r, result, target }) => {
      const d: RecordIncidentUpstreamCallSucceeded['data'] = {
        requestId: r.requestId,
        action: r.action,
        via: 'rest',
        incident: result.incident,
        noteId: result.noteId,
      };
      return { type: 'RecordIncidentUpstreamCallSucceeded', data: data(d, target) };
    },
    failed: ({ request: r, failure, target }) => {
      const d: RecordIncidentUpstreamCallFailed['data'] = {
        requestId: r.requestId,
        action: r.action,
        attempt: failure.attempt,
        maxAttempts: failure.maxAttempts,
        code: failure.code,
        message: failure.message,
        nextAttemptAt: failure.nextAttemptAt,
      };
      return { type: 'RecordIncidentUpstreamCallFailed', data: data(d, target) };
    },
    retry: ({ request: r, attempt, target }) => {
      const d: RetryIncidentUpstreamCall['data'] = { requestId: r.requestId, action: r.action, attempt };
      return { type: 'RetryIncidentUpstreamCall', data: data(d, target) };
    },
    retryTimerId: (r, failedAttempt) => incidentRetryTimerId(r.requestId, failedAttempt),
    record: (command) => options.dispatch(command),
  };

  return createUpstreamCallProcessor({
    filter: { streamPrefixes: ['incident-'], eventTypes: [...REQUEST_EVENT_TYPES] },
    target: targetOf,
    spec,
  });
};

export const INCIDENT_READ_BACK_PROCESSOR = 'incident-read-back';

/**
 * `incident-read-back`: after a status fact (our call's answer, a webhook, a webhook ignored as out
 * of order) reads the incident back from the incident service and records what it has now
 * (`RecordIncidentUpstreamSnapshot`), so the card converges on the vendor's state even when a
 * webhook is late, lost or out of order. The decider applies a read only when the vendor's
 * `last_status_change_at` is newer than the vendor time of the status we hold, so a read that lags
 * behind (the vendor's reads are eventually consistent) changes nothing. Its own processor, so the
 * reads never hold up the calls people are waiting for.
 *
 * @example
 * const readBack = createIncidentReadBackReactor({ pagerduty, dispatch: bus.dispatch, slackUserOf });
 */
export const createIncidentReadBackReactor = (
  options: Readonly<{
    pagerduty: Pick<PagerDutyClient, 'getIncident'>;
    dispatch: Dispatch;
    slackUserOf?: SlackUserOf;
  }>,
): Processor => {
  const pd = options.pagerduty;
  const slackUserOf = options.slackUserOf ?? (() => null);
  const fromRest = (i: Parameters<typeof upstreamIncidentFromRest>[0]): UpstreamIncident => ({
    ...upstreamIncidentFromRest(i, slackUserOf),
    statusChangedAt: i.last_status_change_at ?? null,
    updatedAt: i.updated_at ?? null,
  });

  /**
   * A read that fails is tried again a few times (a reset connection, a slow moment): when no
   * webhook comes, this read is all that brings the card to what the vendor has. After the last
   * try it is logged and left to the webhooks (and the next status fact's read).
   */
  const readBack = async (event: RecordedEvent, ctx: ProcessorContext): Promise<void> => {
    const { state } = await readIncidentState(ctx.store, event.streamId);
    const id = state.context.link?.upstreamId;
    if (!id) return;
    let current: Awaited<ReturnType<typeof pd.getIncident>> | undefined;
    for (let attempt = 0; current === undefined; attempt++) {
      try {
        current = await pd.getIncident(id);
      } catch (error) {
        if (ctx.signal.aborted) throw error;
        const waitMs = READ_BACK_RETRY_MS[attempt];
        const retryable = !isChatOpsError(error) || error.details.retryable === true;
        if (waitMs === undefined || !retryable) {
          ctx.logger.warn(
            { err: asError(error), streamId: event.streamId },
            'reading the incident back failed',
          );
          return;
        }
        const asked = isChatOpsError(error) ? Number(error.details.retryAfterMs) : Number.NaN;
        await abortableSleep(
          Number.isFinite(asked) ? Math.max(waitMs, Math.min(asked, 10_000)) : waitMs,
          ctx.signal,
        );
      }
    }
    const d: RecordIncidentUpstreamSnapshot['data'] = {
      incident: fromRest(current),
      statusChangedBy: actorFromWebhookAgent(current.last_status_change_by, slackUserOf),
    };
    const command: RecordIncidentUpstreamSnapshot = {
      type: 'RecordIncidentUpstreamSnapshot',
      data: d,
      metadata: {
        now: ctx.now().toISOString(),
        commandId: uuidv5(`${INCIDENT_READ_BACK_PROCESSOR}:${event.id}`),
        actor: 'system:incident-read-back',
        causationId: event.id,
      },
    };
    // Most reads confirm what we hold: record only a read that changes something, so the common
    // case costs one GET and no write (the bus decides again on the stream as it is then).
    if (!changesSomething(command, state)) return;
    const r = await dispatchCommand(options.dispatch, {
      ...command,
      data: { ...d, streamId: event.streamId } as unknown as JsonObject,
    });
    if (r.outcome === 'rejected') ctx.logger.warn({ code: r.code }, `read-back not recorded: ${r.message}`);
  };

  return {
    id: INCIDENT_READ_BACK_PROCESSOR,
    filter: { streamPrefixes: ['incident-'], eventTypes: [...READ_BACK_AFTER] },
    async handle(event, ctx) {
      if (needsReadBack(event)) await readBack(event, ctx);
    },
  };
};

/** Whether the decider would record anything for a read-back on `state` (refusals count: logged). */
const changesSomething = (command: RecordIncidentUpstreamSnapshot, state: IncidentState): boolean => {
  try {
    return incidentDecider.decide(command, state).length > 0;
  } catch {
    return true;
  }
};

/** Waits before the read-back's second, third and fourth tries. */
const READ_BACK_RETRY_MS = [250, 1_000, 3_000] as const;

/** Status facts after which the incident is read back (see `readBack`). */
const READ_BACK_AFTER = [
  'IncidentAcknowledged',
  'IncidentUnacknowledged',
  'IncidentResolved',
  'IncidentReopened',
  'IncidentWebhookIgnored',
  // The vendor sends no webhook for an urgency changed in its web app: reading the incident back
  // after a priority or urgency fact brings that (and anything else) to the card.
  'IncidentPriorityChanged',
  'IncidentUrgencyChanged',
] as const;

/**
 * A status fact that came from our call's answer or a webhook (not from a read-back itself, which
 * has no webhook event id and source `webhook`), or a webhook ignored as out of order.
 */
const needsReadBack = (event: RecordedEvent): boolean => {
  if (!(READ_BACK_AFTER as readonly string[]).includes(event.type)) return false;
  const d = event.data as { source?: unknown; webhookEventId?: unknown; reason?: unknown };
  if (event.type === 'IncidentWebhookIgnored') return d.reason === 'stale';
  return !(d.source === 'webhook' && d.webhookEventId === null);
};

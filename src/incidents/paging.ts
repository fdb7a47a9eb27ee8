import type { z } from 'zod';
import { incidentPhase, incidentStatus } from '../../machines/incident/decider.ts';
import {
  incidentPagingDecider,
  incidentPagingStreamId,
  pageActivityDecider,
  type RecordIncidentPageActivity,
  type recordIncidentPageActivitySchema,
} from '../../machines/incident/paging.ts';
import type { UnreachableReason } from '../../machines/incident/pagingPlan.ts';
import { isIncidentStreamId } from '../../machines/incident/streams.ts';
import type { CommandRoute } from '../application/dispatch.ts';
import { hasCode, ValidationError } from '../core/errors.ts';
import { uuidv5 } from '../core/ids.ts';
import type { Command } from '../core/messages.ts';
import type { EventStore } from '../eventStore/eventStore.ts';
import type { IncidentResponses, PhoneResponseOutcome } from '../lifecycles/ports.ts';
import type { IdentityResolver } from '../people/identity.ts';
import type { Dispatch } from '../processors/dispatchCommand.ts';
import { slackDatesAsFallback } from '../slack/time.ts';
import { incidentRejectionText } from './blocks/incidentReplies.ts';
import { readIncidentState } from './incidentState.ts';

/**
 * Paging, the incident lifecycle's half (issue 10 items 4-5): the routes, ids and wording of pages
 * and the `incidentResponse` port. Its rules (which page is due when, page activity on the timeline)
 * are pure, in machines/incident/paging.ts. The phone side is the verification lifecycle's `pager`
 * port; the way back (a reply `4` acknowledging) is the `incidentResponse` port offered here.
 *
 * Streams and commands:
 * - `incidentpaging-<incident id>`: `PageIncidentResponders { incident, level }`, dispatched by the
 *   durable timer `incident-page-<incident id>-<level>` N minutes after the incident was
 *   triggered (or escalated), becomes `IncidentPagingDue` once per level; the paging reactor
 *   (paging.reactor.ts) pages whoever is on call then.
 * - `RecordIncidentPageActivity` is recorded in the incident's own stream as a command (it changes
 *   nothing the incident decider folds): a receipt, a skip ("no verified phone"), a hold-back, or
 *   who acknowledged by phone. `/incident timeline` shows them (blocks/incidentTimeline.ts).
 */

/** One page per incident, level, round and person: the pager's key (36 characters, fits `client_ref`). */
export const incidentPageId = (
  incidentStreamId: string,
  level: number,
  slackUserId: string,
  round = 0,
): string => uuidv5(`incident-page:${incidentStreamId}:${level}:${slackUserId}${round ? `:r${round}` : ''}`);

/** Escalation levels a page id is looked for at (as many as the paging reactor pages at most). */
export const MAX_PAGED_LEVELS = 20;

/**
 * The level a page of the person in `round` was sent at, from its (deterministic) page id; null
 * when it is not one of theirs in that round (an earlier round's page, a test page).
 */
export const pagedLevelOf = (
  incidentStreamId: string,
  slackUserId: string,
  pageId: string,
  round: number,
): number | null => {
  for (let level = 1; level <= MAX_PAGED_LEVELS; level++) {
    if (incidentPageId(incidentStreamId, level, slackUserId, round) === pageId) return level;
  }
  return null;
};

/** Rounds of paging so far: how many times the incident went back to triggered. */
export const pagingRoundOf = (history: readonly Readonly<{ kind: string; type: string }>[]): number =>
  history.filter((m) => m.kind === 'event' && m.type === 'IncidentUnacknowledged').length;

/** The command that makes a person unreachable for the round (issue 18), once per round and person. */
export const markPageUndeliverable = (
  data: Readonly<{
    incident: string;
    level: number;
    round: number;
    slackUserId: string;
    reason: UnreachableReason;
    replan: boolean;
  }>,
  now: Date,
): Command => ({
  type: 'MarkPageUndeliverable',
  data: { ...data },
  metadata: {
    now: now.toISOString(),
    commandId: uuidv5(`page-undeliverable:${data.incident}:${data.round}:${data.slackUserId}`),
    actor: PAGE_ACTIVITY_ACTOR,
  },
});

// ---------------------------------------------------------------- the paging-due rule

export const pagingRoutes = (): Readonly<Record<string, CommandRoute>> => ({
  PageIncidentResponders: {
    decider: incidentPagingDecider as unknown as CommandRoute['decider'],
    streamId: (c) => incidentPagingStreamId((c.data as { incident: string }).incident),
  },
  MarkPageUndeliverable: {
    decider: incidentPagingDecider as unknown as CommandRoute['decider'],
    streamId: (c) => incidentPagingStreamId((c.data as { incident: string }).incident),
  },
  RecordIncidentPageActivity: {
    decider: pageActivityDecider as unknown as CommandRoute['decider'],
    streamId: (c) => (c.data as { streamId: string }).streamId,
  },
});

export const PAGE_ACTIVITY_ACTOR = 'system:paging';

export const pageActivity = (
  data: z.infer<typeof recordIncidentPageActivitySchema>,
  key: string,
  now: Date,
): RecordIncidentPageActivity => ({
  type: 'RecordIncidentPageActivity',
  data,
  metadata: { now: now.toISOString(), commandId: uuidv5(`page-activity:${key}`), actor: PAGE_ACTIVITY_ACTOR },
});

// ---------------------------------------------------------------- what a page says

export type PageWording = Readonly<{
  label: string;
  text: string;
  spokenText: string;
  number: number | null;
}>;

/**
 * `[Switchboard] #12 Checkout 5xx (P1), triggered {since} — reply 4 to acknowledge, 6 to resolve`,
 * and what the call reads. `{since}` is the trigger, which the pager says in the person's own zone
 * when the SMS and the call go out (issue 19): `triggered today, 21:58 Asia/Singapore`.
 */
export const pageWording = (
  incident: Readonly<{
    number: number | null;
    title: string;
    priority: string | null;
    service: string | null;
    triggeredAt: string | null;
  }>,
): PageWording => {
  const title = incident.title.replace(/\s+/g, ' ').trim().slice(0, 80);
  const label = `${incident.number === null ? '' : `#${incident.number} `}${title}`;
  const priority = incident.priority ? ` (${incident.priority.slice(0, 20)})` : '';
  return {
    label,
    number: incident.number,
    text: `[Switchboard] ${label}${priority}${incident.triggeredAt ? ', triggered {since}' : ''} — reply 4 to acknowledge, 6 to resolve`,
    spokenText:
      `This is Switchboard. Incident ${incident.number ?? ''}: ${title}` +
      (incident.priority ? `, priority ${incident.priority.slice(0, 20)}` : '') +
      (incident.service ? `, on ${incident.service.slice(0, 80)}` : '') +
      (incident.triggeredAt ? ', triggered {since}' : '') +
      ', is still not acknowledged',
  };
};

// ---------------------------------------------------------------- the incidentResponse port

/** A refusal in words an SMS can carry: names instead of Slack mentions, no mrkdwn. */
const forPhone = (details: Record<string, unknown>, viewer: string): string => {
  const by = details.by as { slackUserId?: unknown; name?: unknown } | null | undefined;
  const named =
    by && typeof by === 'object'
      ? {
          ...details,
          by: { ...by, slackUserId: null, name: typeof by.name === 'string' ? by.name : 'someone' },
        }
      : details;
  return slackDatesAsFallback(incidentRejectionText(named, viewer))
    .replace(/<@[A-Z0-9]+>/g, 'someone')
    .replace(/[*`]/g, '')
    .replace(/&amp;/g, '&')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>');
};

/**
 * The `incidentResponse` port: a person answering a page from their phone acknowledges or resolves
 * as themselves (their incident-service user, as `/incident ack` would), through the incident's
 * normal durable path (`AcknowledgeIncident` / `ResolveIncident`, then the upstream call with its
 * retries); a `RecordIncidentPageActivity` beside it says it came from the phone. Receipts are
 * recorded the same way, once each.
 */
export const createIncidentResponses = (
  deps: Readonly<{
    store: EventStore;
    dispatch: () => Dispatch;
    identity: Pick<IdentityResolver, 'resolve'>;
    now: () => Date;
  }>,
): IncidentResponses => ({
  async respond(response): Promise<PhoneResponseOutcome> {
    if (!isIncidentStreamId(response.incident)) {
      throw new ValidationError(`not an incident stream: ${response.incident}`);
    }
    const { state } = await readIncidentState(deps.store, response.incident);
    const link = state.context.link;
    const facts = state.context.incident;
    const label = `${link ? `#${link.number} ` : ''}${facts?.title ?? 'the incident'}`;
    const slackUserId = response.person.slackUserId;
    if (incidentPhase(state) !== 'open' && incidentStatus(state) !== 'resolved') {
      return { ok: false, label, reason: 'the incident is not open yet' };
    }
    let asUser: Awaited<ReturnType<IdentityResolver['resolve']>>;
    try {
      asUser = await deps.identity.resolve(slackUserId);
    } catch (error) {
      if (!hasCode(error, 'SB_UNMAPPED_USER')) throw error;
      return { ok: false, label, reason: (error as Error).message };
    }
    const at = response.at.toISOString();
    const command: Command = {
      type: response.action === 'acknowledge' ? 'AcknowledgeIncident' : 'ResolveIncident',
      data: {
        streamId: response.incident,
        by: slackUserId,
        asUser: { id: asUser.id, email: asUser.email, name: asUser.name },
        ...(response.action === 'resolve' ? { resolution: null } : {}),
      },
      metadata: {
        now: at,
        commandId: uuidv5(`phone-response:${response.responseId}`),
        actor: slackUserId,
      },
    };
    try {
      await deps.dispatch()(command);
    } catch (error) {
      if (!hasCode(error, 'SB_ILLEGAL_STATE')) throw error;
      const details = (error as { details?: Record<string, unknown> }).details ?? {};
      return { ok: false, label, reason: forPhone(details, slackUserId) };
    }
    await deps.dispatch()(
      pageActivity(
        {
          streamId: response.incident,
          kind: response.action === 'acknowledge' ? 'phone_acknowledged' : 'phone_resolved',
          slackUserId,
          name: null,
          level: null,
          detail: null,
          via: response.via,
        },
        `response:${response.responseId}`,
        response.at,
      ),
    );
    return { ok: true, label };
  },

  async reassign(input): Promise<PhoneResponseOutcome> {
    if (!isIncidentStreamId(input.incident)) {
      throw new ValidationError(`not an incident stream: ${input.incident}`);
    }
    const { state } = await readIncidentState(deps.store, input.incident);
    const link = state.context.link;
    const label = `${link ? `#${link.number} ` : ''}${state.context.incident?.title ?? 'the incident'}`;
    if (incidentPhase(state) !== 'open') return { ok: false, label, reason: 'the incident is not open' };
    let by: Awaited<ReturnType<IdentityResolver['resolve']>>;
    let to: Awaited<ReturnType<IdentityResolver['resolve']>>;
    try {
      by = await deps.identity.resolve(input.from.slackUserId);
      to = await deps.identity.resolve(input.to.slackUserId, {
        kind: 'target',
        slackUserId: input.to.slackUserId,
      });
    } catch (error) {
      if (!hasCode(error, 'SB_UNMAPPED_USER')) throw error;
      return { ok: false, label, reason: (error as Error).message };
    }
    try {
      await deps.dispatch()({
        type: 'ReassignIncident',
        data: {
          streamId: input.incident,
          by: input.from.slackUserId,
          asUser: { id: by.id, email: by.email, name: by.name },
          assignees: [{ id: to.id, name: to.name, slackUserId: input.to.slackUserId }],
        },
        metadata: {
          now: input.at.toISOString(),
          commandId: uuidv5(`incident-reassign:${input.reassignId}`),
          actor: input.from.slackUserId,
        },
      });
    } catch (error) {
      if (!hasCode(error, 'SB_ILLEGAL_STATE')) throw error;
      return { ok: false, label, reason: (error as Error).message };
    }
    return { ok: true, label };
  },

  async report(report) {
    try {
      await deps.dispatch()(
        pageActivity(
          {
            streamId: report.incident,
            kind: report.kind,
            slackUserId: report.person.slackUserId,
            name: null,
            level: null,
            detail: report.detail?.slice(0, 300) ?? null,
            via: null,
          },
          `report:${report.reportId}`,
          report.at,
        ),
      );
    } catch (error) {
      // A report about a stream with no incident (a test page, a stream since deleted) has nowhere to go.
      if (!hasCode(error, 'SB_ILLEGAL_STATE') && !hasCode(error, 'SB_VALIDATION')) throw error;
      return;
    }
    if (!report.failure || !report.pageId) return;
    // The page did not reach them (issue 18): while the incident still waits for someone, they are
    // unreachable for this round, and the paging reactor pages whoever comes next at once.
    const { state, history } = await readIncidentState(deps.store, report.incident);
    if (incidentPhase(state) !== 'open' || incidentStatus(state) !== 'triggered') return;
    const round = pagingRoundOf(history);
    const level = pagedLevelOf(report.incident, report.person.slackUserId, report.pageId, round);
    if (level === null) return; // an earlier round's page: that round is over
    await deps.dispatch()(
      markPageUndeliverable(
        {
          incident: report.incident,
          level,
          round,
          slackUserId: report.person.slackUserId,
          reason: report.failure,
          replan: true,
        },
        report.at,
      ),
    );
  },
});

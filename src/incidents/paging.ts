import { z } from 'zod';
import { incidentPhase, incidentStatus } from '../../machines/incident/decider.ts';
import { isIncidentStreamId } from '../../machines/incident/streams.ts';
import { type Decider, DecisionRejected } from '../../machines/shared/machineDecider.ts';
import type { CommandRoute } from '../application/dispatch.ts';
import { hasCode, ValidationError } from '../core/errors.ts';
import { uuidv5 } from '../core/ids.ts';
import type { Command, Event } from '../core/messages.ts';
import type { EventStore } from '../eventStore/eventStore.ts';
import type { IncidentResponses, PageReport, PhoneResponseOutcome } from '../lifecycles/ports.ts';
import type { IdentityResolver } from '../people/identity.ts';
import type { Dispatch } from '../processors/dispatchCommand.ts';
import { formatTimestamp } from '../slack/blocks/format.ts';
import { incidentRejectionText } from './blocks/incidentReplies.ts';
import { readIncidentState } from './incidentState.ts';

/**
 * Paging, the incident lifecycle's half (issue 10 items 4-5): which page is due when, and what the
 * incident's timeline says about pages. The phone side is the verification lifecycle's `pager`
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

export const INCIDENT_PAGING_STREAM_PREFIX = 'incidentpaging-';
const INCIDENT_PREFIX = 'incident-';

export const incidentPagingStreamId = (incidentStreamId: string): string => {
  if (!isIncidentStreamId(incidentStreamId))
    throw new TypeError(`not an incident stream: ${incidentStreamId}`);
  return INCIDENT_PAGING_STREAM_PREFIX + incidentStreamId.slice(INCIDENT_PREFIX.length);
};

export const incidentOfPagingStream = (pagingStreamId: string): string =>
  INCIDENT_PREFIX + pagingStreamId.slice(INCIDENT_PAGING_STREAM_PREFIX.length);

/**
 * The page timer of a level. `round` counts the times the incident went back to triggered
 * (`IncidentUnacknowledged`, the service's acknowledgement timeout): each round pages again.
 */
export const pageTimerId = (incidentStreamId: string, level: number, round = 0): string =>
  `incident-page-${incidentStreamId.slice(INCIDENT_PREFIX.length)}-${level}${round ? `-r${round}` : ''}`;

/** One page per incident, level, round and person: the pager's key (36 characters, fits `client_ref`). */
export const incidentPageId = (
  incidentStreamId: string,
  level: number,
  slackUserId: string,
  round = 0,
): string => uuidv5(`incident-page:${incidentStreamId}:${level}:${slackUserId}${round ? `:r${round}` : ''}`);

// ---------------------------------------------------------------- the paging-due rule

const streamId = z.string().refine(isIncidentStreamId, 'is not an incident stream');
const round = z.number().int().min(0).max(1000).optional();
export const pageIncidentRespondersSchema = z.object({
  incident: streamId,
  level: z.number().int().min(1),
  round,
});
type PageIncidentResponders = Command<'PageIncidentResponders', z.infer<typeof pageIncidentRespondersSchema>>;
export type IncidentPagingDue = Event<
  'IncidentPagingDue',
  { incident: string; level: number; round?: number | undefined; at: string }
>;

const incidentPagingDueSchema = z.object({
  incident: streamId,
  level: z.number().int().min(1),
  round,
  at: z.string().min(1),
});

const dueKey = (d: Readonly<{ level: number; round?: number | undefined }>) => `${d.level}:${d.round ?? 0}`;

/** `incidentpaging-<id>`: each level's page (of each round) is due once. */
export const incidentPagingDecider: Decider<readonly string[], PageIncidentResponders, IncidentPagingDue> = {
  decide: (command, due) =>
    due.includes(dueKey(command.data))
      ? []
      : [
          {
            type: 'IncidentPagingDue',
            data: {
              incident: command.data.incident,
              level: command.data.level,
              ...(command.data.round ? { round: command.data.round } : {}),
              at: command.metadata.now,
            },
          },
        ],
  evolve: (due, event) => [...due, dueKey(event.data)],
  initialState: () => [],
  parseEvent: (stored) => {
    if (stored.type !== 'IncidentPagingDue')
      throw new ValidationError(`${stored.type} is not a paging event`);
    return { type: 'IncidentPagingDue', data: incidentPagingDueSchema.parse(stored.data) };
  },
  commandSchemas: { PageIncidentResponders: pageIncidentRespondersSchema },
};

// ---------------------------------------------------------------- page activity on the incident's timeline

export const PAGE_ACTIVITY_KINDS = [
  'sms_submitted',
  'sms_delivered',
  'sms_rejected',
  'sms_failed',
  'call_created',
  'call_ringing',
  'call_answered',
  'call_completed',
  'call_busy',
  'call_failed',
  'call_unanswered',
  'no_verified_phone',
  'opted_out',
  'held_back',
  'reply_ignored',
  'phone_acknowledged',
  'phone_resolved',
  'no_pager',
  'nobody_on_call',
  'no_slack_user',
] as const satisfies readonly (PageReport['kind'] | string)[];
export type PageActivityKind = (typeof PAGE_ACTIVITY_KINDS)[number];

export const recordIncidentPageActivitySchema = z.object({
  streamId,
  kind: z.enum(PAGE_ACTIVITY_KINDS),
  /** Who was paged (or answered); null when nobody in particular. */
  slackUserId: z.string().nullable(),
  /** A name, when there is no Slack user to mention. */
  name: z.string().max(200).nullable(),
  level: z.number().int().nullable(),
  detail: z.string().max(300).nullable(),
  via: z.enum(['sms', 'voice']).nullable(),
});
export type RecordIncidentPageActivity = Command<
  'RecordIncidentPageActivity',
  z.infer<typeof recordIncidentPageActivitySchema>
>;

/**
 * Records page activity in an incident's stream, as a command and nothing else (the incident's
 * decider never sees it; the timeline reads it). Refused for a stream with no incident in it.
 */
export const pageActivityDecider: Decider<number, RecordIncidentPageActivity, Event> = {
  decide: (command, events) => {
    if (events === 0) {
      throw new DecisionRejected(`no incident in ${command.data.streamId}`, { reason: 'not_triggered' });
    }
    return [];
  },
  evolve: (events) => events + 1,
  initialState: () => 0,
  commandSchemas: { RecordIncidentPageActivity: recordIncidentPageActivitySchema },
};

export const pagingRoutes = (): Readonly<Record<string, CommandRoute>> => ({
  PageIncidentResponders: {
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

/** `[Switchboard] #12 Checkout 5xx (P1) — reply 4 to acknowledge, 6 to resolve`, and what the call reads. */
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
    text: `[Switchboard] ${label}${priority} — reply 4 to acknowledge, 6 to resolve`,
    spokenText:
      `This is Switchboard. Incident ${incident.number ?? ''}: ${title}` +
      (incident.priority ? `, priority ${incident.priority.slice(0, 20)}` : '') +
      (incident.service ? `, on ${incident.service.slice(0, 80)}` : '') +
      (incident.triggeredAt ? `, triggered ${formatTimestamp(incident.triggeredAt)}` : '') +
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
  return incidentRejectionText(named, viewer)
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
    }
  },
});

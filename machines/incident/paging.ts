import { z } from 'zod';
import { eventParser } from '../shared/eventSchemas.ts';
import { type Decider, DecisionRejected } from '../shared/machineDecider.ts';
import type { Command, Event } from '../shared/messages.ts';
import { UNREACHABLE_REASONS } from './pagingPlan.ts';
import { isIncidentStreamId } from './streams.ts';

/**
 * Paging, the incident lifecycle's rules (pure): when each level's page is due, once, and the page
 * activity recorded on an incident's timeline. The effects (timers, the on-call lookup, the pager
 * port) are in src/incidents/paging.reactor.ts.
 *
 * - `incidentpaging-<incident id>`: `PageIncidentResponders { incident, level, round }`, dispatched
 *   by the durable timer `incident-page-<incident id>-<level>` N minutes after the incident was
 *   triggered (or escalated), becomes `IncidentPagingDue` once per level and round.
 * - `RecordIncidentPageActivity` is recorded in the incident's own stream as a command (it changes
 *   nothing the incident decider folds): a receipt, a skip ("no verified phone"), a hold-back, or
 *   who acknowledged by phone.
 * - `MarkPageUndeliverable { incident, level, round, slackUserId, reason, replan }` (issue 18): the
 *   person's page cannot be delivered, so they are unreachable for the rest of the round
 *   (`IncidentPageUndeliverable`, once per round and person, in `incidentpaging-<id>`); the paging
 *   reactor pages whoever comes next. `replan` is true for a failure found after sending (a refused
 *   SMS, a call not answered): the level is planned again at once.
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
const unreachableKey = (d: Readonly<{ slackUserId: string; round?: number | undefined }>) =>
  `${d.round ?? 0}:${d.slackUserId}`;

export const markPageUndeliverableSchema = z.object({
  incident: streamId,
  /** The level whose page id the failed page had (where they were paged). */
  level: z.number().int().min(1),
  round,
  slackUserId: z.string().regex(/^[UW][A-Z0-9]{2,30}$/),
  reason: z.enum(UNREACHABLE_REASONS),
  /** Found after sending (a receipt, a refusal, given up): plan the level again now. */
  replan: z.boolean(),
});
type MarkPageUndeliverable = Command<'MarkPageUndeliverable', z.infer<typeof markPageUndeliverableSchema>>;
export type IncidentPageUndeliverable = Event<
  'IncidentPageUndeliverable',
  z.infer<typeof markPageUndeliverableSchema> & { at: string }
>;
export type IncidentPagingEvent = IncidentPagingDue | IncidentPageUndeliverable;

/** What `incidentpaging-<id>` knows: each level's page due (`level:round`), who is unreachable (`round:user`). */
export type IncidentPagingState = Readonly<{ due: readonly string[]; unreachable: readonly string[] }>;

/** `incidentpaging-<id>`: each level's page (of each round) is due once; each person is unreachable once a round. */
export const incidentPagingDecider: Decider<
  IncidentPagingState,
  PageIncidentResponders | MarkPageUndeliverable,
  IncidentPagingEvent
> = {
  decide: (command, state) => {
    if (command.type === 'MarkPageUndeliverable') {
      if (state.unreachable.includes(unreachableKey(command.data))) return [];
      const { round: r, ...rest } = command.data;
      return [
        {
          type: 'IncidentPageUndeliverable',
          data: { ...rest, ...(r ? { round: r } : {}), at: command.metadata.now },
        },
      ];
    }
    return state.due.includes(dueKey(command.data))
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
        ];
  },
  evolve: (state, event) =>
    event.type === 'IncidentPageUndeliverable'
      ? { ...state, unreachable: [...state.unreachable, unreachableKey(event.data)] }
      : { ...state, due: [...state.due, dueKey(event.data)] },
  initialState: () => ({ due: [], unreachable: [] }),
  parseEvent: eventParser<IncidentPagingEvent>('incident paging', {
    schemas: {
      IncidentPagingDue: incidentPagingDueSchema,
      IncidentPageUndeliverable: markPageUndeliverableSchema.extend({ at: z.string().min(1) }),
    },
    upcasters: {},
  }),
  commandSchemas: {
    PageIncidentResponders: pageIncidentRespondersSchema,
    MarkPageUndeliverable: markPageUndeliverableSchema,
  },
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
  // Leave-aware paging (issue 12; pagingPlan.ts): someone on approved leave skipped (`detail`: their
  // last day, YYYY-MM-DD), who is paged in their place, a level where everyone is away.
  'on_leave',
  'stand_in',
  'level_on_leave',
  'everyone_on_leave',
  // Issue 18: a page that could not be delivered (`reason`), a level where nobody could be paged
  // (`toLevel`: the level paged instead), and nobody left to page at all.
  'undeliverable',
  'level_unreachable',
  'nobody_paged',
] as const;
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
  /** `stand_in`: the Slack user on leave whose place they take. */
  standsInFor: z.string().nullable().optional(),
  /** `level_on_leave`: the level paged instead. */
  toLevel: z.number().int().nullable().optional(),
  /** `undeliverable`: why the page could not reach them. */
  reason: z.enum(UNREACHABLE_REASONS).nullable().optional(),
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

import { z } from 'zod';
import { eventParser } from '../shared/eventSchemas.ts';
import { type Decider, DecisionRejected } from '../shared/machineDecider.ts';
import { type Command, type Event, exhaustive } from '../shared/messages.ts';
import {
  decideFailure,
  decideRetry,
  FIRST_ATTEMPT,
  failureApplies,
  recordUpstreamCallFailedSchema,
  retryApplies,
  retryUpstreamCallSchema,
  type UpstreamAttempts,
  type UpstreamRequest,
  upstreamCallFailedSchema,
  upstreamCallRetriedSchema,
  withFailedAttempt,
  withRetry,
} from '../shared/upstreamRequest.ts';

/**
 * A cover (issue 12): someone covers an absent person's on-call shifts, one schedule override per
 * slot in the incident service. One stream per cover, `timeoffcover-<cover id>` (a UUID).
 *
 * Asked by "Approve and cover with …" on a time-off approval card (reason `time_off`), or by a
 * leaver report's cover button (reason `leaver`, slice j-leaver): `RequestCover`.
 *
 *   none ─CoverRequested─► slots each: pending ─SlotCreated─► created
 *                                          └──SlotFailed──► failed  (refused, or the call failed for good)
 *   any ─CoverWithdrawn─► withdrawn: slots still pending are dropped (never created); each created
 *                         override with a known id is removed (issue 20: `DELETE
 *                         /schedules/{id}/overrides/{override_id}`, a durable call, action
 *                         `delete_override`, request id `<cover id>:slot:<index>:remove`):
 *                         ─CoverOverrideRemoved─► removed | ─CoverOverrideRemoveFailed─► failed;
 *                         the schedule's channel is told what was removed and what is left to do
 *
 * The cover is told by DM (issue 20) and may say they can't (`DeclineCover`, only them, while a
 * shift is not over): the same `CoverWithdrawn`, with `declinedBy`; the hole is open again and
 * whoever asked is told.
 *
 * Each pending slot is a durable upstream call (machines/shared/upstreamRequest.ts, action
 * `create_override`, request id `<cover id>:slot:<index>`). The service has no idempotency key, so
 * the processor checks first (`scheduleOverrides.covered`) before every create: a retry, a
 * redelivery or a crash between create and record never makes a second override. An override
 * that lands after the cover was withdrawn (its call was already in flight) is still recorded
 * (`CoverSlotCreated`): it exists, and its removal is announced like the others.
 */
export const COVER_STREAM_PREFIX = 'timeoffcover-';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The cover id in a (hostile) value, or null when it is not one of ours. */
export const parseCoverId = (value: unknown): string | null =>
  typeof value === 'string' && UUID.test(value) ? value : null;

export const coverStreamId = (coverId: string): string => {
  if (parseCoverId(coverId) === null) throw new TypeError(`not a cover id: ${JSON.stringify(coverId)}`);
  return COVER_STREAM_PREFIX + coverId;
};

export const coverIdOfStream = (streamId: string): string | null =>
  streamId.startsWith(COVER_STREAM_PREFIX) ? parseCoverId(streamId.slice(COVER_STREAM_PREFIX.length)) : null;

/** The upstream request id of a slot: unique across covers (retry timers and outcome ids derive from it). */
export const coverSlotRequestId = (coverId: string, index: number): string => `${coverId}:slot:${index}`;

/** The upstream request id of a slot's removal (issue 20: its override deleted once the cover is withdrawn). */
export const coverRemovalRequestId = (coverId: string, index: number): string =>
  `${coverId}:slot:${index}:remove`;

export const coverActionSchema = z.enum(['create_override', 'delete_override']);
export type CoverAction = z.infer<typeof coverActionSchema>;

const coverId = z.string().regex(UUID, 'must be a cover id (a UUID)');
const id = z.string().min(1).max(200);
const at = z.string().min(1).max(40);
const slackUserId = z.string().regex(/^[UW][A-Z0-9]{2,31}$/, 'must be a Slack user id');

export const coverPersonSchema = z.object({ slackUserId, displayName: z.string().max(200) });
export type CoverPerson = z.infer<typeof coverPersonSchema>;

/** One override to make: who is absent from which schedule, when (ISO instants, `start` < `end`). */
export const coverSlotSchema = z.object({
  scheduleId: z.string().min(1).max(64),
  scheduleName: z.string().max(200).nullable(),
  escalationPolicyId: z.string().max(64).nullable(),
  escalationPolicyName: z.string().max(200).nullable(),
  level: z.number().int().min(1).max(100).nullable(),
  start: at,
  end: at,
});
export type CoverSlot = z.infer<typeof coverSlotSchema>;

export const coverReasonSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('time_off'), timeOffId: id }),
  z.object({ kind: z.literal('leaver'), hrId: z.string().min(1).max(64) }),
  /**
   * Issue 20 item 5: the absent person asked for sick leave today while on call (src/timeOff/
   * sickToday.reactor.ts): the rest of today's shift is covered at once, with no approval wait.
   */
  z.object({
    kind: z.literal('sick_today'),
    /** Switchboard's request, or null for sick leave entered in HR's web app (`hrRequestId`). */
    timeOffId: id.nullable(),
    hrRequestId: id.nullable().optional(),
  }),
  /** Issue 20: taken from a cover ask (machines/timeOff/coverAsk.ts): a hole, `/oncall cover`, "ask for cover". */
  z.object({ kind: z.literal('ask'), askId: z.string().min(1).max(64) }),
]);
export type CoverReason = z.infer<typeof coverReasonSchema>;

const requestCoverSchema = z.object({
  coverId,
  /** Whose shifts are covered. */
  absent: coverPersonSchema,
  /** Who covers them (one person for every slot). */
  cover: coverPersonSchema,
  slots: z.array(coverSlotSchema).min(1).max(50),
  /** Who asked (the approver, or whoever clicked the leaver report's button). */
  requestedBy: slackUserId,
  reason: coverReasonSchema,
  /** Who is told the outcome (DMs), e.g. the approver and the requester. */
  notify: z.array(slackUserId).max(20),
});

export const coverEventDataSchemas = {
  CoverRequested: requestCoverSchema.extend({ at }),
  /** The slot's override exists: made now (`overrideId`), or found already there (`alreadyThere`, no id). */
  CoverSlotCreated: z.object({
    coverId,
    index: z.number().int().min(0),
    overrideId: id.nullable(),
    alreadyThere: z.boolean(),
    at,
  }),
  /** The slot stays uncovered: the service refused it, or the call failed for good (`problem` in words). */
  CoverSlotFailed: z.object({ coverId, index: z.number().int().min(0), problem: z.string().max(1000), at }),
  /** The cover is no longer wanted (the leave was cancelled): pending slots are dropped. */
  /** The slot's override is removed (issue 20): deleted, truncated to now (in progress), or gone already. */
  CoverOverrideRemoved: z.object({
    coverId,
    index: z.number().int().min(0),
    outcome: z.enum(['deleted', 'truncated', 'gone']),
    at,
  }),
  /** The slot's override could not be removed (refused, or the call failed for good): by hand, in words. */
  CoverOverrideRemoveFailed: z.object({
    coverId,
    index: z.number().int().min(0),
    problem: z.string().max(1000),
    at,
  }),
  CoverWithdrawn: z.object({
    coverId,
    reason: z.string().max(500),
    /** The cover said they can't (issue 20): withdrawn by them, the shifts uncovered again. */
    declinedBy: slackUserId.optional(),
    at,
  }),
  CoverUpstreamCallFailed: upstreamCallFailedSchema(coverActionSchema).extend({ coverId }),
  CoverUpstreamCallRetried: upstreamCallRetriedSchema(coverActionSchema).extend({ coverId }),
} as const;

type EventSchemas = typeof coverEventDataSchemas;
export type CoverEvent = {
  [T in keyof EventSchemas]: Event<T, z.infer<EventSchemas[T]>>;
}[keyof EventSchemas];
export type CoverEventType = CoverEvent['type'];
export const COVER_EVENT_TYPES = Object.keys(coverEventDataSchemas) as CoverEventType[];

export const coverCommandDataSchemas = {
  /**
   * Cover someone's shifts (slice j-leaver dispatches it from a leaver report). `metadata.actor`
   * must be `requestedBy`, or a `system:` processor acting for them. Sent again with the same
   * content: nothing new; with other content under the same id: refused.
   */
  RequestCover: requestCoverSchema,
  RecordCoverSlotCreated: z.object({
    coverId,
    requestId: id,
    overrideId: id.nullable(),
    alreadyThere: z.boolean(),
  }),
  /** The service refused the slot's override (a per-item error): final, in words. */
  RecordCoverSlotRefused: z.object({ coverId, requestId: id, problem: z.string().max(1000) }),
  WithdrawCover: z.object({ coverId, reason: z.string().max(500) }),
  RecordCoverOverrideRemoved: z.object({
    coverId,
    requestId: id,
    outcome: z.enum(['deleted', 'truncated', 'gone']),
  }),
  RecordCoverOverrideRemoveRefused: z.object({ coverId, requestId: id, problem: z.string().max(1000) }),
  /**
   * The cover can't (issue 20, their DM's "Can't cover" button): only the cover may, while a shift
   * is not over; withdraws the cover (`CoverWithdrawn` with `declinedBy`). Pressed again: nothing.
   */
  DeclineCover: z.object({ coverId }),
  RecordCoverUpstreamCallFailed: recordUpstreamCallFailedSchema(coverActionSchema).extend({ coverId }),
  RetryCoverUpstreamCall: retryUpstreamCallSchema(coverActionSchema).extend({ coverId }),
} as const;

type CommandSchemas = typeof coverCommandDataSchemas;
export type CoverCommand = {
  [T in keyof CommandSchemas]: Command<T, z.infer<CommandSchemas[T]>>;
}[keyof CommandSchemas];

export type CoverSlotStatus = 'pending' | 'created' | 'failed' | 'dropped';

/** Removing a slot's override once the cover is withdrawn (issue 20): a durable upstream call. */
export type CoverRemoval = UpstreamAttempts &
  Readonly<{
    requestId: string;
    status: 'pending' | 'removed' | 'failed';
    outcome: 'deleted' | 'truncated' | 'gone' | null;
    problem: string | null;
  }>;

export type CoverSlotState = CoverSlot &
  UpstreamAttempts &
  Readonly<{
    index: number;
    requestId: string;
    status: CoverSlotStatus;
    overrideId: string | null;
    alreadyThere: boolean;
    problem: string | null;
    /** Its override's removal, once the cover is withdrawn (null: nothing to remove, or not withdrawn). */
    removal: CoverRemoval | null;
  }>;

export type CoverDetails = Readonly<{
  coverId: string;
  absent: CoverPerson;
  cover: CoverPerson;
  requestedBy: string;
  reason: CoverReason;
  notify: readonly string[];
  requestedAt: string;
}>;

export type CoverState = Readonly<{
  details: CoverDetails | null;
  slots: readonly CoverSlotState[];
  withdrawnAt: string | null;
  /** Why it was withdrawn, in words ("the requester cancelled the time off"). */
  withdrawnReason: string | null;
  /** The cover said they can't (issue 20): their Slack user id. */
  declinedBy: string | null;
}>;

/** The slot's pending call, as the upstream-call processor sees it (null once it is settled or dropped). */
export const pendingCoverCall = (
  state: CoverState,
  requestId: string,
): (UpstreamRequest<CoverAction> & Readonly<{ slot: CoverSlotState }>) | null => {
  const slot = state.slots.find((s) => s.requestId === requestId);
  if (slot) return slot.status === 'pending' ? { ...slot, action: 'create_override', slot } : null;
  const removing = state.slots.find((s) => s.removal?.requestId === requestId);
  return removing?.removal?.status === 'pending'
    ? { ...removing.removal, action: 'delete_override', slot: removing }
    : null;
};

/** Every removal asked has its answer (removed or failed). */
export const removalsSettled = (state: CoverState): boolean =>
  state.slots.every((s) => s.removal?.status !== 'pending');

/** A removal for a slot whose override exists with a known id (else nothing can be deleted). */
const removalOf = (coverId: string, s: CoverSlotState): CoverRemoval | null =>
  s.overrideId === null
    ? null
    : {
        ...FIRST_ATTEMPT,
        requestId: coverRemovalRequestId(coverId, s.index),
        status: 'pending',
        outcome: null,
        problem: null,
      };

/** Every slot has its answer (created, failed or dropped). */
export const coverSettled = (state: CoverState): boolean =>
  state.details !== null && state.slots.every((s) => s.status !== 'pending');

const refuse = (reason: string, message: string, details: Record<string, unknown> = {}) =>
  new DecisionRejected(message, { reason, ...details });

const sameRequest = (
  d: CoverDetails,
  slots: readonly CoverSlotState[],
  c: z.infer<typeof requestCoverSchema>,
) =>
  JSON.stringify([d.absent, d.cover, d.requestedBy, d.reason, d.notify]) ===
    JSON.stringify([c.absent, c.cover, c.requestedBy, c.reason, c.notify]) &&
  JSON.stringify(slots.map(slotOf)) === JSON.stringify(c.slots.map(slotOf));

const slotOf = (s: CoverSlot): CoverSlot => ({
  scheduleId: s.scheduleId,
  scheduleName: s.scheduleName,
  escalationPolicyId: s.escalationPolicyId,
  escalationPolicyName: s.escalationPolicyName,
  level: s.level,
  start: s.start,
  end: s.end,
});

const existing = (state: CoverState, id: string): CoverDetails => {
  if (!state.details || state.details.coverId !== id) {
    throw refuse('unknown_cover', 'There is no such cover.', { coverId: id });
  }
  return state.details;
};

const slotOfRequest = (state: CoverState, requestId: string): CoverSlotState | null =>
  state.slots.find((s) => s.requestId === requestId) ?? null;

/** A slot's last failure, in words for people (the coded error's own message kept short). */
export const failureWords = (code: string, message: string): string => {
  const said = message || code;
  switch (code) {
    case 'SB_UNMAPPED_USER':
      return said;
    case 'SB_UPSTREAM_REJECTED':
    case 'SB_VALIDATION':
    case 'SB_NOT_FOUND':
    case 'SB_UPSTREAM_AUTH':
      return `the incident service refused it (${said})`;
    default:
      return `the incident service could not be reached (${said})`;
  }
};

const decide = (command: CoverCommand, state: CoverState): CoverEvent[] => {
  const now = command.metadata.now;
  const actor = command.metadata.actor;
  switch (command.type) {
    case 'RequestCover': {
      const d = command.data;
      if (state.details) {
        if (state.details.coverId === d.coverId && sameRequest(state.details, state.slots, d)) return [];
        throw refuse('already_requested', 'This cover was already asked for.', { coverId: d.coverId });
      }
      if (actor !== d.requestedBy && !actor.startsWith('system:')) {
        throw refuse('not_requester', 'You can only ask for cover in your own name.', { actor });
      }
      if (d.cover.slackUserId === d.absent.slackUserId) {
        throw refuse(
          'self_cover',
          `${d.absent.displayName || 'The absent person'} can't cover their own shifts.`,
        );
      }
      for (const s of d.slots) {
        const start = Date.parse(s.start);
        const end = Date.parse(s.end);
        if (Number.isNaN(start) || Number.isNaN(end) || end <= start) {
          throw refuse('invalid_slot', `A slot must end after it starts (${s.start} – ${s.end}).`);
        }
      }
      return [{ type: 'CoverRequested', data: { ...d, at: now } }];
    }
    case 'RecordCoverSlotCreated': {
      const d = command.data;
      existing(state, d.coverId);
      const slot = slotOfRequest(state, d.requestId);
      // Created after it was dropped (the call was in flight): it exists, so it is recorded.
      if (!slot || (slot.status !== 'pending' && slot.status !== 'dropped')) return [];
      return [
        {
          type: 'CoverSlotCreated',
          data: {
            coverId: d.coverId,
            index: slot.index,
            overrideId: d.overrideId,
            alreadyThere: d.alreadyThere,
            at: now,
          },
        },
      ];
    }
    case 'RecordCoverSlotRefused': {
      const d = command.data;
      existing(state, d.coverId);
      const slot = slotOfRequest(state, d.requestId);
      if (slot?.status !== 'pending') return [];
      return [
        {
          type: 'CoverSlotFailed',
          data: { coverId: d.coverId, index: slot.index, problem: d.problem, at: now },
        },
      ];
    }
    case 'WithdrawCover': {
      const details = existing(state, command.data.coverId);
      if (actor !== details.requestedBy && !actor.startsWith('system:')) {
        throw refuse('not_requester', 'Only whoever asked for this cover can withdraw it.', { actor });
      }
      if (state.withdrawnAt !== null) return [];
      return [
        { type: 'CoverWithdrawn', data: { coverId: details.coverId, reason: command.data.reason, at: now } },
      ];
    }
    case 'DeclineCover': {
      const details = existing(state, command.data.coverId);
      if (actor !== details.cover.slackUserId) {
        throw refuse(
          'not_cover',
          `Only ${details.cover.displayName || 'the person asked to cover'} can say they can’t cover these shifts.`,
          { actor },
        );
      }
      if (state.declinedBy !== null) return [];
      if (state.withdrawnAt !== null) {
        throw refuse(
          'cover_withdrawn',
          `This cover is no longer needed (${state.withdrawnReason ?? 'it was withdrawn'}): nothing to do.`,
        );
      }
      const nowMs = Date.parse(now);
      if (state.slots.every((s) => Date.parse(s.end) <= nowMs)) {
        throw refuse('cover_over', 'These shifts are over: there is nothing left to cover.');
      }
      return [
        {
          type: 'CoverWithdrawn',
          data: {
            coverId: details.coverId,
            reason: `${details.cover.displayName || 'the person asked to cover'} can’t cover`,
            declinedBy: details.cover.slackUserId,
            at: now,
          },
        },
      ];
    }
    case 'RecordCoverOverrideRemoved':
    case 'RecordCoverOverrideRemoveRefused': {
      const d = command.data;
      existing(state, d.coverId);
      const call = pendingCoverCall(state, d.requestId);
      if (call?.action !== 'delete_override') return [];
      return [
        'outcome' in d
          ? {
              type: 'CoverOverrideRemoved',
              data: { coverId: d.coverId, index: call.slot.index, outcome: d.outcome, at: now },
            }
          : {
              type: 'CoverOverrideRemoveFailed',
              data: { coverId: d.coverId, index: call.slot.index, problem: d.problem, at: now },
            },
      ];
    }
    case 'RecordCoverUpstreamCallFailed': {
      const d = command.data;
      existing(state, d.coverId);
      const call = pendingCoverCall(state, d.requestId);
      const fact = decideFailure(call, d, now);
      if (!fact || !call) return [];
      const failed: CoverEvent = { type: 'CoverUpstreamCallFailed', data: { ...fact, coverId: d.coverId } };
      if (!fact.final) return [failed];
      if (call.action === 'delete_override') {
        return [
          failed,
          {
            type: 'CoverOverrideRemoveFailed',
            data: {
              coverId: d.coverId,
              index: call.slot.index,
              problem: failureWords(fact.code, fact.message),
              at: now,
            },
          },
        ];
      }
      return [
        failed,
        {
          type: 'CoverSlotFailed',
          data: {
            coverId: d.coverId,
            index: call.slot.index,
            problem: failureWords(fact.code, fact.message),
            at: now,
          },
        },
      ];
    }
    case 'RetryCoverUpstreamCall': {
      const d = command.data;
      existing(state, d.coverId);
      const fact = decideRetry(pendingCoverCall(state, d.requestId), d, now);
      return fact ? [{ type: 'CoverUpstreamCallRetried', data: { ...fact, coverId: d.coverId } }] : [];
    }
    default:
      return exhaustive(command, 'cover command');
  }
};

const withSlot = (
  state: CoverState,
  match: (s: CoverSlotState) => boolean,
  change: (s: CoverSlotState) => CoverSlotState,
): CoverState => ({ ...state, slots: state.slots.map((s) => (match(s) ? change(s) : s)) });

const evolve = (state: CoverState, event: CoverEvent): CoverState => {
  switch (event.type) {
    case 'CoverRequested': {
      const { at: requestedAt, slots, ...d } = event.data;
      return {
        details: {
          coverId: d.coverId,
          absent: d.absent,
          cover: d.cover,
          requestedBy: d.requestedBy,
          reason: d.reason,
          notify: d.notify,
          requestedAt,
        },
        slots: slots.map((s, index) => ({
          ...slotOf(s),
          ...FIRST_ATTEMPT,
          index,
          requestId: coverSlotRequestId(d.coverId, index),
          status: 'pending',
          overrideId: null,
          alreadyThere: false,
          problem: null,
          removal: null,
        })),
        withdrawnAt: null,
        withdrawnReason: null,
        declinedBy: null,
      };
    }
    case 'CoverSlotCreated':
      return withSlot(
        state,
        (s) => s.index === event.data.index,
        (s) => {
          const created: CoverSlotState = {
            ...s,
            status: 'created',
            overrideId: event.data.overrideId,
            alreadyThere: event.data.alreadyThere,
          };
          // Created after the withdrawal (its call was in flight): removed too.
          return state.withdrawnAt === null
            ? created
            : { ...created, removal: removalOf(event.data.coverId, created) };
        },
      );
    case 'CoverOverrideRemoved':
      return withSlot(
        state,
        (s) => s.index === event.data.index && s.removal !== null,
        (s) => ({
          ...s,
          removal: s.removal && {
            ...s.removal,
            status: 'removed',
            outcome: event.data.outcome,
            nextAttemptAt: null,
          },
        }),
      );
    case 'CoverOverrideRemoveFailed':
      return withSlot(
        state,
        (s) => s.index === event.data.index && s.removal !== null,
        (s) => ({
          ...s,
          removal: s.removal && {
            ...s.removal,
            status: 'failed',
            problem: event.data.problem,
            nextAttemptAt: null,
          },
        }),
      );
    case 'CoverSlotFailed':
      return withSlot(
        state,
        (s) => s.index === event.data.index,
        (s) => ({ ...s, status: 'failed', problem: event.data.problem }),
      );
    case 'CoverWithdrawn':
      return {
        ...withSlot(
          state,
          (s) => s.status === 'pending' || s.status === 'created',
          (s) =>
            s.status === 'pending'
              ? { ...s, status: 'dropped' }
              : { ...s, removal: s.removal ?? removalOf(event.data.coverId, s) },
        ),
        withdrawnAt: event.data.at,
        withdrawnReason: event.data.reason,
        declinedBy: event.data.declinedBy ?? null,
      };
    case 'CoverUpstreamCallFailed': {
      const call = pendingCoverCall(state, event.data.requestId);
      if (!failureApplies(call, event.data)) return state;
      if (call?.action === 'delete_override') {
        return withSlot(
          state,
          (s) => s.removal?.requestId === event.data.requestId,
          (s) => ({ ...s, removal: s.removal && withFailedAttempt(s.removal, event.data) }),
        );
      }
      return withSlot(
        state,
        (s) => s.requestId === event.data.requestId,
        (s) => withFailedAttempt(s, event.data),
      );
    }
    case 'CoverUpstreamCallRetried': {
      const call = pendingCoverCall(state, event.data.requestId);
      if (!retryApplies(call, event.data)) return state;
      if (call?.action === 'delete_override') {
        return withSlot(
          state,
          (s) => s.removal?.requestId === event.data.requestId,
          (s) => ({ ...s, removal: s.removal && withRetry(s.removal, event.data) }),
        );
      }
      return withSlot(
        state,
        (s) => s.requestId === event.data.requestId,
        (s) => withRetry(s, event.data),
      );
    }
    default:
      return exhaustive(event, 'cover event');
  }
};

export const coverDecider: Decider<CoverState, CoverCommand, CoverEvent> = {
  decide,
  evolve,
  initialState: () => ({
    details: null,
    slots: [],
    withdrawnAt: null,
    withdrawnReason: null,
    declinedBy: null,
  }),
  parseEvent: eventParser<CoverEvent>('cover', { schemas: coverEventDataSchemas }),
  commandSchemas: coverCommandDataSchemas,
};

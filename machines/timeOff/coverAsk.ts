import { z } from 'zod';
import { eventParser } from '../shared/eventSchemas.ts';
import { type Decider, DecisionRejected } from '../shared/machineDecider.ts';
import { type Command, type Event, exhaustive } from '../shared/messages.ts';
import { type CoverPerson, coverPersonSchema, coverSlotSchema } from './cover.ts';

/**
 * A cover ask (issue 20): ONE open on-call slot (a schedule, a span, the absent person) offered to
 * people, the first to take it gets the override. One stream per ask, `timeoffcoverask-<ask id>`
 * (a UUID; src/timeOff/coverAskIds.ts derives it from what opened it, so the same slot asked twice
 * by the same thing is the same ask).
 *
 *   none ─CoverAskOpened─► open ─CoverAskTaken───► taken      (who covers, by whom, the cover id)
 *                           │  ├─CoverAskDeclined (one asked person can't; still open)
 *                           ├─CoverAskExpired─► expired     (the shift got near, or ended, with nobody)
 *                           └─CoverAskCancelled─► cancelled (no longer needed: the leave was cancelled)
 *
 * FIRST ACCEPT WINS: the decider is the only place two accepts meet (the store appends with the
 * stream's revision), so two colleagues accepting at once make one `CoverAskTaken`; the second is
 * refused naming the first. Taken, the ask's processor issues the cover (machines/timeOff/cover.ts,
 * `RequestCover` under the recorded cover id): the override is a durable upstream call as before.
 *
 * Who may take it: an ask `open to anyone` (a hole posted in a schedule's channel, a leaver
 * report's shift) may be taken by anyone but the absent person, for themselves or (the leaver
 * report's form) for someone they pick; otherwise only one of the people asked, for themselves.
 */
export const COVER_ASK_STREAM_PREFIX = 'timeoffcoverask-';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The ask id in a (hostile) value, or null when it is not one of ours. */
export const parseCoverAskId = (value: unknown): string | null =>
  typeof value === 'string' && UUID.test(value) ? value : null;

export const coverAskStreamId = (askId: string): string => {
  if (parseCoverAskId(askId) === null) throw new TypeError(`not a cover ask id: ${JSON.stringify(askId)}`);
  return COVER_ASK_STREAM_PREFIX + askId;
};

export const coverAskIdOfStream = (streamId: string): string | null =>
  streamId.startsWith(COVER_ASK_STREAM_PREFIX)
    ? parseCoverAskId(streamId.slice(COVER_ASK_STREAM_PREFIX.length))
    : null;

const askId = z.string().regex(UUID, 'must be a cover ask id (a UUID)');
const at = z.string().min(1).max(40);
const slackUserId = z.string().regex(/^[UW][A-Z0-9]{2,31}$/, 'must be a Slack user id');

/** Why the slot is open: approved leave, a leaver's shift, or the on-call person asking (`/oncall cover`). */
export const coverAskReasonSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('time_off'), timeOffId: z.string().min(1).max(200) }),
  z.object({ kind: z.literal('leaver'), hrId: z.string().min(1).max(64), index: z.number().int().min(0) }),
  z.object({ kind: z.literal('on_call') }),
]);
export type CoverAskReason = z.infer<typeof coverAskReasonSchema>;

const openCoverAskSchema = z.object({
  askId,
  slot: coverSlotSchema,
  /** Whose shift it is (never asked, never takes it). */
  absent: coverPersonSchema,
  /** Asked by DM, ranked best first (may be empty: a hole posted for anyone). */
  asked: z.array(coverPersonSchema).max(20),
  /** Anyone (but the absent person) may take it: a hole post, a leaver report. */
  anyone: z.boolean(),
  /** Posted in the schedule's channels when opened (a hole), besides the DMs. */
  announce: z.boolean(),
  /** When it expires if nobody took it (the shift is near; ISO). */
  expiresAt: at,
  /** Who opened it (the approver, the on-call person, a system processor for them). */
  openedBy: slackUserId,
  /** Told in words when nobody took it (DMs). */
  notify: z.array(slackUserId).max(20),
  reason: coverAskReasonSchema,
  /**
   * Never offered, and refused if they click (issue 20: a hole re-opened after its cover said can't
   * leaves out the one who said it). Absent on asks opened before it existed.
   */
  excluded: z.array(slackUserId).max(20).optional(),
});

export const coverAskEventDataSchemas = {
  CoverAskOpened: openCoverAskSchema.extend({ at }),
  /** Taken: `cover` covers the slot, `by` said so (themselves, or who picked them), cover `coverId` issued. */
  CoverAskTaken: z.object({ askId, cover: coverPersonSchema, by: slackUserId, coverId: askId, at }),
  /** One of the people asked said they can't. */
  CoverAskDeclined: z.object({ askId, slackUserId, at }),
  CoverAskExpired: z.object({ askId, at }),
  CoverAskCancelled: z.object({ askId, reason: z.string().max(500), at }),
} as const;

type EventSchemas = typeof coverAskEventDataSchemas;
export type CoverAskEvent = {
  [T in keyof EventSchemas]: Event<T, z.infer<EventSchemas[T]>>;
}[keyof EventSchemas];
export type CoverAskEventType = CoverAskEvent['type'];
export const COVER_ASK_EVENT_TYPES = Object.keys(coverAskEventDataSchemas) as CoverAskEventType[];

export const coverAskCommandDataSchemas = {
  /** Open an ask for one slot. Sent again with the same content: nothing new; other content: refused. */
  OpenCoverAsk: openCoverAskSchema,
  /** `cover` takes the slot; `metadata.actor` must be `by` (or a `system:` processor). */
  AcceptCoverAsk: z.object({ askId, cover: coverPersonSchema, by: slackUserId, coverId: askId }),
  /** One of the people asked can't. */
  DeclineCoverAsk: z.object({ askId, slackUserId }),
  /** The expiry timer. */
  ExpireCoverAsk: z.object({ askId }),
  CancelCoverAsk: z.object({ askId, reason: z.string().max(500) }),
} as const;

type CommandSchemas = typeof coverAskCommandDataSchemas;
export type CoverAskCommand = {
  [T in keyof CommandSchemas]: Command<T, z.infer<CommandSchemas[T]>>;
}[keyof CommandSchemas];

export type CoverAskStatus = 'open' | 'taken' | 'expired' | 'cancelled';

export type CoverAskDetails = z.infer<typeof openCoverAskSchema> & Readonly<{ openedAt: string }>;

export type CoverAskState = Readonly<{
  details: CoverAskDetails | null;
  status: CoverAskStatus | null;
  /** Who covers, who said so, the cover issued (once taken). */
  taken: Readonly<{ cover: CoverPerson; by: string; coverId: string; at: string }> | null;
  declined: readonly string[];
  closedAt: string | null;
  cancelledReason: string | null;
}>;

const refuse = (reason: string, message: string, details: Record<string, unknown> = {}) =>
  new DecisionRejected(message, { reason, ...details });

const nameOf = (p: CoverPerson): string => p.displayName || 'Someone';

const existing = (state: CoverAskState, id: string): CoverAskDetails => {
  if (!state.details || state.details.askId !== id) {
    throw refuse('unknown_ask', 'There is no such request for cover.', { askId: id });
  }
  return state.details;
};

const sameOpen = (d: CoverAskDetails, c: z.infer<typeof openCoverAskSchema>): boolean => {
  const { openedAt: _at, ...had } = d;
  return JSON.stringify(Object.entries(had).sort()) === JSON.stringify(Object.entries(c).sort());
};

const isSystem = (actor: string) => actor.startsWith('system:');

/** Refuses anything but an open ask, in words (who took it first, when it expired, why cancelled). */
const mustBeOpen = (state: CoverAskState, details: CoverAskDetails, now: string) => {
  if (state.status === 'taken' && state.taken) {
    throw refuse('already_taken', `${nameOf(state.taken.cover)} already covers this shift.`, {
      coverSlackUserId: state.taken.cover.slackUserId,
    });
  }
  if (state.status === 'expired') {
    throw refuse('expired', 'Nobody took this shift before it started, so it is no longer asked for.');
  }
  if (state.status === 'cancelled') {
    throw refuse(
      'cancelled',
      `This shift no longer needs cover${state.cancelledReason ? ` (${state.cancelledReason})` : ''}.`,
    );
  }
  if (Date.parse(now) >= Date.parse(details.slot.end)) {
    throw refuse('over', 'This shift is over: nothing to cover.');
  }
};

const decide = (command: CoverAskCommand, state: CoverAskState): CoverAskEvent[] => {
  const now = command.metadata.now;
  const actor = command.metadata.actor;
  switch (command.type) {
    case 'OpenCoverAsk': {
      const d = command.data;
      if (state.details) {
        if (sameOpen(state.details, d)) return [];
        throw refuse('already_open', 'This shift was already asked for.', { askId: d.askId });
      }
      if (actor !== d.openedBy && !isSystem(actor)) {
        throw refuse('not_opener', 'You can only ask for cover in your own name.', { actor });
      }
      const start = Date.parse(d.slot.start);
      const end = Date.parse(d.slot.end);
      if (Number.isNaN(start) || Number.isNaN(end) || end <= start) {
        throw refuse('invalid_slot', `A shift must end after it starts (${d.slot.start} – ${d.slot.end}).`);
      }
      if (Number.isNaN(Date.parse(d.expiresAt))) {
        throw refuse('invalid_expiry', 'The ask needs a time to expire.');
      }
      if (d.asked.some((p) => p.slackUserId === d.absent.slackUserId)) {
        throw refuse('self_cover', `${nameOf(d.absent)} can't be asked to cover their own shift.`);
      }
      return [{ type: 'CoverAskOpened', data: { ...d, at: now } }];
    }
    case 'AcceptCoverAsk': {
      const d = command.data;
      const details = existing(state, d.askId);
      if (actor !== d.by && !isSystem(actor)) {
        throw refuse('not_actor', 'You can only accept in your own name.', { actor });
      }
      // The same accept again (a double click, a redelivery): nothing new.
      if (state.taken && state.taken.cover.slackUserId === d.cover.slackUserId && state.taken.by === d.by) {
        return [];
      }
      mustBeOpen(state, details, now);
      if (d.cover.slackUserId === details.absent.slackUserId) {
        throw refuse('self_cover', `${nameOf(details.absent)} can't cover their own shift.`);
      }
      if (details.excluded?.includes(d.cover.slackUserId)) {
        throw refuse('excluded', 'You said you can’t cover this shift, so it is offered to others.', {
          actor,
        });
      }
      if (!details.anyone) {
        if (d.cover.slackUserId !== d.by) {
          throw refuse('not_asked', 'Only the person asked can accept.', { actor });
        }
        if (!details.asked.some((p) => p.slackUserId === d.cover.slackUserId)) {
          throw refuse('not_asked', 'You were not asked to cover this shift.', { actor });
        }
      }
      return [
        {
          type: 'CoverAskTaken',
          data: { askId: d.askId, cover: d.cover, by: d.by, coverId: d.coverId, at: now },
        },
      ];
    }
    case 'DeclineCoverAsk': {
      const d = command.data;
      const details = existing(state, d.askId);
      if (actor !== d.slackUserId && !isSystem(actor)) {
        throw refuse('not_actor', 'You can only answer for yourself.', { actor });
      }
      if (!details.asked.some((p) => p.slackUserId === d.slackUserId)) {
        throw refuse('not_asked', 'You were not asked to cover this shift.', { actor });
      }
      if (state.declined.includes(d.slackUserId)) return [];
      mustBeOpen(state, details, now);
      return [{ type: 'CoverAskDeclined', data: { askId: d.askId, slackUserId: d.slackUserId, at: now } }];
    }
    case 'ExpireCoverAsk': {
      const details = existing(state, command.data.askId);
      if (state.status !== 'open') return [];
      if (Date.parse(now) < Date.parse(details.expiresAt)) {
        throw refuse('not_due', `The ask expires at ${details.expiresAt}.`, { dueAt: details.expiresAt });
      }
      return [{ type: 'CoverAskExpired', data: { askId: details.askId, at: now } }];
    }
    case 'CancelCoverAsk': {
      const details = existing(state, command.data.askId);
      if (actor !== details.openedBy && !isSystem(actor)) {
        throw refuse('not_opener', 'Only whoever asked for cover can cancel the ask.', { actor });
      }
      if (state.status !== 'open') return [];
      return [
        {
          type: 'CoverAskCancelled',
          data: { askId: details.askId, reason: command.data.reason, at: now },
        },
      ];
    }
    default:
      return exhaustive(command, 'cover ask command');
  }
};

const evolve = (state: CoverAskState, event: CoverAskEvent): CoverAskState => {
  switch (event.type) {
    case 'CoverAskOpened': {
      const { at: openedAt, ...d } = event.data;
      return { ...state, details: { ...d, openedAt }, status: 'open' };
    }
    case 'CoverAskTaken': {
      const { cover, by, coverId, at: takenAt } = event.data;
      return { ...state, status: 'taken', taken: { cover, by, coverId, at: takenAt }, closedAt: takenAt };
    }
    case 'CoverAskDeclined':
      return { ...state, declined: [...state.declined, event.data.slackUserId] };
    case 'CoverAskExpired':
      return { ...state, status: 'expired', closedAt: event.data.at };
    case 'CoverAskCancelled':
      return { ...state, status: 'cancelled', closedAt: event.data.at, cancelledReason: event.data.reason };
    default:
      return exhaustive(event, 'cover ask event');
  }
};

export const coverAskDecider: Decider<CoverAskState, CoverAskCommand, CoverAskEvent> = {
  decide,
  evolve,
  initialState: () => ({
    details: null,
    status: null,
    taken: null,
    declined: [],
    closedAt: null,
    cancelledReason: null,
  }),
  parseEvent: eventParser<CoverAskEvent>('coverAsk', { schemas: coverAskEventDataSchemas }),
  commandSchemas: coverAskCommandDataSchemas,
};

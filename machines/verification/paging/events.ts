import { z } from 'zod';
import { eventParser, type StoredEvent } from '../../shared/eventSchemas.ts';
import type { Event } from '../../shared/messages.ts';
import { upstreamCallFailedSchema, upstreamCallRetriedSchema } from '../../shared/upstreamRequest.ts';

// The pager's facts (see streams.ts for where each lives). The schemas are the source of the
// types; every fold parses stored events with them first.

const isoTime = z.string().min(1);
const pageId = z.string().regex(/^[A-Za-z0-9._:-]{1,100}$/);
/** E.164 digits without `+`. */
export const phoneDigitsSchema = z.string().regex(/^[1-9][0-9]{5,14}$/);
/**
 * A phone number as the pager records it: sealed under the person's data key (`personal:v1:`, so
 * forgetting them makes it unreadable), sealed under the data key ring (`sealed:v2:`; `sealed:v1:`
 * under the configured secret before the ring: a number nobody verified), or E.164 digits (records written before numbers were sealed).
 */
export const storedPhoneSchema = z.union([
  phoneDigitsSchema,
  z
    .string()
    .max(400)
    .refine((v) => v.startsWith('personal:v1:') || /^sealed:v[12]:/.test(v), 'must be a sealed number'),
]);

/** What a page is about, as the replies and receipts name it. */
const subject = {
  pageId,
  /** The incident stream the page reports to. */
  reportTo: z.string().min(1),
  number: z.number().int().nullable(),
  label: z.string().min(1).max(200),
};

/**
 * The calls the pager makes to the phone service for a page, each a durable upstream request
 * (machines/shared/upstreamRequest.ts): the SMS, the call, and hanging up a call nobody needs.
 */
export const pageActionSchema = z.enum(['sms', 'call', 'hang_up']);
export type PageAction = z.infer<typeof pageActionSchema>;

/** Answering a reply by SMS: the one call a reply stream makes (its request id is the reply's id). */
export const replyAnswerActionSchema = z.enum(['answer']);

export const replyActionSchema = z.enum(['acknowledge', 'resolve', 'stop', 'unknown']);
export type ReplyAction = z.infer<typeof replyActionSchema>;

/** A keyed hash of what someone sent (PhoneSealer.textKey): 32 hex characters. */
export const textHashSchema = z.string().regex(/^[0-9a-f]{32}$/);

/** What became of a reply. `unknown_call`: keys pressed in a call Switchboard did not place for that number's owner. */
export const replyOutcomeSchema = z.enum([
  'acknowledged',
  'resolved',
  'refused',
  'opted_out',
  'unknown_number',
  'unknown_call',
  'not_paged',
  'not_understood',
]);
export type ReplyOutcome = z.infer<typeof replyOutcomeSchema>;

/**
 * The length of a text as an older release recorded it: the text itself (an understood reply, at
 * most 160 characters), or `[N characters]` in place of one it did not understand.
 */
export const recordedTextLength = (text: string): number => {
  const placeholder = /^\[([0-9]{1,5}) characters\]$/.exec(text);
  return placeholder ? Number(placeholder[1]) : text.length;
};

export const pagerEventDataSchemas = {
  /** The SMS is to be sent now; the call at `callDueAt` (null: none) unless the page stops first. */
  PageRequested: z.object({
    ...subject,
    phone: storedPhoneSchema,
    text: z.string().min(1).max(1000),
    spokenText: z.string().min(1).max(1500),
    /** What the page is about started then (issue 19: said in the person's zone at send time); absent before. */
    since: isoTime.nullable().optional(),
    callDueAt: isoTime.nullable(),
    at: isoTime,
  }),
  /** Over the per-hour limit: not sent. */
  PageHeldBack: z.object({
    ...subject,
    pagesInLastHour: z.number().int(),
    maxPerHour: z.number().int(),
    at: isoTime,
  }),
  /** Not sent: the person replied STOP and has not verified their phone again since. */
  PageSkipped: z.object({ ...subject, reason: z.enum(['opted_out']), at: isoTime }),
  PageSmsSent: z.object({ pageId, messageUuid: z.string().min(1), at: isoTime }),
  PageSmsFailed: z.object({ pageId, code: z.string(), message: z.string(), at: isoTime }),
  /** The call is due (the page was not stopped): the pager's processor places it. */
  PageCallRequested: z.object({ pageId, at: isoTime }),
  PageCallPlaced: z.object({ pageId, callUuid: z.string().min(1), at: isoTime }),
  PageCallFailed: z.object({ pageId, code: z.string(), message: z.string(), at: isoTime }),
  /**
   * An attempt of one of the page's calls to the phone service failed and will be retried at
   * `nextAttemptAt` (the SMS and the call; a final failure of those is `PageSmsFailed` /
   * `PageCallFailed`), or hanging up failed (`final`: given up).
   */
  PageUpstreamCallFailed: upstreamCallFailedSchema(pageActionSchema).extend({ pageId }),
  /** The retry of a failed attempt is due: attempt `attempt` starts. */
  PageUpstreamCallRetried: upstreamCallRetriedSchema(pageActionSchema).extend({ pageId }),
  /** The call was ended: the page stopped (acknowledged, resolved elsewhere, the person left) while it rang. */
  PageCallHungUp: z.object({ pageId, callUuid: z.string().min(1), at: isoTime }),
  /** Nothing more is sent for this page (acknowledged, resolved, answered). */
  PageStopped: z.object({ pageId, reason: z.string().min(1).max(200), at: isoTime }),
  /**
   * A plain SMS notice to the person (issue 20 item 5: "you're covering a sick colleague"), not a
   * page: never a call, never in the per-hour limit, never what a reply or a receipt acts on. Its
   * id (`pageId`) is the caller's notice id (once per id). Sent by paging-sms like a page's SMS
   * (`PageSmsSent` / `PageSmsFailed` / `PageUpstreamCall*` under the same id).
   */
  NoticeRequested: z.object({
    pageId,
    phone: storedPhoneSchema,
    text: z.string().min(1).max(320),
    at: isoTime,
  }),
  /** The notice was not sent: the person replied STOP and has not verified their phone again since. */
  NoticeSkipped: z.object({ pageId, reason: z.enum(['opted_out']), at: isoTime }),
  /** STOP: no pages to `phone` until it is verified again (a newer phone link). */
  PagingOptedOut: z.object({ phone: storedPhoneSchema, at: isoTime }),

  /**
   * A reply from a phone, as received (`pagerreply-<number key>`): what it asked for (`action`,
   * `number`), never what it said. Someone may text anything to the paging number (a one-time
   * code, a card number): the text is kept as its length and a keyed hash only.
   */
  PagerReplyReceived: z.object({
    replyId: z.string().min(1),
    via: z.enum(['sms', 'voice']),
    phone: storedPhoneSchema,
    /** Characters sent (keys pressed, in a call). */
    textLength: z.number().int().min(0),
    /**
     * A keyed hash of the text (32 hex; the same text gives the same hash), or null in a reply
     * recorded by a release that kept the text (read through the upcaster below).
     */
    textHash: textHashSchema.nullable(),
    action: replyActionSchema,
    /** `4 12`: the incident number named; null for a bare `4`. */
    number: z.number().int().nullable(),
    /** The call the keys were pressed in (voice). */
    callUuid: z.string().nullable(),
    at: isoTime,
  }),
  /** What was made of it. */
  PagerReplyHandled: z.object({
    replyId: z.string().min(1),
    outcome: replyOutcomeSchema,
    slackUserId: z.string().nullable(),
    pageId: pageId.nullable(),
    detail: z.string().max(300).nullable(),
    /**
     * The SMS that answers it (what was done, never what was sent), to be sent by paging-answers;
     * null: none (a call, a stranger, a number that cannot be read; replies recorded before issue 21
     * were answered before they were recorded).
     */
    answer: z.string().min(1).max(320).nullable().default(null),
    at: isoTime,
  }),
  /** The answer SMS was handed to the phone service. */
  PagerReplyAnswered: z.object({ replyId: z.string().min(1), messageUuid: z.string().min(1), at: isoTime }),
  /** An attempt to send the answer failed (`final`: given up; the answer is a courtesy). */
  PagerReplyAnswerFailed: upstreamCallFailedSchema(replyAnswerActionSchema),
  PagerReplyAnswerRetried: upstreamCallRetriedSchema(replyAnswerActionSchema),

  /** One delivery receipt of an SMS or a call (`pagerreceipt-<uuid>`). */
  PageReceiptReceived: z.object({
    vendorId: z.string().min(1),
    channel: z.enum(['sms', 'voice']),
    status: z.string().min(1).max(40),
    /** The vendor's reason for a rejection or failure. */
    reason: z.string().max(300).nullable(),
    /** From `client_ref` (SMS); null for calls (found by call uuid). */
    pageId: pageId.nullable(),
    vendorTimestamp: z.string().nullable(),
    at: isoTime,
  }),
} as const;

type Schemas = typeof pagerEventDataSchemas;
export type PagerEventType = keyof Schemas;
export type PagerEvent = { [T in PagerEventType]: Event<T, z.infer<Schemas[T]>> }[PagerEventType];
export type PagerEventOf<T extends PagerEventType> = Extract<PagerEvent, { type: T }>;

export const PAGER_EVENT_TYPES = Object.keys(pagerEventDataSchemas) as PagerEventType[];

/**
 * Replies recorded before issue 18 kept their `text` (an understood reply as sent, `[N characters]`
 * for anything else): read as its length, with no hash. The stored event keeps what it has.
 */
const withoutReplyText = (event: StoredEvent): StoredEvent => {
  const d = event.data as Record<string, unknown> | null;
  if (typeof d !== 'object' || d === null || typeof d.text !== 'string' || 'textLength' in d) return event;
  const { text, ...rest } = d;
  return { type: event.type, data: { ...rest, textLength: recordedTextLength(text), textHash: null } };
};

export const parsePagerEvent: (stored: StoredEvent) => PagerEvent = eventParser<PagerEvent>('the pager', {
  schemas: pagerEventDataSchemas,
  upcasters: { PagerReplyReceived: withoutReplyText },
});

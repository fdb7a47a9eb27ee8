import { z } from 'zod';
import type { Command } from '../../shared/messages.ts';
import { recordUpstreamCallFailedSchema, retryUpstreamCallSchema } from '../../shared/upstreamRequest.ts';
import {
  pageActionSchema,
  replyActionSchema,
  replyAnswerActionSchema,
  replyOutcomeSchema,
  storedPhoneSchema,
  textHashSchema,
} from './events.ts';

// The pager's commands. Time is `metadata.now`; ids are deterministic (a repeat is a no-op).

const pageId = z.string().regex(/^[A-Za-z0-9._:-]{1,100}$/);
const slackUserId = z.string().regex(/^[UW][A-Z0-9]{2,30}$/);

export const requestPageSchema = z.object({
  slackUserId,
  pageId,
  reportTo: z.string().min(1),
  number: z.number().int().nullable(),
  label: z.string().min(1).max(200),
  phone: storedPhoneSchema,
  /** When the phone was (last) verified: an opt-out older than this no longer holds. */
  phoneVerifiedAt: z.string().min(1),
  text: z.string().min(1).max(1000),
  spokenText: z.string().min(1).max(1500),
  /**
   * The instant the page is about (an incident's trigger), told in the person's own zone when the
   * SMS and the call go out (issue 19): never a formatted time in the record.
   */
  since: z.string().min(1).nullable().optional(),
  callAfterMs: z.number().int().min(0).nullable(),
  maxPerHour: z.number().int().min(1),
});
/** A plain SMS notice (not a page): `pageId` is the caller's notice id. */
export const requestNoticeSchema = z.object({
  slackUserId,
  pageId,
  phone: storedPhoneSchema,
  /** When the phone was (last) verified: an opt-out older than this no longer holds. */
  phoneVerifiedAt: z.string().min(1),
  text: z.string().min(1).max(320),
});
const byPage = { slackUserId, pageId };
export const recordPageSmsSentSchema = z.object({ ...byPage, messageUuid: z.string().min(1) });
export const recordPageSendFailedSchema = z.object({
  ...byPage,
  code: z.string().max(60),
  message: z.string().max(300),
});
export const placePageCallSchema = z.object({ ...byPage });
export const recordPageCallPlacedSchema = z.object({ ...byPage, callUuid: z.string().min(1) });
/** A failed attempt of one of the page's calls (the processor's report; the decider derives `final`). */
export const recordPageUpstreamCallFailedSchema = recordUpstreamCallFailedSchema(pageActionSchema).extend({
  ...byPage,
  code: z.string().min(1).max(60),
  message: z.string().max(300),
});
/** The retry timer of a failed attempt fired: start attempt `attempt`. */
export const retryPageUpstreamCallSchema = retryUpstreamCallSchema(pageActionSchema).extend(byPage);
export const recordPageCallHungUpSchema = z.object({ ...byPage });
export const stopPageSchema = z.object({ ...byPage, reason: z.string().min(1).max(200) });
export const optOutOfPagingSchema = z.object({ slackUserId, phone: storedPhoneSchema });

/** The blind index of the number (the stream of its replies): never the number. */
const numberKey = z.string().regex(/^[0-9a-f]{32}$/);

/**
 * A reply as the edge parsed it: what it asks for, and the text only as its length and a keyed
 * hash (never the text: it may be anything, a one-time code, a card number).
 */
export const recordPagerReplySchema = z
  .object({
    replyId: z.string().min(1).max(200),
    numberKey: numberKey.optional(),
    via: z.enum(['sms', 'voice']),
    phone: storedPhoneSchema,
    /** Characters sent (keys pressed, in a call). */
    textLength: z.number().int().min(0).max(1_000_000).optional(),
    textHash: textHashSchema.optional(),
    /**
     * @deprecated Only in commands an older release recorded in the inbox and has not dispatched
     * yet: the decider keeps its length (`recordedTextLength`), never the text.
     */
    text: z.string().max(160).optional(),
    action: replyActionSchema,
    number: z.number().int().nullable(),
    callUuid: z.string().max(64).nullable(),
  })
  .refine((d) => d.textLength !== undefined || d.text !== undefined, {
    message: 'textLength is missing',
    path: ['textLength'],
  });
export const recordPagerReplyOutcomeSchema = z.object({
  phone: storedPhoneSchema,
  numberKey: numberKey.optional(),
  replyId: z.string().min(1).max(200),
  outcome: replyOutcomeSchema,
  slackUserId: z.string().nullable(),
  pageId: pageId.nullable(),
  detail: z.string().max(300).nullable(),
  /** The SMS answer to send (paging-answers), or none. */
  answer: z.string().min(1).max(320).nullable().optional(),
});
/** The answer's outcome and retries: by the reply stream's key (never the number). */
const byReply = { numberKey, replyId: z.string().min(1).max(200) };
export const recordPagerReplyAnsweredSchema = z.object({ ...byReply, messageUuid: z.string().min(1) });
export const recordPagerReplyAnswerFailedSchema =
  recordUpstreamCallFailedSchema(replyAnswerActionSchema).extend(byReply);
export const retryPagerReplyAnswerSchema = retryUpstreamCallSchema(replyAnswerActionSchema).extend(byReply);

export const recordPageReceiptSchema = z.object({
  vendorId: z.string().regex(/^[A-Za-z0-9-]{1,64}$/),
  channel: z.enum(['sms', 'voice']),
  status: z.string().min(1).max(40),
  reason: z.string().max(300).nullable(),
  pageId: pageId.nullable(),
  vendorTimestamp: z.string().max(64).nullable(),
});

type Data<S extends z.ZodType> = z.infer<S>;
export type RequestPage = Command<'RequestPage', Data<typeof requestPageSchema>>;
export type RequestNotice = Command<'RequestNotice', Data<typeof requestNoticeSchema>>;
export type RecordPageSmsSent = Command<'RecordPageSmsSent', Data<typeof recordPageSmsSentSchema>>;
export type RecordPageSmsFailed = Command<'RecordPageSmsFailed', Data<typeof recordPageSendFailedSchema>>;
export type PlacePageCall = Command<'PlacePageCall', Data<typeof placePageCallSchema>>;
export type RecordPageCallPlaced = Command<'RecordPageCallPlaced', Data<typeof recordPageCallPlacedSchema>>;
export type RecordPageCallFailed = Command<'RecordPageCallFailed', Data<typeof recordPageSendFailedSchema>>;
export type RecordPageUpstreamCallFailed = Command<
  'RecordPageUpstreamCallFailed',
  Data<typeof recordPageUpstreamCallFailedSchema>
>;
export type RetryPageUpstreamCall = Command<
  'RetryPageUpstreamCall',
  Data<typeof retryPageUpstreamCallSchema>
>;
export type RecordPageCallHungUp = Command<'RecordPageCallHungUp', Data<typeof recordPageCallHungUpSchema>>;
export type StopPage = Command<'StopPage', Data<typeof stopPageSchema>>;
export type OptOutOfPaging = Command<'OptOutOfPaging', Data<typeof optOutOfPagingSchema>>;
export type RecordPagerReply = Command<'RecordPagerReply', Data<typeof recordPagerReplySchema>>;
export type RecordPagerReplyOutcome = Command<
  'RecordPagerReplyOutcome',
  Data<typeof recordPagerReplyOutcomeSchema>
>;
export type RecordPagerReplyAnswered = Command<
  'RecordPagerReplyAnswered',
  Data<typeof recordPagerReplyAnsweredSchema>
>;
export type RecordPagerReplyAnswerFailed = Command<
  'RecordPagerReplyAnswerFailed',
  Data<typeof recordPagerReplyAnswerFailedSchema>
>;
export type RetryPagerReplyAnswer = Command<
  'RetryPagerReplyAnswer',
  Data<typeof retryPagerReplyAnswerSchema>
>;
export type RecordPageReceipt = Command<'RecordPageReceipt', Data<typeof recordPageReceiptSchema>>;

export type PagerCommand =
  | RequestPage
  | RequestNotice
  | RecordPageSmsSent
  | RecordPageSmsFailed
  | PlacePageCall
  | RecordPageCallPlaced
  | RecordPageCallFailed
  | RecordPageUpstreamCallFailed
  | RetryPageUpstreamCall
  | RecordPageCallHungUp
  | StopPage
  | OptOutOfPaging;
export type PagerReplyCommand =
  | RecordPagerReply
  | RecordPagerReplyOutcome
  | RecordPagerReplyAnswered
  | RecordPagerReplyAnswerFailed
  | RetryPagerReplyAnswer;
export type PageReceiptCommand = RecordPageReceipt;

export const pagerCommandDataSchemas = {
  RequestPage: requestPageSchema,
  RequestNotice: requestNoticeSchema,
  RecordPageSmsSent: recordPageSmsSentSchema,
  RecordPageSmsFailed: recordPageSendFailedSchema,
  PlacePageCall: placePageCallSchema,
  RecordPageCallPlaced: recordPageCallPlacedSchema,
  RecordPageCallFailed: recordPageSendFailedSchema,
  RecordPageUpstreamCallFailed: recordPageUpstreamCallFailedSchema,
  RetryPageUpstreamCall: retryPageUpstreamCallSchema,
  RecordPageCallHungUp: recordPageCallHungUpSchema,
  StopPage: stopPageSchema,
  OptOutOfPaging: optOutOfPagingSchema,
} as const satisfies Readonly<Record<PagerCommand['type'], z.ZodType>>;

export const pagerReplyCommandDataSchemas = {
  RecordPagerReply: recordPagerReplySchema,
  RecordPagerReplyOutcome: recordPagerReplyOutcomeSchema,
  RecordPagerReplyAnswered: recordPagerReplyAnsweredSchema,
  RecordPagerReplyAnswerFailed: recordPagerReplyAnswerFailedSchema,
  RetryPagerReplyAnswer: retryPagerReplyAnswerSchema,
} as const satisfies Readonly<Record<PagerReplyCommand['type'], z.ZodType>>;

export const pageReceiptCommandDataSchemas = {
  RecordPageReceipt: recordPageReceiptSchema,
} as const satisfies Readonly<Record<PageReceiptCommand['type'], z.ZodType>>;

/**
 * What a reply says: `4` / `ACK` acknowledge, `6` / `RES` / `RESOLVE` resolve, `STOP` opts out; an
 * incident number may follow (`4 12`, `ack #12`). Any case, any whitespace. Anything else is
 * `unknown` (answered with how to reply).
 *
 * @example
 * parseReply(' ack  #12 ') // { action: 'acknowledge', number: 12 }
 */
export const parseReply = (
  text: string,
): { action: z.infer<typeof replyActionSchema>; number: number | null } => {
  const words = text.trim().toUpperCase().split(/\s+/).filter(Boolean);
  const [verb, ref, ...rest] = words;
  if (verb === undefined || rest.length > 0) return { action: 'unknown', number: null };
  const action =
    verb === '4' || verb === 'ACK' || verb === 'ACKNOWLEDGE'
      ? 'acknowledge'
      : verb === '6' || verb === 'RES' || verb === 'RESOLVE'
        ? 'resolve'
        : verb === 'STOP' || verb === 'STOPALL' || verb === 'UNSUBSCRIBE'
          ? 'stop'
          : 'unknown';
  if (ref === undefined) return { action, number: null };
  if (action === 'unknown' || action === 'stop') return { action: 'unknown', number: null };
  const m = /^#?([1-9][0-9]{0,8})$/.exec(ref);
  return m ? { action, number: Number(m[1]) } : { action: 'unknown', number: null };
};

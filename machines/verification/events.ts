import { z } from 'zod';
import type { Event } from '../shared/messages.ts';
import { upstreamCallFailedSchema, upstreamCallRetriedSchema } from '../shared/upstreamRequest.ts';

/**
 * The facts of phone verification, one stream per person (streams.ts). The schemas are the source
 * of the event types and check every stored event when it is folded.
 *
 * What is never here in clear:
 * - the one-time code: `VerificationCodeSubmitted.sealedCode` is sealed (AES-256-GCM) under a
 *   random key that exists only in the memory of the process that received it (src/verification/
 *   codeVault.ts). Once the check is answered, or the process restarts, the key is gone and the
 *   stored value cannot be opened by anyone (crypto-shredding);
 * - the phone number: `number` fields are sealed under the person's own data key (`personal:v1:`,
 *   src/people/personKeys.ts; `sealed:v1:`, under a key derived from VONAGE_SIGNATURE_SECRET, in
 *   records written before), beside a masked form (`+44 •••• ••0123`) for people to read, and
 *   `numberKey` is a blind index under the same key. The people directory's link holds it sealed
 *   the same way. Forgetting the person (a leaver) deletes the key: every copy is unreadable.
 */

/** Upstream calls of the lifecycle, each a durable request (machines/shared/upstreamRequest.ts). */
export const verificationActionSchema = z.enum([
  'start',
  'resend',
  'check',
  'cancel',
  'next',
  'test',
  'notify_old',
]);
export type VerificationAction = z.infer<typeof verificationActionSchema>;

/** Why an attempt failed. */
export const verificationFailureSchema = z.enum([
  /** Three wrong codes. */
  'too_many_wrong_codes',
  /** The vendor ended the request (410 / 409): expired, terminated, or no longer active. */
  'start_again',
  /** The vendor's summary said failed. */
  'vendor_failed',
  /** The start call failed for good (the vendor could not be reached, refused us, out of credit). */
  'not_started',
]);
export type VerificationFailure = z.infer<typeof verificationFailureSchema>;

const id = z.string().min(1);
const at = z.string().min(1);
/** Sealed under the person's data key (`personal:v1:`), or (older records) under the data key ring or a configured secret (`sealed:v2:`, `sealed:v1:`). */
const sealedNumber = z
  .string()
  .max(400)
  .refine((v) => v.startsWith('personal:v1:') || /^sealed:v[12]:/.test(v), 'must be a sealed number');
const masked = z.string().min(1).max(40);
/** A keyed hash of the number (HMAC, src/verification/phone.ts): tells two numbers apart, reveals neither. */
const numberKey = z.string().regex(/^[0-9a-f]{32}$/);

export const verificationEventDataSchemas = {
  /** `/verify <number>`: a new attempt, its start call requested (request id = attempt id). */
  VerificationRequested: z.object({
    attemptId: id,
    slackUserId: id,
    clientRef: id,
    number: sealedNumber,
    masked,
    numberKey,
    /** The number verified before, when this is a change of number. */
    previous: z.object({ number: sealedNumber, masked }).nullable(),
    codeLength: z.number().int().min(4).max(10),
    /** When the attempt ends unless verified (our timer; the vendor ends its request too). */
    expiresAt: at,
    at,
  }),
  /** The vendor accepted the start (or a resend): the code is on its way by SMS. */
  VerificationCodeSent: z.object({
    attemptId: id,
    requestId: id,
    vendorRequestId: id,
    at,
  }),
  /** "Resend": the running vendor request is cancelled and a new one started to the same number. */
  VerificationResendRequested: z.object({ attemptId: id, requestId: id, at }),
  /** "Call me instead": the vendor moves to the next workflow step, a voice call. */
  VerificationVoiceRequested: z.object({ attemptId: id, requestId: id, at }),
  /** The code now comes by voice (asked for, or the vendor moved on after the SMS step timed out). */
  VerificationMovedToVoice: z.object({ attemptId: id, requestId: id.nullable(), at }),
  /** A code typed in the modal, sealed under a key only the receiving process holds. */
  VerificationCodeSubmitted: z.object({
    attemptId: id,
    requestId: id,
    sealedCode: z.string().startsWith('vault:v1:'),
    at,
  }),
  /** The vendor said the code was wrong. */
  VerificationCodeRejected: z.object({
    attemptId: id,
    requestId: id,
    wrongCodes: z.number().int().min(1),
    triesLeft: z.number().int().min(0),
    at,
  }),
  /** The process restarted between the submission and the check: the code must be typed again. */
  VerificationCodeLost: z.object({ attemptId: id, requestId: id, at }),
  /** The code was right (our check, or the vendor's summary). */
  VerificationVerified: z.object({
    attemptId: id,
    requestId: id.nullable(),
    number: sealedNumber,
    masked,
    numberKey,
    previous: z.object({ number: sealedNumber, masked }).nullable(),
    at,
  }),
  VerificationFailed: z.object({
    attemptId: id,
    reason: verificationFailureSchema,
    /** What went wrong, for people (no code, no number). */
    message: z.string().max(500),
    at,
  }),
  VerificationExpired: z.object({ attemptId: id, at }),
  VerificationCancelRequested: z.object({ attemptId: id, requestId: id, at }),
  VerificationCancelled: z.object({ attemptId: id, requestId: id.nullable(), at }),
  /** The vendor refused a cancel or a resend: too early (< 30 s) or too late (after the call). */
  VerificationCancelRefused: z.object({
    attemptId: id,
    requestId: id,
    action: z.enum(['cancel', 'resend']),
    reason: z.enum(['too_early', 'too_late']),
    at,
  }),
  /** `/verify test`: a test SMS and a test call to the verified number. */
  VerificationTestRequested: z.object({ requestId: id, number: sealedNumber, masked, at }),
  VerificationTestSent: z.object({
    requestId: id,
    messageId: z.string().nullable(),
    callId: z.string().nullable(),
    at,
  }),
  /** After a change of number: the old number is told by SMS. */
  VerificationOldNumberNoticeRequested: z.object({
    requestId: id,
    number: sealedNumber,
    masked,
    newMasked: masked,
    at,
  }),
  VerificationOldNumberNotified: z.object({ requestId: id, messageId: z.string().nullable(), at }),
  /**
   * The verified number was forgotten (the person left, issue 12): no number is verified any more,
   * calls about it not made yet are dropped. Its sealed copies are unreadable (the person's data
   * key is deleted); verifying again starts afresh, with no "old number" to tell.
   */
  VerificationPhoneForgotten: z.object({ reason: z.string().min(1).max(60), at }),
  VerificationUpstreamCallFailed: upstreamCallFailedSchema(verificationActionSchema),
  VerificationUpstreamCallRetried: upstreamCallRetriedSchema(verificationActionSchema),
} as const;

type Schemas = typeof verificationEventDataSchemas;
type DataOf<T extends keyof Schemas> = z.infer<Schemas[T]>;

export type VerificationEvent = { [T in keyof Schemas]: Event<T, DataOf<T>> }[keyof Schemas];
export type VerificationEventType = VerificationEvent['type'];
export type VerificationEventOf<T extends VerificationEventType> = Extract<VerificationEvent, { type: T }>;

export const VERIFICATION_EVENT_TYPES = Object.keys(verificationEventDataSchemas) as VerificationEventType[];

import { z } from 'zod';
import type { Command } from '../shared/messages.ts';
import { recordUpstreamCallFailedSchema, retryUpstreamCallSchema } from '../shared/upstreamRequest.ts';
import { verificationActionSchema } from './events.ts';

/**
 * What people and processors ask of a verification (`<Verb><Subject>`). Every command names the
 * person (`data.slackUserId`), whose stream it goes to; commands from Slack must come from that
 * person (the decider checks `metadata.actor`), so a tampered value cannot act on someone else.
 */
const slackUserId = z.string().regex(/^[UW][A-Z0-9]{2,20}$/, 'must be a Slack user id');
const id = z.string().min(1).max(200);
/** Sealed under the person's data key (`personal:v1:`), or (older records) under the data key ring or a configured secret (`sealed:v2:`, `sealed:v1:`). */
const sealedNumber = z
  .string()
  .max(400)
  .refine((v) => v.startsWith('personal:v1:') || /^sealed:v[12]:/.test(v), 'must be a sealed number');

/** Filled by the module's enrich step from the organisation-wide read model. */
const orgCount = {
  /** Starts (and resends) across the organisation in the window ending now; null until enriched. */
  orgStarts: z.number().int().min(0).nullable(),
  /** The organisation-wide cap on starts per window; null until enriched. */
  orgLimit: z.number().int().min(1).nullable(),
};

export const verificationCommandDataSchemas = {
  StartVerification: z.object({
    slackUserId,
    number: sealedNumber,
    masked: z.string().min(1).max(40),
    numberKey: z.string().regex(/^[0-9a-f]{32}$/),
    codeLength: z.number().int().min(4).max(10),
    ...orgCount,
  }),
  ResendVerificationCode: z.object({ slackUserId, attemptId: id, ...orgCount }),
  SwitchVerificationToVoice: z.object({ slackUserId, attemptId: id }),
  CheckVerificationCode: z.object({
    slackUserId,
    attemptId: id,
    sealedCode: z.string().startsWith('vault:v1:').max(500),
  }),
  CancelVerification: z.object({ slackUserId }),
  TestVerifiedPhone: z.object({ slackUserId }),
  /** `/verify remove`: the person forgets their own number (as a leaver's is forgotten). */
  RemoveVerifiedPhone: z.object({ slackUserId }),
  /** The expiry timer. */
  ExpireVerification: z.object({ slackUserId, attemptId: id }),
  RecordVerificationCodeSent: z.object({ slackUserId, requestId: id, vendorRequestId: id }),
  RecordVerificationCheckOutcome: z.object({
    slackUserId,
    requestId: id,
    outcome: z.enum(['verified', 'wrong_code', 'start_again', 'code_lost']),
  }),
  RecordVerificationCancelOutcome: z.object({
    slackUserId,
    requestId: id,
    outcome: z.enum(['cancelled', 'too_early', 'too_late']),
  }),
  RecordVerificationMovedToVoice: z.object({ slackUserId, requestId: id }),
  RecordVerificationTestSent: z.object({
    slackUserId,
    requestId: id,
    messageId: z.string().nullable(),
    callId: z.string().nullable(),
  }),
  RecordVerificationOldNumberNotified: z.object({
    slackUserId,
    requestId: id,
    messageId: z.string().nullable(),
  }),
  /** The person left (the pager's `forget`, a system command): their verified number is forgotten. */
  ForgetVerifiedPhone: z.object({ slackUserId, reason: z.string().min(1).max(60) }),
  RecordVerificationUpstreamCallFailed: recordUpstreamCallFailedSchema(verificationActionSchema).extend({
    slackUserId,
  }),
  RetryVerificationUpstreamCall: retryUpstreamCallSchema(verificationActionSchema).extend({ slackUserId }),
  /** A verify event from the vendor's webhook (summary or per-channel event). */
  RecordVerificationWebhook: z.object({
    slackUserId,
    clientRef: id,
    vendorRequestId: id,
    kind: z.enum(['summary', 'event']),
    status: z.string().min(1).max(40),
    channel: z.string().max(40).nullable(),
  }),
} as const;

type Schemas = typeof verificationCommandDataSchemas;
export type VerificationCommand = {
  [T in keyof Schemas]: Command<T, z.infer<Schemas[T]>>;
}[keyof Schemas];
export type VerificationCommandType = VerificationCommand['type'];
export type VerificationCommandOf<T extends VerificationCommandType> = Extract<
  VerificationCommand,
  { type: T }
>;

/** Commands people send from Slack: their actor must be the person whose verification it is. */
export const VERIFICATION_USER_COMMANDS: ReadonlySet<string> = new Set<VerificationCommandType>([
  'StartVerification',
  'ResendVerificationCode',
  'SwitchVerificationToVoice',
  'CheckVerificationCode',
  'CancelVerification',
  'TestVerifiedPhone',
  'RemoveVerifiedPhone',
]);

/** Commands whose org-wide count the enrich step fills in. */
export const VERIFICATION_COUNTED_COMMANDS: ReadonlySet<string> = new Set<VerificationCommandType>([
  'StartVerification',
  'ResendVerificationCode',
]);

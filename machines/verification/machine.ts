import { assign, setup } from 'xstate';
import { exhaustive } from '../shared/messages.ts';
import {
  afterFailedAttempt,
  afterRetry,
  FIRST_ATTEMPT,
  type UpstreamRequest,
  failureApplies as upstreamFailureApplies,
  retryApplies as upstreamRetryApplies,
  withoutRequest,
} from '../shared/upstreamRequest.ts';
import type { VerificationAction, VerificationEvent } from './events.ts';

/**
 * One person's verifications (stream `verification-<slack user id>`). The state is where their
 * latest attempt stands:
 *
 *   none ──Requested──► requested ──CodeSent──► codeSent ──Verified──► verified
 *                            │                     │ ├──Failed (3 wrong codes, 410)──► failed
 *                            └──Failed (not started)┤ ├──Expired──► expired
 *                                                   │ └──Cancelled──► cancelled
 *                      (resend, voice, code checks stay in codeSent)
 *
 * From any end state a new attempt may be requested (the decider applies the limits). The verified
 * number survives later attempts until a new one is verified (a change of number). Upstream calls
 * (start, resend, check, cancel, next, test, notify_old) are pending requests following the shared
 * rules of machines/shared/upstreamRequest.ts; an attempt that ends drops its own.
 */

export type SealedPhone = Readonly<{ number: string; masked: string }>;

export type VerificationAttempt = Readonly<{
  attemptId: string;
  clientRef: string;
  number: string;
  masked: string;
  numberKey: string;
  previous: SealedPhone | null;
  codeLength: number;
  expiresAt: string;
  requestedAt: string;
  vendorRequestId: string | null;
  codeSentAt: string | null;
  /** The code now comes by voice. */
  voice: boolean;
  wrongCodes: number;
}>;

export type VerificationRequest = UpstreamRequest<VerificationAction> &
  Readonly<{
    /** The attempt it belongs to; null for calls about the verified number (test, notify_old). */
    attemptId: string | null;
    /** `check`: the sealed code. */
    sealedCode: string | null;
    /** `test`, `notify_old`: the sealed number to text or call. */
    number: string | null;
    /** `notify_old`: the new number, masked, for the text. */
    newMasked: string | null;
  }>;

export type VerificationContext = Readonly<{
  attempt: VerificationAttempt | null;
  verified: Readonly<{ number: string; masked: string; numberKey: string; at: string }> | null;
  /** Times of this person's recent starts and resends (the last 10), oldest first. */
  starts: readonly string[];
  requests: readonly VerificationRequest[];
  /** How the latest attempt ended, when it did not verify. */
  ending: Readonly<{ reason: string; message: string }> | null;
}>;

const ATTEMPT_ACTIONS: ReadonlySet<VerificationAction> = new Set([
  'start',
  'resend',
  'check',
  'cancel',
  'next',
]);
const KEPT_STARTS = 10;

const request = (
  requestId: string,
  action: VerificationAction,
  attemptId: string | null,
  extra: Partial<Pick<VerificationRequest, 'sealedCode' | 'number' | 'newMasked'>> = {},
): VerificationRequest => ({
  requestId,
  action,
  ...FIRST_ATTEMPT,
  attemptId,
  sealedCode: extra.sealedCode ?? null,
  number: extra.number ?? null,
  newMasked: extra.newMasked ?? null,
});

/** The attempt ended: its own calls are dropped (never sent), calls about the number stay. */
const ended = (context: VerificationContext): readonly VerificationRequest[] =>
  context.requests.filter((r) => !ATTEMPT_ACTIONS.has(r.action));

const patchAttempt = (
  context: VerificationContext,
  patch: Partial<VerificationAttempt>,
): VerificationAttempt | null => (context.attempt ? { ...context.attempt, ...patch } : null);

/** The context after an event (the machine's one `assign`). */
export const applyVerificationEvent = (
  context: VerificationContext,
  event: VerificationEvent,
): VerificationContext => {
  switch (event.type) {
    case 'VerificationRequested': {
      const e = event.data;
      return {
        ...context,
        attempt: {
          attemptId: e.attemptId,
          clientRef: e.clientRef,
          number: e.number,
          masked: e.masked,
          numberKey: e.numberKey,
          previous: e.previous,
          codeLength: e.codeLength,
          expiresAt: e.expiresAt,
          requestedAt: e.at,
          vendorRequestId: null,
          codeSentAt: null,
          voice: false,
          wrongCodes: 0,
        },
        starts: [...context.starts, e.at].slice(-KEPT_STARTS),
        requests: [...ended(context), request(e.attemptId, 'start', e.attemptId)],
        ending: null,
      };
    }
    case 'VerificationCodeSent':
      return {
        ...context,
        attempt: patchAttempt(context, {
          vendorRequestId: event.data.vendorRequestId,
          codeSentAt: event.data.at,
          voice: false,
        }),
        requests: withoutRequest(context.requests, event.data.requestId),
      };
    case 'VerificationResendRequested':
      return {
        ...context,
        starts: [...context.starts, event.data.at].slice(-KEPT_STARTS),
        requests: [...context.requests, request(event.data.requestId, 'resend', event.data.attemptId)],
      };
    case 'VerificationVoiceRequested':
      return {
        ...context,
        requests: [...context.requests, request(event.data.requestId, 'next', event.data.attemptId)],
      };
    case 'VerificationMovedToVoice':
      return {
        ...context,
        attempt: patchAttempt(context, { voice: true }),
        requests: withoutRequest(context.requests, event.data.requestId),
      };
    case 'VerificationCodeSubmitted':
      return {
        ...context,
        requests: [
          ...context.requests,
          request(event.data.requestId, 'check', event.data.attemptId, { sealedCode: event.data.sealedCode }),
        ],
      };
    case 'VerificationCodeRejected':
      return {
        ...context,
        attempt: patchAttempt(context, { wrongCodes: event.data.wrongCodes }),
        requests: withoutRequest(context.requests, event.data.requestId),
      };
    case 'VerificationCodeLost':
    case 'VerificationCancelRefused':
      return { ...context, requests: withoutRequest(context.requests, event.data.requestId) };
    case 'VerificationVerified':
      return {
        ...context,
        verified: {
          number: event.data.number,
          masked: event.data.masked,
          numberKey: event.data.numberKey,
          at: event.data.at,
        },
        requests: ended(context),
        ending: null,
      };
    case 'VerificationFailed':
      return {
        ...context,
        requests: ended(context),
        ending: { reason: event.data.reason, message: event.data.message },
      };
    case 'VerificationExpired':
      return { ...context, requests: ended(context), ending: { reason: 'expired', message: '' } };
    case 'VerificationCancelRequested':
      return {
        ...context,
        requests: [...context.requests, request(event.data.requestId, 'cancel', event.data.attemptId)],
      };
    case 'VerificationCancelled':
      return { ...context, requests: ended(context), ending: { reason: 'cancelled', message: '' } };
    case 'VerificationTestRequested':
      return {
        ...context,
        requests: [
          ...context.requests,
          request(event.data.requestId, 'test', null, { number: event.data.number }),
        ],
      };
    case 'VerificationOldNumberNoticeRequested':
      return {
        ...context,
        requests: [
          ...context.requests,
          request(event.data.requestId, 'notify_old', null, {
            number: event.data.number,
            newMasked: event.data.newMasked,
          }),
        ],
      };
    case 'VerificationTestSent':
    case 'VerificationOldNumberNotified':
      return { ...context, requests: withoutRequest(context.requests, event.data.requestId) };
    case 'VerificationPhoneForgotten':
      return {
        ...context,
        verified: null,
        requests: context.requests.filter((r) => r.action !== 'test' && r.action !== 'notify_old'),
      };
    case 'VerificationUpstreamCallFailed':
      return { ...context, requests: afterFailedAttempt(context.requests, event.data) };
    case 'VerificationUpstreamCallRetried':
      return { ...context, requests: afterRetry(context.requests, event.data) };
    default:
      return exhaustive(event, 'verification event');
  }
};

export const findRequest = (context: VerificationContext, requestId: string): VerificationRequest | null =>
  context.requests.find((r) => r.requestId === requestId) ?? null;

const sameAttempt = (context: VerificationContext, attemptId: string): boolean =>
  context.attempt?.attemptId === attemptId;

const hasRequest = (context: VerificationContext, requestId: string | null): boolean =>
  requestId === null || findRequest(context, requestId) !== null;

export const verificationMachine = setup({
  types: { context: {} as VerificationContext, events: {} as VerificationEvent },
  guards: {
    ofAttempt: ({ context, event }) =>
      'attemptId' in event.data && sameAttempt(context, event.data.attemptId),
    answersRequest: ({ context, event }) =>
      'attemptId' in event.data &&
      sameAttempt(context, event.data.attemptId) &&
      'requestId' in event.data &&
      hasRequest(context, event.data.requestId as string | null),
    answersOwnRequest: ({ context, event }) =>
      'requestId' in event.data && hasRequest(context, event.data.requestId as string | null),
    failureApplies: ({ context, event }) =>
      event.type === 'VerificationUpstreamCallFailed' &&
      upstreamFailureApplies(findRequest(context, event.data.requestId), event.data),
    retryApplies: ({ context, event }) =>
      event.type === 'VerificationUpstreamCallRetried' &&
      upstreamRetryApplies(findRequest(context, event.data.requestId), event.data),
  },
  actions: {
    apply: assign(({ context, event }) => applyVerificationEvent(context, event)),
  },
}).createMachine({
  id: 'verification',
  initial: 'none',
  context: { attempt: null, verified: null, starts: [], requests: [], ending: null },
  on: {
    VerificationPhoneForgotten: { actions: 'apply' },
    VerificationTestRequested: { actions: 'apply' },
    VerificationTestSent: { guard: 'answersOwnRequest', actions: 'apply' },
    VerificationOldNumberNoticeRequested: { actions: 'apply' },
    VerificationOldNumberNotified: { guard: 'answersOwnRequest', actions: 'apply' },
    VerificationUpstreamCallFailed: { guard: 'failureApplies', actions: 'apply' },
    VerificationUpstreamCallRetried: { guard: 'retryApplies', actions: 'apply' },
  },
  states: {
    none: { on: { VerificationRequested: { target: 'requested', actions: 'apply' } } },
    requested: {
      on: {
        VerificationCodeSent: { target: 'codeSent', guard: 'answersRequest', actions: 'apply' },
        VerificationFailed: { target: 'failed', guard: 'ofAttempt', actions: 'apply' },
        VerificationExpired: { target: 'expired', guard: 'ofAttempt', actions: 'apply' },
      },
    },
    codeSent: {
      on: {
        VerificationCodeSent: { guard: 'answersRequest', actions: 'apply' },
        VerificationResendRequested: { guard: 'ofAttempt', actions: 'apply' },
        VerificationVoiceRequested: { guard: 'ofAttempt', actions: 'apply' },
        VerificationMovedToVoice: { guard: 'answersRequest', actions: 'apply' },
        VerificationCodeSubmitted: { guard: 'ofAttempt', actions: 'apply' },
        VerificationCodeRejected: { guard: 'answersRequest', actions: 'apply' },
        VerificationCodeLost: { guard: 'answersRequest', actions: 'apply' },
        VerificationCancelRequested: { guard: 'ofAttempt', actions: 'apply' },
        VerificationCancelRefused: { guard: 'answersRequest', actions: 'apply' },
        VerificationVerified: { target: 'verified', guard: 'answersRequest', actions: 'apply' },
        VerificationFailed: { target: 'failed', guard: 'ofAttempt', actions: 'apply' },
        VerificationExpired: { target: 'expired', guard: 'ofAttempt', actions: 'apply' },
        VerificationCancelled: { target: 'cancelled', guard: 'answersRequest', actions: 'apply' },
      },
    },
    verified: { on: { VerificationRequested: { target: 'requested', actions: 'apply' } } },
    failed: { on: { VerificationRequested: { target: 'requested', actions: 'apply' } } },
    expired: { on: { VerificationRequested: { target: 'requested', actions: 'apply' } } },
    cancelled: { on: { VerificationRequested: { target: 'requested', actions: 'apply' } } },
  },
});

export type VerificationPhase =
  | 'none'
  | 'requested'
  | 'codeSent'
  | 'verified'
  | 'failed'
  | 'expired'
  | 'cancelled';

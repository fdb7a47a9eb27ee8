import { VERIFICATION_LIMITS, type VerificationState } from '../../machines/verification/decider.ts';
import type { VerificationAction } from '../../machines/verification/events.ts';
import { findRequest, type VerificationRequest } from '../../machines/verification/machine.ts';
import { slackUserOfStream, VERIFICATION_STREAM_PREFIX } from '../../machines/verification/streams.ts';
import { ChatOpsError, isChatOpsError } from '../core/errors.ts';
import type { JsonObject } from '../core/messages.ts';
import type { RecordedEvent } from '../eventStore/eventStore.ts';
import type { Logger } from '../logger.ts';
import type { Dispatch } from '../processors/dispatchCommand.ts';
import type { RetryPolicy } from '../processors/retryPolicy.ts';
import type { Processor } from '../processors/runner.ts';
import {
  createUpstreamCallProcessor,
  type OutcomeCommand,
  type UpstreamCallArgs,
  type UpstreamCallTarget,
} from '../processors/upstreamCall.ts';
import type { VonageClient } from '../upstream/vonageContract.ts';
import type { CodeVault } from './codeVault.ts';
import type { PhoneSealer } from './phone.ts';
import { readVerificationStream } from './state.ts';

/**
 * `verification-upstream`: every call the verification lifecycle records as a request (start,
 * resend, check, cancel, next, test, notify_old) is made here, through the shared durable-call
 * mechanism (src/processors/upstreamCall.ts): the request is folded right before each attempt and
 * only sent while pending, failures are recorded with their retry (network, 5xx, 429) or as final,
 * and an outcome is recorded once. A final failure is told to the person by `verification-notices`.
 *
 * Vendor answers that are outcomes, not failures, are recorded as such: a wrong code, a request
 * the vendor ended (410/409 → start again), a cancel refused (too early / too late). Out of credit
 * (402) fails the call for good, and raises the operator alert: an error log line with the stable
 * code `SB_VONAGE_OUT_OF_CREDIT` and the `onOutOfCredit` hook (the module counts it in a metric).
 *
 * The check opens the code from the in-memory vault, calls the vendor and drops the key whatever
 * the answer; a key that is gone (a restart since the submission) records `code_lost`, and the
 * person is asked to type the code again. The code itself is never logged, recorded or put in an
 * error message.
 */
export const VERIFICATION_UPSTREAM_PROCESSOR = 'verification-upstream';
const ACTOR = 'system:verification-upstream';

export const OUT_OF_CREDIT_LOG_CODE = 'SB_VONAGE_OUT_OF_CREDIT';

const REQUEST_EVENTS = [
  'VerificationRequested',
  'VerificationResendRequested',
  'VerificationVoiceRequested',
  'VerificationCodeSubmitted',
  'VerificationCancelRequested',
  'VerificationTestRequested',
  'VerificationOldNumberNoticeRequested',
  'VerificationUpstreamCallRetried',
] as const;

export type VerificationUpstreamOptions = Readonly<{
  client: VonageClient;
  vault: CodeVault;
  phones: PhoneSealer;
  dispatch: Dispatch;
  retry: RetryPolicy;
  logger: Logger;
  /** The sender of SMS and calls (E.164 digits). */
  fromNumber: string;
  /** The name in the vendor's code SMS / call ("Your Switchboard code is …"). */
  brand: string;
  /** Where call events go (`/webhooks/vonage/voice`), when known. */
  voiceEventUrl?: string;
  /** Called once per 402 (the operator alert's metric). */
  onOutOfCredit?: (action: VerificationAction) => void;
}>;

type Target = UpstreamCallTarget & Readonly<{ slackUserId: string }>;
type Args = UpstreamCallArgs<VerificationState, VerificationRequest, Target>;

const reasonOf = (e: unknown): unknown => (isChatOpsError(e) ? e.details.reason : undefined);

const targetOf = (event: RecordedEvent): Target | null => {
  if (event.kind !== 'event') return null;
  const slackUserId = slackUserOfStream(event.streamId);
  const d = event.data as { requestId?: unknown; attemptId?: unknown; attempt?: unknown };
  const requestId = event.type === 'VerificationRequested' ? d.attemptId : d.requestId;
  if (!slackUserId || typeof requestId !== 'string') return null;
  const attempt =
    event.type === 'VerificationUpstreamCallRetried' && typeof d.attempt === 'number' ? d.attempt : 1;
  return { streamId: event.streamId, requestId, attempt, slackUserId };
};

export const createVerificationUpstreamReactor = (options: VerificationUpstreamOptions): Processor => {
  const { client, vault, phones } = options;
  const json = (d: object): JsonObject => d as JsonObject;
  const outcome = (type: string, target: Target, data: object): OutcomeCommand => ({
    type,
    data: json({ slackUserId: target.slackUserId, ...data }),
  });

  const outOfCredit = (action: VerificationAction, error: unknown): never => {
    options.logger.error(
      { code: OUT_OF_CREDIT_LOG_CODE, action },
      'the communications account is out of credit: verification codes and pages cannot be sent until it is topped up',
    );
    options.onOutOfCredit?.(action);
    throw new ChatOpsError(
      'SB_UPSTREAM_REJECTED',
      'the communications account is out of credit (an admin has been alerted).',
      {
        cause: error,
        details: { reason: 'out_of_credit' },
      },
    );
  };

  const start = async (args: Args): Promise<string> => {
    const attempt = args.state.context.attempt;
    if (!attempt) throw new ChatOpsError('SB_ILLEGAL_STATE', 'no attempt to start');
    const started = await client.startVerification({
      to: await phones.openForUse(attempt.number),
      brand: options.brand,
      workflow: ['sms', 'voice'],
      codeLength: attempt.codeLength,
      // The SMS step's length is the code's lifetime the DM states (VERIFICATION_LIMITS.smsStepMs).
      channelTimeoutSeconds: VERIFICATION_LIMITS.smsStepMs / 1000,
      locale: 'en-gb',
      clientRef: attempt.clientRef,
    });
    return started.requestId;
  };

  const call = async (args: Args): Promise<OutcomeCommand> => {
    const { request: r, state, target } = args;
    const attempt = state.context.attempt;
    try {
      switch (r.action) {
        case 'start':
          return outcome('RecordVerificationCodeSent', target, {
            requestId: r.requestId,
            vendorRequestId: await start(args),
          });
        case 'resend': {
          if (attempt?.vendorRequestId) {
            try {
              await client.cancelVerification(attempt.vendorRequestId);
            } catch (e) {
              const reason = reasonOf(e);
              if (reason === 'cannot_cancel_yet' || reason === 'cannot_cancel_now') {
                return outcome('RecordVerificationCancelOutcome', target, {
                  requestId: r.requestId,
                  outcome: reason === 'cannot_cancel_yet' ? 'too_early' : 'too_late',
                });
              }
              // Already ended upstream (expired, verified elsewhere): start the new one anyway.
              if (reason !== 'start_again') throw e;
            }
          }
          return outcome('RecordVerificationCodeSent', target, {
            requestId: r.requestId,
            vendorRequestId: await start(args),
          });
        }
        case 'check': {
          const code = r.sealedCode ? vault.open(r.sealedCode) : null;
          const keyId = r.requestId;
          if (code === null || !attempt?.vendorRequestId) {
            vault.drop(keyId);
            return outcome('RecordVerificationCheckOutcome', target, {
              requestId: r.requestId,
              outcome: 'code_lost',
            });
          }
          try {
            await client.checkCode(attempt.vendorRequestId, code);
            vault.drop(keyId);
            return outcome('RecordVerificationCheckOutcome', target, {
              requestId: r.requestId,
              outcome: 'verified',
            });
          } catch (e) {
            const reason = reasonOf(e);
            if (reason === 'wrong_code' || reason === 'start_again') {
              vault.drop(keyId);
              return outcome('RecordVerificationCheckOutcome', target, {
                requestId: r.requestId,
                outcome: reason,
              });
            }
            // Anything else may be retried: the key stays until the check is answered (or 15 min).
            throw e;
          }
        }
        case 'cancel': {
          if (!attempt?.vendorRequestId)
            throw new ChatOpsError('SB_ILLEGAL_STATE', 'nothing started to cancel');
          try {
            await client.cancelVerification(attempt.vendorRequestId);
            return outcome('RecordVerificationCancelOutcome', target, {
              requestId: r.requestId,
              outcome: 'cancelled',
            });
          } catch (e) {
            const reason = reasonOf(e);
            if (reason === 'cannot_cancel_yet' || reason === 'cannot_cancel_now') {
              return outcome('RecordVerificationCancelOutcome', target, {
                requestId: r.requestId,
                outcome: reason === 'cannot_cancel_yet' ? 'too_early' : 'too_late',
              });
            }
            // The vendor already ended it: as good as cancelled.
            if (reason === 'start_again') {
              return outcome('RecordVerificationCancelOutcome', target, {
                requestId: r.requestId,
                outcome: 'cancelled',
              });
            }
            throw e;
          }
        }
        case 'next': {
          if (!attempt?.vendorRequestId)
            throw new ChatOpsError('SB_ILLEGAL_STATE', 'nothing started to call about');
          await client.nextWorkflow(attempt.vendorRequestId);
          return outcome('RecordVerificationMovedToVoice', target, { requestId: r.requestId });
        }
        case 'test': {
          const to = await phones.openForUse(r.number ?? '');
          const sms = await client.sendSms({
            to,
            from: options.fromNumber,
            text: `${options.brand}: this is a test message. Pages will reach you here.`,
            clientRef: `test${r.requestId.replace(/[^0-9a-z]/gi, '').slice(0, 36)}`,
          });
          const created = await client.createCall({
            to,
            from: options.fromNumber,
            ncco: [
              {
                action: 'talk',
                text: `This is a test call from ${options.brand}. Pages will reach you on this number. Goodbye.`,
                language: 'en-GB',
              },
            ],
            ...(options.voiceEventUrl ? { eventUrl: options.voiceEventUrl } : {}),
          });
          return outcome('RecordVerificationTestSent', target, {
            requestId: r.requestId,
            messageId: sms.messageUuid,
            callId: created.uuid,
          });
        }
        case 'notify_old': {
          // The old number can no longer be read (its key lost, hence this verification): there is
          // nobody to tell, and nothing to fail about.
          const old = await phones.openAny(r.number ?? '');
          if (old === null) {
            return outcome('RecordVerificationOldNumberNotified', target, {
              requestId: r.requestId,
              messageId: null,
            });
          }
          const sent = await client.sendSms({
            to: old,
            from: options.fromNumber,
            text: `${options.brand}: your on-call number was changed to ${r.newMasked ?? 'a new number'}. Pages no longer come to this phone.`,
            clientRef: `old${r.requestId.replace(/[^0-9a-z]/gi, '').slice(0, 37)}`,
          });
          return outcome('RecordVerificationOldNumberNotified', target, {
            requestId: r.requestId,
            messageId: sent.messageUuid,
          });
        }
      }
    } catch (e) {
      if (reasonOf(e) === 'out_of_credit') return outOfCredit(r.action, e);
      throw e;
    }
    throw new ChatOpsError('SB_ILLEGAL_STATE', `unknown verification call ${String(r.action)}`);
  };

  return createUpstreamCallProcessor({
    filter: { streamPrefixes: [VERIFICATION_STREAM_PREFIX], eventTypes: [...REQUEST_EVENTS] },
    target: targetOf,
    spec: {
      processorId: VERIFICATION_UPSTREAM_PROCESSOR,
      actor: ACTOR,
      policy: options.retry,
      readState: (store, streamId) => readVerificationStream(store, streamId),
      pendingRequest: (state, requestId) => findRequest(state.context, requestId),
      call,
      succeeded: ({ result }) => result,
      failed: ({ request, failure, target }) =>
        outcome('RecordVerificationUpstreamCallFailed', target, {
          requestId: request.requestId,
          action: request.action,
          attempt: failure.attempt,
          maxAttempts: failure.maxAttempts,
          code: failure.code,
          message: failure.message,
          nextAttemptAt: failure.nextAttemptAt,
        }),
      retry: ({ request, attempt, target }) =>
        outcome('RetryVerificationUpstreamCall', target, {
          requestId: request.requestId,
          action: request.action,
          attempt,
        }),
      retryTimerId: (request, failedAttempt) =>
        `verification-retry-${request.requestId.replace(/[^A-Za-z0-9-]/g, '-')}-${failedAttempt}`,
      record: (command) => options.dispatch(command),
    },
  });
};

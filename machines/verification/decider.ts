import type { SnapshotFrom } from 'xstate';
import { DecisionRejected, machineDecider } from '../shared/machineDecider.ts';
import { exhaustive } from '../shared/messages.ts';
import { slackDateUtc } from '../shared/slackDate.ts';
import { decideFailure, decideRetry } from '../shared/upstreamRequest.ts';
import {
  VERIFICATION_USER_COMMANDS,
  type VerificationCommand,
  verificationCommandDataSchemas,
} from './commands.ts';
import { type VerificationEvent, verificationEventDataSchemas } from './events.ts';
import {
  findRequest,
  type VerificationContext,
  type VerificationPhase,
  verificationMachine,
} from './machine.ts';
import { clientRefFor } from './streams.ts';

export type VerificationState = SnapshotFrom<typeof verificationMachine>;

/** The limits, decided here from what the command carries (time on the command, the org count from enrich). */
export const VERIFICATION_LIMITS = {
  /** Starts and resends per person per window. */
  perPerson: 5,
  /** The window of both limits. */
  windowMs: 10 * 60_000,
  /** Wrong codes per attempt; the last one fails it. */
  wrongCodes: 3,
  /** The organisation-wide default (VERIFY_ORG_LIMIT). */
  orgDefault: 50,
  /** The vendor refuses a cancel earlier than this after the start. */
  cancelAfterMs: 30_000,
  /**
   * How long the SMS step lasts (the vendor's `channel_timeout`, so its SMS says "Valid for 5
   * minutes"): the code DM says the same lifetime; then the call reads the same code out.
   */
  smsStepMs: 5 * 60_000,
  /** An attempt not verified by then expires (SMS step, then the voice step, 5 minutes each). */
  ttlMs: 10 * 60_000,
} as const;

/** `VerificationPhoneForgotten.reason` when the person removed their own number (`/verify remove`). */
export const REMOVED_BY_THEM = 'removed';

/** `DecisionRejected.details.reason` of a verification refusal. */
export type VerificationRejectionReason =
  | 'not_yours'
  | 'already_running'
  | 'person_limit'
  | 'org_limit'
  | 'no_code_expected'
  | 'other_attempt'
  | 'busy'
  | 'too_many_wrong_codes'
  | 'too_early'
  | 'too_late'
  | 'already_voice'
  | 'nothing_to_cancel'
  | 'not_verified';

const refuse = (
  reason: VerificationRejectionReason,
  message: string,
  details: Record<string, unknown> = {},
) => new DecisionRejected(message, { reason, ...details });

/** A time in a refusal: a Slack date token, so each reader sees it in their own zone (issue 19). */
const moment = (iso: string): string => slackDateUtc(iso);
/** A moment within the minute (when a vendor allows something again), with its seconds. */
const momentSecs = (iso: string): string => slackDateUtc(iso, 'dateTimeSecs');
const plusMs = (iso: string, ms: number): string => new Date(Date.parse(iso) + ms).toISOString();

export const phaseOf = (state: VerificationState): VerificationPhase => state.value as VerificationPhase;

const ENDED_TEXT: Readonly<Record<string, string>> = {
  none: "You haven't started a verification. Use `/verify &lt;your phone number&gt;`.",
  verified: 'Your number is already verified.',
  failed: 'That verification has failed. Start again with `/verify &lt;your phone number&gt;`.',
  expired: 'That code has expired. Start again with `/verify &lt;your phone number&gt;`.',
  cancelled: 'That verification was cancelled. Start again with `/verify &lt;your phone number&gt;`.',
  requested: 'Your code is still on its way. Wait for the SMS, then enter it.',
};

/** Starts (and resends) in the window ending at `now`, and when the oldest of them leaves it. */
const recentStarts = (context: VerificationContext, now: string) => {
  const since = Date.parse(now) - VERIFICATION_LIMITS.windowMs;
  const recent = context.starts.filter((t) => Date.parse(t) > since);
  return { count: recent.length, freeAt: recent[0] ? plusMs(recent[0], VERIFICATION_LIMITS.windowMs) : now };
};

const checkLimits = (
  context: VerificationContext,
  data: Readonly<{ orgStarts: number | null; orgLimit: number | null }>,
  now: string,
): void => {
  const mine = recentStarts(context, now);
  if (mine.count >= VERIFICATION_LIMITS.perPerson) {
    throw refuse(
      'person_limit',
      `You've asked for ${VERIFICATION_LIMITS.perPerson} codes in the last 10 minutes, the most Switchboard sends one person. Try again after ${moment(mine.freeAt)}.`,
      { retryAt: mine.freeAt },
    );
  }
  if (data.orgStarts !== null && data.orgLimit !== null && data.orgStarts >= data.orgLimit) {
    throw refuse(
      'org_limit',
      `Switchboard has sent ${data.orgLimit} verification codes across the organisation in the last 10 minutes, its limit. Please try again in a few minutes.`,
      { orgLimit: data.orgLimit },
    );
  }
};

/** The attempt a command about a running code names, in codeSent; refuses otherwise. */
const runningAttempt = (state: VerificationState, attemptId: string) => {
  const attempt = state.context.attempt;
  const phase = phaseOf(state);
  if (phase !== 'codeSent' || !attempt) {
    throw refuse('no_code_expected', ENDED_TEXT[phase] ?? 'There is no code to work with.', { phase });
  }
  if (attempt.attemptId !== attemptId) {
    throw refuse(
      'other_attempt',
      'That message is about an earlier verification. Use the latest DM from Switchboard.',
      {
        attemptId,
      },
    );
  }
  return attempt;
};

const pendingOf = (context: VerificationContext, ...actions: string[]) =>
  context.requests.find((r) => actions.includes(r.action)) ?? null;

const toEvents = (command: VerificationCommand, state: VerificationState): VerificationEvent[] => {
  const { context } = state;
  const now = command.metadata.now;
  const phase = phaseOf(state);
  if (VERIFICATION_USER_COMMANDS.has(command.type) && command.metadata.actor !== command.data.slackUserId) {
    throw refuse('not_yours', 'You can only verify your own phone number.', {
      actor: command.metadata.actor,
    });
  }
  switch (command.type) {
    case 'StartVerification': {
      const d = command.data;
      if (phase === 'requested' || phase === 'codeSent') {
        throw refuse(
          'already_running',
          `A code is already on its way to ${context.attempt?.masked ?? 'your phone'}. Enter it from Switchboard's DM, or use \`/verify cancel\` first.`,
        );
      }
      checkLimits(context, d, now);
      const attemptId = command.metadata.commandId;
      // Verifying the same number again is allowed (it ends an opt-out from paging); only another
      // number is a change, whose old number is told.
      const verified = context.verified;
      const previous =
        verified && verified.numberKey !== d.numberKey
          ? { number: verified.number, masked: verified.masked }
          : null;
      return [
        {
          type: 'VerificationRequested',
          data: {
            attemptId,
            slackUserId: d.slackUserId,
            clientRef: clientRefFor(d.slackUserId, attemptId),
            number: d.number,
            masked: d.masked,
            numberKey: d.numberKey,
            previous,
            codeLength: d.codeLength,
            expiresAt: plusMs(now, VERIFICATION_LIMITS.ttlMs),
            at: now,
          },
        },
      ];
    }
    case 'ResendVerificationCode': {
      const attempt = runningAttempt(state, command.data.attemptId);
      if (pendingOf(context, 'resend', 'cancel', 'start')) {
        throw refuse('busy', 'A new code is already on its way.');
      }
      if (attempt.voice) {
        throw refuse(
          'too_late',
          `Your code is coming by phone call now, so it can't be resent. It expires ${moment(attempt.expiresAt)}; then start again with \`/verify\`.`,
        );
      }
      const earliest = plusMs(attempt.codeSentAt ?? attempt.requestedAt, VERIFICATION_LIMITS.cancelAfterMs);
      if (Date.parse(now) < Date.parse(earliest)) {
        throw refuse('too_early', `You can ask for a new code from ${momentSecs(earliest)}.`, {
          retryAt: earliest,
        });
      }
      checkLimits(context, command.data, now);
      return [
        {
          type: 'VerificationResendRequested',
          data: { attemptId: attempt.attemptId, requestId: command.metadata.commandId, at: now },
        },
      ];
    }
    case 'SwitchVerificationToVoice': {
      const attempt = runningAttempt(state, command.data.attemptId);
      if (attempt.voice || pendingOf(context, 'next')) {
        throw refuse('already_voice', `Switchboard is already calling ${attempt.masked} with your code.`);
      }
      if (pendingOf(context, 'resend'))
        throw refuse('busy', 'A new code is on its way by SMS; try again once it has arrived.');
      return [
        {
          type: 'VerificationVoiceRequested',
          data: { attemptId: attempt.attemptId, requestId: command.metadata.commandId, at: now },
        },
      ];
    }
    case 'CheckVerificationCode': {
      const attempt = runningAttempt(state, command.data.attemptId);
      if (pendingOf(context, 'check')) {
        throw refuse(
          'busy',
          'Switchboard is still checking the code you entered before. Wait for its answer.',
        );
      }
      if (attempt.wrongCodes >= VERIFICATION_LIMITS.wrongCodes) {
        throw refuse('too_many_wrong_codes', 'Too many wrong codes. Start again with `/verify`.');
      }
      return [
        {
          type: 'VerificationCodeSubmitted',
          data: {
            attemptId: attempt.attemptId,
            requestId: command.metadata.commandId,
            sealedCode: command.data.sealedCode,
            at: now,
          },
        },
      ];
    }
    case 'CancelVerification': {
      const attempt = context.attempt;
      if (phase === 'requested') {
        throw refuse(
          'too_early',
          'Your code is still on its way. You can cancel half a minute after it is sent.',
        );
      }
      if (phase !== 'codeSent' || !attempt) {
        throw refuse('nothing_to_cancel', 'There is no verification to cancel.', { phase });
      }
      if (pendingOf(context, 'cancel')) return [];
      if (attempt.voice) {
        throw refuse(
          'too_late',
          `Too late to cancel: the code is coming by phone call now. It expires ${moment(attempt.expiresAt)}.`,
        );
      }
      const earliest = plusMs(attempt.codeSentAt ?? attempt.requestedAt, VERIFICATION_LIMITS.cancelAfterMs);
      if (Date.parse(now) < Date.parse(earliest)) {
        throw refuse('too_early', `You can cancel from ${momentSecs(earliest)}.`, { retryAt: earliest });
      }
      return [
        {
          type: 'VerificationCancelRequested',
          data: { attemptId: attempt.attemptId, requestId: command.metadata.commandId, at: now },
        },
      ];
    }
    case 'TestVerifiedPhone': {
      const verified = context.verified;
      if (!verified) {
        throw refuse(
          'not_verified',
          "You don't have a verified number yet. Use `/verify &lt;your phone number&gt;` first.",
        );
      }
      if (pendingOf(context, 'test')) throw refuse('busy', 'A test SMS and call are already on their way.');
      return [
        {
          type: 'VerificationTestRequested',
          data: {
            requestId: command.metadata.commandId,
            number: verified.number,
            masked: verified.masked,
            at: now,
          },
        },
      ];
    }
    case 'ExpireVerification': {
      const attempt = context.attempt;
      if (!attempt || attempt.attemptId !== command.data.attemptId) return [];
      if (phase !== 'requested' && phase !== 'codeSent') return [];
      return [{ type: 'VerificationExpired', data: { attemptId: attempt.attemptId, at: now } }];
    }
    case 'RecordVerificationCodeSent': {
      const r = findRequest(context, command.data.requestId);
      if (!r || (r.action !== 'start' && r.action !== 'resend') || !r.attemptId) return [];
      return [
        {
          type: 'VerificationCodeSent',
          data: {
            attemptId: r.attemptId,
            requestId: r.requestId,
            vendorRequestId: command.data.vendorRequestId,
            at: now,
          },
        },
      ];
    }
    case 'RecordVerificationCheckOutcome': {
      const r = findRequest(context, command.data.requestId);
      const attempt = context.attempt;
      if (r?.action !== 'check' || !attempt || r.attemptId !== attempt.attemptId) return [];
      const base = { attemptId: attempt.attemptId, requestId: r.requestId, at: now };
      switch (command.data.outcome) {
        case 'verified':
          return verifiedEvents(context, r.requestId, now);
        case 'wrong_code': {
          const wrongCodes = attempt.wrongCodes + 1;
          const triesLeft = Math.max(0, VERIFICATION_LIMITS.wrongCodes - wrongCodes);
          const rejected: VerificationEvent = {
            type: 'VerificationCodeRejected',
            data: { ...base, wrongCodes, triesLeft },
          };
          return triesLeft > 0
            ? [rejected]
            : [
                rejected,
                {
                  type: 'VerificationFailed',
                  data: {
                    attemptId: attempt.attemptId,
                    reason: 'too_many_wrong_codes',
                    message: `${VERIFICATION_LIMITS.wrongCodes} wrong codes.`,
                    at: now,
                  },
                },
              ];
        }
        case 'start_again':
          // The vendor ends a request on its third wrong code with a 410: that is this code.
          if (attempt.wrongCodes === VERIFICATION_LIMITS.wrongCodes - 1) {
            return [
              {
                type: 'VerificationCodeRejected',
                data: { ...base, wrongCodes: attempt.wrongCodes + 1, triesLeft: 0 },
              },
              {
                type: 'VerificationFailed',
                data: {
                  attemptId: attempt.attemptId,
                  reason: 'too_many_wrong_codes',
                  message: `${VERIFICATION_LIMITS.wrongCodes} wrong codes.`,
                  at: now,
                },
              },
            ];
          }
          return [
            {
              type: 'VerificationFailed',
              data: {
                attemptId: attempt.attemptId,
                reason: 'start_again',
                message: 'The communications service ended this verification (expired, or too many tries).',
                at: now,
              },
            },
          ];
        case 'code_lost':
          return [{ type: 'VerificationCodeLost', data: base }];
        default:
          return exhaustive(command.data.outcome, 'check outcome');
      }
    }
    case 'RecordVerificationCancelOutcome': {
      const r = findRequest(context, command.data.requestId);
      if (!r?.attemptId || (r.action !== 'cancel' && r.action !== 'resend')) return [];
      if (command.data.outcome === 'cancelled') {
        if (r.action !== 'cancel') return [];
        return [
          {
            type: 'VerificationCancelled',
            data: { attemptId: r.attemptId, requestId: r.requestId, at: now },
          },
        ];
      }
      return [
        {
          type: 'VerificationCancelRefused',
          data: {
            attemptId: r.attemptId,
            requestId: r.requestId,
            action: r.action,
            reason: command.data.outcome,
            at: now,
          },
        },
      ];
    }
    case 'RecordVerificationMovedToVoice': {
      const r = findRequest(context, command.data.requestId);
      if (r?.action !== 'next' || !r.attemptId) return [];
      return [
        {
          type: 'VerificationMovedToVoice',
          data: { attemptId: r.attemptId, requestId: r.requestId, at: now },
        },
      ];
    }
    case 'RecordVerificationTestSent': {
      const r = findRequest(context, command.data.requestId);
      if (r?.action !== 'test') return [];
      const { messageId, callId } = command.data;
      return [{ type: 'VerificationTestSent', data: { requestId: r.requestId, messageId, callId, at: now } }];
    }
    case 'RecordVerificationOldNumberNotified': {
      const r = findRequest(context, command.data.requestId);
      if (r?.action !== 'notify_old') return [];
      return [
        {
          type: 'VerificationOldNumberNotified',
          data: { requestId: r.requestId, messageId: command.data.messageId, at: now },
        },
      ];
    }
    case 'RemoveVerifiedPhone': {
      if (!context.verified) {
        throw refuse(
          'not_verified',
          "You don't have a verified number to remove. `/verify status` shows where your phone stands.",
        );
      }
      // Forgotten here at once (status, App Home); the paging side stops pages, unlinks the number
      // and deletes the person's data key (src/verification/notices.reactor.ts, removals).
      return [{ type: 'VerificationPhoneForgotten', data: { reason: REMOVED_BY_THEM, at: now } }];
    }
    case 'ForgetVerifiedPhone': {
      const about = context.requests.some((r) => r.action === 'test' || r.action === 'notify_old');
      if (!context.verified && !about) return [];
      return [{ type: 'VerificationPhoneForgotten', data: { reason: command.data.reason, at: now } }];
    }
    case 'RecordVerificationUpstreamCallFailed': {
      const { slackUserId: _, ...report } = command.data;
      const r = findRequest(context, report.requestId);
      const fact = decideFailure(r, report, now);
      if (!fact) return [];
      const events: VerificationEvent[] = [{ type: 'VerificationUpstreamCallFailed', data: fact }];
      if (fact.final && r?.action === 'start' && r.attemptId && phase === 'requested') {
        events.push({
          type: 'VerificationFailed',
          data: {
            attemptId: r.attemptId,
            reason: 'not_started',
            message: fact.message.slice(0, 500),
            at: now,
          },
        });
      }
      return events;
    }
    case 'RetryVerificationUpstreamCall': {
      const { slackUserId: _, ...retry } = command.data;
      const fact = decideRetry(findRequest(context, retry.requestId), retry, now);
      return fact ? [{ type: 'VerificationUpstreamCallRetried', data: fact }] : [];
    }
    case 'RecordVerificationWebhook': {
      const attempt = context.attempt;
      const d = command.data;
      // Redeliveries, events of an earlier attempt, and events after the end change nothing.
      if (!attempt || attempt.clientRef !== d.clientRef) return [];
      if (phase !== 'requested' && phase !== 'codeSent') return [];
      if (d.kind === 'summary') {
        if (d.status === 'completed' && phase === 'codeSent') return verifiedEvents(context, null, now);
        if (d.status === 'failed') {
          return [
            {
              type: 'VerificationFailed',
              data: {
                attemptId: attempt.attemptId,
                reason: 'vendor_failed',
                message: 'The communications service could not deliver the code.',
                at: now,
              },
            },
          ];
        }
        if (d.status === 'expired')
          return [{ type: 'VerificationExpired', data: { attemptId: attempt.attemptId, at: now } }];
        return [];
      }
      if (d.channel === 'voice' && phase === 'codeSent' && !attempt.voice) {
        return [
          {
            type: 'VerificationMovedToVoice',
            data: { attemptId: attempt.attemptId, requestId: null, at: now },
          },
        ];
      }
      return [];
    }
    default:
      return exhaustive(command, 'verification command');
  }
};

/** The number is verified; after a change of number, the old one is told by SMS. */
const verifiedEvents = (
  context: VerificationContext,
  requestId: string | null,
  now: string,
): VerificationEvent[] => {
  const attempt = context.attempt;
  if (!attempt) return [];
  const events: VerificationEvent[] = [
    {
      type: 'VerificationVerified',
      data: {
        attemptId: attempt.attemptId,
        requestId,
        number: attempt.number,
        masked: attempt.masked,
        numberKey: attempt.numberKey,
        previous: attempt.previous,
        at: now,
      },
    },
  ];
  if (attempt.previous) {
    events.push({
      type: 'VerificationOldNumberNoticeRequested',
      data: {
        requestId: `${attempt.attemptId}:old`,
        number: attempt.previous.number,
        masked: attempt.previous.masked,
        newMasked: attempt.masked,
        at: now,
      },
    });
  }
  return events;
};

/**
 * Phone verification: `/verify <number>` → a code by SMS (then voice) → the person types it →
 * verified, failed (3 wrong codes, the vendor's 410), expired or cancelled. Limits (5 starts per
 * person and an organisation-wide cap per 10 minutes, 3 wrong codes per attempt) and the vendor's
 * cancel window are decided here from what the command carries; refusals say why in words the
 * person reads (`details.reason` for code).
 *
 * @example
 * verificationDecider.decide(start, state); // [VerificationRequested]
 */
export const verificationDecider = machineDecider<
  typeof verificationMachine,
  VerificationCommand,
  VerificationEvent
>({
  machine: verificationMachine,
  toEvents,
  events: { schemas: verificationEventDataSchemas },
  commands: verificationCommandDataSchemas,
});

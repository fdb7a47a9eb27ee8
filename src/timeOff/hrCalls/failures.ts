import { slackDateUtc } from '../../../machines/shared/slackDate.ts';
import type { TimeOffAction } from '../../../machines/timeOff/events.ts';
import { ChatOpsError, isChatOpsError } from '../../core/errors.ts';
import type { FailedAttempt } from '../../processors/upstreamCall.ts';
import { hibobAuthWaitMs } from '../../upstream/hibob.ts';

/**
 * What a failed HR call met, and how its failure reads: the kinds of HR's answers that decide an
 * attempt's retry (see hrCalls.reactor.ts) and the words each failure is recorded with (never HR's
 * own text, which can echo credentials).
 */

/** The code of a failure while HR does not show a write yet. */
export const HR_NOT_VISIBLE = 'SB_HR_NOT_VISIBLE';
export const PERMISSION_MISSING_LOG_CODE = 'HIBOB_PERMISSION_MISSING';

/** Which of HR's answers an attempt's error was, for its retry and its words. */
export type FailureKind = 'not_visible' | 'maybe_sent' | 'auth_circuit' | 'permission' | 'other';

/**
 * Thrown inside an attempt to end it as a failure of a known kind. `retryAfterMs`: the earliest
 * the next attempt may go (HR's 401 circuit reopening, HR's lag to wait out); `sentAttempt`: the
 * attempt at which HR took the submission this attempt looked for.
 */
export class AttemptFailure extends ChatOpsError {
  readonly kind: Exclude<FailureKind, 'permission' | 'other'>;
  readonly retryAfterMs: number | undefined;
  readonly sentAttempt: number | undefined;
  constructor(
    kind: Exclude<FailureKind, 'permission' | 'other'>,
    message: string,
    options: Readonly<{ retryAfterMs?: number; sentAttempt?: number; cause?: unknown }> = {},
  ) {
    super('SB_UPSTREAM_UNAVAILABLE', message, { cause: options.cause, details: { reason: kind } });
    this.kind = kind;
    this.retryAfterMs = options.retryAfterMs;
    this.sentAttempt = options.sentAttempt;
  }
}

/** What an attempt's error was, from the error itself (its retry and its words are read from it). */
export const failureKindOf = (e: unknown): FailureKind =>
  e instanceof AttemptFailure
    ? e.kind
    : isChatOpsError(e) && e.details.reason === 'permission_missing'
      ? 'permission'
      : 'other';

/** Failures after which a POST may have landed in HR all the same (a timeout, a lost connection, a 5xx). */
export const mayHaveLanded = (code: string): boolean =>
  code === 'SB_TIMEOUT' ||
  code === 'SB_UPSTREAM_UNAVAILABLE' ||
  code === 'UNCODED' ||
  code.startsWith('UND_ERR_') ||
  /^E[A-Z]+$/.test(code);

/** What HR's refusal of a call means for it, read from the client's coded error. */
export type HrRefusal =
  /** HR refused the credentials: every HR call waits `waitMs` for the client's circuit to reopen. */
  | Readonly<{ kind: 'auth_circuit'; waitMs: number }>
  /** HR refused the service user a permission (a 403): an operator must grant it. */
  | Readonly<{ kind: 'permission'; permission: string }>
  | Readonly<{ kind: 'other' }>;

export const hrRefusalOf = (e: unknown, now: Date): HrRefusal => {
  const waitMs = hibobAuthWaitMs(e, now);
  if (waitMs !== null) return { kind: 'auth_circuit', waitMs };
  if (isChatOpsError(e) && e.details.reason === 'permission_missing') {
    const p = e.details.permission;
    return { kind: 'permission', permission: typeof p === 'string' ? p : 'unknown' };
  }
  return { kind: 'other' };
};

const VERB: Readonly<Record<TimeOffAction, string>> = {
  submit: 'record time off',
  read_back: 'read time off',
  cancel: 'cancel time off',
};

/** What happened, in words for the requester (never HR's own text). */
const wordsFor = (code: string): string => {
  switch (code) {
    case 'SB_UPSTREAM_RATE_LIMITED':
      return 'HR asked Switchboard to slow down';
    case 'SB_TIMEOUT':
      return 'HR took too long to answer';
    case 'SB_NOT_FOUND':
      return 'HR does not know this request';
    case 'SB_UPSTREAM_REJECTED':
    case 'SB_VALIDATION':
      return 'HR refused the call';
    default:
      return 'HR did not answer';
  }
};

/** A time in the words people read in Slack: a Slack date token in each reader's zone (issue 19). */
const timeOfDay = (iso: string): string => slackDateUtc(iso);

/** The code and the words a failed attempt of `action` is recorded with (`now`: when it failed). */
export const failureText = (
  kind: FailureKind,
  action: TimeOffAction,
  failure: Pick<FailedAttempt, 'code' | 'final' | 'nextAttemptAt'>,
  now: Date,
): [code: string, message: string] => {
  const verb = VERB[action];
  switch (kind) {
    case 'not_visible':
      if (failure.final) {
        return [
          HR_NOT_VISIBLE,
          action === 'submit'
            ? 'HR took the request but has not shown it yet; Switchboard records it as soon as HR does'
            : 'HR has not shown the request yet; Switchboard confirms it as soon as HR does',
        ];
      }
      return [
        HR_NOT_VISIBLE,
        action === 'submit'
          ? 'HR took the request but has not shown it yet'
          : 'HR has not shown the request yet',
      ];
    case 'maybe_sent':
      return [HR_NOT_VISIBLE, 'Switchboard is checking whether HR already has the request'];
    case 'auth_circuit':
      if (failure.final) {
        return [
          'SB_UPSTREAM_AUTH',
          `HR kept refusing Switchboard's credentials, so it could not ${verb}; an admin has been told.`,
        ];
      }
      return [
        'SB_UPSTREAM_AUTH',
        `HR refused Switchboard's credentials; HR calls wait until ${timeOfDay(failure.nextAttemptAt ?? now.toISOString())}, and an admin has been told`,
      ];
    case 'permission':
      return ['SB_UPSTREAM_AUTH', `HR refused Switchboard's permission to ${verb}; an admin has been told.`];
    default:
      return [failure.code, wordsFor(failure.code)];
  }
};

import { and, assign, setup } from 'xstate';
import { exhaustive } from '../shared/messages.ts';
import {
  afterFailedAttempt,
  afterRetry,
  FIRST_ATTEMPT,
  type UpstreamRequest,
  failureApplies as upstreamFailureApplies,
  retryApplies as upstreamRetryApplies,
  withFailedAttempt,
  withoutRequest,
  withRetry,
} from '../shared/upstreamRequest.ts';
import {
  type ApproverSkip,
  type CardRef,
  type ConflictCheckAction,
  type ConflictShift,
  type CoverCandidate,
  type CoverSlotOutcome,
  isHrChannelApprover,
  type TimeOffAction,
  type TimeOffAsk,
  type TimeOffEvent,
  type TimeOffPerson,
} from './events.ts';

/**
 * One time-off request (stream `timeoff-<request id>`):
 *
 *   none ─Requested─► requested ─ApprovalAsked─► awaitingApproval
 *                        │  (reminders stay)          │
 *                        ├──────Approved──────────────┴─► approved ─Submitted─► submitted ─Confirmed─► confirmed
 *                        │                       (SubmissionSent stays)
 *                        ├──────Denied────────────────────► denied        │
 *                        ├──────Expired───────────────────► expired       └─SubmissionFailed─► submissionFailed
 *                        └──────Cancelled (requester)─────► cancelled          (Resubmitted ─► approved, or
 *                                                                                requested when what was approved changed)
 *   approved / submitted / confirmed ─CancelRequested─► cancelling ─Cancelled─► cancelled
 *                                                         └─CancelFailed─► back to submitted / confirmed
 *   submitted / confirmed ─Cancelled (in HR, by someone else)─► cancelled
 *   requested / awaitingApproval ─HandedOn (approver away or left)─► requested (a new card to the new approver)
 *   requested / awaitingApproval ─Cancelled (the requester left)─► cancelled
 *
 * HR calls (submit, read_back, cancel) are pending requests following machines/shared/
 * upstreamRequest.ts. `TimeOffSubmissionSent` marks a submission HR took (a 200 with no id): it is
 * never posted again, only looked for; even after its last attempt (`submissionSent` stays), a
 * webhook or the changes poll that finds it in HR still records `TimeOffSubmitted`. Likewise the
 * last read-back (`readBackRequestId`) can still be answered after its attempts ran out. While cancelling before HR's id is known, the submission's answer is still
 * awaited: its id is then cancelled in HR (a submission cannot be recalled once sent).
 */

export type TimeOffHrRequest = UpstreamRequest<TimeOffAction> &
  Readonly<{
    /** `read_back`, `cancel`: HR's request id. */
    hrRequestId: string | null;
    /** The code of the last failed attempt (absent before any): whether a submit may have landed. */
    lastFailureCode?: string;
  }>;

export type TimeOffRequestDetails = TimeOffAsk &
  Readonly<{
    timeOffId: string;
    requester: TimeOffPerson;
    approver: TimeOffPerson;
    workingDays: number;
    remindAt: readonly string[];
    expiresAt: string;
    requestedAt: string;
    /** Issue 12: who was passed over when it was asked, and whether it waits for an approver who is away. */
    skipped?: readonly ApproverSkip[];
    approverAwayUntil?: string | null;
    /** The approvers it was handed on from, oldest first: their old cards' clicks are refused. */
    handedOnFrom?: readonly TimeOffPerson[];
    /** The approver (HR id) who left with nobody to take over, once the requester was told. */
    approverGone?: string;
    /** The requester's time zone its days are in (issue 19); absent on older requests: UTC. */
    zone?: string;
    /** Issue 20: past days of a policy that may be recorded after the fact. */
    afterTheFact?: boolean;
  }>;

export type TimeOffContext = Readonly<{
  request: TimeOffRequestDetails | null;
  /** The approver's DM whose buttons decide the request; null until posted. */
  card: CardRef | null;
  /** Cards of earlier versions of the request (before a resubmission changed the dates): their clicks are refused. */
  staleCards: readonly CardRef[];
  remindersSent: number;
  decision: Readonly<{ by: TimeOffPerson; at: string; reason: string | null }> | null;
  /** The current submission's call id; null before approval. */
  submitRequestId: string | null;
  hrRequestId: string | null;
  confirmedAt: string | null;
  /** Why HR refused the last submission, or the last cancel, in words. */
  failure: string | null;
  /** When the current submission was asked for (approval or resubmission): HR is searched from then before any POST. */
  submitAskedAt: string | null;
  /** The current submission once HR took its POST: never posted again (`attempt`: the attempt that posted it). */
  submissionSent: Readonly<{ submitRequestId: string; since: string; attempt: number }> | null;
  /** The last read-back asked for (kept after its attempts ran out, so a later sighting can confirm it). */
  readBackRequestId: string | null;
  /** A cancel asked while the submission's answer is awaited: its call id. */
  cancelRequestId: string | null;
  endedAt: string | null;
  requests: readonly TimeOffHrRequest[];
  // ------------------------------------------------ on-call conflicts and cover (issue 12)
  /** How many conflict checks were asked (each version of the request asks one). */
  conflictChecks: number;
  /** The on-call lookup in progress or waiting for its retry; null once answered or given up. */
  conflictCheck: UpstreamRequest<ConflictCheckAction> | null;
  /** The last failed attempt of the lookup (`final`: given up); null once answered. */
  conflictCheckFailure: Readonly<{ code: string; message: string; final: boolean }> | null;
  conflicts: TimeOffConflicts | null;
  /** "Approve and cover with …": who covers, and the cover's slots as last recorded (null before any). */
  cover: TimeOffCover | null;
}>;

export type TimeOffConflicts = Readonly<{
  checkId: string;
  shifts: readonly ConflictShift[];
  knownUntil: string;
  candidates: readonly CoverCandidate[];
  unmapped: boolean;
  at: string;
}>;

export type TimeOffCover = Readonly<{
  coverId: string;
  slackUserId: string;
  slots: readonly CoverSlotOutcome[] | null;
  withdrawn: boolean;
  /** The cover said they can't (issue 20): the shifts are uncovered again. */
  declinedBy?: string | null;
}>;

/** The conflict check a version of the request asks (n: 1 for the request, then one per re-approval). */
export const conflictCheckOf = (timeOffId: string, n: number): UpstreamRequest<ConflictCheckAction> => ({
  requestId: `${timeOffId}:conflicts:${n}`,
  action: 'check_conflicts',
  ...FIRST_ATTEMPT,
});

export type TimeOffPhase =
  | 'none'
  | 'requested'
  | 'awaitingApproval'
  | 'approved'
  | 'submitted'
  | 'confirmed'
  | 'submissionFailed'
  | 'cancelling'
  | 'denied'
  | 'expired'
  | 'cancelled';

const call = (requestId: string, action: TimeOffAction, hrRequestId: string | null): TimeOffHrRequest => ({
  requestId,
  action,
  ...FIRST_ATTEMPT,
  hrRequestId,
});

export const findHrRequest = (context: TimeOffContext, requestId: string | null): TimeOffHrRequest | null =>
  requestId === null ? null : (context.requests.find((r) => r.requestId === requestId) ?? null);

export const pendingOf = (context: TimeOffContext, action: TimeOffAction): TimeOffHrRequest | null =>
  context.requests.find((r) => r.action === action) ?? null;

/** The context after an event (the machine's one `assign`). */
export const applyTimeOffEvent = (context: TimeOffContext, event: TimeOffEvent): TimeOffContext => {
  switch (event.type) {
    case 'TimeOffRequested': {
      const { at, ...d } = event.data;
      const n = (context.conflictChecks ?? 0) + 1;
      return {
        ...context,
        request: { ...d, requestedAt: at },
        conflictChecks: n,
        conflictCheck: conflictCheckOf(d.timeOffId, n),
        conflictCheckFailure: null,
        conflicts: null,
      };
    }
    case 'TimeOffApprovalAsked':
      return { ...context, card: event.data.card };
    case 'TimeOffApproverReminded':
      return { ...context, remindersSent: event.data.reminder };
    case 'TimeOffApproved':
      return {
        ...context,
        request: decidedBy(context.request, event.data.by),
        cover: event.data.cover
          ? {
              coverId: event.data.cover.coverId,
              slackUserId: event.data.cover.slackUserId,
              slots: null,
              withdrawn: false,
            }
          : (context.cover ?? null),
        decision: { by: event.data.by, at: event.data.at, reason: null },
        submitRequestId: event.data.submitRequestId,
        submitAskedAt: event.data.at,
        submissionSent: null,
        failure: null,
        requests: [...context.requests, call(event.data.submitRequestId, 'submit', null)],
      };
    case 'TimeOffSubmissionSent': {
      const attempt = findHrRequest(context, event.data.submitRequestId)?.attempt ?? 1;
      return {
        ...context,
        submissionSent: { submitRequestId: event.data.submitRequestId, since: event.data.since, attempt },
      };
    }
    case 'TimeOffDenied':
      return {
        ...context,
        request: decidedBy(context.request, event.data.by),
        decision: { by: event.data.by, at: event.data.at, reason: event.data.reason },
        endedAt: event.data.at,
      };
    case 'TimeOffSubmitted': {
      const d = event.data;
      const rest = withoutRequest(context.requests, d.submitRequestId);
      // Cancelled while the submission was on its way: cancel HR's new request instead of reading it back.
      const next =
        context.cancelRequestId !== null
          ? call(context.cancelRequestId, 'cancel', d.hrRequestId)
          : call(d.readBackRequestId, 'read_back', d.hrRequestId);
      return {
        ...context,
        hrRequestId: d.hrRequestId,
        readBackRequestId: context.cancelRequestId !== null ? null : d.readBackRequestId,
        requests: [...rest, next],
      };
    }
    case 'TimeOffSubmissionFailed':
      return {
        ...context,
        failure: event.data.reason,
        requests: withoutRequest(context.requests, event.data.submitRequestId),
      };
    case 'TimeOffResubmitted': {
      const { at, reapproval, submitRequestId, timeOffId: _id, afterTheFact, ...ask } = event.data;
      const request = context.request
        ? {
            ...context.request,
            ...ask,
            ...(afterTheFact === undefined ? {} : { afterTheFact }),
          }
        : null;
      const n = (context.conflictChecks ?? 0) + 1;
      return reapproval
        ? {
            ...context,
            request,
            conflictChecks: n,
            conflictCheck: conflictCheckOf(event.data.timeOffId, n),
            conflictCheckFailure: null,
            conflicts: null,
            // A cover of the earlier dates is withdrawn (src/timeOff/cover.reactor.ts).
            cover: null,
            card: null,
            staleCards: context.card ? [...context.staleCards, context.card] : context.staleCards,
            remindersSent: 0,
            decision: null,
            submitRequestId: null,
            submitAskedAt: null,
            submissionSent: null,
            failure: null,
          }
        : {
            ...context,
            request,
            submitRequestId,
            submitAskedAt: submitRequestId === null ? null : at,
            submissionSent: null,
            failure: null,
            requests:
              submitRequestId === null
                ? context.requests
                : [...context.requests, call(submitRequestId, 'submit', null)],
          };
    }
    case 'TimeOffConfirmed':
      return {
        ...context,
        confirmedAt: event.data.at,
        requests: withoutRequest(context.requests, event.data.readBackRequestId),
      };
    case 'TimeOffCancelRequested': {
      const d = event.data;
      return {
        ...context,
        cancelRequestId: d.cancelRequestId,
        failure: null,
        // Once HR's id is known the read-back has no more purpose: the cancel replaces it.
        requests:
          d.hrRequestId === null
            ? context.requests
            : [
                ...context.requests.filter((r) => r.action !== 'read_back'),
                call(d.cancelRequestId, 'cancel', d.hrRequestId),
              ],
      };
    }
    case 'TimeOffCancelFailed':
      return {
        ...context,
        cancelRequestId: null,
        failure: event.data.reason,
        requests: withoutRequest(context.requests, event.data.cancelRequestId),
      };
    case 'TimeOffCancelled':
      return { ...context, endedAt: event.data.at, requests: [] };
    case 'TimeOffExpired':
      return { ...context, endedAt: event.data.at, requests: [] };
    case 'TimeOffUpstreamCallFailed':
      return {
        ...context,
        requests: afterFailedAttempt(context.requests, event.data).map((r) =>
          r.requestId === event.data.requestId ? { ...r, lastFailureCode: event.data.code } : r,
        ),
      };
    case 'TimeOffUpstreamCallRetried':
      return { ...context, requests: afterRetry(context.requests, event.data) };
    case 'TimeOffHandedOn':
      // The old card is dead: a click on it is refused (not the approver, or not this card).
      return {
        ...context,
        request: context.request
          ? {
              ...context.request,
              approver: event.data.to,
              approverAwayUntil: null,
              handedOnFrom: [...(context.request.handedOnFrom ?? []), event.data.from],
            }
          : null,
        card: null,
        staleCards: context.card ? [...context.staleCards, context.card] : context.staleCards,
      };
    case 'TimeOffApproverGone':
      return {
        ...context,
        request: context.request ? { ...context.request, approverGone: event.data.approver.hrId } : null,
      };
    // ------------------------------------------------ on-call conflicts and cover (issue 12)
    case 'TimeOffConflictsChecked': {
      const { timeOffId: _id, ...conflicts } = event.data;
      return { ...context, conflicts, conflictCheck: null, conflictCheckFailure: null };
    }
    case 'TimeOffConflictsCheckFailed': {
      const d = event.data;
      const check = context.conflictCheck;
      return {
        ...context,
        conflictCheck: d.final || !check ? null : withFailedAttempt(check, d),
        conflictCheckFailure: { code: d.code, message: d.message, final: d.final },
      };
    }
    case 'TimeOffConflictsCheckRetried':
      return {
        ...context,
        conflictCheck: context.conflictCheck ? withRetry(context.conflictCheck, event.data) : null,
      };
    case 'TimeOffCoverRecorded':
      return context.cover
        ? {
            ...context,
            cover: {
              ...context.cover,
              slots: event.data.slots,
              withdrawn: event.data.withdrawn,
              declinedBy: event.data.declinedBy ?? null,
            },
          }
        : context;
    default:
      return exhaustive(event, 'time-off event');
  }
};

/**
 * A request decided in the HR channel: the member who decided becomes its approver (HR is given
 * their id with the submission, and the card names them).
 */
const decidedBy = (request: TimeOffRequestDetails | null, by: TimeOffPerson): TimeOffRequestDetails | null =>
  request && isHrChannelApprover(request.approver) ? { ...request, approver: by } : request;

const pending = (context: TimeOffContext, requestId: string | null, action: TimeOffAction): boolean =>
  findHrRequest(context, requestId)?.action === action;

export const timeOffMachine = setup({
  types: { context: {} as TimeOffContext, events: {} as TimeOffEvent },
  guards: {
    nextReminder: ({ context, event }) =>
      event.type === 'TimeOffApproverReminded' && event.data.reminder === context.remindersSent + 1,
    answersSubmit: ({ context, event }) =>
      (event.type === 'TimeOffSubmitted' || event.type === 'TimeOffSubmissionFailed') &&
      event.data.submitRequestId === context.submitRequestId &&
      (event.type === 'TimeOffSubmissionFailed' ||
        (context.hrRequestId === null &&
          (pending(context, event.data.submitRequestId, 'submit') ||
            context.submissionSent?.submitRequestId === event.data.submitRequestId))),
    sentApplies: ({ context, event }) =>
      event.type === 'TimeOffSubmissionSent' &&
      pending(context, event.data.submitRequestId, 'submit') &&
      context.submissionSent?.submitRequestId !== event.data.submitRequestId,
    answersReadBack: ({ context, event }) =>
      event.type === 'TimeOffConfirmed' &&
      (pending(context, event.data.readBackRequestId, 'read_back') ||
        (event.data.readBackRequestId === context.readBackRequestId && context.confirmedAt === null)),
    answersCancel: ({ context, event }) =>
      (event.type === 'TimeOffCancelled' || event.type === 'TimeOffCancelFailed') &&
      event.data.cancelRequestId !== null &&
      event.data.cancelRequestId === context.cancelRequestId,
    byRequester: ({ event }) =>
      event.type === 'TimeOffCancelled' && (event.data.by === 'requester' || event.data.by === 'left'),
    byHr: ({ event }) => event.type === 'TimeOffCancelled' && event.data.by === 'hr',
    /** Cancelled with nothing in HR: the submission was refused or failed, and no HR id is known. */
    nothingInHr: ({ context, event }) =>
      event.type === 'TimeOffCancelled' &&
      event.data.cancelRequestId === null &&
      context.hrRequestId === null,
    wasConfirmed: ({ context }) => context.confirmedAt !== null,
    failureApplies: ({ context, event }) =>
      event.type === 'TimeOffUpstreamCallFailed' &&
      upstreamFailureApplies(findHrRequest(context, event.data.requestId), event.data),
    retryApplies: ({ context, event }) =>
      event.type === 'TimeOffUpstreamCallRetried' &&
      upstreamRetryApplies(findHrRequest(context, event.data.requestId), event.data),
    reapproval: ({ event }) => event.type === 'TimeOffResubmitted' && event.data.reapproval,
    // ------------------------------------------------ on-call conflicts and cover (issue 12)
    answersConflictCheck: ({ context, event }) =>
      event.type === 'TimeOffConflictsChecked' && context.conflictCheck?.requestId === event.data.checkId,
    conflictFailureApplies: ({ context, event }) =>
      event.type === 'TimeOffConflictsCheckFailed' &&
      upstreamFailureApplies(context.conflictCheck, event.data),
    conflictRetryApplies: ({ context, event }) =>
      event.type === 'TimeOffConflictsCheckRetried' &&
      upstreamRetryApplies(context.conflictCheck, event.data),
    coverApplies: ({ context, event }) =>
      event.type === 'TimeOffCoverRecorded' && context.cover?.coverId === event.data.coverId,
  },
  actions: {
    apply: assign(({ context, event }) => applyTimeOffEvent(context, event)),
  },
}).createMachine({
  id: 'timeOff',
  initial: 'none',
  context: {
    request: null,
    card: null,
    staleCards: [],
    remindersSent: 0,
    decision: null,
    submitRequestId: null,
    submitAskedAt: null,
    submissionSent: null,
    readBackRequestId: null,
    hrRequestId: null,
    confirmedAt: null,
    failure: null,
    cancelRequestId: null,
    endedAt: null,
    requests: [],
    conflictChecks: 0,
    conflictCheck: null,
    conflictCheckFailure: null,
    conflicts: null,
    cover: null,
  },
  on: {
    TimeOffUpstreamCallFailed: { guard: 'failureApplies', actions: 'apply' },
    TimeOffUpstreamCallRetried: { guard: 'retryApplies', actions: 'apply' },
    // On-call conflicts and cover (issue 12), in every state that is not final.
    TimeOffConflictsChecked: { guard: 'answersConflictCheck', actions: 'apply' },
    TimeOffConflictsCheckFailed: { guard: 'conflictFailureApplies', actions: 'apply' },
    TimeOffConflictsCheckRetried: { guard: 'conflictRetryApplies', actions: 'apply' },
    TimeOffCoverRecorded: { guard: 'coverApplies', actions: 'apply' },
  },
  states: {
    none: { on: { TimeOffRequested: { target: 'requested', actions: 'apply' } } },
    requested: {
      on: {
        TimeOffApprovalAsked: { target: 'awaitingApproval', actions: 'apply' },
        TimeOffApproverReminded: { guard: 'nextReminder', actions: 'apply' },
        TimeOffApproved: { target: 'approved', actions: 'apply' },
        TimeOffDenied: { target: 'denied', actions: 'apply' },
        TimeOffExpired: { target: 'expired', actions: 'apply' },
        TimeOffCancelled: { target: 'cancelled', guard: 'byRequester', actions: 'apply' },
        TimeOffHandedOn: { actions: 'apply' },
        TimeOffApproverGone: { actions: 'apply' },
      },
    },
    awaitingApproval: {
      on: {
        TimeOffApproverReminded: { guard: 'nextReminder', actions: 'apply' },
        TimeOffApproved: { target: 'approved', actions: 'apply' },
        TimeOffDenied: { target: 'denied', actions: 'apply' },
        TimeOffExpired: { target: 'expired', actions: 'apply' },
        TimeOffCancelled: { target: 'cancelled', guard: 'byRequester', actions: 'apply' },
        TimeOffHandedOn: { target: 'requested', actions: 'apply' },
        TimeOffApproverGone: { actions: 'apply' },
      },
    },
    approved: {
      on: {
        TimeOffSubmissionSent: { guard: 'sentApplies', actions: 'apply' },
        TimeOffSubmitted: { target: 'submitted', guard: 'answersSubmit', actions: 'apply' },
        TimeOffSubmissionFailed: { target: 'submissionFailed', guard: 'answersSubmit', actions: 'apply' },
        TimeOffCancelRequested: { target: 'cancelling', actions: 'apply' },
      },
    },
    submitted: {
      on: {
        TimeOffConfirmed: { target: 'confirmed', guard: 'answersReadBack', actions: 'apply' },
        TimeOffCancelRequested: { target: 'cancelling', actions: 'apply' },
        TimeOffCancelled: { target: 'cancelled', guard: 'byHr', actions: 'apply' },
      },
    },
    confirmed: {
      on: {
        TimeOffCancelRequested: { target: 'cancelling', actions: 'apply' },
        TimeOffCancelled: { target: 'cancelled', guard: 'byHr', actions: 'apply' },
      },
    },
    submissionFailed: {
      on: {
        TimeOffResubmitted: [
          { target: 'requested', guard: 'reapproval', actions: 'apply' },
          { target: 'approved', actions: 'apply' },
        ],
        TimeOffCancelled: { target: 'cancelled', guard: 'byRequester', actions: 'apply' },
      },
    },
    cancelling: {
      on: {
        // The submission's answer arrives after the cancel was asked: its HR id is cancelled next.
        TimeOffSubmissionSent: { guard: 'sentApplies', actions: 'apply' },
        TimeOffSubmitted: { guard: 'answersSubmit', actions: 'apply' },
        TimeOffCancelled: [
          { target: 'cancelled', guard: 'answersCancel', actions: 'apply' },
          { target: 'cancelled', guard: 'nothingInHr', actions: 'apply' },
        ],
        TimeOffCancelFailed: [
          { target: 'confirmed', guard: and(['answersCancel', 'wasConfirmed']), actions: 'apply' },
          { target: 'submitted', guard: 'answersCancel', actions: 'apply' },
        ],
      },
    },
    denied: { type: 'final' },
    expired: { type: 'final' },
    cancelled: { type: 'final' },
  },
});

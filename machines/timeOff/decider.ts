import type { SnapshotFrom } from 'xstate';
import { DecisionRejected, machineDecider } from '../shared/machineDecider.ts';
import { exhaustive } from '../shared/messages.ts';
import { decideFailure, decideRetry } from '../shared/upstreamRequest.ts';
import {
  type ApprovalRules,
  DEFAULT_APPROVAL_RULES,
  type OwnLeave,
  type TimeOffCommand,
  type TimeOffCommandOf,
  timeOffCommandDataSchemas,
} from './commands.ts';
import {
  type CardRef,
  isHrChannelApprover,
  type TimeOffAsk,
  type TimeOffEvent,
  type TimeOffPerson,
  timeOffEventDataSchemas,
} from './events.ts';
import {
  findHrRequest,
  pendingOf,
  type TimeOffContext,
  type TimeOffPhase,
  timeOffMachine,
} from './machine.ts';
import {
  addWorkingDays,
  holidaySet,
  isIsoDate,
  MAX_RANGE_DAYS,
  workingDaysRequested,
} from './workingDays.ts';

export type TimeOffState = SnapshotFrom<typeof timeOffMachine>;

export const timeOffPhaseOf = (state: TimeOffState): TimeOffPhase => state.value as TimeOffPhase;

/**
 * `DecisionRejected.details.reason` of a time-off refusal. The edge records every refusal of a
 * click (who, which request, this reason), so a forged or misdirected click leaves a trace.
 */
export type TimeOffRejectionReason =
  /** No request behind the id (a forged or mistyped id). */
  | 'unknown_request'
  /** Someone other than the requester tried to request, cancel or resubmit it. */
  | 'not_requester'
  /** The requester clicked Approve / Deny on their own request. */
  | 'own_request'
  /** Someone other than the designated approver clicked Approve / Deny. */
  | 'not_approver'
  /** The click came from a message that is not this request's card. */
  | 'other_card'
  /** The approver named is the requester. */
  | 'self_approval'
  | 'invalid_dates'
  | 'invalid_portion'
  | 'no_working_days'
  | 'already_requested'
  | 'already_decided'
  | 'expired'
  | 'cancelled'
  | 'not_due'
  | 'nothing_to_resubmit'
  | 'nothing_to_cancel'
  /** "Approve and cover with …" on a request with no on-call shift to cover (issue 12). */
  | 'nothing_to_cover'
  /** The requester named as their own cover. */
  | 'self_cover'
  /** The cover picked is away (approved leave, or left) during the shifts to cover. */
  | 'cover_away'
  /** Issue 20: the ask overlaps the requester's own approved or pending leave. */
  | 'overlaps_own_leave'
  /** Issue 20: the ask starts on a day already past, and its policy may not be recorded after the fact. */
  | 'past_dates';

const refuse = (reason: TimeOffRejectionReason, message: string, details: Record<string, unknown> = {}) =>
  new DecisionRejected(message, { reason, ...details });

const PHASE_TEXT: Readonly<Record<TimeOffPhase, string>> = {
  none: 'There is no such time-off request.',
  requested: 'This request is waiting for its approver.',
  awaitingApproval: 'This request is waiting for its approver.',
  approved: 'This request is already approved and being recorded in HR.',
  submitted: 'This request is already approved and recorded in HR.',
  confirmed: 'This request is already approved and recorded in HR.',
  submissionFailed: 'HR refused this request; the requester can fix it and send it again.',
  cancelling: 'This request is being cancelled.',
  denied: 'This request was already denied.',
  expired: 'This request expired before anyone decided it.',
  cancelled: 'This request was cancelled.',
};

/** The working days an ask takes; refuses an ask HR would refuse for its shape. */
export const checkAsk = (ask: TimeOffAsk, holidays: readonly string[]): number => {
  if (!isIsoDate(ask.startDate) || !isIsoDate(ask.endDate)) {
    throw refuse('invalid_dates', 'The dates must be real calendar dates (YYYY-MM-DD).');
  }
  if (ask.endDate < ask.startDate) {
    throw refuse(
      'invalid_dates',
      `The end date (${ask.endDate}) is before the start date (${ask.startDate}).`,
    );
  }
  const span = (Date.parse(ask.endDate) - Date.parse(ask.startDate)) / 86_400_000;
  if (span > MAX_RANGE_DAYS) {
    throw refuse('invalid_dates', `A request can span at most ${MAX_RANGE_DAYS} days.`);
  }
  if (ask.startDate === ask.endDate) {
    if (ask.startPortion !== ask.endPortion) {
      throw refuse('invalid_portion', 'A one-day request takes the whole day, the morning or the afternoon.');
    }
  } else {
    if (ask.startPortion === 'morning') {
      throw refuse('invalid_portion', 'A request over several days starts with a whole day or an afternoon.');
    }
    if (ask.endPortion === 'afternoon') {
      throw refuse('invalid_portion', 'A request over several days ends with a whole day or a morning.');
    }
  }
  const days = workingDaysRequested({
    start: ask.startDate,
    end: ask.endDate,
    startPortion: ask.startPortion,
    endPortion: ask.endPortion,
    holidays: holidaySet(holidays),
  });
  if (days <= 0) {
    throw refuse(
      'no_working_days',
      `${ask.startDate === ask.endDate ? ask.startDate : `${ask.startDate} to ${ask.endDate}`} has no working days: nothing to take off.`,
    );
  }
  return days;
};

/** When the ask's first day (or half) starts and ends, in the requester's zone (the enrich step's finding). */
export type FirstDay = Readonly<{ firstDayStartsAt: string; firstDayEndsAt: string }>;

/**
 * When the approver is reminded and when the request expires, counted from `now`.
 *
 * Issue 20: expiry never falls after the leave has begun. With `firstDay` it is the earlier of the
 * rules' expiry and the start of the leave's first day (or half) in the requester's zone; a request
 * made once that start has passed (leave for today) expires at the end of that first day at the
 * latest. Reminders due at or after the expiry are dropped. Without `firstDay` (leave recorded
 * after the fact, or a command from before issue 20): the rules alone.
 */
export const approvalSchedule = (
  now: string,
  rules: ApprovalRules | null,
  holidays: readonly string[],
  firstDay: FirstDay | null = null,
): Readonly<{ remindAt: string[]; expiresAt: string }> => {
  const r = rules ?? DEFAULT_APPROVAL_RULES;
  const set = holidaySet(holidays);
  let expiresAt = addWorkingDays(now, r.expiryWorkingDays, set);
  if (firstDay) {
    const nowMs = Date.parse(now);
    const startsAt = Date.parse(firstDay.firstDayStartsAt);
    const cap = startsAt > nowMs ? firstDay.firstDayStartsAt : firstDay.firstDayEndsAt;
    if (Date.parse(cap) < Date.parse(expiresAt)) expiresAt = new Date(Date.parse(cap)).toISOString();
  }
  const remindAt = [...new Set(r.reminderWorkingDays)]
    .filter((n) => n < r.expiryWorkingDays)
    .sort((a, b) => a - b)
    .map((n) => addWorkingDays(now, n, set))
    .filter((at) => Date.parse(at) < Date.parse(expiresAt));
  return { remindAt, expiresAt };
};

type Days = Readonly<Pick<TimeOffAsk, 'startDate' | 'endDate' | 'startPortion' | 'endPortion'>>;

/** The half days a leave takes, as [first, last] indices (a date's morning 2n, its afternoon 2n + 1). */
const halfDays = (d: Days): readonly [number, number] => {
  const day = (date: string) => Math.round(Date.parse(`${date}T00:00:00.000Z`) / 86_400_000) * 2;
  return [
    day(d.startDate) + (d.startPortion === 'afternoon' ? 1 : 0),
    day(d.endDate) + (d.endPortion === 'morning' ? 0 : 1),
  ];
};

/** Whether two leaves of the same person share a half day (a morning and an afternoon do not). */
export const leavesOverlap = (a: Days, b: Days): boolean => {
  const [a0, a1] = halfDays(a);
  const [b0, b1] = halfDays(b);
  return a0 <= b1 && b0 <= a1;
};

const isoRange = (d: Days): string =>
  d.startDate === d.endDate ? d.startDate : `${d.startDate} to ${d.endDate}`;

/**
 * How a leave of one's own is named in a refusal: its policy, days, Switchboard's short id (with
 * HR's id once known) and where it stands. `range` formats the days (the edge passes its own).
 */
export const ownLeaveText = (l: OwnLeave, range: (d: Days) => string = isoRange): string => {
  const state = l.status === 'approved' ? 'approved' : 'waiting for approval';
  const id =
    l.timeOffId !== null
      ? `request \`${l.timeOffId.slice(0, 6).toLowerCase()}\`${l.hrRequestId ? ` · HR ${l.hrRequestId}` : ''}`
      : `in HR as ${l.hrRequestId ?? 'a request'}`;
  return `${l.policyType} ${range(l)} (${id}, ${state})`;
};

/** The refusal of an ask overlapping the requester's own leave, naming the first such leave. */
export const overlapRefusalText = (l: OwnLeave, range: (d: Days) => string = isoRange): string =>
  `These days overlap your ${ownLeaveText(l, range)}, so nothing was asked: the same days can't be taken twice.` +
  (l.timeOffId !== null
    ? ` Cancel that one first (\`/timeoff cancel ${l.timeOffId.slice(0, 6).toLowerCase()}\`) or pick other days.`
    : ' Pick other days, or ask HR to change that leave.');

/** The refusal of an ask starting before the requester's today, for a policy not recorded after the fact. */
export const pastRefusalText = (
  startDate: string,
  today: string,
  day: (d: string) => string = (d) => d,
): string =>
  `${day(startDate)} is in the past (today is ${day(today)} where you are): time off starts today or later. Only leave that may be recorded after the fact, such as sick leave, can be for past days.`;

type Standing = Readonly<{
  overlapping?: readonly OwnLeave[] | undefined;
  calendarDay?: Readonly<{ today: string; firstDayStartsAt: string; firstDayEndsAt: string }> | undefined;
  pastAllowed?: boolean | undefined;
}>;

/**
 * Issue 20: what the ask is judged against besides itself (the enrich step's findings): the
 * requester's own overlapping leave is refused, naming it; days already past are refused unless the
 * policy may be recorded after the fact. Returns whether it is after the fact and the first day
 * expiry is capped by (null: not capped).
 */
export const checkStanding = (
  ask: Days,
  s: Standing,
): Readonly<{ afterTheFact: boolean; firstDay: FirstDay | null }> => {
  const clash = (s.overlapping ?? []).find((l) => leavesOverlap(ask, l));
  if (clash) {
    throw refuse('overlaps_own_leave', overlapRefusalText(clash), { leave: clash });
  }
  const day = s.calendarDay;
  if (!day) return { afterTheFact: false, firstDay: null };
  if (ask.startDate < day.today) {
    if (!s.pastAllowed) {
      throw refuse('past_dates', pastRefusalText(ask.startDate, day.today), {
        today: day.today,
        startDate: ask.startDate,
      });
    }
    return { afterTheFact: true, firstDay: null };
  }
  return { afterTheFact: false, firstDay: day };
};

const askOf = (d: TimeOffAsk): TimeOffAsk => ({
  policyType: d.policyType,
  startDate: d.startDate,
  endDate: d.endDate,
  startPortion: d.startPortion,
  endPortion: d.endPortion,
  description: d.description,
});

const sameCard = (a: CardRef, b: CardRef): boolean => a.channel === b.channel && a.ts === b.ts;

/** The request a command names, when there is one; refuses a forged id. */
const existing = (context: TimeOffContext, timeOffId: string) => {
  const request = context.request;
  if (!request || request.timeOffId !== timeOffId) {
    throw refuse('unknown_request', 'There is no such time-off request.', { timeOffId });
  }
  return request;
};

/**
 * Who may approve or deny a request (pure; the rule Approve and Deny apply, which the edge also asks
 * before it opens the deny form): the designated approver, never the requester; for a request sent
 * to the HR channel, any member of it (`asHr`: the enrich step vouched for them with Slack) who is
 * not the requester in HR. Returns the refusal, or null when `actor` may decide.
 */
export const decisionRefusal = (
  request: NonNullable<TimeOffContext['request']>,
  actor: string,
  asHr?: Readonly<{ channel: string; by: TimeOffPerson }>,
): DecisionRejected | null => {
  if (actor === request.requester.slackUserId) {
    return refuse('own_request', "You can't approve or deny your own time off.", { actor });
  }
  // Issue 12: a request decided in the HR channel, by any member of it the enrich step vouched for.
  if (isHrChannelApprover(request.approver)) {
    if (!asHr || asHr.channel !== request.approver.slackUserId || asHr.by.slackUserId !== actor) {
      return refuse(
        'not_approver',
        `Only members of <#${request.approver.slackUserId}> can approve or deny time off sent to HR.`,
        { actor, hrChannel: true },
      );
    }
    if (asHr.by.hrId === request.requester.hrId) {
      return refuse('own_request', "You can't approve or deny your own time off.", { actor });
    }
    return null;
  }
  if (actor === request.approver.slackUserId) return null;
  if (request.handedOnFrom?.some((p) => p.slackUserId === actor)) {
    return refuse(
      'not_approver',
      `This request was handed on to ${request.approver.displayName || 'the next approver'}; it is theirs to decide now.`,
      { actor, handedOn: true },
    );
  }
  return refuse(
    'not_approver',
    `Only ${request.approver.displayName || 'the approver'} can approve or deny this request.`,
    {
      actor,
    },
  );
};

/**
 * Who may fix and send again a request HR refused (pure; the rule ResubmitTimeOff applies, which
 * the edge also asks before it opens the form): the requester, while the submission has failed.
 */
export const resubmitRefusal = (
  request: NonNullable<TimeOffContext['request']>,
  phase: TimeOffPhase,
  actor: string,
): DecisionRejected | null => {
  if (actor !== request.requester.slackUserId) {
    return refuse('not_requester', 'Only the person who asked for this time off can send it again.', {
      actor,
    });
  }
  if (phase !== 'submissionFailed') return refuse('nothing_to_resubmit', PHASE_TEXT[phase], { phase });
  return null;
};

/** Approve and Deny: only who may decide (decisionRefusal), on this request's card. */
const checkDecider = (
  context: TimeOffContext,
  phase: TimeOffPhase,
  actor: string,
  card: CardRef | null,
  timeOffId: string,
  asHr?: Readonly<{ channel: string; by: TimeOffPerson }>,
) => {
  const request = existing(context, timeOffId);
  const refusal = decisionRefusal(request, actor, asHr);
  if (refusal) throw refusal;
  if (card && context.staleCards.some((stale) => sameCard(stale, card))) {
    throw refuse(
      'other_card',
      'That message is about an earlier version of this request; the dates have changed since. Use the newest DM.',
      { actor, card },
    );
  }
  // Before the card is recorded (a click that beats its recording) only the person is checked.
  if (card && context.card && !sameCard(card, context.card)) {
    throw refuse('other_card', 'That button belongs to another message. Use the request’s own DM.', {
      actor,
      card,
    });
  }
  return { request, undecided: phase === 'requested' || phase === 'awaitingApproval' };
};

const refuseDecided = (phase: TimeOffPhase): never => {
  const reason: TimeOffRejectionReason =
    phase === 'expired'
      ? 'expired'
      : phase === 'cancelled' || phase === 'cancelling'
        ? 'cancelled'
        : 'already_decided';
  throw refuse(reason, PHASE_TEXT[phase], { phase });
};

const toEvents = (command: TimeOffCommand, state: TimeOffState): TimeOffEvent[] => {
  const { context } = state;
  const phase = timeOffPhaseOf(state);
  const now = command.metadata.now;
  const actor = command.metadata.actor;
  switch (command.type) {
    case 'RequestTimeOff': {
      const d = command.data;
      if (phase !== 'none') {
        // The same request delivered again (same requester, same ask): already recorded.
        const r = context.request;
        if (r && r.requester.slackUserId === actor && JSON.stringify(askOf(r)) === JSON.stringify(askOf(d))) {
          return [];
        }
        throw refuse('already_requested', 'This request was already made.', { timeOffId: d.timeOffId });
      }
      if (actor !== d.requester.slackUserId) {
        throw refuse('not_requester', 'You can only ask for time off for yourself.', { actor });
      }
      if (d.approver.hrId === d.requester.hrId || d.approver.slackUserId === d.requester.slackUserId) {
        throw refuse(
          'self_approval',
          'You are your own approver in HR, and nobody can approve their own time off. Ask HR to set your manager.',
        );
      }
      const workingDays = checkAsk(d, d.holidays);
      const standing = checkStanding(d, d);
      const schedule = approvalSchedule(now, d.approvalRules, d.holidays, standing.firstDay);
      return [
        {
          type: 'TimeOffRequested',
          data: {
            timeOffId: d.timeOffId,
            ...askOf(d),
            requester: d.requester,
            approver: d.approver,
            workingDays,
            ...schedule,
            at: now,
            ...(d.skipped && d.skipped.length > 0 ? { skipped: d.skipped } : {}),
            ...(d.approverAwayUntil ? { approverAwayUntil: d.approverAwayUntil } : {}),
            ...(d.zone ? { zone: d.zone } : {}),
            ...(standing.afterTheFact ? { afterTheFact: true as const } : {}),
          },
        },
      ];
    }
    case 'RecordTimeOffApprovalAsked': {
      const request = existing(context, command.data.timeOffId);
      // Issue 12: a card posted to an approver it was handed on from since is dead already.
      const postedTo = command.data.postedTo;
      if (postedTo !== undefined && postedTo !== request.approver.slackUserId) return [];
      // Only the first card counts; a card posted after the request moved on changes nothing.
      return phase === 'requested'
        ? [
            {
              type: 'TimeOffApprovalAsked',
              data: { timeOffId: command.data.timeOffId, card: command.data.card, at: now },
            },
          ]
        : [];
    }
    case 'RemindTimeOffApprover': {
      const request = existing(context, command.data.timeOffId);
      const n = command.data.reminder;
      if ((phase !== 'requested' && phase !== 'awaitingApproval') || n !== context.remindersSent + 1)
        return [];
      const due = request.remindAt[n - 1];
      if (due === undefined) return [];
      if (Date.parse(now) < Date.parse(due)) {
        throw refuse('not_due', `Reminder ${n} is due at ${due}.`, { dueAt: due });
      }
      return [
        { type: 'TimeOffApproverReminded', data: { timeOffId: request.timeOffId, reminder: n, at: now } },
      ];
    }
    case 'ExpireTimeOff': {
      const request = existing(context, command.data.timeOffId);
      if (phase !== 'requested' && phase !== 'awaitingApproval') return [];
      if (Date.parse(now) < Date.parse(request.expiresAt)) {
        throw refuse('not_due', `The request expires at ${request.expiresAt}.`, { dueAt: request.expiresAt });
      }
      return [{ type: 'TimeOffExpired', data: { timeOffId: request.timeOffId, at: now } }];
    }
    case 'ApproveTimeOff': {
      const { request, undecided } = checkDecider(
        context,
        phase,
        actor,
        command.data.card,
        command.data.timeOffId,
        command.data.asHr,
      );
      const cover = command.data.cover ?? null;
      if (cover && undecided) checkCover(context, cover);
      if (!undecided) {
        // A second click on Approve (or a redelivery) after approving: nothing more to do.
        if (
          context.decision &&
          context.decision.reason === null &&
          ['approved', 'submitted', 'confirmed', 'submissionFailed'].includes(phase)
        ) {
          // Approve and cover after it was approved without that cover: said, never silently dropped.
          if (cover && context.cover?.slackUserId !== cover.slackUserId) {
            throw refuse(
              'already_decided',
              'This request is already approved, so that cover was not recorded. Cover the shifts in the incident service.',
              { phase },
            );
          }
          return [];
        }
        return refuseDecided(phase);
      }
      return [
        {
          type: 'TimeOffApproved',
          data: {
            timeOffId: request.timeOffId,
            by: deciderOf(request.approver, command.data.asHr),
            submitRequestId: command.metadata.commandId,
            at: now,
            // The cover's stream is named after this command too (machines/timeOff/cover.ts).
            ...(cover
              ? { cover: { coverId: command.metadata.commandId, slackUserId: cover.slackUserId } }
              : command.data.askForCover === true
                ? { askForCover: true as const }
                : {}),
          },
        },
      ];
    }
    case 'DenyTimeOff': {
      const { request, undecided } = checkDecider(
        context,
        phase,
        actor,
        command.data.card,
        command.data.timeOffId,
        command.data.asHr,
      );
      if (!undecided) {
        if (phase === 'denied') return [];
        return refuseDecided(phase);
      }
      const reason = command.data.reason?.trim() ?? '';
      return [
        {
          type: 'TimeOffDenied',
          data: {
            timeOffId: request.timeOffId,
            by: deciderOf(request.approver, command.data.asHr),
            reason: reason === '' ? null : reason,
            at: now,
          },
        },
      ];
    }
    case 'CancelTimeOff': {
      const request = existing(context, command.data.timeOffId);
      if (actor !== request.requester.slackUserId) {
        throw refuse('not_requester', 'Only the person who asked for this time off can cancel it.', {
          actor,
        });
      }
      const timeOffId = request.timeOffId;
      switch (phase) {
        case 'requested':
        case 'awaitingApproval':
        case 'submissionFailed':
          return [
            {
              type: 'TimeOffCancelled',
              data: { timeOffId, cancelRequestId: null, by: 'requester', at: now },
            },
          ];
        case 'approved':
        case 'submitted':
        case 'confirmed':
          return [
            {
              type: 'TimeOffCancelRequested',
              data: {
                timeOffId,
                cancelRequestId: command.metadata.commandId,
                hrRequestId: context.hrRequestId,
                at: now,
              },
            },
          ];
        case 'cancelling':
          return [];
        case 'cancelled':
          throw refuse('cancelled', 'This request is already cancelled.');
        default:
          throw refuse('nothing_to_cancel', PHASE_TEXT[phase], { phase });
      }
    }
    case 'ResubmitTimeOff': {
      const request = existing(context, command.data.timeOffId);
      const refusal = resubmitRefusal(request, phase, actor);
      if (refusal) throw refusal;
      const d = command.data;
      const workingDays = checkAsk(d, d.holidays);
      // What the approver approved is the days off; a new policy name or note keeps the approval.
      const reapproval =
        d.startDate !== request.startDate ||
        d.endDate !== request.endDate ||
        d.startPortion !== request.startPortion ||
        d.endPortion !== request.endPortion;
      // Issue 20: the fixed days are judged like a new ask's (its own stream is left out by the enrich step).
      const standing = reapproval ? checkStanding(d, d) : null;
      const schedule = reapproval
        ? approvalSchedule(now, d.approvalRules, d.holidays, standing?.firstDay ?? null)
        : { remindAt: [...request.remindAt], expiresAt: request.expiresAt };
      return [
        {
          type: 'TimeOffResubmitted',
          data: {
            timeOffId: request.timeOffId,
            ...askOf(d),
            workingDays,
            reapproval,
            submitRequestId: reapproval ? null : command.metadata.commandId,
            ...(standing && (standing.afterTheFact || request.afterTheFact)
              ? { afterTheFact: standing.afterTheFact }
              : {}),
            ...schedule,
            at: now,
          },
        },
      ];
    }
    case 'RecordTimeOffSubmissionSent': {
      const d = command.data;
      existing(context, d.timeOffId);
      if (findHrRequest(context, d.submitRequestId)?.action !== 'submit') return [];
      if (context.submissionSent?.submitRequestId === d.submitRequestId) return [];
      return [
        {
          type: 'TimeOffSubmissionSent',
          data: { timeOffId: d.timeOffId, submitRequestId: d.submitRequestId, since: d.since, at: now },
        },
      ];
    }
    case 'RecordTimeOffSubmitted': {
      const d = command.data;
      existing(context, d.timeOffId);
      if ((phase !== 'approved' && phase !== 'cancelling') || context.hrRequestId !== null) return [];
      if (d.submitRequestId !== context.submitRequestId) return [];
      // Pending, or sent and given up on while HR did not show it: a later sighting still counts.
      const sent = context.submissionSent?.submitRequestId === d.submitRequestId;
      if (findHrRequest(context, d.submitRequestId)?.action !== 'submit' && !sent) return [];
      return [
        {
          type: 'TimeOffSubmitted',
          data: {
            timeOffId: d.timeOffId,
            submitRequestId: d.submitRequestId,
            hrRequestId: d.hrRequestId,
            readBackRequestId: command.metadata.commandId,
            at: now,
          },
        },
      ];
    }
    case 'RecordTimeOffSubmissionRejected': {
      const d = command.data;
      existing(context, d.timeOffId);
      if (findHrRequest(context, d.submitRequestId)?.action !== 'submit') return [];
      return submissionEnded(context, phase, d.timeOffId, d.submitRequestId, d.reason, now);
    }
    case 'RecordTimeOffReadBack': {
      const d = command.data;
      existing(context, d.timeOffId);
      const lastReadBack =
        phase === 'submitted' &&
        context.confirmedAt === null &&
        d.readBackRequestId === context.readBackRequestId;
      if (findHrRequest(context, d.readBackRequestId)?.action !== 'read_back' && !lastReadBack) return [];
      const status = d.hrStatus.toLowerCase();
      if (status === 'canceled' || status === 'cancelled' || status === 'declined') {
        return [
          {
            type: 'TimeOffCancelled',
            data: { timeOffId: d.timeOffId, cancelRequestId: null, by: 'hr', at: now },
          },
        ];
      }
      return [
        {
          type: 'TimeOffConfirmed',
          data: {
            timeOffId: d.timeOffId,
            readBackRequestId: d.readBackRequestId,
            hrStatus: d.hrStatus,
            at: now,
          },
        },
      ];
    }
    case 'RecordTimeOffCancelledInHr': {
      const d = command.data;
      existing(context, d.timeOffId);
      if (d.cancelRequestId !== null) {
        if (findHrRequest(context, d.cancelRequestId)?.action !== 'cancel') return [];
        return [
          {
            type: 'TimeOffCancelled',
            data: { timeOffId: d.timeOffId, cancelRequestId: d.cancelRequestId, by: 'requester', at: now },
          },
        ];
      }
      // Cancelled in the HR web app (a webhook or the changes poll).
      if (phase === 'submitted' || phase === 'confirmed') {
        return [
          {
            type: 'TimeOffCancelled',
            data: { timeOffId: d.timeOffId, cancelRequestId: null, by: 'hr', at: now },
          },
        ];
      }
      if (phase === 'cancelling' && pendingOf(context, 'cancel')) {
        // Our own cancel, seen by its webhook before the call's answer.
        return [
          {
            type: 'TimeOffCancelled',
            data: {
              timeOffId: d.timeOffId,
              cancelRequestId: pendingOf(context, 'cancel')?.requestId ?? null,
              by: 'requester',
              at: now,
            },
          },
        ];
      }
      return [];
    }
    case 'RecordTimeOffUpstreamCallFailed': {
      const d = command.data;
      existing(context, d.timeOffId);
      const request = findHrRequest(context, d.requestId);
      const fact = decideFailure(request, d, now);
      if (!fact) return [];
      const failed: TimeOffEvent = { type: 'TimeOffUpstreamCallFailed', data: fact };
      if (!fact.final) return [failed];
      switch (fact.action) {
        case 'submit':
          // HR took the POST: it may well have the request. It stays approved (never "resubmit":
          // that could put the same leave in HR twice); a webhook or the changes poll can still
          // find it and record TimeOffSubmitted.
          if (context.submissionSent?.submitRequestId === fact.requestId) return [failed];
          return [
            failed,
            ...submissionEnded(
              context,
              phase,
              d.timeOffId,
              fact.requestId,
              fact.code === 'SB_UPSTREAM_AUTH' && fact.message
                ? fact.message
                : `HR could not be reached to record it (${fact.message || fact.code}). Send it again when HR is back.`,
              now,
            ),
          ];
        case 'cancel':
          return [
            failed,
            {
              type: 'TimeOffCancelFailed',
              data: {
                timeOffId: d.timeOffId,
                cancelRequestId: fact.requestId,
                reason: fact.message || fact.code,
                at: now,
              },
            },
          ];
        case 'read_back':
          // Still submitted; HR's own events or the changes poll can still confirm it.
          return [failed];
        default:
          return exhaustive(fact.action, 'time-off action');
      }
    }
    case 'RetryTimeOffUpstreamCall': {
      const d = command.data;
      existing(context, d.timeOffId);
      const fact = decideRetry(findHrRequest(context, d.requestId), d, now);
      return fact ? [{ type: 'TimeOffUpstreamCallRetried', data: fact }] : [];
    }
    // ---- issue 12 (j-approvers)
    case 'HandOnTimeOff': {
      const request = existing(context, command.data.timeOffId);
      onlySystem(actor);
      const d = command.data;
      // Only a request still waiting for a decision is handed on; a decided one stays as it is.
      if (phase !== 'requested' && phase !== 'awaitingApproval') return [];
      if (d.to.hrId === request.approver.hrId && d.to.slackUserId === request.approver.slackUserId) return [];
      if (d.to.hrId === request.requester.hrId || d.to.slackUserId === request.requester.slackUserId) {
        throw refuse('self_approval', 'Nobody can approve their own time off.');
      }
      return [
        {
          type: 'TimeOffHandedOn',
          data: {
            timeOffId: request.timeOffId,
            from: request.approver,
            to: d.to,
            reason: d.reason,
            until: d.until,
            skipped: d.skipped,
            at: now,
          },
        },
      ];
    }
    case 'RecordTimeOffApproverGone': {
      const request = existing(context, command.data.timeOffId);
      onlySystem(actor);
      if (phase !== 'requested' && phase !== 'awaitingApproval') return [];
      if (request.approverGone === request.approver.hrId) return [];
      return [
        {
          type: 'TimeOffApproverGone',
          data: { timeOffId: request.timeOffId, approver: request.approver, at: now },
        },
      ];
    }
    case 'CancelTimeOffOfLeaver': {
      const request = existing(context, command.data.timeOffId);
      onlySystem(actor);
      // Approved leave of a leaver is left alone (HR decides what becomes of it).
      if (phase !== 'requested' && phase !== 'awaitingApproval') return [];
      return [
        {
          type: 'TimeOffCancelled',
          data: { timeOffId: request.timeOffId, cancelRequestId: null, by: 'left', at: now },
        },
      ];
    }
    // ------------------------------------------------ on-call conflicts and cover (issue 12)
    case 'RecordTimeOffConflictsChecked': {
      const { timeOffId, ...d } = command.data;
      existing(context, timeOffId);
      if (FINAL_PHASES.has(phase) || context.conflictCheck?.requestId !== d.checkId) return [];
      return [{ type: 'TimeOffConflictsChecked', data: { timeOffId, ...d, at: now } }];
    }
    case 'RecordTimeOffConflictsCheckFailed': {
      const d = command.data;
      existing(context, d.timeOffId);
      if (FINAL_PHASES.has(phase)) return [];
      const fact = decideFailure(context.conflictCheck, d, now);
      return fact ? [{ type: 'TimeOffConflictsCheckFailed', data: { ...fact, timeOffId: d.timeOffId } }] : [];
    }
    case 'RetryTimeOffConflictsCheck': {
      const d = command.data;
      existing(context, d.timeOffId);
      if (FINAL_PHASES.has(phase)) return [];
      const fact = decideRetry(context.conflictCheck, d, now);
      return fact
        ? [{ type: 'TimeOffConflictsCheckRetried', data: { ...fact, timeOffId: d.timeOffId } }]
        : [];
    }
    case 'RecordTimeOffCover': {
      const d = command.data;
      existing(context, d.timeOffId);
      const cover = context.cover;
      if (FINAL_PHASES.has(phase) || cover?.coverId !== d.coverId) return [];
      if (
        JSON.stringify(cover.slots) === JSON.stringify(d.slots) &&
        cover.withdrawn === d.withdrawn &&
        (cover.declinedBy ?? null) === (d.declinedBy ?? null)
      )
        return [];
      return [{ type: 'TimeOffCoverRecorded', data: { ...d, at: now } }];
    }
    default:
      return exhaustive(command, 'time-off command');
  }
};

/** Handing on and a leaver's cancel are Switchboard's own decisions, never a person's command. */
const onlySystem = (actor: string): void => {
  if (!actor.startsWith('system:')) {
    throw refuse('not_requester', 'Only Switchboard hands requests on or cancels those of people who left.', {
      actor,
    });
  }
};

/** Who decided: the approver, or for a request in the HR channel the member who clicked. */
const deciderOf = (
  approver: TimeOffPerson,
  asHr: Readonly<{ channel: string; by: TimeOffPerson }> | undefined,
): TimeOffPerson => (isHrChannelApprover(approver) && asHr ? asHr.by : approver);

/** Phases a request never leaves: nothing more is recorded on it (its machine is done). */
const FINAL_PHASES: ReadonlySet<TimeOffPhase> = new Set(['denied', 'expired', 'cancelled']);

/** "Approve and cover with …": the request has on-call shifts an override can cover, and the cover is not the requester. */
/**
 * "Approve and cover with …": there must be a shift to cover, the cover must not be the requester,
 * and must not be away during the shifts (`away`: the enrich step's finding, when they are).
 */
const checkCover = (
  context: TimeOffContext,
  cover: NonNullable<TimeOffCommandOf<'ApproveTimeOff'>['data']['cover']>,
): void => {
  if (!context.conflicts?.shifts.some((s) => s.scheduleId !== null)) {
    throw refuse(
      'nothing_to_cover',
      'Switchboard found no on-call shift of this request to cover. Use Approve instead.',
    );
  }
  if (cover.slackUserId === context.request?.requester.slackUserId) {
    throw refuse(
      'self_cover',
      `${context.request.requester.displayName || 'The requester'} can't cover their own shifts.`,
    );
  }
  if (cover.away) {
    throw refuse(
      'cover_away',
      `${cover.away.name} is away during the shifts to cover (${cover.away.why}), so nothing was changed: pick someone else, or Approve and cover the shifts in the incident service.`,
      { cover: cover.slackUserId },
    );
  }
};

/** The submission ended without an HR request: failed (the requester can fix it), or, when cancelling, cancelled. */
const submissionEnded = (
  context: TimeOffContext,
  phase: TimeOffPhase,
  timeOffId: string,
  submitRequestId: string,
  reason: string,
  now: string,
): TimeOffEvent[] =>
  phase === 'cancelling' && context.hrRequestId === null
    ? [{ type: 'TimeOffCancelled', data: { timeOffId, cancelRequestId: null, by: 'requester', at: now } }]
    : [{ type: 'TimeOffSubmissionFailed', data: { timeOffId, submitRequestId, reason, at: now } }];

export const timeOffDecider = machineDecider({
  machine: timeOffMachine,
  toEvents,
  events: { schemas: timeOffEventDataSchemas },
  commands: timeOffCommandDataSchemas,
});

import { z } from 'zod';
import type { Command } from '../shared/messages.ts';
import { recordUpstreamCallFailedSchema, retryUpstreamCallSchema } from '../shared/upstreamRequest.ts';
import {
  approverSkipSchema,
  cardRefSchema,
  conflictCheckActionSchema,
  conflictShiftSchema,
  coverCandidateSchema,
  coverSlotOutcomeSchema,
  dayPortionSchema,
  requesterZoneSchema,
  timeOffActionSchema,
  timeOffAskSchema,
  timeOffPersonSchema,
} from './events.ts';

/**
 * What people, timers and the HR processor ask of a time-off request (`<Verb><Subject>`). Every
 * command names the request (`data.timeOffId`), whose stream it goes to. Who may act is checked
 * by the decider against `metadata.actor` (a Slack user id) and the request's recorded people,
 * never against anything else in the payload.
 */
const timeOffId = z.string().min(1).max(200);
const id = z.string().min(1).max(200);
const isoDate = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'must be a YYYY-MM-DD date');

/** When the approver is reminded and when an undecided request expires, in working days. */
export const approvalRulesSchema = z.object({
  reminderWorkingDays: z.array(z.number().int().min(1).max(60)).max(10),
  expiryWorkingDays: z.number().int().min(1).max(60),
});
export type ApprovalRules = z.infer<typeof approvalRulesSchema>;

export const DEFAULT_APPROVAL_RULES: ApprovalRules = { reminderWorkingDays: [1, 3], expiryWorkingDays: 7 };

/** What the edge looked up for a request: the calendar and the rules in force. */
const calendar = {
  /** Public holidays (YYYY-MM-DD) around the range and the approval window; not working days. */
  holidays: z.array(isoDate).max(400),
  /** Null: DEFAULT_APPROVAL_RULES. */
  approvalRules: approvalRulesSchema.nullable(),
};

/**
 * Issue 12 (j-approvers): how the edge found the approver (up the reporting line, around people
 * away or gone), recorded with the request.
 */
const routing = {
  skipped: z.array(approverSkipSchema).max(50).optional(),
  approverAwayUntil: isoDate.nullable().optional(),
};

/**
 * A click on a card sent to the HR channel: the enrich step checked (`conversations.members`) that
 * the clicking user is a member of `channel`, and who they are in HR (`by`, whose id HR is given as
 * approver); absent when they are not a member. The decider still checks `by` is the actor and not
 * the requester.
 */
const asHr = z.object({ channel: z.string().min(1).max(32), by: timeOffPersonSchema }).optional();
// ---------------------------------------------------------------- leave that cannot be wrong (issue 20 item 6)

/**
 * A leave of the requester's own that an ask overlaps: another Switchboard request still standing
 * (`timeOffId`, with HR's id once known) or leave known only from HR (`timeOffId` null).
 */
export const ownLeaveSchema = z.object({
  timeOffId: id.nullable(),
  hrRequestId: id.nullable(),
  policyType: z.string().max(100),
  startDate: isoDate,
  endDate: isoDate,
  startPortion: dayPortionSchema,
  endPortion: dayPortionSchema,
  status: z.enum(['approved', 'requested']),
});
export type OwnLeave = z.infer<typeof ownLeaveSchema>;

/**
 * What an ask is judged against besides itself, filled by the enrich step right before the decider
 * (src/timeOff/enrich.ts; the edge asks the same first, to answer in words at once). Absent on
 * commands recorded before issue 20: not checked.
 */
const standing = {
  /** The requester's own leave the ask overlaps (empty: none). */
  overlapping: z.array(ownLeaveSchema).max(20).optional(),
  /**
   * The requester's day now, and when the ask's first day (or half) starts and ends, in their
   * zone (src/timeOff/localDays.ts).
   */
  calendarDay: z
    .object({
      today: isoDate,
      firstDayStartsAt: z.string().min(1).max(40),
      firstDayEndsAt: z.string().min(1).max(40),
    })
    .optional(),
  /** The policy may be recorded after the fact (past days; TIME_OFF_PAST_POLICIES). */
  pastAllowed: z.boolean().optional(),
};

// ---------------------------------------------------------------- on-call conflicts and cover (issue 12)

const conflictCommandDataSchemas = {
  /** The on-call lookup's answer for check `checkId` (src/timeOff/coverConflicts.reactor.ts). */
  RecordTimeOffConflictsChecked: z.object({
    timeOffId,
    checkId: id,
    shifts: z.array(conflictShiftSchema).max(50),
    knownUntil: z.string().min(1).max(40),
    candidates: z.array(coverCandidateSchema).max(20),
    unmapped: z.boolean(),
  }),
  RecordTimeOffConflictsCheckFailed: recordUpstreamCallFailedSchema(conflictCheckActionSchema).extend({
    timeOffId,
  }),
  RetryTimeOffConflictsCheck: retryUpstreamCallSchema(conflictCheckActionSchema).extend({ timeOffId }),
  /** The cover's stream moved on (src/timeOff/cover.reactor.ts): its slots as they stand. */
  RecordTimeOffCover: z.object({
    timeOffId,
    coverId: id,
    slots: z.array(coverSlotOutcomeSchema).max(50),
    withdrawn: z.boolean(),
    /** The cover said they can't (issue 20): their Slack user id. */
    declinedBy: z.string().max(40).optional(),
  }),
} as const;

export const timeOffCommandDataSchemas = {
  /** `/timeoff …` or the modal: the requester and their approver come from the directory. */
  RequestTimeOff: timeOffAskSchema.extend({
    timeOffId,
    requester: timeOffPersonSchema,
    approver: timeOffPersonSchema,
    ...calendar,
    ...routing,
    /** The requester's Slack time zone, looked up at the edge (absent: UTC). */
    zone: requesterZoneSchema.optional(),
    ...standing,
  }),
  /** The approver's DM was posted. */
  RecordTimeOffApprovalAsked: z.object({
    timeOffId,
    card: cardRefSchema,
    /**
     * Issue 12: whom the card was posted to (a user, or the HR channel); a card for an approver the
     * request was handed on from since is not recorded. Absent: not checked.
     */
    postedTo: z.string().min(1).max(32).optional(),
  }),
  /** A reminder timer (1-based). */
  RemindTimeOffApprover: z.object({ timeOffId, reminder: z.number().int().min(1).max(10) }),
  /** The expiry timer. */
  ExpireTimeOff: z.object({ timeOffId }),
  /** Approve on a card (`card`: the message clicked; null from App Home, where only the person is checked). */
  ApproveTimeOff: z.object({
    timeOffId,
    card: cardRefSchema.nullable(),
    asHr,
    /**
     * Issue 20, "Approve and ask for cover": approved, and the ranked colleagues are asked by DM to
     * cover the on-call conflicts (src/timeOff/coverAsk.reactor.ts); absent or false otherwise.
     */
    askForCover: z.boolean().optional(),
    /** "Approve and cover with …" (issue 12): who covers the on-call conflicts; absent or null for plain Approve. */
    cover: z
      .object({
        slackUserId: z.string().regex(/^[UW][A-Z0-9]{2,31}$/, 'must be a Slack user id'),
        /**
         * Filled by the enrich step: the cover is away during the shifts to cover (who, and why in
         * words), so the decider refuses them; absent or null when they are not.
         */
        away: z
          .object({ name: z.string().max(300), why: z.string().max(300) })
          .nullable()
          .optional(),
      })
      .nullable()
      .optional(),
  }),
  DenyTimeOff: z.object({
    timeOffId,
    card: cardRefSchema.nullable(),
    reason: z.string().max(3000).nullable(),
    asHr,
  }),
  CancelTimeOff: z.object({ timeOffId }),
  /** After HR refused the submission: the requester's fixed request. */
  ResubmitTimeOff: timeOffAskSchema.extend({ timeOffId, ...calendar, ...standing }),
  /** HR answered the submission's POST with a 200 (`since`: the time taken just before the POST). */
  RecordTimeOffSubmissionSent: z.object({ timeOffId, submitRequestId: id, since: z.string().min(1).max(40) }),
  RecordTimeOffSubmitted: z.object({ timeOffId, submitRequestId: id, hrRequestId: id }),
  /** HR answered the submission with a 400: what was wrong, in words. */
  RecordTimeOffSubmissionRejected: z.object({ timeOffId, submitRequestId: id, reason: z.string().max(1000) }),
  /** The read-back found the request in HR, with its status there. */
  RecordTimeOffReadBack: z.object({ timeOffId, readBackRequestId: id, hrStatus: z.string().min(1).max(40) }),
  /**
   * HR cancelled it: our cancel call's answer (`cancelRequestId`), or a webhook / changes poll
   * saying it was cancelled in HR (null).
   */
  RecordTimeOffCancelledInHr: z.object({ timeOffId, cancelRequestId: id.nullable() }),
  RecordTimeOffUpstreamCallFailed: recordUpstreamCallFailedSchema(timeOffActionSchema).extend({ timeOffId }),
  RetryTimeOffUpstreamCall: retryUpstreamCallSchema(timeOffActionSchema).extend({ timeOffId }),
  // ---- issue 12 (j-approvers)
  /** The approver is away or left while the request waits (timeoff-hand-on): it goes to `to`. */
  HandOnTimeOff: z.object({
    timeOffId,
    to: timeOffPersonSchema,
    reason: z.enum(['away', 'left']),
    until: isoDate.nullable(),
    skipped: z.array(approverSkipSchema).max(50),
  }),
  /** The approver left and nobody can take the request (timeoff-hand-on): the requester is told. */
  RecordTimeOffApproverGone: z.object({ timeOffId }),
  /** The requester left the company: a request still waiting for approval is cancelled. */
  CancelTimeOffOfLeaver: z.object({ timeOffId }),
  ...conflictCommandDataSchemas,
} as const;

type Schemas = typeof timeOffCommandDataSchemas;
export type TimeOffCommand = { [T in keyof Schemas]: Command<T, z.infer<Schemas[T]>> }[keyof Schemas];
export type TimeOffCommandType = TimeOffCommand['type'];
export type TimeOffCommandOf<T extends TimeOffCommandType> = Extract<TimeOffCommand, { type: T }>;

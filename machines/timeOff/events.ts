import { z } from 'zod';
import type { Event } from '../shared/messages.ts';
import { upstreamCallFailedSchema, upstreamCallRetriedSchema } from '../shared/upstreamRequest.ts';

/**
 * The facts of one time-off request, one stream per request (streams.ts). The schemas are the
 * source of the event types and check every stored event when it is folded.
 *
 * The HR service has no "approve" call: Switchboard runs the approval itself, then submits the
 * approved request with approval bypassed and the approver named, reads it back (HR shows new
 * data up to ~20 s late) and only then calls it confirmed. No HR credential is ever in a fact.
 */

/** Durable calls to the HR service (machines/shared/upstreamRequest.ts). */
export const timeOffActionSchema = z.enum(['submit', 'read_back', 'cancel']);
export type TimeOffAction = z.infer<typeof timeOffActionSchema>;

export const dayPortionSchema = z.enum(['all_day', 'morning', 'afternoon']);

const id = z.string().min(1).max(200);
const at = z.string().min(1);
const isoDate = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'must be a YYYY-MM-DD date');
/** HR employee ids are opaque strings of digits in practice; kept as strings. */
const hrId = z.string().min(1).max(64);
const slackUserId = z.string().min(1).max(32);

/** A person in a request: their HR id, Slack user and a name for people to read. */
export const timeOffPersonSchema = z.object({ hrId, slackUserId, displayName: z.string().max(200) });
export type TimeOffPerson = z.infer<typeof timeOffPersonSchema>;

/** What is asked for: the fields the HR submit takes (range type `days`). */
export const timeOffAskSchema = z.object({
  /** The policy type's name in HR ("Holiday", "Sick", …). */
  policyType: z.string().min(1).max(100),
  startDate: isoDate,
  endDate: isoDate,
  startPortion: dayPortionSchema,
  endPortion: dayPortionSchema,
  description: z.string().max(1000),
});
export type TimeOffAsk = z.infer<typeof timeOffAskSchema>;

/** The card (a DM to the approver) whose buttons may decide this request. */
export const cardRefSchema = z.object({ channel: id, ts: id });
export type CardRef = z.infer<typeof cardRefSchema>;

// ---------------------------------------------------------------- issue 12: who approves (j-approvers)

/**
 * The approver of a request decided in the configured HR channel (`TIME_OFF_HR_CHANNEL`) rather
 * than by one person: `slackUserId` is the channel's id, and any member of it but the requester
 * may decide (checked by the enrich step with `conversations.members`, carried as `asHr` on the command).
 */
export const HR_CHANNEL_APPROVER_ID = 'hr-channel';
export const isHrChannelApprover = (person: Readonly<{ hrId: string }>): boolean =>
  person.hrId === HR_CHANNEL_APPROVER_ID;
export const hrChannelApprover = (channel: string): TimeOffPerson => ({
  hrId: HR_CHANNEL_APPROVER_ID,
  slackUserId: channel,
  displayName: 'HR',
});

/** Why someone in the requester's reporting line was passed over as approver. */
export const approverSkipReasonSchema = z.enum(['away', 'left', 'no_slack']);
export type ApproverSkipReason = z.infer<typeof approverSkipReasonSchema>;

/** One person passed over (`until`: the last day of the leave that made them away). */
export const approverSkipSchema = z.object({
  hrId,
  slackUserId: slackUserId.nullable(),
  displayName: z.string().max(200),
  reason: approverSkipReasonSchema,
  until: isoDate.nullable(),
});
export type ApproverSkip = z.infer<typeof approverSkipSchema>;

/**
 * The requester's Slack time zone (IANA) when they asked (issue 19 item 4): the request's dates and
 * halves are days in it (src/timeOff/localDays.ts: a day is local midnight to midnight, a morning
 * [00:00, 12:00), an afternoon [12:00, 24:00)). Absent on requests from before it was recorded:
 * those dates meant UTC days, so a missing zone is UTC.
 */
export const requesterZoneSchema = z.string().min(1).max(64);

/** How the approver was found (on `TimeOffRequested`; absent on requests from before issue 12). */
const routingFields = {
  /** Passed over on the way up the reporting line, nearest first. */
  skipped: z.array(approverSkipSchema).max(50).optional(),
  /**
   * The approver is away themself and nobody above them could take it (the chain ended and no HR
   * channel is configured): the request waits for them until this day (their leave's last day).
   */
  approverAwayUntil: isoDate.nullable().optional(),
};

// ---------------------------------------------------------------- on-call conflicts and cover (issue 12)

/** The durable lookup of the requester's on-call shifts over the request (machines/shared/upstreamRequest.ts). */
export const conflictCheckActionSchema = z.enum(['check_conflicts']);
export type ConflictCheckAction = z.infer<typeof conflictCheckActionSchema>;

/**
 * One on-call shift of the requester overlapping the request, clipped to it (a shift with no start
 * or end, "always on call", is clipped too). `scheduleId` null: the escalation policy names them
 * directly, which no override can cover.
 */
export const conflictShiftSchema = z.object({
  scheduleId: z.string().min(1).max(64).nullable(),
  scheduleName: z.string().max(200).nullable(),
  escalationPolicyId: z.string().min(1).max(64),
  escalationPolicyName: z.string().max(200).nullable(),
  level: z.number().int().min(1).max(100),
  start: at,
  end: at,
});
export type ConflictShift = z.infer<typeof conflictShiftSchema>;

/**
 * A colleague offered to cover, best first: on the same schedules or escalation policies, not away
 * and not on call during the shifts, fewest night pages over the last 30 days (null: not known).
 */
export const coverCandidateSchema = z.object({
  slackUserId,
  displayName: z.string().max(200),
  firstName: z.string().max(100),
  nightPages: z.number().int().min(0).nullable(),
});
export type CoverCandidate = z.infer<typeof coverCandidateSchema>;

/** Who covers, chosen on the approval card ("Approve and cover with …"): their cover's stream id. */
export const approvedCoverSchema = z.object({ coverId: id, slackUserId });
export type ApprovedCover = z.infer<typeof approvedCoverSchema>;

/** Where each slot of the cover stands, as the cover's stream (machines/timeOff/cover.ts) said last. */
export const coverSlotOutcomeSchema = z.object({
  scheduleId: z.string().min(1).max(64),
  scheduleName: z.string().max(200).nullable(),
  start: at,
  end: at,
  status: z.enum(['pending', 'created', 'failed', 'dropped']),
  overrideId: id.nullable(),
  problem: z.string().max(1000).nullable(),
});
export type CoverSlotOutcome = z.infer<typeof coverSlotOutcomeSchema>;

const conflictEventDataSchemas = {
  /**
   * The requester's on-call shifts over the request, and who could cover them, as looked up once
   * (the card, the cover and a restart read these facts). `knownUntil`: the incident service
   * publishes on-calls only so far ahead; shifts after it are not known yet. `unmapped`: the
   * requester has no incident-service user (no shifts).
   */
  TimeOffConflictsChecked: z.object({
    timeOffId: id,
    checkId: id,
    shifts: z.array(conflictShiftSchema).max(50),
    knownUntil: at,
    candidates: z.array(coverCandidateSchema).max(20),
    unmapped: z.boolean(),
    at,
  }),
  TimeOffConflictsCheckFailed: upstreamCallFailedSchema(conflictCheckActionSchema).extend({ timeOffId: id }),
  TimeOffConflictsCheckRetried: upstreamCallRetriedSchema(conflictCheckActionSchema).extend({
    timeOffId: id,
  }),
  /** The cover's slots changed (created, failed, dropped when withdrawn): the card shows them. */
  TimeOffCoverRecorded: z.object({
    timeOffId: id,
    coverId: id,
    slots: z.array(coverSlotOutcomeSchema).max(50),
    withdrawn: z.boolean(),
    /** The cover said they can't (issue 20): their Slack user id. */
    declinedBy: z.string().max(40).optional(),
    at,
  }),
} as const;

export const timeOffEventDataSchemas = {
  /** Asked for, with the approver (the requester's manager in HR) and the approval schedule. */
  TimeOffRequested: timeOffAskSchema.extend({
    timeOffId: id,
    requester: timeOffPersonSchema,
    approver: timeOffPersonSchema,
    /** Working days the range takes (half days as 0.5), with the holidays the command carried. */
    workingDays: z.number().min(0.5),
    /** When the approver is reminded, in order (after 1 and 3 working days by default). */
    remindAt: z.array(at).max(10),
    /** When the request expires unless decided (after 7 working days by default). */
    expiresAt: at,
    at,
    ...routingFields,
    /** The requester's time zone its dates are in; absent (requests from before issue 19): UTC. */
    zone: requesterZoneSchema.optional(),
    /**
     * Issue 20: leave on days already past, of a policy that may be recorded after the fact (sick):
     * the approver's card says so. Absent: not.
     */
    afterTheFact: z.literal(true).optional(),
  }),
  /** The approver's DM was posted: its buttons are the only ones that decide the request. */
  TimeOffApprovalAsked: z.object({ timeOffId: id, card: cardRefSchema, at }),
  /** A reminder went to the approver (1-based, in `remindAt` order). */
  TimeOffApproverReminded: z.object({ timeOffId: id, reminder: z.number().int().min(1), at }),
  /** Approved by the approver: the submission to HR is requested (request id `submitRequestId`). */
  TimeOffApproved: z.object({
    timeOffId: id,
    by: timeOffPersonSchema,
    submitRequestId: id,
    at,
    /** "Approve and cover with …": who covers the on-call conflicts (issue 12); absent otherwise. */
    cover: approvedCoverSchema.optional(),
    /** Issue 20, "Approve and ask for cover": the ranked colleagues are asked by DM; absent otherwise. */
    askForCover: z.literal(true).optional(),
  }),
  TimeOffDenied: z.object({
    timeOffId: id,
    by: timeOffPersonSchema,
    /** The approver's reason, as typed (escaped where shown); null when none was given. */
    reason: z.string().max(3000).nullable(),
    at,
  }),
  /**
   * HR answered the submission's POST with a 200 (recorded right after the answer; `since`: the
   * time taken just before the POST, from which HR's changes feed is searched for the new
   * request's id, as the submit answers none). From now on this submission is never posted again:
   * its attempts only look for the id, on the lag policy, so a crash or a retry cannot put the
   * same leave in HR twice.
   */
  TimeOffSubmissionSent: z.object({ timeOffId: id, submitRequestId: id, since: at, at }),
  /** HR accepted the submission: its request id; the read-back is requested. */
  TimeOffSubmitted: z.object({
    timeOffId: id,
    submitRequestId: id,
    hrRequestId: id,
    readBackRequestId: id,
    at,
  }),
  /** HR refused the submission (a 400, or the call failed for good): why, in words. */
  TimeOffSubmissionFailed: z.object({
    timeOffId: id,
    submitRequestId: id,
    /** What HR said was wrong (the field or the policy), for the requester. */
    reason: z.string().max(1000),
    at,
  }),
  /** The requester fixed what HR refused and submits again; `reapproval` when what was approved changed. */
  TimeOffResubmitted: timeOffAskSchema.extend({
    timeOffId: id,
    workingDays: z.number().min(0.5),
    reapproval: z.boolean(),
    /** The new submission's request id; null when it goes back to the approver first. */
    submitRequestId: id.nullable(),
    /** Issue 20: the fixed dates are past, recorded after the fact (as on `TimeOffRequested`). */
    afterTheFact: z.boolean().optional(),
    remindAt: z.array(at).max(10),
    expiresAt: at,
    at,
  }),
  /** Read back from HR: the request is there. */
  TimeOffConfirmed: z.object({
    timeOffId: id,
    readBackRequestId: id,
    hrStatus: z.string().max(40),
    at,
  }),
  /** Cancel asked by the requester after approval: HR must cancel it too (once HR's id is known). */
  TimeOffCancelRequested: z.object({
    timeOffId: id,
    cancelRequestId: id,
    /** Known once submitted; null while the submission is still on its way. */
    hrRequestId: id.nullable(),
    at,
  }),
  /**
   * Cancelled: before approval (nothing in HR), or HR confirmed the cancel, or it was cancelled in
   * HR, or (`left`) the requester left the company while it still waited for approval.
   */
  TimeOffCancelled: z.object({
    timeOffId: id,
    /** The call that cancelled it in HR; null when nothing had to be cancelled there. */
    cancelRequestId: id.nullable(),
    by: z.enum(['requester', 'hr', 'left']),
    at,
  }),
  /** HR would not cancel it (the cancel failed for good): it stands as it was, and why. */
  TimeOffCancelFailed: z.object({ timeOffId: id, cancelRequestId: id, reason: z.string().max(1000), at }),
  /** Not decided in time. */
  TimeOffExpired: z.object({ timeOffId: id, at }),
  /**
   * An HR call failed (`final`: no more attempts). `message` is in words for the requester, never
   * HR's text as it came. A final failure means:
   * - `submit` before the submission was sent (no `TimeOffSubmissionSent` for it): followed by
   *   `TimeOffSubmissionFailed`; the requester can send it again;
   * - `submit` after it was sent (`submissionSent` in the context names this `requestId`; code
   *   `SB_HR_NOT_VISIBLE`): HR took the POST but did not show the request within the lag policy
   *   (about 4 minutes). NOT a failed submission: HR may well have it. The request stays approved,
   *   and a later webhook or changes poll that finds it records `TimeOffSubmitted`. The requester
   *   is told it is approved and HR is slow to show it; resubmitting is not offered;
   * - `read_back` (code `SB_HR_NOT_VISIBLE` when HR kept answering 404): the request stays
   *   submitted; HR's webhooks or the changes poll can still confirm it;
   * - `cancel`: followed by `TimeOffCancelFailed`.
   * Code `SB_UPSTREAM_AUTH` with reason words "HR refused Switchboard's permission …" is a 403: an
   * operator was alerted (log code `HIBOB_PERMISSION_MISSING`).
   */
  TimeOffUpstreamCallFailed: upstreamCallFailedSchema(timeOffActionSchema),
  TimeOffUpstreamCallRetried: upstreamCallRetriedSchema(timeOffActionSchema),
  // ---- issue 12 (j-approvers)
  /**
   * The request's approver went away (`away`: leave covering today or the request's first day,
   * until `until`) or left the company (`left`) while it waited: it goes to `to`, the next one up
   * the requester's reporting line who can decide, or the HR channel (`isHrChannelApprover`). The
   * old card's buttons are dead from now on; reminders and expiry go on as scheduled.
   */
  TimeOffHandedOn: z.object({
    timeOffId: id,
    from: timeOffPersonSchema,
    to: timeOffPersonSchema,
    reason: z.enum(['away', 'left']),
    until: isoDate.nullable(),
    /** Everyone passed over on the way to `to` (the old approver first). */
    skipped: z.array(approverSkipSchema).max(50),
    at,
  }),
  /**
   * The approver left and nobody else can take the request (no one active up the reporting line,
   * no HR channel): it stays open, the requester is told to ask HR, and the daily sweep hands it
   * on as soon as HR names someone. Recorded once per approver.
   */
  TimeOffApproverGone: z.object({ timeOffId: id, approver: timeOffPersonSchema, at }),
  ...conflictEventDataSchemas,
} as const;

type Schemas = typeof timeOffEventDataSchemas;
type DataOf<T extends keyof Schemas> = z.infer<Schemas[T]>;

export type TimeOffEvent = { [T in keyof Schemas]: Event<T, DataOf<T>> }[keyof Schemas];
export type TimeOffEventType = TimeOffEvent['type'];
export type TimeOffEventOf<T extends TimeOffEventType> = Extract<TimeOffEvent, { type: T }>;

export const TIME_OFF_EVENT_TYPES = Object.keys(timeOffEventDataSchemas) as TimeOffEventType[];

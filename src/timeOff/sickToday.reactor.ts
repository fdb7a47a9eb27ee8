import { coverStreamId } from '../../machines/timeOff/cover.ts';
import { timeOffDecider, timeOffPhaseOf } from '../../machines/timeOff/decider.ts';
import type { ConflictShift, CoverCandidate } from '../../machines/timeOff/events.ts';
import {
  HR_TIME_OFF_STREAM_PREFIX,
  hrRequestIdOfStream,
  hrTimeOffEntrySchema,
} from '../../machines/timeOff/hrCalendar.ts';
import { requestIdOfStream, TIME_OFF_STREAM_PREFIX } from '../../machines/timeOff/streams.ts';
import { foldHistory } from '../application/fold.ts';
import { hasCode } from '../core/errors.ts';
import { uuidv5 } from '../core/ids.ts';
import type { Command, JsonObject } from '../core/messages.ts';
import type { RecordedEvent } from '../eventStore/eventStore.ts';
import type {
  Absences,
  AssignedIncident,
  IncidentResponses,
  OnCallLookups,
  OnCallShift,
  Pager,
  PersonRef,
} from '../lifecycles/ports.ts';
import {
  causedMetadata,
  type Dispatch,
  dispatchCommand,
  dispatchOrWarn,
} from '../processors/dispatchCommand.ts';
import { errorCodeOf } from '../processors/retryPolicy.ts';
import type { Processor, ProcessorContext } from '../processors/runner.ts';
import { escapeMrkdwn, mention, mrkdwn, type SlackMessage } from '../slack/blocks/format.ts';
import type { SlackOutbox } from '../slack/outbox.ts';
import { slackDate, slackDatesAsFallback } from '../slack/time.ts';
import { clipShift, coverCandidates } from './coverRanking.ts';
import { addDays, dayIn, localInstant } from './localDays.ts';
import { timeOffNoticeLedger } from './notices.reactor.ts';
import type { TimeOffReadModel } from './readModel.projection.ts';
import { pastAllowedFor } from './standing.ts';

/**
 * Issue 20 item 5, "sick today, on call today": when a request for sick leave (a policy recorded
 * after the fact, TIME_OFF_PAST_POLICIES) covers the requester's today, in their zone, and the
 * on-call lookup of the request (`TimeOffConflictsChecked`) found shifts of theirs left today, the
 * rest of today's shifts are covered at once by the top-ranked available colleague (the lookup's
 * first candidate: src/timeOff/coverRanking.ts), with no approval wait (the leave itself still
 * waits for its approver):
 *
 * - one `RequestCover` (reason `sick_today`, machines/timeOff/cover.ts): one override per schedule
 *   from now to the end of the requester's today; the cover stream makes them durably and DMs the
 *   colleague and the requester the outcome (src/timeOff/cover.reactor.ts);
 * - the requester's open incidents are reassigned to the colleague through the incidents'
 *   `incidentResponse.reassign` port (the incidents' own reassign command), and each incident's
 *   channels are told;
 * - the colleague gets one DM naming the shift's end (a Slack date token) and the incidents.
 *
 * Sick leave entered in HR's web app (`HrTimeOffRecorded`, not one of Switchboard's requests) does
 * the same, its shifts and colleagues looked up here (once per HR request and day).
 *
 * The leave cancelled (by the requester, in HR, or declined there) or denied: its sick-today cover
 * is withdrawn (`WithdrawCover`, as cancelled covered leave's is: src/timeOff/cover.reactor.ts
 * removes the overrides, redraws the colleague's DM and tells the channels). The cover's id is
 * found again from the request: one per `TimeOffConflictsChecked` of the request, one per day of an
 * HR entry (`hr:<id>:<day>`); only a cover stream that exists is withdrawn.
 *
 * The colleague is also told by SMS (`pager.notify`, a plain notice, not a page: once per cover,
 * Switchboard's own words only), when they have a verified phone.
 *
 * Everything is keyed on the checked event (cover id, reassign ids, outbox keys), so a redelivery
 * or a restart repeats nothing. Nobody to cover (no ranked colleague): the requester is told to
 * find someone.
 */
export const TIME_OFF_SICK_TODAY_PROCESSOR = 'timeoff-sick-today';
const ACTOR = 'system:timeoff-sick-today';

export type SickTodayOptions = Readonly<{
  dispatch: Dispatch;
  outbox: SlackOutbox;
  onCall: () => OnCallLookups | undefined;
  incidents: () => IncidentResponses | undefined;
  /** The verification lifecycle's pager: the SMS notice to the colleague (absent: DM only). */
  pager?: () => Pager | undefined;
  pastPolicies: readonly string[];
  /** For sick leave entered in HR's web app: who is who, their zone, their absences and names. */
  hr: () =>
    | Readonly<{
        readModel: TimeOffReadModel;
        /** The Slack user of an HR employee (linked, else found by their work email), or null. */
        slackUserOfEmployee(employeeHrId: string): Promise<string | null>;
        absences: Absences;
        zoneOf(slackUserId: string): Promise<string>;
        nameOf(slackUserId: string): Promise<string>;
      }>
    | undefined;
}>;

const ENDED = new Set(['denied', 'expired', 'cancelled', 'cancelling']);

/** Why the sick-today cover is withdrawn (shown to the colleague and whoever asked). */
const WITHDRAWN_BECAUSE: Readonly<Record<string, string>> = {
  requester: 'the requester cancelled the sick leave',
  hr: 'the sick leave was cancelled in HR',
  left: 'the requester left, and their sick leave was cancelled',
  denied: 'the sick leave was denied',
};

/** The most days of an HR entry searched for its covers (one a day, from its first day). */
const MAX_HR_DAYS = 62;

/** The sick-today cover's id: deterministic from what caused it (the checked event, or the HR entry and day). */
const coverIdOfKey = (key: string): string => uuidv5(`${TIME_OFF_SICK_TODAY_PROCESSOR}:${key}`);

export const createSickTodayReactor = (options: SickTodayOptions): Processor => {
  /** Withdraws each of these covers that exists (a redelivery withdraws nothing twice: the decider says nothing). */
  const withdraw = async (
    ctx: ProcessorContext,
    cause: RecordedEvent,
    coverIds: readonly string[],
    reason: string,
  ) => {
    for (const coverId of new Set(coverIds)) {
      if ((await ctx.store.readStream(coverStreamId(coverId))).length === 0) continue;
      await dispatchOrWarn(
        options.dispatch,
        {
          type: 'WithdrawCover',
          data: { coverId, reason },
          metadata: causedMetadata(
            TIME_OFF_SICK_TODAY_PROCESSOR,
            ACTOR,
            `withdraw:${cause.id}:${coverId}`,
            cause,
            ctx.now(),
          ),
        },
        ctx.logger,
        'sick today: the cover was not withdrawn',
      );
    }
  };

  /** Switchboard's request cancelled or denied: the covers of each of its on-call lookups. */
  const onEnded = async (event: RecordedEvent, ctx: ProcessorContext) => {
    const history = await ctx.store.readStream(event.streamId);
    const coverIds = history
      .filter((m) => m.kind === 'event' && m.type === 'TimeOffConflictsChecked')
      .map((m) => coverIdOfKey(m.id));
    const by = event.type === 'TimeOffDenied' ? 'denied' : String((event.data as { by?: unknown }).by);
    await withdraw(ctx, event, coverIds, WITHDRAWN_BECAUSE[by] ?? 'the sick leave was cancelled');
  };

  /** An HR entry cancelled (or declined, or deleted) in HR: its covers, one per day of the entry. */
  const onHrCancelled = async (event: RecordedEvent, ctx: ProcessorContext) => {
    const hrRequestId = hrRequestIdOfStream(event.streamId);
    if (hrRequestId === null) return;
    const entries = (await ctx.store.readStream(event.streamId))
      .filter((m) => m.kind === 'event' && m.type === 'HrTimeOffRecorded')
      .map((m) => hrTimeOffEntrySchema.safeParse(m.data))
      .flatMap((p) => (p.success ? [p.data] : []));
    const coverIds: string[] = [];
    for (const entry of entries) {
      if (!pastAllowedFor(entry.policyType, options.pastPolicies)) continue;
      for (let day = entry.startDate, n = 0; day <= entry.endDate && n < MAX_HR_DAYS; n++) {
        coverIds.push(coverIdOfKey(`hr:${hrRequestId}:${day}`));
        day = addDays(day, 1);
      }
    }
    await withdraw(ctx, event, coverIds, WITHDRAWN_BECAUSE.hr!);
  };

  const post = async (
    ctx: ProcessorContext,
    key: string,
    channel: string,
    words: Readonly<{ text: string }>,
  ) => {
    const message: SlackMessage = {
      text: slackDatesAsFallback(words.text),
      blocks: [{ type: 'section', text: mrkdwn(words.text) }],
    };
    const result = await options.outbox.post(ctx, {
      ledger: timeOffNoticeLedger,
      key,
      channel,
      message: async () => ({ message }),
    });
    if (result.outcome === 'refused') {
      ctx.logger.error(
        { key, code: errorCodeOf(result.error), slackError: result.slackError },
        'Slack refused a sick-today message',
      );
    }
  };

  const handOver = async (
    ctx: ProcessorContext,
    coverId: string,
    from: PersonRef,
    to: PersonRef,
  ): Promise<AssignedIncident[]> => {
    const onCall = options.onCall();
    const incidents = options.incidents();
    if (!onCall || !incidents?.reassign) return [];
    const handed: AssignedIncident[] = [];
    for (const found of (await onCall.openIncidentsOf(from)).slice(0, 50)) {
      if (!found.incident) continue;
      const outcome = await incidents.reassign({
        incident: found.incident,
        from,
        to,
        reassignId: `${coverId}:${found.incident}`,
        at: ctx.now(),
      });
      if (!outcome.ok) {
        ctx.logger.warn(
          { incident: found.incident },
          `sick today: an incident was not handed over: ${outcome.reason}`,
        );
        continue;
      }
      handed.push(found);
      const label = `${found.number !== null ? `#${found.number} ` : ''}${escapeMrkdwn(found.title)}`;
      for (const channel of found.channels) {
        await post(ctx, `sick-today-incident:${coverId}:${found.incident}:${channel}`, channel, {
          text: `${label}: ${mention(from.slackUserId)} is off sick today; ${mention(to.slackUserId)} has it now.`,
        });
      }
    }
    return handed;
  };

  type SickToday = Readonly<{
    /** Deterministic per sighting: the cover id and every key derive from it. */
    key: string;
    absent: Readonly<{ slackUserId: string; displayName: string }>;
    reason: Readonly<{ timeOffId: string | null; hrRequestId: string | null }>;
    shifts: readonly ConflictShift[];
    candidates: readonly CoverCandidate[];
    zone: string;
    cause: RecordedEvent;
  }>;

  /** Covers the rest of today's shifts, hands the incidents over and tells the colleague. */
  const coverRestOfToday = async (ctx: ProcessorContext, sick: SickToday) => {
    const now = ctx.now();
    const today = dayIn(now, sick.zone);
    const endOfToday = localInstant(addDays(today, 1), 0, sick.zone);
    const seen = new Set<string>();
    const slots = sick.shifts
      .filter((s) => s.scheduleId !== null)
      .map((s) => ({
        ...s,
        scheduleId: s.scheduleId as string,
        start: new Date(Math.max(Date.parse(s.start), now.getTime())).toISOString(),
        end: new Date(Math.min(Date.parse(s.end), endOfToday.getTime())).toISOString(),
      }))
      .filter((s) => {
        const key = `${s.scheduleId}|${s.start}|${s.end}`;
        if (Date.parse(s.end) <= Date.parse(s.start) || seen.has(key)) return false;
        seen.add(key);
        return true;
      });
    if (slots.length === 0) return;
    const coverId = coverIdOfKey(sick.key);
    const absent = sick.absent;
    const colleague = sick.candidates[0];
    if (!colleague) {
      await post(ctx, `sick-today-nobody:${coverId}`, absent.slackUserId, {
        text: `:warning: You're on call today and Switchboard found no colleague free to cover the rest of your shift. Please ask someone to take it, or cover it in the incident service.`,
      });
      return;
    }
    const command: Command = {
      type: 'RequestCover',
      data: {
        coverId,
        absent: { slackUserId: absent.slackUserId, displayName: absent.displayName },
        cover: { slackUserId: colleague.slackUserId, displayName: colleague.displayName },
        slots: slots.slice(0, 50).map((s) => ({
          scheduleId: s.scheduleId,
          scheduleName: s.scheduleName,
          escalationPolicyId: s.escalationPolicyId,
          escalationPolicyName: s.escalationPolicyName,
          level: s.level,
          start: s.start,
          end: s.end,
        })),
        requestedBy: absent.slackUserId,
        reason: {
          kind: 'sick_today',
          timeOffId: sick.reason.timeOffId,
          hrRequestId: sick.reason.hrRequestId,
        },
        notify: [colleague.slackUserId, absent.slackUserId],
      } as unknown as JsonObject,
      metadata: causedMetadata(TIME_OFF_SICK_TODAY_PROCESSOR, ACTOR, `request:${sick.key}`, sick.cause, now),
    };
    const outcome = await dispatchCommand(options.dispatch, command);
    if (outcome.outcome === 'rejected') {
      ctx.logger.warn({ code: outcome.code }, `sick today: the cover was refused: ${outcome.message}`);
      return;
    }
    const to = { slackUserId: colleague.slackUserId };
    const handed = await handOver(ctx, coverId, { slackUserId: absent.slackUserId }, to);
    const until = slots.reduce((m, s) => (s.end > m ? s.end : m), slots[0]!.end);
    const incidentsLine =
      handed.length === 0
        ? ''
        : ` Their open incidents are yours now: ${handed
            .map((i) => `${i.number !== null ? `#${i.number} ` : ''}${escapeMrkdwn(i.title)}`)
            .join(', ')}.`;
    await post(ctx, `sick-today-cover:${coverId}`, colleague.slackUserId, {
      text: `:face_with_thermometer: ${mention(absent.slackUserId)} is off sick today, so you're on call for them until ${slackDate(until)} (an override in the incident service).${incidentsLine}`,
    });
    // And by SMS: no names, times or words of anyone's (the details are in the DM).
    const pager = options.pager?.();
    if (pager?.notify) {
      const told = await pager.notify({
        person: to,
        noticeId: `sick:${coverId.replace(/-/g, '')}`,
        text: "Switchboard: a colleague is off sick, so you are on call for them for the rest of today's shift. Details in your Slack DMs.",
      });
      if (told !== 'sent' && told !== 'already_sent') {
        ctx.logger.info({ outcome: told }, 'sick today: no SMS to the colleague');
      }
    }
  };

  /** Switchboard's request: its on-call lookup (`TimeOffConflictsChecked`) found the shifts and ranked the colleagues. */
  const onChecked = async (event: RecordedEvent, ctx: ProcessorContext, timeOffId: string) => {
    const state = foldHistory(timeOffDecider, await ctx.store.readStream(event.streamId));
    const request = state.context.request;
    const conflicts = state.context.conflicts;
    if (!request || !conflicts || ENDED.has(timeOffPhaseOf(state))) return;
    if (conflicts.checkId !== (event.data as { checkId?: unknown }).checkId) return;
    if (!pastAllowedFor(request.policyType, options.pastPolicies)) return;
    const zone = request.zone ?? 'UTC';
    const today = dayIn(ctx.now(), zone);
    if (request.startDate > today || request.endDate < today) return;
    await coverRestOfToday(ctx, {
      key: event.id,
      absent: request.requester,
      reason: { timeOffId, hrRequestId: null },
      shifts: conflicts.shifts,
      candidates: conflicts.candidates,
      zone,
      cause: event,
    });
  };

  /**
   * Sick leave entered in HR's web app (its webhook or the changes poll): the shifts and the
   * colleagues are looked up here (a failed lookup is retried by the runner with the event).
   */
  const onHrEntry = async (event: RecordedEvent, ctx: ProcessorContext) => {
    const parsed = hrTimeOffEntrySchema.safeParse(event.data);
    const hr = options.hr();
    const onCall = options.onCall();
    if (!parsed.success || !hr || !onCall) return;
    const entry = parsed.data;
    if (entry.status === 'cancelled' || !pastAllowedFor(entry.policyType, options.pastPolicies)) return;
    await hr.readModel.catchUp();
    // Switchboard's own request, as HR shows it: handled from its own stream.
    if (hr.readModel.requestOfHrId(entry.hrRequestId)) return;
    if (hr.readModel.awaitingHrId(entry.employeeId, entry).length > 0) return;
    const slackUserId = await hr.slackUserOfEmployee(entry.employeeId);
    if (!slackUserId) return;
    const zone = await hr.zoneOf(slackUserId);
    const now = ctx.now();
    const today = dayIn(now, zone);
    if (entry.startDate > today || entry.endDate < today) return;
    const range = { since: now, until: localInstant(addDays(today, 1), 0, zone) };
    const person = { slackUserId };
    let found: Awaited<ReturnType<OnCallLookups['shiftsOf']>>;
    try {
      found = await onCall.shiftsOf(person, range);
    } catch (error) {
      if (hasCode(error, 'SB_UNMAPPED_USER')) return;
      throw error;
    }
    const clipped: { shift: OnCallShift; slot: ConflictShift }[] = [];
    for (const shift of found.shifts) {
      const slot = clipShift(shift, range);
      if (slot) clipped.push({ shift, slot });
    }
    if (!clipped.some((c) => c.slot.scheduleId !== null)) return;
    const candidates = await coverCandidates(
      { onCall, absences: hr.absences, nameOf: hr.nameOf, logger: ctx.logger },
      { requester: person, shifts: clipped, now },
    );
    await coverRestOfToday(ctx, {
      // Once per HR request and day, however often HR shows it changed.
      key: `hr:${entry.hrRequestId}:${today}`,
      absent: { slackUserId, displayName: await hr.nameOf(slackUserId) },
      reason: { timeOffId: null, hrRequestId: entry.hrRequestId },
      shifts: clipped.map((c) => c.slot),
      candidates,
      zone,
      cause: event,
    });
  };

  return {
    id: TIME_OFF_SICK_TODAY_PROCESSOR,
    filter: {
      streamPrefixes: [TIME_OFF_STREAM_PREFIX, HR_TIME_OFF_STREAM_PREFIX],
      eventTypes: [
        'TimeOffConflictsChecked',
        'HrTimeOffRecorded',
        'TimeOffCancelled',
        'TimeOffDenied',
        'HrTimeOffCancelled',
      ],
    },
    async handle(event, ctx) {
      if (event.kind !== 'event') return;
      if (event.type === 'HrTimeOffCancelled') {
        await onHrCancelled(event, ctx);
        return;
      }
      if (event.type === 'TimeOffCancelled' || event.type === 'TimeOffDenied') {
        await onEnded(event, ctx);
        return;
      }
      if (event.type === 'HrTimeOffRecorded') {
        await onHrEntry(event, ctx);
        return;
      }
      const timeOffId = requestIdOfStream(event.streamId);
      if (timeOffId !== null) await onChecked(event, ctx, timeOffId);
    },
  };
};

import { timeOffDecider, timeOffPhaseOf } from '../../machines/timeOff/decider.ts';
import { requestIdOfStream, TIME_OFF_STREAM_PREFIX } from '../../machines/timeOff/streams.ts';
import { foldHistory } from '../application/fold.ts';
import { uuidv5 } from '../core/ids.ts';
import type { Command, JsonObject } from '../core/messages.ts';
import type { RecordedEvent } from '../eventStore/eventStore.ts';
import type { AssignedIncident, IncidentResponses, OnCallLookups, PersonRef } from '../lifecycles/ports.ts';
import { type Dispatch, dispatchCommand } from '../processors/dispatchCommand.ts';
import { errorCodeOf } from '../processors/retryPolicy.ts';
import type { Processor, ProcessorContext } from '../processors/runner.ts';
import { escapeMrkdwn, mention, mrkdwn, type SlackMessage } from '../slack/blocks/format.ts';
import type { SlackOutbox } from '../slack/outbox.ts';
import { slackDate, slackDatesAsFallback } from '../slack/time.ts';
import { addDays, dayIn, localInstant } from './localDays.ts';
import { timeOffNoticeLedger } from './notices.reactor.ts';
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
  pastPolicies: readonly string[];
}>;

const ENDED = new Set(['denied', 'expired', 'cancelled', 'cancelling']);

export const createSickTodayReactor = (options: SickTodayOptions): Processor => {
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

  const onChecked = async (event: RecordedEvent, ctx: ProcessorContext, timeOffId: string) => {
    const state = foldHistory(timeOffDecider, await ctx.store.readStream(event.streamId));
    const request = state.context.request;
    const conflicts = state.context.conflicts;
    if (!request || !conflicts || ENDED.has(timeOffPhaseOf(state))) return;
    if (conflicts.checkId !== (event.data as { checkId?: unknown }).checkId) return;
    if (!pastAllowedFor(request.policyType, options.pastPolicies)) return;
    const zone = request.zone ?? 'UTC';
    const now = ctx.now();
    const today = dayIn(now, zone);
    if (request.startDate > today || request.endDate < today) return;
    const endOfToday = localInstant(addDays(today, 1), 0, zone);
    const seen = new Set<string>();
    const slots = conflicts.shifts
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
    const coverId = uuidv5(`${TIME_OFF_SICK_TODAY_PROCESSOR}:${event.id}`);
    const absent = request.requester;
    const colleague = conflicts.candidates[0];
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
        reason: { kind: 'sick_today', timeOffId },
        notify: [colleague.slackUserId, absent.slackUserId],
      } as unknown as JsonObject,
      metadata: {
        now: now.toISOString(),
        commandId: uuidv5(`${TIME_OFF_SICK_TODAY_PROCESSOR}:request:${event.id}`),
        actor: ACTOR,
        causationId: event.id,
      },
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
  };

  return {
    id: TIME_OFF_SICK_TODAY_PROCESSOR,
    filter: { streamPrefixes: [TIME_OFF_STREAM_PREFIX], eventTypes: ['TimeOffConflictsChecked'] },
    async handle(event, ctx) {
      if (event.kind !== 'event') return;
      const timeOffId = requestIdOfStream(event.streamId);
      if (timeOffId !== null) await onChecked(event, ctx, timeOffId);
    },
  };
};

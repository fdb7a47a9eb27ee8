import {
  SHIFT_WATCH_STREAM_PREFIX,
  shiftWatchDecider,
  shiftWatchMinute,
  shiftWatchStreamId,
} from '../../machines/incident/shiftWatch.ts';
import type { CommandRoute } from '../application/dispatch.ts';
import type { Clock } from '../core/clock.ts';
import { ValidationError } from '../core/errors.ts';
import type { Command } from '../core/messages.ts';
import type { EventStore } from '../eventStore/eventStore.ts';
import type { PhoneStandings } from '../lifecycles/ports.ts';
import type { IdentityResolver } from '../people/identity.ts';
import type { ProcessorLogger } from '../processors/ports.ts';
import type { Processor, ProcessorContext } from '../processors/runner.ts';
import { scheduleTimer } from '../processors/scheduler.ts';
import type { SlackOutbox } from '../slack/outbox.ts';
import type { PagerDutyClient } from '../upstream/pagerduty.ts';
import { incidentLabel } from './blocks/incidentCard.ts';
import { toIncidentView } from './blocks/incidentView.ts';
import { handoffPost, type OpenIncidentLine, shiftStartDm } from './blocks/shiftNotices.ts';
import { readIncidentState } from './incidentState.ts';
import { incidentNoticeLedger } from './notices.reactor.ts';
import { listOnCallsInRange } from './onCall.ts';
import type { IncidentReadModels } from './readModels.projection.ts';
import type { ServiceDirectory } from './services.ts';
import { planWatch, type RotaEntry } from './shiftPlan.ts';

/**
 * `oncall-shift-notices` (issue 20 item 4): shifts people see coming.
 *
 * A chain of durable timers (`oncall-watch-<YYYYMMDDHHMM>`, src/processors/scheduler.ts) records an
 * `OnCallShiftsWatched` per minute it looks (machines/incident/shiftWatch.ts); on each, this
 * processor asks the incident service for the on-call entries around now (`GET /oncalls` through
 * `listOnCallsInRange`, the same reading as `/oncall` and the on-call port: the final rota, so a
 * cover's override puts the cover on call, not the absent person) and, by the rules of
 * src/incidents/shiftPlan.ts:
 *
 * - DMs each person whose shift starts within `noticeMs` (SHIFT_NOTICE_HOURS): the schedule, its
 *   hours (Slack date tokens, the DM's fallbacks in its reader's zone), the incidents open on the
 *   services whose escalation policy uses the schedule, and whether their phone can be paged (the
 *   `phoneStanding` port of the verification lifecycle; nothing said when it is off);
 * - posts a handoff in the channels subscribed to the schedule's services when it changes hands
 *   (who hands to whom, what is still open);
 * - schedules the next watch first, so a failure here does not end the chain.
 *
 * Every message goes through the outbox under a key per shift or handoff (and channel) in the
 * incident notices' ledger: a redelivery, a re-fired timer or a second chain sends nothing twice.
 * At each start (`onCaughtUp`) a watch is scheduled for the coming minute, so a store without one,
 * or one whose chain was lost, is watched again; chains meet on the next whole hour at the latest
 * (the plan's rule), and a timer id scheduled twice is scheduled once.
 */
export const SHIFT_NOTICES_PROCESSOR = 'oncall-shift-notices';
const ACTOR = 'system:oncall-shift-notices';
const HOUR = 3_600_000;
/** A handoff found later than this after it happened (a long outage) is not posted. */
const HANDOFF_LOOKBACK_MS = HOUR;

export const shiftWatchTimerId = (minute: string): string => `oncall-watch-${minute}`;

export type ShiftNoticesOptions = Readonly<{
  pagerduty: Pick<PagerDutyClient, 'listOnCalls'>;
  services: Pick<ServiceDirectory, 'all'>;
  readModels: Pick<IncidentReadModels, 'catchUp' | 'openIncidents' | 'channelsForService' | 'slackUserOf'>;
  identity: Pick<IdentityResolver, 'slackUserFor'>;
  outbox: SlackOutbox;
  /** The verification lifecycle's port, when it is on. */
  phoneStanding: () => PhoneStandings | undefined;
  noticeMs: number;
}>;

export const scheduleShiftWatch = async (
  store: EventStore,
  at: number,
  now: Date,
  causationId?: string,
): Promise<void> => {
  const minute = shiftWatchMinute(new Date(at));
  await scheduleTimer(store, {
    timerId: shiftWatchTimerId(minute),
    dueAt: new Date(at),
    now,
    command: {
      type: 'WatchOnCallShifts',
      data: { minute },
      metadata: { actor: ACTOR, ...(causationId ? { causationId } : {}) },
    },
  });
};

export const createShiftNoticesReactor = (options: ShiftNoticesOptions): Processor => {
  let started: { store: EventStore; clock: Clock; logger: ProcessorLogger } | null = null;

  const slackUserOf = async (userId: string): Promise<string | null> =>
    options.readModels.slackUserOf(userId) ?? (await options.identity.slackUserFor(userId));

  /** The open incidents on the services whose escalation policy is one of `policies`, with their channels. */
  const rotaOf = async (ctx: ProcessorContext, policies: ReadonlySet<string>) => {
    const services = (await options.services.all()).filter(
      (s) => s.escalationPolicyId !== null && policies.has(s.escalationPolicyId),
    );
    const serviceIds = new Set(services.map((s) => s.id));
    const channels = [...new Set(services.flatMap((s) => options.readModels.channelsForService(s.id)))];
    const open: OpenIncidentLine[] = [];
    for (const row of options.readModels.openIncidents()) {
      if (row.serviceId === null || !serviceIds.has(row.serviceId)) continue;
      const { state } = await readIncidentState(ctx.store, row.streamId);
      const view = toIncidentView(row.streamId, state);
      if (view.status !== 'triggered' && view.status !== 'acknowledged') continue;
      open.push({ label: incidentLabel(view), status: view.status });
    }
    open.sort((a, b) => a.label.localeCompare(b.label));
    return { channels, open };
  };

  return {
    id: SHIFT_NOTICES_PROCESSOR,
    filter: { streamPrefixes: [SHIFT_WATCH_STREAM_PREFIX], eventTypes: ['OnCallShiftsWatched'] },
    onStart(ctx) {
      started = { store: ctx.store, clock: ctx.clock, logger: ctx.logger };
    },
    onCaughtUp() {
      const s = started;
      if (!s) return;
      const now = s.clock.now();
      const nextMinute = (Math.floor(now.getTime() / 60_000) + 1) * 60_000;
      scheduleShiftWatch(s.store, nextMinute, now).catch((err: unknown) => {
        // The next start tries again; a chain already scheduled goes on.
        s.logger.warn({ err }, 'could not schedule the next on-call watch at start');
      });
    },
    async handle(event, ctx) {
      if (event.kind !== 'event' || !event.streamId.startsWith(SHIFT_WATCH_STREAM_PREFIX)) return;
      const at = ctx.now().getTime();
      const rows = await listOnCallsInRange(
        { pagerduty: options.pagerduty },
        {},
        { since: new Date(at - HANDOFF_LOOKBACK_MS), until: new Date(at + options.noticeMs + HOUR) },
      );
      const names = new Map<string, string>();
      const entries: RotaEntry[] = [];
      for (const o of rows) {
        if (!o.schedule || !o.start) continue;
        names.set(o.user.id, o.user.name ?? o.user.summary ?? o.user.id);
        entries.push({
          scheduleId: o.schedule.id,
          scheduleName: o.schedule.summary ?? null,
          escalationPolicyId: o.escalation_policy.id,
          userId: o.user.id,
          start: Date.parse(o.start),
          end: o.end ? Date.parse(o.end) : null,
        });
      }
      const plan = planWatch({ entries, at, noticeMs: options.noticeMs, lookbackMs: HANDOFF_LOOKBACK_MS });
      // The chain first: whatever fails below, the watch goes on.
      await scheduleShiftWatch(ctx.store, plan.nextAt, ctx.now(), event.id);
      if (plan.shifts.length === 0 && plan.handoffs.length === 0) return;

      await options.readModels.catchUp();
      const policiesOf = (scheduleId: string) =>
        new Set(entries.filter((e) => e.scheduleId === scheduleId).map((e) => e.escalationPolicyId));

      for (const shift of plan.shifts) {
        const slackUserId = await slackUserOf(shift.userId);
        if (!slackUserId) {
          ctx.logger.info(
            { scheduleId: shift.scheduleId },
            'on-call shift notice: the person on call has no Slack user; not told',
          );
          continue;
        }
        await options.outbox.post(ctx, {
          ledger: incidentNoticeLedger,
          key: shift.key,
          channel: slackUserId,
          since: event.recordedAt,
          message: async () => {
            const { open } = await rotaOf(ctx, policiesOf(shift.scheduleId));
            const port = options.phoneStanding();
            const phone = port ? await port.standingOf({ slackUserId }) : null;
            return { message: shiftStartDm({ ...shift, open, phone }) };
          },
        });
      }

      for (const handoff of plan.handoffs) {
        const { channels, open } = await rotaOf(ctx, policiesOf(handoff.scheduleId));
        if (channels.length === 0) continue;
        const person = async (userId: string) => ({
          slackUserId: await slackUserOf(userId),
          name: names.get(userId) ?? userId,
        });
        const message = handoffPost({
          ...handoff,
          from: handoff.from === null ? null : await person(handoff.from),
          to: await person(handoff.to),
          open,
        });
        for (const channel of channels) {
          await options.outbox.post(ctx, {
            ledger: incidentNoticeLedger,
            key: `${handoff.key}:${channel}`,
            channel,
            since: event.recordedAt,
            message,
          });
        }
      }
    },
  };
};

/** The watch's command goes to its minute's stream (`oncallwatch-<minute>`). */
export const shiftWatchRoutes: Readonly<Record<string, CommandRoute>> = {
  WatchOnCallShifts: {
    decider: shiftWatchDecider as unknown as CommandRoute['decider'],
    streamId: (command: Command) => {
      try {
        return shiftWatchStreamId(String((command.data as { minute?: unknown }).minute));
      } catch {
        throw new ValidationError(`${command.type} names no minute`, {
          details: { reason: 'invalid_minute' },
        });
      }
    },
  },
};

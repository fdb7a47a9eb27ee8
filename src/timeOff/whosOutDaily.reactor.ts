import { employeeById } from '../../machines/timeOff/directory.ts';
import {
  WHOS_OUT_DAY_STREAM_PREFIX,
  whosOutDailyDecider,
  whosOutDayStreamId,
} from '../../machines/timeOff/whosOutDaily.ts';
import type { CommandRoute } from '../application/dispatch.ts';
import type { Clock } from '../core/clock.ts';
import { ValidationError } from '../core/errors.ts';
import type { Command } from '../core/messages.ts';
import type { EventStore } from '../eventStore/eventStore.ts';
import type { ProcessorLogger } from '../processors/ports.ts';
import type { Processor } from '../processors/runner.ts';
import { scheduleTimer } from '../processors/scheduler.ts';
import type { SlackOutbox } from '../slack/outbox.ts';
import type { HiBobClient } from '../upstream/hibob.ts';
import { type WhosOutTodayRow, whosOutTodayPost } from './blocks/whosOutDaily.ts';
import type { WhosOutDailyConfig } from './config.ts';
import { addDays, dayIn, localInstant } from './localDays.ts';
import { timeOffNoticeLedger } from './notices.reactor.ts';
import type { TimeOffReadModel } from './readModel.projection.ts';
import { mergeWhosOut } from './whosOut.ts';

/**
 * `timeoff-whos-out-daily` (issue 20 item 7): each configured channel gets who is out today and
 * until when, once a day at the configured local time.
 *
 * A durable timer per day (`timeoff-whosout-<day>`, due at WHOS_OUT_TIME in WHOS_OUT_TIME_ZONE)
 * records `WhosOutDayReached` once (machines/timeOff/whosOutDaily.ts); on it this processor
 * schedules the next day's timer first, then posts to each channel through the outbox under
 * `whosout:<day>:<channel>` in the time-off notices' ledger: a redelivery, a re-fired timer or a
 * restart posts nothing twice. A timer that fires once its day is over (Switchboard was down all
 * day) posts nothing. At each start (`onCaughtUp`) the coming post's timer is scheduled (today's
 * if its time has not passed, else tomorrow's); a timer scheduled twice is scheduled once.
 *
 * Who is out: approved leave only, Switchboard's requests and HR's who's out merged as `/whosout`
 * does (src/timeOff/whosOut.ts), people HR says left excluded; the kind of leave named only when
 * it is one of WHOS_OUT_SHOWN_KINDS.
 */
export const WHOS_OUT_DAILY_PROCESSOR = 'timeoff-whos-out-daily';
const ACTOR = 'system:timeoff-whos-out-daily';

export const whosOutTimerId = (day: string): string => `timeoff-whosout-${day}`;

export type WhosOutDailyOptions = Readonly<{
  config: WhosOutDailyConfig;
  client: Pick<HiBobClient, 'whosOut'>;
  readModel: TimeOffReadModel;
  outbox: SlackOutbox;
}>;

/** When the post of `day` is due. */
export const whosOutDueAt = (config: WhosOutDailyConfig, day: string): Date =>
  localInstant(day, config.minuteOfDay / 60, config.timeZone);

const scheduleDay = async (
  store: EventStore,
  config: WhosOutDailyConfig,
  day: string,
  now: Date,
  causationId?: string,
) => {
  const dueAt = whosOutDueAt(config, day);
  await scheduleTimer(store, {
    timerId: whosOutTimerId(day),
    dueAt,
    now,
    command: {
      type: 'PostWhosOutToday',
      data: { day, dueAt: dueAt.toISOString() },
      metadata: { actor: ACTOR, ...(causationId ? { causationId } : {}) },
    },
  });
};

export const createWhosOutDailyReactor = (options: WhosOutDailyOptions): Processor => {
  const { config, readModel } = options;
  let started: { store: EventStore; clock: Clock; logger: ProcessorLogger } | null = null;

  const rowsFor = async (day: string): Promise<{ rows: WhosOutTodayRow[]; hrUnreachable: boolean }> => {
    const fromHr = await options.client
      .whosOut({ from: day, to: day, includePending: false })
      .then((v) => ({ ok: true as const, v }))
      .catch(() => ({ ok: false as const }));
    await readModel.catchUp();
    const directory = readModel.directory();
    const merged = mergeWhosOut(readModel.absences({ from: day, to: day }), fromHr.ok ? fromHr.v : [], {
      slackUserOf: (id) => readModel.slackUserOfEmployee(id),
      nameOf: (id) => employeeById(directory, id)?.displayName ?? null,
    });
    const shown = new Set(config.shownKinds.map((k) => k.toLowerCase()));
    const seen = new Set<string>();
    const rows: WhosOutTodayRow[] = [];
    for (const r of merged) {
      if (r.status !== 'approved') continue;
      if (employeeById(directory, r.employeeHrId)?.status === 'left') continue;
      if (seen.has(r.employeeHrId)) continue;
      seen.add(r.employeeHrId);
      rows.push({
        slackUserId: r.slackUserId,
        displayName: r.displayName,
        kind: r.policyType && shown.has(r.policyType.toLowerCase()) ? r.policyType : null,
        lastDay: r.endDate,
        portionToday:
          r.startDate === day && r.startPortion === 'afternoon'
            ? 'afternoon'
            : r.endDate === day && r.endPortion === 'morning'
              ? 'morning'
              : 'all_day',
      });
    }
    rows.sort((a, b) => a.displayName.localeCompare(b.displayName));
    return { rows, hrUnreachable: !fromHr.ok };
  };

  return {
    id: WHOS_OUT_DAILY_PROCESSOR,
    filter: { streamPrefixes: [WHOS_OUT_DAY_STREAM_PREFIX], eventTypes: ['WhosOutDayReached'] },
    onStart(ctx) {
      started = { store: ctx.store, clock: ctx.clock, logger: ctx.logger };
    },
    onCaughtUp() {
      const s = started;
      if (!s || config.channels.length === 0) return;
      const now = s.clock.now();
      const today = dayIn(now, config.timeZone);
      const day = whosOutDueAt(config, today).getTime() >= now.getTime() ? today : addDays(today, 1);
      scheduleDay(s.store, config, day, now).catch((err: unknown) => {
        // The next start tries again; a chain already scheduled goes on.
        s.logger.warn({ err }, "could not schedule the next who's-out post at start");
      });
    },
    async handle(event, ctx) {
      if (event.kind !== 'event' || !event.streamId.startsWith(WHOS_OUT_DAY_STREAM_PREFIX)) return;
      const day = (event.data as { day?: unknown }).day;
      if (typeof day !== 'string' || config.channels.length === 0) return;
      const now = ctx.now();
      const today = dayIn(now, config.timeZone);
      // The chain first: tomorrow (or, after a long outage, the next day still to come).
      const next = addDays(day > today ? day : today, 1);
      await scheduleDay(ctx.store, config, next, now, event.id);
      if (day !== today) return;
      const { rows, hrUnreachable } = await rowsFor(day);
      const message = whosOutTodayPost({ day, zone: config.timeZone, rows, hrUnreachable });
      for (const channel of config.channels) {
        const result = await options.outbox.post(ctx, {
          ledger: timeOffNoticeLedger,
          key: `whosout:${day}:${channel}`,
          channel,
          since: event.recordedAt,
          message,
        });
        if (result.outcome === 'refused') {
          ctx.logger.warn(
            { channel, slackError: result.slackError },
            "who's out: Slack refused the daily post (is the bot in the channel?)",
          );
        }
      }
    },
  };
};

/** The day's command goes to its day's stream (`whosoutday-<day>`). */
export const whosOutDailyRoutes: Readonly<Record<string, CommandRoute>> = {
  PostWhosOutToday: {
    decider: whosOutDailyDecider as unknown as CommandRoute['decider'],
    streamId: (command: Command) => {
      try {
        return whosOutDayStreamId(String((command.data as { day?: unknown }).day));
      } catch {
        throw new ValidationError(`${command.type} names no day`, { details: { reason: 'invalid_day' } });
      }
    },
  },
};

import { z } from 'zod';
import { eventParser } from '../shared/eventSchemas.ts';
import { type Decider, DecisionRejected } from '../shared/machineDecider.ts';
import { type Command, type Event, exhaustive } from '../shared/messages.ts';

/**
 * Issue 20 item 7: the daily "who's out" post, one stream per day of the configured zone
 * (`whosoutday-<YYYY-MM-DD>`). A durable timer due at the configured local time sends
 * `PostWhosOutToday`; the first one records `WhosOutDayReached` (a redelivered or re-fired timer
 * records nothing), on which the who's-out processor (src/timeOff/whosOutDaily.reactor.ts) posts to
 * each configured channel once and schedules the next day.
 */
export const WHOS_OUT_DAY_STREAM_PREFIX = 'whosoutday-';

const day = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'must be a YYYY-MM-DD date');

export const whosOutDayStreamId = (d: string): string => {
  if (!day.safeParse(d).success) throw new TypeError(`not a day: ${JSON.stringify(d)}`);
  return WHOS_OUT_DAY_STREAM_PREFIX + d;
};

export const whosOutDailyEventDataSchemas = {
  WhosOutDayReached: z.object({ day, dueAt: z.string().min(1), at: z.string().min(1) }),
} as const;

type EventSchemas = typeof whosOutDailyEventDataSchemas;
export type WhosOutDailyEvent = {
  [T in keyof EventSchemas]: Event<T, z.infer<EventSchemas[T]>>;
}[keyof EventSchemas];

export const whosOutDailyCommandDataSchemas = {
  PostWhosOutToday: z.object({ day, dueAt: z.string().datetime() }),
} as const;

type CommandSchemas = typeof whosOutDailyCommandDataSchemas;
export type WhosOutDailyCommand = {
  [T in keyof CommandSchemas]: Command<T, z.infer<CommandSchemas[T]>>;
}[keyof CommandSchemas];

export type WhosOutDailyState = Readonly<{ reachedAt: string | null }>;

const decide = (command: WhosOutDailyCommand, state: WhosOutDailyState): WhosOutDailyEvent[] => {
  switch (command.type) {
    case 'PostWhosOutToday': {
      if (state.reachedAt !== null) return [];
      const now = command.metadata.now;
      if (Date.parse(now) < Date.parse(command.data.dueAt)) {
        throw new DecisionRejected(`Who's out of ${command.data.day} is not due yet.`, { reason: 'not_due' });
      }
      return [
        { type: 'WhosOutDayReached', data: { day: command.data.day, dueAt: command.data.dueAt, at: now } },
      ];
    }
    default:
      return exhaustive(command.type, "who's out command");
  }
};

const evolve = (_state: WhosOutDailyState, event: WhosOutDailyEvent): WhosOutDailyState => {
  switch (event.type) {
    case 'WhosOutDayReached':
      return { reachedAt: event.data.at };
    default:
      return exhaustive(event.type, "who's out event");
  }
};

export const whosOutDailyDecider: Decider<WhosOutDailyState, WhosOutDailyCommand, WhosOutDailyEvent> = {
  decide,
  evolve,
  initialState: () => ({ reachedAt: null }),
  parseEvent: eventParser<WhosOutDailyEvent>("who's out daily", { schemas: whosOutDailyEventDataSchemas }),
  commandSchemas: whosOutDailyCommandDataSchemas,
};

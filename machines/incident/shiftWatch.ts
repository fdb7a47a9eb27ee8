import { z } from 'zod';
import { eventParser } from '../shared/eventSchemas.ts';
import { type Decider, DecisionRejected } from '../shared/machineDecider.ts';
import { type Command, type Event, exhaustive } from '../shared/messages.ts';

/**
 * Issue 20 item 4: the watch over on-call shifts, one stream per moment it looks
 * (`oncallwatch-<YYYYMMDDHHMM>`, UTC). A durable timer due at that minute sends `WatchOnCallShifts`;
 * the first one records `OnCallShiftsWatched` (a redelivered or re-fired timer records nothing),
 * on which the shift-notices processor (src/incidents/shiftNotices.reactor.ts) sends the DMs of
 * shifts about to start and the handoff posts of rotas that just changed hands, then schedules
 * the next watch.
 */
export const SHIFT_WATCH_STREAM_PREFIX = 'oncallwatch-';

const minute = z.string().regex(/^\d{12}$/, 'must be a UTC minute, YYYYMMDDHHMM');

/** `2026-11-29T12:00:00.000Z` → `202611291200`. */
export const shiftWatchMinute = (at: Date): string =>
  at
    .toISOString()
    .replace(/[^0-9]/g, '')
    .slice(0, 12);

export const shiftWatchStreamId = (m: string): string => {
  if (!minute.safeParse(m).success) throw new TypeError(`not a watch minute: ${JSON.stringify(m)}`);
  return SHIFT_WATCH_STREAM_PREFIX + m;
};

export const shiftWatchEventDataSchemas = {
  OnCallShiftsWatched: z.object({ minute, at: z.string().min(1) }),
} as const;

type EventSchemas = typeof shiftWatchEventDataSchemas;
export type ShiftWatchEvent = {
  [T in keyof EventSchemas]: Event<T, z.infer<EventSchemas[T]>>;
}[keyof EventSchemas];

export const shiftWatchCommandDataSchemas = {
  WatchOnCallShifts: z.object({ minute }),
} as const;

type CommandSchemas = typeof shiftWatchCommandDataSchemas;
export type ShiftWatchCommand = {
  [T in keyof CommandSchemas]: Command<T, z.infer<CommandSchemas[T]>>;
}[keyof CommandSchemas];

export type ShiftWatchState = Readonly<{ watchedAt: string | null }>;

const startOfMinute = (m: string): string =>
  `${m.slice(0, 4)}-${m.slice(4, 6)}-${m.slice(6, 8)}T${m.slice(8, 10)}:${m.slice(10, 12)}:00.000Z`;

const decide = (command: ShiftWatchCommand, state: ShiftWatchState): ShiftWatchEvent[] => {
  switch (command.type) {
    case 'WatchOnCallShifts': {
      if (state.watchedAt !== null) return [];
      const now = command.metadata.now;
      if (Date.parse(now) < Date.parse(startOfMinute(command.data.minute))) {
        throw new DecisionRejected(`The on-call watch of ${command.data.minute} is not due yet.`, {
          reason: 'not_due',
        });
      }
      return [{ type: 'OnCallShiftsWatched', data: { minute: command.data.minute, at: now } }];
    }
    default:
      return exhaustive(command.type, 'on-call watch command');
  }
};

const evolve = (_state: ShiftWatchState, event: ShiftWatchEvent): ShiftWatchState => {
  switch (event.type) {
    case 'OnCallShiftsWatched':
      return { watchedAt: event.data.at };
    default:
      return exhaustive(event.type, 'on-call watch event');
  }
};

export const shiftWatchDecider: Decider<ShiftWatchState, ShiftWatchCommand, ShiftWatchEvent> = {
  decide,
  evolve,
  initialState: () => ({ watchedAt: null }),
  parseEvent: eventParser<ShiftWatchEvent>('on-call watch', { schemas: shiftWatchEventDataSchemas }),
  commandSchemas: shiftWatchCommandDataSchemas,
};

import { z } from 'zod';
import { eventParser } from '../shared/eventSchemas.ts';
import { type Decider, DecisionRejected } from '../shared/machineDecider.ts';
import { type Command, type Event, exhaustive } from '../shared/messages.ts';

/**
 * Issue 12: the daily re-check of requests waiting for an approver, one stream per UTC day
 * (`timeoffsweep-<YYYY-MM-DD>`). A durable timer due at the start of the day sends
 * `SweepTimeOffApprovers`; the first one records `TimeOffApproversSwept` (a redelivered or
 * re-fired timer records nothing), on which the hand-on processor (src/timeOff/handOn.reactor.ts)
 * hands on every waiting request whose approver is away from that day or has left, and schedules
 * the next day's sweep while requests still wait.
 */
export const HAND_ON_SWEEP_STREAM_PREFIX = 'timeoffsweep-';

const day = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'must be a YYYY-MM-DD date');

export const handOnSweepStreamId = (d: string): string => {
  if (!day.safeParse(d).success) throw new TypeError(`not a day: ${JSON.stringify(d)}`);
  return HAND_ON_SWEEP_STREAM_PREFIX + d;
};

export const handOnSweepEventDataSchemas = {
  TimeOffApproversSwept: z.object({ day, at: z.string().min(1) }),
} as const;

type EventSchemas = typeof handOnSweepEventDataSchemas;
export type HandOnSweepEvent = {
  [T in keyof EventSchemas]: Event<T, z.infer<EventSchemas[T]>>;
}[keyof EventSchemas];

export const handOnSweepCommandDataSchemas = {
  SweepTimeOffApprovers: z.object({ day }),
} as const;

type CommandSchemas = typeof handOnSweepCommandDataSchemas;
export type HandOnSweepCommand = {
  [T in keyof CommandSchemas]: Command<T, z.infer<CommandSchemas[T]>>;
}[keyof CommandSchemas];

export type HandOnSweepState = Readonly<{ sweptAt: string | null }>;

const decide = (command: HandOnSweepCommand, state: HandOnSweepState): HandOnSweepEvent[] => {
  switch (command.type) {
    case 'SweepTimeOffApprovers': {
      if (state.sweptAt !== null) return [];
      const now = command.metadata.now;
      if (now.slice(0, 10) < command.data.day) {
        throw new DecisionRejected(`The sweep of ${command.data.day} is not due yet.`, { reason: 'not_due' });
      }
      return [{ type: 'TimeOffApproversSwept', data: { day: command.data.day, at: now } }];
    }
    default:
      return exhaustive(command.type, 'hand-on sweep command');
  }
};

const evolve = (_state: HandOnSweepState, event: HandOnSweepEvent): HandOnSweepState => {
  switch (event.type) {
    case 'TimeOffApproversSwept':
      return { sweptAt: event.data.at };
    default:
      return exhaustive(event.type, 'hand-on sweep event');
  }
};

export const handOnSweepDecider: Decider<HandOnSweepState, HandOnSweepCommand, HandOnSweepEvent> = {
  decide,
  evolve,
  initialState: () => ({ sweptAt: null }),
  parseEvent: eventParser<HandOnSweepEvent>('time-off sweep', { schemas: handOnSweepEventDataSchemas }),
  commandSchemas: handOnSweepCommandDataSchemas,
};

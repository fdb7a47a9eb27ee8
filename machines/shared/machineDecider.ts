import {
  type AnyMachineSnapshot,
  type AnyStateMachine,
  initialTransition,
  type SnapshotFrom,
  transition,
} from 'xstate';
import type { z } from 'zod';
import { type EventDeclarations, eventParser, type StoredEvent } from './eventSchemas.ts';
import type { Command, Event } from './messages.ts';

/** The zod schema of each command type's `data`. */
export type CommandDataSchemas<C extends Command> = {
  readonly [T in C['type']]: z.ZodType<Extract<C, { type: T }>['data']>;
};

/**
 * decide / evolve / initialState, as in emmett's Decider: pure and total, with time, ids and the
 * actor carried on the command (`metadata`), never read inside. `decide` always returns an array
 * (`[]` for a no-op) or throws a DecisionRejected.
 *
 * `parseEvent` and `commandSchemas` are how a lifecycle says what its messages look like: whoever
 * folds a stream passes every stored event through `parseEvent` (upcast, then zod) before
 * `evolve`, and the command bus checks a command's data against `commandSchemas` before `decide`.
 */
export type Decider<State, C extends Command, E extends Event> = Readonly<{
  decide: (command: C, state: State) => E[];
  evolve: (state: State, event: E) => State;
  initialState: () => State;
  /** A stored event in today's typed shape; throws MalformedEvent (SB_STORE_CORRUPT). */
  parseEvent?: (stored: StoredEvent) => E;
  /** Schemas of the commands' `data`, by command type. */
  commandSchemas?: Readonly<Partial<Record<string, z.ZodType>>>;
}>;

/**
 * A command the lifecycle refuses in its current state. Carries the same `code` as
 * src/core/errors.ts IllegalStateError (machines/ may not import src/); command handling
 * translates it at the boundary.
 */
export class DecisionRejected extends Error {
  readonly code = 'SB_ILLEGAL_STATE';
  readonly details: Readonly<Record<string, unknown>>;
  constructor(message: string, details: Readonly<Record<string, unknown>> = {}) {
    super(message);
    this.name = 'DecisionRejected';
    this.details = details;
  }
}

/**
 * Replay met an event the machine does not accept in its state: the stored history and the
 * machine disagree, which means a breaking machine change (a state or guard was removed or
 * tightened while events that relied on it are stored). Loud by design: change the machine so the
 * stored history still folds, or upcast the old events.
 */
export class ReplayMismatch extends Error {
  readonly code = 'SB_STORE_CORRUPT';
  constructor(machineId: string, state: unknown, eventType: string) {
    super(`machine ${machineId} in state ${JSON.stringify(state)} does not accept replayed ${eventType}`);
    this.name = 'ReplayMismatch';
  }
}

export type MachineDeciderOptions<M extends AnyStateMachine, C extends Command, E extends Event> = Readonly<{
  machine: M;
  /**
   * The events a command proposes, given the current snapshot (for values like "who acked").
   * Throw DecisionRejected for refusals that carry a reason; return `[]` for an idempotent no-op.
   */
  toEvents: (command: C, state: SnapshotFrom<M>) => E[];
  /**
   * Event types that a state may legitimately ignore on replay (e.g. a late acknowledgement after
   * resolve, recorded as a fact but with no effect). Anything else the machine rejects on replay
   * throws ReplayMismatch.
   */
  ignorable?: (event: E, state: SnapshotFrom<M>) => boolean;
  /** The stored events' schemas (and upcasters for old shapes): every fold parses through them. */
  events: EventDeclarations<E>;
  /** The commands' data schemas; the command bus refuses a command that does not match them. */
  commands?: CommandDataSchemas<C>;
}>;

/**
 * Builds a Decider whose `evolve` is the XState machine (folded with the pure
 * `initialTransition` / `transition`) and whose `decide` proposes events with `toEvents` and asks
 * the machine, event by event, whether they are allowed (`snapshot.can`).
 *
 * @example
 * export const incidentDecider = machineDecider({
 *   machine: incidentMachine,
 *   toEvents,
 *   events: { schemas: incidentEventDataSchemas },
 *   commands: incidentCommandDataSchemas,
 * });
 * const state = stored.map(incidentDecider.parseEvent).reduce(incidentDecider.evolve, incidentDecider.initialState());
 * const events = incidentDecider.decide(command, state); // or throws DecisionRejected
 */
export const machineDecider = <M extends AnyStateMachine, C extends Command, E extends Event>(
  options: MachineDeciderOptions<M, C, E>,
): Decider<SnapshotFrom<M>, C, E> => {
  const { machine, toEvents, ignorable } = options;
  const parseEvent = eventParser<E>(machine.id, options.events);
  // xstate's SnapshotFrom<M> for a generic M is opaque to tsc; every machine snapshot is an
  // AnyMachineSnapshot, so view it as one inside and hand the precise type back out.
  const snap = (state: SnapshotFrom<M>): AnyMachineSnapshot => state as unknown as AnyMachineSnapshot;
  const initialState = (): SnapshotFrom<M> =>
    (initialTransition as (m: AnyStateMachine) => [unknown, unknown])(machine)[0] as SnapshotFrom<M>;
  const evolve = (state: SnapshotFrom<M>, event: E): SnapshotFrom<M> => {
    const [next] = transition(machine, state, event as never);
    if (next === state && !(ignorable?.(event, state) ?? false)) {
      throw new ReplayMismatch(machine.id, snap(state).value, event.type);
    }
    return next as SnapshotFrom<M>;
  };
  const decide = (command: C, state: SnapshotFrom<M>): E[] => {
    const proposed = toEvents(command, state);
    let current = state;
    for (const event of proposed) {
      if (!snap(current).can(event as never)) {
        throw new DecisionRejected(
          `${command.type} is not allowed while ${describeState(snap(current).value)}`,
          {
            command: command.type,
            state: snap(current).value,
            event: event.type,
          },
        );
      }
      current = evolve(current, event);
    }
    return proposed;
  };
  return {
    decide,
    evolve,
    initialState,
    parseEvent,
    ...(options.commands ? { commandSchemas: options.commands as Readonly<Record<string, z.ZodType>> } : {}),
  };
};

/** `{ open: 'acknowledged' }` → `open.acknowledged`, for messages. */
export const describeState = (value: unknown): string => {
  if (typeof value === 'string') return value;
  if (value && typeof value === 'object') {
    return Object.entries(value)
      .map(([k, v]) => `${k}.${describeState(v)}`)
      .join(', ');
  }
  return String(value);
};

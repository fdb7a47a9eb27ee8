import {
  type AnyMachineSnapshot,
  type AnyStateMachine,
  initialTransition,
  type SnapshotFrom,
  transition,
} from 'xstate';
import type { Command, Event } from './messages.ts';

/**
 * decide / evolve / initialState (emmett's Decider), pure and total (style.md rule 2).
 * `decide` always returns an array (`[]` for a no-op) or throws a DecisionRejected.
 */
export type Decider<State, C extends Command, E extends Event> = Readonly<{
  decide: (command: C, state: State) => E[];
  evolve: (state: State, event: E) => State;
  initialState: () => State;
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
 * machine disagree, which means a breaking machine change (style.md §5). Loud by design.
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
}>;

/**
 * Builds a Decider whose `evolve` is the XState machine (folded with the pure
 * `initialTransition` / `transition`) and whose `decide` proposes events with `toEvents` and asks
 * the machine, event by event, whether they are allowed (`snapshot.can`).
 *
 * @example
 * export const incidentDecider = machineDecider({ machine: incidentMachine, toEvents });
 * const state = history.reduce(incidentDecider.evolve, incidentDecider.initialState());
 * const events = incidentDecider.decide(command, state); // or throws DecisionRejected
 */
export const machineDecider = <M extends AnyStateMachine, C extends Command, E extends Event>(
  options: MachineDeciderOptions<M, C, E>,
): Decider<SnapshotFrom<M>, C, E> => {
  const { machine, toEvents, ignorable } = options;
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
  return { decide, evolve, initialState };
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

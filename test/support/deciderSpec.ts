import { expect } from 'vitest';
import type { Decider } from '../../machines/shared/machineDecider.ts';
import type { Command, Event } from '../../machines/shared/messages.ts';

/** What a refused command must look like: its `code`, and optionally some of its `details`. */
export type ExpectedRejection = Readonly<{ code: string; details?: Readonly<Record<string, unknown>> }>;

/**
 * As the store hands an event back: through JSON, then the decider's upcasters and schemas.
 * Deciders that declare no schemas get it back as JSON alone.
 */
export const asStored = <S, C extends Command, E extends Event>(decider: Decider<S, C, E>, event: E): E => {
  const json = JSON.parse(JSON.stringify(event)) as { type: string; data: unknown };
  return decider.parseEvent ? decider.parseEvent(json) : (json as E);
};

/**
 * given(events).when(command).then(events | rejection), over data: the decider's contract as a
 * table of facts in, command, facts out (or the refusal's code and details).
 * `given` folds the history as a stream would be folded (each event through JSON and the
 * decider's schemas, then `evolve`), so every spec also proves the history is valid stored data
 * that replays; `then` also checks that every decided event survives being stored unchanged.
 *
 * @example
 * const spec = deciderSpec(incidentDecider);
 * spec.given([linked, triggered]).when(ack).then([ackRequested]);
 * spec.given([linked, triggered, acknowledged]).when(ack).then({ code: 'SB_ILLEGAL_STATE',
 *   details: { reason: 'already_acknowledged' } });
 */
export const deciderSpec = <S, C extends Command, E extends Event>(decider: Decider<S, C, E>) => ({
  given: (history: readonly E[]) => {
    const state = history.map((e) => asStored(decider, e)).reduce(decider.evolve, decider.initialState());
    return {
      state,
      when: (command: C) => {
        const run = (): E[] => decider.decide(command, state);
        return {
          /** Asserts the outcome; returns the state after the new events (or the given state). */
          // biome-ignore lint/suspicious/noThenProperty: given/when/then is how decider tests read; never awaited.
          then: (expected: readonly E[] | ExpectedRejection): S => {
            if (Array.isArray(expected)) {
              const events = run();
              expect(events).toEqual(expected);
              expect(
                events.map((e) => asStored(decider, e)),
                'decided events, as stored',
              ).toEqual(events);
              return events.reduce(decider.evolve, state);
            }
            const rejection = expected as ExpectedRejection;
            let thrown: unknown;
            try {
              run();
            } catch (e) {
              thrown = e;
            }
            expect(thrown, `${command.type} should be refused`).toBeInstanceOf(Error);
            expect((thrown as { code?: unknown }).code).toBe(rejection.code);
            if (rejection.details) {
              expect((thrown as { details?: unknown }).details).toMatchObject(rejection.details);
            }
            return state;
          },
          /** The events decided, for assertions `then` cannot express; folds them too. */
          events: (): { events: E[]; state: S } => {
            const events = run();
            return { events, state: events.reduce(decider.evolve, state) };
          },
        };
      },
    };
  },
});

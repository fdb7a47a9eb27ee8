import { expect } from 'vitest';
import type { Decider } from '../../machines/shared/machineDecider.ts';
import type { Command, Event } from '../../machines/shared/messages.ts';

/** What a refused command must look like: its `code`, and optionally some of its `details`. */
export type ExpectedRejection = Readonly<{ code: string; details?: Readonly<Record<string, unknown>> }>;

/**
 * given(events).when(command).then(events | rejection), over data: decider tests are tables of
 * facts in and facts (or a refusal) out, in the manner of emmett's `DeciderSpecification`
 * (https://github.com/event-driven-io/emmett).
 * `given` folds the history through `evolve`, so every spec also proves the history replays.
 *
 * @example
 * const spec = deciderSpec(incidentDecider);
 * spec.given([linked, triggered]).when(ack).then([ackRequested]);
 * spec.given([linked, triggered, acknowledged]).when(ack).then({ code: 'SB_ILLEGAL_STATE',
 *   details: { reason: 'already_acknowledged' } });
 */
export const deciderSpec = <S, C extends Command, E extends Event>(decider: Decider<S, C, E>) => ({
  given: (history: readonly E[]) => {
    const state = history.reduce(decider.evolve, decider.initialState());
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

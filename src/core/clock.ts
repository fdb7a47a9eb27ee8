/**
 * Time is data: it is read at the edge and carried on commands (`metadata.now`), and timers are
 * recorded events, so deciders stay pure and replays decide the same. Everything that
 * needs the current time takes a Clock, so tests pass a fixed or manual one.
 */
export type Clock = { now(): Date };

export const systemClock: Clock = { now: () => new Date() };

/** A clock tests move by hand. */
export const manualClock = (start: Date | string = '2026-11-22T02:00:00.000Z') => {
  let current = new Date(start).getTime();
  return {
    now: () => new Date(current),
    set(to: Date | string) {
      current = new Date(to).getTime();
    },
    advance(ms: number) {
      current += ms;
    },
  };
};
export type ManualClock = ReturnType<typeof manualClock>;

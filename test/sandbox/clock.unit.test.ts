import { describe, expect, it } from 'vitest';
import { ClockInputError, createSandboxClock, MAX_ADVANCE_MS, parseAdvance } from '../../sandbox/clock.ts';

// The sandbox clock: real time plus an offset that only grows, on a real clock the test holds.

const realClock = (start = 1_000_000) => {
  let t = start;
  return { now: () => t, pass: (ms: number) => (t += ms) };
};

describe('the sandbox clock', () => {
  it('starts where it is told, runs on with real time, and moves forward by whole ms', () => {
    const real = realClock();
    const clock = createSandboxClock({ startAt: '2026-11-23T09:00:00Z', realNow: real.now });
    expect(clock.now().toISOString()).toBe('2026-11-23T09:00:00.000Z');
    real.pass(90_000);
    expect(clock.now().toISOString()).toBe('2026-11-23T09:01:30.000Z');
    const heard: string[] = [];
    const off = clock.onAdvance((at) => heard.push(at.toISOString()));
    clock.advance(7 * 24 * 3600_000);
    expect(clock.now().toISOString()).toBe('2026-11-30T09:01:30.000Z');
    expect(heard).toEqual(['2026-11-30T09:01:30.000Z']);
    off();
    clock.advance(1);
    expect(heard).toHaveLength(1);
  });

  it('never goes back, nor jumps more than 31 days at once', () => {
    const clock = createSandboxClock({ realNow: realClock().now });
    for (const bad of [0, -1, 1.5, Number.NaN, MAX_ADVANCE_MS + 1])
      expect(() => clock.advance(bad)).toThrow(ClockInputError);
    expect(clock.offsetMs()).toBe(0);
    clock.advance(MAX_ADVANCE_MS);
    expect(clock.offsetMs()).toBe(MAX_ADVANCE_MS);
  });

  it('a saved offset wins over a start time (a restored world keeps its clock)', () => {
    const real = realClock(5_000);
    const clock = createSandboxClock({
      offsetMs: 60_000,
      startAt: '2020-01-01T00:00:00Z',
      realNow: real.now,
    });
    expect(clock.nowMs()).toBe(65_000);
    expect(() => createSandboxClock({ startAt: 'not a time' })).toThrow(ClockInputError);
  });

  it('the console asks in whole minutes, 1 to 31 days', () => {
    expect(parseAdvance({ minutes: 60 })).toBe(3_600_000);
    expect(parseAdvance({ minutes: 44_640 })).toBe(MAX_ADVANCE_MS);
    for (const minutes of [0, -5, 2.5, '60', null, 44_641, undefined])
      expect(() => parseAdvance({ minutes })).toThrow(/whole number from 1 to 44640/);
  });
});

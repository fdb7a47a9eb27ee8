import { describe, expect, it } from 'vitest';
import { manualClock } from '../../src/core/clock.ts';
import { createQueueingBudget } from '../../src/upstream/queueingBudget.ts';

/**
 * The queueing budget on a manual clock: callers wait their turn in arrival order, never more than
 * `perSecond` in any window, and a 429 from the service closes it for the time it names.
 */
const setup = (perSecond: number, maxWaitMs?: number) => {
  const clock = manualClock('2026-11-23T10:00:00.000Z');
  const waits: number[] = [];
  const budget = createQueueingBudget({
    name: 'test',
    perSecond,
    marginMs: 0,
    now: () => clock.now().getTime(),
    // Each wait moves the clock to its turn (only the head of the queue ever waits), once the
    // callers already let go have run (what they do happens before time moves on).
    waitUntil: async (at) => {
      waits.push(at);
      await new Promise((resolve) => setImmediate(resolve));
      if (clock.now().getTime() < at) clock.set(new Date(at));
    },
    ...(maxWaitMs === undefined ? {} : { maxWaitMs }),
  });
  const t0 = clock.now().getTime();
  return { clock, budget, waits, t0 };
};

describe('createQueueingBudget', () => {
  it('lets perSecond go at once, then one window later the next, in arrival order', async () => {
    const { clock, budget, t0 } = setup(3);
    const order: Array<[number, number]> = [];
    await Promise.all(
      Array.from({ length: 7 }, (_, i) =>
        budget.take('op').then((release) => {
          order.push([i, clock.now().getTime() - t0]);
          release();
        }),
      ),
    );
    expect(order).toEqual([
      [0, 0],
      [1, 0],
      [2, 0],
      [3, 1000],
      [4, 1000],
      [5, 1000],
      [6, 2000],
    ]);
    expect(budget.queued()).toBe(0);
  });

  it('slides: a request sent late in a window frees its slot a window after it went', async () => {
    const { clock, budget, t0 } = setup(2);
    (await budget.take('a'))();
    clock.advance(600);
    (await budget.take('b'))();
    (await budget.take('c'))(); // waits for a's slot: t0 + 1000
    expect(clock.now().getTime() - t0).toBe(1000);
    (await budget.take('d'))(); // waits for b's slot: t0 + 1600
    expect(clock.now().getTime() - t0).toBe(1600);
  });

  it("a request's second starts when its answer came: the next waits for the one still out", async () => {
    const { clock, budget, t0 } = setup(1);
    const release = await budget.take('a');
    let next = false;
    const b = budget.take('b').then((r) => {
      next = true;
      return r;
    });
    clock.advance(1_500); // a is slow to answer
    await new Promise((resolve) => setImmediate(resolve));
    expect(next).toBe(false);
    release(); // answered at t0 + 1500: b may go at t0 + 2500
    (await b)();
    expect(clock.now().getTime() - t0).toBe(2_500);
  });

  it('a 429 from the service closes it until the time named', async () => {
    const { clock, budget, t0 } = setup(100);
    budget.exhaustUntil(t0 + 5_000);
    (await budget.take('a'))();
    expect(clock.now().getTime() - t0).toBe(5_000);
  });

  it('refuses unsent a caller that would wait beyond maxWaitMs, saying when to come back', async () => {
    const { budget } = setup(1, 500);
    (await budget.take('a'))();
    await expect(budget.take('b')).rejects.toMatchObject({
      code: 'SB_UPSTREAM_RATE_LIMITED',
      details: { retryAfterMs: 1000, retryAfterSource: 'budget', operation: 'b' },
    });
  });

  it('with no limit nobody waits', async () => {
    const { budget, waits } = setup(Infinity);
    const releases = await Promise.all(Array.from({ length: 50 }, () => budget.take('x')));
    for (const release of releases) release();
    expect(waits).toEqual([]);
  });
});

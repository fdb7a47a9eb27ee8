import { afterEach, describe, expect, it } from 'vitest';
import type { SimulatorSeed } from '../../sandbox/simulators/pagerduty/model.ts';
import { waitFor } from '../support/waitFor.ts';
import {
  ANA,
  BEN,
  CHEN,
  DANA,
  FRANK,
  type JoinsHarness,
  joinsSeed,
  MINUTE,
  messageText,
  PAYMENTS_CHANNEL,
  PD_IDS,
  startJoinsHarness,
} from './harness.ts';

/**
 * Issue 20, item 3 (the truth during leave), end to end: Ana is Payments primary this week and on
 * approved leave. `/oncall` says she is on leave and names who is really paged (the paging plan's
 * own rule: Ben, next in the rotation), and the incident's card names Ben beside "Assigned".
 * The rota (Ana, then Ben, then Chen, from this week) is the one test/joins/paging.int.test.ts uses.
 */
const anaThisWeek = (weekStart: Date): SimulatorSeed => {
  const seed = joinsSeed(weekStart);
  return {
    ...seed,
    schedules: seed.schedules.map((s) => ({
      ...s,
      layers: s.layers.map((l) => ({ ...l, userIds: [PD_IDS.ana, PD_IDS.ben, PD_IDS.chen] })),
    })),
  };
};

let h: JoinsHarness | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
});

describe('the truth during leave (issue 20)', () => {
  it('/oncall says Ana is on leave and Ben is paged instead; the card names Ben beside Assigned', async () => {
    h = await startJoinsHarness({ seed: anaThisWeek });
    const j = h;
    for (const person of [ANA, BEN, CHEN, DANA, FRANK]) await j.verifyPhone(person);

    // Before her leave is approved, /oncall names Ana alone.
    const before = await j.oncall('Payments API');
    expect(before).toMatch(/Level 1: (<@U0ANA>|Ana Silva) \(Payments primary\) until <!date\^\d+\^[^>]+>/);
    expect(before).not.toContain('on leave');

    await j.approvedLeave(ANA, 'holiday 2026-11-23 to 2026-11-27 Family');
    const during = await j.oncall('Payments API');
    expect(during).toMatch(
      /Level 1: (<@U0ANA>|Ana Silva) \(Payments primary\) until <!date\^\d+\^[^>]+> \(on leave until 27 Nov\) → <@U0BEN> is paged instead/,
    );
    // Level 2 (Dana) is not on leave: said as before.
    expect(during).toMatch(/Level 2: (<@U0DANA>|Dana Lee)(?! \(on leave)/);

    // An incident now: the service assigns Ana; the card names who is really paged.
    const { number } = await j.trigger('Card payments failing');
    await j.advanceTimers(5 * MINUTE);
    const card = await waitFor(
      () => {
        const m = j.fake.messages(PAYMENTS_CHANNEL).find((x) => x.text.startsWith(`#${number} `));
        const text = m ? messageText(m) : '';
        return text.includes('is paged instead') ? text : undefined;
      },
      { what: `#${number}'s card naming who is paged`, timeoutMs: 10_000 },
    );
    expect(card).toContain('*Assigned*\n<@U0ANA> (on leave) → <@U0BEN> is paged instead');
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FAMILY, HOSTILE, slackTextScanner } from '../support/slackTextScan.ts';
import { waitFor } from '../support/waitFor.ts';
import { HR_EMPLOYEES } from '../timeOff/harness.ts';
import {
  ANA,
  BEN,
  CHEN,
  DANA,
  FRANK,
  GIL,
  HR_IDS,
  type JoinsHarness,
  joinsSeed,
  messageText,
  PAYMENTS_CHANNEL,
  PLATFORM_CHANNEL,
  startJoinsHarness,
} from './harness.ts';

/**
 * Issue 19 item 2 where the lifecycles meet: people whose names are hostile and emoji-heavy in HR
 * (displayName) and in the incident service (user name), through the approver's card with its
 * on-call conflicts and cover, `/oncall`, `/whosout`, and the leaver reports HR's termination posts
 * in the channels; the scanner then checks everything the fake Slack was given.
 */
const hostileName = (first: string) => `${first} <!channel> & <b> ${FAMILY.repeat(40)}`;

let h: JoinsHarness;
beforeAll(async () => {
  h = await startJoinsHarness({
    hr: {
      employees: HR_EMPLOYEES.map((e) =>
        e.id === HR_IDS.frank ? e : { ...e, displayName: hostileName(e.firstName) },
      ),
    },
    seed: (weekStart) => {
      const seed = joinsSeed(weekStart);
      return {
        ...seed,
        users: seed.users?.map((u) => ({ ...u, name: `${u.name} <!here> & ${FAMILY.repeat(20)}` })),
      };
    },
  });
});
afterAll(async () => {
  await h?.stop();
});

describe('hostile names where the lifecycles meet (issue 19 item 2)', () => {
  it('the approver card with its conflicts, /oncall, /whosout and the leaver reports escape every name', async () => {
    const acks: unknown[] = [];
    const { from, to } = h.nextWeek();
    const asked = await h.timeoff(`holiday ${from} to ${to} ${HOSTILE} ${FAMILY.repeat(30)}`, ANA);
    expect(asked.status).toBe(200);
    acks.push(asked.body);
    await waitFor(
      () =>
        h
          .dms(DANA)
          .filter((m) => !m.deleted)
          .find((m) => /On-call conflicts/.test(messageText(m)) && !/Checking/.test(messageText(m))),
      { what: "Dana's card with its on-call conflicts", timeoutMs: 15_000 },
    );
    acks.push(await h.oncall('', DANA));
    acks.push(await h.oncall('next week', BEN));
    acks.push((await h.whosout('next week', DANA)).body);
    await h.idle();

    // HR terminates Ana: the leaver reports name her and her turns.
    h.sim.webApp.terminate(HR_IDS.ana);
    const report = (channel: string) =>
      h.fake.messages(channel).find((m) => messageText(m).includes('has left'));
    for (let i = 0; i < 12 && !(report(PAYMENTS_CHANNEL) && report(PLATFORM_CHANNEL)); i++)
      await h.advanceTimers(10_000);
    const payments = await waitFor(() => report(PAYMENTS_CHANNEL), { what: 'the report in #payments' });
    await waitFor(() => report(PLATFORM_CHANNEL), { what: 'the report in #platform' });
    await h.idle();
    expect(messageText(payments)).toContain('Ana &lt;!channel&gt; &amp; &lt;b&gt;');

    const known = [ANA, BEN, CHEN, DANA, FRANK, GIL];
    expect(slackTextScanner(h.fake, known).everythingSentToSlack(acks)).toEqual([]);
  });
});

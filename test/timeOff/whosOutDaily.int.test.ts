import { afterEach, describe, expect, it } from 'vitest';
import { employeeById } from '../../machines/timeOff/directory.ts';
import { TIME_OFF_ACTION } from '../../src/timeOff/blocks/timeOffIds.ts';
import { addDays } from '../../src/timeOff/localDays.ts';
import { waitFor } from '../support/waitFor.ts';
import {
  ANA,
  BEN,
  CHEN,
  DANA,
  HR_IDS,
  messageText,
  startTimeOffHarness,
  type TimeOffHarness,
} from './harness.ts';

/**
 * Issue 20 item 7: who's out, daily, in a configured channel at a configured local time (here
 * 08:30 in Singapore, 00:30 UTC), once a day across a restart; leavers left out; the kind of
 * leave named only where WHOS_OUT_SHOWN_KINDS allows. Dates come from the manual clock.
 */
const TEAM = 'C0TEAM';
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

let h: TimeOffHarness | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
});

const posts = (j: TimeOffHarness) =>
  j.fake.messages(TEAM).filter((m) => messageText(m).includes("Who's out today"));

const approved = async (j: TimeOffHarness, user: string, text: string) => {
  const before = new Set(await j.requestIds(user));
  const asked = await j.timeoff(text, user);
  expect(asked.status).toBe(200);
  const id = await waitFor(async () => (await j.requestIds(user)).find((r) => !before.has(r)), {
    what: `${user}'s request`,
  });
  await j.idle();
  await j.click(TIME_OFF_ACTION.approve, DANA);
  await waitFor(async () => ((await j.types(id)).includes('TimeOffApproved') ? true : undefined), {
    what: `${id} approved`,
  });
  await j.idle();
};

describe("who's out, daily", () => {
  it('posts at the configured local time, once a day across a restart; leavers out; the kind only where allowed', async () => {
    h = await startTimeOffHarness({
      env: {
        WHOS_OUT_CHANNELS: TEAM,
        WHOS_OUT_TIME: '08:30',
        WHOS_OUT_TIME_ZONE: 'Asia/Singapore',
        WHOS_OUT_SHOWN_KINDS: 'Holiday',
      },
      channels: [{ id: TEAM, name: 'team', is_im: false }],
    });
    const j = h;
    // Today (in Singapore, 17:00) is past 08:30: the first post is tomorrow's.
    const today = j.clock.now().toISOString().slice(0, 10);
    const tomorrow = addDays(today, 1);
    await approved(j, ANA, `Holiday ${tomorrow} ${addDays(today, 3)} trip`);
    await approved(j, BEN, `Sick ${tomorrow} ${tomorrow} flu`);
    await approved(j, CHEN, `Holiday ${tomorrow} ${addDays(today, 2)} away`);
    j.sim.webApp.terminate(HR_IDS.chen);
    await waitFor(
      async () => {
        await j.advance(10_000);
        await j.api.readModel.catchUp();
        return employeeById(j.api.readModel.directory(), HR_IDS.chen)?.status === 'left' || undefined;
      },
      { what: 'Chen left in the directory' },
    );

    const dueAt = Date.parse(`${tomorrow}T00:30:00.000Z`);
    await j.advance(dueAt - MINUTE - j.clock.now().getTime());
    expect(posts(j)).toEqual([]);
    await j.advance(MINUTE);
    const post = await waitFor(() => posts(j)[0], { what: "the who's-out post" });
    const text = messageText(post);
    expect(text).toContain(`<@${ANA}>: Holiday until`);
    expect(text).toContain(`<@${BEN}>: out today`);
    expect(text).not.toContain('Sick');
    expect(text).not.toContain(CHEN);
    expect(text).toContain('Asia/Singapore');

    await j.restart();
    await j.advance(HOUR);
    expect(posts(j)).toHaveLength(1);

    // The next day: one more post, Ben back.
    await j.advance(dueAt + 24 * HOUR - j.clock.now().getTime());
    await waitFor(() => (posts(j).length === 2 ? true : undefined), { what: 'the second day’s post' });
    const second = messageText(posts(j)[1] ?? { text: '' });
    expect(second).toContain(`<@${ANA}>`);
    expect(second).not.toContain(`<@${BEN}>`);
  });
});

import { afterEach, describe, expect, it } from 'vitest';
import { ANA, DANA, messageText, startTimeOffHarness, type TimeOffHarness } from './harness.ts';
import { advance } from './hrFixtures.ts';
import { noticesDriver } from './noticesDriver.ts';

/**
 * Issue 19 item 3: a time-off DM is read by one person, so its times are written in that person's
 * Slack zone: each date token's fallback names it, and the notification text (the DM's top-level
 * `text`, what a phone's push shows) says the time plainly in it. Dana (the approver) sits in
 * Singapore, Ana (the requester) in New York; the clock starts Monday 2026-11-23 09:00 UTC
 * (17:00 in Singapore, 04:00 in New York). The machine's zone plays no part.
 */
let h: TimeOffHarness;
const { request, card, statusOf, seedDirectory } = noticesDriver(() => h);

afterEach(async () => {
  await h?.stop();
});

const TOKEN_IN = (zone: string) =>
  new RegExp(`<!date\\^\\d+\\^\\{date_short_pretty\\} at \\{time\\}\\|\\w+ \\d+, \\d\\d:\\d\\d ${zone}>`);

describe('time-off DMs in the reader zone', () => {
  it("the approver's card, the requester's status and the reminder carry their reader's zone, after a restart too", async () => {
    h = await startTimeOffHarness({ timeZones: { [DANA]: 'Asia/Singapore', [ANA]: 'America/New_York' } });
    await seedDirectory();
    const id = await request();

    // Dana's card: "Expires <token>" with a fallback in Singapore time; no UTC anywhere.
    const c = card(id);
    expect(messageText(c)).toMatch(new RegExp(`Expires ${TOKEN_IN('Asia/Singapore').source}`));
    expect(messageText(c)).not.toContain('UTC');
    // Ana's status: "It expires <token>" in New York time.
    const status = statusOf(id);
    expect(messageText(status)).toMatch(new RegExp(`It expires ${TOKEN_IN('America/New_York').source}`));
    expect(messageText(status)).not.toContain('UTC');

    // A new process (nothing in memory): the reminder, and the card redrawn in place, still
    // know whose DM it is.
    await h.restart();
    await advance(h, 24 * 3_600_000);
    const reminder = await h.dm(/:bell: Reminder/, DANA);
    // The push notification: plain words, 09:00 UTC as 17:00 in Singapore, the zone named.
    expect(reminder.text).toContain('has been waiting for you since Nov 23, 17:00 Asia/Singapore.');
    expect(reminder.text).not.toContain('<!date^');
    expect(JSON.stringify(reminder.blocks)).toContain(
      `since <!date^${Date.parse('2026-11-23T09:00:00.000Z') / 1000}^{date_short_pretty} at {time}|Nov 23, 17:00 Asia/Singapore>`,
    );
    const redrawn = card(id);
    expect(messageText(redrawn)).toContain('Reminder 1.');
    expect(messageText(redrawn)).toMatch(TOKEN_IN('Asia/Singapore'));
    expect(messageText(redrawn)).not.toContain('UTC');
  });
});

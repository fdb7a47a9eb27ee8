import { afterEach, describe, expect, it } from 'vitest';
import { VERIFICATION_ACTION } from '../../src/verification/blocks/ids.ts';
import { ANA, BEN, PHONE_A, PHONE_B, startVerificationHarness, type VerificationHarness } from './harness.ts';

/**
 * Issue 19 item 3: a verification DM is read by one person, so its times are written in their
 * Slack zone (`users.info` `tz`): the notification text (the DM's top-level `text`, what a phone's
 * push shows) says the time in their zone, plainly, and every date token's fallback names it.
 * The clock starts at 2026-11-23 09:00 UTC (17:00 in Singapore); the machine's zone plays no part.
 */
let h: VerificationHarness;
afterEach(async () => {
  await h?.stop();
});

const blocksText = (blocks: unknown[] | undefined): string => JSON.stringify(blocks ?? []);

describe('verification DMs in the reader zone', () => {
  it("Ana in Asia/Singapore: the code DM's notification text and token fallbacks are in Singapore time", async () => {
    h = await startVerificationHarness({ zones: { [ANA]: 'Asia/Singapore' } });
    const r = await h.verify(PHONE_A.typed);
    expect(r.text).toContain(`Sending a code to ${PHONE_A.masked}`);
    const dm = await h.dm(/sent a 6-digit code/);
    // The notification: no token left, the expiry in her zone, the zone named.
    expect(dm.text).toContain('Enter it here before Nov 23, 17:05 Asia/Singapore;');
    expect(dm.text).not.toContain('<!date^');
    // The message itself: Slack's token (her own zone and clock), its fallback in her zone.
    expect(blocksText(dm.blocks)).toMatch(
      /<!date\^\d+\^\{date_short_pretty\} at \{time\}\|Nov 23, 17:05 Asia\/Singapore>/,
    );
    expect(blocksText(dm.blocks)).not.toContain('UTC');

    // The call instead: the DM that says until when the code works is in her zone too.
    await h.click(VERIFICATION_ACTION.voice);
    const voice = await h.dm(/Switchboard is calling/);
    expect(voice.text).toContain('Enter it here before Nov 23, 17:10 Asia/Singapore.');
    expect(blocksText(voice.blocks)).toMatch(/\|Nov 23, 17:10 Asia\/Singapore>/);
  });

  it('Ben, whose Slack profile names no zone, reads UTC, named', async () => {
    h = await startVerificationHarness({ zones: { [ANA]: 'Asia/Singapore' } });
    await h.verify(PHONE_B.typed, BEN);
    const dm = await h.dm(/sent a 6-digit code/, BEN);
    expect(dm.text).toContain('Enter it here before Nov 23, 09:05 UTC;');
    expect(blocksText(dm.blocks)).toMatch(/\|Nov 23, 09:05 UTC>/);
  });
});

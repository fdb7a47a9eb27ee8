import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '../support/waitFor.ts';
import {
  ANA,
  BEN,
  CHEN,
  type JoinsHarness,
  joinsSeed,
  messageText,
  PHONES,
  PLATFORM_POLICY,
  startJoinsHarness,
} from './harness.ts';

/**
 * Issue 20 item 5: the colleague covering a sick on-call person is told "by DM and SMS". The SMS is
 * a plain notice through the pager port (`notify`), not a page: sent once, even after a restart,
 * with nothing of anyone's in it (no names, no number, nothing internal).
 */
let h: JoinsHarness | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
});

/** The joins world with Ana free today: the Platform policy names only Chen (as sickToday.int.test.ts). */
const anaFree = (weekStart: Date) => {
  const seed = joinsSeed(weekStart);
  return {
    ...seed,
    escalationPolicies: seed.escalationPolicies.map((p) =>
      p.id === PLATFORM_POLICY ? { ...p, rules: p.rules.slice(0, 1) } : p,
    ),
  };
};

const SICK_SMS = /a colleague is off sick, so you are on call for them/;

describe('sick today while on call: the colleague told by SMS (issue 20)', () => {
  it('one SMS notice to the covering colleague with a verified phone, not repeated after a restart', async () => {
    h = await startJoinsHarness({ seed: anaFree });
    const j = h;
    await j.verifyPhone(ANA);
    await j.verifyPhone(CHEN);

    await j.timeoff('sick today', BEN);
    const colleague = await waitFor(
      () =>
        [ANA, CHEN].find((u) =>
          j.dms(u).some((m) => /is off sick today, so you're on call for them/.test(messageText(m))),
        ),
      { what: 'a colleague told by DM', timeoutMs: 15_000 },
    );
    const phone = PHONES[colleague as keyof typeof PHONES];
    const notices = () => j.smsTo(phone).filter((m) => SICK_SMS.test(m.text));
    await waitFor(() => notices().length > 0 || undefined, { what: 'the SMS notice', timeoutMs: 15_000 });
    const [sms] = notices();
    // Switchboard's own words only: no name, no Slack id, no number, no id.
    expect(sms!.text).not.toMatch(/U0|Ben|<@|[0-9a-f]{8}-|sick:/);
    // Nobody else got it.
    const other = colleague === ANA ? CHEN : ANA;
    expect(j.smsTo(PHONES[other as keyof typeof PHONES]).filter((m) => SICK_SMS.test(m.text))).toHaveLength(
      0,
    );

    await j.restart();
    await j.idle();
    expect(notices()).toHaveLength(1);
  });
});

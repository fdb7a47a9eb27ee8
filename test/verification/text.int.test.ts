import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventCallbackBody } from '../../sandbox/simulators/slack/signing.ts';
import { FAMILY, HOSTILE, slackTextScanner } from '../support/slackTextScan.ts';
import { postSigned } from '../support/startApp.ts';
import { waitFor } from '../support/waitFor.ts';
import { ANA, BEN, CHEN, PHONE_A, startVerificationHarness, type VerificationHarness } from './harness.ts';

/**
 * Issue 19 item 2 on the verification surfaces: hostile and emoji-heavy arguments to `/verify`
 * (as a number, a subcommand, after `test`, `cancel`), a hostile code in the modal, the code DM and
 * its buttons, `/verify status`, `help` and App Home; the scanner then checks everything the fake
 * Slack was given: no raw `<`, `>`, `&` of theirs in mrkdwn, no ping, no lone surrogate, Slack's limits.
 */
let h: VerificationHarness;
beforeAll(async () => {
  h = await startVerificationHarness();
});
afterAll(async () => {
  await h?.stop();
});

const homeOf = async (user: string) => {
  const before = h.fake.homes.get(user);
  await postSigned(
    `${h.url}/slack/events`,
    eventCallbackBody({ type: 'app_home_opened', user, tab: 'home' }),
    'json',
    { timestamp: Math.floor(h.clock.now().getTime() / 1000) },
  );
  return waitFor(() => (h.fake.homes.get(user) !== before ? h.fake.homes.get(user) : undefined), {
    what: `${user}'s Home tab`,
  });
};

describe('hostile text on the verification surfaces (issue 19 item 2)', () => {
  it('hostile arguments and codes reach Slack escaped, whole and within its limits', async () => {
    const long = `${HOSTILE} ${FAMILY.repeat(300)}`;
    const acks: unknown[] = [];
    const ask = async (text: string, user = ANA) => {
      const r = await h.verify(text, user);
      expect(r.status).toBe(200);
      acks.push(r.body);
      await h.idle();
      return r;
    };

    // Before any number: hostile arguments where a number or a subcommand goes.
    const first = await ask(HOSTILE);
    await ask(long, BEN);
    await ask(`+44 <!channel> & ${FAMILY}`, CHEN);
    const word = await ask(`frob<script>&<!channel>${FAMILY.repeat(200)} <@U123>`);
    await ask(`${FAMILY.repeat(400)}`, BEN);
    const short = await ask('zap&<!here>');
    await ask(`e\u0301\u0302<b>${FAMILY}`, CHEN);
    await ask(`test ${HOSTILE}`);
    await ask(`cancel ${HOSTILE}`);
    await ask('status');
    await ask('help');

    // A number, the code DM, a hostile code typed in the modal, then the right one.
    await ask(`${PHONE_A.typed}`);
    await h.dm(/sent a 6-digit code/);
    const wrong = await h.enterCode(`${HOSTILE} ${FAMILY}`);
    acks.push(wrong.body);
    await h.idle();
    const code = await waitFor(() => h.sim.phones.lastCode(PHONE_A.digits), { what: 'the code' });
    acks.push((await h.enterCode(code)).body);
    await h.dm(/is verified/);
    await ask(`status ${HOSTILE}`);
    await ask('status');
    await ask(`test ${long}`);
    await ask(`remove ${HOSTILE}`);
    for (const user of [ANA, BEN, CHEN]) await homeOf(user);
    await h.idle();

    // `/verify` echoes only a short word of letters back (in code); everything else is refused in
    // its own words, so nothing typed here is shown back, as a ping, a tag or otherwise.
    expect(first.text).toContain('too long for a phone number');
    expect(word.text).toContain('too long for a phone number');
    expect(short.text).toContain('only digits, spaces');
    expect(wrong.body).toMatchObject({ response_action: 'errors' });
    const seen = JSON.stringify([
      acks,
      h.fake.responsePosts.map((p) => p.body),
      ['chat.postMessage', 'chat.update', 'views.open', 'views.publish'].map((m) =>
        h.fake.callsOf(m).map((c) => c.params),
      ),
    ]);
    expect(seen).not.toContain('script');
    expect(h.fake.callsOf('views.publish').length).toBeGreaterThanOrEqual(3);

    expect(slackTextScanner(h.fake, [ANA, BEN, CHEN]).everythingSentToSlack(acks)).toEqual([]);
  });
});

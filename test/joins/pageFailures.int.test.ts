import { afterEach, describe, expect, it } from 'vitest';
import type { SimulatorSeed } from '../../sandbox/simulators/pagerduty/model.ts';
import { slashCommandBody } from '../../sandbox/simulators/slack/signing.ts';
import { postSigned } from '../support/startApp.ts';
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
  PHONES,
  startJoinsHarness,
} from './harness.ts';
import { everythingPeopleSaw, internalWords, makePersonKeyUnreadable } from './pageFailureSupport.ts';

/**
 * Issue 18 item 4, end to end (the app, the incident-service, phone and HR simulators and the fake
 * Slack on one clock): a page that cannot be delivered is said on the incident's card and timeline
 * in words, the person is told by DM when they can fix it, and the next person is paged at once,
 * by the same rule as leave-aware paging (the next in the schedule's rotation, else the level's
 * others, else the next level). Nobody is paged twice for the same level and round, and when
 * nobody is left the card and the timeline say "nobody could be paged".
 *
 * The rota: Payments primary is Ana this week, then Ben, then Chen; level 2 Dana, level 3 Frank.
 * Every surface the tests produce (DMs, cards, the timeline, SMS) is scanned for internal words.
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
  if (h) {
    // Nothing any test here does may leave a parked event behind, paging above all.
    expect(await h.sb.processors.listParked()).toEqual([]);
    await h.stop();
  }
  h = undefined;
});

const start = async (
  verified: readonly string[] = [ANA, BEN, CHEN, DANA, FRANK],
  env?: Record<string, string>,
): Promise<JoinsHarness> => {
  const joins = await startJoinsHarness({ seed: anaThisWeek, ...(env ? { env } : {}) });
  for (const person of verified) await joins.verifyPhone(person);
  return joins;
};

const sms = (j: JoinsHarness, person: keyof typeof PHONES) => j.smsTo(PHONES[person]).map((m) => m.text);
const pagesAbout = (j: JoinsHarness, person: keyof typeof PHONES, number: number) =>
  sms(j, person).filter((t) => t.includes(`#${number} `));

/** Waits until the paging delay passed and the level's pages went out. */
const pagesDue = async (j: JoinsHarness) => {
  await j.advanceTimers(5 * MINUTE);
  await j.idle();
};

const paged = (j: JoinsHarness, person: keyof typeof PHONES, number: number, what = `${person} paged`) =>
  waitFor(() => pagesAbout(j, person, number).length > 0 || undefined, { what, timeoutMs: 15_000 });

/** `/incident timeline <n>` as Dana: the whole answer (the ack, or what went to its response_url). */
const timeline = async (j: JoinsHarness, number: number): Promise<string> => {
  const from = j.fake.responsePosts.length;
  const res = await postSigned(
    `${j.url}/slack/events`,
    slashCommandBody({
      command: '/incident',
      text: `timeline ${number}`,
      user_id: DANA,
      channel_id: PAYMENTS_CHANNEL,
      response_url: j.fake.responseUrl({ channel: PAYMENTS_CHANNEL, user: DANA }),
      trigger_id: j.fake.issueTrigger({ user: DANA }),
    }),
    'form',
    { timestamp: Math.floor(j.clock.now().getTime() / 1000) },
  );
  const answered = await res.text();
  if (answered.includes('Timeline:')) return answered;
  const posted = await waitFor(
    () => j.fake.responsePosts.slice(from).find((p) => JSON.stringify(p.body).includes('Timeline:')),
    { what: 'the timeline', timeoutMs: 10_000 },
  );
  return messageText(posted.body as { text: string; blocks?: unknown[] });
};

const card = (j: JoinsHarness, number: number): string => {
  const found = j.fake.messages(PAYMENTS_CHANNEL).find((m) => m.text.startsWith(`#${number} `));
  return found ? messageText(found) : '';
};

const cardSays = (j: JoinsHarness, number: number, ...what: string[]) =>
  waitFor(
    () => {
      const text = card(j, number);
      return what.every((w) => text.includes(w)) ? text : undefined;
    },
    { what: `#${number}'s card to say ${what.map((w) => `“${w}”`).join(' and ')}`, timeoutMs: 15_000 },
  );

/** Every DM, card, ephemeral or posted answer and SMS of the test, for the internal-words scan. */

/** The page activity of the incident: who could not be paged, and why (their reason or kind). */
const couldNotPage = async (j: JoinsHarness, streamId: string) =>
  (await j.stream(streamId))
    .filter((m) => m.type === 'RecordIncidentPageActivity')
    .map((m) => m.data as { kind: string; slackUserId: string | null; reason?: string | null })
    .filter((d) => ['no_verified_phone', 'opted_out', 'held_back', 'undeliverable'].includes(d.kind))
    .map((d) => `${d.slackUserId}: ${d.reason ?? d.kind}`);

/** Ana could not be paged for `reason`, Ben was paged in her place at once, and nobody twice. */
const benPagedInstead = async (
  j: JoinsHarness,
  incident: Readonly<{ streamId: string; number: number }>,
  reason: string,
  words: string,
) => {
  await paged(j, BEN, incident.number, 'Ben paged in place of Ana');
  await j.idle();
  expect(await couldNotPage(j, incident.streamId)).toEqual([`${ANA}: ${reason}`]);
  const told = await timeline(j, incident.number);
  expect(told).toContain(`Could not page <@U0ANA> at level 1: ${words}`);
  expect(told).toContain('Paging <@U0BEN> instead of <@U0ANA> at level 1');
  await cardSays(j, incident.number, `<@U0ANA> could not be paged: ${words}`, 'instead of <@U0ANA>');
  // Once each: the page timer's command delivered again pages nobody twice.
  await j.sb.bus.dispatch({
    type: 'PageIncidentResponders',
    data: { incident: incident.streamId, level: 1 },
    metadata: {
      now: j.clock.now().toISOString(),
      commandId: `again-${incident.number}`,
      actor: 'system:test',
    },
  });
  await j.idle();
  expect(pagesAbout(j, BEN, incident.number)).toHaveLength(1);
  expect(pagesAbout(j, CHEN, incident.number)).toEqual([]);
  expect(pagesAbout(j, DANA, incident.number)).toEqual([]);
  expect(internalWords(everythingPeopleSaw(j))).toEqual([]);
  return told;
};

/** The DMs to `user` that name incident `number`. */
const dmsAbout = (j: JoinsHarness, user: string, number: number) =>
  j.dms(user).filter((m) => messageText(m).includes(`#${number} `));

describe('a page that cannot be delivered is said, and the next person is paged', () => {
  it('no verified phone: said on the card and the timeline, Ana told how to fix it once, Ben paged', async () => {
    h = await start([BEN, CHEN, DANA, FRANK]);
    const incident = await h.trigger('Card payments failing');
    await pagesDue(h);
    await benPagedInstead(h, incident, 'no_verified_phone', 'no verified phone');
    const dm = await waitFor(() => dmsAbout(h!, ANA, incident.number).at(0), { what: 'the DM to Ana' });
    expect(messageText(dm)).toContain('/verify');
    expect(messageText(dm)).toMatch(/could not page you/i);
    expect(dmsAbout(h, ANA, incident.number)).toHaveLength(1);
    // Her number: never paged.
    expect(sms(h, ANA)).toEqual([]);
  });

  it('a number that must be verified again (unreadable after a restart): said, Ana told, Ben paged', async () => {
    h = await start();
    await makePersonKeyUnreadable(h.sb.store, ANA);
    await h.restart();
    const incident = await h.trigger('Refunds failing');
    await pagesDue(h);
    await benPagedInstead(h, incident, 'must_verify_again', 'their number must be verified again');
    const dm = await waitFor(() => dmsAbout(h!, ANA, incident.number).at(0), { what: 'the DM to Ana' });
    expect(messageText(dm)).toContain('/verify');
    expect(messageText(dm)).toContain('verified again');
    expect(sms(h, ANA)).toEqual([]);
  });

  it('a number found unreadable when the SMS is sent: Ben paged at once, not after the next escalation', async () => {
    h = await start();
    // Paged fine this morning: the pager knows her number.
    const before = await h.trigger('Morning blip');
    await pagesDue(h);
    await paged(h, ANA, before.number);
    await h.incident(`ack ${before.number}`, { user: ANA });
    await h.idle();
    // Then her number can no longer be opened: found when the next page's SMS goes.
    await makePersonKeyUnreadable(h.sb.store, ANA);
    const incident = await h.trigger('Payouts delayed');
    await pagesDue(h);
    const told = await benPagedInstead(
      h,
      incident,
      'must_verify_again',
      'their number must be verified again',
    );
    expect(told).toContain('SMS page to <@U0ANA> could not be sent: the number must be verified again');
    await waitFor(() => dmsAbout(h!, ANA, incident.number).at(0), { what: 'the DM to Ana' });
    expect(pagesAbout(h, ANA, incident.number)).toEqual([]);
  });

  it('opted out by STOP: said, Ana told how to opt back in, Ben paged', async () => {
    h = await start();
    expect((await h.vonage.phones.replySms(PHONES[ANA], 'STOP')).ok).toBe(true);
    await h.idle();
    const incident = await h.trigger('Ledger drift');
    await pagesDue(h);
    await benPagedInstead(h, incident, 'opted_out', 'opted out of paging (replied STOP)');
    const dm = await waitFor(() => dmsAbout(h!, ANA, incident.number).at(0), { what: 'the DM to Ana' });
    expect(messageText(dm)).toContain('/verify');
  });

  it('held back by the per-hour limit: said, Ben paged', async () => {
    h = await start(undefined, { PAGING_MAX_PER_HOUR: '1' });
    const first = await h.trigger('First of two');
    await pagesDue(h);
    await paged(h, ANA, first.number);
    const second = await h.trigger('Second of two');
    await pagesDue(h);
    await benPagedInstead(h, second, 'held_back', 'too many pages this hour');
    // Nothing to fix with /verify: no DM about it.
    expect(dmsAbout(h, ANA, second.number)).toEqual([]);
  });

  it('the SMS rejected by the network (a receipt): Ben paged at once, before the call is due', async () => {
    h = await start();
    h.vonage.phones.reject(PHONES[ANA], 'failed');
    const incident = await h.trigger('Chargebacks stuck');
    await pagesDue(h);
    await benPagedInstead(h, incident, 'sms_refused', 'the SMS was refused');
    expect(dmsAbout(h, ANA, incident.number)).toEqual([]);
  });

  it('the SMS refused by the phone service (a permanent error): Ben paged', async () => {
    h = await start();
    h.vonage.failNext('sendSms', { status: 422, to: PHONES[ANA], field: 'to' });
    const incident = await h.trigger('Invoices missing');
    await pagesDue(h);
    await benPagedInstead(h, incident, 'sms_refused', 'the SMS was refused');
  });

  it('the phone service failing until the last attempt: recorded as given up, not parked; Ben paged', async () => {
    h = await start();
    h.vonage.failNext('sendSms', { status: 503, to: PHONES[ANA], times: 1_000 });
    const incident = await h.trigger('Settlement late');
    await pagesDue(h);
    // The SMS's attempts are durable retries on the scheduler: the clock moves them along.
    for (let i = 0; i < 5; i++) await h.advanceTimers(10_000);
    await benPagedInstead(h, incident, 'gave_up', 'the phone service could not be reached');
    const failed = (await h.stream(`pager-${ANA}`)).find((e) => e.type === 'PageSmsFailed');
    expect(failed?.data.code).toBe('gave_up');
    expect(await h.sb.processors.listParked('paging-sms')).toEqual([]);
    h.vonage.clearFaults();
  });

  it('the call busy, failed or not answered: the next person is paged when it is known', async () => {
    h = await start();
    const busy = await h.trigger('Busy line');
    await pagesDue(h);
    await paged(h, ANA, busy.number);
    expect(pagesAbout(h, BEN, busy.number)).toEqual([]);
    h.vonage.phones.reject(PHONES[ANA], 'busy');
    await h.advanceTimers(3 * MINUTE);
    await benPagedInstead(h, busy, 'busy', 'the line was busy');
  });

  it('a call nobody answers: the next person is paged once it has rung out', async () => {
    h = await start();
    const incident = await h.trigger('Nobody picks up');
    await pagesDue(h);
    await paged(h, ANA, incident.number);
    await h.advanceTimers(3 * MINUTE);
    await waitFor(() => h!.vonage.phones.calls(PHONES[ANA]).find((c) => c.status === 'ringing'), {
      what: 'the page call ringing',
    });
    expect(pagesAbout(h, BEN, incident.number)).toEqual([]);
    h.clock.advance(MINUTE);
    h.vonage.runTimers();
    await h.idle();
    await benPagedInstead(h, incident, 'unanswered', 'the call was not answered');
  });

  it('a call that fails: the next person is paged', async () => {
    h = await start();
    const incident = await h.trigger('Call fails');
    await pagesDue(h);
    await paged(h, ANA, incident.number);
    h.vonage.failNext('createCall', { status: 400, to: PHONES[ANA] });
    await h.advanceTimers(3 * MINUTE);
    await benPagedInstead(h, incident, 'call_failed', 'the call failed');
  });

  it('when nobody at any level can be paged, the card and the timeline say “nobody could be paged”', async () => {
    h = await start([]);
    const incident = await h.trigger('Nobody reachable');
    await pagesDue(h);
    await cardSays(h, incident.number, 'nobody could be paged');
    const told = await timeline(h, incident.number);
    expect(told).toContain('Could not page <@U0ANA> at level 1: no verified phone');
    expect(told).toContain('Could not page <@U0DANA> at level 2: no verified phone');
    expect(told).toContain('Could not page <@U0FRANK> at level 3: no verified phone');
    expect(told).toMatch(/Nobody could be paged/);
    for (const person of [ANA, BEN, CHEN, DANA, FRANK] as const) expect(sms(h, person)).toEqual([]);
    expect(internalWords(everythingPeopleSaw(h))).toEqual([]);
    // The operator's side: a coded log line and a counter per reason.
    expect(h.logs.text()).toContain('SB_PAGE_UNDELIVERABLE');
    const metrics = await (await fetch(`${h.url}/metrics`)).text();
    expect(metrics).toMatch(/switchboard_pages_undeliverable_total\{reason="no_verified_phone"\} [1-9]/);
    expect(metrics).toContain('switchboard_pages_nobody_reachable_total 1');
    expect(metrics).toContain('switchboard_processor_parked_events{processor="paging-sms"} 0');
  });
});

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
  HR_IDS,
  type JoinsHarness,
  joinsSeed,
  MINUTE,
  messageText,
  PAYMENTS_CHANNEL,
  PD_IDS,
  PHONES,
  PLATFORM,
  PLATFORM_CHANNEL,
  startJoinsHarness,
} from './harness.ts';

/**
 * Issue 12, capability 4, end to end (the app, the incident-service, phone and HR simulators and
 * the fake Slack on one clock): paging never wakes someone on approved leave. Their place goes to
 * the next person in their schedule's rotation, else to the next level; the timeline and the card
 * say who was skipped and until when; when everyone is away, that is said and nobody is paged.
 *
 * The rota here starts with Ana this week (Payments primary: Ana, then Ben, then Chen), so her
 * leave covers now; the clock starts on Monday 23 November 2026, 09:00 UTC.
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

const start = async (): Promise<JoinsHarness> => {
  const joins = await startJoinsHarness({ seed: anaThisWeek });
  for (const person of [ANA, BEN, CHEN, DANA, FRANK]) await joins.verifyPhone(person);
  return joins;
};

const sms = (j: JoinsHarness, person: keyof typeof PHONES) => j.smsTo(PHONES[person]).map((m) => m.text);

/** Waits until the paging delay passed and the level's pages went out. */
const pagesDue = async (j: JoinsHarness) => {
  await j.advanceTimers(5 * MINUTE);
  await j.idle();
};

/** `/incident timeline <n>` as Dana: the whole answer (the ack, or what went to its response_url). */
const timeline = async (j: JoinsHarness, number: number, channel = PAYMENTS_CHANNEL): Promise<string> => {
  const from = j.fake.responsePosts.length;
  const res = await postSigned(
    `${j.url}/slack/events`,
    slashCommandBody({
      command: '/incident',
      text: `timeline ${number}`,
      user_id: DANA,
      channel_id: channel,
      response_url: j.fake.responseUrl({ channel, user: DANA }),
      trigger_id: j.fake.issueTrigger({ user: DANA }),
    }),
    'form',
    { timestamp: Math.floor(j.clock.now().getTime() / 1000) },
  );
  const answered = await res.text();
  if (answered.includes('skipped') || answered.includes('leave')) return answered;
  const posted = await waitFor(
    () => j.fake.responsePosts.slice(from).find((p) => JSON.stringify(p.body).includes('Timeline:')),
    { what: 'the timeline', timeoutMs: 10_000 },
  );
  return JSON.stringify(posted.body);
};

const cardSays = (j: JoinsHarness, channel: string, number: number, what: string) =>
  waitFor(
    () => {
      const card = j.fake.messages(channel).find((m) => m.text.startsWith(`#${number} `));
      const text = card ? messageText(card) : '';
      return text.includes(what) ? text : undefined;
    },
    { what: `#${number}'s card to say “${what}”`, timeoutMs: 10_000 },
  );

describe('leave-aware paging', () => {
  it('skips Ana on approved leave and pages the next in the rotation; pending leave does not count', async () => {
    h = await start();
    await h.approvedLeave(ANA, 'holiday 2026-11-23 to 2026-11-27 Family');
    // Ben asked for today in HR's web app; Dana has not approved it: he is not away.
    h.sim.webApp.requestTimeOff({
      employeeId: HR_IDS.ben,
      policyType: 'Holiday',
      startDate: '2026-11-23',
      endDate: '2026-11-23',
    });
    await h.advance(30_000);

    const { streamId, number } = await h.trigger('Card payments failing');
    await pagesDue(h);
    await waitFor(() => sms(h!, BEN).some((t) => t.includes(`#${number}`)) || undefined, {
      what: 'Ben paged',
      timeoutMs: 10_000,
    });
    expect(sms(h, ANA)).toEqual([]);

    const activity = await h.pageActivity(streamId);
    expect(activity).toContainEqual({ kind: 'on_leave', slackUserId: ANA, detail: '2026-11-27', level: 1 });
    expect(activity).toContainEqual({
      kind: 'stand_in',
      slackUserId: BEN,
      detail: 'Payments primary',
      level: 1,
    });
    expect(activity.filter((a) => a.slackUserId === ANA).map((a) => a.kind)).toEqual(['on_leave']);

    const told = await timeline(h, number);
    expect(told).toContain('<@U0ANA> skipped: on approved leave until 27 Nov');
    expect(told).toContain('Paging <@U0BEN> instead of <@U0ANA> at level 1: next on Payments primary');
    await cardSays(h, PAYMENTS_CHANNEL, number, '<@U0ANA> skipped: on approved leave until 27 Nov');

    // The page timer's command delivered again (a redelivery) pages nobody twice.
    const bens = sms(h, BEN).length;
    await h.sb.bus.dispatch({
      type: 'PageIncidentResponders',
      data: { incident: streamId, level: 1 },
      metadata: { now: h.clock.now().toISOString(), commandId: 'redelivered-page-1', actor: 'system:test' },
    });
    await h.idle();
    expect(sms(h, BEN)).toHaveLength(bens);
  });

  it('pages level 2 when everyone at level 1 is away, once, however it escalates; nobody at all is said', async () => {
    h = await start();
    for (const person of [ANA, BEN, CHEN]) {
      await h.approvedLeave(person, 'holiday 2026-11-23 to 2026-12-11 Winter');
    }

    // Payments: level 1 is the rota (Ana, then Ben, then Chen: all away); level 2 Dana.
    const payments = await h.trigger('Transfers stuck');
    await pagesDue(h);
    await waitFor(() => sms(h!, DANA).some((t) => t.includes(`#${payments.number}`)) || undefined, {
      what: 'Dana paged',
      timeoutMs: 10_000,
    });
    for (const person of [ANA, BEN, CHEN] as const) expect(sms(h, person)).toEqual([]);
    const activity = await h.pageActivity(payments.streamId);
    expect(activity).toContainEqual({ kind: 'on_leave', slackUserId: ANA, detail: '2026-12-11', level: 1 });
    expect(activity).toContainEqual({ kind: 'level_on_leave', slackUserId: null, detail: null, level: 1 });
    const told = await timeline(h, payments.number);
    expect(told).toContain('Everyone at level 1 is on leave: paging level 2');
    await cardSays(h, PAYMENTS_CHANNEL, payments.number, 'everyone at level 1 is on leave: paging level 2');

    // Escalated to level 2 (Dana's own level) later: she was paged for it already.
    const danas = sms(h, DANA).length;
    await h.incident(`escalate ${payments.number}`);
    await waitFor(
      async () =>
        (await h!.stream(payments.streamId)).some((e) => e.type === 'IncidentEscalated') || undefined,
      { what: 'escalated to level 2', timeoutMs: 10_000 },
    );
    await pagesDue(h);
    await h.advanceTimers(MINUTE);
    expect(sms(h, DANA)).toHaveLength(danas);

    // Platform: level 1 Chen, level 2 Ana, both named directly, both away.
    const platform = await h.trigger('Gateway 502s', PLATFORM);
    await pagesDue(h);
    await waitFor(
      async () =>
        (await h!.pageActivity(platform.streamId)).some((a) => a.kind === 'everyone_on_leave') || undefined,
      { what: 'everyone away said', timeoutMs: 10_000 },
    );
    expect((await h.pageActivity(platform.streamId)).map((a) => [a.kind, a.slackUserId, a.level])).toEqual([
      ['on_leave', CHEN, 1],
      ['level_on_leave', null, 1],
      ['on_leave', ANA, 2],
      ['everyone_on_leave', null, 1],
    ]);
    for (const person of [ANA, CHEN] as const) expect(sms(h, person)).toEqual([]);
    const platformTold = await timeline(h, platform.number, PLATFORM_CHANNEL);
    expect(platformTold).toContain('<@U0CHEN> skipped: on approved leave until 11 Dec');
    expect(platformTold).toContain('Everyone on call, at every level, is on approved leave: nobody paged');
    await cardSays(
      h,
      PLATFORM_CHANNEL,
      platform.number,
      'everyone on call, at every level, is on approved leave: nobody paged',
    );
  });
  it('skips someone who left (HR terminated them) and pages the next in the rotation instead', async () => {
    h = await start();
    h.sim.webApp.terminate(HR_IDS.ana);
    // HR's webhook, its re-read after the lag, the directory's fact and the leaver guard.
    await waitFor(
      async () => {
        await h!.advanceTimers(10_000);
        return (await h!.sb.people.linkOf(ANA, 'phone')) === undefined || undefined;
      },
      { what: "Ana's phone forgotten", timeoutMs: 30_000 },
    );

    const { streamId, number } = await h.trigger('Refunds failing');
    await pagesDue(h);
    await waitFor(() => sms(h!, BEN).some((t) => t.includes(`#${number}`)) || undefined, {
      what: 'Ben paged in place of Ana',
      timeoutMs: 10_000,
    });
    const activity = await h.pageActivity(streamId);
    expect(activity).toContainEqual({ kind: 'on_leave', slackUserId: ANA, detail: 'left', level: 1 });
    expect(activity.filter((a) => a.slackUserId === ANA).map((a) => a.kind)).toEqual(['on_leave']);
    const told = await timeline(h, number);
    expect(told).toContain('<@U0ANA> skipped: left the company');
    expect(told).toContain('Paging <@U0BEN> instead of <@U0ANA> at level 1');
  });

  it('skips someone only during their leave in their zone: Chen (Singapore) off on Wednesday is paged at 23:30 Tuesday his time, skipped from 00:30 Wednesday to 23:30, paged again at 00:30 Thursday (issue 19)', async () => {
    h = await startJoinsHarness();
    for (const person of [ANA, BEN, CHEN, DANA, FRANK]) await h.verifyPhone(person);
    await h.approvedLeave(CHEN, 'holiday 2026-11-25 Day off');
    const j = h;
    /** A Platform incident (level 1: Chen, named directly; level 2: Ana) paged at `at`: who got it. */
    const pagedAt = async (at: string) => {
      await j.advanceTimers(Date.parse(at) - 5 * MINUTE - j.clock.now().getTime());
      const { streamId, number } = await j.trigger(`Gateway 502s at ${at}`, PLATFORM);
      await pagesDue(j);
      expect(j.clock.now().toISOString()).toBe(new Date(at).toISOString());
      const tag = `#${number}`;
      return waitFor(
        async () => {
          const chen = sms(j, CHEN).some((t) => t.includes(tag));
          const ana = sms(j, ANA).some((t) => t.includes(tag));
          if (!chen && !ana) return undefined;
          const skipped = (await j.pageActivity(streamId)).some(
            (a) => a.kind === 'on_leave' && a.slackUserId === CHEN,
          );
          return { chen, ana, skipped };
        },
        { what: `the page of ${tag}`, timeoutMs: 10_000 },
      );
    };
    // Tue 24 Nov 23:30 in Singapore (15:30 UTC): the evening before his day off.
    expect(await pagedAt('2026-11-24T15:30:00Z')).toEqual({ chen: true, ana: false, skipped: false });
    // Wed 25 Nov 00:30 in Singapore (still Tuesday 16:30 in UTC): on leave, Ana (level 2) instead.
    expect(await pagedAt('2026-11-24T16:30:00Z')).toEqual({ chen: false, ana: true, skipped: true });
    // Wed 25 Nov 23:30 in Singapore: still his day off.
    expect(await pagedAt('2026-11-25T15:30:00Z')).toEqual({ chen: false, ana: true, skipped: true });
    // Thu 26 Nov 00:30 in Singapore (still Wednesday in UTC): back.
    expect(await pagedAt('2026-11-25T16:30:00Z')).toEqual({ chen: true, ana: false, skipped: false });
  });

  it('west of UTC too: Chen in New York off on Wednesday is skipped at 23:30 Wednesday his time, “until 25 Nov”, and paged at 00:30 Thursday (issue 19)', async () => {
    h = await startJoinsHarness({ timeZones: { [CHEN]: 'America/New_York' } });
    for (const person of [ANA, CHEN]) await h.verifyPhone(person);
    await h.approvedLeave(CHEN, 'holiday 2026-11-25 Day off');
    const j = h;
    const pagedAt = async (at: string) => {
      await j.advanceTimers(Date.parse(at) - 5 * MINUTE - j.clock.now().getTime());
      const { streamId, number } = await j.trigger(`Gateway 502s at ${at}`, PLATFORM);
      await pagesDue(j);
      const tag = `#${number}`;
      await waitFor(
        () =>
          sms(j, CHEN).some((t) => t.includes(tag)) || sms(j, ANA).some((t) => t.includes(tag)) || undefined,
        {
          what: `the page of ${tag}`,
          timeoutMs: 10_000,
        },
      );
      return (await j.pageActivity(streamId))
        .filter((a) => a.slackUserId === CHEN)
        .map((a) => [a.kind, a.detail]);
    };
    // Wed 25 Nov 23:30 in New York is Thu 26 Nov 04:30 UTC: still his day off, which ends on the 25th.
    expect(await pagedAt('2026-11-26T04:30:00Z')).toEqual([['on_leave', '2026-11-25']]);
    // Thu 26 Nov 00:30 in New York: back.
    expect((await pagedAt('2026-11-26T05:30:00Z')).map(([kind]) => kind)).not.toContain('on_leave');
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FakeChannel } from '../../sandbox/simulators/slack/fakeSlack.ts';
import { manualClock } from '../../src/core/clock.ts';
import { INCIDENT_THREAD_STREAM_PREFIX } from '../../src/incidents/thread.reactor.ts';
import { waitFor } from '../support/waitFor.ts';
import {
  ANA,
  BEN,
  CHEN,
  cardActions,
  cardText,
  type IncidentHarness,
  OPS,
  startIncidentHarness,
} from './harness.ts';

/**
 * Issue 22 item 7, end to end: an incident channel on demand. The card's "Create channel" and
 * `/incident channel <n>` create `#inc-<n>-<slug>` once (a double click racing the command makes one
 * channel; the second is pointed at it), invite the assignees, the responders and the person who
 * asked, post the card there and keep it in step with the original, say so in the original card's
 * thread and on the timeline, and archive it INCIDENT_CHANNEL_ARCHIVE_HOURS after the resolve (a
 * durable timer on the app's clock). Without `channels:manage` the person who asked is told why,
 * in words.
 */
const HOUR = 60 * 60_000;
const PD_TO_SLACK: Readonly<Record<string, string>> = {
  [ANA.pd]: ANA.slack,
  [BEN.pd]: BEN.slack,
  [CHEN.pd]: CHEN.slack,
};
let h: IncidentHarness;
const clock = manualClock('2026-11-23T09:00:00.000Z');

beforeAll(async () => {
  h = await startIncidentHarness({ clock, env: { INCIDENT_CHANNEL_ARCHIVE_HOURS: '24' } });
});
afterAll(async () => {
  await h.stop();
});

const incidentChannels = (number: number): FakeChannel[] =>
  [...h.fake.channels.values()].filter((c) => c.name.startsWith(`inc-${number}-`));

const activity = async (streamId: string) =>
  (await h.stream(streamId))
    .filter((m) => m.type === 'RecordIncidentWorkActivity')
    .map((m) => (m.data as { kind: string }).kind);

const created = (number: number) =>
  waitFor(
    async () => {
      await h.idle();
      const [c] = incidentChannels(number);
      return c && h.cardOf(c.id, number) ? c : undefined;
    },
    { what: `#${number}'s channel with its card` },
  );

describe('an incident channel on demand', () => {
  it('`/incident channel <n>` creates #inc-<n>-<slug>, invites everyone on it, and keeps the card there in step', async () => {
    const { number, streamId, incidentId } = await h.trigger('Card payments: failing in EU!');
    const asked = await h.slash(`channel ${number}`, { user: CHEN.slack });
    expect(String(asked.body?.text)).toContain('Creating a channel for');
    const channel = await created(number);
    expect(channel.name).toBe(`inc-${number}-card-payments-failing-in-eu`);

    const assignees = (h.sim.state.incidents.get(incidentId)?.assignments ?? []).map(
      (a) => PD_TO_SLACK[a.userId] ?? a.userId,
    );
    expect(channel.members).toEqual(
      expect.arrayContaining([h.fake.botUserId, CHEN.slack, ANA.slack, ...assignees]),
    );
    // The original card names the channel and no longer offers it; its thread says so.
    const original = h.cardOf(OPS, number)!;
    expect(cardText(original)).toContain(`Incident channel: <#${channel.id}>`);
    expect(cardActions(original)).not.toContain('incident.channel');
    const thread = h.fake
      .messages(OPS)
      .filter(
        (m) =>
          m.thread_ts === original.ts &&
          m.ts !== original.ts &&
          !String(m.metadata?.event_payload.record ?? '').startsWith(INCIDENT_THREAD_STREAM_PREFIX),
      );
    expect(thread.map((m) => m.text)).toEqual([expect.stringContaining(`<#${channel.id}>`)]);
    expect(await activity(streamId)).toEqual(['channel_created']);

    // In step: acknowledged from the original, both cards say so.
    await h.click('incident.acknowledge', streamId, { user: ANA.slack, channel: OPS });
    await waitFor(
      () =>
        cardText(h.cardOf(channel.id, number)).includes('Acknowledged') &&
        cardText(h.cardOf(OPS, number)).includes('Acknowledged')
          ? true
          : undefined,
      { what: 'both cards acknowledged' },
    );
    expect(h.cards(channel.id)).toHaveLength(1);

    // Archived 24 hours after the resolve, not before.
    await h.slash(`resolve ${number}`, { user: ANA.slack });
    await waitFor(() => (cardText(h.cardOf(channel.id, number)).includes('Resolved') ? true : undefined), {
      what: 'resolved in the incident channel',
    });
    await h.idle();
    clock.advance(23 * HOUR);
    await h.idle();
    expect(h.fake.channels.get(channel.id)?.is_archived).toBeFalsy();
    clock.advance(1 * HOUR);
    await h.idle();
    expect(h.fake.channels.get(channel.id)?.is_archived).toBe(true);
    expect(await activity(streamId)).toEqual(['channel_created', 'channel_archived']);
  });

  it('a double click racing the command makes one channel; the others are pointed at it', async () => {
    const { number, streamId } = await h.trigger('Refunds stuck');
    const card = h.cardOf(OPS, number)!;
    expect(cardActions(card)).toContain('incident.channel');
    const [first, second, typed] = await Promise.all([
      h.click('incident.channel', streamId, { user: ANA.slack, channel: OPS }),
      h.click('incident.channel', streamId, { user: ANA.slack, channel: OPS }),
      h.slash(`channel ${number}`, { user: BEN.slack }),
    ]);
    const channel = await created(number);
    expect(incidentChannels(number)).toHaveLength(1);
    // Whoever did not get there first is told where it is (or that it is being made).
    const told = await waitFor(
      () => {
        const texts = [
          ...h.fake.responsePosts.filter((p) =>
            [first.responseUrl, second.responseUrl, typed.responseUrl].some((u) =>
              u.endsWith(p.responseUrlId),
            ),
          ),
        ].map((p) => JSON.stringify(p.body));
        return texts.length >= 2 ? texts : undefined;
      },
      { what: 'the other two told' },
    );
    for (const t of told)
      expect(t).toMatch(new RegExp(`already has its channel: <#${channel.id}>|being created`));
    // A click after it exists points at it.
    const later = await h.click('incident.channel', streamId, { user: CHEN.slack, channel: OPS });
    await waitFor(
      () =>
        h.fake.responsePosts.find(
          (p) =>
            later.responseUrl.endsWith(p.responseUrlId) &&
            JSON.stringify(p.body).includes(`<#${channel.id}>`),
        ),
      { what: 'the later click pointed at the channel' },
    );
    expect(incidentChannels(number)).toHaveLength(1);
  });

  it('is not archived when the incident was reopened before the time was up', async () => {
    const { number, streamId, incidentId } = await h.trigger('Webhooks delayed');
    await h.slash(`channel ${number}`, { user: ANA.slack });
    const channel = await created(number);
    await h.slash(`resolve ${number}`, { user: ANA.slack });
    await waitFor(() => (cardText(h.cardOf(channel.id, number)).includes('Resolved') ? true : undefined), {
      what: 'resolved',
    });
    await h.idle();
    clock.advance(2 * HOUR);
    h.sim.webApp.acknowledge(incidentId, ANA.email); // reopened in the incident service's web app
    await waitFor(
      async () => ((await h.stream(streamId)).some((m) => m.type === 'IncidentReopened') ? true : undefined),
      { what: 'reopened' },
    );
    await h.idle();
    clock.advance(30 * HOUR);
    await h.idle();
    expect(h.fake.channels.get(channel.id)?.is_archived).toBeFalsy();
    expect(await activity(streamId)).toEqual(['channel_created']);
  });

  it('a taken name gets a suffix', async () => {
    const { number } = await h.trigger('Ledger drift');
    h.fake.addChannel({ id: 'C0TAKEN', name: `inc-${number}-ledger-drift`, is_im: false });
    await h.slash(`channel ${number}`, { user: ANA.slack });
    await waitFor(
      async () => {
        await h.idle();
        return incidentChannels(number).find((c) => c.name === `inc-${number}-ledger-drift-2`);
      },
      { what: 'the channel with a suffix' },
    );
  });

  it('a forged button value changes nothing and says so', async () => {
    const before = h.fake.channels.size;
    const forged = await h.click('incident.channel', 'timeoff-123', { user: ANA.slack, channel: OPS });
    await h.idle();
    expect(h.fake.channels.size).toBe(before);
    await waitFor(
      () =>
        h.fake.responsePosts.find(
          (p) =>
            forged.responseUrl.endsWith(p.responseUrlId) && JSON.stringify(p.body).includes("doesn't belong"),
        ),
      { what: 'the forged click refused in words' },
    );
  });
});

describe('without channels:manage', () => {
  let bare: IncidentHarness;
  beforeAll(async () => {
    bare = await startIncidentHarness({
      slackScopes: [
        'commands',
        'chat:write',
        'im:write',
        'users:read',
        'users:read.email',
        'channels:history',
        'im:history',
      ],
    });
  });
  afterAll(async () => {
    await bare.stop();
  });

  it('the person who asked is told in words, and may ask again once it is fixed', async () => {
    const { number, streamId } = await bare.trigger('Payouts delayed');
    await bare.slash(`channel ${number}`, { user: BEN.slack });
    const dm = await waitFor(
      async () => {
        await bare.idle();
        return bare.dms(BEN.slack).find((m) => m.text.includes("couldn't create a channel"));
      },
      { what: 'Ben told why' },
    );
    expect(dm.text).toContain('`channels:manage`');
    expect(dm.text).not.toMatch(/missing_scope|SB_/);
    expect([...bare.fake.channels.values()].filter((c) => c.name.startsWith(`inc-${number}-`))).toHaveLength(
      0,
    );
    const timeline = (await bare.stream(streamId)).filter((m) => m.type === 'RecordIncidentWorkActivity');
    expect(timeline.map((m) => (m.data as { kind: string }).kind)).toEqual(['channel_failed']);
    // Asking again is allowed (not "already has its channel").
    await bare.slash(`channel ${number}`, { user: BEN.slack });
    await waitFor(
      async () => {
        await bare.idle();
        return (
          bare.dms(BEN.slack).filter((m) => m.text.includes("couldn't create a channel")).length === 2 ||
          undefined
        );
      },
      { what: 'the second ask tried again' },
    );
  });
});

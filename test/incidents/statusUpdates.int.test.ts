import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { manualClock } from '../../src/core/clock.ts';
import { waitFor } from '../support/waitFor.ts';
import {
  ANA,
  BEN,
  CHEN,
  type IncidentHarness,
  OPS,
  PAYMENTS_CHANNEL,
  startIncidentHarness,
} from './harness.ts';

/**
 * Issue 22 item 3: status updates for people who are not responders. `/incident update` posts to
 * the incident's channel and to the service's stakeholder channels and is on the timeline; the
 * assignee is reminded by DM after INCIDENT_UPDATE_REMINDER_MINUTES without an update (durable
 * timers on the app's manual clock, across a restart), never after resolve.
 */
const clock = manualClock('2026-11-23T09:00:00.000Z');
const STAKEHOLDERS = PAYMENTS_CHANNEL;
let h: IncidentHarness;
beforeAll(async () => {
  h = await startIncidentHarness({ clock, env: { INCIDENT_UPDATE_REMINDER_MINUTES: '30' } });
});
afterEach(async () => {
  h.sim.clearFaults();
  await h.idle();
  h.sim.assertNoViolations();
});
afterAll(async () => {
  await h.stop();
});

const PEOPLE = [ANA, BEN, CHEN];
/** The Slack user the incident is assigned to (the simulator's on-call). */
const assigneeOf = async (streamId: string): Promise<string> => {
  const triggered = (await h.stream(streamId)).find((m) => m.type === 'IncidentTriggered');
  const id = (triggered?.data as { assignees?: { id: string }[] } | undefined)?.assignees?.[0]?.id;
  const person = PEOPLE.find((p) => p.pd === id);
  if (!person) throw new Error(`assigned to ${id}, not one of the harness's people`);
  return person.slack;
};
/** The incident's label, linked to the incident service: `<url|#12 title>`. */
const names = (text: string, number: number): boolean => new RegExp(`\\|#${number} `).test(text);
const updateOf = (text: string, number: number): boolean =>
  text.includes('Status update on ') && names(text, number);
const remindersTo = (user: string, number: number) =>
  h.fake
    .messages(h.fake.dmChannel(user).id)
    .filter((m) => m.text.includes('No status update on ') && names(m.text, number));
const advance = async (minutes: number) => {
  clock.advance(minutes * 60_000);
  await h.idle();
};

describe('/incident update', () => {
  it('posts to the incident channel and each stakeholder channel, and records it on the timeline', async () => {
    const subscribed = await h.slash('subscribe Payments API stakeholders', {
      channel: STAKEHOLDERS,
      user: CHEN.slack,
    });
    expect(String(subscribed.body?.text)).toContain('status updates of incidents of “Payments API”');
    await waitFor(
      () => h.fake.messages(STAKEHOLDERS).find((m) => m.text.includes('now gets the status updates')),
      { what: 'the stakeholder channel told' },
    );

    const { number, streamId, card } = await h.trigger('Card payments declined in EU');
    const answer = await h.slash(`update ${number} Rolled back the 14:02 deploy <!channel> & watching`, {
      user: ANA.slack,
    });
    expect(String(answer.body?.text)).toContain('Posting your update');
    const isUpdate = (m: { text: string; thread_ts?: string | undefined }) =>
      updateOf(m.text, number) && m.thread_ts === undefined;
    const inOps = await waitFor(() => h.fake.messages(OPS).find(isUpdate), { what: 'the update in #ops' });
    const inStakeholders = await waitFor(() => h.fake.messages(STAKEHOLDERS).find(isUpdate), {
      what: 'the update in the stakeholder channel',
    });
    for (const m of [inOps, inStakeholders]) {
      expect(m.text).toContain('Rolled back the 14:02 deploy &lt;!channel&gt; &amp; watching');
      expect(m.text).toContain(`Posted by <@${ANA.slack}>`);
    }
    // Stakeholders get updates, not the card.
    expect(h.cardOf(STAKEHOLDERS, number)).toBeUndefined();
    await h.idle();
    expect(h.fake.messages(STAKEHOLDERS).filter(isUpdate)).toHaveLength(1);
    expect(h.fake.messages(OPS).filter(isUpdate)).toHaveLength(1);

    const timeline = await h.answer(await h.slash(`timeline ${number}`));
    expect(timeline).toContain(
      'Status update: “Rolled back the 14:02 deploy &lt;!channel&gt; &amp; watching”',
    );
    // The card's thread tells it too.
    await waitFor(
      () =>
        h.fake.messages(OPS).find((m) => m.thread_ts === card.ts && m.text.includes('Status update')) ??
        undefined,
      { what: 'the update in the thread' },
    );
    await h.slash(`resolve ${number}`);
    await waitFor(
      async () => ((await h.stream(streamId)).some((m) => m.type === 'IncidentResolved') ? true : undefined),
      {
        what: 'resolved',
      },
    );
  });

  it('an update with no text opens the form; its submission posts the update', async () => {
    const { number, streamId } = await h.trigger('Refunds queue stuck');
    await h.slash(`update ${number}`, { user: BEN.slack });
    const view = await waitFor(
      () =>
        [...h.fake.views.values()].find(
          (v) => v.view.callback_id === 'incident.update' && v.user === BEN.slack,
        ),
      {
        what: 'the status update form',
      },
    );
    const meta = String(view.view.private_metadata);
    await h.submitView(
      'incident.update',
      { 'incident.update.text': { text: { type: 'plain_text_input', value: 'Queue drained' } } },
      meta,
      BEN.slack,
    );
    await waitFor(
      () => h.fake.messages(OPS).find((m) => updateOf(m.text, number) && m.text.includes('Queue drained')),
      { what: 'the update from the form' },
    );
    await h.slash(`resolve ${number}`);
    await waitFor(
      async () => ((await h.stream(streamId)).some((m) => m.type === 'IncidentResolved') ? true : undefined),
      {
        what: 'resolved',
      },
    );
  });
});

describe('Post update on the card', () => {
  it("opens the form for the card's incident; a button naming another incident is refused", async () => {
    const { number, streamId } = await h.trigger('Payouts delayed');
    const other = await h.trigger('Payouts report empty');
    await h.click('incident.update', streamId, { user: CHEN.slack, channel: OPS, messageTs: other.card.ts });
    await h.idle();
    expect(
      [...h.fake.views.values()].some(
        (v) => v.view.callback_id === 'incident.update' && v.user === CHEN.slack,
      ),
    ).toBe(false);
    await h.click('incident.update', streamId, {
      user: CHEN.slack,
      channel: OPS,
      messageTs: h.cardOf(OPS, number)!.ts,
    });
    const view = await waitFor(
      () =>
        [...h.fake.views.values()].find(
          (v) => v.view.callback_id === 'incident.update' && v.user === CHEN.slack,
        ),
      { what: 'the form from the card' },
    );
    expect(JSON.stringify(view.view.blocks)).toContain(`#${number} Payouts delayed`);
    await h.submitView(
      'incident.update',
      { 'incident.update.text': { text: { type: 'plain_text_input', value: 'Payouts resume at 10:00' } } },
      String(view.view.private_metadata),
      CHEN.slack,
    );
    await waitFor(
      () => h.fake.messages(OPS).find((m) => updateOf(m.text, number) && m.text.includes('Payouts resume')),
      { what: 'the update from the card' },
    );
    for (const id of [streamId, other.streamId]) {
      await h.click('incident.resolve', id, { user: ANA.slack, channel: OPS });
    }
    await waitFor(
      async () =>
        (await h.stream(other.streamId)).some((m) => m.type === 'IncidentResolved') &&
        (await h.stream(streamId)).some((m) => m.type === 'IncidentResolved')
          ? true
          : undefined,
      { what: 'both resolved' },
    );
  });
});

describe('reminders to post an update', () => {
  it('DMs the assignee after the configured time without an update, again across a restart, and never after resolve', async () => {
    const { number, streamId } = await h.trigger('Checkout timeouts in US-East');
    const assignee = await assigneeOf(streamId);

    await advance(5);
    await h.slash(`update ${number} Investigating the load balancer`, { user: ANA.slack });
    await waitFor(() => h.fake.messages(OPS).find((m) => updateOf(m.text, number)), {
      what: 'the update',
    });
    // 30 minutes after the trigger: an update was posted since, so no reminder.
    await advance(26);
    expect(remindersTo(assignee, number)).toHaveLength(0);
    // 30 minutes after the update: reminded, once.
    await advance(5);
    const first = await waitFor(() => remindersTo(assignee, number)[0], { what: 'the first reminder' });
    expect(first.text).toContain(`/incident update ${number}`);
    expect(first.text).toContain('for 30 minutes');
    await advance(1);
    expect(remindersTo(assignee, number)).toHaveLength(1);

    // The next quiet period's timer is in the store: it fires after a restart.
    await h.restart();
    await advance(30);
    await waitFor(() => (remindersTo(assignee, number).length === 2 ? true : undefined), {
      what: 'the reminder after the restart',
    });

    await h.slash(`resolve ${number}`);
    await waitFor(
      async () => ((await h.stream(streamId)).some((m) => m.type === 'IncidentResolved') ? true : undefined),
      {
        what: 'resolved',
      },
    );
    await advance(31);
    await advance(60);
    expect(remindersTo(assignee, number)).toHaveLength(2);
    const recorded = (await h.stream(streamId)).filter((m) => m.type === 'RemindIncidentStatusUpdate');
    // The timer of the period the resolve cut short fired and was answered with nothing.
    expect(recorded).toHaveLength(4);
  });
});

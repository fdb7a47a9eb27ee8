import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ackAnswerTimerId, ackReminderTimerId } from '../../machines/incident/ackReminder.ts';
import { manualClock } from '../../src/core/clock.ts';
import { INCIDENT_THREAD_STREAM_PREFIX } from '../../src/incidents/thread.reactor.ts';
import { readTimer } from '../../src/processors/scheduler.ts';
import { buttonValue, type SlackDriver, slackDriver } from '../support/slackHarness.ts';
import { waitFor } from '../support/waitFor.ts';
import { ANA, CHEN, MINUTE, OPS, type PagingHarness, startPagingHarness } from './pagingHarness.ts';

/**
 * Issue 22 item 4, end to end: an incident left acknowledged and open reminds its assignee by DM
 * ("Still working on it" / "Resolve") after INCIDENT_ACK_REMINDER_MINUTES on the app's clock, once;
 * "Still working on it" starts the wait again; "Resolve" resolves it through the card's own
 * command path; nobody answering within INCIDENT_ACK_REMINDER_ANSWER_MINUTES is said in the
 * thread of the incident's card; a resolve or a new acknowledgement cancels what was pending; and
 * a reminder pending when the app stops fires after it starts again (Grafana OnCall's users
 * report reminders silently not sent).
 *
 * Platform Gateway incidents are assigned to Chen (level 1); Ana acknowledges them.
 */
let h: PagingHarness;
let slack: SlackDriver;
const clock = manualClock('2026-11-23T09:00:00.000Z');

beforeAll(async () => {
  h = await startPagingHarness({
    clock,
    env: { INCIDENT_ACK_REMINDER_MINUTES: '30', INCIDENT_ACK_REMINDER_ANSWER_MINUTES: '15' },
  });
  slack = slackDriver(h.fake, { url: () => h.url, clock });
});
afterAll(async () => {
  await h.stop();
});

/** Chen's reminders about incident `number`. */
const reminders = (number: number) =>
  h.fake
    .messages(h.fake.dmChannel(CHEN.slack).id)
    .filter((m) => m.text.includes(`#${number} `) && m.text.includes('still open'));

/** What was said in the thread of #number's card in #ops. */
const thread = (number: number) => {
  const card = h.fake.messages(OPS).find((m) => m.bot_id !== '' && m.text.startsWith(`#${number} `));
  return h.fake
    .messages(OPS)
    .filter(
      (m) =>
        card &&
        m.thread_ts === card.ts &&
        m.ts !== card.ts &&
        !String(m.metadata?.event_payload.record ?? '').startsWith(INCIDENT_THREAD_STREAM_PREFIX),
    );
};

const workActivity = async (streamId: string) =>
  (await h.stream(streamId))
    .filter((m) => m.type === 'RecordIncidentWorkActivity')
    .map((m) => (m.data as { kind: string }).kind);

const ackedIncident = async (title: string) => {
  const incident = await h.trigger(title);
  await h.slash(`ack ${incident.number}`, ANA.slack);
  await waitFor(
    async () =>
      (await h.stream(incident.streamId)).find((m) => m.type === 'IncidentAcknowledged') ?? undefined,
    { what: `#${incident.number} acknowledged` },
  );
  await h.idle();
  const ack = (await h.stream(incident.streamId)).find((m) => m.type === 'IncidentAcknowledged')!;
  return { ...incident, ack: ack.id };
};

describe('acknowledge reminders', () => {
  it('fire once after the configured time, and nobody answering is said in the card’s thread', async () => {
    const { number, streamId } = await ackedIncident('Gateway latency');
    await h.advance(29 * MINUTE);
    expect(reminders(number)).toHaveLength(0);
    await h.advance(1 * MINUTE);
    const dm = reminders(number);
    expect(dm).toHaveLength(1);
    expect(buttonValue(dm[0]!, 'incident.keep')).toBeDefined();
    expect(buttonValue(dm[0]!, 'incident.resolve')).toBe(streamId);
    // A Slack date token in the message (each reader's zone); the notification text is in Chen's zone.
    expect(JSON.stringify(dm[0]!.blocks)).toMatch(/acknowledged <!date\^\d+\^/);
    expect(dm[0]!.text).toContain('acknowledged Nov 23');

    await h.advance(14 * MINUTE);
    expect(thread(number)).toHaveLength(0);
    await h.advance(1 * MINUTE);
    expect(thread(number).map((m) => m.text)).toEqual([
      expect.stringContaining(`<@${CHEN.slack}> was reminded by DM and has not answered`),
    ]);
    // Once: nothing more, however long it stays open.
    await h.advance(3 * 60 * MINUTE);
    expect(reminders(number)).toHaveLength(1);
    expect(thread(number)).toHaveLength(1);
    expect(await workActivity(streamId)).toEqual(['ack_reminder_sent', 'ack_reminder_unanswered']);
  });

  it('“Still working on it” keeps it (only the person reminded may say so) and starts the wait again', async () => {
    const { number, streamId } = await ackedIncident('Gateway 502s');
    await h.advance(30 * MINUTE);
    const [dm] = reminders(number);
    const value = buttonValue(dm!, 'incident.keep')!;

    // Someone else, and a forged value: refused in words, nothing kept.
    const ana = await slack.click('incident.keep', value, { user: ANA.slack, channel: OPS });
    const forged = await slack.click('incident.keep', `${streamId}|not-an-ack|0`, {
      user: CHEN.slack,
      channel: OPS,
    });
    await h.idle();
    await waitFor(
      () => slack.responses(ana.responseUrl).find((t) => t.includes('Only the person reminded')),
      {
        what: 'Ana told she was not reminded',
      },
    );
    await waitFor(
      () => slack.responses(forged.responseUrl).find((t) => t.includes("isn't one Switchboard sent")),
      { what: 'the forged reminder refused' },
    );
    expect(await workActivity(streamId)).toEqual(['ack_reminder_sent']);

    await h.advance(5 * MINUTE);
    await slack.click('incident.keep', value, { user: CHEN.slack, channel: h.fake.dmChannel(CHEN.slack).id });
    await h.idle();
    expect(await workActivity(streamId)).toEqual(['ack_reminder_sent', 'ack_reminder_kept']);
    expect(slack.responses(ana.responseUrl).join('\n')).not.toContain('Noted');
    expect(
      h.fake
        .messages(h.fake.dmChannel(CHEN.slack).id)
        .filter((m) => m.text.includes(`Noted: you are still working on`) && m.text.includes(`#${number} `)),
    ).toHaveLength(1);
    // The unanswered notice is off; the next reminder is 30 minutes after the answer.
    await h.advance(15 * MINUTE);
    expect(thread(number)).toHaveLength(0);
    await h.advance(14 * MINUTE);
    expect(reminders(number)).toHaveLength(1);
    await h.advance(1 * MINUTE);
    expect(reminders(number)).toHaveLength(2);
    expect(reminders(number)[1]!.text).toContain('you said you were still working on it');
  });

  it('“Resolve” resolves it through the card’s command path, and nothing more is sent', async () => {
    const { number, incidentId } = await ackedIncident('Gateway timeouts');
    await h.advance(30 * MINUTE);
    const [dm] = reminders(number);
    await slack.click('incident.resolve', buttonValue(dm!, 'incident.resolve')!, {
      user: CHEN.slack,
      channel: h.fake.dmChannel(CHEN.slack).id,
    });
    await h.idle();
    await waitFor(() => h.pd.state.incidents.get(incidentId)?.status === 'resolved' || undefined, {
      what: `#${number} resolved upstream`,
    });
    await h.advance(60 * MINUTE);
    expect(thread(number)).toHaveLength(0);
    expect(reminders(number)).toHaveLength(1);
  });

  it('a resolve or a new acknowledgement cancels the pending reminder', async () => {
    const resolved = await ackedIncident('Gateway cert expiring');
    await h.advance(10 * MINUTE);
    await h.slash(`resolve ${resolved.number}`, ANA.slack);
    await h.idle();
    await waitFor(
      async () =>
        (await readTimer(h.sb.store, ackReminderTimerId(resolved.streamId, resolved.ack, 0))).status ===
          'cancelled' || undefined,
      { what: 'the reminder cancelled by the resolve' },
    );
    await h.advance(60 * MINUTE);
    expect(reminders(resolved.number)).toHaveLength(0);

    // Acknowledged again (after going back to triggered): the first acknowledgement's reminder
    // is cancelled and the new one counts from the new acknowledgement.
    const again = await ackedIncident('Gateway flapping');
    await h.advance(20 * MINUTE);
    h.pd.webApp.unacknowledge(again.incidentId);
    await h.idle();
    await h.slash(`ack ${again.number}`, ANA.slack);
    await waitFor(
      async () =>
        (await h.stream(again.streamId)).filter((m) => m.type === 'IncidentAcknowledged').length === 2 ||
        undefined,
      { what: 'acknowledged again' },
    );
    await h.idle();
    expect((await readTimer(h.sb.store, ackReminderTimerId(again.streamId, again.ack, 0))).status).toBe(
      'cancelled',
    );
    await h.advance(10 * MINUTE);
    expect(reminders(again.number)).toHaveLength(0);
    await h.advance(20 * MINUTE);
    expect(reminders(again.number)).toHaveLength(1);
  });

  it('a reminder pending when the app stops fires after it starts again, once', async () => {
    const { number, streamId, ack } = await ackedIncident('Gateway memory leak');
    await h.advance(10 * MINUTE);
    expect((await readTimer(h.sb.store, ackReminderTimerId(streamId, ack, 0))).status).toBe('pending');
    await h.restart();
    await h.advance(19 * MINUTE);
    expect(reminders(number)).toHaveLength(0);
    await h.advance(1 * MINUTE);
    expect(reminders(number)).toHaveLength(1);
    // The answer timer survives a restart too.
    expect((await readTimer(h.sb.store, ackAnswerTimerId(streamId, ack, 0))).status).toBe('pending');
    await h.restart();
    await h.advance(15 * MINUTE);
    expect(thread(number)).toHaveLength(1);
    expect(reminders(number)).toHaveLength(1);
  });
});

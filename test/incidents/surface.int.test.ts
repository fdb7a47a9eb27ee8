import { request } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { INCIDENT_FIELD } from '../../handlers/incident/ids.ts';
import { eventCallbackBody, slashCommandBody } from '../../sandbox/simulators/slack/signing.ts';
import { startTestApp } from '../support/startApp.ts';
import { waitFor } from '../support/waitFor.ts';
import {
  ANA,
  BEN,
  CHEN,
  cardActions,
  cardText,
  type IncidentHarness,
  NORA,
  OPS,
  PAYMENTS_API,
  PAYMENTS_CHANNEL,
  startIncidentHarness,
} from './harness.ts';

/**
 * The rest of the Slack surface: the trigger and note forms (opened inside the 3 s window),
 * subscriptions with incidents from monitoring (the events route), list / show / oncall, the other
 * moves, malformed input, and the answer when incidents are not configured.
 */
let h: IncidentHarness;
beforeAll(async () => {
  h = await startIncidentHarness();
});
afterEach(async () => {
  h.sim.clearFaults();
  await h.idle();
  h.sim.assertNoViolations();
});
afterAll(async () => {
  await h.stop();
});

const bodyText = (b: Record<string, unknown> | null): string => JSON.stringify(b ?? {});

describe('forms', () => {
  it('/incident trigger with no arguments opens the form in time; submitting it creates the incident', async () => {
    const triggerId = h.fake.issueTrigger({ user: ANA.slack });
    const res = await h.slash('trigger', { triggerId });
    expect(res.status).toBe(200);
    const opened = await waitFor(
      () => h.fake.callsOf('views.open').find((c) => c.params.trigger_id === triggerId),
      {
        what: 'views.open',
      },
    );
    expect(opened.error).toBeUndefined();
    const view = [...h.fake.views.values()].find((v) => v.view.callback_id === 'incident.trigger')!;
    expect(view.user).toBe(ANA.slack);

    const serviceBlock = (view.view.blocks as { block_id: string; element: { type: string } }[])[0]!;
    const serviceValue =
      serviceBlock.element.type === 'static_select'
        ? { type: 'static_select', selected_option: { value: PAYMENTS_API.id } }
        : { type: 'plain_text_input', value: 'payments api' };
    const before = h.sim.state.incidents.size;
    const submitted = await h.submitView(
      'incident.trigger',
      {
        [INCIDENT_FIELD.triggerService.blockId]: { [INCIDENT_FIELD.triggerService.actionId]: serviceValue },
        [INCIDENT_FIELD.triggerTitle.blockId]: {
          [INCIDENT_FIELD.triggerTitle.actionId]: { type: 'plain_text_input', value: 'checkout 500s' },
        },
        [INCIDENT_FIELD.triggerUrgency.blockId]: {
          [INCIDENT_FIELD.triggerUrgency.actionId]: {
            type: 'radio_buttons',
            selected_option: { value: 'low' },
          },
        },
        [INCIDENT_FIELD.triggerDetails.blockId]: {
          [INCIDENT_FIELD.triggerDetails.actionId]: { type: 'plain_text_input', value: 'since 02:00' },
        },
      },
      String(view.view.private_metadata),
    );
    expect(submitted.status).toBe(200);
    const created = await waitFor(
      () => (h.sim.state.incidents.size > before ? [...h.sim.state.incidents.values()].at(-1) : undefined),
      {
        what: 'the incident upstream',
      },
    );
    expect(created).toMatchObject({
      title: 'checkout 500s',
      urgency: 'low',
      serviceId: PAYMENTS_API.id,
      details: 'since 02:00',
    });
    expect(h.sim.requestsFor('createIncident').at(-1)?.headers.from).toBe(ANA.email);
    await waitFor(() => h.cardOf(OPS, created.number), {
      what: 'its card in the channel the form came from',
    });
  });

  it('a form with a missing title is answered with the field error', async () => {
    const res = await h.submitView(
      'incident.trigger',
      {
        [INCIDENT_FIELD.triggerService.blockId]: {
          [INCIDENT_FIELD.triggerService.actionId]: { type: 'plain_text_input', value: 'Payments API' },
        },
        [INCIDENT_FIELD.triggerTitle.blockId]: {
          [INCIDENT_FIELD.triggerTitle.actionId]: { type: 'plain_text_input', value: '  ' },
        },
      },
      JSON.stringify({ channel: OPS }),
    );
    expect(res.body).toMatchObject({
      response_action: 'errors',
      errors: { [INCIDENT_FIELD.triggerTitle.blockId]: expect.any(String) },
    });
  });

  it('Add note opens the note form; its submission adds the note upstream as the user', async () => {
    const { streamId, incidentId, number } = await h.trigger('needs a note');
    const triggerId = h.fake.issueTrigger({ user: BEN.slack });
    await h.click('incident.note', streamId, { user: BEN.slack, triggerId });
    const view = await waitFor(
      () =>
        [...h.fake.views.values()].find(
          (v) => v.view.callback_id === 'incident.note' && v.user === BEN.slack,
        ),
      {
        what: 'the note form',
      },
    );
    await h.submitView(
      'incident.note',
      {
        [INCIDENT_FIELD.noteContent.blockId]: {
          [INCIDENT_FIELD.noteContent.actionId]: {
            type: 'plain_text_input',
            value: 'failing over to replica',
          },
        },
      },
      String(view.view.private_metadata),
      BEN.slack,
    );
    await waitFor(
      () => h.sim.state.incidents.get(incidentId)?.notes.some((n) => n.content === 'failing over to replica'),
      {
        what: 'the note upstream',
      },
    );
    expect(h.sim.requestsFor('createIncidentNote').at(-1)?.headers.from).toBe(BEN.email);
    await waitFor(() => cardText(h.cardOf(OPS, number)).includes('failing over to replica') || undefined, {
      what: 'note on the card',
    });
  });
});

describe('cards where Slack lets Switchboard post them', () => {
  it('triggered from a channel the bot is not in: the card goes to the requester by DM', async () => {
    const before = new Set(h.sim.state.incidents.keys());
    await h.slash('trigger Payments API secret room outage', { channel: 'C0SECRET', user: BEN.slack });
    const incident = await waitFor(() => [...h.sim.state.incidents.values()].find((i) => !before.has(i.id)), {
      what: 'the incident upstream',
    });
    const dm = h.fake.dmChannel(BEN.slack).id;
    const card = await waitFor(() => h.cardOf(dm, incident.number), { what: 'the card in the DM' });
    expect(cardText(card)).toContain("can't post in <#C0SECRET>");
    await h.click('incident.acknowledge', await h.streamOfNumber(incident.number), {
      user: BEN.slack,
      channel: dm,
    });
    await waitFor(
      () => cardText(h.cardOf(dm, incident.number)).includes('Acknowledged by <@U0BEN>') || undefined,
      {
        what: 'the DM card updated',
      },
    );
    expect(h.cards(dm).filter((m) => m.text.startsWith(`#${incident.number} `))).toHaveLength(1);
  });
});

describe('subscriptions and incidents from monitoring', () => {
  it('/incident subscribe routes a service to a channel; an events-route trigger gets a card there', async () => {
    const res = await h.slash('subscribe Payments API', { channel: PAYMENTS_CHANNEL, user: CHEN.slack });
    expect(bodyText(res.body)).toContain('Subscribing this channel');
    await waitFor(
      () =>
        h.fake
          .messages(PAYMENTS_CHANNEL)
          .find((m) => m.text.includes('now gets a card for every *Payments API* incident')),
      {
        what: 'the subscription is confirmed in the channel',
      },
    );

    const enqueue = await request(`${h.sim.eventsUrl}/v2/enqueue`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        routing_key: PAYMENTS_API.routingKey,
        event_action: 'trigger',
        dedup_key: 'disk/db-primary',
        payload: { summary: 'db-primary disk 97%', source: 'prometheus', severity: 'critical' },
      }),
    });
    expect(enqueue.statusCode).toBe(202);
    await enqueue.body.text();
    const incident = await waitFor(
      () => [...h.sim.state.incidents.values()].find((i) => i.incidentKey === 'disk/db-primary'),
      {
        what: 'the incident from monitoring',
      },
    );
    const card = await waitFor(() => h.cardOf(PAYMENTS_CHANNEL, incident.number), {
      what: 'its card in #payments',
    });
    expect(cardText(card)).toContain('db-primary disk 97%');
    expect(cardActions(card)).toContain('incident.acknowledge');
    // Ack from that card works like any other.
    const streamId = await h.streamOfNumber(incident.number);
    expect(streamId).toBe(`incident-${incident.id}`);
    await h.click('incident.acknowledge', streamId, { user: CHEN.slack, channel: PAYMENTS_CHANNEL });
    await waitFor(
      () =>
        cardText(h.cardOf(PAYMENTS_CHANNEL, incident.number)).includes('Acknowledged by <@U0CHEN>') ||
        undefined,
      {
        what: 'acked in #payments',
      },
    );
    const listed = await h.slash('subscribe', { channel: PAYMENTS_CHANNEL, user: CHEN.slack });
    expect(String(listed.body?.text)).toContain('This channel gets the cards of: Payments API.');
    // Subscribing again is refused with a reason.
    const mark = h.fake.ephemerals.length;
    await h.slash('subscribe payments api', { channel: PAYMENTS_CHANNEL, user: CHEN.slack });
    const told = await waitFor(
      () => h.ephemeralsFor(CHEN.slack, mark).find((t) => t.includes('already gets')),
      { what: 'refusal' },
    );
    expect(told).toContain('Payments API');
  });
});

describe('queries and the other moves', () => {
  it('/incident list shows open incidents; show posts one card ephemerally', async () => {
    const { number } = await h.trigger('listed incident');
    const list = await h.slash('list');
    expect(list.body).toMatchObject({ response_type: 'ephemeral' });
    expect(await h.answer(list)).toContain('listed incident');
    expect(await h.answer(list)).toContain('incident.show');
    const show = await h.slash(`show ${number}`);
    expect(await h.answer(show)).toContain(`#${number} listed incident`);
    expect(await h.answer(show)).toContain('incident.acknowledge');
    const unknown = await h.slash('show 9999');
    expect(bodyText(unknown.body)).toContain("doesn't know incident #9999");
  });

  it('escalate, reassign and note from the command line reach the incident service', async () => {
    const { incidentId, number } = await h.trigger('many moves');
    await h.slash(`escalate ${number}`, { user: BEN.slack });
    await waitFor(() => (h.sim.state.incidents.get(incidentId)?.escalationLevel === 2 ? true : undefined), {
      what: 'level 2',
    });
    await h.idle();
    // Typed as a person types it; Slack sends it as <@U0CHEN|chen> (/incident has should_escape).
    await h.slash(`reassign ${number} @chen`, { user: BEN.slack });
    await waitFor(
      () => h.sim.state.incidents.get(incidentId)?.assignments.some((a) => a.userId === CHEN.pd) || undefined,
      {
        what: 'reassigned to Chen',
      },
    );
    await h.idle();
    await h.slash(`note ${number} rolled back deploy 1234`, { user: BEN.slack });
    await waitFor(
      () =>
        h.sim.state.incidents.get(incidentId)?.notes.some((n) => n.content === 'rolled back deploy 1234') ||
        undefined,
      {
        what: 'the note',
      },
    );
    const writes = [
      ...h.sim.requestsFor('updateIncident'),
      ...h.sim.requestsFor('createIncidentNote'),
    ].filter((r) => r.url.includes(incidentId));
    expect(writes.map((w) => w.headers.from)).toEqual([BEN.email, BEN.email, BEN.email]);
    await waitFor(() => cardText(h.cardOf(OPS, number)).includes('<@U0CHEN>') || undefined, {
      what: 'card names Chen',
    });
  });

  it('malformed commands are explained with the usage', async () => {
    const cases: [string, string][] = [
      ['frobnicate', 'not something Switchboard knows'],
      ['ack', 'Which incident?'],
      ['escalate 3 two', 'The level must be a number'],
      ['reassign 3 bob', 'is not a Slack user'],
      ['trigger onlyoneword', 'Give a service and a title'],
    ];
    for (const [text, expected] of cases) {
      const res = await h.slash(text);
      expect(res.body).toMatchObject({ response_type: 'ephemeral' });
      expect(String(res.body?.text)).toContain(expected);
      expect(String(res.body?.text)).toContain('Usage:');
    }
    const help = await h.slash('help');
    expect(bodyText(help.body)).toContain('/incident trigger');
  });

  it('/oncall answers who is on call now and next, for everyone, a service or a person', async () => {
    const all = await h.slash('', { command: '/oncall' });
    expect(all.status).toBe(200);
    const text = await h.answer(all);
    expect(text).toContain('On call now');
    expect(text).toContain('Payments');
    expect(text).toContain('Level 1');
    const service = await h.slash('Platform Gateway', { command: '/oncall' });
    expect(await h.answer(service)).toContain('On call for Platform Gateway');
    const me = await h.slash('@ana', { command: '/oncall' }); // arrives as <@U0ANA|ana>
    expect(await h.answer(me)).toContain('<@U0ANA> (Payments Primary)');
    const nobody = await h.slash('no such thing', { command: '/oncall' });
    expect(await h.answer(nobody)).toContain('No service, schedule or escalation policy matches');
  });
});

describe('App Home', () => {
  it('opening the Home tab shows your open incidents and the team’s; an unmapped user is told why', async () => {
    const { number } = await h.trigger('home tab incident');
    await h.post(
      eventCallbackBody({ type: 'app_home_opened', user: ANA.slack, channel: 'D0ANA', tab: 'home' }),
      'json',
    );
    const home = await waitFor(() => h.fake.homes.get(ANA.slack), { what: 'Ana’s home tab' });
    const text = JSON.stringify(home.view);
    expect(text).toContain('*Yours*');
    expect(text).toContain(`#${number} home tab incident`);
    await h.post(
      eventCallbackBody({ type: 'app_home_opened', user: NORA.slack, channel: 'D0NORA', tab: 'home' }),
      'json',
    );
    const nora = await waitFor(() => h.fake.homes.get(NORA.slack), { what: 'Nora’s home tab' });
    expect(JSON.stringify(nora.view)).toContain('has no user in the incident service');
    expect(JSON.stringify(nora.view)).toContain(`#${number} home tab incident`);
    expect(h.logs.text()).not.toContain('did not ack it');
  });
});

describe('incidents switched off', () => {
  it('/incident answers with one line saying the incident service is not configured', async () => {
    const off = await startTestApp();
    try {
      const res = await off.postSlack(slashCommandBody({ command: '/incident', text: 'list' }), 'form');
      const body = (await res.json()) as { text: string; response_type: string };
      expect(body.response_type).toBe('ephemeral');
      expect(body.text).toContain('Incidents are switched off');
      const hook = await fetch(`${off.url}/webhooks/pagerduty`, { method: 'POST', body: '{}' });
      expect(hook.status).toBe(404);
    } finally {
      await off.stop();
    }
  });
});

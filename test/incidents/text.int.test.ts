import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventCallbackBody } from '../../sandbox/simulators/slack/signing.ts';
import { asSlackSends, FAMILY, HOSTILE, slackTextScanner } from '../support/slackTextScan.ts';
import { waitFor } from '../support/waitFor.ts';
import {
  ANA,
  BEN,
  CHEN,
  cardText,
  type IncidentHarness,
  NORA,
  OPS,
  startIncidentHarness,
} from './harness.ts';

/**
 * Issue 19 item 2: text decoded once at the edge, escaped once where it enters mrkdwn, cut by
 * grapheme. The slash commands here are built by hand with the text encoded as Slack sends it
 * (`&amp;`, `&lt;`, `&gt;`, mentions as `<@U…|name>`), whatever the fake Slack does with typed text.
 */
let h: IncidentHarness;
beforeAll(async () => {
  h = await startIncidentHarness();
});
afterAll(async () => {
  await h.stop();
});

/** `/incident <text>` with `text` exactly as given (already encoded), signed as Slack signs it. */
const slashAsSent = async (text: string, user: string = ANA.slack) => {
  const responseUrl = h.fake.responseUrl({ channel: OPS, user });
  const body = new URLSearchParams({
    team_id: 'T0SWITCH',
    team_domain: 'switchboard',
    channel_id: OPS,
    channel_name: 'ops',
    user_id: user,
    user_name: 'ana',
    command: '/incident',
    text,
    api_app_id: 'A0SWITCH',
    is_enterprise_install: 'false',
    response_url: responseUrl,
    trigger_id: h.fake.issueTrigger({ user }),
  }).toString();
  const res = await h.post(body, 'form');
  const raw = await res.text();
  return { status: res.status, body: raw ? (JSON.parse(raw) as Record<string, unknown>) : null, responseUrl };
};

const KNOWN_USERS = new Set<string>([ANA.slack, BEN.slack, CHEN.slack, NORA.slack]);
const everythingSentToSlack = (acks: readonly unknown[]) =>
  slackTextScanner(h.fake, KNOWN_USERS).everythingSentToSlack(acks);

describe('text from Slack, text to Slack (issue 19 item 2)', () => {
  it('decodes a slash command once: “checkout & payments” reaches the incident service as typed', async () => {
    const res = await slashAsSent('trigger Payments API checkout &amp; payments &lt;v2&gt;');
    expect(res.status).toBe(200);
    const incident = await waitFor(
      () => [...h.sim.state.incidents.values()].find((i) => i.title.startsWith('checkout')),
      { what: 'the incident upstream' },
    );
    expect(incident.title).toBe('checkout & payments <v2>');

    // A note with a mention, as Slack sends it with should_escape: the user id is kept.
    await slashAsSent(`note ${incident.number} ask <@U0BEN|ben> about A &amp; B`);
    await waitFor(
      () =>
        h.sim.requests.find(
          (r) =>
            r.method === 'POST' &&
            r.url.includes(`/incidents/${incident.id}/notes`) &&
            Number(r.status) < 300,
        ),
      { what: 'the note upstream' },
    );
    const note = h.sim.requests.find((r) => r.url.includes(`/incidents/${incident.id}/notes`))!;
    expect(JSON.stringify(note.body)).toContain('ask <@U0BEN> about A & B');
    await h.idle();
  });

  it('hostile and emoji-heavy titles and notes reach Slack escaped, whole and within its limits', async () => {
    const title = `${HOSTILE} ${FAMILY.repeat(18)}`;
    const acks: unknown[] = [];
    const typed = await slashAsSent(`trigger Payments API ${asSlackSends(title)}`);
    acks.push(typed.body);
    const incident = await waitFor(() => [...h.sim.state.incidents.values()].find((i) => i.title === title), {
      what: 'the hostile incident upstream',
      timeoutMs: 10_000,
    });
    const n = incident.number;
    await waitFor(() => (cardText(h.cardOf(OPS, n)).includes('Triggered') ? true : undefined), {
      what: 'its card',
    });

    const note = `${HOSTILE} ${FAMILY.repeat(60)}`;
    for (const text of [
      `note ${n} ${asSlackSends(note)}`,
      `note ${n}`,
      `show ${n}`,
      `list`,
      `ack ${n}`,
      `escalate ${n}`,
      `reassign ${n} <@U0BEN|ben>`,
      `subscribe ${asSlackSends(HOSTILE)}`,
      `show ${asSlackSends('<@U123>')}`,
      `resolve ${n} ${asSlackSends(note)}`,
    ]) {
      acks.push((await slashAsSent(text)).body);
      await h.idle();
    }
    acks.push((await slashAsSent(`timeline ${n}`)).body);
    acks.push((await slashAsSent(`timeline ${n} all`)).body);
    await h.post(
      eventCallbackBody({ type: 'app_home_opened', user: ANA.slack, channel: 'D0ANA', tab: 'home' }),
      'json',
    );
    await h.idle();

    // The pending answers name the incident with its title escaped.
    const seen = JSON.stringify(acks);
    expect(seen).toContain('&lt;script&gt;&amp; &lt;!channel&gt; &lt;@U123&gt;');
    // Headers are plain text: the title as typed, cut by grapheme to Slack's 150.
    expect(seen).toContain('"text":"Timeline: #2 <script>& <!channel>');
    // The note form's header is escaped too.
    const form = h.fake.callsOf('views.open').find((c) => JSON.stringify(c.params).includes('Add note'));
    expect(JSON.stringify(form?.params)).toContain('&lt;script&gt;');

    expect(everythingSentToSlack(acks)).toEqual([]);
  });
});

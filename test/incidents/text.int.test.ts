import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventCallbackBody } from '../../sandbox/simulators/slack/signing.ts';
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

/** What Slack does to typed text before it sends it (Slack's "Escaping text", the other way). */
const asSlackSends = (typed: string): string =>
  typed.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

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

const FAMILY = '👨‍👩‍👧‍👦';
const LONE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const HOSTILE = '<script>& <!channel> <@U123> *bold* Zalgo e\u0301\u0302\u0303';
const KNOWN_USERS = new Set<string>([ANA.slack, BEN.slack, CHEN.slack, NORA.slack]);

type Problem = string;

/**
 * Every text Slack was given (messages, updates, ephemerals, views, response_url posts, acks):
 * mrkdwn may hold `<…>` only as Slack's own tokens the bot wrote (a known user, a channel, a date,
 * a link) and `&` only as an entity; no text holds a lone surrogate; blocks stay within Slack's limits.
 */
const problemsIn = (value: unknown, where: string, out: Problem[] = [], parent?: string): Problem[] => {
  const mrkdwnProblems = (text: string) => {
    const rest = text
      .replace(/<@([UW][A-Z0-9]+)>/g, (m, id: string) => (KNOWN_USERS.has(id) ? ' ' : m))
      .replace(/<#[CG][A-Z0-9]+(?:\|[^<>]*)?>/g, ' ')
      .replace(/<!date\^[^<>]*>/g, ' ')
      .replace(/<(?:https?:\/\/|mailto:)[^<>|]*(?:\|[^<>]*)?>/g, ' ');
    if (/[<>]/.test(rest)) out.push(`${where}: raw < or > in mrkdwn: ${text.slice(0, 300)}`);
    if (/&(?!amp;|lt;|gt;)/.test(rest)) out.push(`${where}: raw & in mrkdwn: ${text.slice(0, 300)}`);
    if (text.includes('<!channel>')) out.push(`${where}: a <!channel> ping`);
  };
  if (typeof value === 'string') {
    if (LONE.test(value)) out.push(`${where}: a lone surrogate in ${value.slice(0, 80)}`);
    return out;
  }
  if (Array.isArray(value)) {
    for (const [i, v] of value.entries()) problemsIn(v, `${where}[${i}]`, out, parent);
    return out;
  }
  if (value === null || typeof value !== 'object') return out;
  const o = value as Record<string, unknown>;
  if (typeof o.text === 'string') {
    const text = o.text;
    if (o.type === 'mrkdwn' || (o.type === undefined && parent === 'message')) mrkdwnProblems(text);
    if (o.type === 'plain_text' && parent === 'header' && text.length > 150)
      out.push(`${where}: header of ${text.length}`);
    if (o.type === 'plain_text' && parent === 'button' && text.length > 75)
      out.push(`${where}: button text of ${text.length}`);
    if (text.length > 3000 && o.type !== undefined) out.push(`${where}: text of ${text.length}`);
    if (o.type === undefined && text.length > 40_000) out.push(`${where}: message text of ${text.length}`);
  }
  if (Array.isArray(o.blocks) && o.blocks.length > 100) out.push(`${where}: ${o.blocks.length} blocks`);
  for (const [k, v] of Object.entries(o)) {
    const kind = typeof o.type === 'string' ? o.type : undefined;
    problemsIn(v, `${where}.${k}`, out, k === 'text' ? kind : k === 'blocks' ? 'blocks' : kind);
  }
  return out;
};

const everythingSentToSlack = (acks: readonly unknown[]): Problem[] => [
  ...['chat.postMessage', 'chat.update', 'chat.postEphemeral'].flatMap((m) =>
    h.fake.callsOf(m).flatMap((c, i) => problemsIn(c.params, `${m}#${i}`, [], 'message')),
  ),
  ...['views.open', 'views.update', 'views.push', 'views.publish'].flatMap((m) =>
    h.fake.callsOf(m).flatMap((c, i) => problemsIn(c.params, `${m}#${i}`)),
  ),
  ...h.fake.responsePosts.flatMap((p, i) => problemsIn(p.body, `response_url#${i}`, [], 'message')),
  ...acks.flatMap((a, i) => problemsIn(a, `ack#${i}`, [], 'message')),
];

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

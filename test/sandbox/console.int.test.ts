import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Sandbox, startSandbox } from '../../sandbox/sandbox.ts';
import { GENERAL_CHANNEL, INCIDENTS_CHANNEL, PEOPLE } from '../../sandbox/world.ts';
import { SLACK_INBOX_STREAM } from '../../src/application/inbox.ts';
import { createKeyRing } from '../../src/core/keyRing.ts';
import type { RecordedEvent } from '../../src/eventStore/eventStore.ts';
import { tempDir } from '../support/startApp.ts';
import { waitFor } from '../support/waitFor.ts';

// The console server turns what a person does into the requests Slack would send the bot. The
// bot's receiver refuses anything not signed with its signing secret, so a recorded input proves
// the signature; these tests read what the bot recorded from the store it shares with the sandbox.

const ANA = PEOPLE.find((p) => p.handle === 'ana')!;
const BEN = PEOPLE.find((p) => p.handle === 'ben')!;

type Json = Record<string, unknown>;

let sandbox: Sandbox;
let cleanup: () => void;

const post = async (path: string, body: Json): Promise<{ status: number; json: Json }> => {
  const res = await fetch(`${sandbox.console.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as Json };
};
const get = async (path: string): Promise<Json> =>
  (await (await fetch(`${sandbox.console.url}${path}`)).json()) as Json;

const inputs = async (): Promise<RecordedEvent[]> =>
  (await sandbox.store.readStream(SLACK_INBOX_STREAM)).filter((e) => e.type === 'SlackInputReceived');
const inputOf = (e: RecordedEvent) => (e.data as { input: Json & { payload: Json } }).input;
/**
 * The response_url the console sent, as the bot recorded it: sealed (a response_url is a
 * credential, never stored in clear), so opened here with the sandbox's data key ring.
 */
const openedResponseUrl = (input: Json): string => {
  expect((input['payload'] as Json)['response_url']).toBeUndefined();
  expect(String(input['responseUrl'])).toMatch(/^sealed:v2:/);
  return createKeyRing(sandbox.sb.config.dataKeys.ring)
    .sealer('response_url')
    .open(String(input['responseUrl']));
};

const lastInput = async (kind: string) => {
  const all = await inputs();
  const found = all.filter((e) => inputOf(e)['inputKind'] === kind).at(-1);
  if (!found) throw new Error(`no ${kind} recorded`);
  return inputOf(found);
};

beforeAll(async () => {
  const tmp = tempDir('sandbox-console-');
  cleanup = tmp.cleanup;
  sandbox = await startSandbox({ dataDir: tmp.dir, reset: true, ports: 0, seed: false, logLevel: 'warn' });
});
afterAll(async () => {
  await sandbox?.stop();
  cleanup?.();
});

describe('slash commands', () => {
  it('reach the bot as signed form posts with a fresh trigger id and a response_url on the fake Slack', async () => {
    const r = await post('/api/slash', {
      user: ANA.slackId,
      channel: INCIDENTS_CHANNEL,
      text: '/incident reassign 42 @ben  #general',
    });
    expect(r.json).toMatchObject({ ok: true, status: 200 });
    const input = await lastInput('slash_command');
    expect(input).toMatchObject({ name: '/incident', actor: ANA.slackId, channelId: INCIDENTS_CHANNEL });
    expect(input.payload).toMatchObject({
      command: '/incident',
      // Mentions are escaped as Slack escapes them for commands declared with should_escape.
      text: `reassign 42 <@${BEN.slackId}|ben>  <#${GENERAL_CHANNEL}|general>`,
      user_id: ANA.slackId,
      user_name: 'ana',
      channel_name: 'incidents',
      team_id: sandbox.fake.teamId,
    });
    expect(openedResponseUrl(input)).toMatch(new RegExp(`^${sandbox.fake.url}/response/`));
    expect(String(input.payload['trigger_id'])).toMatch(/^\d+\.\d+\.[0-9a-f]+$/);
  });

  it('a command the bot does not know gets its ephemeral answer back, for that person only', async () => {
    const r = await post('/api/slash', {
      user: ANA.slackId,
      channel: GENERAL_CHANNEL,
      text: '/frobnicate now',
    });
    expect(r.json).toMatchObject({ ok: true, status: 200 });
    const mine = (await get(`/api/state?user=${ANA.slackId}`))['ephemerals'] as Json[];
    expect(mine.at(-1)).toMatchObject({
      channel: GENERAL_CHANNEL,
      user: ANA.slackId,
      via: 'ack',
      text: expect.stringContaining("Switchboard doesn't know `/frobnicate` yet."),
    });
    const bens = (await get(`/api/state?user=${BEN.slackId}`))['ephemerals'] as Json[];
    expect(bens.some((e) => String(e['text']).includes('/frobnicate'))).toBe(false);
    expect(inputOf((await inputs()).at(-1)!)).toMatchObject({ name: '/frobnicate', actor: ANA.slackId });
  });

  it("a bot that does not answer within 3 s, or refuses the signature, shows Slack's failure notice", async () => {
    const realUrl = sandbox.botUrl;
    const { createSlackSurface } = await import('../../sandbox/slackSurface.ts');
    const forged = createSlackSurface({
      fake: sandbox.fake,
      botUrl: () => realUrl,
      signingSecret: 'not-the-secret',
    });
    try {
      const r = await forged.slashCommand({
        user: BEN.slackId,
        channel: GENERAL_CHANNEL,
        text: '/incident help',
      });
      expect(r).toMatchObject({ ok: false, status: 401, error: 'dispatch_failed' });
      const bens = (await get(`/api/state?user=${BEN.slackId}`))['ephemerals'] as Json[];
      expect(bens.at(-1)).toMatchObject({
        via: 'slackbot',
        text: '/incident failed with the error "dispatch_failed"',
      });
    } finally {
      forged.stop();
    }
  });

  it('plain messages are posted as the person and never sent to the bot', async () => {
    const before = (await inputs()).length;
    const r = await post('/api/message', {
      user: BEN.slackId,
      channel: GENERAL_CHANNEL,
      text: 'hello *team*',
    });
    expect(r.json['ok']).toBe(true);
    expect(sandbox.fake.messages(GENERAL_CHANNEL).at(-1)).toMatchObject({
      user: BEN.slackId,
      text: 'hello *team*',
      via: 'person',
    });
    expect((await inputs()).length).toBe(before);
  });

  it('refuses people and channels that do not exist', async () => {
    expect(
      (await post('/api/slash', { user: 'U0NOBODY', channel: INCIDENTS_CHANNEL, text: '/incident' })).status,
    ).toBe(400);
    expect(
      (await post('/api/slash', { user: ANA.slackId, channel: 'C0NOPE', text: '/incident' })).status,
    ).toBe(404);
    // Another person's DM is not visible.
    const bensDm = sandbox.fake.dmChannel(BEN.slackId).id;
    expect((await post('/api/slash', { user: ANA.slackId, channel: bensDm, text: '/incident' })).status).toBe(
      404,
    );
  });
});

describe('interactions', () => {
  const postAsBot = async (channel: string, blocks: unknown[]) => {
    const res = await fetch(`${sandbox.fake.apiUrl}chat.postMessage`, {
      method: 'POST',
      headers: { authorization: `Bearer ${sandbox.fake.botToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ channel, text: 'card', blocks }),
    });
    return ((await res.json()) as { ts: string }).ts;
  };

  it('a button click is a signed block_actions payload naming the message, channel, user and action', async () => {
    const ts = await postAsBot(INCIDENTS_CHANNEL, [
      { type: 'section', text: { type: 'mrkdwn', text: '*#7 disk full*' } },
      {
        type: 'actions',
        block_id: 'incident.actions:incident-abc',
        elements: [
          {
            type: 'button',
            text: { type: 'plain_text', text: 'Acknowledge' },
            action_id: 'incident.acknowledge',
            value: 'incident-abc',
            style: 'primary',
          },
          {
            type: 'users_select',
            action_id: 'incident.reassign',
            placeholder: { type: 'plain_text', text: 'Reassign to…' },
          },
        ],
      },
    ]);
    const r = await post('/api/action', {
      user: ANA.slackId,
      surface: { kind: 'message', channel: INCIDENTS_CHANNEL, ts },
      blockIndex: 1,
      elementIndex: 0,
    });
    expect(r.json).toMatchObject({ ok: true, status: 200 });
    const input = await lastInput('block_action');
    expect(input).toMatchObject({
      name: 'incident.acknowledge',
      actor: ANA.slackId,
      channelId: INCIDENTS_CHANNEL,
    });
    const p = input.payload;
    expect(p).toMatchObject({
      type: 'block_actions',
      user: { id: ANA.slackId, username: 'ana' },
      container: { type: 'message', message_ts: ts, channel_id: INCIDENTS_CHANNEL, is_ephemeral: false },
      channel: { id: INCIDENTS_CHANNEL, name: 'incidents' },
      message: { ts, bot_id: sandbox.fake.botId, text: 'card' },
      actions: [
        {
          type: 'button',
          action_id: 'incident.acknowledge',
          block_id: 'incident.actions:incident-abc',
          value: 'incident-abc',
        },
      ],
    });
    // Blocks without an id get the one Slack would show, and the payload's message carries them.
    expect((p['message'] as { blocks: Json[] }).blocks[0]?.['block_id']).toBe('sb-block-0');
    expect(openedResponseUrl(input)).toMatch(new RegExp(`^${sandbox.fake.url}/response/`));
    expect(String(p['trigger_id'])).not.toBe('');

    await post('/api/action', {
      user: BEN.slackId,
      surface: { kind: 'message', channel: INCIDENTS_CHANNEL, ts },
      blockIndex: 1,
      elementIndex: 1,
      value: ANA.slackId,
    });
    expect((await lastInput('block_action')).payload['actions']).toMatchObject([
      { type: 'users_select', action_id: 'incident.reassign', selected_user: ANA.slackId },
    ]);
  });

  it('a modal opened with the trigger belongs to that person; its submission carries Slack-shaped state', async () => {
    const trigger = sandbox.fake.issueTrigger({ user: BEN.slackId });
    const opened = await fetch(`${sandbox.fake.apiUrl}views.open`, {
      method: 'POST',
      headers: { authorization: `Bearer ${sandbox.fake.botToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        trigger_id: trigger,
        view: {
          type: 'modal',
          callback_id: 'timeOff.request',
          private_metadata: '{"channel":"C02GENERAL"}',
          title: { type: 'plain_text', text: 'Time off' },
          submit: { type: 'plain_text', text: 'Request' },
          blocks: [
            {
              type: 'input',
              block_id: 'start',
              label: { type: 'plain_text', text: 'From' },
              element: { type: 'datepicker', action_id: 'date' },
            },
            {
              type: 'input',
              block_id: 'policy',
              label: { type: 'plain_text', text: 'Policy' },
              element: {
                type: 'static_select',
                action_id: 'policy',
                options: [{ text: { type: 'plain_text', text: 'Holiday' }, value: 'holiday' }],
              },
            },
            {
              type: 'input',
              block_id: 'cover',
              label: { type: 'plain_text', text: 'Cover' },
              element: { type: 'users_select', action_id: 'who' },
            },
            {
              type: 'input',
              block_id: 'note',
              optional: true,
              label: { type: 'plain_text', text: 'Note' },
              element: { type: 'plain_text_input', action_id: 'text', multiline: true },
            },
          ],
        },
      }),
    });
    const view = ((await opened.json()) as { view: { id: string } }).view;
    const state = await get(`/api/state?user=${BEN.slackId}`);
    expect(state['modal']).toMatchObject({ id: view.id });
    expect((await get(`/api/state?user=${ANA.slackId}`))['modal']).toBeNull();

    const r = await post('/api/views/submit', {
      user: BEN.slackId,
      viewId: view.id,
      values: {
        start: { date: '2026-12-24' },
        policy: { policy: 'holiday' },
        cover: { who: ANA.slackId },
        note: { text: '' },
      },
    });
    expect(r.json).toMatchObject({ ok: true, status: 200, modal: null });
    const input = await lastInput('view_submission');
    expect(input).toMatchObject({ name: 'timeOff.request', actor: BEN.slackId });
    expect(input.payload['view']).toMatchObject({
      id: view.id,
      callback_id: 'timeOff.request',
      private_metadata: '{"channel":"C02GENERAL"}',
      state: {
        values: {
          start: { date: { type: 'datepicker', selected_date: '2026-12-24' } },
          policy: {
            policy: {
              type: 'static_select',
              selected_option: { text: { type: 'plain_text', text: 'Holiday' }, value: 'holiday' },
            },
          },
          cover: { who: { type: 'users_select', selected_user: ANA.slackId } },
          note: { text: { type: 'plain_text_input', value: null } },
        },
      },
    });
    expect((await get(`/api/state?user=${BEN.slackId}`))['modal']).toBeNull();
  });

  it('opening the Home tab sends app_home_opened for that person', async () => {
    const r = await post('/api/home/open', { user: ANA.slackId });
    expect(r.json).toMatchObject({ ok: true, status: 200 });
    const input = await lastInput('event');
    expect(input).toMatchObject({ name: 'app_home_opened', actor: ANA.slackId });
    expect(input.payload['event']).toMatchObject({ type: 'app_home_opened', user: ANA.slackId, tab: 'home' });
  });
});

describe('live updates', () => {
  it('an open page hears of a card updated in place, and of events appended to the store', async () => {
    const res = await fetch(`${sandbox.console.url}/api/events?user=${ANA.slackId}`);
    const reader = res.body!.getReader();
    const seen: string[] = [];
    const read = async (until: (text: string) => boolean) => {
      const decoder = new TextDecoder();
      await waitFor(
        async () => {
          const { value } = await reader.read();
          seen.push(decoder.decode(value));
          return until(seen.join('')) || undefined;
        },
        { timeoutMs: 5_000, what: 'server-sent events' },
      );
    };
    await read((t) => t.includes('event: hello'));
    const posted = await fetch(`${sandbox.fake.apiUrl}chat.postMessage`, {
      method: 'POST',
      headers: { authorization: `Bearer ${sandbox.fake.botToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ channel: INCIDENTS_CHANNEL, text: 'v1' }),
    });
    const { ts } = (await posted.json()) as { ts: string };
    await fetch(`${sandbox.fake.apiUrl}chat.update`, {
      method: 'POST',
      headers: { authorization: `Bearer ${sandbox.fake.botToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ channel: INCIDENTS_CHANNEL, ts, text: 'v2' }),
    });
    await post('/api/slash', { user: ANA.slackId, channel: INCIDENTS_CHANNEL, text: '/zzz' });
    // Other lifecycles append events of their own meanwhile (time off links a person to HR when
    // their Home opens): wait for the input this test sent.
    await read(
      (t) =>
        t.includes('"change":"message.updated"') &&
        /event: store\ndata: \{[^\n]*"type":"SlackInputReceived"/.test(t),
    );
    const text = seen.join('');
    expect(text).toContain(`"ts":"${ts}","user":"${sandbox.fake.botUserId}"`);
    expect(text).toMatch(/event: store\ndata: \{[^\n]*"type":"SlackInputReceived"/);
    await reader.cancel();
  });
});

describe('the incident service panel', () => {
  it('triggers from monitoring through the Events API, acknowledges and resolves as a chosen person', async () => {
    const panel = await get('/api/pagerduty');
    const db = (panel['services'] as Json[]).find((s) => s['name'] === 'db')!;
    const enqueued = await post('/api/pagerduty/enqueue', {
      routingKey: db['routingKey'],
      summary: 'Disk 95% on db-primary',
      severity: 'critical',
    });
    expect(enqueued).toMatchObject({ status: 202, json: { status: 'success' } });
    const incidents = (await get('/api/pagerduty'))['incidents'] as Json[];
    const created = incidents.find((i) => i['title'] === 'Disk 95% on db-primary')!;
    expect(created).toMatchObject({ status: 'triggered', service: { name: 'db' }, urgency: 'high' });
    expect((created['assignees'] as Json[]).length).toBeGreaterThan(0);

    const ack = await post(`/api/pagerduty/incidents/${created['id']}/acknowledge`, { email: BEN.email });
    expect(ack.status).toBe(200);
    expect(sandbox.sim.state.incidents.get(String(created['id']))?.status).toBe('acknowledged');
    await post(`/api/pagerduty/incidents/${created['id']}/resolve`, { email: BEN.email });
    const again = await post(`/api/pagerduty/incidents/${created['id']}/resolve`, { email: BEN.email });
    expect(again.status).toBe(409);
    expect(sandbox.sim.state.incidents.get(String(created['id']))?.status).toBe('resolved');
  });

  it('says who is on call now for each escalation policy', async () => {
    const panel = await get('/api/pagerduty');
    const payments = (panel['onCall'] as Json[]).find((p) => p['name'] === 'Payments') as {
      services: string[];
      levels: Array<{ targets: Array<{ kind: string; now?: { name: string }; user?: { name: string } }> }>;
    };
    expect(payments.services).toEqual(['api']);
    expect(['Ana Silva', 'Ben Okafor']).toContain(payments.levels[0]?.targets[0]?.now?.name);
    expect(payments.levels[1]?.targets[0]?.user?.name).toBe('Frank Moreau');
  });
});

describe('the event store browser', () => {
  it('lists streams, reads one with actor and time, and shows the newest events', async () => {
    const streams = (await get('/api/store/streams')) as unknown as Json[];
    expect(streams.map((s) => s['streamId'])).toContain(SLACK_INBOX_STREAM);
    const events = (await get(`/api/store/stream?id=${SLACK_INBOX_STREAM}`)) as unknown as Json[];
    expect(events[0]).toMatchObject({
      streamId: SLACK_INBOX_STREAM,
      revision: 0,
      type: 'SlackInputReceived',
      kind: 'command',
      actor: ANA.slackId,
      recordedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
    const recent = (await get('/api/store/recent')) as unknown as Json[];
    expect(recent[0]?.['position']).toBe(String(await sandbox.store.headPosition()));
  });
});

describe('only the console’s own page drives it', () => {
  // A page of another site open in the developer's browser can send "simple" cross-site requests
  // (a form: text/plain or urlencoded, with its Origin), and a DNS-rebinding page reaches this port
  // under its own host name. node:http lets these tests send exactly those headers.
  const send = (
    path: string,
    options: Readonly<{ method?: string; headers?: Record<string, string>; body?: string }>,
  ): Promise<{ status: number; json: Json }> =>
    new Promise((resolve, reject) => {
      const req = httpRequest(
        `${sandbox.console.url}${path}`,
        { method: options.method ?? 'POST', headers: options.headers ?? {} },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            let json: Json = {};
            try {
              json = JSON.parse(text) as Json;
            } catch {
              json = { text };
            }
            resolve({ status: res.statusCode ?? 0, json });
          });
        },
      );
      req.on('error', reject);
      req.end(options.body);
    });
  const own = () => `127.0.0.1:${sandbox.console.port}`;
  const message = (text: string) => JSON.stringify({ user: ANA.slackId, channel: INCIDENTS_CHANNEL, text });
  const posted = (text: string) => sandbox.fake.messages(INCIDENTS_CHANNEL).some((m) => m.text === text);

  // Every POST route the console has, each with a body that would do something.
  const routes: ReadonlyArray<readonly [string, Json]> = [
    ['/api/slash', { user: ANA.slackId, channel: INCIDENTS_CHANNEL, text: '/oncall' }],
    ['/api/message', { user: ANA.slackId, channel: INCIDENTS_CHANNEL, text: 'csrf' }],
    ['/api/action', { user: ANA.slackId, surface: { kind: 'view', viewId: 'V1' }, blockIndex: 0 }],
    ['/api/views/submit', { user: ANA.slackId, viewId: 'V1' }],
    ['/api/views/close', { user: ANA.slackId, viewId: 'V1' }],
    ['/api/home/open', { user: ANA.slackId }],
    ['/api/phone/sms', { user: ANA.slackId, text: 'STOP' }],
    ['/api/phone/call', { user: ANA.slackId, callId: 'c', action: 'answer' }],
    ['/api/pagerduty/enqueue', { routingKey: 'x', summary: 'csrf' }],
    ['/api/pagerduty/incidents/P1/resolve', { email: ANA.email }],
    [
      '/api/hr/requests',
      { employeeId: '1', policyType: 'Holiday', startDate: '2031-01-06', endDate: '2031-01-06' },
    ],
    ['/api/hr/requests/1/cancel', {}],
    ['/api/hr/employees/1/terminate', {}],
    ['/api/clock/advance', { minutes: 60 }],
    ['/hooks/pagerduty', {}],
  ];

  it('refuses every POST that is not JSON (a cross-site form), 403 with the reason, before acting', async () => {
    const inputsBefore = (await inputs()).length;
    const clockBefore = sandbox.clock.offsetMs();
    for (const [path, body] of routes) {
      for (const type of [
        'text/plain',
        'application/x-www-form-urlencoded',
        'multipart/form-data; boundary=x',
      ]) {
        const r = await send(path, {
          headers: { host: own(), 'content-type': type },
          body: JSON.stringify(body),
        });
        expect({ path, type, ...r }).toEqual({
          path,
          type,
          status: 403,
          json: { ok: false, error: 'the console takes JSON only (content-type: application/json)' },
        });
      }
      const none = await send(path, { headers: { host: own() }, body: JSON.stringify(body) });
      expect({ path, status: none.status }).toEqual({ path, status: 403 });
    }
    expect(posted('csrf')).toBe(false);
    expect(sandbox.clock.offsetMs()).toBe(clockBefore);
    expect((await inputs()).length).toBe(inputsBefore);
  });

  it('refuses a POST from another origin, even as JSON (a page that may send it after a preflight)', async () => {
    for (const origin of [
      'http://evil.example',
      'null',
      `http://127.0.0.1:${sandbox.console.port + 1}`,
      `https://127.0.0.1:${sandbox.console.port}`,
    ]) {
      for (const [path, body] of routes) {
        const r = await send(path, {
          headers: { host: own(), origin, 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
        expect({ origin, path, ...r }).toEqual({
          origin,
          path,
          status: 403,
          json: { ok: false, error: 'the console answers its own page only (Origin)' },
        });
      }
    }
    expect(posted('csrf')).toBe(false);
  });

  it('refuses any request under another host name (DNS rebinding), GETs included', async () => {
    for (const host of [
      'evil.example',
      `evil.example:${sandbox.console.port}`,
      `127.0.0.1:${sandbox.console.port + 1}`,
    ]) {
      const r = await send('/api/message', {
        headers: { host, 'content-type': 'application/json' },
        body: message('rebound'),
      });
      expect({ host, ...r }).toEqual({
        host,
        status: 403,
        json: { ok: false, error: 'the console answers its own host only (Host)' },
      });
      const read = await send(`/api/state?user=${ANA.slackId}`, { method: 'GET', headers: { host } });
      expect({ host, status: read.status }).toEqual({ host, status: 403 });
    }
    expect(posted('rebound')).toBe(false);
  });

  it('takes JSON from its own page, under 127.0.0.1 or localhost, with or without an Origin', async () => {
    const port = sandbox.console.port;
    const cases: ReadonlyArray<Record<string, string>> = [
      { host: own() },
      { host: own(), origin: `http://127.0.0.1:${port}` },
      { host: `localhost:${port}`, origin: `http://localhost:${port}` },
    ];
    for (const [i, headers] of cases.entries()) {
      const r = await send('/api/message', {
        headers: { ...headers, 'content-type': 'application/json; charset=utf-8' },
        body: message(`own page ${i}`),
      });
      expect(r.status).toBe(200);
      expect(posted(`own page ${i}`)).toBe(true);
    }
    expect(
      (
        await send(`/api/state?user=${ANA.slackId}`, {
          method: 'GET',
          headers: { host: `localhost:${port}` },
        })
      ).status,
    ).toBe(200);
  });
});

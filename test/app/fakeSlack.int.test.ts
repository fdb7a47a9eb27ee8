import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type FakeChange, type FakeSlack, startFakeSlack } from '../../sandbox/simulators/slack/fakeSlack.ts';

let fake: FakeSlack;
let now = 1_800_000_000_000;
const token = 'xoxb-fake-1';

const call = async (method: string, params: Record<string, unknown>, auth = token) => {
  const res = await fetch(`${fake.apiUrl}${method}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json; charset=utf-8', authorization: `Bearer ${auth}` },
    body: JSON.stringify(params),
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, unknown> };
};

beforeEach(async () => {
  now = 1_800_000_000_000;
  fake = await startFakeSlack({ botToken: token, now: () => now });
});
afterEach(async () => {
  await fake.close();
});

describe('fake Slack Web API', () => {
  it('answers auth.test and refuses a wrong token', async () => {
    expect((await call('auth.test', {})).body).toMatchObject({
      ok: true,
      team_id: 'T0SWITCH',
      bot_id: 'B0SWITCHBOT',
    });
    expect((await call('auth.test', {}, 'xoxb-wrong')).body).toEqual({ ok: false, error: 'invalid_auth' });
  });

  it('posts, updates in place and deletes messages, emitting each change', async () => {
    const changes: FakeChange['kind'][] = [];
    fake.events.on('change', (c: FakeChange) => changes.push(c.kind));
    const posted = await call('chat.postMessage', {
      channel: 'C0INCIDENTS',
      text: 'v1',
      blocks: [{ type: 'divider' }],
    });
    const ts = posted.body['ts'] as string;
    await call('chat.update', { channel: 'C0INCIDENTS', ts, text: 'v2' });
    const [message] = fake.messages('C0INCIDENTS');
    expect(message).toMatchObject({ ts, text: 'v2', edits: 1, blocks: [{ type: 'divider' }] });
    expect(message?.history).toEqual([{ text: 'v1', blocks: [{ type: 'divider' }] }]);
    await call('chat.delete', { channel: 'C0INCIDENTS', ts });
    expect(fake.messages('C0INCIDENTS')[0]?.deleted).toBe(true);
    expect((await call('chat.update', { channel: 'C0INCIDENTS', ts, text: 'v3' })).body['error']).toBe(
      'message_not_found',
    );
    expect(changes.filter((k) => k !== 'call')).toEqual([
      'message.posted',
      'message.updated',
      'message.deleted',
    ]);
  });

  it('opens DMs, looks users up and refuses unknown ones', async () => {
    const dm = await call('conversations.open', { users: 'U0BOB' });
    const channel = (dm.body['channel'] as { id: string }).id;
    await call('chat.postMessage', { channel, text: 'approve?' });
    expect(fake.messages(channel)).toHaveLength(1);
    expect((await call('users.lookupByEmail', { email: 'ALICE@example.com' })).body).toMatchObject({
      ok: true,
      user: { id: 'U0ALICE', profile: { email: 'alice@example.com' } },
    });
    expect((await call('users.info', { user: 'U0NOBODY' })).body['error']).toBe('user_not_found');
    expect((await call('chat.postMessage', { channel: 'C0NOPE', text: 'x' })).body['error']).toBe(
      'channel_not_found',
    );
  });

  it('posts ephemerals only to channel members', async () => {
    fake.addChannel({ id: 'C0PRIVATE', name: 'private', is_im: false, members: ['U0ALICE'] });
    expect(
      (await call('chat.postEphemeral', { channel: 'C0PRIVATE', user: 'U0ALICE', text: 'psst' })).body['ok'],
    ).toBe(true);
    expect(
      (await call('chat.postEphemeral', { channel: 'C0PRIVATE', user: 'U0BOB', text: 'psst' })).body['error'],
    ).toBe('user_not_in_channel');
    expect(fake.ephemerals).toHaveLength(1);
  });

  it('expires trigger ids after 3 s and uses them once', async () => {
    const view = { type: 'modal', title: { type: 'plain_text', text: 'T' }, blocks: [] };
    const t1 = fake.issueTrigger();
    const opened = await call('views.open', { trigger_id: t1, view });
    expect(opened.body['ok']).toBe(true);
    expect((await call('views.open', { trigger_id: t1, view })).body['error']).toBe('exchanged_trigger_id');
    const t2 = fake.issueTrigger();
    now += 3_001;
    expect((await call('views.open', { trigger_id: t2, view })).body['error']).toBe('expired_trigger_id');
    const id = (opened.body['view'] as { id: string; hash: string }).id;
    expect((await call('views.update', { view_id: id, hash: 'stale', view })).body['error']).toBe(
      'hash_conflict',
    );
    expect((await call('views.update', { view_id: id, view })).body['ok']).toBe(true);
    expect(fake.views.get(id)?.updates).toBe(1);
  });

  it('refuses views over 250 kB and publishes App Home per user', async () => {
    const big = {
      type: 'modal',
      blocks: [{ type: 'section', text: { type: 'mrkdwn', text: 'x'.repeat(260_000) } }],
    };
    expect((await call('views.open', { trigger_id: fake.issueTrigger(), view: big })).body['error']).toBe(
      'view_too_large',
    );
    await call('views.publish', { user_id: 'U0ALICE', view: { type: 'home', blocks: [] } });
    await call('views.publish', {
      user_id: 'U0ALICE',
      view: { type: 'home', blocks: [{ type: 'divider' }] },
    });
    expect(fake.homes.get('U0ALICE')).toMatchObject({ updates: 1, view: { blocks: [{ type: 'divider' }] } });
  });

  it('can answer 429 with Retry-After, 5xx, an error, or slowly, and records every call', async () => {
    fake.failNext('chat.update', { status: 429, retryAfter: 7 });
    const limited = await call('chat.update', { channel: 'C0INCIDENTS', ts: '1.1', text: 'x' });
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('7');
    expect(limited.body).toEqual({ ok: false, error: 'ratelimited' });
    fake.failNext('chat.postMessage', { status: 503 });
    const unavailable = await fetch(`${fake.apiUrl}chat.postMessage`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
    });
    expect(unavailable.status).toBe(503);
    fake.setBehaviour('users.info', { error: 'fatal_error' });
    expect((await call('users.info', { user: 'U0ALICE' })).body).toEqual({ ok: false, error: 'fatal_error' });
    fake.clearBehaviour('users.info');
    fake.failNext('auth.test', { delayMs: 150 });
    const started = Date.now();
    await call('auth.test', {});
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
    expect(fake.callsOf().map((c) => [c.method, c.status])).toEqual([
      ['chat.update', 429],
      ['chat.postMessage', 503],
      ['users.info', 200],
      ['auth.test', 200],
    ]);
    expect(fake.callsOf('users.info')[0]?.error).toBe('fatal_error');
  });

  it('keeps message metadata and answers conversations.history as Slack does', async () => {
    const ts: string[] = [];
    for (let i = 1; i <= 3; i++) {
      const metadata = { event_type: 'switchboard_incident_card', event_payload: { n: i } };
      ts.push(
        (await call('chat.postMessage', { channel: 'C0INCIDENTS', text: `m${i}`, metadata })).body[
          'ts'
        ] as string,
      );
    }
    // Form bodies (as the SDK sends) carry metadata as JSON text.
    const form = await fetch(`${fake.apiUrl}chat.postMessage`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
      body: new URLSearchParams({
        channel: 'C0INCIDENTS',
        text: 'm4',
        metadata: JSON.stringify({ event_type: 'x', event_payload: { n: 4 } }),
      }),
    });
    ts.push(((await form.json()) as { ts: string }).ts);
    expect(fake.messages('C0INCIDENTS')[3]?.metadata).toEqual({ event_type: 'x', event_payload: { n: 4 } });
    expect(
      (await call('chat.postMessage', { channel: 'C0INCIDENTS', text: 'bad', metadata: { event_type: 'x' } }))
        .body,
    ).toEqual({ ok: false, error: 'invalid_metadata_format' });

    // Newest first; metadata only when asked for; `oldest` exclusive; `limit` with `has_more`.
    const plain = await call('conversations.history', { channel: 'C0INCIDENTS' });
    expect((plain.body['messages'] as { ts: string }[]).map((m) => m.ts)).toEqual([...ts].reverse());
    expect(JSON.stringify(plain.body['messages'])).not.toContain('metadata');
    expect(plain.body['has_more']).toBe(false);
    const page = await call('conversations.history', {
      channel: 'C0INCIDENTS',
      oldest: ts[0],
      limit: 2,
      include_all_metadata: true,
    });
    expect(page.body['messages']).toMatchObject([
      { ts: ts[3], metadata: { event_type: 'x', event_payload: { n: 4 } } },
      { ts: ts[2], metadata: { event_type: 'switchboard_incident_card', event_payload: { n: 3 } } },
    ]);
    expect(page.body['has_more']).toBe(true);
    const rest = await call('conversations.history', {
      channel: 'C0INCIDENTS',
      oldest: ts[0],
      latest: ts[2],
    });
    expect((rest.body['messages'] as { ts: string }[]).map((m) => m.ts)).toEqual([ts[1]]);
    expect((await call('conversations.history', { channel: 'C0NOPE' })).body['error']).toBe(
      'channel_not_found',
    );
  });

  it('refuses conversations.history without the history scope for the kind of channel', async () => {
    const scoped = await startFakeSlack({
      botToken: token,
      scopes: ['chat:write', 'channels:history'],
      channels: [
        { id: 'C0PUBLIC', name: 'public', is_im: false },
        { id: 'C0SECRET', name: 'secret', is_im: false, is_private: true },
      ],
    });
    try {
      const history = async (channel: string) =>
        (
          await fetch(`${scoped.apiUrl}conversations.history`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
            body: JSON.stringify({ channel }),
          })
        ).json() as Promise<Record<string, unknown>>;
      expect(await history('C0PUBLIC')).toMatchObject({ ok: true, messages: [] });
      expect(await history('C0SECRET')).toMatchObject({
        ok: false,
        error: 'missing_scope',
        needed: 'groups:history',
      });
    } finally {
      await scoped.close();
    }
  });

  it('can apply a call and answer it late (afterApply)', async () => {
    fake.failNext('chat.postMessage', { delayMs: 1_000, afterApply: true });
    const answered = call('chat.postMessage', { channel: 'C0INCIDENTS', text: 'late' });
    const posted = await fake.waitFor((c) => c.kind === 'message.posted');
    let done = false;
    void answered.then(() => (done = true));
    expect(posted).toMatchObject({ message: { text: 'late' } });
    expect(done).toBe(false);
    expect((await answered).body).toMatchObject({ ok: true, ts: fake.messages('C0INCIDENTS')[0]?.ts });
  });

  it('hands out response_urls: ephemeral by default, in_channel, replace_original, 5 uses', async () => {
    const posted = await call('chat.postMessage', { channel: 'C0INCIDENTS', text: 'card' });
    const url = fake.responseUrl({
      channel: 'C0INCIDENTS',
      user: 'U0ALICE',
      messageTs: posted.body['ts'] as string,
    });
    const respond = (body: Record<string, unknown>) =>
      fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    expect((await respond({ text: 'only you' })).status).toBe(200);
    expect((await respond({ text: 'everyone', response_type: 'in_channel' })).status).toBe(200);
    expect((await respond({ text: 'card v2', replace_original: true })).status).toBe(200);
    await respond({ text: '4' });
    await respond({ text: '5' });
    const sixth = await respond({ text: '6' });
    expect(sixth.status).toBe(404);
    expect(await sixth.json()).toEqual({ ok: false, error: 'used_url' });
    expect(fake.ephemerals.map((e) => e.text)).toEqual(['only you', '4', '5']);
    expect(fake.messages('C0INCIDENTS').map((m) => m.text)).toEqual(['card v2', 'everyone']);
    const late = fake.responseUrl({ channel: 'C0INCIDENTS', user: 'U0ALICE' });
    now += 30 * 60_000 + 1;
    const expired = await fetch(late, { method: 'POST', body: '{"text":"late"}' });
    expect(expired.status).toBe(404);
  });

  it('serves its whole state as JSON and resolves waitFor on a matching change', async () => {
    const waiting = fake.waitFor((c) => c.kind === 'message.posted');
    await call('chat.postMessage', { channel: 'U0BOB', text: 'dm by user id' });
    const change = await waiting;
    expect(change.kind === 'message.posted' && change.message.channel).toBe('D0BOB');
    const state = (await (await fetch(`${fake.url}/state`)).json()) as {
      messages: Record<string, unknown[]>;
    };
    expect(Object.keys(state.messages)).toEqual(['D0BOB']);
  });
});

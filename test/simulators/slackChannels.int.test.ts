import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeSlack, startFakeSlack } from '../../sandbox/simulators/slack/fakeSlack.ts';

// Issue 22 item 7: the fake Slack creates, invites to and archives channels as Slack does
// (https://api.slack.com/methods/conversations.create, conversations.invite, conversations.archive):
// its channel-name rules, `name_taken`, `missing_scope` without `channels:manage`,
// `already_in_channel`, `cant_invite_self`, `already_archived`, and nothing posted in an archived channel.

const TOKEN = 'xoxb-channels';
let fake: FakeSlack;
let scopeless: FakeSlack;

beforeAll(async () => {
  fake = await startFakeSlack({ botToken: TOKEN });
  scopeless = await startFakeSlack({ botToken: TOKEN, scopes: ['chat:write', 'channels:read'] });
});
afterAll(async () => {
  await fake.stop();
  await scopeless.stop();
});

type Answer = { ok: boolean; error?: string; channel?: { id: string; name: string; creator: string } };
const call = async (on: FakeSlack, method: string, body: Record<string, unknown>): Promise<Answer> => {
  const res = await fetch(`${on.apiUrl}${method}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json; charset=utf-8' },
    body: JSON.stringify(body),
  });
  return (await res.json()) as Answer;
};

describe('conversations.create', () => {
  it.each([
    ['', 'invalid_name_required'],
    ['Inc-1-Upper', 'invalid_name_specials'],
    ['inc 1 spaces', 'invalid_name_specials'],
    ['inc.1.periods', 'invalid_name_specials'],
    ['---', 'invalid_name_punctuation'],
    ['x'.repeat(81), 'invalid_name_maxlength'],
  ])('refuses the name %j: %s', async (name, error) => {
    expect(await call(fake, 'conversations.create', { name })).toMatchObject({ ok: false, error });
  });

  it('creates a channel with the bot in it, once per name', async () => {
    const made = await call(fake, 'conversations.create', { name: 'inc-7-db-down', is_private: false });
    expect(made).toMatchObject({ ok: true, channel: { name: 'inc-7-db-down', creator: fake.botUserId } });
    expect(fake.channels.get(made.channel!.id)?.members).toEqual([fake.botUserId]);
    expect(await call(fake, 'conversations.create', { name: 'inc-7-db-down' })).toMatchObject({
      ok: false,
      error: 'name_taken',
    });
    expect(await call(fake, 'conversations.create', { name: 'x'.repeat(80) })).toMatchObject({ ok: true });
  });

  it('needs channels:manage', async () => {
    expect(await call(scopeless, 'conversations.create', { name: 'inc-8-x' })).toMatchObject({
      ok: false,
      error: 'missing_scope',
    });
  });
});

describe('conversations.invite and conversations.archive', () => {
  it('invites, says already_in_channel and cant_invite_self, archives once, then refuses posts there', async () => {
    const { channel } = await call(fake, 'conversations.create', { name: 'inc-9-queue' });
    const id = channel!.id;
    expect(await call(fake, 'conversations.invite', { channel: id, users: 'U0ALICE' })).toMatchObject({
      ok: true,
    });
    expect(await call(fake, 'conversations.invite', { channel: id, users: 'U0ALICE' })).toMatchObject({
      ok: false,
      error: 'already_in_channel',
    });
    expect(await call(fake, 'conversations.invite', { channel: id, users: fake.botUserId })).toMatchObject({
      ok: false,
      error: 'cant_invite_self',
    });
    expect(await call(fake, 'conversations.invite', { channel: id, users: 'U0NOBODY' })).toMatchObject({
      ok: false,
      error: 'user_not_found',
    });
    expect(fake.channels.get(id)?.members).toEqual([fake.botUserId, 'U0ALICE']);
    expect(await call(fake, 'conversations.archive', { channel: id })).toMatchObject({ ok: true });
    expect(await call(fake, 'conversations.archive', { channel: id })).toMatchObject({
      ok: false,
      error: 'already_archived',
    });
    expect(await call(fake, 'chat.postMessage', { channel: id, text: 'hi' })).toMatchObject({
      ok: false,
      error: 'is_archived',
    });
  });
});

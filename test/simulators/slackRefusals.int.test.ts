import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LIMITS, slackLength } from '../../sandbox/simulators/slack/blockKit.ts';
import { type FakeSlack, startFakeSlack } from '../../sandbox/simulators/slack/fakeSlack.ts';

// The fake Slack refuses what Slack refuses, with Slack's error names (Block Kit reference limits,
// sandbox/simulators/slack/blockKit.ts): one case per rule, against the fake's HTTP API directly.

const TOKEN = 'xoxb-refusals';
let fake: FakeSlack;

beforeAll(async () => {
  fake = await startFakeSlack({ botToken: TOKEN });
});
afterAll(async () => {
  await fake.stop();
});

type Answer = { ok: boolean; error?: string; errors?: string[]; response_metadata?: { messages?: string[] } };

const call = async (method: string, body: Record<string, unknown>): Promise<Answer> => {
  const res = await fetch(`${fake.apiUrl}${method}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json; charset=utf-8' },
    body: JSON.stringify(body),
  });
  return (await res.json()) as Answer;
};

const x = (n: number, ch = 'a') => ch.repeat(n);
const plain = (text: string) => ({ type: 'plain_text', text });
const md = (text: string) => ({ type: 'mrkdwn', text });
const section = (text: string) => ({ type: 'section', text: md(text) });
const button = (over: Record<string, unknown> = {}) => ({
  type: 'button',
  action_id: 'a',
  text: plain('Go'),
  value: 'v',
  ...over,
});
const actions = (...elements: unknown[]) => ({ type: 'actions', elements });
const opt = (text: string, value = 'v') => ({ text: plain(text), value });
const select = (options: unknown[]) => ({
  type: 'static_select',
  action_id: 's',
  placeholder: plain('Pick'),
  options,
});
const confirmDialog = (over: Record<string, unknown> = {}) => ({
  title: plain('Sure?'),
  text: plain('Really.'),
  confirm: plain('Yes'),
  deny: plain('No'),
  ...over,
});
const HALF_EMOJI = '🔥'.slice(0, 1);

/** Blocks Slack refuses in a message, each with the limit it breaks and where Slack points. */
const messageCases: Array<[string, unknown[], string]> = [
  ['more than 50 blocks', Array.from({ length: 51 }, () => section('x')), '/blocks'],
  ['section text over 3000', [section(x(3001))], '/blocks/0/text/text'],
  [
    'more than 10 section fields',
    [{ type: 'section', fields: Array.from({ length: 11 }, () => md('f')) }],
    '/blocks/0/fields',
  ],
  ['a section field over 2000', [{ type: 'section', fields: [md(x(2001))] }], '/blocks/0/fields/0/text'],
  ['header text over 150', [{ type: 'header', text: plain(x(151)) }], '/blocks/0/text/text'],
  ['a mrkdwn header', [{ type: 'header', text: md('Title') }], '/blocks/0/text/type'],
  ['button text over 75', [actions(button({ text: plain(x(76)) }))], '/blocks/0/elements/0/text/text'],
  ['button value over 2000', [actions(button({ value: x(2001) }))], '/blocks/0/elements/0/value'],
  ['action_id over 255', [actions(button({ action_id: x(256) }))], '/blocks/0/elements/0/action_id'],
  ['block_id over 255', [{ ...section('x'), block_id: x(256) }], '/blocks/0/block_id'],
  [
    'a repeated block_id',
    [
      { ...section('x'), block_id: 'b' },
      { ...section('y'), block_id: 'b' },
    ],
    '/blocks/1/block_id',
  ],
  [
    'more than 25 actions elements',
    [actions(...Array.from({ length: 26 }, (_, i) => button({ action_id: `a${i}` })))],
    '/blocks/0/elements',
  ],
  [
    'more than 10 context elements',
    [{ type: 'context', elements: Array.from({ length: 11 }, () => md('c')) }],
    '/blocks/0/elements',
  ],
  [
    'more than 100 options',
    [actions(select(Array.from({ length: 101 }, (_, i) => opt(`o${i}`, `v${i}`))))],
    '/blocks/0/elements/0/options',
  ],
  ['option text over 75', [actions(select([opt(x(76))]))], '/blocks/0/elements/0/options/0/text/text'],
  ['option value over 150', [actions(select([opt('o', x(151))]))], '/blocks/0/elements/0/options/0/value'],
  [
    'confirm title over 100',
    [actions(button({ confirm: confirmDialog({ title: plain(x(101)) }) }))],
    '/blocks/0/elements/0/confirm/title/text',
  ],
  [
    'confirm text over 300',
    [actions(button({ confirm: confirmDialog({ text: plain(x(301)) }) }))],
    '/blocks/0/elements/0/confirm/text/text',
  ],
  [
    'confirm button over 30',
    [actions(button({ confirm: confirmDialog({ confirm: plain(x(31)) }) }))],
    '/blocks/0/elements/0/confirm/confirm/text',
  ],
  [
    'deny button over 30',
    [actions(button({ confirm: confirmDialog({ deny: plain(x(31)) }) }))],
    '/blocks/0/elements/0/confirm/deny/text',
  ],
  ['a lone surrogate (half an emoji)', [section(`cut ${HALF_EMOJI}`)], '/blocks/0/text/text'],
];

describe('messages Slack refuses (invalid_blocks)', () => {
  it.each(messageCases)('%s', async (_rule, blocks, pointer) => {
    for (const method of ['chat.postMessage', 'chat.postEphemeral'] as const) {
      const answer = await call(method, {
        channel: 'C0INCIDENTS',
        user: 'U0ALICE',
        text: 'fallback',
        blocks,
      });
      expect(answer.ok, method).toBe(false);
      expect(answer.error, method).toBe('invalid_blocks');
      expect(
        answer.errors?.some((e) => e.endsWith(`[json-pointer:${pointer}]`)),
        JSON.stringify(answer),
      ).toBe(true);
      expect(answer.response_metadata?.messages?.[0]).toMatch(/^\[ERROR\] /);
    }
  });

  it('refuses the same on chat.update, leaving the message as it was', async () => {
    const posted = (await call('chat.postMessage', {
      channel: 'C0INCIDENTS',
      text: 'ok',
      blocks: [section('ok')],
    })) as Answer & {
      ts: string;
    };
    const answer = await call('chat.update', {
      channel: 'C0INCIDENTS',
      ts: posted.ts,
      blocks: [section(x(3001))],
    });
    expect(answer.error).toBe('invalid_blocks');
    expect(fake.messages('C0INCIDENTS').find((m) => m.ts === posted.ts)?.blocks).toEqual([section('ok')]);
  });

  it('takes what is exactly at each limit, counting code points (an emoji is one)', async () => {
    const answer = await call('chat.postMessage', {
      channel: 'C0INCIDENTS',
      text: x(LIMITS.messageText.max),
      blocks: [
        section(x(3000)),
        { type: 'header', text: plain(`${x(149)}🔥`) },
        actions(button({ text: plain(`${'🔥'.repeat(75)}`), value: x(2000), action_id: x(255) })),
      ],
    });
    expect(answer).toMatchObject({ ok: true });
    expect(slackLength('🔥'.repeat(75))).toBe(75);
  });

  it('refuses blocks that are not a JSON array of objects (invalid_blocks_format)', async () => {
    expect((await call('chat.postMessage', { channel: 'C0INCIDENTS', blocks: '[{"type":' })).error).toBe(
      'invalid_blocks_format',
    );
    expect(
      (await call('chat.postMessage', { channel: 'C0INCIDENTS', blocks: { type: 'section' } })).error,
    ).toBe('invalid_blocks_format');
    expect((await call('chat.postMessage', { channel: 'C0INCIDENTS', blocks: ['section'] })).error).toBe(
      'invalid_blocks_format',
    );
  });

  it('refuses message text over 40,000 characters (msg_too_long)', async () => {
    expect((await call('chat.postMessage', { channel: 'C0INCIDENTS', text: x(40_001) })).error).toBe(
      'msg_too_long',
    );
  });

  it('refuses message text with a lone surrogate (invalid_arguments)', async () => {
    expect(
      (await call('chat.postMessage', { channel: 'C0INCIDENTS', text: `cut ${HALF_EMOJI}` })).error,
    ).toBe('invalid_arguments');
  });

  it('counts each refusal as a contract violation', async () => {
    const before = fake.contractViolations().length;
    await call('chat.postMessage', { channel: 'C0INCIDENTS', blocks: [section(x(3001))] });
    expect(fake.contractViolations().length).toBe(before + 1);
  });
});

describe('response_url posts Slack refuses', () => {
  it('answers 400 with the error and does not show it, nor use the URL up', async () => {
    const url = fake.responseUrl({ channel: 'C0INCIDENTS', user: 'U0ALICE' });
    const post = (body: unknown) =>
      fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const before = fake.ephemerals.length;
    const refused = await post({ text: 'x', blocks: [actions(button({ text: plain(x(76)) }))] });
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as Answer).error).toBe('invalid_blocks');
    expect((await post({ text: x(40_001) })).status).toBe(400);
    expect(fake.ephemerals.length).toBe(before);
    for (let i = 0; i < 5; i++) expect((await post({ text: `ok ${i}` })).status).toBe(200);
    expect(fake.refusedResponses.at(-1)?.error).toBe('msg_too_long');
  });
});

describe("the app's answer to a command or a click (its ack body)", () => {
  it('is judged as a message: a refusal is returned and kept as a contract violation', () => {
    const before = fake.contractViolations().length;
    expect(fake.judgeAnswer({ text: 'ok', blocks: [section('ok')] })).toBeUndefined();
    expect(
      fake.judgeAnswer({ text: 'Timeline', blocks: [{ type: 'header', text: plain(`T ${HALF_EMOJI}`) }] })
        ?.error,
    ).toBe('invalid_blocks');
    expect(fake.contractViolations().length).toBe(before + 1);
  });
});

const modal = (over: Record<string, unknown> = {}) => ({
  type: 'modal',
  callback_id: 'cb',
  title: plain('Title'),
  submit: plain('Save'),
  close: plain('Cancel'),
  blocks: [section('hi')],
  ...over,
});

/** Views Slack refuses, with where it points (under /view). */
const viewCases: Array<[string, Record<string, unknown>, string]> = [
  [
    'more than 100 blocks',
    modal({ blocks: Array.from({ length: 101 }, () => section('x')) }),
    '/view/blocks',
  ],
  ['a title over 24', modal({ title: plain(x(25)) }), '/view/title/text'],
  ['a submit over 24', modal({ submit: plain(x(25)) }), '/view/submit/text'],
  ['a close over 24', modal({ close: plain(x(25)) }), '/view/close/text'],
  ['a mrkdwn title', modal({ title: md('Title') }), '/view/title/type'],
  ['private_metadata over 3000', modal({ private_metadata: x(3001) }), '/view/private_metadata'],
  [
    'a block rule inside a view (button text over 75)',
    modal({ blocks: [actions(button({ text: plain(x(76)) }))] }),
    '/view/blocks/0/elements/0/text/text',
  ],
  [
    'a repeated block_id in a view',
    modal({
      blocks: [
        { ...section('a'), block_id: 'b' },
        { ...section('b'), block_id: 'b' },
      ],
    }),
    '/view/blocks/1/block_id',
  ],
  ['a lone surrogate in a view', modal({ title: plain(`T ${HALF_EMOJI}`) }), '/view/title/text'],
];

describe('views Slack refuses (invalid_arguments)', () => {
  it.each(viewCases)('%s', async (_rule, view, pointer) => {
    const opened = await call('views.open', { trigger_id: fake.issueTrigger({ user: 'U0ALICE' }), view });
    const pushed = await call('views.push', { trigger_id: fake.issueTrigger({ user: 'U0ALICE' }), view });
    const good = (await call('views.open', {
      trigger_id: fake.issueTrigger({ user: 'U0ALICE' }),
      view: modal(),
    })) as Answer & {
      view: { id: string };
    };
    const updated = await call('views.update', { view_id: good.view.id, view });
    const published = await call('views.publish', { user_id: 'U0ALICE', view: { ...view, type: 'home' } });
    for (const [method, answer] of Object.entries({ opened, pushed, updated })) {
      expect(answer.error, method).toBe('invalid_arguments');
      expect(
        answer.response_metadata?.messages?.some(
          (m) => m.startsWith('[ERROR] ') && m.endsWith(`[json-pointer:${pointer}]`),
        ),
        `${method}: ${JSON.stringify(answer)}`,
      ).toBe(true);
    }
    // A Home tab is judged by the same rules (views.publish).
    expect(published.error).toBe('invalid_arguments');
  });

  it('refuses a view before spending its trigger', async () => {
    const trigger = fake.issueTrigger({ user: 'U0ALICE' });
    expect(
      (await call('views.open', { trigger_id: trigger, view: modal({ title: plain(x(25)) }) })).error,
    ).toBe('invalid_arguments');
    expect((await call('views.open', { trigger_id: trigger, view: modal() })).ok).toBe(true);
  });

  it('refuses a response_action view the same way (replaceView, pushView)', () => {
    expect(() => fake.pushView('U0ALICE', modal({ title: plain(x(25)) }))).toThrow('invalid_arguments');
  });
});

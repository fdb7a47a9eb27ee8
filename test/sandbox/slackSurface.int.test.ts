import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { readSlackAppSettings } from '../../sandbox/manifest.ts';
import { type FakeSlack, startFakeSlack } from '../../sandbox/simulators/slack/fakeSlack.ts';
import { slackSignature } from '../../sandbox/simulators/slack/signing.ts';
import {
  createSlackSurface,
  escapeMentions,
  parseSlashCommand,
  type SlackSurface,
} from '../../sandbox/slackSurface.ts';

// How the console shows an app's answers, against a loopback stand-in for the app that checks
// Slack's signature on every request and answers what each test tells it to.

const SECRET = 'surface-test-signing-secret';

type Received = { body: string; form: URLSearchParams; payload: Record<string, unknown> | undefined };
type Answer = { status?: number; body?: unknown; delayMs?: number };

let fake: FakeSlack;
let app: Server;
let appUrl = '';
const received: Received[] = [];
const answers: Answer[] = [];
let surface: SlackSurface;

beforeAll(async () => {
  fake = await startFakeSlack({ botToken: 'xoxb-surface-test' });
  app = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const ts = String(req.headers['x-slack-request-timestamp']);
      if (req.headers['x-slack-signature'] !== slackSignature(SECRET, ts, body)) {
        res.writeHead(401);
        res.end();
        return;
      }
      const form = new URLSearchParams(body);
      const payload = form.get('payload');
      received.push({
        body,
        form,
        payload: payload ? (JSON.parse(payload) as Record<string, unknown>) : undefined,
      });
      const answer = answers.shift() ?? {};
      if (answer.delayMs) await new Promise((r) => setTimeout(r, answer.delayMs));
      if (res.destroyed) return;
      res.writeHead(answer.status ?? 200, { 'content-type': 'application/json' });
      res.end(answer.body === undefined ? '' : JSON.stringify(answer.body));
    });
  });
  await new Promise<void>((r) => app.listen(0, '127.0.0.1', () => r()));
  appUrl = `http://127.0.0.1:${(app.address() as AddressInfo).port}`;
  surface = createSlackSurface({ fake, botUrl: () => appUrl, signingSecret: SECRET, answerTimeoutMs: 300 });
});
afterEach(() => {
  received.length = 0;
  answers.length = 0;
});
afterAll(async () => {
  surface.stop();
  app.closeAllConnections();
  await new Promise<void>((r) => app.close(() => r()));
  await fake.close();
});

const modal = (title: string, extra: Record<string, unknown> = {}) => ({
  type: 'modal',
  callback_id: 'test.form',
  title: { type: 'plain_text', text: title },
  submit: { type: 'plain_text', text: 'Save' },
  blocks: [
    {
      type: 'input',
      block_id: 'title',
      label: { type: 'plain_text', text: 'Title' },
      element: { type: 'plain_text_input', action_id: 'value' },
    },
  ],
  ...extra,
});

const openModal = async (user: string, view: Record<string, unknown>) => {
  const res = await fetch(`${fake.apiUrl}views.open`, {
    method: 'POST',
    headers: { authorization: `Bearer ${fake.botToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ trigger_id: fake.issueTrigger({ user }), view }),
  });
  return ((await res.json()) as { view: { id: string } }).view.id;
};

describe('parsing what a person types', () => {
  it('splits the command from its text', () => {
    expect(parseSlashCommand('/incident trigger db "Database on fire"')).toEqual({
      command: '/incident',
      text: 'trigger db "Database on fire"',
    });
    expect(parseSlashCommand('/oncall')).toEqual({ command: '/oncall', text: '' });
    expect(parseSlashCommand('hello /incident')).toBeUndefined();
  });

  it('escapes known people and channels only', () => {
    const users = [{ id: 'U01ANA', name: 'ana' }];
    const channels = [{ id: 'C01', name: 'incidents' }];
    expect(escapeMentions('reassign 4 @ana @nobody in #incidents #nope a@ana', users, channels)).toBe(
      'reassign 4 <@U01ANA|ana> @nobody in <#C01|incidents> #nope a@ana',
    );
  });
});

describe("following the app's manifest", () => {
  it('reads which commands are escaped, the tabs, and the subscribed events from manifest.yml', () => {
    const app = readSlackAppSettings();
    expect(app.escapedCommands.has('/incident')).toBe(true);
    expect(app.escapedCommands.has('/verify')).toBe(false);
    expect(app.homeTab).toBe(true);
    expect(app.botEvents.has('app_home_opened')).toBe(true);
  });

  it('escapes only commands declared with should_escape, and sends only subscribed events', async () => {
    const strict = createSlackSurface({
      fake,
      botUrl: () => appUrl,
      signingSecret: SECRET,
      app: { escapedCommands: new Set(['/incident']), botEvents: new Set() },
    });
    try {
      await strict.slashCommand({ user: 'U0ALICE', channel: 'C0INCIDENTS', text: '/timeoff holiday @bob' });
      await strict.slashCommand({
        user: 'U0ALICE',
        channel: 'C0INCIDENTS',
        text: '/incident reassign 1 @bob',
      });
      expect(received.map((r) => r.form.get('text'))).toEqual(['holiday @bob', 'reassign 1 <@U0BOB|bob>']);
      expect(await strict.openHome({ user: 'U0ALICE' })).toEqual({ ok: true, status: 0 });
      expect(received).toHaveLength(2);
    } finally {
      strict.stop();
    }
  });
});

describe("showing the app's answers", () => {
  it('a slash command answered with blocks shows them as an ephemeral; in_channel answers are posted', async () => {
    answers.push({
      body: { blocks: [{ type: 'header', text: { type: 'plain_text', text: 'Help' } }], text: 'Help' },
    });
    await surface.slashCommand({ user: 'U0ALICE', channel: 'C0INCIDENTS', text: '/incident help' });
    expect(received[0]?.form.get('command')).toBe('/incident');
    expect(fake.ephemerals.at(-1)).toMatchObject({
      user: 'U0ALICE',
      via: 'ack',
      text: 'Help',
      blocks: [{ type: 'header' }],
    });

    answers.push({ body: { response_type: 'in_channel', text: 'Incident *#4* triggered' } });
    await surface.slashCommand({ user: 'U0BOB', channel: 'C0INCIDENTS', text: '/incident trigger db x' });
    const [echo, shown] = fake.messages('C0INCIDENTS').slice(-2);
    expect(echo).toMatchObject({ user: 'U0BOB', text: '/incident trigger db x', via: 'person' });
    expect(shown).toMatchObject({ text: 'Incident *#4* triggered', via: 'response_url' });
  });

  it("a replace_original through a slash command's response_url replaces its answer in place", async () => {
    answers.push({ body: { response_type: 'ephemeral', text: 'Creating the incident…' } });
    await surface.slashCommand({ user: 'U0ALICE', channel: 'C0INCIDENTS', text: '/incident trigger db y' });
    const shown = fake.ephemerals.at(-1)!;
    expect(shown).toMatchObject({ via: 'ack', text: 'Creating the incident…' });
    const updated = fake.waitFor((c) => c.kind === 'ephemeral.updated', 5_000);
    const responseUrl = received.at(-1)!.form.get('response_url')!;
    const res = await fetch(responseUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ text: 'Created #5 db y', replace_original: true }),
    });
    expect(res.status).toBe(200);
    const change = await updated;
    expect(change.kind === 'ephemeral.updated' && change.ephemeral).toBe(shown);
    expect(shown).toMatchObject({ text: 'Created #5 db y', edits: 1 });
    expect(fake.ephemerals.filter((e) => e.text.includes('db y'))).toEqual([shown]);
  });

  it("an app that takes over 3 s, or fails, gets Slack's notice instead", async () => {
    answers.push({ delayMs: 1_000 });
    const slow = await surface.slashCommand({ user: 'U0ALICE', channel: 'C0INCIDENTS', text: '/oncall' });
    expect(slow).toMatchObject({ ok: false, error: 'operation_timeout' });
    expect(fake.ephemerals.at(-1)).toMatchObject({
      via: 'slackbot',
      text: '/oncall failed with the error "operation_timeout"',
    });

    answers.push({ status: 500 });
    const broken = await surface.slashCommand({ user: 'U0ALICE', channel: 'C0INCIDENTS', text: '/oncall' });
    expect(broken).toMatchObject({ ok: false, status: 500, error: 'dispatch_failed' });
  });

  it('response_action errors keep the modal open with the messages; an empty answer closes it', async () => {
    const id = await openModal('U0ALICE', modal('First'));
    expect(surface.modalOf('U0ALICE')?.id).toBe(id);
    answers.push({ body: { response_action: 'errors', errors: { title: 'Say what is broken.' } } });
    const r = await surface.submitView({ user: 'U0ALICE', viewId: id, values: { title: { value: '' } } });
    expect(r).toMatchObject({ ok: true, errors: { title: 'Say what is broken.' } });
    expect(r.modal?.id).toBe(id);
    expect(received[0]?.payload?.['view']).toMatchObject({
      id,
      state: { values: { title: { value: { type: 'plain_text_input', value: null } } } },
    });

    answers.push({});
    const closed = await surface.submitView({
      user: 'U0ALICE',
      viewId: id,
      values: { title: { value: 'x' } },
    });
    expect(closed.modal).toBeUndefined();
    expect(surface.modalOf('U0ALICE')).toBeUndefined();
  });

  it('update replaces the view; push stacks one on top; clear closes them all', async () => {
    const id = await openModal('U0BOB', modal('One'));
    answers.push({ body: { response_action: 'update', view: modal('Two') } });
    const updated = await surface.submitView({ user: 'U0BOB', viewId: id, values: {} });
    expect(updated.modal).toMatchObject({ id, view: { title: { text: 'Two' } } });

    answers.push({ body: { response_action: 'push', view: modal('Three') } });
    const pushed = await surface.submitView({ user: 'U0BOB', viewId: id, values: {} });
    expect(pushed.modal?.id).not.toBe(id);
    expect(pushed.modal?.view).toMatchObject({ title: { text: 'Three' } });

    answers.push({});
    const popped = await surface.submitView({ user: 'U0BOB', viewId: pushed.modal!.id, values: {} });
    expect(popped.modal?.id).toBe(id);
    expect(received.at(-1)?.payload?.['view']).toMatchObject({ root_view_id: id, previous_view_id: id });

    answers.push({ body: { response_action: 'clear' } });
    expect((await surface.submitView({ user: 'U0BOB', viewId: id, values: {} })).modal).toBeUndefined();
  });

  it('closing a modal tells the app only when it asked (notify_on_close)', async () => {
    const quiet = await openModal('U0ALICE', modal('Quiet'));
    await surface.closeView({ user: 'U0ALICE', viewId: quiet });
    expect(received).toHaveLength(0);
    const loud = await openModal('U0ALICE', modal('Loud', { notify_on_close: true }));
    await surface.closeView({ user: 'U0ALICE', viewId: loud });
    expect(received[0]?.payload).toMatchObject({
      type: 'view_closed',
      view: { id: loud },
      user: { id: 'U0ALICE' },
    });
    expect(surface.modalOf('U0ALICE')).toBeUndefined();
  });

  it('a click inside a modal sends the view with what has been typed so far', async () => {
    const id = await openModal(
      'U0ALICE',
      modal('Picker', {
        blocks: [
          ...modal('x').blocks,
          {
            type: 'actions',
            block_id: 'more',
            elements: [
              { type: 'button', action_id: 'add', text: { type: 'plain_text', text: 'Add' }, value: 'one' },
            ],
          },
        ],
      }),
    );
    await surface.blockAction({
      user: 'U0ALICE',
      surface: { kind: 'view', viewId: id },
      blockIndex: 1,
      elementIndex: 0,
      values: { title: { value: 'half typed' } },
    });
    expect(received[0]?.payload).toMatchObject({
      type: 'block_actions',
      container: { type: 'view', view_id: id },
      view: { id, state: { values: { title: { value: { value: 'half typed' } } } } },
      actions: [{ action_id: 'add', block_id: 'more', value: 'one' }],
    });
    expect(received[0]?.payload?.['response_url']).toBeUndefined();
  });
});

import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { slackInputOf } from '../../handlers/middleware/recordSlackInput.ts';
import {
  blockActionPayload,
  eventCallbackBody,
  interactionBody,
  newTriggerId,
  nowSeconds,
  slashCommandBody,
  viewSubmissionPayload,
} from '../../sandbox/simulators/slack/signing.ts';
import {
  commandMetadata,
  SLACK_INBOX_STREAM,
  type SlackInputReceivedData,
  slackInboxEventId,
} from '../../src/application/inbox.ts';
import type { RecordedEvent } from '../../src/eventStore/eventStore.ts';
import { startTestApp, TEST_BOT_TOKEN, TEST_SIGNING_SECRET, type TestApp } from '../support/startApp.ts';

let t: TestApp;
let before: number;

// Recorded inputs only: the inbox dispatcher also appends CommandRejected to this stream.
const inbox = async (): Promise<RecordedEvent[]> =>
  (await t.sb.store.readStream(SLACK_INBOX_STREAM)).filter((e) => e.type === 'SlackInputReceived');
const newInputs = async (): Promise<SlackInputReceivedData[]> =>
  (await inbox()).slice(before).map((e) => e.data as unknown as SlackInputReceivedData);

beforeAll(async () => {
  t = await startTestApp();
  // A listener the way a lifecycle writes one: parse, record with commands, ack.
  t.sb.bolt.command('/echo', async ({ command, ack, context }) => {
    const input = slackInputOf(context);
    if (command.text.trim() === '') {
      await t.sb.inbox.accept({ input, rejection: new Error('say something') });
      await ack({ response_type: 'ephemeral', text: 'Usage: /echo <text>' });
      return;
    }
    const receipt = await t.sb.inbox.accept({
      input,
      commands: [{ type: 'Echo', data: { text: command.text }, metadata: commandMetadata(input) }],
    });
    await ack(
      receipt.deduplicated ? undefined : { response_type: 'ephemeral', text: `echo: ${command.text}` },
    );
  });
});
afterAll(async () => {
  await t.stop();
});
beforeEach(async () => {
  before = (await inbox()).length;
});

describe('POST /slack/events: signed slash commands', () => {
  it('records the input with its command before answering 200', async () => {
    const triggerId = newTriggerId();
    const res = await t.postSlack(
      slashCommandBody({ command: '/echo', text: 'hello', trigger_id: triggerId }),
      'form',
    );
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ response_type: 'ephemeral', text: 'echo: hello' });
    const [recorded] = (await inbox()).slice(before);
    expect(recorded).toMatchObject({
      id: slackInboxEventId(triggerId),
      type: 'SlackInputReceived',
      kind: 'command',
    });
    const data = recorded?.data as unknown as SlackInputReceivedData;
    expect(data.input).toMatchObject({
      inputKind: 'slash_command',
      name: '/echo',
      actor: 'U0ALICE',
      teamId: 'T0SWITCH',
      channelId: 'C0INCIDENTS',
      triggerId,
      deliveryId: triggerId,
    });
    expect(data.commands).toEqual([
      {
        type: 'Echo',
        data: { text: 'hello' },
        metadata: expect.objectContaining({ actor: 'U0ALICE', causationId: slackInboxEventId(triggerId) }),
      },
    ]);
    // Slack's deprecated verification token is never stored.
    expect(JSON.stringify([recorded?.data, recorded?.metadata])).not.toContain(
      'deprecated-verification-token',
    );
  });

  it('records a command that does not parse, with the reason', async () => {
    const res = await t.postSlack(slashCommandBody({ command: '/echo', text: '' }), 'form');
    expect(res.status).toBe(200);
    expect((await newInputs())[0]).toMatchObject({
      commands: [],
      rejection: { code: 'SB_VALIDATION', message: 'say something' },
    });
  });

  it('records a redelivery of the same trigger once, and answers it', async () => {
    const body = slashCommandBody({ command: '/echo', text: 'again' });
    expect((await t.postSlack(body, 'form')).status).toBe(200);
    const second = await t.postSlack(body, 'form');
    expect(second.status).toBe(200);
    expect(await second.text()).toBe('');
    expect(await newInputs()).toHaveLength(1);
  });

  it('records unknown commands too and answers with a helpful ephemeral message', async () => {
    const res = await t.postSlack(slashCommandBody({ command: '/frobnicate', text: 'x' }), 'form');
    expect(res.status).toBe(200);
    expect(((await res.json()) as { text: string }).text).toContain("doesn't know `/frobnicate`");
    expect((await newInputs())[0]).toMatchObject({
      input: { name: '/frobnicate' },
      commands: [],
      rejection: { code: 'SB_UNHANDLED' },
    });
  });

  it('explains when the command belongs to a switched-off lifecycle', async () => {
    const res = await t.postSlack(slashCommandBody({ command: '/timeoff', text: 'status' }), 'form');
    const body = (await res.json()) as { response_type: string; text: string };
    expect(body.response_type).toBe('ephemeral');
    expect(body.text).toContain('Time off is switched off');
    expect(await newInputs()).toHaveLength(1);
  });
});

describe('POST /slack/events: refused before anything is stored', () => {
  const refused = async (
    init: Parameters<TestApp['postSlack']>[2],
    body = slashCommandBody({ command: '/echo', text: 'x' }),
  ) => {
    const res = await t.postSlack(body, 'form', init);
    expect(res.status).toBe(401);
    expect(await inbox()).toHaveLength(before);
  };

  it('refuses a forged signature', () => refused({ secret: 'not-the-signing-secret' }));
  it('refuses a timestamp more than 5 minutes old', () => refused({ timestamp: nowSeconds() - 301 }));
  it('refuses a timestamp more than 5 minutes in the future', () =>
    refused({ timestamp: nowSeconds() + 301 }));
  it('refuses a request without signature headers', async () => {
    const res = await fetch(`${t.url}/slack/events`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: slashCommandBody(),
    });
    expect(res.status).toBe(401);
    expect(await inbox()).toHaveLength(before);
  });
  it('refuses a body changed by one byte after signing', async () => {
    const body = slashCommandBody({ command: '/echo', text: 'pay 10' });
    const { signedHeaders } = await import('../../sandbox/simulators/slack/signing.ts');
    const headers = signedHeaders(TEST_SIGNING_SECRET, body, 'form');
    const res = await fetch(`${t.url}/slack/events`, {
      method: 'POST',
      headers,
      body: body.replace('10', '90'),
    });
    expect(res.status).toBe(401);
    expect(await inbox()).toHaveLength(before);
  });
  it('accepts timestamps within the window either side', async () => {
    expect(
      (
        await t.postSlack(slashCommandBody({ command: '/echo', text: 'a' }), 'form', {
          timestamp: nowSeconds() + 250,
        })
      ).status,
    ).toBe(200);
    expect(
      (
        await t.postSlack(slashCommandBody({ command: '/echo', text: 'b' }), 'form', {
          timestamp: nowSeconds() - 250,
        })
      ).status,
    ).toBe(200);
    expect(await newInputs()).toHaveLength(2);
  });
  it('answers 413 for a body over the limit and 400 for a signed body that does not parse', async () => {
    const big = `text=${'x'.repeat(1024 * 1024 + 10)}`;
    expect((await t.postSlack(big, 'form')).status).toBe(413);
    expect((await t.postSlack('{not json', 'json')).status).toBe(400);
    expect(await inbox()).toHaveLength(before);
  });
});

describe('POST /slack/events: interactions and events', () => {
  it('records block actions: a double click is two inputs, a redelivery is one', async () => {
    const triggerId = newTriggerId();
    const first = interactionBody(blockActionPayload({ trigger_id: triggerId, action_ts: '1.000001' }));
    const second = interactionBody(blockActionPayload({ trigger_id: triggerId, action_ts: '1.000002' }));
    for (const body of [first, first, second]) expect((await t.postSlack(body, 'form')).status).toBe(200);
    const inputs = await newInputs();
    expect(inputs.map((i) => i.input.deliveryId)).toEqual([`${triggerId}:1.000001`, `${triggerId}:1.000002`]);
    expect(inputs[0]?.input).toMatchObject({
      inputKind: 'block_action',
      name: 'incident.acknowledge',
      actor: 'U0ALICE',
    });
  });

  it('records view submissions', async () => {
    const res = await t.postSlack(
      interactionBody(viewSubmissionPayload({ callback_id: 'timeOff.request' })),
      'form',
    );
    expect(res.status).toBe(200);
    expect((await newInputs())[0]?.input).toMatchObject({
      inputKind: 'view_submission',
      name: 'timeOff.request',
    });
  });

  it('records an event before acking it, and an event redelivered by Slack only once', async () => {
    const body = eventCallbackBody({ type: 'app_home_opened', user: 'U0BOB', tab: 'home' });
    expect((await t.postSlack(body, 'json')).status).toBe(200);
    const retry = await t.postSlack(body, 'json', {
      headers: { 'x-slack-retry-num': '1', 'x-slack-retry-reason': 'http_timeout' },
    });
    expect(retry.status).toBe(200);
    const inputs = await newInputs();
    expect(inputs).toHaveLength(1);
    expect(inputs[0]?.input).toMatchObject({ inputKind: 'event', name: 'app_home_opened', actor: 'U0BOB' });
  });

  it('records concurrent copies of one event once', async () => {
    const body = eventCallbackBody({ type: 'app_mention', user: 'U0BOB', channel: 'C0GENERAL', text: 'hi' });
    const answers = await Promise.all(
      [0, 1, 2, 3].map((n) =>
        t.postSlack(
          body,
          'json',
          n === 0
            ? {}
            : { headers: { 'x-slack-retry-num': String(n), 'x-slack-retry-reason': 'http_timeout' } },
        ),
      ),
    );
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200]);
    expect(await newInputs()).toHaveLength(1);
  });

  it("answers Slack's url_verification challenge without storing it", async () => {
    const res = await t.postSlack(
      JSON.stringify({ type: 'url_verification', challenge: 'c-123', token: 'x' }),
      'json',
    );
    expect(await res.json()).toEqual({ challenge: 'c-123' });
    expect(await inbox()).toHaveLength(before);
  });
});

describe('when a listener hangs', () => {
  it("answers 503 once Slack's 3 s are up instead of leaving the request open", async () => {
    t.sb.bolt.command('/hang', async () => {
      await new Promise((resolve) => setTimeout(resolve, 3_500));
    });
    const started = Date.now();
    const res = await t.postSlack(slashCommandBody({ command: '/hang', text: '' }), 'form');
    expect(res.status).toBe(503);
    expect(Date.now() - started).toBeLessThan(3_400);
    expect(t.logs.text()).toContain('not acknowledged within 3 s');
  });
});

describe('when the store cannot take the write', () => {
  it('answers a slash command that nothing happened, an event with 503, and /readyz with 503', async () => {
    const broken = await startTestApp();
    try {
      await broken.sb.store.close();
      const cmd = await broken.postSlack(slashCommandBody({ command: '/echo', text: 'x' }), 'form');
      expect(cmd.status).toBe(200);
      expect(((await cmd.json()) as { text: string }).text).toContain("couldn't record that");
      const ev = await broken.postSlack(
        eventCallbackBody({ type: 'app_home_opened', user: 'U0BOB' }),
        'json',
      );
      expect(ev.status).toBe(503);
      expect((await fetch(`${broken.url}/readyz`)).status).toBe(503);
      // Secrets never reach the logs, even on these error paths (no token, no signing secret).
      const logs = broken.logs.text();
      expect(logs).toContain('could not record a Slack input');
      for (const secret of [
        TEST_SIGNING_SECRET,
        TEST_BOT_TOKEN,
        'hooks.slack.com/commands',
        'deprecated-verification-token',
      ]) {
        expect(logs).not.toContain(secret);
      }
    } finally {
      await broken.stop();
    }
  });
});

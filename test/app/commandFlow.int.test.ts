import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { slackInputOf } from '../../handlers/middleware/recordSlackInput.ts';
import { slashCommandBody } from '../../sandbox/simulators/slack/signing.ts';
import { commandMetadata } from '../../src/application/inbox.ts';
import { startTestApp, type TestApp } from '../support/startApp.ts';

/**
 * The shell end to end: a signed slash command is recorded before the ack, the inbox dispatcher
 * hands its command to the lifecycles, and a refusal comes back to the user through the
 * command's response_url (on the fake Slack), all through the processors the app wires.
 */
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
  t.sb.bolt.command('/echo', async ({ command, ack, context }) => {
    const input = slackInputOf(context);
    await t.sb.inbox.accept({
      input,
      commands: [{ type: 'EchoText', data: { text: command.text }, metadata: commandMetadata(input) }],
    });
    await ack();
  });
});
afterAll(async () => {
  await t.stop();
});

describe('a recorded command travels to the lifecycles and back', () => {
  it('answers a command no lifecycle handles with an ephemeral reply via response_url', async () => {
    const responseUrl = t.fake.responseUrl({ channel: 'C0INCIDENTS', user: 'U0ALICE' });
    const replied = t.fake.waitFor((c) => c.kind === 'ephemeral.posted', 10_000);
    const res = await t.postSlack(
      slashCommandBody({ command: '/echo', text: 'hi', response_url: responseUrl }),
      'form',
    );
    expect(res.status).toBe(200);
    const change = await replied;
    expect(change.kind === 'ephemeral.posted' && change.ephemeral).toMatchObject({
      user: 'U0ALICE',
      channel: 'C0INCIDENTS',
      via: 'response_url',
    });
    expect(change.kind === 'ephemeral.posted' && change.ephemeral.text).toContain('EchoText');
    await t.sb.processors.waitForIdle(5_000);
    const inbox = await t.sb.store.readStream('inbox-slack');
    expect(inbox.map((e) => e.type)).toEqual(['SlackInputReceived', 'CommandRejected']);
  });
});

import { describe, expect, it } from 'vitest';
import { startFakeSlack } from '../../sandbox/simulators/slack/fakeSlack.ts';
import {
  eventCallbackBody,
  interactionBody,
  nowSeconds,
  slashCommandBody,
  viewSubmissionPayload,
} from '../../sandbox/simulators/slack/signing.ts';
import { createLogger } from '../../src/logger.ts';
import { createSlackWebClient } from '../../src/slack/webClient.ts';
import { createLogSink } from '../support/logSink.ts';
import { startTestApp, TEST_BOT_TOKEN, TEST_SIGNING_SECRET } from '../support/startApp.ts';

/**
 * Secret hygiene: drive the error paths (refused requests, failing Slack calls with their headers,
 * a closed store) with every log level on, then look for secrets in everything that was logged.
 * None may appear: not the bot token, not the signing secret, not a response_url, not a phone
 * number or a one-time code, not Slack's verification token.
 */
describe('logs carry no secrets', () => {
  it('through refused requests, failed Slack calls, a closed store and a stop', async () => {
    const sink = createLogSink();
    const fake = await startFakeSlack({ botToken: TEST_BOT_TOKEN });
    const secrets = [TEST_BOT_TOKEN, TEST_SIGNING_SECRET];
    const logger = createLogger({ level: 'trace', destination: sink.stream, secrets });
    const t = await startTestApp({ fake, logger, env: { LOG_LEVEL: 'trace' } });
    const responseUrl = fake.responseUrl({ channel: 'C0INCIDENTS', user: 'U0ALICE' });
    try {
      const cmd = slashCommandBody({ command: '/verify', text: '+15551234567', response_url: responseUrl });
      await t.postSlack(cmd, 'form', { secret: 'forged-secret' });
      await t.postSlack(cmd, 'form', { timestamp: nowSeconds() - 1000 });
      await t.postSlack(cmd, 'form', { timestamp: nowSeconds() + 1000 });
      await t.postSlack('{"broken', 'json');
      await t.postSlack(cmd, 'form');
      await t.postSlack(
        interactionBody(
          viewSubmissionPayload({ values: { code: { otp: { type: 'plain_text_input', value: '482913' } } } }),
        ),
        'form',
      );

      const slack = createSlackWebClient({
        slack: t.sb.config.slack,
        logger,
        metrics: t.sb.metrics,
        maxInlineWaitMs: 0,
      });
      fake.failNext('chat.postMessage', { status: 429, retryAfter: 5 });
      await slack.chat
        .postMessage({ channel: 'C0INCIDENTS', text: 'x' })
        .catch((e: unknown) => logger.error({ err: e }, 'post failed'));
      fake.failNext('chat.update', { error: 'invalid_auth' });
      await slack.chat
        .update({ channel: 'C0INCIDENTS', ts: '1.1', text: 'x' })
        .catch((e: unknown) => logger.error({ err: e }, 'update failed'));
      fake.setBehaviour('users.info', { status: 503 });
      await slack.users
        .info({ user: 'U0ALICE' })
        .catch((e: unknown) => logger.error({ err: e }, 'lookup failed'));

      await t.sb.store.close();
      await t.postSlack(cmd, 'form');
      await t.postSlack(eventCallbackBody({ type: 'app_home_opened', user: 'U0ALICE' }), 'json');
    } finally {
      await t.stop();
      await fake.close();
    }

    const text = sink.text();
    expect(sink.lines().length).toBeGreaterThan(20);
    expect(text).toContain('refused a Slack request that failed verification');
    expect(text).toContain('could not record a Slack input');
    for (const forbidden of [
      TEST_BOT_TOKEN,
      'xoxb-',
      TEST_SIGNING_SECRET,
      'forged-secret',
      responseUrl,
      '/response/',
      '+15551234567',
      '482913',
      'deprecated-verification-token',
    ]) {
      expect(text, `logs contain ${forbidden}`).not.toContain(forbidden);
    }
  });
});

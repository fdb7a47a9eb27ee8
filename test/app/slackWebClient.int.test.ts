import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type FakeSlack, startFakeSlack } from '../../sandbox/simulators/slack/fakeSlack.ts';
import { loadConfig } from '../../src/config.ts';
import { ALL_LIFECYCLES } from '../../src/lifecycleList.ts';
import { createMetrics, type Metrics } from '../../src/metrics.ts';
import { createSlackWebClient, type SwitchboardWebClient } from '../../src/slack/webClient.ts';
import { caught } from '../support/caught.ts';
import { TEST_DATA_KEYS } from '../support/dataKeys.ts';
import { createLogSink } from '../support/logSink.ts';

const TOKEN = 'xoxb-9-9-webclienttest';
let fake: FakeSlack;
let metrics: Metrics;
let slack: SwitchboardWebClient;
const logs = createLogSink();

beforeAll(async () => {
  fake = await startFakeSlack({ botToken: TOKEN });
});
afterAll(async () => {
  await fake.close();
});
beforeEach(() => {
  fake.clearBehaviour();
  metrics = createMetrics();
  const config = loadConfig(
    {
      SLACK_BOT_TOKEN: TOKEN,
      SLACK_SIGNING_SECRET: 's3cret-signing',
      SLACK_API_URL: fake.apiUrl,
      SWITCHBOARD_DATA_KEYS: TEST_DATA_KEYS,
    },
    ALL_LIFECYCLES,
  );
  slack = createSlackWebClient({
    slack: config.slack,
    logger: logs.logger({ secrets: config.secrets }),
    metrics,
    maxInlineWaitMs: 1_000,
  });
});

describe('Slack Web API client', () => {
  it('calls the API at SLACK_API_URL and counts the call', async () => {
    const r = await slack.chat.postMessage({ channel: 'C0INCIDENTS', text: 'hello' });
    expect(r.ok).toBe(true);
    expect(fake.messages('C0INCIDENTS').at(-1)?.text).toBe('hello');
    expect(
      await metrics.upstreamCalls.value({ service: 'slack', operation: 'chat.postMessage', status: '200' }),
    ).toBe(1);
  });

  it('waits a short Retry-After once, then succeeds', async () => {
    fake.failNext('chat.update', { status: 429, retryAfter: 1 });
    const posted = await slack.chat.postMessage({ channel: 'C0INCIDENTS', text: 'v1' });
    const started = Date.now();
    await slack.chat.update({ channel: 'C0INCIDENTS', ts: posted.ts as string, text: 'v2' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    expect(fake.callsOf('chat.update').map((c) => c.status)).toEqual([429, 200]);
    expect(await metrics.retries.value({ service: 'slack', reason: 'rate_limited' })).toBe(1);
  });

  it('fails fast with SB_UPSTREAM_RATE_LIMITED and retryAfterMs when Retry-After is long', async () => {
    fake.failNext('chat.update', { status: 429, retryAfter: 30 });
    const callsBefore = fake.callsOf('chat.update').length;
    const started = Date.now();
    const e = await caught(slack.chat.update({ channel: 'C0INCIDENTS', ts: '1.1', text: 'x' }));
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(e.code).toBe('SB_UPSTREAM_RATE_LIMITED');
    expect(e.details).toMatchObject({ retryAfterMs: 30_000, method: 'chat.update' });
    expect(fake.callsOf('chat.update')).toHaveLength(callsBefore + 1);
  });

  it('retries 5xx a bounded number of times, then reports SB_UPSTREAM_UNAVAILABLE', async () => {
    fake.setBehaviour('users.info', { status: 503 });
    const e = await caught(slack.users.info({ user: 'U0ALICE' }));
    expect(e.code).toBe('SB_UPSTREAM_UNAVAILABLE');
    expect(fake.callsOf('users.info')).toHaveLength(3);
    expect(await metrics.retries.value({ service: 'slack', reason: 'server_error' })).toBe(2);
  });

  it("maps Slack's own errors without retrying, keeping Slack's code", async () => {
    const e = await caught(slack.chat.postMessage({ channel: 'C0NOPE', text: 'x' }));
    expect(e.code).toBe('SB_UPSTREAM_REJECTED');
    expect(e.details['slackError']).toBe('channel_not_found');
    expect(fake.callsOf('chat.postMessage').filter((c) => c.error === 'channel_not_found')).toHaveLength(1);
    fake.failNext('auth.test', { error: 'invalid_auth' });
    expect((await caught(slack.auth.test())).code).toBe('SB_UPSTREAM_AUTH');
    expect(logs.text()).not.toContain(TOKEN);
  });
});

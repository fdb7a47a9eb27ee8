import { describe, expect, it } from 'vitest';
import {
  ConfigError,
  describeSwitchedOff,
  lifecycleConfig,
  loadConfig,
  loadStoreConfig,
} from '../../src/config.ts';
import { isKurrentDbUrl } from '../../src/eventStore/storeUrl.ts';
import { incidents } from '../../src/incidents/module.ts';
import { verification } from '../../src/verification/module.ts';

const slack = {
  SLACK_BOT_TOKEN: 'xoxb-1-secret-bot-token',
  SLACK_SIGNING_SECRET: 'signing-secret-value-123',
};

const problemsOf = (env: Record<string, string>): ConfigError => {
  try {
    loadConfig(env);
  } catch (e) {
    if (e instanceof ConfigError) return e;
    throw e;
  }
  throw new Error('expected a ConfigError');
};

describe('loadConfig', () => {
  it('applies defaults and switches every lifecycle off when only Slack is configured', () => {
    const config = loadConfig(slack);
    expect(config.port).toBe(3000);
    expect(config.eventStoreUrl).toBe('sqlite:./data/switchboard.db');
    expect(config.logLevel).toBe('info');
    expect(config.slack).toMatchObject({ socketMode: false, apiUrl: undefined, appToken: undefined });
    expect(config.lifecycles).toEqual({ incidents: false, verification: false, timeOff: false });
    expect(lifecycleConfig(config, incidents)).toBeUndefined();
    expect(describeSwitchedOff(config)).toHaveLength(3);
    expect(describeSwitchedOff(config)[0]).toContain('PAGERDUTY_TOKEN');
  });

  it('names every missing Slack variable and what it is for', () => {
    const e = problemsOf({});
    expect(e.code).toBe('SB_CONFIG');
    expect(e.problems.map((p) => p.variable)).toEqual(['SLACK_BOT_TOKEN', 'SLACK_SIGNING_SECRET']);
    expect(e.problems[0]?.purpose).toContain('bot token');
    expect(e.message).toContain('SLACK_BOT_TOKEN is not set');
  });

  it('reports malformed values, echoing non-secrets but never secrets', () => {
    const e = problemsOf({
      ...slack,
      SLACK_BOT_TOKEN: 'xoxp-user-token-oops',
      PORT: 'eighty',
      LOG_LEVEL: 'loud',
      SLACK_API_URL: 'not a url',
    });
    const byVar = Object.fromEntries(e.problems.map((p) => [p.variable, p.problem]));
    expect(Object.keys(byVar).sort()).toEqual(['LOG_LEVEL', 'PORT', 'SLACK_API_URL', 'SLACK_BOT_TOKEN']);
    expect(byVar['PORT']).toContain('"eighty"');
    expect(byVar['SLACK_BOT_TOKEN']).toContain('xoxb-');
    expect(e.message).not.toContain('xoxp-user-token-oops');
  });

  it('selects Socket Mode with an app token, where the signing secret is optional', () => {
    const config = loadConfig({ SLACK_BOT_TOKEN: 'xoxb-1', SLACK_APP_TOKEN: 'xapp-1-abc' });
    expect(config.slack.socketMode).toBe(true);
    expect(config.slack.signingSecret).toBeUndefined();
  });

  it('normalises SLACK_API_URL to end with a slash', () => {
    expect(loadConfig({ ...slack, SLACK_API_URL: 'http://127.0.0.1:9/api' }).slack.apiUrl).toBe(
      'http://127.0.0.1:9/api/',
    );
  });

  it("reads the incident service's request budget, refusing anything but a positive whole number", () => {
    const pd = { ...slack, PAGERDUTY_TOKEN: 'pd-token-123456', PAGERDUTY_WEBHOOK_SECRET: 'pd-whsec-123' };
    const config = loadConfig({ ...pd, PAGERDUTY_REQUESTS_PER_MINUTE: '1200' });
    expect(lifecycleConfig(config, incidents)?.requestsPerMinute).toBe(1200);
    for (const bad of ['0', '-5', 'lots', '9.5'])
      expect(
        problemsOf({ ...pd, PAGERDUTY_REQUESTS_PER_MINUTE: bad }).problems.map((p) => p.variable),
      ).toEqual(['PAGERDUTY_REQUESTS_PER_MINUTE']);
  });

  it('switches a lifecycle on when all its credentials are set, with vendor URLs by default', () => {
    const config = loadConfig({
      ...slack,
      PAGERDUTY_TOKEN: 'pd-token-123456',
      PAGERDUTY_WEBHOOK_SECRET: 'pd-whsec-123',
    });
    expect(config.lifecycles.incidents).toBe(true);
    expect(lifecycleConfig(config, incidents)).toEqual({
      apiUrl: 'https://api.pagerduty.com',
      eventsUrl: 'https://events.pagerduty.com',
      token: 'pd-token-123456',
      webhookSecret: 'pd-whsec-123',
      webhookSecrets: ['pd-whsec-123'],
      requestsPerMinute: 960,
    });
    expect(config.secrets).toEqual(
      expect.arrayContaining(['xoxb-1-secret-bot-token', 'signing-secret-value-123', 'pd-token-123456']),
    );
  });

  it('refuses a half-configured lifecycle, naming what is missing', () => {
    const e = problemsOf({ ...slack, HIBOB_SERVICE_USER_ID: 'SERVICE-1' });
    expect(e.problems.map((p) => p.variable)).toEqual(['HIBOB_SERVICE_USER_TOKEN', 'HIBOB_WEBHOOK_SECRET']);
    expect(e.problems[0]?.problem).toContain('HIBOB_SERVICE_USER_ID is');
  });

  it('parses the verification lifecycle, unescaping a one-line PEM key', () => {
    const config = loadConfig({
      ...slack,
      VONAGE_API_KEY: 'key123',
      VONAGE_API_SECRET: 'secret123',
      VONAGE_APPLICATION_ID: 'app-1',
      VONAGE_PRIVATE_KEY: '-----BEGIN PRIVATE KEY-----\\nabc\\n-----END PRIVATE KEY-----',
      VONAGE_SIGNATURE_SECRET: 'sig-secret-1',
      VONAGE_FROM_NUMBER: '+15550001111',
      VONAGE_API_URL: 'http://127.0.0.1:4000/',
    });
    expect(lifecycleConfig(config, verification)?.privateKey).toBe(
      '-----BEGIN PRIVATE KEY-----\nabc\n-----END PRIVATE KEY-----',
    );
    expect(lifecycleConfig(config, verification)?.fromNumber).toBe('15550001111');
    expect(lifecycleConfig(config, verification)?.apiUrl).toBe('http://127.0.0.1:4000');
    expect(config.lifecycles.verification).toBe(true);
  });

  it('reads each webhook and signing secret with its <NAME>_PREVIOUS during a rotation, both secret', () => {
    const config = loadConfig({
      ...slack,
      SLACK_SIGNING_SECRET_PREVIOUS: 'signing-secret-old-456',
      PAGERDUTY_TOKEN: 'pd-token-123456',
      PAGERDUTY_WEBHOOK_SECRET: 'pd-whsec-new,pd-whsec-other',
      PAGERDUTY_WEBHOOK_SECRET_PREVIOUS: 'pd-whsec-old',
    });
    expect(config.slack.signingSecrets).toEqual(['signing-secret-value-123', 'signing-secret-old-456']);
    // The incident service's secret kept its comma-separated form; the previous one comes last.
    expect(lifecycleConfig(config, incidents)?.webhookSecrets).toEqual([
      'pd-whsec-new',
      'pd-whsec-other',
      'pd-whsec-old',
    ]);
    expect(config.secrets).toEqual(expect.arrayContaining(['signing-secret-old-456', 'pd-whsec-old']));
    // The same value twice is one secret; a previous value alone does not switch a lifecycle on.
    const same = loadConfig({ ...slack, SLACK_SIGNING_SECRET_PREVIOUS: slack.SLACK_SIGNING_SECRET });
    expect(same.slack.signingSecrets).toEqual(['signing-secret-value-123']);
    const alone = loadConfig({ ...slack, HIBOB_WEBHOOK_SECRET_PREVIOUS: 'hr-old' });
    expect(alone.lifecycles.timeOff).toBe(false);
  });

  it('checks the URLs of switched-off lifecycles too', () => {
    const e = problemsOf({ ...slack, HIBOB_API_URL: 'ftp://hr' });
    expect(e.problems.map((p) => p.variable)).toEqual(['HIBOB_API_URL']);
  });

  it('accepts sqlite and kurrentdb store URLs and refuses others', () => {
    expect(
      loadConfig({ ...slack, EVENT_STORE_URL: 'kurrentdb://localhost:2113?tls=false' }).eventStoreUrl,
    ).toBe('kurrentdb://localhost:2113?tls=false');
    expect(problemsOf({ ...slack, EVENT_STORE_URL: 'postgres://x' }).problems[0]?.variable).toBe(
      'EVENT_STORE_URL',
    );
  });

  it('accepts every KurrentDB scheme the store opens, with several gossip seeds and options', () => {
    for (const url of [
      'kurrentdb://switchboard:p%40ss@node1:2113,node2:2113,node3:2113?tls=true&tlsCAFile=/certs/ca.crt&nodePreference=leader',
      'kurrentdb+discover://kurrentdb.internal:2113?tls=true',
      'kurrent://node1:2113,node2:2113?tls=false',
      'kdb+discover://kurrentdb.internal:2113',
      'esdb://node1:2113,node2:2113?tls=false',
      'eventstore://node1:2113?tls=false',
    ]) {
      expect(loadConfig({ ...slack, EVENT_STORE_URL: url }).eventStoreUrl).toBe(url);
      expect(isKurrentDbUrl(url)).toBe(true);
    }
    expect(isKurrentDbUrl('sqlite:./x.db')).toBe(false);
    expect(isKurrentDbUrl('postgres://node1')).toBe(false);
  });

  it("never echoes, and scrubs from logs, the password in a store URL's credentials", () => {
    const e = problemsOf({ ...slack, EVENT_STORE_URL: 'kurrentdb:/switchboard:hunter2-store-pw@node1:2113' });
    expect(e.problems.map((p) => p.variable)).toEqual(['EVENT_STORE_URL']);
    expect(`${e.message} ${JSON.stringify(e.problems)}`).not.toContain('hunter2-store-pw');
    expect(e.problems[0]?.problem).toContain('***@node1:2113');

    const config = loadConfig({
      ...slack,
      EVENT_STORE_URL: 'kurrentdb://switchboard:p%40ss-word-9@node1:2113,node2:2113?tls=true',
    });
    expect(config.secrets).toEqual(expect.arrayContaining(['p%40ss-word-9', 'p@ss-word-9']));
    expect(loadConfig({ ...slack, EVENT_STORE_URL: 'kurrentdb://node1:2113' }).secrets).toEqual(
      expect.not.arrayContaining(['node1:2113']),
    );
  });
});

describe('loadStoreConfig', () => {
  it('keeps the store URL password out of its messages too', () => {
    let message = '';
    try {
      loadStoreConfig({ EVENT_STORE_URL: 'kurrent:/admin:store-pw-77@db:2113' });
    } catch (e) {
      message = e instanceof ConfigError ? `${e.message} ${JSON.stringify(e.problems)}` : 'not a ConfigError';
    }
    expect(message).toContain('EVENT_STORE_URL');
    expect(message).not.toContain('store-pw-77');
  });

  it('needs no Slack credentials', () => {
    expect(loadStoreConfig({ EVENT_STORE_URL: 'sqlite::memory:', CI: 'true' })).toEqual({
      eventStoreUrl: 'sqlite::memory:',
      logLevel: 'info',
      ci: true,
    });
  });
});

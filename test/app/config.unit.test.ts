import { describe, expect, it } from 'vitest';
import { incidents } from '../../handlers/incident/module.ts';
import { verification } from '../../handlers/verification/module.ts';
import {
  ConfigError,
  describeSwitchedOff,
  lifecycleConfig,
  loadConfig,
  loadKeysConfig,
  loadStoreConfig,
} from '../../src/config.ts';
import { isKurrentDbUrl } from '../../src/eventStore/storeUrl.ts';
import { ALL_LIFECYCLES } from '../../src/lifecycleList.ts';
import { ringEntry, TEST_DATA_KEYS } from '../support/dataKeys.ts';

const slack = {
  SLACK_BOT_TOKEN: 'xoxb-1-secret-bot-token',
  SLACK_SIGNING_SECRET: 'signing-secret-value-123',
  SWITCHBOARD_DATA_KEYS: TEST_DATA_KEYS,
};

const problemsOf = (env: Record<string, string>): ConfigError => {
  try {
    loadConfig(env, ALL_LIFECYCLES);
  } catch (e) {
    if (e instanceof ConfigError) return e;
    throw e;
  }
  throw new Error('expected a ConfigError');
};

describe('loadConfig', () => {
  it('applies defaults and switches every lifecycle off when only Slack is configured', () => {
    const config = loadConfig(slack, ALL_LIFECYCLES);
    expect(config.port).toBe(3000);
    expect(config.eventStoreUrl).toBe('sqlite:./data/switchboard.db');
    expect(config.logLevel).toBe('info');
    expect(config.slack).toMatchObject({ socketMode: false, apiUrl: undefined, appToken: undefined });
    expect(config.lifecycles).toEqual({ incidents: false, verification: false, timeOff: false });
    expect(lifecycleConfig(config, incidents)).toBeUndefined();
    expect(describeSwitchedOff(config, ALL_LIFECYCLES)).toHaveLength(3);
    expect(describeSwitchedOff(config, ALL_LIFECYCLES)[0]).toContain('PAGERDUTY_TOKEN');
  });

  it('names every missing Slack variable and what it is for', () => {
    const e = problemsOf({});
    expect(e.code).toBe('SB_CONFIG');
    expect(e.problems.map((p) => p.variable)).toEqual([
      'SLACK_BOT_TOKEN',
      'SLACK_SIGNING_SECRET',
      'SWITCHBOARD_DATA_KEYS',
    ]);
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
    const config = loadConfig(
      {
        SLACK_BOT_TOKEN: 'xoxb-1',
        SLACK_APP_TOKEN: 'xapp-1-abc',
        SWITCHBOARD_DATA_KEYS: TEST_DATA_KEYS,
      },
      ALL_LIFECYCLES,
    );
    expect(config.slack.socketMode).toBe(true);
    expect(config.slack.signingSecret).toBeUndefined();
  });

  it('reads SWITCHBOARD_OPERATORS_CHANNEL as a channel id, unset by default', () => {
    expect(loadConfig(slack, ALL_LIFECYCLES).operatorsChannel).toBeUndefined();
    expect(
      loadConfig({ ...slack, SWITCHBOARD_OPERATORS_CHANNEL: 'C0OPS' }, ALL_LIFECYCLES).operatorsChannel,
    ).toBe('C0OPS');
    const refused = problemsOf({ ...slack, SWITCHBOARD_OPERATORS_CHANNEL: '#ops' });
    expect(refused.problems.map((p) => p.variable)).toEqual(['SWITCHBOARD_OPERATORS_CHANNEL']);
    expect(refused.message).toContain('must be a Slack channel id');
  });

  it('normalises SLACK_API_URL to end with a slash', () => {
    expect(
      loadConfig({ ...slack, SLACK_API_URL: 'http://127.0.0.1:9/api' }, ALL_LIFECYCLES).slack.apiUrl,
    ).toBe('http://127.0.0.1:9/api/');
  });

  it("reads the incident service's request budget, refusing anything but a positive whole number", () => {
    const pd = { ...slack, PAGERDUTY_TOKEN: 'pd-token-123456', PAGERDUTY_WEBHOOK_SECRET: 'pd-whsec-123' };
    const config = loadConfig({ ...pd, PAGERDUTY_REQUESTS_PER_MINUTE: '1200' }, ALL_LIFECYCLES);
    expect(lifecycleConfig(config, incidents)?.requestsPerMinute).toBe(1200);
    for (const bad of ['0', '-5', 'lots', '9.5'])
      expect(
        problemsOf({ ...pd, PAGERDUTY_REQUESTS_PER_MINUTE: bad }).problems.map((p) => p.variable),
      ).toEqual(['PAGERDUTY_REQUESTS_PER_MINUTE']);
  });

  it('switches a lifecycle on when all its credentials are set, with vendor URLs by default', () => {
    const config = loadConfig(
      {
        ...slack,
        PAGERDUTY_TOKEN: 'pd-token-123456',
        PAGERDUTY_WEBHOOK_SECRET: 'pd-whsec-123',
      },
      ALL_LIFECYCLES,
    );
    expect(config.lifecycles.incidents).toBe(true);
    expect(lifecycleConfig(config, incidents)).toEqual({
      apiUrl: 'https://api.pagerduty.com',
      eventsUrl: 'https://events.pagerduty.com',
      token: 'pd-token-123456',
      webhookSecret: 'pd-whsec-123',
      webhookSecrets: ['pd-whsec-123'],
      requestsPerMinute: 960,
      shiftNoticeHours: 12,
    });
    expect(config.secrets).toEqual(
      expect.arrayContaining(['xoxb-1-secret-bot-token', 'signing-secret-value-123', 'pd-token-123456']),
    );
  });

  it('reads SHIFT_NOTICE_HOURS (issue 20), and names one out of range', () => {
    const pd = { ...slack, PAGERDUTY_TOKEN: 'pd-token-123456', PAGERDUTY_WEBHOOK_SECRET: 'pd-whsec-123' };
    const config = loadConfig({ ...pd, SHIFT_NOTICE_HOURS: '6' }, ALL_LIFECYCLES);
    expect(lifecycleConfig(config, incidents)?.shiftNoticeHours).toBe(6);
    expect(problemsOf({ ...pd, SHIFT_NOTICE_HOURS: '0' }).message).toMatch(
      /SHIFT_NOTICE_HOURS.*between 1 and 168/s,
    );
    expect(problemsOf({ ...pd, SHIFT_NOTICE_HOURS: 'soon' }).message).toMatch(/SHIFT_NOTICE_HOURS/);
  });

  it('refuses a half-configured lifecycle, naming what is missing', () => {
    const e = problemsOf({ ...slack, HIBOB_SERVICE_USER_ID: 'SERVICE-1' });
    expect(e.problems.map((p) => p.variable)).toEqual(['HIBOB_SERVICE_USER_TOKEN', 'HIBOB_WEBHOOK_SECRET']);
    expect(e.problems[0]?.problem).toContain('HIBOB_SERVICE_USER_ID is');
  });

  it('parses the verification lifecycle, unescaping a one-line PEM key', () => {
    const config = loadConfig(
      {
        ...slack,
        VONAGE_API_KEY: 'key123',
        VONAGE_API_SECRET: 'secret123',
        VONAGE_APPLICATION_ID: 'app-1',
        VONAGE_PRIVATE_KEY: '-----BEGIN PRIVATE KEY-----\\nabc\\n-----END PRIVATE KEY-----',
        VONAGE_SIGNATURE_SECRET: 'sig-secret-1',
        VONAGE_FROM_NUMBER: '+15550001111',
        VONAGE_API_URL: 'http://127.0.0.1:4000/',
      },
      ALL_LIFECYCLES,
    );
    expect(lifecycleConfig(config, verification)?.privateKey).toBe(
      '-----BEGIN PRIVATE KEY-----\nabc\n-----END PRIVATE KEY-----',
    );
    expect(lifecycleConfig(config, verification)?.fromNumber).toBe('15550001111');
    expect(lifecycleConfig(config, verification)?.apiUrl).toBe('http://127.0.0.1:4000');
    expect(config.lifecycles.verification).toBe(true);
    // Person keys and numbers sealed before the data key ring open with the signature secret.
    expect(config.dataKeys.legacy).toEqual({
      response_url: ['signing-secret-value-123', 'xoxb-1-secret-bot-token'],
      'person-key': ['sig-secret-1'],
      'phone-number': ['sig-secret-1'],
    });
  });

  it('reads each webhook and signing secret with its <NAME>_PREVIOUS during a rotation, both secret', () => {
    const config = loadConfig(
      {
        ...slack,
        SLACK_SIGNING_SECRET_PREVIOUS: 'signing-secret-old-456',
        PAGERDUTY_TOKEN: 'pd-token-123456',
        PAGERDUTY_WEBHOOK_SECRET: 'pd-whsec-new,pd-whsec-other',
        PAGERDUTY_WEBHOOK_SECRET_PREVIOUS: 'pd-whsec-old',
      },
      ALL_LIFECYCLES,
    );
    expect(config.slack.signingSecrets).toEqual(['signing-secret-value-123', 'signing-secret-old-456']);
    // The incident service's secret kept its comma-separated form; the previous one comes last.
    expect(lifecycleConfig(config, incidents)?.webhookSecrets).toEqual([
      'pd-whsec-new',
      'pd-whsec-other',
      'pd-whsec-old',
    ]);
    expect(config.secrets).toEqual(expect.arrayContaining(['signing-secret-old-456', 'pd-whsec-old']));
    // The same value twice is one secret; a previous value alone does not switch a lifecycle on.
    const same = loadConfig(
      { ...slack, SLACK_SIGNING_SECRET_PREVIOUS: slack.SLACK_SIGNING_SECRET },
      ALL_LIFECYCLES,
    );
    expect(same.slack.signingSecrets).toEqual(['signing-secret-value-123']);
    const alone = loadConfig({ ...slack, HIBOB_WEBHOOK_SECRET_PREVIOUS: 'hr-old' }, ALL_LIFECYCLES);
    expect(alone.lifecycles.timeOff).toBe(false);
  });

  it('checks the URLs of switched-off lifecycles too', () => {
    const e = problemsOf({ ...slack, HIBOB_API_URL: 'ftp://hr' });
    expect(e.problems.map((p) => p.variable)).toEqual(['HIBOB_API_URL']);
  });

  it('accepts sqlite and kurrentdb store URLs and refuses others', () => {
    expect(
      loadConfig({ ...slack, EVENT_STORE_URL: 'kurrentdb://localhost:2113?tls=false' }, ALL_LIFECYCLES)
        .eventStoreUrl,
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
      expect(loadConfig({ ...slack, EVENT_STORE_URL: url }, ALL_LIFECYCLES).eventStoreUrl).toBe(url);
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

    const config = loadConfig(
      {
        ...slack,
        EVENT_STORE_URL: 'kurrentdb://switchboard:p%40ss-word-9@node1:2113,node2:2113?tls=true',
      },
      ALL_LIFECYCLES,
    );
    expect(config.secrets).toEqual(expect.arrayContaining(['p%40ss-word-9', 'p@ss-word-9']));
    expect(
      loadConfig({ ...slack, EVENT_STORE_URL: 'kurrentdb://node1:2113' }, ALL_LIFECYCLES).secrets,
    ).toEqual(expect.not.arrayContaining(['node1:2113']));
  });
});

describe('SWITCHBOARD_DATA_KEYS', () => {
  const { SWITCHBOARD_DATA_KEYS: _ring, ...withoutRing } = slack;

  it('is required, and says how to make one', () => {
    const e = problemsOf(withoutRing);
    expect(e.problems).toEqual([
      {
        variable: 'SWITCHBOARD_DATA_KEYS',
        problem: 'is not set: make a key with `npm run keys -- generate` and keep it safe',
        purpose: expect.stringContaining('the first seals, every one opens'),
      },
    ]);
  });

  it('is parsed in order, the first sealing, and each key is scrubbed from logs', () => {
    const text = `${ringEntry('new', 1)},${ringEntry('old', 2)}`;
    const config = loadConfig({ ...withoutRing, SWITCHBOARD_DATA_KEYS: text }, ALL_LIFECYCLES);
    expect(config.dataKeys.ring.map((k) => k.id)).toEqual(['new', 'old']);
    expect(config.dataKeys.ring[1]?.key.equals(Buffer.alloc(32, 2))).toBe(true);
    expect(config.secrets).toEqual(
      expect.arrayContaining([
        text,
        Buffer.alloc(32, 1).toString('base64'),
        Buffer.alloc(32, 2).toString('base64'),
      ]),
    );
  });

  it('a malformed ring names itself and never shows the key', () => {
    const short = Buffer.alloc(16, 3).toString('base64');
    for (const [value, says] of [
      [`k1:${short}`, 'key "k1" is not 32 bytes of base64 (it decodes to 16 bytes)'],
      [`${ringEntry('a', 1)},${ringEntry('a', 2)}`, 'key id "a" appears twice'],
      [`bad id:${Buffer.alloc(32, 4).toString('base64')}`, 'entry 1 has a malformed id'],
      [`${ringEntry('a', 1)},`, 'has an empty entry (entry 2)'],
    ] as const) {
      const e = problemsOf({ ...withoutRing, SWITCHBOARD_DATA_KEYS: value });
      expect(e.problems.map((p) => p.variable)).toEqual(['SWITCHBOARD_DATA_KEYS']);
      expect(e.problems[0]?.problem).toContain(says);
      for (const fill of [1, 2, 3, 4]) {
        for (const size of [16, 32])
          expect(e.message).not.toContain(Buffer.alloc(size, fill).toString('base64'));
      }
    }
  });
});

describe('loadKeysConfig', () => {
  it('needs the store and the ring, not Slack, and reads the legacy secret of a configured lifecycle', () => {
    const vonage = {
      VONAGE_API_KEY: 'key123',
      VONAGE_API_SECRET: 'secret123',
      VONAGE_APPLICATION_ID: 'app-1',
      VONAGE_PRIVATE_KEY: '-----BEGIN PRIVATE KEY-----\\nabc\\n-----END PRIVATE KEY-----',
      VONAGE_SIGNATURE_SECRET: 'sig-secret-1',
      VONAGE_FROM_NUMBER: '+15550001111',
    };
    const config = loadKeysConfig({ SWITCHBOARD_DATA_KEYS: TEST_DATA_KEYS, ...vonage }, ALL_LIFECYCLES);
    expect(config.dataKeys.ring.map((k) => k.id)).toEqual(['test']);
    expect(config.dataKeys.legacy).toEqual({
      'person-key': ['sig-secret-1'],
      'phone-number': ['sig-secret-1'],
    });
    expect(loadKeysConfig({ SWITCHBOARD_DATA_KEYS: TEST_DATA_KEYS }, ALL_LIFECYCLES).dataKeys.legacy).toEqual(
      {},
    );
    expect(() => loadKeysConfig({}, ALL_LIFECYCLES)).toThrow(/SWITCHBOARD_DATA_KEYS is not set/);
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

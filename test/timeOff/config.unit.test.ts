import { describe, expect, it } from 'vitest';
import { timeOff } from '../../handlers/timeOff/module.ts';
import { ConfigError, lifecycleConfig, loadConfig } from '../../src/config.ts';
import { ALL_LIFECYCLES } from '../../src/lifecycleList.ts';
import { TEST_DATA_KEYS } from '../support/dataKeys.ts';

const base = {
  SLACK_BOT_TOKEN: 'xoxb-1-secret-bot-token',
  SLACK_SIGNING_SECRET: 'signing-secret-value-123',
  SWITCHBOARD_DATA_KEYS: TEST_DATA_KEYS,
  HIBOB_SERVICE_USER_ID: 'SERVICE-1',
  HIBOB_SERVICE_USER_TOKEN: 'hr-token-secret-value',
  HIBOB_WEBHOOK_SECRET: 'hr-webhook-secret-value',
};

const problems = (env: Record<string, string>): string => {
  try {
    loadConfig(env, ALL_LIFECYCLES);
  } catch (e) {
    if (e instanceof ConfigError) return e.message;
    throw e;
  }
  throw new Error('expected a ConfigError');
};

describe('time-off configuration', () => {
  it('is on with its three credentials, with the vendor URL and the approval rules by default', () => {
    const config = loadConfig(base, ALL_LIFECYCLES);
    expect(config.lifecycles.timeOff).toBe(true);
    expect(lifecycleConfig(config, timeOff)).toEqual({
      apiUrl: 'https://api.hibob.com/v1',
      serviceUserId: 'SERVICE-1',
      serviceUserToken: 'hr-token-secret-value',
      webhookSecret: 'hr-webhook-secret-value',
      webhookSecrets: ['hr-webhook-secret-value'],
      holidays: [],
      approvalRules: { reminderWorkingDays: [1, 3], expiryWorkingDays: 7 },
      directoryRefreshMinutes: 60,
      changesPollMinutes: 5,
      // Issue 20: sick leave may be recorded for past days unless TIME_OFF_PAST_POLICIES says otherwise.
      pastPolicies: ['Sick'],
    });
    // The token and the webhook secret are secrets: scrubbed from logs.
    expect(config.secrets).toEqual(
      expect.arrayContaining(['hr-token-secret-value', 'hr-webhook-secret-value']),
    );
  });

  it('reads holidays, reminders, expiry and intervals', () => {
    const config = loadConfig(
      {
        ...base,
        HIBOB_API_URL: 'http://127.0.0.1:4100/v1/',
        TIME_OFF_HOLIDAYS: '2026-12-25, 2026-12-26 2026-12-25',
        TIME_OFF_REMINDER_DAYS: '2, 4',
        TIME_OFF_EXPIRY_DAYS: '10',
        HIBOB_DIRECTORY_REFRESH_MINUTES: '30',
        HIBOB_CHANGES_POLL_MINUTES: '2',
      },
      ALL_LIFECYCLES,
    );
    expect(lifecycleConfig(config, timeOff)).toMatchObject({
      apiUrl: 'http://127.0.0.1:4100/v1',
      holidays: ['2026-12-25', '2026-12-26'],
      approvalRules: { reminderWorkingDays: [2, 4], expiryWorkingDays: 10 },
      directoryRefreshMinutes: 30,
      changesPollMinutes: 2,
    });
  });

  it('names a malformed holiday list, reminder list, expiry or interval', () => {
    expect(problems({ ...base, TIME_OFF_HOLIDAYS: '2026-12-25,25/12/2026' })).toMatch(
      /TIME_OFF_HOLIDAYS.*YYYY-MM-DD/s,
    );
    expect(problems({ ...base, TIME_OFF_HOLIDAYS: '2026-02-30' })).toMatch(/TIME_OFF_HOLIDAYS/);
    expect(problems({ ...base, TIME_OFF_REMINDER_DAYS: 'one' })).toMatch(/TIME_OFF_REMINDER_DAYS/);
    expect(problems({ ...base, TIME_OFF_EXPIRY_DAYS: '0' })).toMatch(
      /TIME_OFF_EXPIRY_DAYS.*between 1 and 60/s,
    );
    expect(problems({ ...base, HIBOB_DIRECTORY_REFRESH_MINUTES: '1' })).toMatch(
      /HIBOB_DIRECTORY_REFRESH_MINUTES/,
    );
  });

  it("reads the daily who's-out post (issue 20 item 7), and names a malformed channel, time or zone", () => {
    const config = loadConfig(
      {
        ...base,
        WHOS_OUT_CHANNELS: 'C0TEAM, G0PRIV,C0TEAM',
        WHOS_OUT_TIME: '08:30',
        WHOS_OUT_TIME_ZONE: 'Europe/Lisbon',
        WHOS_OUT_SHOWN_KINDS: 'Holiday, Public holiday',
      },
      ALL_LIFECYCLES,
    );
    expect(lifecycleConfig(config, timeOff)?.whosOutDaily).toEqual({
      channels: ['C0TEAM', 'G0PRIV'],
      minuteOfDay: 8 * 60 + 30,
      timeZone: 'Europe/Lisbon',
      shownKinds: ['Holiday', 'Public holiday'],
    });
    const defaults = loadConfig({ ...base, WHOS_OUT_CHANNELS: 'C0TEAM' }, ALL_LIFECYCLES);
    expect(lifecycleConfig(defaults, timeOff)?.whosOutDaily).toEqual({
      channels: ['C0TEAM'],
      minuteOfDay: 9 * 60,
      timeZone: 'UTC',
      shownKinds: [],
    });
    expect(problems({ ...base, WHOS_OUT_CHANNELS: '#team' })).toMatch(/WHOS_OUT_CHANNELS.*channel ids/s);
    expect(problems({ ...base, WHOS_OUT_CHANNELS: 'U0ANA' })).toMatch(/WHOS_OUT_CHANNELS/);
    expect(problems({ ...base, WHOS_OUT_TIME: '9am' })).toMatch(/WHOS_OUT_TIME.*HH:MM/s);
    expect(problems({ ...base, WHOS_OUT_TIME: '24:00' })).toMatch(/WHOS_OUT_TIME/);
    expect(problems({ ...base, WHOS_OUT_TIME_ZONE: 'Mars/Olympus' })).toMatch(/WHOS_OUT_TIME_ZONE.*IANA/s);
  });

  it('is a start-up error with only some credentials, naming the missing one', () => {
    const { HIBOB_WEBHOOK_SECRET: _missing, ...rest } = base;
    expect(problems(rest)).toMatch(/HIBOB_WEBHOOK_SECRET/);
  });
});

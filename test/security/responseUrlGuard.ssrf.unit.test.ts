import { describe, expect, it } from 'vitest';
import { responseUrlGuard, responseUrlOrigins } from '../../src/http/responseUrlGuard.ts';

/** Issue 9 item 1: the one response_url guard, spelling by spelling. */
const guard = responseUrlGuard(responseUrlOrigins('http://127.0.0.1:4010/api/'));

describe('responseUrlGuard', () => {
  it.each([
    'https://hooks.slack.com/commands/T0SWITCH/1/abcdef',
    'https://hooks.slack.com/actions/T0SWITCH/1/abcdef',
    'http://127.0.0.1:4010/response/abc',
  ])('passes %s', (url) => {
    expect(guard(url).href).toBe(url);
  });

  it.each([
    'http://hooks.slack.com/commands/T/1/x',
    'https://hooks.slack.com.evil.tld/commands/T/1/x',
    'https://evil.tld/hooks.slack.com/commands',
    'https://HOOKS.slack.com/commands/T/1/x',
    'https://hooks.slack.com:443/commands/T/1/x',
    'https://hooks.slack.com:8443/commands/T/1/x',
    'https://hooks.slack.com./commands/T/1/x',
    'https://user:pw@hooks.slack.com/commands/T/1/x',
    'https://hooks.slack.com@127.0.0.1/commands',
    'https://hooks.slack.com\\@127.0.0.1/commands',
    'http://169.254.169.254/latest/meta-data/',
    'http://2130706433/',
    'http://0x7f000001/',
    'http://017700000001/',
    'http://127.1:4010/response/abc',
    'http://[::ffff:127.0.0.1]:4010/response/abc',
    'http://localhost:4010/response/abc',
    'http://127.0.0.1:4011/response/abc',
    ' https://hooks.slack.com/commands/T/1/x',
    'https://hooks.slack.com/commands/T/1/x\n',
    'https://hooks.slack.com/commands/../../x',
    'file:///etc/passwd',
    'javascript:alert(1)',
    'not a url',
    '',
  ])('refuses %j', (url) => {
    expect(() => guard(url)).toThrow(/response_url/);
  });

  it('refuses what is not a string, and never repeats the URL in its message', () => {
    expect(() => guard(undefined)).toThrow(/response_url/);
    expect(() => guard('http://2130706433/secret-path')).toThrow(
      expect.objectContaining({ message: expect.not.stringContaining('secret-path') }),
    );
  });
});

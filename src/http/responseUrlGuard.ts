import { ValidationError } from '../core/errors.ts';

/**
 * The one guard for every post to a URL that came from a request (a slash command's or an
 * interaction's `response_url`): Bolt's `respond()` in the listeners (SwitchboardBoltApp routes it
 * through `guardedResponseFetch`) and the processors' poster (src/processors/responseUrl.ts).
 *
 * A response_url is attacker-shaped input, so only one spelling of an allowed address passes:
 * - parsed with the WHATWG URL parser, and the parse must give back exactly the string received
 *   (`https://HOOKS.slack.com/`, `https://hooks.slack.com:443/`, `http://2130706433/`,
 *   `http://[::ffff:127.0.0.1]/`, a tab or a backslash in the authority: all refused);
 * - its origin is exactly one of the allowed origins: `https://hooks.slack.com` (Slack's, per
 *   https://api.slack.com/interactivity/handling#message_responses), plus the fake Slack's origin
 *   when SLACK_API_URL points at one (tests and the sandbox);
 * - no user name or password (`https://hooks.slack.com@127.0.0.1/`).
 * The caller never follows redirects: a 3xx is a failed post.
 */
export const SLACK_RESPONSE_URL_ORIGIN = 'https://hooks.slack.com';

export type ResponseUrlGuard = (raw: unknown) => URL;

/** The allowed origins for a configuration: Slack's, and the fake Slack's when one is configured. */
export const responseUrlOrigins = (slackApiUrl: string | undefined): string[] => [
  SLACK_RESPONSE_URL_ORIGIN,
  ...(slackApiUrl ? [new URL(slackApiUrl).origin] : []),
];

/**
 * Builds the guard for a set of origins; it returns the parsed URL or throws a ValidationError
 * (whose message and details never carry the URL: a response_url is a credential).
 *
 * @example
 * const guard = responseUrlGuard(['https://hooks.slack.com']);
 * guard('https://hooks.slack.com/commands/T1/2/x'); // URL
 * guard('http://2130706433/'); // throws ValidationError
 */
export const responseUrlGuard = (allowedOrigins: readonly string[]): ResponseUrlGuard => {
  const allowed = new Set(allowedOrigins.map((o) => new URL(o).origin));
  return (raw) => {
    if (typeof raw !== 'string') throw new ValidationError('response_url is not a string');
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw new ValidationError('response_url is not a URL');
    }
    if (url.href !== raw) throw new ValidationError('response_url is not in canonical form');
    if (url.username !== '' || url.password !== '')
      throw new ValidationError('response_url carries credentials');
    if (!allowed.has(url.origin) || (url.protocol !== 'https:' && url.protocol !== 'http:'))
      throw new ValidationError('response_url is not on the allowed origins', {
        details: { origin: url.origin },
      });
    return url;
  };
};

/**
 * A `fetch` for Bolt's `respond()`: the guard first, then undici's fetch with redirects not
 * followed (a 3xx comes back as a failed response, which `respond()` turns into an error).
 */
export const guardedResponseFetch = (
  guard: ResponseUrlGuard,
  timeoutMs = 10_000,
): ((input: string | URL | Request, init?: RequestInit) => Promise<Response>) => {
  return async (input, init) => {
    const raw = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    const url = guard(raw);
    return fetch(url, { ...init, redirect: 'manual', signal: AbortSignal.timeout(timeoutMs) });
  };
};

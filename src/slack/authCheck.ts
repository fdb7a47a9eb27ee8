import { webApi } from '@slack/bolt';
import { ChatOpsError } from '../core/errors.ts';
import { AUTH_ERRORS } from './webClient.ts';

// The SDK Bolt itself uses (one copy, so `instanceof` agrees with errors thrown inside Bolt).
const { WebAPIHTTPError, WebAPIPlatformError, WebAPIRateLimitedError, WebAPIRequestError } = webApi;

/** Slack's own API base when SLACK_API_URL is unset. */
export const SLACK_API_BASE = 'https://slack.com/api/';

/** `ok: false` answers that mean Slack is having trouble, not that it refused the token. */
const SLACK_SIDE_ERRORS = new Set([
  'fatal_error',
  'internal_error',
  'service_unavailable',
  'request_timeout',
]);

/** The innermost useful words of a network failure (`connect ECONNREFUSED 127.0.0.1:9`). */
const networkReason = (original: unknown): string => {
  if (!(original instanceof Error)) return String(original);
  if (original.name === 'TimeoutError' || original.name === 'AbortError')
    return 'no answer in time (timed out)';
  const cause = original.cause;
  if (cause instanceof AggregateError && cause.errors.length > 0) {
    return [...new Set(cause.errors.map((e: unknown) => (e instanceof Error ? e.message : String(e))))].join(
      '; ',
    );
  }
  if (cause instanceof Error && cause.message) return cause.message;
  return original.message;
};

/**
 * What went wrong when Bolt's `auth.test` at start-up failed, as a coded error whose message says
 * what actually failed:
 * - Slack answered and refused the token (`invalid_auth`, `not_authed`, `account_inactive`,
 *   `token_revoked`, …): "Slack did not accept SLACK_BOT_TOKEN (auth.test: invalid_auth)",
 *   SB_UPSTREAM_AUTH (SB_UPSTREAM_REJECTED for `ok: false` answers that are not about the token);
 * - Slack could not be reached (connection refused, DNS, timeout) or answered 5xx or a Slack-side
 *   error: "Could not reach Slack at <base URL> to check SLACK_BOT_TOKEN: <what failed>",
 *   SB_UPSTREAM_UNAVAILABLE;
 * - rate limited: SB_UPSTREAM_RATE_LIMITED; another HTTP status (a wrong SLACK_API_URL, a proxy):
 *   SB_UPSTREAM_REJECTED.
 * `details` carry `reason` (the Slack error code, HTTP status or network failure) and `apiUrl`.
 *
 * @example
 * try { await bolt.init(); } catch (e) { throw slackAuthCheckError(e, config.slack.apiUrl); }
 */
export const slackAuthCheckError = (error: unknown, apiUrl: string | undefined): ChatOpsError => {
  const base = apiUrl ?? SLACK_API_BASE;
  const unreachable = (reason: string, what: string) =>
    new ChatOpsError(
      'SB_UPSTREAM_UNAVAILABLE',
      `Could not reach Slack at ${base} to check SLACK_BOT_TOKEN: ${what}`,
      {
        cause: error,
        details: { service: 'slack', method: 'auth.test', apiUrl: base, reason },
      },
    );

  if (error instanceof WebAPIPlatformError) {
    const slackError = String(error.data.error);
    if (SLACK_SIDE_ERRORS.has(slackError)) {
      return unreachable(slackError, `auth.test answered ${slackError} (trouble on Slack's side)`);
    }
    return new ChatOpsError(
      AUTH_ERRORS.has(slackError) ? 'SB_UPSTREAM_AUTH' : 'SB_UPSTREAM_REJECTED',
      `Slack did not accept SLACK_BOT_TOKEN (auth.test: ${slackError})`,
      {
        cause: error,
        details: { service: 'slack', method: 'auth.test', apiUrl: base, reason: slackError, slackError },
      },
    );
  }
  if (error instanceof WebAPIRateLimitedError) {
    return new ChatOpsError(
      'SB_UPSTREAM_RATE_LIMITED',
      `Slack at ${base} is rate-limiting auth.test (retry after ${error.retryAfter} s), so SLACK_BOT_TOKEN could not be checked`,
      {
        cause: error,
        details: {
          service: 'slack',
          method: 'auth.test',
          apiUrl: base,
          reason: '429',
          retryAfterMs: error.retryAfter * 1000,
        },
      },
    );
  }
  if (error instanceof WebAPIHTTPError) {
    const status = `HTTP ${error.statusCode}${error.statusMessage ? ` ${error.statusMessage}` : ''}`;
    if (error.statusCode >= 500) return unreachable(String(error.statusCode), `auth.test answered ${status}`);
    return new ChatOpsError(
      'SB_UPSTREAM_REJECTED',
      `Could not check SLACK_BOT_TOKEN: ${base} answered auth.test with ${status}, not a Slack API answer (${apiUrl === undefined ? 'is a proxy in the way?' : 'is SLACK_API_URL right?'})`,
      {
        cause: error,
        details: { service: 'slack', method: 'auth.test', apiUrl: base, reason: String(error.statusCode) },
      },
    );
  }
  if (error instanceof WebAPIRequestError) {
    const reason = networkReason(error.original);
    return unreachable(reason, reason);
  }
  const message = error instanceof Error ? error.message : String(error);
  return unreachable(message, message);
};

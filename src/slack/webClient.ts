import { setTimeout as sleep } from 'node:timers/promises';
import { webApi } from '@slack/bolt';
import type { SlackConfig } from '../config.ts';
import { ChatOpsError, type ErrorCode } from '../core/errors.ts';
import type { Logger } from '../logger.ts';
import type { Metrics } from '../metrics.ts';
import { createBoltLogger } from './boltLogger.ts';

// The SDK bolt itself uses (one copy, so `instanceof` agrees with errors thrown inside Bolt).
const { WebAPIHTTPError, WebAPIPlatformError, WebAPIRateLimitedError, WebAPIRequestError, WebClient } =
  webApi;
type WebAPICallResult = webApi.WebAPICallResult;
type WebClientOptions = webApi.WebClientOptions;

/**
 * The Slack Web API client, configured from config (SLACK_API_URL points it at a fake) with a
 * bounded retry policy instead of the SDK's default of about 10 retries over about 30 minutes,
 * which can hold a worker for half an hour
 * (https://docs.slack.dev/tools/node-slack-sdk/reference/web-api/variables/retryPolicies):
 * - 5xx and network failures: at most `retries` quick retries inside one call (capped backoff);
 * - 429: waits `Retry-After` and retries once when that is at most `maxInlineWaitMs`; otherwise
 *   fails at once with SB_UPSTREAM_RATE_LIMITED carrying `details.retryAfterMs`, so the caller (a
 *   processor) records the failure and schedules a durable retry instead of holding a worker;
 * - Slack's own `ok: false` errors are not retried.
 * Errors come out as ChatOpsError (src/core/errors.ts) with `details.slackError` (e.g.
 * `expired_trigger_id`) and the SDK error as `cause`. Each call counts in
 * `switchboard_upstream_calls_total{service="slack"}`; each retry in `switchboard_upstream_retries_total`.
 *
 * @example
 * const slack = createSlackWebClient({ slack: config.slack, logger, metrics });
 * await slack.chat.postMessage({ channel, text, blocks });
 */
export type SlackClientOptions = Readonly<{
  slack: SlackConfig;
  logger: Logger;
  metrics: Metrics;
  /** Quick retries of 5xx / network failures within one call. Default 2. */
  retries?: number;
  /** Longest Retry-After honoured inline; longer ones fail fast. Default 10 s. */
  maxInlineWaitMs?: number;
  /** Per-request timeout. Default 10 s. */
  timeoutMs?: number;
}>;

/** Slack `ok: false` errors that mean the token is refused (or lacks a permission). */
export const AUTH_ERRORS: ReadonlySet<string> = new Set([
  'invalid_auth',
  'not_authed',
  'token_revoked',
  'token_expired',
  'account_inactive',
  'no_permission',
  'missing_scope',
  'not_allowed_token_type',
]);

/** WebClient options shared by our client and Bolt's own (used for auth.test and `respond`). */
export const slackClientOptions = (options: SlackClientOptions): WebClientOptions => {
  const { slack, logger, metrics } = options;
  const retryConfig = {
    retries: options.retries ?? 2,
    factor: 2,
    minTimeout: 200,
    maxTimeout: 2_000,
    randomize: true,
    // p-retry hook (not in the SDK's RetryOptions type): count retries of failed transport attempts.
    onFailedAttempt: (error: Error & { retriesLeft?: number }) => {
      if ((error.retriesLeft ?? 0) <= 0) return;
      const reason = error instanceof WebAPIHTTPError ? 'server_error' : 'network';
      metrics.retries.inc({ service: 'slack', reason });
    },
  };
  return {
    ...(slack.apiUrl === undefined ? {} : { slackApiUrl: slack.apiUrl }),
    logger: createBoltLogger(logger, 'slack-web-api'),
    retryConfig,
    rejectRateLimitedCalls: true,
    timeout: options.timeoutMs ?? 10_000,
  };
};

export class SwitchboardWebClient extends WebClient {
  readonly metrics: Metrics;
  readonly maxInlineWaitMs: number;
  private readonly clientOptions: SlackClientOptions;
  private readonly variants = new Map<string, SwitchboardWebClient>();

  constructor(options: SlackClientOptions) {
    super(options.slack.botToken, slackClientOptions(options));
    this.metrics = options.metrics;
    this.maxInlineWaitMs = options.maxInlineWaitMs ?? 10_000;
    this.clientOptions = options;
  }

  /**
   * The same client with other retry settings (made once per setting): `retries: 0` for calls with
   * no idempotency key, `maxInlineWaitMs: 0` for a caller that waits out Slack's Retry-After itself
   * (the outbox, src/slack/outbox.ts, which holds back every call of the method and channel
   * meanwhile).
   */
  variant(settings: Readonly<{ retries?: number; maxInlineWaitMs?: number }>): SwitchboardWebClient {
    const retries = settings.retries ?? this.clientOptions.retries ?? 2;
    const maxInlineWaitMs = settings.maxInlineWaitMs ?? this.maxInlineWaitMs;
    if (retries === (this.clientOptions.retries ?? 2) && maxInlineWaitMs === this.maxInlineWaitMs)
      return this;
    const id = `${retries}|${maxInlineWaitMs}`;
    let client = this.variants.get(id);
    if (!client) {
      client = new SwitchboardWebClient({ ...this.clientOptions, retries, maxInlineWaitMs });
      this.variants.set(id, client);
    }
    return client;
  }

  override async apiCall(method: string, options?: Record<string, unknown>): Promise<WebAPICallResult> {
    for (let rateLimitedRetries = 0; ; rateLimitedRetries++) {
      try {
        const result = await super.apiCall(method, options);
        this.count(method, '200');
        return result;
      } catch (e) {
        const waitMs = e instanceof WebAPIRateLimitedError ? e.retryAfter * 1000 : undefined;
        this.count(method, statusOf(e));
        if (waitMs !== undefined && rateLimitedRetries === 0 && waitMs <= this.maxInlineWaitMs) {
          this.metrics.retries.inc({ service: 'slack', reason: 'rate_limited' });
          await sleep(waitMs);
          continue;
        }
        throw toChatOpsError(e, method);
      }
    }
  }

  private count(operation: string, status: string): void {
    this.metrics.upstreamCalls.inc({ service: 'slack', operation, status });
  }
}

export const createSlackWebClient = (options: SlackClientOptions): SwitchboardWebClient =>
  new SwitchboardWebClient(options);

const statusOf = (e: unknown): string => {
  if (e instanceof WebAPIRateLimitedError) return '429';
  if (e instanceof WebAPIHTTPError) return String(e.statusCode);
  if (e instanceof WebAPIPlatformError) return e.data.error;
  if (e instanceof WebAPIRequestError) return 'network';
  return 'error';
};

/** Maps an @slack/web-api error to our coded errors; `details.slackError` keeps Slack's code. */
export const toChatOpsError = (e: unknown, method: string): ChatOpsError => {
  if (e instanceof ChatOpsError) return e;
  let code: ErrorCode = 'SB_UPSTREAM_UNAVAILABLE';
  const details: Record<string, unknown> = { service: 'slack', method };
  if (e instanceof WebAPIRateLimitedError) {
    code = 'SB_UPSTREAM_RATE_LIMITED';
    details['retryAfterMs'] = e.retryAfter * 1000;
  } else if (e instanceof WebAPIPlatformError) {
    const slackError = e.data.error;
    details['slackError'] = slackError;
    code = AUTH_ERRORS.has(slackError)
      ? 'SB_UPSTREAM_AUTH'
      : slackError === 'ratelimited'
        ? 'SB_UPSTREAM_RATE_LIMITED'
        : 'SB_UPSTREAM_REJECTED';
  } else if (e instanceof WebAPIHTTPError) {
    details['status'] = e.statusCode;
    code = e.statusCode >= 500 ? 'SB_UPSTREAM_UNAVAILABLE' : 'SB_UPSTREAM_REJECTED';
  } else if (e instanceof WebAPIRequestError) {
    const timedOut = e.original.name === 'TimeoutError' || e.original.name === 'AbortError';
    code = timedOut ? 'SB_TIMEOUT' : 'SB_UPSTREAM_UNAVAILABLE';
  }
  const reason = typeof details['slackError'] === 'string' ? details['slackError'] : code;
  return new ChatOpsError(code, `Slack ${method} failed: ${reason}`, { cause: e, details });
};

import { type Dispatcher, request } from 'undici';
import { ChatOpsError } from '../core/errors.ts';
import { responseUrlGuard, SLACK_RESPONSE_URL_ORIGIN } from '../http/responseUrlGuard.ts';
import type { SlackReplyMessage } from './ports.ts';

export type ResponseUrlPosterOptions = Readonly<{
  /**
   * Origins a response_url may point at (default `https://hooks.slack.com` only: a response_url
   * comes from a request body, so anything else is an SSRF attempt). Tests add their loopback server.
   */
  allowedOrigins?: readonly string[];
  /** undici dispatcher (the app's shared Agent; tests may pass their own). */
  dispatcher?: Dispatcher;
  /** Headers and body timeout per request (ms, default 10 s). */
  timeoutMs?: number;
  /**
   * Opens a response_url the inbox stored sealed (src/core/sealed.ts); one that cannot be opened
   * is refused like an expired URL (SB_VALIDATION), so the reply goes out as an ephemeral message.
   */
  open?: (stored: string) => string;
}>;

const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

const parseRetryAfterMs = (value: string | string[] | undefined): number | undefined => {
  const v = Array.isArray(value) ? value[0] : value;
  if (v === undefined) return undefined;
  const seconds = Number(v);
  if (Number.isFinite(seconds) && seconds >= 0) return Math.ceil(seconds * 1000);
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
};

/**
 * Posts an ephemeral reply to a slash command's or interaction's `response_url` (Slack allows 5 uses
 * in 30 minutes). Only what responseUrlGuard passes, no redirects followed (a 3xx is a rejection). Failures are coded errors (see
 * SlackReplies): 429 → SB_UPSTREAM_RATE_LIMITED with `details.retryAfterMs`, 5xx and network →
 * SB_UPSTREAM_UNAVAILABLE, timeouts → SB_TIMEOUT, any other non-2xx (expired or used-up URL) →
 * SB_UPSTREAM_REJECTED. Error messages never contain the URL.
 *
 * @example
 * const replies: SlackReplies = { respond: createResponseUrlPoster({ dispatcher: agent }), postEphemeral };
 */
export const createResponseUrlPoster = (
  options: ResponseUrlPosterOptions = {},
): ((responseUrl: string, message: SlackReplyMessage) => Promise<void>) => {
  const guard = responseUrlGuard(options.allowedOrigins ?? [SLACK_RESPONSE_URL_ORIGIN]);
  const timeoutMs = options.timeoutMs ?? 10_000;
  return async (responseUrl, message) => {
    // The one guard (src/http/responseUrlGuard.ts); undici's request follows no redirects.
    const url = guard(options.open ? options.open(responseUrl) : responseUrl);
    const body = JSON.stringify({
      text: message.text,
      ...(message.blocks ? { blocks: message.blocks } : {}),
      response_type: 'ephemeral',
      replace_original: message.replaceOriginal === true,
    });
    let response: Dispatcher.ResponseData;
    try {
      response = await request(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json; charset=utf-8' },
        body,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
        ...(options.dispatcher ? { dispatcher: options.dispatcher } : {}),
      });
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      if (typeof code === 'string' && TIMEOUT_CODES.has(code)) {
        throw new ChatOpsError('SB_TIMEOUT', `response_url did not answer in ${timeoutMs} ms`, {
          cause: error,
        });
      }
      throw new ChatOpsError('SB_UPSTREAM_UNAVAILABLE', 'response_url could not be reached', {
        cause: error,
        details: { reason: typeof code === 'string' ? code : 'network' },
      });
    }
    const text = (await response.body.text()).slice(0, 200);
    const status = response.statusCode;
    if (status >= 200 && status < 300) return;
    if (status === 429) {
      const retryAfterMs = parseRetryAfterMs(response.headers['retry-after']);
      throw new ChatOpsError('SB_UPSTREAM_RATE_LIMITED', 'response_url rate limited', {
        details: { status, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) },
      });
    }
    if (status >= 500) {
      throw new ChatOpsError('SB_UPSTREAM_UNAVAILABLE', `response_url answered ${status}`, {
        details: { status, error: text },
      });
    }
    throw new ChatOpsError('SB_UPSTREAM_REJECTED', `response_url answered ${status}: ${text}`, {
      details: { status, error: text },
    });
  };
};

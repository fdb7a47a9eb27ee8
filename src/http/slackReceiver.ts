import { createHmac, createSecretKey, type KeyObject, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parse as parseQuery } from 'node:querystring';
import { type App, type Receiver, type ReceiverEvent, ReceiverMultipleAckError } from '@slack/bolt';
import { slackInputKind } from '../application/inbox.ts';
import type { Clock } from '../core/clock.ts';
import { asError, hasCode } from '../core/errors.ts';
import type { Logger } from '../logger.ts';
import type { Metrics } from '../metrics.ts';
import {
  BodyTooLargeError,
  closeUnread,
  readRawBody,
  UnverifiedBudgetExceededError,
  type UnverifiedBytes,
} from './rawBody.ts';
import { type Route, sendJson } from './server.ts';
import { slackBodyProblem } from './slackBodyShape.ts';

/**
 * Bolt receiver for signed HTTP requests at `POST /slack/events`, mounted on our own server.
 * Transport only (what an input means is for middleware and listeners): read the raw body, refuse
 * what is not from Slack, build the ReceiverEvent, write the ack.
 *
 * Refused with 401 before Bolt sees anything, so nothing of a forged or replayed request is parsed
 * or stored (the first three before a byte of the body is read, `Connection: close`; bodies being
 * read count against the process's unverified-bytes budget, rawBody.ts, and get 503 past it):
 * - missing or malformed `X-Slack-Request-Timestamp` / `X-Slack-Signature`;
 * - a timestamp more than 5 minutes in the FUTURE (checked here: Bolt only refuses old ones);
 * - a timestamp more than 5 minutes old, or a wrong signature (HMAC-SHA256 over
 *   `v0:<ts>:<raw body>`, constant-time compare; the same rules as Bolt's `verifySlackRequest`).
 * Other answers: 413 over the body limit, 400 for a body that does not parse or is of a shape Slack
 * does not send (slackBodyShape.ts: Bolt would throw on it, and a 5xx is retried), the challenge for
 * `url_verification`, 200 for `ssl_check`. If no ack comes within 3 s (Slack's wall), 503.
 */
export const SLACK_EVENTS_PATH = '/slack/events';
export const MAX_CLOCK_SKEW_SECONDS = 5 * 60;
export const SLACK_BODY_LIMIT = 1024 * 1024;
const UNHANDLED_TIMEOUT_MS = 3_001;

export type SlackHttpReceiverOptions = Readonly<{
  /** The signing secret, or every one accepted during a rotation (the current one first). */
  signingSecret: string | readonly string[];
  logger: Logger;
  metrics: Metrics;
  clock: Clock;
  bodyLimit?: number;
  /** Bytes held for bodies not verified yet (default: the process's budget, rawBody.ts). */
  unverifiedBytes?: UnverifiedBytes;
}>;

/** The largest body read from a request without signature headers, for Slack's SSL check only. */
const SSL_CHECK_BODY_LIMIT = 1024;

/** Why a request was refused, for logs and tests (never includes the signature or secret). */
export type RefusalReason = 'missing_headers' | 'future_timestamp' | 'stale_timestamp' | 'bad_signature';

/**
 * Builds the request check for a signing secret (or several, during a rotation: a request signed
 * with any of them passes): the timestamp window in both directions, then
 * the `v0` HMAC-SHA256 signature, by the rules of Bolt's `verifySlackRequest` (stale when older
 * than 5 minutes; version must be `v0`; the hash after the first `=` is compared; the timestamp is
 * signed as the number it parses to). The secret becomes a KeyObject once, and the compare is one
 * `timingSafeEqual` of equal-length digests, where Bolt HMACs both sides again under a fresh random
 * key on every request (tsscmp): same answers, about a tenth of the CPU.
 *
 * @example
 * const check = slackSignatureCheck(secret);
 * const refusal = check(req.headers, rawBody, Date.now()); // undefined when the request is Slack's
 */
export const slackSignatureCheck = (
  signingSecret: string | readonly string[],
): ((headers: IncomingMessage['headers'], rawBody: string, nowMs: number) => RefusalReason | undefined) => {
  const keys: readonly KeyObject[] = (typeof signingSecret === 'string' ? [signingSecret] : signingSecret)
    .filter((s) => s !== '')
    .map((s) => createSecretKey(Buffer.from(s, 'utf8')));
  return (headers, rawBody, nowMs) => {
    const signature = headers['x-slack-signature'];
    const timestampHeader = headers['x-slack-request-timestamp'];
    if (
      typeof signature !== 'string' ||
      typeof timestampHeader !== 'string' ||
      !/^\d{1,12}$/.test(timestampHeader)
    ) {
      return 'missing_headers';
    }
    const timestamp = Number(timestampHeader);
    const nowSec = Math.floor(nowMs / 1000);
    if (timestamp > nowSec + MAX_CLOCK_SKEW_SECONDS) return 'future_timestamp';
    if (timestamp < nowSec - MAX_CLOCK_SKEW_SECONDS) return 'stale_timestamp';
    const [version, hash] = signature.split('=', 2);
    if (version !== 'v0' || !hash) return 'bad_signature';
    const given = Buffer.from(hash, 'latin1');
    for (const key of keys) {
      const expected = createHmac('sha256', key).update(`v0:${timestamp}:${rawBody}`).digest('hex');
      // Lengths first (timingSafeEqual needs equal ones; a digest's length is no secret).
      if (given.length === expected.length && timingSafeEqual(given, Buffer.from(expected, 'latin1'))) {
        return undefined;
      }
    }
    return 'bad_signature';
  };
};

/**
 * What can be judged from the headers alone, before a byte of the body is read: the signature and
 * timestamp headers are there and well formed, and the timestamp is inside the window.
 */
export const slackHeaderRefusal = (
  headers: IncomingMessage['headers'],
  nowMs: number,
): RefusalReason | undefined => {
  const signature = headers['x-slack-signature'];
  const timestampHeader = headers['x-slack-request-timestamp'];
  if (
    typeof signature !== 'string' ||
    !signature.startsWith('v0=') ||
    typeof timestampHeader !== 'string' ||
    !/^\d{1,12}$/.test(timestampHeader)
  ) {
    return 'missing_headers';
  }
  const timestamp = Number(timestampHeader);
  const nowSec = Math.floor(nowMs / 1000);
  if (timestamp > nowSec + MAX_CLOCK_SKEW_SECONDS) return 'future_timestamp';
  if (timestamp < nowSec - MAX_CLOCK_SKEW_SECONDS) return 'stale_timestamp';
  return undefined;
};

/** Checks the timestamp window in both directions and the signature (see slackSignatureCheck). */
export const checkSlackSignature = (
  signingSecret: string | readonly string[],
  headers: IncomingMessage['headers'],
  rawBody: string,
  nowMs: number,
): RefusalReason | undefined => slackSignatureCheck(signingSecret)(headers, rawBody, nowMs);

type ParsedBody = Record<string, unknown>;

const isForm = (contentType: string | undefined): boolean =>
  contentType?.startsWith('application/x-www-form-urlencoded') === true;

/** The body Bolt gets: form fields (or the JSON in a form's `payload` field), or a JSON object. */
const parseBody = (raw: string, form: ReturnType<typeof parseQuery> | undefined): ParsedBody => {
  if (form && form['payload'] === undefined) return form as ParsedBody;
  const json = form ? form['payload'] : raw;
  if (typeof json !== 'string') throw new SyntaxError('payload is repeated');
  const parsed = JSON.parse(json) as unknown;
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new SyntaxError('not an object');
  return parsed as ParsedBody;
};

export class SlackHttpReceiver implements Receiver {
  readonly options: SlackHttpReceiverOptions;
  private app: App | undefined;
  private readonly checkSignature: ReturnType<typeof slackSignatureCheck>;

  constructor(options: SlackHttpReceiverOptions) {
    this.options = options;
    this.checkSignature = slackSignatureCheck(options.signingSecret);
  }

  init(app: App): void {
    this.app = app;
  }

  // Our server (src/http/server.ts) owns the port; Bolt's start/stop have nothing to do.
  async start(): Promise<void> {}
  async stop(): Promise<void> {}

  route(): Route {
    return { method: 'POST', path: SLACK_EVENTS_PATH, handler: (req, res) => this.handle(req, res) };
  }

  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const { logger, metrics, clock } = this.options;
    const started = process.hrtime.bigint();
    const refuse = (reason: RefusalReason, early: boolean): void => {
      logger.warn({ reason, path: SLACK_EVENTS_PATH }, 'refused a Slack request that failed verification');
      metrics.inputs.inc({ source: 'slack', kind: 'unverified', result: 'refused' });
      // Refused on its headers: the body is not read, and the connection is closed once answered.
      if (early) closeUnread(req, res);
      sendJson(res, 401, { ok: false, error: 'invalid_request_signature' });
    };

    // Judge the headers before reading anything. One exception: a small form body with no
    // signature headers may be Slack's SSL check (https://api.slack.com/interactivity/slash-commands),
    // read up to 1 KiB and answered 200 only if it is one.
    const early = slackHeaderRefusal(req.headers, clock.now().getTime());
    const declared = Number(req.headers['content-length']);
    const maybeSslCheck =
      early === 'missing_headers' &&
      isForm(req.headers['content-type']) &&
      Number.isFinite(declared) &&
      declared <= SSL_CHECK_BODY_LIMIT;
    if (early && !maybeSslCheck) {
      refuse(early, true);
      return;
    }

    let raw: Buffer;
    try {
      raw = await readRawBody(
        req,
        maybeSslCheck ? SSL_CHECK_BODY_LIMIT : (this.options.bodyLimit ?? SLACK_BODY_LIMIT),
        ...(this.options.unverifiedBytes ? [this.options.unverifiedBytes] : []),
      );
    } catch (e) {
      if (e instanceof BodyTooLargeError) {
        closeUnread(req, res);
        sendJson(res, 413, { ok: false, error: 'body_too_large' });
        return;
      }
      if (e instanceof UnverifiedBudgetExceededError) {
        logger.warn({ path: SLACK_EVENTS_PATH }, 'too many bytes held for unverified requests: 503');
        closeUnread(req, res);
        sendJson(res, 503, { ok: false, error: 'busy' }, { 'retry-after': '1' });
        return;
      }
      throw e;
    }
    const text = raw.toString('utf8');
    const contentType = req.headers['content-type'];
    // A form body is parsed once, here: for the SSL check and, once verified, as Bolt's body.
    const form = isForm(contentType) ? parseQuery(text) : undefined;

    // Slack's SSL check carries no signature and asks for nothing; nothing else of the body is used.
    if (form?.['ssl_check'] === '1') {
      res.writeHead(200).end();
      return;
    }
    if (early) {
      refuse(early, false);
      return;
    }

    const refusal = this.checkSignature(req.headers, text, clock.now().getTime());
    if (refusal) {
      refuse(refusal, false);
      return;
    }

    let body: ParsedBody;
    let problem: string | undefined;
    try {
      body = parseBody(text, form);
      problem = slackBodyProblem(body, form ? (form['payload'] !== undefined ? 'payload' : 'form') : 'json');
    } catch {
      problem = 'does not parse';
      body = {};
    }
    if (problem !== undefined) {
      // Signed, so Slack's (or our secret leaked): a shape Bolt would trip on. 400, nothing stored;
      // a 5xx would make Slack retry it.
      logger.warn({ contentType, problem }, 'signed Slack request with a body of an unexpected shape');
      metrics.inputs.inc({ source: 'slack', kind: 'malformed', result: 'refused' });
      sendJson(res, 400, { ok: false, error: 'malformed_body' });
      return;
    }

    if (body['type'] === 'url_verification') {
      sendJson(res, 200, { challenge: body['challenge'] });
      return;
    }

    const app = this.app;
    if (!app) throw new Error('SlackHttpReceiver used before Bolt called init(app)');

    const kind = slackInputKind(body) ?? 'other';
    let acked = false;
    const timer = setTimeout(() => {
      if (acked || res.headersSent) return;
      logger.error({ kind }, 'a Slack request was not acknowledged within 3 s');
      sendJson(res, 503, { ok: false, error: 'not_acknowledged' });
    }, UNHANDLED_TIMEOUT_MS);

    const ack = async (response?: unknown): Promise<void> => {
      if (acked) throw new ReceiverMultipleAckError();
      acked = true;
      clearTimeout(timer);
      if (res.headersSent) return; // the watchdog answered already
      writeAck(res, response);
      metrics.ackLatency.observe({ kind }, Number(process.hrtime.bigint() - started) / 1e9);
    };

    const retryNum = Number(req.headers['x-slack-retry-num']);
    const retryReason = req.headers['x-slack-retry-reason'];
    const event: ReceiverEvent = {
      body,
      ack,
      ...(Number.isInteger(retryNum) ? { retryNum } : {}),
      ...(typeof retryReason === 'string' ? { retryReason } : {}),
    };

    try {
      await app.processEvent(event);
    } catch (e) {
      clearTimeout(timer);
      if (res.headersSent) {
        logger.error({ err: asError(e), kind }, 'Slack input failed after it was acknowledged');
        return;
      }
      // Not acknowledged: a non-2xx makes Slack redeliver events; the inbox dedupes the retry.
      const unavailable = hasCode(e, 'SB_STORE_UNAVAILABLE');
      logger.error({ err: asError(e), kind }, 'Slack input failed before it was acknowledged');
      sendJson(res, unavailable ? 503 : 500, {
        ok: false,
        error: unavailable ? 'store_unavailable' : 'internal_error',
      });
      return;
    }
    clearTimeout(timer);
    if (!acked && !res.headersSent) {
      // Bolt found no type to dispatch on (nothing to record): answer so Slack does not retry.
      logger.warn({ kind }, 'Slack request had nothing to acknowledge it');
      res.writeHead(200).end();
    }
  }
}

/** Bolt's ack body rules: nothing → empty 200, a string → text, an object → JSON. */
const writeAck = (res: ServerResponse, response: unknown): void => {
  if (response === undefined || response === null || response === '') {
    res.writeHead(200, { 'content-length': 0 }).end();
  } else if (typeof response === 'string') {
    res.writeHead(200, {
      'content-type': 'text/plain; charset=utf-8',
      'content-length': Buffer.byteLength(response),
    });
    res.end(response);
  } else {
    sendJson(res, 200, response);
  }
};

import type { IncomingHttpHeaders } from 'node:http';
import { commandMetadata, type Inbox, type WebhookInput, webhookInboxEventId } from '../application/inbox.ts';
import type { Clock } from '../core/clock.ts';
import { asError, hasCode, ValidationError } from '../core/errors.ts';
import type { Command, CommandMetadata, JsonValue } from '../core/messages.ts';
import type { Logger } from '../logger.ts';
import { BodyTooLargeError, closeUnread, readRawBody, UnverifiedBudgetExceededError } from './rawBody.ts';
import { type Route, sendJson } from './server.ts';

/**
 * Route plumbing for vendor webhooks on the main port. Each lifecycle
 * brings a WebhookVerifier for its vendor; this module turns it into a route with the answer
 * rules every vendor gets:
 *
 * | what happened                                  | answer | stored |
 * |------------------------------------------------|--------|--------|
 * | signature header absent (`signatureHeader`), body not read | 401 | no |
 * | body over the limit                            | 413    | no     |
 * | too many bytes held for unverified bodies (all routes) | 503 + Retry-After | no |
 * | signature missing or wrong (`verify`)          | 401    | no     |
 * | signed but malformed (`parse` → ValidationError)| 400   | no     |
 * | recorded (one durable append)                  | 200    | yes    |
 * | a delivery id already recorded                 | 200 `duplicate: true` | no (already) |
 * | the store cannot take the write                | 503 + Retry-After | no |
 * | anything else failed                           | 500 (the sender retries) | no |
 *
 * A valid delivery is never answered 4xx (PagerDuty drops those and disables the endpoint after
 * three): `parse` must return `commands: []` for event types nobody handles, not an error.
 */
export type WebhookVerification = Readonly<{ ok: true }> | Readonly<{ ok: false; reason: string }>;

export type WebhookParseContext = Readonly<{
  /** ISO time the delivery arrived. */
  receivedAt: string;
  /** Metadata for the `index`-th command of the delivery with this id (commandMetadata of the input). */
  metadata(deliveryId: string, index?: number, overrides?: Partial<CommandMetadata>): CommandMetadata;
}>;

export type ParsedWebhook = Readonly<{ deliveryId: string; commands: readonly Command[] }>;

export type WebhookVerifier = Readonly<{
  /** Names the inbox stream (`inbox-<source>`) and the delivery-id namespace: `pagerduty`, `vonage`, `hibob`. */
  source: string;
  /** Exact path, e.g. `/webhooks/pagerduty` or `/webhooks/vonage/verify`. */
  path: string;
  /** Checks the signature over the raw bytes. Must not throw for bad input: return `{ ok: false }`. */
  verify(rawBody: Buffer, headers: IncomingHttpHeaders): WebhookVerification;
  /**
   * Extracts the delivery id and the commands; returns (or throws) a ValidationError when malformed.
   * May be async (a number sealed under its owner's key before anything is recorded).
   */
  parse(
    rawBody: Buffer,
    headers: IncomingHttpHeaders,
    context: WebhookParseContext,
  ): ParsedWebhook | ValidationError | Promise<ParsedWebhook | ValidationError>;
  /**
   * What of the parsed body is recorded in the inbox (default: all of it): personal data the
   * commands carry sealed (a phone number) is left out of the recorded copy.
   */
  storedBody?(body: JsonValue): JsonValue;
  /**
   * The header carrying the signature (lower case), e.g. `x-pagerduty-signature`: a request
   * without it is refused 401 before its body is read.
   */
  signatureHeader?: string;
  /** Non-secret headers worth keeping with the record (lower case), e.g. `x-webhook-id`. */
  keepHeaders?: readonly string[];
  /** Body limit in bytes; default 1 MiB. */
  bodyLimit?: number;
  /**
   * The 200 answer's JSON body once the delivery is recorded (default `{ ok: true }`), for a vendor
   * that reads it: a call's keys pressed are answered with the next NCCO, after the durable append.
   */
  answer?(parsed: ParsedWebhook, duplicate: boolean): unknown;
}>;

export type WebhookRoutesDeps = Readonly<{ inbox: Inbox; clock: Clock; logger: Logger }>;

export const WEBHOOK_BODY_LIMIT = 1024 * 1024;
const ALWAYS_KEPT = ['content-type', 'user-agent'];

const bodyAsJson = (raw: Buffer): JsonValue => {
  const text = raw.toString('utf8');
  try {
    return JSON.parse(text) as JsonValue;
  } catch {
    return text;
  }
};

export const webhookRoute = (verifier: WebhookVerifier, deps: WebhookRoutesDeps): Route => {
  const logger = deps.logger.child({ webhook: verifier.source, route: verifier.path });
  const kept = [...ALWAYS_KEPT, ...(verifier.keepHeaders ?? []).map((h) => h.toLowerCase())];
  return {
    method: 'POST',
    path: verifier.path,
    handler: async (req, res) => {
      const signatureHeader = verifier.signatureHeader?.toLowerCase();
      if (signatureHeader !== undefined && typeof req.headers[signatureHeader] !== 'string') {
        logger.warn({ reason: 'missing_signature' }, 'refused a webhook with no signature header');
        closeUnread(req, res);
        sendJson(res, 401, { ok: false, error: 'invalid_signature' });
        return;
      }
      let raw: Buffer;
      try {
        raw = await readRawBody(req, verifier.bodyLimit ?? WEBHOOK_BODY_LIMIT);
      } catch (e) {
        if (e instanceof UnverifiedBudgetExceededError) {
          logger.warn('too many bytes held for unverified requests: 503');
          closeUnread(req, res);
          sendJson(res, 503, { ok: false, error: 'busy' }, { 'retry-after': '1' });
          return;
        }
        if (!(e instanceof BodyTooLargeError)) throw e;
        closeUnread(req, res);
        sendJson(res, 413, { ok: false, error: 'body_too_large' });
        return;
      }

      const verification = verifier.verify(raw, req.headers);
      if (!verification.ok) {
        logger.warn({ reason: verification.reason }, 'refused a webhook that failed signature verification');
        sendJson(res, 401, { ok: false, error: 'invalid_signature' });
        return;
      }

      const receivedAt = deps.clock.now().toISOString();
      const headers = Object.fromEntries(
        kept.flatMap((h) => {
          const v = req.headers[h];
          return typeof v === 'string' ? [[h, v]] : Array.isArray(v) ? [[h, v.join(', ')]] : [];
        }),
      );
      const body = verifier.storedBody ? verifier.storedBody(bodyAsJson(raw)) : bodyAsJson(raw);
      const inputFor = (deliveryId: string): WebhookInput => ({
        source: verifier.source,
        deliveryId,
        eventId: webhookInboxEventId(verifier.source, deliveryId),
        route: verifier.path,
        receivedAt,
        headers,
        body,
      });
      let parsed: ParsedWebhook | ValidationError;
      try {
        parsed = await verifier.parse(raw, req.headers, {
          receivedAt,
          metadata: (deliveryId, index = 0, overrides = {}) =>
            commandMetadata(inputFor(deliveryId), index, overrides),
        });
      } catch (e) {
        if (!(e instanceof ValidationError)) throw e;
        parsed = e;
      }
      if (parsed instanceof ValidationError) {
        logger.warn({ err: parsed }, 'signed webhook with a malformed body');
        sendJson(res, 400, { ok: false, error: 'malformed', message: parsed.message });
        return;
      }

      try {
        const receipt = await deps.inbox.acceptWebhook({
          input: inputFor(parsed.deliveryId),
          commands: parsed.commands,
        });
        sendJson(
          res,
          200,
          verifier.answer
            ? await verifier.answer(parsed, receipt.deduplicated)
            : { ok: true, ...(receipt.deduplicated ? { duplicate: true } : {}) },
        );
      } catch (e) {
        if (hasCode(e, 'SB_STORE_UNAVAILABLE')) {
          logger.error(
            { err: asError(e) },
            'store unavailable: webhook answered 503 for the sender to retry',
          );
          sendJson(res, 503, { ok: false, error: 'store_unavailable' }, { 'retry-after': '5' });
          return;
        }
        throw e;
      }
    },
  };
};

/** One route per verifier; paths must be unique. */
export const webhookRoutes = (verifiers: readonly WebhookVerifier[], deps: WebhookRoutesDeps): Route[] => {
  const paths = new Set<string>();
  return verifiers.map((v) => {
    if (!v.path.startsWith('/webhooks/'))
      throw new TypeError(`webhook path must start with /webhooks/: ${v.path}`);
    if (paths.has(v.path)) throw new TypeError(`two webhook verifiers for ${v.path}`);
    if (!/^[a-z][a-z0-9]*$/.test(v.source))
      throw new TypeError(`webhook source must be a lower-case word: ${v.source}`);
    paths.add(v.path);
    return webhookRoute(v, deps);
  });
};

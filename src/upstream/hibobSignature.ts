import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Signed webhooks of the HR service (HiBob-shaped, v2;
 * https://apidocs.hibob.com/docs/working-with-webhooks): every delivery carries `Bob-Signature`,
 * the Base64 of HMAC-SHA512 over the raw request body, keyed with the webhook's secret
 * (`HIBOB_WEBHOOK_SECRET`). The vendor documents no prefix, no timestamp and no delivery id, so
 * there is no freshness to judge here and replay protection is ours: a redelivery is the same bytes,
 * so the SHA-256 of the body names a delivery (`deliveryId`), retries included.
 *
 * The check is synchronous and never throws on hostile input: the header must be Base64 of exactly
 * 64 bytes, compared in constant time against each configured secret (current and, while rotating,
 * previous) without an early exit.
 *
 * @example
 * const checked = verifyHiBobSignature(rawBody, req.headers['bob-signature'], [secret]);
 * if (!checked.ok) return reply(401, checked.reason);
 * const id = checked.deliveryId; // 'hibob:sha256:…', the same for every retry of this delivery
 */

/** A signature header longer than this is refused unread (the real one is 88 characters). */
const MAX_HEADER_LENGTH = 1024;
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

export type HiBobSignatureCheck =
  | Readonly<{ ok: true; deliveryId: string }>
  | Readonly<{ ok: false; reason: 'missing_signature' | 'malformed_signature' | 'bad_signature' }>;

/** The delivery id of a body: its content, since the service sends no id of its own. */
export const hibobDeliveryId = (rawBody: Buffer | string): string =>
  `hibob:sha256:${createHash('sha256').update(rawBody).digest('hex')}`;

/** What the service sends in `Bob-Signature` for this body (the simulator signs with it, tests too). */
export const signHiBobWebhook = (rawBody: Buffer | string, secret: string): string =>
  createHmac('sha512', secret).update(rawBody).digest('base64');

/**
 * Checks `Bob-Signature` against the raw body bytes exactly as received (re-serialised JSON does
 * not verify). `secrets`: the current webhook secret, and the previous one while rotating.
 */
export const verifyHiBobSignature = (
  rawBody: Buffer,
  header: string | readonly string[] | undefined,
  secrets: string | readonly string[],
): HiBobSignatureCheck => {
  const value = Array.isArray(header) ? header[0] : header;
  if (typeof value !== 'string' || value.trim() === '') return { ok: false, reason: 'missing_signature' };
  const given = value.trim();
  if (given.length > MAX_HEADER_LENGTH || !BASE64.test(given)) {
    return { ok: false, reason: 'malformed_signature' };
  }
  const givenBytes = Buffer.from(given, 'base64');
  if (givenBytes.length !== 64) return { ok: false, reason: 'malformed_signature' };
  let signed = false;
  for (const secret of typeof secrets === 'string' ? [secrets] : secrets) {
    if (secret.length === 0) continue;
    const expected = createHmac('sha512', secret).update(rawBody).digest();
    // No early exit: timing does not say which secret matched.
    if (timingSafeEqual(expected, givenBytes)) signed = true;
  }
  if (!signed) return { ok: false, reason: 'bad_signature' };
  return { ok: true, deliveryId: hibobDeliveryId(rawBody) };
};

/**
 * The `verify` a `WebhookVerifier` (src/http/webhookRoutes.ts) needs for `POST /webhooks/hibob`:
 * reads `bob-signature`, never throws; a good answer carries `deliveryId` (the body's hash).
 *
 * @example
 * const verify = hibobWebhookVerify({ secrets: [config.webhookSecret] });
 * const verifier: WebhookVerifier = { source: 'hibob', path: '/webhooks/hibob', signatureHeader: 'bob-signature', verify, parse };
 */
export const hibobWebhookVerify =
  (options: Readonly<{ secrets: readonly string[] }>) =>
  (rawBody: Buffer, headers: Readonly<Record<string, string | string[] | undefined>>): HiBobSignatureCheck =>
    verifyHiBobSignature(rawBody, headers['bob-signature'], options.secrets);

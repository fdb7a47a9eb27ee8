import { createHash, createHmac, randomUUID, timingSafeEqual } from 'node:crypto';

/**
 * Signed webhooks of the communications service (Vonage "signed webhooks",
 * https://developer.vonage.com/en/getting-started/concepts/webhooks#decoding-signed-webhooks):
 * every callback (verify events, message status, inbound SMS, call events, DTMF input) carries
 * `Authorization: Bearer <JWT>`, the JWT signed HS256 with the account's signature secret
 * (`VONAGE_SIGNATURE_SECRET`, not the API secret), with claims `iat` (seconds), `jti`,
 * `iss: "Vonage"`, `payload_hash` (hex SHA-256 of the raw body), `api_key` and, optionally,
 * `application_id`. The vendor documents no `exp`: freshness is ours to check, with the same
 * five-minute window Slack uses for its signed requests.
 *
 * The check is synchronous (the webhook route's `verify` is) and written against `node:crypto`:
 * the header must say `alg: HS256` (no `none`, no RS256-with-the-secret confusion), the HMAC is
 * compared in constant time, then the body hash and `iat`. It never throws on hostile input.
 *
 * Naming a delivery: each attempt is signed afresh (a new `iat` and `jti` per retry, or the token
 * would go stale while the vendor retries), but its body is the same bytes, so `payload_hash` is
 * what a redelivery shares with the first attempt: use it (not `jti`) as the delivery id.
 *
 * @example
 * const checked = verifyVonageSignature(rawBody, req.headers.authorization, secret, { now: clock.now() });
 * if (!checked.ok) return reply(401, checked.reason);
 * const deliveryId = `vonage:${checked.claims.payload_hash}`;
 */

/** Slack's window for signed requests, used for `iat` here too. */
export const VONAGE_SIGNATURE_MAX_AGE_SECONDS = 5 * 60;
/** A token header longer than this is refused unread. */
const MAX_HEADER_LENGTH = 8 * 1024;

export type VonageWebhookClaims = Readonly<{
  iat: number;
  jti: string;
  iss?: string;
  payload_hash: string;
  api_key?: string;
  application_id?: string;
}>;

export type VonageSignatureCheck =
  | Readonly<{ ok: true; claims: VonageWebhookClaims }>
  | Readonly<{
      ok: false;
      reason:
        | 'missing_signature'
        | 'malformed_token'
        | 'wrong_algorithm'
        | 'bad_signature'
        | 'body_mismatch'
        | 'stale'
        | 'from_the_future';
    }>;

export type VerifyVonageSignatureOptions = Readonly<{
  /** The time to judge `iat` against (pass the app's clock). */
  now: Date;
  /** Default five minutes. */
  maxAgeSeconds?: number;
  /** Tolerated clock skew for an `iat` in the future; default 60 s. */
  futureSkewSeconds?: number;
}>;

const b64url = (buf: Buffer) => buf.toString('base64url');
const sha256Hex = (body: Buffer | string) => createHash('sha256').update(body).digest('hex');

const decodeJson = (part: string): unknown => {
  if (!/^[A-Za-z0-9_-]+$/.test(part)) return undefined;
  try {
    return JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
};

const bearerToken = (header: string | readonly string[] | undefined): string | undefined => {
  const value = Array.isArray(header) ? header[0] : header;
  if (typeof value !== 'string' || value.length === 0 || value.length > MAX_HEADER_LENGTH) return undefined;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(value.trim());
  return m?.[1];
};

/**
 * Checks a webhook's `Authorization` header against the raw body bytes exactly as received
 * (re-serialised JSON does not verify). `secrets`: the current signature secret, and the previous
 * one while it is being rotated.
 */
export const verifyVonageSignature = (
  rawBody: Buffer,
  authorization: string | readonly string[] | undefined,
  secrets: string | readonly string[],
  options: VerifyVonageSignatureOptions,
): VonageSignatureCheck => {
  const token = bearerToken(authorization);
  if (token === undefined) return { ok: false, reason: 'missing_signature' };
  const parts = token.split('.');
  if (parts.length !== 3) return { ok: false, reason: 'malformed_token' };
  const [headerPart, payloadPart, signaturePart] = parts as [string, string, string];
  const header = decodeJson(headerPart) as { alg?: unknown } | undefined;
  const claims = decodeJson(payloadPart) as Record<string, unknown> | undefined;
  if (
    !header ||
    typeof header !== 'object' ||
    !claims ||
    typeof claims !== 'object' ||
    Array.isArray(claims)
  ) {
    return { ok: false, reason: 'malformed_token' };
  }
  if (header.alg !== 'HS256') return { ok: false, reason: 'wrong_algorithm' };
  if (!/^[A-Za-z0-9_-]{43}$/.test(signaturePart)) return { ok: false, reason: 'bad_signature' };
  const given = Buffer.from(signaturePart, 'base64url');
  const signingInput = `${headerPart}.${payloadPart}`;
  let signed = false;
  for (const secret of typeof secrets === 'string' ? [secrets] : secrets) {
    if (secret.length === 0) continue;
    const expected = createHmac('sha256', secret).update(signingInput).digest();
    // No early exit: timing does not say which secret matched.
    if (expected.length === given.length && timingSafeEqual(expected, given)) signed = true;
  }
  if (!signed) return { ok: false, reason: 'bad_signature' };

  const { iat, jti, payload_hash: payloadHash } = claims;
  if (typeof iat !== 'number' || !Number.isFinite(iat) || typeof payloadHash !== 'string') {
    return { ok: false, reason: 'malformed_token' };
  }
  const expectedHash = Buffer.from(sha256Hex(rawBody), 'hex');
  const givenHash = /^[0-9a-fA-F]{64}$/.test(payloadHash) ? Buffer.from(payloadHash, 'hex') : undefined;
  if (!givenHash || !timingSafeEqual(expectedHash, givenHash)) return { ok: false, reason: 'body_mismatch' };

  const nowS = options.now.getTime() / 1000;
  if (nowS - iat > (options.maxAgeSeconds ?? VONAGE_SIGNATURE_MAX_AGE_SECONDS)) {
    return { ok: false, reason: 'stale' };
  }
  if (iat - nowS > (options.futureSkewSeconds ?? 60)) return { ok: false, reason: 'from_the_future' };

  return {
    ok: true,
    claims: {
      iat,
      // A token without a jti is still the vendor's; the body hash then names the delivery.
      jti: typeof jti === 'string' && jti.length > 0 && jti.length <= 200 ? jti : `sha256:${payloadHash}`,
      ...(typeof claims.iss === 'string' ? { iss: claims.iss } : {}),
      payload_hash: payloadHash.toLowerCase(),
      ...(typeof claims.api_key === 'string' ? { api_key: claims.api_key } : {}),
      ...(typeof claims.application_id === 'string' ? { application_id: claims.application_id } : {}),
    },
  };
};

export type SignVonageWebhookOptions = Readonly<{
  now: Date;
  apiKey: string;
  applicationId?: string;
  /** Default: a fresh UUID. */
  jti?: string;
}>;

/**
 * Signs a webhook body the way the vendor does: what the simulator sends, and what tests use to
 * build deliveries. Returns the whole `Authorization` header value.
 */
export const signVonageWebhook = (
  body: Buffer | string,
  secret: string,
  options: SignVonageWebhookOptions,
): string => {
  const header = b64url(Buffer.from(JSON.stringify({ alg: 'HS256', typ: 'JWT' })));
  const claims = {
    iat: Math.floor(options.now.getTime() / 1000),
    jti: options.jti ?? randomUUID(),
    iss: 'Vonage',
    payload_hash: sha256Hex(body),
    api_key: options.apiKey,
    ...(options.applicationId === undefined ? {} : { application_id: options.applicationId }),
  };
  const payload = b64url(Buffer.from(JSON.stringify(claims)));
  const signature = b64url(createHmac('sha256', secret).update(`${header}.${payload}`).digest());
  return `Bearer ${header}.${payload}.${signature}`;
};

/**
 * The `verify` a `WebhookVerifier` (src/http/webhookRoutes.ts) needs for the three
 * `/webhooks/vonage/*` routes: reads `Authorization`, judges `iat` on the clock, never throws.
 * The answer is a `WebhookVerification` (`{ ok: true }` or `{ ok: false, reason }`), with the
 * claims when it is good (`claims.payload_hash` names the delivery, retries included).
 *
 * @example
 * const verify = vonageWebhookVerify({ secrets: [config.signatureSecret], clock });
 * const verifier: WebhookVerifier = { source: 'vonage', path: '/webhooks/vonage/voice', signatureHeader: 'authorization', verify, parse };
 */
export const vonageWebhookVerify =
  (options: Readonly<{ secrets: readonly string[]; clock: { now(): Date }; maxAgeSeconds?: number }>) =>
  (rawBody: Buffer, headers: Readonly<Record<string, string | string[] | undefined>>): VonageSignatureCheck =>
    verifyVonageSignature(rawBody, headers.authorization, options.secrets, {
      now: options.clock.now(),
      ...(options.maxAgeSeconds === undefined ? {} : { maxAgeSeconds: options.maxAgeSeconds }),
    });

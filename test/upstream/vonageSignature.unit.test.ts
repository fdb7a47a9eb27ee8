import { createHash } from 'node:crypto';
import { SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { manualClock } from '../../src/core/clock.ts';
import type { WebhookVerifier } from '../../src/http/webhookRoutes.ts';
import {
  signVonageWebhook,
  verifyVonageSignature,
  vonageWebhookVerify,
} from '../../src/upstream/vonageSignature.ts';

/**
 * The signed-webhook check: tokens are made here with `jose` (an independent HS256 signer), so
 * the verifier is tested against the JWT standard and not only against our own signer.
 */
const SECRET = 'sig-secret-0123456789abcdef';
const NOW = new Date('2026-11-23T10:00:00.000Z');
const nowS = NOW.getTime() / 1000;
// Non-ASCII on purpose: the hash covers the raw UTF-8 bytes.
const body = Buffer.from('{"status":"delivered","to":"447700900123","text":"Café ☕ 4"}', 'utf8');
const sha = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');

const token = async (
  claims: Record<string, unknown>,
  secret = SECRET,
  header: Record<string, unknown> = { alg: 'HS256', typ: 'JWT' },
) => new SignJWT(claims).setProtectedHeader(header as { alg: string }).sign(new TextEncoder().encode(secret));

const good = () =>
  token({ iat: nowS - 10, jti: 'j-1', iss: 'Vonage', payload_hash: sha(body), api_key: 'k1' });
const check = (auth: string | undefined, raw = body, secrets: string | string[] = SECRET) =>
  verifyVonageSignature(raw, auth, secrets, { now: NOW });

describe('verifyVonageSignature', () => {
  it('accepts an HS256 JWT over the body, fresh, and hands back its claims', async () => {
    expect(check(`Bearer ${await good()}`)).toEqual({
      ok: true,
      claims: { iat: nowS - 10, jti: 'j-1', iss: 'Vonage', payload_hash: sha(body), api_key: 'k1' },
    });
  });

  it('refuses a wrong secret, and accepts the previous one during a rotation', async () => {
    expect(check(`Bearer ${await good()}`, body, 'another-secret-value')).toEqual({
      ok: false,
      reason: 'bad_signature',
    });
    expect(check(`Bearer ${await good()}`, body, ['new-secret-value-1', SECRET]).ok).toBe(true);
  });

  it('refuses a tampered body (payload_hash no longer matches)', async () => {
    const tampered = Buffer.from(body.toString('utf8').replace('delivered', 'rejected'), 'utf8');
    expect(check(`Bearer ${await good()}`, tampered)).toEqual({ ok: false, reason: 'body_mismatch' });
  });

  it('refuses a stale iat (over five minutes) and one from the future, on the clock it is given', async () => {
    const stale = await token({ iat: nowS - 301, jti: 'j', payload_hash: sha(body) });
    expect(check(`Bearer ${stale}`)).toEqual({ ok: false, reason: 'stale' });
    const edge = await token({ iat: nowS - 300, jti: 'j', payload_hash: sha(body) });
    expect(check(`Bearer ${edge}`).ok).toBe(true);
    const future = await token({ iat: nowS + 120, jti: 'j', payload_hash: sha(body) });
    expect(check(`Bearer ${future}`)).toEqual({ ok: false, reason: 'from_the_future' });
  });

  it('refuses a missing or malformed header', async () => {
    expect(check(undefined)).toEqual({ ok: false, reason: 'missing_signature' });
    expect(check('')).toEqual({ ok: false, reason: 'missing_signature' });
    expect(check(await good())).toEqual({ ok: false, reason: 'missing_signature' });
    expect(check('Bearer a.b')).toEqual({ ok: false, reason: 'malformed_token' });
    expect(check('Bearer !!.??.##')).toEqual({ ok: false, reason: 'malformed_token' });
    expect(check(`Bearer ${'x'.repeat(9000)}`)).toEqual({ ok: false, reason: 'missing_signature' });
  });

  it('refuses alg none and any algorithm but HS256, and a token without the claims it needs', async () => {
    const [, payload] = (await good()).split('.');
    const none = `${Buffer.from('{"alg":"none","typ":"JWT"}').toString('base64url')}.${payload}.`;
    expect(check(`Bearer ${none}`)).toEqual({ ok: false, reason: 'wrong_algorithm' });
    const hs512 = await token({ iat: nowS, payload_hash: sha(body) }, SECRET, { alg: 'HS512' });
    expect(check(`Bearer ${hs512}`)).toEqual({ ok: false, reason: 'wrong_algorithm' });
    const noHash = await token({ iat: nowS, jti: 'j' });
    expect(check(`Bearer ${noHash}`)).toEqual({ ok: false, reason: 'malformed_token' });
    const noIat = await token({ jti: 'j', payload_hash: sha(body) });
    expect(check(`Bearer ${noIat}`)).toEqual({ ok: false, reason: 'malformed_token' });
  });

  it('signVonageWebhook makes what the vendor sends; the route helper reads the Authorization header', () => {
    const clock = manualClock(NOW);
    const auth = signVonageWebhook(body, SECRET, {
      now: NOW,
      apiKey: 'k1',
      applicationId: 'app-1',
      jti: 'd-1',
    });
    // What the webhook route takes as its `verify` (checked by the type checker).
    const verify: WebhookVerifier['verify'] = vonageWebhookVerify({ secrets: [SECRET], clock });
    expect(verify(body, { authorization: auth })).toMatchObject({
      ok: true,
      claims: { jti: 'd-1', api_key: 'k1', application_id: 'app-1', iss: 'Vonage' },
    });
    clock.advance(301_000);
    expect(verify(body, { authorization: auth })).toEqual({ ok: false, reason: 'stale' });
    expect(verify(body, {})).toEqual({ ok: false, reason: 'missing_signature' });
  });
});

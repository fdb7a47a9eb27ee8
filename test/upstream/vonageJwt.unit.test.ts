import { generateKeyPairSync } from 'node:crypto';
import { decodeProtectedHeader, jwtVerify } from 'jose';
import { describe, expect, it } from 'vitest';
import { manualClock } from '../../src/core/clock.ts';
import { createApplicationJwtSigner } from '../../src/upstream/vonageJwt.ts';

/** The application JWT: RS256 over the claims the vendor wants, checked with jose and the public key. */
const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
const clock = manualClock('2026-11-23T10:00:00.000Z');
const iat = clock.now().getTime() / 1000;

describe('createApplicationJwtSigner', () => {
  it('signs RS256 with application_id, iat, a fresh jti and a five-minute exp', async () => {
    const sign = createApplicationJwtSigner({
      applicationId: 'app-1',
      privateKey: pem,
      now: () => clock.now(),
    });
    const [a, b] = [await sign(), await sign()];
    expect(decodeProtectedHeader(a!)).toEqual({ alg: 'RS256', typ: 'JWT' });
    const { payload } = await jwtVerify(a!, publicKey, { algorithms: ['RS256'], currentDate: clock.now() });
    expect(payload).toEqual({ application_id: 'app-1', iat, exp: iat + 300, jti: expect.any(String) });
    const other = await jwtVerify(b!, publicKey, { currentDate: clock.now() });
    expect(other.payload.jti).not.toBe(payload.jti);
  });

  it('takes a PKCS#1 key, and one written on one line with \\n escapes', async () => {
    const pkcs1 = privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
    const oneLine = pkcs1.replace(/\n/g, '\\n');
    const sign = createApplicationJwtSigner({
      applicationId: 'a',
      privateKey: oneLine,
      now: () => clock.now(),
      ttlSeconds: 60,
    });
    const { payload } = await jwtVerify(await sign(), publicKey, { currentDate: clock.now() });
    expect(payload.exp).toBe(iat + 60);
  });

  it('refuses a key it cannot use with SB_CONFIG, never quoting it', () => {
    const garbage = '-----BEGIN PRIVATE KEY-----\nnot-a-key-c2VjcmV0\n-----END PRIVATE KEY-----';
    let caught: unknown;
    try {
      createApplicationJwtSigner({ applicationId: 'a', privateKey: garbage, now: () => clock.now() });
    } catch (e) {
      caught = e;
    }
    expect(caught).toMatchObject({ code: 'SB_CONFIG' });
    expect(
      JSON.stringify({ m: (caught as Error).message, c: String((caught as Error).cause) }),
    ).not.toContain('c2VjcmV0');
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({
      type: 'pkcs8',
      format: 'pem',
    });
    expect(() =>
      createApplicationJwtSigner({ applicationId: 'a', privateKey: ec.toString(), now: () => clock.now() }),
    ).toThrow(/RSA key/);
  });
});

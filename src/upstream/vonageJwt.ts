import { createPrivateKey, type KeyObject, randomUUID } from 'node:crypto';
import { SignJWT } from 'jose';
import { ChatOpsError } from '../core/errors.ts';

/**
 * The application JWT the communications service wants on Voice (and accepts on Messages and
 * Verify v2): RS256, signed with the application's private key (`VONAGE_PRIVATE_KEY`), claims
 * `application_id`, `iat`, a fresh `jti` per request and a short `exp`
 * (https://developer.vonage.com/en/getting-started/concepts/authentication; the vendor's own SDK
 * signs the same claims, `jwt/lib/tokenGenerate.ts` in github.com/Vonage/vonage-node-sdk). Signed
 * with `jose`. A token lives `ttlSeconds` (default 300; the vendor accepts up to 24 h, and a token
 * with no `exp` for 15 min): long enough for a queued request, short enough to be worthless if
 * it ever leaked.
 *
 * @example
 * const sign = createApplicationJwtSigner({ applicationId, privateKey, now: () => clock.now() });
 * headers.authorization = `Bearer ${await sign()}`;
 */
export type ApplicationJwtSignerOptions = Readonly<{
  applicationId: string;
  /** PEM (PKCS#8 or PKCS#1); one line with `\n` escapes works too. */
  privateKey: string;
  now: () => Date;
  ttlSeconds?: number;
}>;

export const createApplicationJwtSigner = (options: ApplicationJwtSignerOptions): (() => Promise<string>) => {
  let key: KeyObject;
  try {
    key = createPrivateKey(options.privateKey.replace(/\\n/g, '\n'));
  } catch (err) {
    // Never the key itself in the message.
    throw new ChatOpsError('SB_CONFIG', 'VONAGE_PRIVATE_KEY is not a readable PEM private key', {
      cause: err instanceof Error ? new Error(err.name) : undefined,
    });
  }
  if (key.asymmetricKeyType !== 'rsa') {
    throw new ChatOpsError(
      'SB_CONFIG',
      'VONAGE_PRIVATE_KEY must be an RSA key (the application JWT is RS256)',
    );
  }
  const ttl = options.ttlSeconds ?? 300;
  return () => {
    const iat = Math.floor(options.now().getTime() / 1000);
    return new SignJWT({ application_id: options.applicationId })
      .setProtectedHeader({ alg: 'RS256', typ: 'JWT' })
      .setIssuedAt(iat)
      .setJti(randomUUID())
      .setExpirationTime(iat + ttl)
      .sign(key);
  };
};

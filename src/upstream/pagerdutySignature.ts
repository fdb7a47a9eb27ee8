import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Verifies a PagerDuty V3 webhook: `X-PagerDuty-Signature: v1=<hex HMAC-SHA256 of the raw body>`,
 * with several comma-separated `v1=` values while a secret is being rotated. True when any
 * signature matches any of `secrets` (constant-time compare). Pass the raw body bytes exactly as
 * received: re-serialised JSON does not verify.
 *
 * @example
 * if (!verifyPagerDutySignature(rawBody, req.headers['x-pagerduty-signature'], [current, previous])) {
 *   return reply(401);
 * }
 */
export const verifyPagerDutySignature = (
  rawBody: Buffer,
  header: string | undefined,
  secrets: readonly string[],
): boolean => {
  if (header === undefined || header.length === 0 || header.length > 4096) return false;
  const candidates: Buffer[] = [];
  for (const part of header.split(',')) {
    const entry = part.trim();
    if (!entry.startsWith('v1=')) continue;
    const hex = entry.slice(3);
    if (/^[0-9a-fA-F]{64}$/.test(hex)) candidates.push(Buffer.from(hex, 'hex'));
  }
  if (candidates.length === 0) return false;
  let ok = false;
  for (const secret of secrets) {
    if (secret.length === 0) continue;
    const expected = createHmac('sha256', secret).update(rawBody).digest();
    // Check every pair without an early exit, so timing does not reveal which one matched.
    for (const candidate of candidates) {
      if (timingSafeEqual(expected, candidate)) ok = true;
    }
  }
  return ok;
};

import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { verifyPagerDutySignature } from '../../src/upstream/pagerdutySignature.ts';

const sign = (body: Buffer | string, secret: string) =>
  `v1=${createHmac('sha256', secret).update(body).digest('hex')}`;
// Non-ASCII on purpose: the signature covers the raw UTF-8 bytes.
const body = Buffer.from(
  '{"event":{"id":"e1","event_type":"incident.triggered","data":{"title":"Café ☕ down"}}}',
  'utf8',
);

describe('verifyPagerDutySignature', () => {
  it('accepts the HMAC-SHA256 hex of the raw body', () => {
    expect(verifyPagerDutySignature(body, sign(body, 'secret-1'), ['secret-1'])).toBe(true);
  });

  it('rejects a wrong secret, a changed body, and a missing or malformed header', () => {
    expect(verifyPagerDutySignature(body, sign(body, 'secret-1'), ['secret-2'])).toBe(false);
    const tampered = Buffer.from(body.toString('utf8').replace('down', 'up'), 'utf8');
    expect(verifyPagerDutySignature(tampered, sign(body, 'secret-1'), ['secret-1'])).toBe(false);
    expect(verifyPagerDutySignature(body, undefined, ['secret-1'])).toBe(false);
    expect(verifyPagerDutySignature(body, '', ['secret-1'])).toBe(false);
    expect(verifyPagerDutySignature(body, 'v1=zz', ['secret-1'])).toBe(false);
    expect(verifyPagerDutySignature(body, sign(body, 'secret-1').replace('v1=', 'v0='), ['secret-1'])).toBe(
      false,
    );
    expect(verifyPagerDutySignature(body, sign(body, 'secret-1'), [])).toBe(false);
    expect(verifyPagerDutySignature(body, sign(body, ''), [''])).toBe(false);
  });

  it('does not verify re-serialised JSON (whitespace changes the bytes)', () => {
    const reserialised = Buffer.from(JSON.stringify(JSON.parse(body.toString('utf8')), null, 1));
    expect(verifyPagerDutySignature(reserialised, sign(body, 's'), ['s'])).toBe(false);
  });

  it('accepts any of several comma-separated v1 values during a rotation', () => {
    const header = `${sign(body, 'new-secret')}, ${sign(body, 'old-secret')}`;
    expect(verifyPagerDutySignature(body, header, ['old-secret'])).toBe(true);
    expect(verifyPagerDutySignature(body, header, ['new-secret'])).toBe(true);
    expect(verifyPagerDutySignature(body, header, ['other', 'old-secret'])).toBe(true);
    expect(verifyPagerDutySignature(body, header, ['other'])).toBe(false);
  });

  it('accepts upper-case hex and ignores unknown signature versions beside a valid one', () => {
    const upper = `v1=${sign(body, 's').slice(3).toUpperCase()}`;
    expect(verifyPagerDutySignature(body, upper, ['s'])).toBe(true);
    expect(verifyPagerDutySignature(body, `v2=abc,${sign(body, 's')}`, ['s'])).toBe(true);
  });
});

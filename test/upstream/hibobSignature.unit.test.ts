import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { WebhookVerifier } from '../../src/http/webhookRoutes.ts';
import {
  hibobDeliveryId,
  hibobWebhookVerify,
  signHiBobWebhook,
  verifyHiBobSignature,
} from '../../src/upstream/hibobSignature.ts';

const secret = 'whsec-hibob-test';
const body = Buffer.from(
  JSON.stringify({
    companyId: 700001,
    type: 'timeoff.request.requested',
    triggeredBy: '3332883804594373011',
    triggeredAt: '2026-05-04T08:15:02.120431',
    version: 'v2',
    data: { timeoffRequestId: 55500011, employeeId: '3332883804594373011' },
  }),
);

describe('Bob-Signature (Base64 HMAC-SHA512 of the raw body)', () => {
  it('accepts the vendor algorithm computed independently, and names the delivery by its content', () => {
    const header = createHmac('sha512', secret).update(body).digest('base64');
    expect(signHiBobWebhook(body, secret)).toBe(header);
    const checked = verifyHiBobSignature(body, header, [secret]);
    expect(checked).toEqual({ ok: true, deliveryId: hibobDeliveryId(body) });
    // A redelivery is the same bytes: the same id. Another body: another id.
    expect(hibobDeliveryId(Buffer.from(body))).toBe(hibobDeliveryId(body));
    expect(hibobDeliveryId(Buffer.from(`${body.toString()} `))).not.toBe(hibobDeliveryId(body));
  });

  it('refuses a signature made with the wrong secret', () => {
    expect(verifyHiBobSignature(body, signHiBobWebhook(body, 'another-secret'), [secret])).toEqual({
      ok: false,
      reason: 'bad_signature',
    });
  });

  it('refuses a tampered body', () => {
    const header = signHiBobWebhook(body, secret);
    const tampered = Buffer.from(body.toString().replace('55500011', '55500012'));
    expect(verifyHiBobSignature(tampered, header, [secret])).toEqual({ ok: false, reason: 'bad_signature' });
  });

  it('refuses a missing or malformed header without throwing', () => {
    expect(verifyHiBobSignature(body, undefined, [secret])).toEqual({
      ok: false,
      reason: 'missing_signature',
    });
    expect(verifyHiBobSignature(body, '  ', [secret])).toEqual({ ok: false, reason: 'missing_signature' });
    expect(verifyHiBobSignature(body, 'not base64!', [secret])).toEqual({
      ok: false,
      reason: 'malformed_signature',
    });
    // Base64 of the wrong length (an HMAC-SHA256) is not the vendor's signature.
    const short = createHmac('sha256', secret).update(body).digest('base64');
    expect(verifyHiBobSignature(body, short, [secret])).toEqual({ ok: false, reason: 'malformed_signature' });
    expect(verifyHiBobSignature(body, 'A'.repeat(5000), [secret])).toEqual({
      ok: false,
      reason: 'malformed_signature',
    });
  });

  it('accepts the previous secret while rotating, and never an empty secret', () => {
    const header = signHiBobWebhook(body, 'old-secret');
    expect(verifyHiBobSignature(body, header, [secret, 'old-secret']).ok).toBe(true);
    expect(verifyHiBobSignature(body, signHiBobWebhook(body, ''), ['']).ok).toBe(false);
  });

  it('reads bob-signature from the headers as a WebhookVerifier does', () => {
    const verify: WebhookVerifier['verify'] = hibobWebhookVerify({ secrets: [secret] });
    expect(verify(body, { 'bob-signature': signHiBobWebhook(body, secret) }).ok).toBe(true);
    expect(verify(body, {})).toEqual({ ok: false, reason: 'missing_signature' });
  });
});

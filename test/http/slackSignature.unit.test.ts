import { createHmac } from 'node:crypto';
import { verifySlackRequest } from '@slack/bolt';
import { describe, expect, it } from 'vitest';
import { type RefusalReason, slackSignatureCheck } from '../../src/http/slackReceiver.ts';

const SECRET = 'sig-check-secret-8f2a61';
const NOW_MS = 1_790_000_000_123;
const NOW = Math.floor(NOW_MS / 1000);
const BODY = 'token=x&team_id=T1&command=%2Fincident&text=list&trigger_id=1.2.abc';

const sign = (secret: string, ts: string | number, body: string): string =>
  `v0=${createHmac('sha256', secret).update(`v0:${ts}:${body}`).digest('hex')}`;

const headers = (signature: string | undefined, ts: string | undefined) => ({
  ...(signature === undefined ? {} : { 'x-slack-signature': signature }),
  ...(ts === undefined ? {} : { 'x-slack-request-timestamp': ts }),
});

/** Bolt's own verdict on a request whose headers passed our format and window checks. */
const bolt = (secret: string, signature: string, ts: string, body: string): 'ok' | 'refused' => {
  try {
    verifySlackRequest({
      signingSecret: secret,
      body,
      headers: { 'x-slack-signature': signature, 'x-slack-request-timestamp': Number(ts) },
      nowMilliseconds: NOW_MS,
    });
    return 'ok';
  } catch {
    return 'refused';
  }
};

describe('slackSignatureCheck', () => {
  const check = slackSignatureCheck(SECRET);
  const good = sign(SECRET, NOW, BODY);

  it('accepts what Slack signs, and refuses each kind of tampering with the reason', () => {
    const cases: [string, string | undefined, string | undefined, string, RefusalReason | undefined][] = [
      ['valid', good, String(NOW), BODY, undefined],
      ['other secret', sign('another-secret-0000', NOW, BODY), String(NOW), BODY, 'bad_signature'],
      ['body changed', good, String(NOW), `${BODY}x`, 'bad_signature'],
      ['signed for another timestamp', good, String(NOW + 1), BODY, 'bad_signature'],
      ['no signature header', undefined, String(NOW), BODY, 'missing_headers'],
      ['no timestamp header', good, undefined, BODY, 'missing_headers'],
      ['timestamp not a number', good, '17e8', BODY, 'missing_headers'],
      ['301 s old', sign(SECRET, NOW - 301, BODY), String(NOW - 301), BODY, 'stale_timestamp'],
      ['301 s ahead', sign(SECRET, NOW + 301, BODY), String(NOW + 301), BODY, 'future_timestamp'],
      ['300 s old', sign(SECRET, NOW - 300, BODY), String(NOW - 300), BODY, undefined],
      ['300 s ahead', sign(SECRET, NOW + 300, BODY), String(NOW + 300), BODY, undefined],
    ];
    for (const [name, signature, ts, body, want] of cases) {
      expect(check(headers(signature, ts), body, NOW_MS), name).toBe(want);
    }
  });

  it('gives the same verdict as Bolt’s verifySlackRequest on odd signatures', () => {
    const hex = good.slice(3);
    const odd = [
      good,
      `v1=${hex}`,
      `V0=${hex}`,
      'v0=',
      'v0',
      hex,
      `v0=${hex.toUpperCase()}`,
      `v0=${hex.slice(0, -1)}`,
      `v0=${hex}0`,
      `v0=${hex}=trailing`,
      `v0=${hex.slice(0, -1)}${hex.endsWith('0') ? '1' : '0'}`,
      `v0=${'é'.repeat(64)}`,
    ];
    for (const signature of odd) {
      const ours = check(headers(signature, String(NOW)), BODY, NOW_MS) === undefined ? 'ok' : 'refused';
      expect(ours, signature).toBe(bolt(SECRET, signature, String(NOW), BODY));
    }
    // Bolt signs the timestamp as the number it parses to: leading zeros are not part of it.
    const padded = `0${NOW}`;
    const signedAsNumber = sign(SECRET, NOW, BODY);
    expect(check(headers(signedAsNumber, padded), BODY, NOW_MS)).toBe(
      bolt(SECRET, signedAsNumber, padded, BODY) === 'ok' ? undefined : 'bad_signature',
    );
  });

  it('refuses everything when the signing secret is empty', () => {
    expect(slackSignatureCheck('')(headers(sign('', NOW, BODY), String(NOW)), BODY, NOW_MS)).toBe(
      'bad_signature',
    );
  });
});

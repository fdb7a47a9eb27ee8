import { describe, expect, it } from 'vitest';
import { createScrubber, knowSecrets, REDACTED, scrubText } from '../../src/core/scrub.ts';
import { errorMessageOf } from '../../src/processors/retryPolicy.ts';
import { upstreamHttpError } from '../../src/upstream/http.ts';

describe('the one scrubber (src/core/scrub.ts)', () => {
  it.each([
    ['Authorization: Token token=u+abc123xyz', 'Authorization: [Redacted]'],
    ['{"authorization":"Bearer abcdefghijkl"}', '{"authorization":"[Redacted]"}'],
    ['header was Token token=y_xVz8uE2FqL7', 'header was [Redacted]'],
    ['Bearer abcdefghij.klmnop', REDACTED],
    ['Basic YW5hOmh1bnRlcjIy', REDACTED],
    ['xoxb-1111-2222-abcdefabcdef', REDACTED],
    ['xapp-1-A111-222-abcdef', REDACTED],
    ['eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjMifQ.c2lnbmF0dXJl', REDACTED],
    ['https://hooks.slack.com/actions/T1/123/abcdef', REDACTED],
    ['fetch https://ana:hunter22@example.org/x', `fetch https://${REDACTED}@example.org/x`],
    ['call +4915112345678 now', `call ${REDACTED} now`],
  ])('%s', (input, expected) => {
    expect(createScrubber()(input)).toBe(expected);
  });

  it('removes configured secrets, raw and JSON-escaped, and leaves ordinary text alone', () => {
    const scrub = createScrubber(['s3cr"et-value', 'short']);
    expect(scrub('x s3cr"et-value y')).toBe(`x ${REDACTED} y`);
    expect(scrub(JSON.stringify({ v: 's3cr"et-value' }))).toBe(`{"v":"${REDACTED}"}`);
    expect(scrub('a short word; Authorization failed')).toBe('a short word; Authorization failed');
  });

  it('scrubText knows the secrets made known at start, and errorMessageOf uses it before cutting', () => {
    knowSecrets(['plain-secret-4711']);
    expect(scrubText('key plain-secret-4711 rejected')).toBe(`key ${REDACTED} rejected`);
    const cut = errorMessageOf(new Error(`${'x'.repeat(20)} plain-secret-4711`), 30);
    expect(cut).not.toContain('plain-sec');
  });

  it('an upstream error keeps what the vendor said, without the credentials it echoed', () => {
    const e = upstreamHttpError({
      vendor: 'pagerduty',
      operation: 'updateIncident',
      method: 'PUT',
      path: '/incidents/P1',
      status: 400,
      headers: {},
      vendorError: {
        code: 2001,
        message: 'Invalid header Authorization: Token token=abcdef123456',
        errors: ['Bearer abcdefghijkl is not allowed'],
      },
    });
    expect(e.message).toBe(
      'pagerduty updateIncident failed: HTTP 400 Invalid header Authorization: [Redacted] (2001): [Redacted] is not allowed',
    );
    expect(JSON.stringify(e.details)).not.toContain('abcdef123456');
  });
});

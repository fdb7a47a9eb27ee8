import { describe, expect, it } from 'vitest';
import {
  code,
  decodeSlackText,
  escapeMrkdwn,
  mrkdwnText,
  placeholder,
  truncate,
} from '../../src/slack/text.ts';

const FAMILY = '👨‍👩‍👧‍👦';
const LONE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

describe('decodeSlackText: what Slack sends → the person’s words', () => {
  it('turns the three entities back into characters, once', () => {
    expect(decodeSlackText('checkout &amp; payments')).toBe('checkout & payments');
    expect(decodeSlackText('a &lt;script&gt; b')).toBe('a <script> b');
    // A typed `&lt;` arrives as `&amp;lt;`: it stays `&lt;`, never becomes `<`.
    expect(decodeSlackText('&amp;lt;')).toBe('&lt;');
    // Other entities are not Slack's: left as typed.
    expect(decodeSlackText('&quot;x&quot; &#39;')).toBe('&quot;x&quot; &#39;');
  });

  it('keeps mentions as the user id and channels as the channel id', () => {
    expect(decodeSlackText('ask <@U123|ana> and <@W0BEN>')).toBe('ask <@U123> and <@W0BEN>');
    expect(decodeSlackText('in <#C0OPS|ops> or <#G0PRIV>')).toBe('in <#C0OPS> or <#G0PRIV>');
  });

  it('gives links the words typed, with the link when its label is its own', () => {
    expect(decodeSlackText('see <https://status.example.com>')).toBe('see https://status.example.com');
    expect(decodeSlackText('see <http://example.com|example.com>')).toBe('see example.com');
    expect(decodeSlackText('<https://x.io/a?b=1&amp;c=2|https://x.io/a?b=1&amp;c=2>')).toBe(
      'https://x.io/a?b=1&c=2',
    );
    expect(decodeSlackText('<mailto:ana@example.org|ana@example.org>')).toBe('ana@example.org');
    expect(decodeSlackText('<https://x.io/runbook|the runbook &amp; more>')).toBe(
      'the runbook & more (https://x.io/runbook)',
    );
  });

  it('never keeps a broadcast: special mentions become their words', () => {
    expect(decodeSlackText('<!channel> <!here> <!everyone>')).toBe('@channel @here @everyone');
    expect(decodeSlackText('<!subteam^S0SRE|@sre>')).toBe('@sre');
    expect(decodeSlackText('<!date^1700000000^{time}|13:33>')).toBe('13:33');
  });

  it('leaves what is not a Slack token as it came', () => {
    expect(decodeSlackText('a < b > c')).toBe('a < b > c');
    expect(decodeSlackText('<script>')).toBe('<script>');
    expect(decodeSlackText('')).toBe('');
  });
});

describe('escapeMrkdwn', () => {
  it('escapes exactly &, < and >, nothing else', () => {
    expect(escapeMrkdwn('<script>&</script> <!channel> <@U123> *bold* _it_ ~s~ `c` "q" \'a\'')).toBe(
      '&lt;script&gt;&amp;&lt;/script&gt; &lt;!channel&gt; &lt;@U123&gt; *bold* _it_ ~s~ `c` "q" \'a\'',
    );
  });

  it('is undone by decodeSlackText', () => {
    for (const s of ['<script>&', '&amp;', 'a<b>c & d', '<!channel>']) {
      expect(decodeSlackText(escapeMrkdwn(s))).toBe(s);
    }
  });
});

describe('truncate: by grapheme, within the limit', () => {
  it('leaves short text alone', () => {
    expect(truncate('short', 10)).toBe('short');
    expect(truncate('exactly10!', 10)).toBe('exactly10!');
  });

  it('cuts with an ellipsis, the result within max UTF-16 units', () => {
    expect(truncate('abcdefghij', 5)).toBe('abcd…');
    expect(truncate('abcdefghij', 5)).toHaveLength(5);
  });

  it('never cuts inside an emoji, a family or a letter with its combining marks', () => {
    const families = FAMILY.repeat(60);
    for (const max of [1, 2, 10, 11, 12, 13, 150, 151, 255, 3000]) {
      const cut = truncate(families, max);
      expect(cut.length).toBeLessThanOrEqual(max);
      expect(cut).not.toMatch(LONE);
      expect(cut.replace(/…$/, '').split(FAMILY).join('')).toBe('');
    }
    const accents = 'e\u0301\u0302'.repeat(100); // e + two combining marks, 3 units each
    const cut = truncate(accents, 20);
    expect(cut).toBe(`${'e\u0301\u0302'.repeat(6)}…`);
    const pairs = '😀'.repeat(10);
    expect(truncate(pairs, 4)).toBe('😀…');
    expect(truncate('a😀b', 3)).toBe('a…');
  });

  it('replaces a lone surrogate already in the text', () => {
    expect(truncate('a\uD83Db', 10)).toBe('a\uFFFDb');
    expect(truncate('\uDE00', 10)).toBe('\uFFFD');
  });
});

describe('placeholders and code spans', () => {
  it('writes placeholders Slack shows as typed, not as links', () => {
    expect(placeholder('id')).toBe('&lt;id&gt;');
    expect(code('/verify <your phone number>')).toBe('`/verify &lt;your phone number&gt;`');
  });

  it('mrkdwnText cuts first, so an entity is never cut in half', () => {
    expect(mrkdwnText('&&&&&&', 4)).toBe('&amp;&amp;&amp;…');
  });
});

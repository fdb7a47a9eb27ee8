/**
 * Slack's text, both ways, in one place (issue 19 item 2).
 *
 * - In: Slack sends what people type in slash commands and messages with `&`, `<` and `>` as
 *   `&amp;`, `&lt;`, `&gt;`, and (`should_escape: true`, or always in messages) mentions, channels
 *   and links as `<@U123|ana>`, `<#C123|ops>`, `<https://x|x>`. `decodeSlackText` turns that back
 *   into the person's words once, at the edge, before anything is stored: a mention stays the user
 *   id `<@U123>`, a channel `<#C123>`, a link its words.
 * - Out: every piece of user or vendor text that enters mrkdwn goes through `escapeMrkdwn` (exactly
 *   `&`, `<`, `>`, as Slack's "Escaping text" says: "You shouldn't HTML entity-encode the entire
 *   text"), once, where the block is built; placeholders are written with `placeholder`/`code`.
 * - Lengths: `truncate` cuts by grapheme (`Intl.Segmenter`), never inside an emoji or between the
 *   halves of a surrogate pair, and the result fits `max` UTF-16 units (what Slack's limits count).
 */

/** `&`, `<`, `>` → `&amp;`, `&lt;`, `&gt;`; nothing else (Slack's "Escaping text"). */
export const escapeMrkdwn = (text: string): string =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

const ENTITIES: Readonly<Record<string, string>> = { amp: '&', lt: '<', gt: '>' };
const entities = (text: string): string => text.replace(/&(amp|lt|gt);/g, (_, e: string) => ENTITIES[e]!);

const SCHEME = /^(?:https?:\/\/|mailto:|tel:)/i;

/** One `<…>` token as Slack sends it → the words it stands for. */
const decodeToken = (inner: string): string => {
  const bar = inner.indexOf('|');
  const target = bar < 0 ? inner : inner.slice(0, bar);
  const label = bar < 0 ? null : entities(inner.slice(bar + 1));
  const user = /^@([UW][A-Z0-9]+)$/.exec(target);
  if (user) return `<@${user[1]}>`;
  const channel = /^#(C[A-Z0-9]+|G[A-Z0-9]+)$/.exec(target);
  if (channel) return `<#${channel[1]}>`;
  if (target.startsWith('!')) {
    // `<!here>`, `<!channel>`, `<!subteam^S123|@team>`, `<!date^…|fallback>`: their words, never a ping.
    if (label !== null) return label;
    const word = target.slice(1).split('^')[0] ?? '';
    return `@${word}`;
  }
  if (SCHEME.test(target) || /^[a-z][a-z0-9+.-]*:/i.test(target)) {
    const url = entities(target);
    // Slack labels a link it made from typed text with that text (`<http://a.io|a.io>`): the words
    // typed are the label. A label of its own keeps its link beside it.
    if (label === null || label === url || label === url.replace(SCHEME, '')) return label ?? url;
    return `${label} (${url})`;
  }
  // Not a Slack token (Slack sends a typed `<` as `&lt;`): kept as it came.
  return `<${entities(inner)}>`;
};

/**
 * Slash-command or message text as Slack sends it → the person's words: entities back to `&`, `<`,
 * `>`; `<@U123|ana>` and `<@U123>` → `<@U123>`; `<#C123|ops>` → `<#C123>`; `<https://x|label>` →
 * the label (the link beside it when the label is not the link's own text); `<!here>` → `@here`.
 * One pass, so `&amp;lt;` (a typed `&lt;`) stays `&lt;`.
 *
 * @example
 * decodeSlackText('checkout &amp; payments'); // 'checkout & payments'
 * decodeSlackText('ask <@U123|ana> in <#C9|ops>'); // 'ask <@U123> in <#C9>'
 */
export const decodeSlackText = (text: string): string =>
  text.replace(/<([^<>]*)>|&(amp|lt|gt);/g, (_, token: string | undefined, entity: string | undefined) =>
    token !== undefined ? decodeToken(token) : ENTITIES[entity!]!,
  );

const segmenter = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

/** A lone (unpaired) UTF-16 surrogate: Slack refuses it or shows �. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * Cuts `text` to at most `max` UTF-16 units (how Slack's limits count), whole graphemes only,
 * ending with `…` when cut: never half an emoji, a flag, a family or a letter with its accents.
 * A lone surrogate already in the text is replaced by U+FFFD.
 *
 * @example
 * truncate('👨‍👩‍👧‍👦👨‍👩‍👧‍👦', 12); // '👨‍👩‍👧‍👦…' (11 units + the ellipsis)
 */
export const truncate = (text: string, max: number): string => {
  const clean = text.replace(LONE_SURROGATE, '\uFFFD');
  if (clean.length <= max) return clean;
  const room = Math.max(0, max - 1);
  let length = 0;
  let out = '';
  for (const { segment } of segmenter.segment(clean)) {
    if (length + segment.length > room) break;
    out += segment;
    length += segment.length;
  }
  return `${out}…`;
};

/** `escapeMrkdwn(truncate(text, max))`: user text cut to `max` before it is escaped (entities never cut). */
export const mrkdwnText = (text: string, max: number): string => escapeMrkdwn(truncate(text, max));

/**
 * A placeholder in mrkdwn: `&lt;id&gt;`, so Slack shows `<id>` instead of reading it as a link.
 * In plain_text (headers, buttons, inputs), write `<id>` as is.
 */
export const placeholder = (name: string): string => `&lt;${escapeMrkdwn(name)}&gt;`;

/** A code span in mrkdwn with its text escaped: `` code('/verify <your phone number>') ``. */
export const code = (text: string): string => `\`${escapeMrkdwn(text)}\``;

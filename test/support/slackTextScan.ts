import type { FakeSlack } from '../../sandbox/simulators/slack/fakeSlack.ts';

/**
 * Issue 19 item 2: what reaches Slack from hostile text. One scanner for every lifecycle's text
 * test (incidents, time off, verification): every text Slack was given (messages, updates,
 * ephemerals, views, response_url posts, acks) is walked; mrkdwn may hold `<…>` only as Slack's own
 * tokens the bot wrote (a known user, a channel, a date, a link) and `&` only as an entity; no text
 * holds a lone surrogate; blocks stay within Slack's limits.
 */

/** What Slack does to typed text before it sends it (Slack's "Escaping text", the other way). */
export const asSlackSends = (typed: string): string =>
  typed.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

export const FAMILY = '👨‍👩‍👧‍👦';
export const LONE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
export const HOSTILE = '<script>& <!channel> <@U123> *bold* Zalgo e\u0301\u0302\u0303';

export type Problem = string;

export type SlackTextScanner = Readonly<{
  /** The problems in one value Slack was given; `parent` is `'message'` for a message's top level. */
  problemsIn(value: unknown, where: string, out?: Problem[], parent?: string): Problem[];
  /** The problems in everything the fake Slack was given, and in the acks the test collected. */
  everythingSentToSlack(acks?: readonly unknown[]): Problem[];
}>;

/** A scanner for `fake`, where `<@U…>` is Slack's own token only for the `knownUsers`. */
export const slackTextScanner = (fake: FakeSlack, knownUsers: Iterable<string>): SlackTextScanner => {
  const known = new Set<string>(knownUsers);
  const problemsIn = (value: unknown, where: string, out: Problem[] = [], parent?: string): Problem[] => {
    const mrkdwnProblems = (text: string) => {
      const rest = text
        .replace(/<@([UW][A-Z0-9]+)>/g, (m, id: string) => (known.has(id) ? ' ' : m))
        .replace(/<#[CG][A-Z0-9]+(?:\|[^<>]*)?>/g, ' ')
        .replace(/<!date\^[^<>]*>/g, ' ')
        .replace(/<(?:https?:\/\/|mailto:)[^<>|]*(?:\|[^<>]*)?>/g, ' ');
      if (/[<>]/.test(rest)) out.push(`${where}: raw < or > in mrkdwn: ${text.slice(0, 300)}`);
      if (/&(?!amp;|lt;|gt;)/.test(rest)) out.push(`${where}: raw & in mrkdwn: ${text.slice(0, 300)}`);
      if (text.includes('<!channel>')) out.push(`${where}: a <!channel> ping`);
    };
    if (typeof value === 'string') {
      if (LONE.test(value)) out.push(`${where}: a lone surrogate in ${value.slice(0, 80)}`);
      return out;
    }
    if (Array.isArray(value)) {
      for (const [i, v] of value.entries()) problemsIn(v, `${where}[${i}]`, out, parent);
      return out;
    }
    if (value === null || typeof value !== 'object') return out;
    const o = value as Record<string, unknown>;
    if (typeof o.text === 'string') {
      const text = o.text;
      if (o.type === 'mrkdwn' || (o.type === undefined && parent === 'message')) mrkdwnProblems(text);
      if (o.type === 'plain_text' && parent === 'header' && text.length > 150)
        out.push(`${where}: header of ${text.length}`);
      if (o.type === 'plain_text' && parent === 'button' && text.length > 75)
        out.push(`${where}: button text of ${text.length}`);
      if (text.length > 3000 && o.type !== undefined) out.push(`${where}: text of ${text.length}`);
      if (o.type === undefined && text.length > 40_000) out.push(`${where}: message text of ${text.length}`);
    }
    if (Array.isArray(o.blocks) && o.blocks.length > 100) out.push(`${where}: ${o.blocks.length} blocks`);
    for (const [k, v] of Object.entries(o)) {
      const kind = typeof o.type === 'string' ? o.type : undefined;
      problemsIn(v, `${where}.${k}`, out, k === 'text' ? kind : k === 'blocks' ? 'blocks' : kind);
    }
    return out;
  };

  const everythingSentToSlack = (acks: readonly unknown[] = []): Problem[] => [
    ...['chat.postMessage', 'chat.update', 'chat.postEphemeral'].flatMap((m) =>
      fake.callsOf(m).flatMap((c, i) => problemsIn(c.params, `${m}#${i}`, [], 'message')),
    ),
    ...['views.open', 'views.update', 'views.push', 'views.publish'].flatMap((m) =>
      fake.callsOf(m).flatMap((c, i) => problemsIn(c.params, `${m}#${i}`)),
    ),
    ...fake.responsePosts.flatMap((p, i) => problemsIn(p.body, `response_url#${i}`, [], 'message')),
    ...acks.flatMap((a, i) => problemsIn(a, `ack#${i}`, [], 'message')),
  ];

  return { problemsIn, everythingSentToSlack };
};

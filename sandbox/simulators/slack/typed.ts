import { readSlackAppSettings } from '../../manifest.ts';

/**
 * What a person typed, as Slack sends it to an app: the one place the fake Slack, the sandbox
 * console and the tests' helpers turn typed text into a payload's `text`.
 *
 * Slack's rules (https://api.slack.com/docs/formatting, "How to escape characters" and "Linking to
 * channels and users"; https://api.slack.com/interactivity/slash-commands, "Escape channels, users,
 * and links sent to your app"):
 * - `&`, `<` and `>` always arrive as `&amp;`, `&lt;`, `&gt;` (they are Slack's control
 *   characters), in slash-command `text` and in message text alike; nothing else is encoded.
 * - A slash command declared with `should_escape: true` (manifest.yml) gets mentions of people as
 *   `<@U…|name>`, channels as `<#C…|name>` and links as `<https://…>`. With `should_escape: false`
 *   they arrive as typed (`@ana`, `#incidents`, `https://…`).
 * - Message text (what a person posts in a channel) always has mentions and links encoded; people
 *   as `<@U…>` (Slack no longer adds the name), channels as `<#C…|name>`, `@here`/`@channel`/
 *   `@everyone` as `<!here>`/`<!channel>`/`<!everyone>`.
 *
 * Only names the workspace knows are turned into mentions (`@nobody` stays as typed, as in Slack,
 * where a mention is something picked from the list). Entities are encoded first, so a link's `&`
 * arrives as `&amp;` inside `<…>`, as Slack sends it.
 *
 * @example
 * encodeTyped('trigger db "Checkout & <payments>" for @ana', { escape: true, users });
 * // 'trigger db "Checkout &amp; &lt;payments&gt;" for <@U0ANA|ana>'
 */
export type TypedDirectory = Readonly<{
  users?: ReadonlyArray<Readonly<{ id: string; name: string }>>;
  channels?: ReadonlyArray<Readonly<{ id: string; name: string }>>;
}>;

export type TypedOptions = TypedDirectory &
  Readonly<{
    /**
     * `command`: a slash command's text, mentions and links encoded only with `escape: true`
     * (its `should_escape`). `message`: a message a person posts (always encoded).
     */
    kind?: 'command' | 'message';
    escape?: boolean;
  }>;

/** The three characters Slack encodes as entities, and only those. */
export const encodeEntities = (text: string): string =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

const MENTION = /(^|[\s(,;:])@([a-z0-9][a-z0-9._-]*)/gi;
const CHANNEL = /(^|[\s(,;:])#([a-z0-9][a-z0-9_-]*)/gi;
// Entities are already encoded here, so a link ends at whitespace or at an encoded `<`/`>`.
const LINK = /(^|[\s(])(https?:\/\/(?:(?!&lt;|&gt;)[^\s])+)/gi;
const SPECIAL = new Set(['here', 'channel', 'everyone']);

/** A known name, with punctuation that ends a sentence rather than the name left out (`@ana.`). */
const lookup = <T extends { name: string }>(
  name: string,
  list: ReadonlyArray<T>,
): { found: T; rest: string } | undefined => {
  const find = (n: string) => list.find((x) => x.name.toLowerCase() === n.toLowerCase());
  const exact = find(name);
  if (exact) return { found: exact, rest: '' };
  const trimmed = name.replace(/[._-]+$/, '');
  const found = trimmed === name ? undefined : find(trimmed);
  return found ? { found, rest: name.slice(trimmed.length) } : undefined;
};

/** `@name` and `#name` of known people and channels, as Slack's mention syntax. */
export const encodeMentions = (
  text: string,
  directory: TypedDirectory,
  form: 'command' | 'message' = 'command',
): string => {
  const users = directory.users ?? [];
  const channels = directory.channels ?? [];
  return text
    .replace(MENTION, (m, pre: string, name: string) => {
      if (form === 'message' && SPECIAL.has(name.toLowerCase())) return `${pre}<!${name.toLowerCase()}>`;
      const hit = lookup(name, users);
      if (!hit) return m;
      const mention = form === 'message' ? `<@${hit.found.id}>` : `<@${hit.found.id}|${hit.found.name}>`;
      return `${pre}${mention}${hit.rest}`;
    })
    .replace(CHANNEL, (m, pre: string, name: string) => {
      const hit = lookup(name, channels);
      return hit ? `${pre}<#${hit.found.id}|${hit.found.name}>${hit.rest}` : m;
    });
};

/** Links wrapped as Slack sends them (`<https://example.com/a?b=1&amp;c=2>`); a trailing `.` or `,` stays outside. */
export const encodeLinks = (text: string): string =>
  text.replace(LINK, (_m, pre: string, url: string) => {
    const trail = /[.,;:!?)]+$/.exec(url)?.[0] ?? '';
    return `${pre}<${url.slice(0, url.length - trail.length)}>${trail}`;
  });

/** What a person typed, as Slack sends it (see the module's comment). */
export const encodeTyped = (typed: string, options: TypedOptions = {}): string => {
  const kind = options.kind ?? 'command';
  const entities = encodeEntities(typed);
  if (kind === 'command' && options.escape !== true) return entities;
  return encodeLinks(encodeMentions(entities, options, kind));
};

let escaped: ReadonlySet<string> | undefined;

/** Whether manifest.yml declares `command` with `should_escape: true` (read once). */
export const commandEscapes = (command: string): boolean => {
  escaped ??= readSlackAppSettings().escapedCommands;
  return escaped.has(command);
};

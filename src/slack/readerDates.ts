import { SLACK_DATE_TOKENS, type SlackDateFormat } from '../../machines/shared/slackDate.ts';
import type { SlackMessage } from './blocks/format.ts';
import { slackDate, slackDatesAsFallback } from './time.ts';

/**
 * A DM as its one reader should see it (issue 19 item 3): the builders write every time as a Slack
 * date token whose fallback names UTC (right for a channel, which has many readers in many zones);
 * the outbox hands a message bound for one person (a DM: its channel is their user id) through
 * {@link messageForReader}, so that
 *
 * - every date token's fallback (clients that cannot format) is written in the recipient's zone
 *   and names it (`Nov 23, 17:05 Asia/Singapore`);
 * - the message's top-level `text`, which is what a phone's push notification shows when the
 *   message has blocks, has no tokens left: each is its fallback, in the recipient's zone.
 *
 * A message without blocks shows its `text` in Slack, so its tokens stay (fallbacks zoned).
 * Date-only tokens (`{date_short_pretty}` alone) are left as they are: they name a day, and
 * moving a day between zones would change it.
 */

const TOKEN = /<!date\^(\d+)\^([^|>]*)\|([^>]*)>/g;

const FORMAT_OF: ReadonlyMap<string, SlackDateFormat> = new Map(
  (Object.entries(SLACK_DATE_TOKENS) as [SlackDateFormat, string][]).map(([format, tokens]) => [
    tokens,
    format,
  ]),
);

/** Each time token's fallback written in `tz` (naming it); date-only and unknown tokens unchanged. */
export const datesInZone = (text: string, tz: string): string =>
  text.includes('<!date^')
    ? text.replace(TOKEN, (whole, unix: string, tokens: string) => {
        const format = FORMAT_OF.get(tokens);
        if (format === undefined || format === 'date') return whole;
        return slackDate(new Date(Number(unix) * 1000), { format, fallbackZone: tz });
      })
    : text;

const mapStrings = (value: unknown, f: (s: string) => string): unknown => {
  if (typeof value === 'string') return f(value);
  if (Array.isArray(value)) return value.map((v) => mapStrings(v, f));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, mapStrings(v, f)]));
  }
  return value;
};

/** `message` for one reader in `tz`: token fallbacks in their zone, the notification text plain. */
export const messageForReader = (message: SlackMessage, tz: string): SlackMessage => {
  const zoned = (s: string) => datesInZone(s, tz);
  const text = zoned(message.text);
  const hasBlocks = Array.isArray(message.blocks) && message.blocks.length > 0;
  return {
    ...message,
    text: hasBlocks ? slackDatesAsFallback(text) : text,
    ...(message.blocks ? { blocks: mapStrings(message.blocks, zoned) as SlackMessage['blocks'] } : {}),
  };
};

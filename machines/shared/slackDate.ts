/**
 * Slack's date token (`<!date^UNIX^{date_short_pretty} at {time}|fallback>`): Slack shows the
 * instant in each reader's own zone and clock style, with the date unless it is today for them
 * (issue 19). The one writer of the token's shape: src/slack/time.ts builds its tokens with
 * `slackDateToken` (a fallback in any zone), and a machine whose refusal text is shown in Slack
 * writes its times with `slackDateUtc` (pure: the instant comes from the facts; the fallback, for
 * clients that cannot format, names UTC).
 */
export type SlackDateFormat = 'dateTime' | 'dateTimeSecs' | 'date';

export const SLACK_DATE_TOKENS: Readonly<Record<SlackDateFormat, string>> = {
  dateTime: '{date_short_pretty} at {time}',
  dateTimeSecs: '{date_short_pretty} at {time_secs}',
  date: '{date_short_pretty}',
};

const escapeFallback = (text: string): string =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** The token for `at`, with `fallback` (escaped) for clients that cannot format it. */
export const slackDateToken = (at: Date, format: SlackDateFormat, fallback: string): string =>
  `<!date^${Math.floor(at.getTime() / 1000)}^${SLACK_DATE_TOKENS[format]}|${escapeFallback(fallback)}>`;

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/**
 * The token for an ISO instant with a fallback in UTC (`Nov 27, 13:58 UTC`); unparseable input as
 * it is.
 *
 * @example
 * slackDateUtc('2026-11-27T13:58:48Z') // '<!date^1795787928^{date_short_pretty} at {time}|Nov 27, 13:58 UTC>'
 */
export const slackDateUtc = (iso: string, format: Exclude<SlackDateFormat, 'date'> = 'dateTime'): string => {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  const time = d.toISOString().slice(11, format === 'dateTimeSecs' ? 19 : 16);
  return slackDateToken(d, format, `${MONTHS[d.getUTCMonth()]} ${d.getUTCDate()}, ${time} UTC`);
};

import { escapeMrkdwn, type KnownBlock, mrkdwn, truncate } from '../../slack/blocks/format.ts';
import { slackDate } from '../../slack/time.ts';

/** One alert of an incident, as `/incident show` lists it. */
export type AlertLine = Readonly<{
  status: 'triggered' | 'resolved';
  summary: string | null;
  createdAt: string;
}>;

/** Alert lines shown; the count and the first and last times cover all of them. */
export const MAX_ALERT_LINES = 10;

/**
 * The alerts section of `/incident show`: how many, the first and the last (Slack date tokens, so
 * each reader sees their own zone), and the latest summaries, escaped and cut. `complete` false:
 * the count is a lower bound (the list was cut at a safety bound).
 *
 * @example
 * incidentAlertsBlocks([{ status: 'triggered', summary: 'disk 95%', createdAt: '…' }], true);
 */
export const incidentAlertsBlocks = (alerts: readonly AlertLine[], complete: boolean): KnownBlock[] => {
  if (alerts.length === 0) {
    return [{ type: 'context', elements: [mrkdwn(':bell: No alerts on this incident.')] }];
  }
  const sorted = [...alerts].sort((a, b) => Date.parse(a.createdAt) - Date.parse(b.createdAt));
  const first = sorted[0]!;
  const last = sorted.at(-1)!;
  const open = sorted.filter((a) => a.status === 'triggered').length;
  const count = `${complete ? '' : 'at least '}${sorted.length} alert${sorted.length === 1 ? '' : 's'}`;
  const span =
    sorted.length === 1
      ? `at ${slackDate(first.createdAt)}`
      : `first ${slackDate(first.createdAt)}, last ${slackDate(last.createdAt)}`;
  const shown = sorted.slice(-MAX_ALERT_LINES).reverse();
  const lines = shown.map(
    (a) =>
      `${a.status === 'triggered' ? ':red_circle:' : ':white_check_mark:'} ${slackDate(a.createdAt)} ${
        a.summary ? escapeMrkdwn(truncate(a.summary, 150)) : '(no summary)'
      }`,
  );
  const more = sorted.length - shown.length;
  if (more > 0) lines.push(`…and ${more} earlier`);
  return [
    {
      type: 'section',
      text: mrkdwn(truncate(`*:bell: ${count}* (${open} open) · ${span}\n${lines.join('\n')}`, 2900)),
    },
  ];
};

import { type KnownBlock, mrkdwn, type SlackMessage } from '../../slack/blocks/format.ts';
import { escapeMrkdwn, truncate } from '../../slack/text.ts';
import { formatDay, personText } from './timeOffView.ts';

/**
 * Issue 20 item 7: the daily post in a team channel: who is out today and until when. The kind of
 * leave is named only when it is one of the kinds the configuration allows (WHOS_OUT_SHOWN_KINDS);
 * otherwise it reads "out".
 */
export type WhosOutTodayRow = Readonly<{
  slackUserId: string | null;
  displayName: string;
  /** Null: not to be named in a channel. */
  kind: string | null;
  /** The absence's last day (`YYYY-MM-DD`). */
  lastDay: string;
  /** Out only in the morning or the afternoon today. */
  portionToday: 'all_day' | 'morning' | 'afternoon';
}>;

const MAX_ROWS = 40;

export const whosOutTodayPost = (
  input: Readonly<{ day: string; zone: string; rows: readonly WhosOutTodayRow[]; hrUnreachable: boolean }>,
): SlackMessage => {
  const head = `*Who's out today, ${formatDay(input.day)}* (${escapeMrkdwn(input.zone)})`;
  const line = (r: WhosOutTodayRow) => {
    const what = r.kind === null ? 'out' : `${escapeMrkdwn(truncate(r.kind, 60))}`;
    const when =
      r.portionToday !== 'all_day'
        ? ` this ${r.portionToday}`
        : r.lastDay === input.day
          ? ' today'
          : ` until ${formatDay(r.lastDay, r.lastDay.slice(0, 4) !== input.day.slice(0, 4))}`;
    return `• ${personText(r)}: ${what}${when}`;
  };
  const shown = input.rows.slice(0, MAX_ROWS).map(line);
  const more = input.rows.length - shown.length;
  const body =
    input.rows.length === 0
      ? 'Nobody is out today.'
      : `${shown.join('\n')}${more > 0 ? `\n…and ${more} more` : ''}`;
  const blocks: KnownBlock[] = [
    { type: 'section', text: mrkdwn(head) },
    { type: 'section', text: mrkdwn(truncate(body, 3000)) },
  ];
  if (input.hrUnreachable) {
    blocks.push({
      type: 'context',
      elements: [
        mrkdwn('HR did not answer just now: this is the leave Switchboard knows of, which may miss some.'),
      ],
    });
  }
  const names = input.rows.length === 0 ? 'nobody' : `${input.rows.length} out`;
  return { text: `Who's out today, ${formatDay(input.day)}: ${names}`, blocks };
};

import {
  escapeMrkdwn,
  type KnownBlock,
  mention,
  mrkdwn,
  plain,
  SLACK_LIMITS,
  type SlackMessage,
  truncate,
} from '../../slack/blocks/format.ts';
import { slackDate } from '../../slack/time.ts';
import { actorText } from './actorText.ts';
import { incidentLabel, incidentStatusText } from './incidentCard.ts';
import { INCIDENT_ACTION } from './incidentIds.ts';
import type { IncidentView } from './incidentView.ts';

/** What a list row needs; an IncidentView (or a read-model row shaped like one) fits. */
export type IncidentListItem = Pick<
  IncidentView,
  | 'streamId'
  | 'phase'
  | 'status'
  | 'number'
  | 'title'
  | 'htmlUrl'
  | 'urgency'
  | 'service'
  | 'assignees'
  | 'triggered'
  | 'acknowledged'
>;

/** Rows per message: 50 blocks minus the header and the footer. */
export const MAX_LIST_ROWS = SLACK_LIMITS.blocksPerMessage - 3;

const row = (item: IncidentListItem): KnownBlock => {
  const assigned = item.assignees.length
    ? item.assignees
        .map((a) => (a.slackUserId ? mention(a.slackUserId) : escapeMrkdwn(a.name ?? a.id)))
        .join(', ')
    : 'nobody';
  const details = [
    incidentStatusText(item),
    item.urgency === 'high' ? ':rotating_light: high' : item.urgency === 'low' ? 'low' : null,
    item.service ? escapeMrkdwn(item.service.name ?? item.service.id) : null,
    `assigned ${truncate(assigned, 300)}`,
    item.triggered ? `since ${slackDate(item.triggered.at)}` : null,
    item.acknowledged ? `acked by ${actorText(item.acknowledged.by)}` : null,
  ].filter((x): x is string => x !== null);
  return {
    type: 'section',
    text: mrkdwn(truncate(`*${incidentLabel(item)}*\n${details.join(' · ')}`, SLACK_LIMITS.sectionText)),
    accessory: {
      type: 'button',
      text: plain('Show'),
      action_id: INCIDENT_ACTION.show,
      value: item.streamId,
    },
  };
};

/**
 * `/incident list`: one row per incident with a Show button, within one message. `total` is how
 * many matched when `items` is a page of them. Times are Slack date tokens (each reader's zone).
 */
export const incidentList = (
  items: readonly IncidentListItem[],
  options: Readonly<{ title?: string; total?: number }> = {},
): SlackMessage => {
  const title = options.title ?? 'Open incidents';
  const total = Math.max(options.total ?? items.length, items.length);
  const shown = items.slice(0, MAX_LIST_ROWS);
  const blocks: KnownBlock[] = [{ type: 'header', text: plain(truncate(title, SLACK_LIMITS.headerText)) }];
  if (shown.length === 0) {
    blocks.push({ type: 'section', text: mrkdwn(':sunny: Nothing open. Quiet night.') });
    return { text: `${escapeMrkdwn(title)}: none`, blocks };
  }
  for (const item of shown) blocks.push(row(item));
  if (total > shown.length) {
    blocks.push({
      type: 'context',
      elements: [
        mrkdwn(
          `Showing ${shown.length} of ${total}. Narrow it down with \`/incident list &lt;service&gt;\`.`,
        ),
      ],
    });
  }
  return { text: `${escapeMrkdwn(title)}: ${total}`, blocks };
};

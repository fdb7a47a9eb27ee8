import type { types } from '@slack/bolt';
import type { FactSource, Priority, UpstreamAction } from '../../../machines/incident/events.ts';
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
import { formatInZone, slackDate } from '../../slack/time.ts';
import { actorText } from './actorText.ts';
import { INCIDENT_ACTION, incidentActionsBlockId } from './incidentIds.ts';
import type { FailureView, IncidentMark, IncidentView, PendingView } from './incidentView.ts';
import type { PagedInstead } from './pagedInstead.ts';

/** Status with its emoji, e.g. `:large_yellow_circle: Acknowledged`. */
export const incidentStatusText = (view: Pick<IncidentView, 'phase' | 'status'>): string => {
  switch (view.phase) {
    case 'notTriggered':
      return ':white_circle: Not triggered';
    case 'triggering':
      return ':hourglass_flowing_sand: Triggering…';
    case 'triggerFailed':
      return ':x: Not created';
    case 'resolved':
      return ':white_check_mark: Resolved';
    case 'open':
      return view.status === 'acknowledged' ? ':large_yellow_circle: Acknowledged' : ':red_circle: Triggered';
  }
};

/** `#42 db-primary disk 95%` (a link to the incident service when we have one), escaped. */
export const incidentLabel = (view: Pick<IncidentView, 'number' | 'title' | 'htmlUrl'>): string => {
  const text = `${view.number === null ? '' : `#${view.number} `}${escapeMrkdwn(truncate(view.title, 200))}`;
  return view.htmlUrl ? `<${view.htmlUrl}|${text}>` : text;
};

const sourceSuffix = (source: FactSource): string =>
  source === 'webhook' ? ' in the incident service' : source === 'events_api' ? ' via the events API' : '';

/**
 * `Acknowledged by <@U1> today at 14:03` (a Slack date token: each reader's zone, the date unless it
 * is today for them); `plain`: the notification text, where Slack shows no token, in UTC, named.
 */
const markLine = (verb: string, mark: IncidentMark | null, plain = false): string | null =>
  mark
    ? `${verb}${mark.by ? ` by ${actorText(mark.by)}` : ''} ${plain ? formatInZone(mark.at, 'UTC') : slackDate(mark.at)}${sourceSuffix(mark.source)}`
    : null;

const ACTION_NOUN: Readonly<Record<UpstreamAction, string>> = {
  trigger: 'create the incident',
  acknowledge: 'acknowledge',
  resolve: 'resolve',
  escalate: 'escalate',
  reassign: 'reassign',
  note: 'add the note',
  set_priority: 'change the priority',
  set_urgency: 'change the urgency',
};

/** `Acknowledging… requested by <@U1> today at 02:04` (a Slack date token). */
export const pendingText = (p: PendingView): string => {
  const doing: Record<UpstreamAction, string> = {
    trigger: 'Creating the incident…',
    acknowledge: 'Acknowledging…',
    resolve: 'Resolving…',
    escalate: p.level === null ? 'Escalating…' : `Escalating to level ${p.level}…`,
    reassign: p.assignees?.length
      ? `Reassigning to ${p.assignees.map((a) => (a.slackUserId ? mention(a.slackUserId) : escapeMrkdwn(a.name ?? a.id))).join(', ')}…`
      : 'Reassigning…',
    note: 'Adding a note…',
    set_priority: p.priority
      ? `Setting the priority to ${escapeMrkdwn(truncate(p.priority.name, 40))}…`
      : 'Changing the priority…',
    set_urgency: p.urgency ? `Setting the urgency to ${p.urgency}…` : 'Changing the urgency…',
  };
  return `:hourglass_flowing_sand: ${doing[p.action]} requested by ${mention(p.by)} ${slackDate(p.requestedAt)}`;
};

/**
 * What the incident service said, for people: the stored failure text without our own prefix
 * (`pagerduty updateIncident failed: HTTP 400 `). It was scrubbed of credentials before it was
 * stored (src/core/scrub.ts); here it is escaped and cut.
 */
export const vendorReason = (message: string): string =>
  escapeMrkdwn(
    truncate(
      message
        .replace(/^[\w-]+ \w+ failed: /, '')
        .replace(/^HTTP \d{3} ?/, '')
        .trim(),
      300,
    ),
  );

/** Never a raw code (`SB_…`): people read what happened, the log keeps the code. */
const failureReason = (f: FailureView): string => {
  switch (f.code) {
    case 'SB_UPSTREAM_UNAVAILABLE':
    case 'SB_TIMEOUT':
      return "Couldn't reach the incident service";
    case 'SB_UPSTREAM_RATE_LIMITED':
      return 'The incident service asked us to slow down';
    case 'SB_UPSTREAM_AUTH':
      return "The incident service refused Switchboard's credentials";
    case 'SB_UNMAPPED_USER':
      return 'The requester has no matching incident-service user';
    default: {
      const said = vendorReason(f.message);
      return `The incident service refused to ${ACTION_NOUN[f.action]}${said ? `: ${said}` : ''}`;
    }
  }
};

/**
 * `Couldn't reach the incident service, retrying today at 02:06 (attempt 2/5)` (a Slack date token),
 * or for a final failure `… Gave up trying to acknowledge after 5 attempts.`
 */
export const failureText = (f: FailureView): string => {
  const reason = failureReason(f);
  if (!f.final && f.nextAttemptAt) {
    return `:warning: ${reason}, retrying ${slackDate(f.nextAttemptAt)} (attempt ${f.attempt + 1}/${f.maxAttempts})`;
  }
  const attempts = `${f.attempt} attempt${f.attempt === 1 ? '' : 's'}`;
  return `:x: ${reason}. Gave up trying to ${ACTION_NOUN[f.action]} after ${attempts}; try again, or use the incident service directly.`;
};

const button = (
  text: string,
  actionId: string,
  streamId: string,
  extra: Partial<types.Button> = {},
): types.Button => ({ type: 'button', text: plain(text), action_id: actionId, value: streamId, ...extra });

/** What the card knows besides the incident's own state. */
export type IncidentCardOptions = Readonly<{
  /** The last level of the incident's escalation policy (null: unknown, Escalate stays offered). */
  lastEscalationLevel?: number | null;
  /** One line on paging by phone (blocks/pagingSummary.ts), shown under the fields; null: none. */
  paging?: string | null;
  /**
   * The incident service's priorities (most to least severe), for the priority select; null or
   * empty: no priority select (not read yet, or the account has none). Left out: neither the
   * priority nor the urgency select (a card drawn without the account, as in block tests).
   */
  priorities?: readonly Priority[] | null;
  /**
   * The incident's own channel (issue 22 item 7): `{ channel: null }` offers **Create channel**
   * while the incident is open; a channel id names it on the card. Undefined: neither (a card
   * rendered outside the card reactor, such as `/incident show`).
   */
  incidentChannel?: Readonly<{ channel: string | null; archived?: boolean }> | undefined;
  /**
   * Who paging passed over (on leave, unreachable) and who it paged instead (issue 20,
   * blocks/pagingSummary.ts `pagedInstead`): "Assigned" names who is really paged.
   */
  pagedInstead?: ReadonlyMap<string, PagedInstead>;
}>;

/** Slack's limits on a static_select: 100 options, 75 characters of text each. */
const MAX_SELECT_OPTIONS = 100;
const option = (text: string, value: string): types.PlainTextOption => ({
  text: plain(truncate(text, 75)),
  value,
});

/** The priority and urgency selects, when the decider takes a change of them now. */
const fieldSelects = (view: IncidentView, options: IncidentCardOptions): types.ActionsBlockElement[] => {
  const out: types.ActionsBlockElement[] = [];
  // Only on cards drawn for the incident service's account (priorities given, even as null).
  if (options.priorities === undefined) return out;
  const moves = view.fieldMoves;
  const priorities = (options.priorities ?? []).slice(0, MAX_SELECT_OPTIONS);
  if (moves?.priority && priorities.length > 0) {
    const current = view.priority ? priorities.find((p) => p.id === view.priority!.id) : undefined;
    out.push({
      type: 'static_select',
      action_id: INCIDENT_ACTION.priority,
      placeholder: plain('Priority…'),
      options: priorities.map((p) => option(p.name, p.id)),
      ...(current ? { initial_option: option(current.name, current.id) } : {}),
    });
  }
  if (moves?.urgency) {
    const high = option('High urgency', 'high');
    const low = option('Low urgency', 'low');
    out.push({
      type: 'static_select',
      action_id: INCIDENT_ACTION.urgency,
      placeholder: plain('Urgency…'),
      options: [high, low],
      ...(view.urgency ? { initial_option: view.urgency === 'high' ? high : low } : {}),
    });
  }
  return out;
};

/** `<@Ana> (on leave) → <@Ben> is paged instead`, or `<@Ana> (on leave: level 2 is paged)`. */
const assigneeText = (
  a: Readonly<{ slackUserId?: string | null; name?: string | null; id: string }>,
  instead: ReadonlyMap<string, PagedInstead> | undefined,
): string => {
  const who = a.slackUserId ? mention(a.slackUserId) : escapeMrkdwn(a.name ?? a.id);
  const passed = a.slackUserId ? instead?.get(a.slackUserId) : undefined;
  if (!passed) return who;
  if (passed.instead.length > 0) {
    return `${who} (${passed.why}) → ${passed.instead.map(mention).join(', ')} ${passed.instead.length === 1 ? 'is' : 'are'} paged instead`;
  }
  return `${who} (${passed.why}${passed.otherwise ? `: ${passed.otherwise}` : ''})`;
};

const actionsBlock = (view: IncidentView, options: IncidentCardOptions): KnownBlock | null => {
  const m = view.moves;
  const label = view.number === null ? 'this incident' : `#${view.number}`;
  const elements: types.ActionsBlockElement[] = [];
  if (m.acknowledge)
    elements.push(button('Acknowledge', INCIDENT_ACTION.acknowledge, view.streamId, { style: 'primary' }));
  if (m.resolve) {
    elements.push(
      button('Resolve', INCIDENT_ACTION.resolve, view.streamId, m.acknowledge ? {} : { style: 'primary' }),
    );
  }
  const next = (view.escalationLevel ?? 1) + 1;
  const last = options.lastEscalationLevel ?? null;
  // Escalate only while there is a next level to page.
  if (m.escalate && (last === null || next <= last)) {
    elements.push(
      button('Escalate', INCIDENT_ACTION.escalate, view.streamId, {
        confirm: {
          title: plain('Escalate?'),
          text: plain(`This pages escalation level ${next} for ${label}.`),
          confirm: plain('Escalate'),
          deny: plain('Cancel'),
        },
      }),
    );
  }
  if (m.note) elements.push(button('Add note', INCIDENT_ACTION.note, view.streamId));
  if (m.reassign) {
    elements.push({
      type: 'users_select',
      action_id: INCIDENT_ACTION.reassign,
      placeholder: plain('Reassign to…'),
      confirm: {
        title: plain('Reassign?'),
        text: plain(`${label} will be reassigned to the person you picked, who gets paged.`),
        confirm: plain('Reassign'),
        deny: plain('Cancel'),
      },
    });
  }
  elements.push(...fieldSelects(view, options));
  if (options.incidentChannel && options.incidentChannel.channel === null && view.phase === 'open') {
    elements.push(button('Create channel', INCIDENT_ACTION.channel, view.streamId));
  }
  // Issue 22 item 3: a status update for stakeholders, while the incident is open.
  if (view.phase === 'open') elements.push(button('Post update', INCIDENT_ACTION.update, view.streamId));
  if (elements.length === 0) return null;
  return { type: 'actions', block_id: incidentActionsBlockId(view.streamId), elements };
};

/**
 * The incident card: title, status, urgency, priority, service, assignees, who did what when,
 * requests in flight, the last upstream failure, and only the buttons whose move is legal now.
 * Posted once per channel and updated in place (`chat.update`) on every change.
 *
 * @example
 * const { text, blocks } = incidentCard(toIncidentView(streamId, state));
 * await client.chat.update({ channel, ts, text, blocks });
 */
export const incidentCard = (view: IncidentView, options: IncidentCardOptions = {}): SlackMessage => {
  const status = incidentStatusText(view);
  const blocks: KnownBlock[] = [{ type: 'section', text: mrkdwn(`*${incidentLabel(view)}*`) }];

  const fields = [
    mrkdwn(`*Status*\n${status}`),
    mrkdwn(`*Urgency*\n${view.urgency === 'high' ? 'High' : view.urgency === 'low' ? 'Low' : '—'}`),
    mrkdwn(`*Priority*\n${view.priority ? escapeMrkdwn(view.priority.name) : '—'}`),
    mrkdwn(`*Service*\n${view.service ? escapeMrkdwn(view.service.name ?? view.service.id) : '—'}`),
  ];
  if (view.phase === 'open' || view.phase === 'resolved') {
    const assigned = view.assignees.length
      ? view.assignees.map((a) => assigneeText(a, options.pagedInstead)).join(', ')
      : 'nobody';
    fields.push(mrkdwn(`*Assigned*\n${truncate(assigned, 1000)}`));
    if (view.escalationLevel !== null) fields.push(mrkdwn(`*Escalation level*\n${view.escalationLevel}`));
  }
  blocks.push({ type: 'section', fields: fields.slice(0, SLACK_LIMITS.sectionFields) });
  if (view.alert) {
    const source = view.alert.source ? ` · Source: ${escapeMrkdwn(truncate(view.alert.source, 300))}` : '';
    blocks.push({
      type: 'context',
      elements: [mrkdwn(`Severity: ${escapeMrkdwn(view.alert.severity)}${source}`)],
    });
  }
  if (view.details) {
    blocks.push({
      type: 'section',
      text: mrkdwn(`*Details*\n${escapeMrkdwn(truncate(view.details, 1000))}`),
    });
  }

  const history = [
    view.requested && view.phase !== 'open' && view.phase !== 'resolved'
      ? `Requested by ${mention(view.requested.by)} ${slackDate(view.requested.at)}`
      : null,
    markLine('Triggered', view.triggered),
    markLine('Acknowledged', view.acknowledged),
    view.resolved
      ? `${markLine('Resolved', view.resolved)}${view.resolved.resolution ? `: ${escapeMrkdwn(truncate(view.resolved.resolution, 300))}` : ''}`
      : null,
  ].filter((line): line is string => line !== null);
  if (history.length) blocks.push({ type: 'context', elements: [mrkdwn(history.join('\n'))] });
  if (options.paging) blocks.push({ type: 'context', elements: [mrkdwn(options.paging)] });
  const own = options.incidentChannel?.channel;
  if (own) {
    const archived = options.incidentChannel?.archived ? ' (archived)' : '';
    blocks.push({ type: 'context', elements: [mrkdwn(`:hash: Incident channel: <#${own}>${archived}`)] });
  }

  if (view.pending.length) {
    blocks.push({
      type: 'context',
      elements: view.pending.slice(0, SLACK_LIMITS.contextElements).map((p) => mrkdwn(pendingText(p))),
    });
  }
  if (view.lastFailure) blocks.push({ type: 'section', text: mrkdwn(failureText(view.lastFailure)) });
  if (view.lastNote) {
    const n = view.lastNote;
    const count = `${view.noteCount} note${view.noteCount === 1 ? '' : 's'}`;
    blocks.push({
      type: 'context',
      elements: [
        mrkdwn(
          `:memo: ${count} · latest by ${actorText(n.by)} ${slackDate(n.at)}: “${escapeMrkdwn(truncate(n.content, 300))}”`,
        ),
      ],
    });
  }
  const actions = actionsBlock(view, options);
  if (actions) blocks.push(actions);

  const who =
    view.phase === 'resolved'
      ? markLine('Resolved', view.resolved, true)
      : view.status === 'acknowledged'
        ? markLine('Acknowledged', view.acknowledged, true)
        : null;
  // The notification text is mrkdwn too: a title with `<!channel>` must not notify anyone.
  const text = `${view.number === null ? '' : `#${view.number} `}${escapeMrkdwn(truncate(view.title, 200))}: ${status.replace(/^:[a-z_]+: /, '')}${who ? ` (${who})` : ''}`;
  return { text, blocks };
};

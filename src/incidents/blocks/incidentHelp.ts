import {
  escapeMrkdwn,
  type KnownBlock,
  mrkdwn,
  plain,
  type SlackMessage,
} from '../../slack/blocks/format.ts';

/** Every `/incident` subcommand with its usage, for help and for "usage:" replies. */
export const INCIDENT_USAGE = {
  trigger: '/incident trigger <service> <title>  (no arguments: opens a form)',
  list: '/incident list [service]',
  show: '/incident show <id or number>',
  ack: '/incident ack <id or number>',
  resolve: '/incident resolve <id or number> [resolution]',
  escalate: '/incident escalate <id or number> [level]',
  note: '/incident note <id or number> <text>  (no text: opens a form)',
  reassign: '/incident reassign <id or number> @user',
  priority: '/incident priority <id or number> <priority, e.g. P1>',
  urgency: '/incident urgency <id or number> high|low',
  ackMine: '/incident ack mine  (every triggered incident assigned to you)',
  resolveMany: '/incident resolve <number> <number>…  (several at once)',
  timeline: '/incident timeline <id or number> [all]',
  subscribe:
    '/incident subscribe <service> [stakeholders]  (post that service’s incidents, or with `stakeholders` its status updates, in this channel)',
  update: '/incident update <id or number> <text>  (no text: opens a form)',
  channel: '/incident channel <id or number>',
  help: '/incident help',
} as const;
export type IncidentSubcommand = keyof typeof INCIDENT_USAGE;

export const ONCALL_USAGE = '/oncall [service, schedule or @user]';
/** Issue 20: the on-call person asks colleagues to cover their own shifts (no time off). */
export const ONCALL_COVER_USAGE = '/oncall cover [YYYY-MM-DD [to YYYY-MM-DD]]';

const lines = (entries: readonly (readonly [string, string])[]): string =>
  // `<service>` must be escaped, or Slack reads it as a link (even inside backticks).
  entries.map(([usage, what]) => `\`${escapeMrkdwn(usage)}\`  ${what}`).join('\n');

/**
 * `/incident help` (and `/oncall help`): what each command does. Ephemeral.
 */
export const incidentHelp = (): SlackMessage => {
  const blocks: KnownBlock[] = [
    { type: 'header', text: plain('Incidents in Slack') },
    {
      type: 'section',
      text: mrkdwn(
        lines([
          [INCIDENT_USAGE.trigger, 'create an incident and post its card here'],
          [INCIDENT_USAGE.list, 'open incidents'],
          [INCIDENT_USAGE.show, 'one incident’s card'],
          [INCIDENT_USAGE.ack, 'acknowledge (same as the button)'],
          [INCIDENT_USAGE.resolve, 'resolve'],
          [INCIDENT_USAGE.escalate, 'page the next escalation level'],
          [INCIDENT_USAGE.note, 'add a note'],
          [INCIDENT_USAGE.reassign, 'hand it to someone else'],
          [INCIDENT_USAGE.priority, 'set its priority (one of the incident service’s)'],
          [INCIDENT_USAGE.urgency, 'set its urgency'],
          [INCIDENT_USAGE.ackMine, 'acknowledge them all in one go'],
          [INCIDENT_USAGE.resolveMany, 'resolve each of them'],
          [
            INCIDENT_USAGE.timeline,
            'what people did and how the incident changed, with who and when (`all`: the full audit)',
          ],
          [
            INCIDENT_USAGE.subscribe,
            'route a service’s incidents (or only its status updates) to this channel',
          ],
          [
            INCIDENT_USAGE.update,
            'a status update for people who are not responding: posted to the incident’s channels and its stakeholder channels',
          ],
          [
            INCIDENT_USAGE.channel,
            'a channel for this incident (`#inc-42-…`): everyone on it invited, its card there too, archived a while after it is resolved',
          ],
        ]),
      ),
    },
    {
      type: 'section',
      text: mrkdwn(
        lines([
          [ONCALL_USAGE, 'who is on call now and next'],
          [
            ONCALL_COVER_USAGE,
            'ask colleagues to cover your shifts on those days (none: your next shift); the first to accept gets the override',
          ],
        ]),
      ),
    },
    {
      type: 'context',
      elements: [
        mrkdwn(
          'You act as the incident-service user with your Slack email. Cards update in place whenever the incident changes, wherever the change was made.',
        ),
      ],
    },
  ];
  return {
    text: 'Incident commands: /incident trigger, list, show, ack, resolve, escalate, note, reassign, priority, urgency, timeline, subscribe, update, channel; /oncall',
    blocks,
  };
};

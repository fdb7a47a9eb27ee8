import type { IncidentRejectionDetails } from '../../../machines/incident/decider.ts';
import { escapeMrkdwn, mention } from '../../slack/blocks/format.ts';
import { slackDate } from '../../slack/time.ts';
import { actorText } from './actorText.ts';

const ACTION_NAME: Readonly<Record<string, string>> = {
  trigger_in_flight: 'creating the incident',
  acknowledge_in_flight: 'an acknowledge',
  resolve_in_flight: 'a resolve',
  escalate_in_flight: 'an escalation',
  reassign_in_flight: 'a reassignment',
  set_priority_in_flight: 'a priority change',
  set_urgency_in_flight: 'an urgency change',
};

/**
 * The ephemeral answer to a refused incident move, from the decider's rejection details
 * (`IllegalStateError.details` after handleCommand): who got there first, and when.
 * `viewer` is the Slack user who clicked, so a double click reads "You already asked…".
 *
 * @example
 * incidentRejectionText({ reason: 'already_acknowledged', by: { slackUserId: 'U123', … }, at: '…T02:04:00Z', … })
 * // 'Already acknowledged by <@U123> <!date^…^{date_short_pretty} at {time}|Nov 22, 02:04 UTC>.' ("… today at 02:04")
 */
export const incidentRejectionText = (
  details: Partial<IncidentRejectionDetails> & Readonly<Record<string, unknown>>,
  viewer: string | null = null,
): string => {
  const at = typeof details.at === 'string' ? ` ${slackDate(details.at)}` : '';
  switch (details.reason) {
    case 'already_acknowledged':
      return `Already acknowledged by ${actorText(details.by)}${at}.`;
    case 'already_resolved':
      return `Already resolved by ${actorText(details.by)}${at}.`;
    case 'acknowledge_in_flight':
    case 'resolve_in_flight':
    case 'escalate_in_flight':
    case 'reassign_in_flight':
    case 'set_priority_in_flight':
    case 'set_urgency_in_flight':
    case 'trigger_in_flight': {
      const what = ACTION_NAME[details.reason] ?? 'another change';
      const when = details.requestedAt ? ` ${slackDate(details.requestedAt)}` : '';
      if (details.requestedBy && details.requestedBy === viewer) {
        return `You already asked for ${what}${when}; it's still in progress. The card updates when it's done.`;
      }
      const who = details.requestedBy ? ` requested by ${mention(details.requestedBy)}${when}` : '';
      return `Hold on: ${what}${who} is still in progress. Try again once the card shows the result.`;
    }
    case 'not_triggered':
      return "This incident doesn't exist in the incident service yet.";
    case 'trigger_failed':
      return 'Creating this incident failed, so there is nothing to change. Trigger a new one with `/incident trigger`.';
    case 'already_triggered':
      return typeof details.number === 'number'
        ? `That incident already exists (#${details.number}).`
        : 'That incident already exists.';
    case 'already_assigned':
      return "It's already assigned to them.";
    case 'already_set':
      return typeof details.value === 'string'
        ? `It's already ${escapeMrkdwn(details.value)}.`
        : "It's already set to that.";
    case 'already_at_level':
      return `It's already at escalation level ${details.level}.`;
    case 'incident_mismatch':
    case 'unknown_card':
      return "Switchboard couldn't match this to the incident it belongs to, so nothing was changed.";
    default:
      return "That can't be done on this incident right now.";
  }
};

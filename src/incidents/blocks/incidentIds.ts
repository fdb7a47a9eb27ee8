/**
 * Slack ids of the incident surface (`<lifecycle>.<verb>`, e.g. `incident.acknowledge`), shared by the block
 * builders here and the listeners in handlers/ (which re-export them from handlers/incident/ids.ts,
 * because src/ must not import handlers/). manifest.yml needs none of them: action and callback ids
 * are not declared there.
 *
 * Button values carry only the incident stream id; handlers re-check everything against the
 * stream (who may act, whether the move is legal), never trusting the payload.
 */

/** `action_id`s of interactive elements. */
export const INCIDENT_ACTION = {
  acknowledge: 'incident.acknowledge',
  resolve: 'incident.resolve',
  escalate: 'incident.escalate',
  /** Button that opens the Add note modal. */
  note: 'incident.note',
  /** users_select on the card: picking someone reassigns at once (after a confirm dialog). */
  reassign: 'incident.reassign',
  /** static_select on the card: the service's priorities; picking one sets it. */
  priority: 'incident.priority',
  /** static_select on the card: High / Low. */
  urgency: 'incident.urgency',
  /** "Show" on a list row: post that incident's card (ephemerally). */
  show: 'incident.show',
  /** "Still working on it" on an acknowledge reminder's DM (issue 22 item 4). */
  keep: 'incident.keep',
  /** "Create channel" on the card (issue 22 item 7). */
  channel: 'incident.channel',
  /** Issue 22 item 3: button that opens the status update form. */
  update: 'incident.update',
  /** "Ask for cover" on a shift in App Home's My shifts (issue 20 item 4). */
  askCover: 'oncall.ask_cover',
} as const;
export type IncidentActionId = (typeof INCIDENT_ACTION)[keyof typeof INCIDENT_ACTION];

/** `callback_id`s of modals. Same words as the actions they complete; Bolt keeps the two apart. */
export const INCIDENT_VIEW = {
  trigger: 'incident.trigger',
  note: 'incident.note',
  reassign: 'incident.reassign',
  /** Issue 22 item 3: the status update form. */
  update: 'incident.update',
} as const;
export type IncidentViewId = (typeof INCIDENT_VIEW)[keyof typeof INCIDENT_VIEW];

/** `block_id` / `action_id` pairs of modal inputs, for reading `view.state.values`. */
export const INCIDENT_FIELD = {
  triggerService: { blockId: 'incident.trigger.service', actionId: 'service' },
  triggerTitle: { blockId: 'incident.trigger.title', actionId: 'title' },
  triggerUrgency: { blockId: 'incident.trigger.urgency', actionId: 'urgency' },
  triggerDetails: { blockId: 'incident.trigger.details', actionId: 'details' },
  noteContent: { blockId: 'incident.note.content', actionId: 'content' },
  reassignUsers: { blockId: 'incident.reassign.users', actionId: 'users' },
  updateText: { blockId: 'incident.update.text', actionId: 'text' },
} as const;

/** Issue 22 item 2: the message shortcut "Add to timeline" (`callback_id`, also in the manifest). */
export const INCIDENT_SHORTCUT = { addToTimeline: 'incident.add_to_timeline' } as const;

const ACTIONS_BLOCK_PREFIX = 'incident.actions:';

/**
 * The card's actions block carries the stream id in its `block_id`: a users_select has no
 * `value`, so the reassign handler reads the stream from `action.block_id`.
 */
export const incidentActionsBlockId = (streamId: string): string => ACTIONS_BLOCK_PREFIX + streamId;

/** The stream id inside an actions block id, or null when it is not one of ours. */
export const streamIdFromActionsBlockId = (blockId: string | undefined): string | null =>
  blockId?.startsWith(ACTIONS_BLOCK_PREFIX) && blockId.length > ACTIONS_BLOCK_PREFIX.length
    ? blockId.slice(ACTIONS_BLOCK_PREFIX.length)
    : null;

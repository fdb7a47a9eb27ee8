import type { types } from '@slack/bolt';
import { parseTimeOffRequestId } from '../../../machines/timeOff/streams.ts';
import { escapeMrkdwn, plain } from '../../slack/blocks/format.ts';

/**
 * Slack ids of the time-off surface (`timeoff.<verb>`), shared by the block builders here and the
 * listeners a later change adds under handlers/.
 *
 * Button values carry only the time-off request id, never who may act: the handler parses the id
 * (`timeOffIdFromValue`, null for anything not ours), and the decider checks the clicker against
 * the request's designated approver and the card (channel, ts) the click came from against the card
 * recorded for the request, refusing a click that names another request.
 */
export const TIME_OFF_ACTION = {
  approve: 'timeoff.approve',
  deny: 'timeoff.deny',
  /** Opens the Deny-with-reason modal. */
  denyWithReason: 'timeoff.deny_reason',
  /** The requester's Cancel on their status message or App Home. */
  cancel: 'timeoff.cancel',
  /** After HR refused the submission: the requester's button that opens the form prefilled to fix it. */
  resubmit: 'timeoff.resubmit',
} as const;
export type TimeOffActionId = (typeof TIME_OFF_ACTION)[keyof typeof TIME_OFF_ACTION];

export const TIME_OFF_VIEW = { deny: 'timeoff.deny' } as const;

export const TIME_OFF_FIELD = {
  denyReason: { blockId: 'timeoff.deny.reason', actionId: 'reason' },
} as const;

const ACTIONS_BLOCK_PREFIX = 'timeoff.actions:';

export const timeOffActionsBlockId = (timeOffId: string): string => ACTIONS_BLOCK_PREFIX + timeOffId;

/** The time-off id a button value (or an actions block id) names, or null when it is not one of ours. */
export const timeOffIdFromValue = (value: unknown): string | null => parseTimeOffRequestId(value);

export const timeOffIdFromActionsBlockId = (blockId: string | undefined): string | null =>
  blockId?.startsWith(ACTIONS_BLOCK_PREFIX)
    ? parseTimeOffRequestId(blockId.slice(ACTIONS_BLOCK_PREFIX.length))
    : null;

/**
 * The short id people read and type (`/timeoff cancel 3f9a2c`): the first 6 hex digits of the
 * request id. Only the requester's own requests are searched by it, so a clash between two
 * people's ids never matters; one between two of the same person's asks which one they mean.
 */
export const shortTimeOffId = (timeOffId: string): string => timeOffId.slice(0, 6).toLowerCase();

/**
 * Issue 20: how a request is named in every message, one id: Switchboard's short id, then HR's id
 * once HR has it, always in this order and this place (`Request \`3f9a2c\` · HR 4471`).
 */
export const requestIdText = (view: Readonly<{ timeOffId: string; hrRequestId?: string | null }>): string =>
  `Request \`${shortTimeOffId(view.timeOffId)}\`${view.hrRequestId ? ` · HR ${escapeMrkdwn(view.hrRequestId)}` : ''}`;

/** A button of the time-off surface: its value is the request id, nothing else (see above). */
export const timeOffButton = (
  text: string,
  actionId: TimeOffActionId,
  timeOffId: string,
  extra: Partial<types.Button> = {},
): types.Button => ({ type: 'button', text: plain(text), action_id: actionId, value: timeOffId, ...extra });

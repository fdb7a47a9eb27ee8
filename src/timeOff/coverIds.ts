import { parseTimeOffRequestId } from '../../machines/timeOff/streams.ts';

/**
 * Slack ids of "Approve and cover with …" on the approval card (issue 12). The button's and the
 * select's values carry the request id and the proposed cover (`<time-off id>:<Slack user id>`);
 * the users_select carries only its pick, and the request id comes from its actions block. Both
 * are hostile: parsed here, then checked against the actions block, and the decider checks the
 * clicker (only the approver) and the card, as for Approve.
 */
export const TIME_OFF_COVER_ACTION = {
  /** The top-ranked colleague's button. */
  approveCover: 'timeoff.approve_cover',
  /** The other ranked colleagues. */
  approveCoverPick: 'timeoff.approve_cover_pick',
  /** Anyone else (a users_select, with a confirm). */
  approveCoverUser: 'timeoff.approve_cover_user',
  /** The cover's own DM (issue 20): "Can't cover" (value: the cover id; only the cover may press it). */
  cant: 'timeoff.cover_cant',
  /** Issue 20: "Approve and ask for cover" (the ranked colleagues are asked by DM). Value: the request id. */
  approveAsk: 'timeoff.approve_ask_cover',
} as const;

const COVER_BLOCK_PREFIX = 'timeoff.cover:';
const SLACK_USER = /^[UW][A-Z0-9]{2,31}$/;

export const timeOffCoverBlockId = (timeOffId: string): string => COVER_BLOCK_PREFIX + timeOffId;

export const timeOffIdFromCoverBlockId = (blockId: unknown): string | null =>
  typeof blockId === 'string' && blockId.startsWith(COVER_BLOCK_PREFIX)
    ? parseTimeOffRequestId(blockId.slice(COVER_BLOCK_PREFIX.length))
    : null;

export const coverValue = (timeOffId: string, slackUserId: string): string => `${timeOffId}:${slackUserId}`;

/** A Slack user id from a (hostile) value, or null. */
export const parseSlackUserId = (value: unknown): string | null =>
  typeof value === 'string' && SLACK_USER.test(value) ? value : null;

/** The request and the cover a (hostile) button or option value names, or null when it is not one of ours. */
export const parseCoverValue = (
  value: unknown,
): Readonly<{ timeOffId: string; slackUserId: string }> | null => {
  if (typeof value !== 'string' || value.length > 100) return null;
  const at = value.indexOf(':');
  if (at < 0) return null;
  const timeOffId = parseTimeOffRequestId(value.slice(0, at));
  const slackUserId = parseSlackUserId(value.slice(at + 1));
  return timeOffId && slackUserId ? { timeOffId, slackUserId } : null;
};

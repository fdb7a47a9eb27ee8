import { timeOffCommandDataSchemas } from '../../machines/timeOff/commands.ts';
import { coverAskCommandDataSchemas } from '../../machines/timeOff/coverAsk.ts';
import type { CommandRejectedData } from '../processors/inboxDispatch.reactor.ts';
import type { SlackReplyMessage } from '../processors/ports.ts';
import { standingRefusalWords } from './standing.ts';

/**
 * How a refused time-off command reads for the person who acted (through the click's or the
 * command's response_url, else ephemerally). The decider writes its refusals for people ("Only Dana
 * Lee can approve or deny this request."); here they get an emoji by what went wrong. A forged or
 * mistyped request id (refused by the route before any stream: `unknown_request`) reads as such;
 * SB_UNMAPPED_USER says what is missing about the person. HR's own error text never reaches here:
 * HR calls are made by processors, not on people's commands.
 */

const TIME_OFF_COMMANDS: ReadonlySet<string> = new Set([
  ...Object.keys(timeOffCommandDataSchemas),
  // A person's command on a cover (issue 20: the cover's "Can't cover").
  'DeclineCover',
  // Issue 20: cover asks ("Ben Okafor already covers this shift.").
  ...Object.keys(coverAskCommandDataSchemas),
]);

const NOT_ALLOWED = new Set([
  'not_approver',
  'own_request',
  'not_requester',
  'self_approval',
  'not_asked',
  'not_actor',
  'not_opener',
  'self_cover',
  'not_cover',
]);
const WRONG_MESSAGE = new Set(['other_card']);
const ENDED = new Set([
  'already_decided',
  'expired',
  'cancelled',
  'nothing_to_cancel',
  'nothing_to_resubmit',
  'cover_withdrawn',
  'cover_over',
  'already_taken',
  'over',
]);

export const timeOffRejectionText = (r: CommandRejectedData): SlackReplyMessage | undefined => {
  if (!TIME_OFF_COMMANDS.has(r.commandType)) return undefined;
  const reason = typeof r.details.reason === 'string' ? r.details.reason : undefined;
  if (r.code === 'SB_UNMAPPED_USER') return { text: `:bust_in_silhouette: ${r.message}` };
  if (reason === 'unknown_cover') {
    return { text: ":mag: That doesn't name a cover Switchboard knows, so nothing was changed." };
  }
  if (reason === 'unknown_request') {
    return {
      text: ":mag: That doesn't name a time-off request Switchboard knows, so nothing was changed. `/timeoff status` lists yours.",
    };
  }
  if (reason === 'unknown_ask') {
    return { text: ":mag: That doesn't name a shift Switchboard asked to cover, so nothing was changed." };
  }
  if (r.code !== 'SB_ILLEGAL_STATE') return undefined;
  // Issue 20: overlapping one's own leave, or past days: the days as people read them.
  const standing = standingRefusalWords(r.details);
  if (standing) return { text: standing };
  if (reason && NOT_ALLOWED.has(reason)) return { text: `:no_entry: ${r.message}` };
  if (reason && WRONG_MESSAGE.has(reason)) return { text: `:twisted_rightwards_arrows: ${r.message}` };
  if (reason && ENDED.has(reason)) return { text: `:information_source: ${r.message}` };
  if (reason === 'invalid_dates' || reason === 'invalid_portion' || reason === 'no_working_days') {
    return { text: `:calendar: ${r.message}` };
  }
  return { text: `:warning: ${r.message}` };
};

import type { types } from '@slack/bolt';
import type { CoverAskState } from '../../machines/timeOff/coverAsk.ts';
import {
  escapeMrkdwn,
  type KnownBlock,
  mention,
  mrkdwn,
  plain,
  type SlackMessage,
  truncate,
} from '../slack/blocks/format.ts';
import { slackDate } from '../slack/time.ts';
import { COVER_ASK_ACTION, coverAskBlockId } from './coverAskIds.ts';
import { formatInstant, formatSpan, scheduleText } from './coverText.ts';

/**
 * The words of a cover ask (issue 20): the DM to each colleague asked (Accept / Can't), the hole
 * posted in a schedule's channel (Cover…), each updated in place as the ask moves on, and what the
 * opener and the channel are told when nobody took it. DMs are in their reader's zone; channel
 * posts use Slack date tokens (each reader sees their own zone).
 */

const plainText = (text: string): string => truncate(text.replace(/[*`]/g, ''), 3000);

const message = (lines: readonly string[], actions?: KnownBlock): SlackMessage => {
  const text = truncate(lines.join('\n'), 3000);
  const blocks: KnownBlock[] = [{ type: 'section', text: mrkdwn(text) }];
  if (actions) blocks.push(actions);
  return { text: plainText(text), blocks };
};

const policyOf = (state: CoverAskState): string => {
  const s = state.details?.slot;
  if (!s?.escalationPolicyName) return '';
  return ` (${escapeMrkdwn(s.escalationPolicyName)}${s.level === null ? '' : `, level ${s.level}`})`;
};

const whyOf = (state: CoverAskState): string => {
  const d = state.details;
  if (!d) return '';
  const absent = mention(d.absent.slackUserId);
  switch (d.reason.kind) {
    case 'time_off':
      return `${absent} is on leave then`;
    case 'leaver':
      return `${absent} has left`;
    default:
      return `${absent} asks for cover`;
  }
};

/** The span in a reader's zone (DMs) or as Slack date tokens (channels). */
const spanIn = (state: CoverAskState, tz: string | null): string => {
  const s = state.details?.slot;
  if (!s) return '';
  return tz === null ? `${slackDate(s.start)} → ${slackDate(s.end)}` : formatSpan(s.start, s.end, tz);
};

const shiftText = (state: CoverAskState, tz: string | null): string => {
  const s = state.details?.slot;
  return s ? `${scheduleText(s)}${policyOf(state)}, ${spanIn(state, tz)}` : 'a shift';
};

const closedLine = (state: CoverAskState, reader: string | null): string | null => {
  switch (state.status) {
    case 'taken': {
      const t = state.taken;
      if (!t) return null;
      if (reader === t.cover.slackUserId) {
        return ':white_check_mark: *You cover it.* Switchboard is making the override in the incident service; you will get a DM when it is there.';
      }
      const picked = t.by === t.cover.slackUserId ? '' : ` (picked by ${mention(t.by)})`;
      return `:white_check_mark: ${mention(t.cover.slackUserId)} took it${picked}.${reader ? ' Thanks anyway.' : ''}`;
    }
    case 'expired':
      return ':warning: *Nobody took it* before the shift: it is still uncovered.';
    case 'cancelled':
      return `:heavy_minus_sign: No longer needed${state.cancelledReason ? ` (${escapeMrkdwn(state.cancelledReason)})` : ''}.`;
    default:
      return null;
  }
};

/** The DM to one colleague asked to cover, with Accept / Can't while open. */
export const coverAskDm = (state: CoverAskState, reader: string, tz: string): SlackMessage => {
  const d = state.details;
  if (!d) return message(['Cover: nothing recorded.']);
  const lines = [
    `:raising_hand: Can you cover ${shiftText(state, tz)}? ${whyOf(state)}; ${mention(d.openedBy)} asks. The first to accept goes on call for it.`,
  ];
  const closed = closedLine(state, reader);
  if (closed) return message([...lines, closed]);
  if (state.declined.includes(reader)) {
    return message([...lines, ':ok_hand: You said you can’t. Thanks for answering.']);
  }
  const actions: types.ActionsBlock = {
    type: 'actions',
    block_id: coverAskBlockId(d.askId),
    elements: [
      {
        type: 'button',
        text: plain('Accept'),
        style: 'primary',
        action_id: COVER_ASK_ACTION.accept,
        value: d.askId,
      },
      { type: 'button', text: plain('Can’t'), action_id: COVER_ASK_ACTION.decline, value: d.askId },
    ],
  };
  return message(
    [...lines, `If nobody accepts by ${formatInstant(d.expiresAt, tz)}, ${mention(d.openedBy)} is told.`],
    actions,
  );
};

/** The hole in a schedule's channel: a Cover… button anyone (but the absent person) may take. */
export const coverAskPost = (state: CoverAskState): SlackMessage => {
  const d = state.details;
  if (!d) return message(['Cover: nothing recorded.']);
  const lines = [`:rotating_light: *Uncovered on-call shift*: ${shiftText(state, null)}. ${whyOf(state)}.`];
  const closed = closedLine(state, null);
  if (closed) return message([...lines, closed]);
  const actions: types.ActionsBlock = {
    type: 'actions',
    block_id: coverAskBlockId(d.askId),
    elements: [
      {
        type: 'button',
        text: plain('Cover…'),
        action_id: COVER_ASK_ACTION.take,
        value: d.askId,
        confirm: {
          title: plain('Cover this shift?'),
          text: plain(
            truncate(
              `You go on call for ${d.slot.scheduleName ?? 'this schedule'} for this shift: Switchboard makes the override in the incident service.`,
              300,
            ),
          ),
          confirm: plain('Cover it'),
          deny: plain('Back'),
        },
      },
    ],
  };
  return message([...lines, 'Anyone can take it: the first to click covers it.'], actions);
};

/** To the opener when nobody took it (in their zone). */
export const coverAskExpiredDm = (state: CoverAskState, tz: string): SlackMessage => {
  const d = state.details;
  if (!d) return message(['Cover: nothing recorded.']);
  const asked = d.asked.length;
  const answered =
    asked === 0
      ? ''
      : ` ${asked} colleague${asked === 1 ? ' was' : 's were'} asked${state.declined.length > 0 ? `; ${state.declined.length} said they can’t` : ''}.`;
  return message([
    `:warning: *Nobody covers* ${shiftText(state, tz)} (${whyOf(state)}).${answered} Cover it in the incident service, or ask someone directly.`,
  ]);
};

/** In the schedule's channel when nobody took an ask that was not posted there. */
export const coverAskExpiredNotice = (state: CoverAskState): SlackMessage =>
  message([
    `:warning: *Uncovered on-call shift*: ${shiftText(state, null)}. ${whyOf(state)}, and nobody asked could cover it.`,
  ]);

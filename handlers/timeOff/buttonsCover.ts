import type { AllMiddlewareArgs, App, BlockAction, SlackActionMiddlewareArgs } from '@slack/bolt';
import { parseCoverId } from '../../machines/timeOff/cover.ts';
import { parseTimeOffRequestId } from '../../machines/timeOff/streams.ts';
import { commandMetadata } from '../../src/application/inbox.ts';
import { ValidationError } from '../../src/core/errors.ts';
import {
  parseCoverValue,
  parseSlackUserId,
  TIME_OFF_COVER_ACTION,
  timeOffIdFromCoverBlockId,
} from '../../src/timeOff/coverIds.ts';
import { slackInputOf } from '../middleware/slackInput.ts';
import { clickedCard, NOT_A_REQUEST } from './actions.ts';
import { ephemeral, timeOffCommand } from './common.ts';
import type { TimeOffListenerDeps } from './deps.ts';

type ActionArgs = SlackActionMiddlewareArgs<BlockAction> & Pick<AllMiddlewareArgs, 'context'>;

const NOT_THIS_CARD =
  ":warning: That choice doesn't match the message it was made on, so nothing was changed. Use the request's own DM.";
const NOT_A_COVER =
  ":warning: That button doesn't name a cover Switchboard asked of you, so nothing was changed. Use the button in your own DM.";
const NOT_A_PERSON =
  ':warning: That is not a Slack user Switchboard can ask to cover, so nothing was changed.';

/**
 * "Approve and cover with …" on the approval card (issue 12): the top colleague's button, the
 * select of the other ranked colleagues, and a users_select for anyone else. Each becomes
 * `ApproveTimeOff { cover }`: the decider checks it as any Approve (only the current approver, or a
 * member of the HR channel it was sent to, on the request's own card) and that there is a shift to
 * cover, the cover is not the requester and is not away during the shifts now (the module's enrich
 * step looks that up, and Slack's word on the HR channel's members).
 * Everything in the payload is hostile: the value (or pick) and the actions block must name the same
 * request, the cover must be a Slack user id; anything else is refused here AND recorded.
 */
export const registerTimeOffCoverActions = (app: App, deps: TimeOffListenerDeps): void => {
  const { inbox, logger } = deps;

  const refuse = async (args: ActionArgs, why: string, text: string, reason: string) => {
    const input = slackInputOf(args.context);
    logger.warn({ input: input.name, actor: input.actor, reason }, 'a time-off cover click was refused');
    await inbox.accept({ input, rejection: new ValidationError(why, { details: { reason } }) });
    await args.ack();
    await args.respond({ ...ephemeral(text), replace_original: false }).catch(() => undefined);
  };

  const approve = async (args: ActionArgs, timeOffId: string, slackUserId: string) => {
    const input = slackInputOf(args.context);
    const command = timeOffCommand(input, {
      type: 'ApproveTimeOff',
      data: { timeOffId, card: clickedCard(args), cover: { slackUserId } },
    });
    await inbox.accept({ input, commands: [command] });
    await args.ack();
  };

  /** The request named by the actions block the element sits in (null when it is not ours). */
  const blockRequest = (args: ActionArgs): string | null =>
    timeOffIdFromCoverBlockId((args.action as { block_id?: unknown }).block_id);

  /** The button and the select: the value names the request and the cover. */
  const byValue = async (args: ActionArgs, value: unknown) => {
    const parsed = parseCoverValue(value);
    if (!parsed) {
      await refuse(args, 'the cover choice names no time-off request', NOT_A_REQUEST, 'unknown_request');
      return;
    }
    const fromBlock = blockRequest(args);
    if (fromBlock !== null && fromBlock !== parsed.timeOffId) {
      await refuse(
        args,
        'the cover choice names another request than its message',
        NOT_THIS_CARD,
        'other_card',
      );
      return;
    }
    await approve(args, parsed.timeOffId, parsed.slackUserId);
  };

  app.action(TIME_OFF_COVER_ACTION.approveCover, async (raw) => {
    const args = raw as unknown as ActionArgs;
    await byValue(args, (args.action as { value?: unknown }).value);
  });

  app.action(TIME_OFF_COVER_ACTION.approveCoverPick, async (raw) => {
    const args = raw as unknown as ActionArgs;
    await byValue(args, (args.action as { selected_option?: { value?: unknown } }).selected_option?.value);
  });

  /**
   * "Can't cover" in the cover's own DM (issue 20): the value is the cover id (parsed, hostile);
   * the decider checks the clicker is the cover (`DeclineCover`), and refusals are said to them.
   */
  app.action(TIME_OFF_COVER_ACTION.cant, async (raw) => {
    const args = raw as unknown as ActionArgs;
    const coverId = parseCoverId((args.action as { value?: unknown }).value);
    if (coverId === null) {
      await refuse(args, 'the button names no cover', NOT_A_COVER, 'unknown_cover');
      return;
    }
    const input = slackInputOf(args.context);
    await inbox.accept({
      input,
      commands: [{ type: 'DeclineCover', data: { coverId }, metadata: commandMetadata(input, 0) }],
    });
    await args.ack();
  });

  // Issue 20: "Approve and ask for cover": approved, the ranked colleagues asked by DM (coverAsk.reactor.ts).
  app.action(TIME_OFF_COVER_ACTION.approveAsk, async (raw) => {
    const args = raw as unknown as ActionArgs;
    const timeOffId = parseTimeOffRequestId((args.action as { value?: unknown }).value);
    const fromBlock = blockRequest(args);
    if (timeOffId === null || (fromBlock !== null && fromBlock !== timeOffId)) {
      await refuse(
        args,
        'the ask for cover names no request of its message',
        NOT_A_REQUEST,
        'unknown_request',
      );
      return;
    }
    const input = slackInputOf(args.context);
    const command = timeOffCommand(input, {
      type: 'ApproveTimeOff',
      data: { timeOffId, card: clickedCard(args), askForCover: true },
    });
    await inbox.accept({ input, commands: [command] });
    await args.ack();
  });

  app.action(TIME_OFF_COVER_ACTION.approveCoverUser, async (raw) => {
    const args = raw as unknown as ActionArgs;
    const timeOffId = blockRequest(args);
    if (timeOffId === null) {
      await refuse(args, 'the cover pick names no time-off request', NOT_A_REQUEST, 'unknown_request');
      return;
    }
    const slackUserId = parseSlackUserId((args.action as { selected_user?: unknown }).selected_user);
    if (slackUserId === null) {
      await refuse(args, 'the cover pick is not a Slack user', NOT_A_PERSON, 'invalid_cover');
      return;
    }
    await approve(args, timeOffId, slackUserId);
  });
};

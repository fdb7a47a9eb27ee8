import type { AllMiddlewareArgs, App, BlockAction, SlackActionMiddlewareArgs } from '@slack/bolt';
import { parseCoverAskId } from '../../machines/timeOff/coverAsk.ts';
import { commandMetadata } from '../../src/application/inbox.ts';
import { ValidationError } from '../../src/core/errors.ts';
import type { Command } from '../../src/core/messages.ts';
import type { HandlerDeps } from '../../src/lifecycles/lifecycle.ts';
import { askIdFromBlockId, COVER_ASK_ACTION, coverIdForAsk } from '../../src/timeOff/coverAskIds.ts';
import { slackInputOf } from '../middleware/slackInput.ts';
import { ephemeral } from './common.ts';

export type CoverAskListenerDeps = HandlerDeps &
  Readonly<{
    coverAsks: Readonly<{
      /** A person's name for the cover's record (HR's, else Slack's); never throws. */
      nameOf(slackUserId: string): Promise<string>;
    }>;
  }>;

type ActionArgs = SlackActionMiddlewareArgs<BlockAction> & Pick<AllMiddlewareArgs, 'context'>;

const NOT_AN_ASK =
  ":warning: That button doesn't name a shift Switchboard asked to cover, so nothing was changed. Use the message's own buttons.";

/**
 * The buttons of a cover ask (issue 20): Accept / Can't in a colleague's DM, Cover… on a hole posted
 * in a schedule's channel (the clicker covers it). The value carries only the ask id; it must be
 * one of ours and match the actions block it sits in, or the click is refused, said and recorded.
 * Who may accept is the decider's to check against what the ask recorded (asked, open to anyone,
 * never the absent person); the first accept wins there and a later one is refused naming who
 * took it (answered on the click's response_url, src/timeOff/rejections.ts).
 */
export const registerCoverAskListeners = (app: App, deps: CoverAskListenerDeps): void => {
  const { inbox, logger } = deps;

  const askOf = async (args: ActionArgs): Promise<string | null> => {
    const input = slackInputOf(args.context);
    const action = args.action as { value?: unknown; block_id?: unknown };
    const askId = parseCoverAskId(action.value);
    const fromBlock = askIdFromBlockId(action.block_id);
    if (askId !== null && (fromBlock === null || fromBlock === askId)) return askId;
    const why =
      askId === null ? 'the value names no cover ask' : 'the value names another ask than its block';
    logger.warn({ input: input.name, actor: input.actor, why }, 'a cover ask click was refused');
    await inbox.accept({
      input,
      rejection: new ValidationError(why, { details: { reason: 'unknown_ask' } }),
    });
    await args.ack();
    await args.respond({ ...ephemeral(NOT_AN_ASK), replace_original: false }).catch(() => undefined);
    return null;
  };

  const accept = async (args: ActionArgs) => {
    const askId = await askOf(args);
    if (askId === null) return;
    const input = slackInputOf(args.context);
    const me = args.body.user.id;
    const command: Command = {
      type: 'AcceptCoverAsk',
      data: {
        askId,
        cover: { slackUserId: me, displayName: (await deps.coverAsks.nameOf(me)).slice(0, 200) },
        by: me,
        coverId: coverIdForAsk(askId),
      },
      metadata: commandMetadata(input, 0),
    };
    await inbox.accept({ input, commands: [command] });
    await args.ack();
  };

  app.action(COVER_ASK_ACTION.accept, async (raw) => accept(raw as unknown as ActionArgs));
  app.action(COVER_ASK_ACTION.take, async (raw) => accept(raw as unknown as ActionArgs));

  app.action(COVER_ASK_ACTION.decline, async (raw) => {
    const args = raw as unknown as ActionArgs;
    const askId = await askOf(args);
    if (askId === null) return;
    const input = slackInputOf(args.context);
    const command: Command = {
      type: 'DeclineCoverAsk',
      data: { askId, slackUserId: args.body.user.id },
      metadata: commandMetadata(input, 0),
    };
    await inbox.accept({ input, commands: [command] });
    await args.ack();
  });
};

import type { AllMiddlewareArgs, App, BlockAction, SlackActionMiddlewareArgs } from '@slack/bolt';
import { ValidationError } from '../../src/core/errors.ts';
import { VERIFICATION_ACTION } from '../../src/verification/blocks/ids.ts';
import { codeModal, readCodeButtonValue } from '../../src/verification/blocks/messages.ts';
import { slackInputOf } from '../middleware/slackInput.ts';
import { ephemeral, type VerificationListenerDeps, verificationCommand } from './deps.ts';

type ActionArgs = SlackActionMiddlewareArgs<BlockAction> & AllMiddlewareArgs;

const TAMPERED =
  ':warning: That button does not name a verification. Use the buttons of Switchboard’s latest DM.';

/**
 * The buttons of the code DM: "Enter code" opens the modal; "Resend" and "Call me instead" become
 * commands on the clicking person's own stream (who acts comes from the click, never the value;
 * the value names the attempt, which the decider checks is the person's current one).
 */
export const registerVerificationActions = (app: App, deps: VerificationListenerDeps): void => {
  const { inbox, logger } = deps;
  const v = deps.verification;

  const buttonValue = (args: ActionArgs) => readCodeButtonValue((args.action as { value?: unknown }).value);

  app.action(VERIFICATION_ACTION.enterCode, async (raw) => {
    const args = raw as unknown as ActionArgs;
    const input = slackInputOf(args.context);
    const value = buttonValue(args);
    await inbox.accept({
      input,
      ...(value ? {} : { rejection: new ValidationError('button names no verification') }),
    });
    await args.ack();
    if (!value) {
      await args.respond(ephemeral(TAMPERED)).catch(() => undefined);
      return;
    }
    try {
      await v.openView(args.body.trigger_id, codeModal(value));
    } catch (e) {
      logger.warn({ err: e }, 'could not open the code form');
      await args
        .respond(
          ephemeral(
            ":warning: Slack didn't let Switchboard open the code form in time. Click *Enter code* again.",
          ),
        )
        .catch(() => undefined);
    }
  });

  const move =
    (type: 'ResendVerificationCode' | 'SwitchVerificationToVoice', pending: string) =>
    async (raw: unknown) => {
      const args = raw as ActionArgs;
      const input = slackInputOf(args.context);
      const value = buttonValue(args);
      const slackUserId = args.body.user.id;
      if (!value) {
        await inbox.accept({ input, rejection: new ValidationError('button names no verification') });
        await args.ack();
        await args.respond(ephemeral(TAMPERED)).catch(() => undefined);
        return;
      }
      const command =
        type === 'ResendVerificationCode'
          ? verificationCommand(input, {
              type,
              data: { slackUserId, attemptId: value.attemptId, orgStarts: null, orgLimit: null },
            })
          : verificationCommand(input, { type, data: { slackUserId, attemptId: value.attemptId } });
      await inbox.accept({ input, commands: [command] });
      await args.ack();
      await args.respond(ephemeral(pending)).catch(() => undefined);
    };

  app.action(
    VERIFICATION_ACTION.resend,
    move('ResendVerificationCode', ':hourglass_flowing_sand: Sending a new code…'),
  );
  app.action(
    VERIFICATION_ACTION.voice,
    move('SwitchVerificationToVoice', ':telephone_receiver: Switchboard will call you with the code…'),
  );
};

import type { App } from '@slack/bolt';
import { commandMetadata } from '../../src/application/inbox.ts';
import { ValidationError } from '../../src/core/errors.ts';
import { VERIFICATION_FIELD, VERIFICATION_VIEW } from '../../src/verification/blocks/ids.ts';
import { readCode, readCodeButtonValue } from '../../src/verification/blocks/messages.ts';
import { slackInputOf } from '../middleware/slackInput.ts';
import type { VerificationListenerDeps } from './deps.ts';

type Values = Readonly<Record<string, Readonly<Record<string, { value?: unknown }>>>>;

/**
 * The code modal's submission. The typed code is one of the module's sensitive action ids (the
 * recorded input keeps `[Redacted]`); here it is checked (digits, the right length) and sealed
 * under a key that only this process holds (codeVault.ts) before it goes into the command. The ack
 * waits a moment for the vendor's answer so a wrong code reads in the form itself ("Wrong code, 2
 * tries left"); when the answer takes longer the modal closes and the DM says it.
 */
export const registerVerificationViews = (app: App, deps: VerificationListenerDeps): void => {
  const { inbox } = deps;
  const v = deps.verification;
  const block = VERIFICATION_FIELD.codeBlock;

  app.view(VERIFICATION_VIEW.code, async ({ ack, view, body, context }) => {
    const input = slackInputOf(context);
    const value = readCodeButtonValue(view.private_metadata);
    if (!value) {
      await inbox.accept({ input, rejection: new ValidationError('code form names no verification') });
      await ack({
        response_action: 'errors',
        errors: { [block]: 'This form is out of date: click Enter code in the latest DM.' },
      });
      return;
    }
    const raw = (view.state.values as Values)[block]?.[VERIFICATION_FIELD.code]?.value;
    const code = readCode(raw, value.codeLength);
    if (!code.ok) {
      await inbox.accept({ input, rejection: new ValidationError(`code form: ${code.problem}`) });
      await ack({ response_action: 'errors', errors: { [block]: code.problem } });
      return;
    }
    const slackUserId = body.user.id;
    const problem = await v.codeProblem(slackUserId, value.attemptId).catch(() => null);
    if (problem) {
      await inbox.accept({ input, rejection: new ValidationError(`code form: ${problem}`) });
      await ack({ response_action: 'errors', errors: { [block]: problem } });
      return;
    }
    const metadata = commandMetadata(input);
    const sealedCode = v.vault.seal(metadata.commandId, code.code);
    await inbox.accept({
      input,
      commands: [
        {
          type: 'CheckVerificationCode',
          data: { slackUserId, attemptId: value.attemptId, sealedCode },
          metadata,
        },
      ],
    });
    const answer = await v.checkOutcome(slackUserId, metadata.commandId, v.checkBudgetMs).catch(() => null);
    if (answer?.outcome === 'wrong_code') {
      await ack({
        response_action: 'errors',
        errors: {
          [block]:
            answer.triesLeft > 0
              ? `Wrong code, ${answer.triesLeft} ${answer.triesLeft === 1 ? 'try' : 'tries'} left.`
              : 'Wrong code, and that was the last try. Start again with /verify.',
        },
      });
      return;
    }
    if (answer?.outcome === 'lost') {
      await ack({
        response_action: 'errors',
        errors: { [block]: 'Switchboard restarted meanwhile: please enter the code again.' },
      });
      return;
    }
    await ack();
  });
};

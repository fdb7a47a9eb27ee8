import type { App } from '@slack/bolt';
import { ValidationError } from '../../src/core/errors.ts';
import { code, decodeSlackText, escapeMrkdwn, truncate } from '../../src/slack/text.ts';
import { parsePhone } from '../../src/verification/phone.ts';
import { slackInputOf } from '../middleware/slackInput.ts';
import { replies } from '../replies.ts';
import { ephemeral, type VerificationListenerDeps, verificationCommand } from './deps.ts';

export const VERIFY_USAGE =
  '/verify <phone number, e.g. +44 7700 900123> | status | cancel | test | remove | help';

export const verifyHelp = (): string =>
  [
    '*Phone verification*: Switchboard pages you by SMS, then by phone call, when an incident waits for you.',
    '• `/verify +44 7700 900123`: Switchboard texts a code to that number (international form, with +); enter it from the DM.',
    '• `/verify status`: your verified number (masked), whether Switchboard can page you there, and where a verification stands.',
    '• `/verify cancel`: cancel a verification in progress, from 30 seconds after the code is sent until Switchboard calls you with it.',
    '• `/verify test`: a test SMS and a test call to your verified number.',
    '• `/verify remove`: forget your number. Switchboard stops paging you and can never read it again; `/verify &lt;number&gt;` starts over.',
    'Verifying again (the same number or a new one) is always possible: it also opts you back in after a STOP.',
    'Limits: 5 codes per person and 10 minutes, 3 wrong codes per code.',
  ].join('\n');

/**
 * `/verify …`. The number is parsed here (libphonenumber-js), sealed at once (the recorded command
 * never holds it in clear) and keyed for comparison; the rest is decided on the person's stream.
 */
export const registerVerifyCommand = (app: App, deps: VerificationListenerDeps): void => {
  const { inbox } = deps;
  const v = deps.verification;
  app.command('/verify', async ({ command, ack, context }) => {
    const input = slackInputOf(context);
    const slackUserId = command.user_id;
    // Decoded once, here (Slack sends `&`, `<`, `>` as entities).
    const text = decodeSlackText(command.text).trim();
    const word = text.toLowerCase();
    if (word === '' || word === 'help') {
      await inbox.accept({ input });
      await ack(ephemeral(verifyHelp()));
      return;
    }
    if (word === 'status') {
      await inbox.accept({ input });
      await ack(ephemeral(await v.status(slackUserId)));
      return;
    }
    if (word === 'remove') {
      await inbox.accept({
        input,
        commands: [verificationCommand(input, { type: 'RemoveVerifiedPhone', data: { slackUserId } })],
      });
      await ack(ephemeral(':wastebasket: Forgetting your number… Switchboard will DM you once it is gone.'));
      return;
    }
    if (word === 'cancel' || word === 'test') {
      await inbox.accept({
        input,
        commands: [
          verificationCommand(input, {
            type: word === 'cancel' ? 'CancelVerification' : 'TestVerifiedPhone',
            data: { slackUserId },
          }),
        ],
      });
      await ack(
        ephemeral(
          word === 'cancel'
            ? ':hourglass_flowing_sand: Cancelling your verification…'
            : ':hourglass_flowing_sand: Sending a test SMS and call to your verified number…',
        ),
      );
      return;
    }
    const parsed = parsePhone(text);
    if (!parsed.ok) {
      const looksLikeWord = /^[a-z]+$/i.test(text);
      const problem = looksLikeWord
        ? `${code(truncate(text, 20))} is not something \`/verify\` knows.`
        : escapeMrkdwn(parsed.problem);
      await inbox.accept({ input, rejection: new ValidationError(problem) });
      await ack(replies.invalid(`:pencil2: ${problem}`, VERIFY_USAGE));
      return;
    }
    // Under the person's own data key: forgetting them makes every copy unreadable. A key that can
    // no longer be opened is replaced (PhoneSealer.sealFor), so /verify always works again.
    let sealed: Readonly<{ number: string; numberKey: string }>;
    try {
      sealed = {
        number: await v.phones.sealFor(slackUserId, parsed.digits),
        numberKey: await v.phones.keyFor(slackUserId, parsed.digits),
      };
    } catch (error) {
      // Never Slack's "dispatch_failed": say it, and keep the operators' line.
      deps.logger.error(
        { err: error, code: 'SB_VERIFY_NOT_STARTED' },
        'a /verify number could not be sealed',
      );
      const problem = 'Switchboard could not start a verification just now. Please try again in a minute.';
      await inbox.accept({ input, rejection: new ValidationError(problem) }).catch(() => undefined);
      await ack(ephemeral(`:warning: ${problem}`));
      return;
    }
    await inbox.accept({
      input,
      commands: [
        verificationCommand(input, {
          type: 'StartVerification',
          data: {
            slackUserId,
            number: sealed.number,
            masked: parsed.masked,
            numberKey: sealed.numberKey,
            codeLength: v.codeLength,
            orgStarts: null,
            orgLimit: null,
          },
        }),
      ],
    });
    await ack(
      ephemeral(`:hourglass_flowing_sand: Sending a code to ${parsed.masked}… Switchboard will DM you.`),
    );
  });
};

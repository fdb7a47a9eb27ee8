import {
  type KnownBlock,
  type ModalView,
  mrkdwn,
  plain,
  type SlackMessage,
} from '../../slack/blocks/format.ts';
import { slackDate } from '../../slack/time.ts';
import { VERIFICATION_ACTION, VERIFICATION_FIELD, VERIFICATION_VIEW } from './ids.ts';

/**
 * What people read about their verification: the DMs (with "Enter code", "Resend", "Call me
 * instead"), the code modal, the App Home section. Numbers only ever masked (`+44 •••• ••0123`).
 */

/** What a button of the code DM carries: the attempt, and the code length the modal checks. */
export type CodeButtonValue = Readonly<{ attemptId: string; codeLength: number }>;

const message = (text: string, blocks?: KnownBlock[]): SlackMessage => ({
  text,
  blocks: blocks ?? [{ type: 'section', text: mrkdwn(text) }],
});

const codeButtons = (value: CodeButtonValue, withResend: boolean): KnownBlock => ({
  type: 'actions',
  block_id: `verification_actions`,
  elements: [
    {
      type: 'button',
      action_id: VERIFICATION_ACTION.enterCode,
      text: plain('Enter code'),
      style: 'primary',
      value: JSON.stringify(value),
    },
    ...(withResend
      ? [
          {
            type: 'button' as const,
            action_id: VERIFICATION_ACTION.resend,
            text: plain('Resend'),
            value: JSON.stringify(value),
          },
        ]
      : []),
    {
      type: 'button',
      action_id: VERIFICATION_ACTION.voice,
      text: plain('Call me instead'),
      value: JSON.stringify(value),
    },
  ],
});

/**
 * The code DM. `validUntil` is the end of the SMS step, the lifetime the vendor's SMS states
 * ("Valid for 5 minutes"), so the SMS and the DM give one lifetime; then the call reads the same
 * code out, until `expiresAt` (movedToVoiceMessage).
 */
export const codeSentMessage = (
  masked: string,
  value: CodeButtonValue,
  validUntil: string,
  validMinutes: number,
): SlackMessage => {
  const text = `:iphone: Switchboard sent a ${value.codeLength}-digit code by SMS to ${masked}. It is valid for ${validMinutes} minutes. Enter it here before ${slackDate(validUntil)}; if you don't have it by then, Switchboard calls you and reads it out.`;
  return message(text, [{ type: 'section', text: mrkdwn(text) }, codeButtons(value, true)]);
};

export const movedToVoiceMessage = (
  masked: string,
  value: CodeButtonValue,
  expiresAt: string,
): SlackMessage => {
  const text = `:telephone_receiver: Switchboard is calling ${masked} to read you the code. Enter it here before ${slackDate(expiresAt)}.`;
  return message(text, [{ type: 'section', text: mrkdwn(text) }, codeButtons(value, false)]);
};

export const wrongCodeMessage = (triesLeft: number, value: CodeButtonValue): SlackMessage => {
  const text = `:x: Wrong code, ${triesLeft} ${triesLeft === 1 ? 'try' : 'tries'} left.`;
  return message(text, [{ type: 'section', text: mrkdwn(text) }, codeButtons(value, false)]);
};

export const codeLostMessage = (value: CodeButtonValue): SlackMessage => {
  const text =
    ':arrows_counterclockwise: Switchboard restarted before it could check your code, and it never keeps codes. Please enter the code again.';
  return message(text, [{ type: 'section', text: mrkdwn(text) }, codeButtons(value, false)]);
};

export const verifiedMessage = (masked: string, changedFrom: string | null): SlackMessage =>
  message(
    changedFrom
      ? `:white_check_mark: ${masked} is verified and replaces ${changedFrom}, which has been told by SMS. \`/verify test\` sends it a test SMS and call.`
      : `:white_check_mark: ${masked} is verified. Switchboard can page you there. \`/verify test\` sends it a test SMS and call.`,
  );

export const FAILURE_TEXT: Readonly<Record<string, string>> = {
  too_many_wrong_codes:
    ':no_entry: Three wrong codes: this verification has failed. Start again with `/verify &lt;your phone number&gt;`.',
  start_again:
    ':no_entry: The communications service ended this verification (it expired, or had too many tries). Start again with `/verify &lt;your phone number&gt;`.',
  vendor_failed:
    ':no_entry: The communications service could not deliver your code. Check the number and start again with `/verify &lt;your phone number&gt;`.',
  not_started: ":warning: Switchboard couldn't send your code",
};

export const failedMessage = (reason: string, detail: string): SlackMessage =>
  message(
    reason === 'not_started'
      ? `${FAILURE_TEXT.not_started}: ${detail}`
      : (FAILURE_TEXT[reason] ?? `:no_entry: The verification failed. ${detail}`),
  );

export const expiredMessage = (masked: string): SlackMessage =>
  message(
    `:hourglass: The code sent to ${masked} has expired. Start again with \`/verify &lt;your phone number&gt;\`.`,
  );

export const cancelledMessage = (masked: string): SlackMessage =>
  message(`:wastebasket: The verification of ${masked} is cancelled.`);

/**
 * A cancel or resend the vendor refused. `allowedFrom`: when it becomes possible (too early);
 * `expiresAt`: when the code stops working (too late: the call is reading it out).
 */
export const cancelRefusedMessage = (
  action: 'cancel' | 'resend',
  reason: 'too_early' | 'too_late',
  times: Readonly<{ allowedFrom: string | null; expiresAt: string | null }> = {
    allowedFrom: null,
    expiresAt: null,
  },
): SlackMessage => {
  const what = action === 'cancel' ? 'cancel the verification' : 'ask for a new code';
  if (reason === 'too_early') {
    return message(
      times.allowedFrom
        ? `:hourglass_flowing_sand: Not yet: you can ${what} from ${slackDate(times.allowedFrom, { format: 'dateTimeSecs' })}.`
        : `:hourglass_flowing_sand: Not yet: you can ${what} half a minute after the code is sent.`,
    );
  }
  return message(
    `:telephone_receiver: Too late to ${what}: Switchboard is calling you with the code now.${times.expiresAt ? ` It stops working ${slackDate(times.expiresAt)};` : ' Once it stops working,'} then start again with \`/verify &lt;your phone number&gt;\`.`,
  );
};

export const testSentMessage = (masked: string, sms: boolean, call: boolean): SlackMessage =>
  message(
    `:test_tube: Switchboard sent ${sms ? 'a test SMS' : 'no SMS'} and ${call ? 'placed a test call' : 'no call'} to ${masked}.`,
  );

export const upstreamFailedMessage = (what: string, reason: string): SlackMessage =>
  message(`:warning: Switchboard couldn't ${what}: ${reason}`);

/** The code modal: one input, the code; the attempt and length travel in `private_metadata`. */
export const codeModal = (value: CodeButtonValue): ModalView => ({
  type: 'modal',
  callback_id: VERIFICATION_VIEW.code,
  private_metadata: JSON.stringify(value),
  title: plain('Verify your phone'),
  submit: plain('Verify'),
  close: plain('Cancel'),
  blocks: [
    {
      type: 'input',
      block_id: VERIFICATION_FIELD.codeBlock,
      label: plain(`The ${value.codeLength}-digit code`),
      element: {
        type: 'plain_text_input',
        action_id: VERIFICATION_FIELD.code,
        min_length: value.codeLength,
        max_length: value.codeLength,
        placeholder: plain('123456'.padEnd(value.codeLength, '0').slice(0, value.codeLength)),
      },
    },
  ],
});

/** A button's or modal's value, checked (it comes back from Slack and may have been tampered with). */
export const readCodeButtonValue = (raw: unknown): CodeButtonValue | null => {
  if (typeof raw !== 'string' || raw.length > 300) return null;
  try {
    const v = JSON.parse(raw) as { attemptId?: unknown; codeLength?: unknown };
    if (typeof v.attemptId !== 'string' || !/^[0-9a-f-]{36}$/.test(v.attemptId)) return null;
    if (
      typeof v.codeLength !== 'number' ||
      !Number.isInteger(v.codeLength) ||
      v.codeLength < 4 ||
      v.codeLength > 10
    ) {
      return null;
    }
    return { attemptId: v.attemptId, codeLength: v.codeLength };
  } catch {
    return null;
  }
};

/** The code typed in the modal, or what is wrong with it. */
export const readCode = (
  raw: unknown,
  codeLength: number,
): Readonly<{ ok: true; code: string }> | Readonly<{ ok: false; problem: string }> => {
  const text = typeof raw === 'string' ? raw.replace(/\s+/g, '') : '';
  if (text === '') return { ok: false, problem: 'Enter the code from the SMS or the call.' };
  if (!/^\d+$/.test(text)) return { ok: false, problem: 'The code is digits only.' };
  if (text.length !== codeLength) return { ok: false, problem: `The code has ${codeLength} digits.` };
  return { ok: true, code: text };
};

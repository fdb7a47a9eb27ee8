import type { ViewStateValue } from '@slack/bolt';
import { type ModalView, mrkdwn, plain, SLACK_LIMITS, truncate } from '../../slack/blocks/format.ts';
import { TIME_OFF_FIELD, TIME_OFF_VIEW, timeOffIdFromValue } from './timeOffIds.ts';

/** `view.state.values` as Slack sends it. */
export type ViewValues = Readonly<Record<string, Readonly<Record<string, ViewStateValue>>>>;

export type Submission<T> =
  | Readonly<{ ok: true; value: T }>
  | Readonly<{ ok: false; errors: Record<string, string> }>;

/** Longest reason kept (the requester reads it in a DM). */
export const MAX_DENY_REASON = 1000;

/**
 * Deny with reason: opened from the approver's card. The request id travels in
 * `private_metadata` and is checked again on submission (and by the decider, who checks the
 * person), never trusted.
 */
export const denyWithReasonModal = (input: Readonly<{ timeOffId: string; label: string }>): ModalView => {
  const metadata = JSON.stringify({ timeOffId: input.timeOffId });
  if (metadata.length > SLACK_LIMITS.privateMetadata)
    throw new RangeError('private_metadata over 3000 characters');
  return {
    type: 'modal',
    callback_id: TIME_OFF_VIEW.deny,
    private_metadata: metadata,
    title: plain('Deny time off'),
    submit: plain('Deny'),
    close: plain('Back'),
    blocks: [
      // `label` is built by the caller from escaped parts (formatRange, personText).
      { type: 'section', text: mrkdwn(truncate(input.label, 2000)) },
      {
        type: 'input',
        block_id: TIME_OFF_FIELD.denyReason.blockId,
        label: plain('Reason (the requester sees it)'),
        element: {
          type: 'plain_text_input',
          action_id: TIME_OFF_FIELD.denyReason.actionId,
          multiline: true,
          max_length: MAX_DENY_REASON,
          placeholder: plain('e.g. Release week: could you take the week after?'),
        },
      },
    ],
  };
};

const parseMetadata = (raw: string): Record<string, unknown> => {
  try {
    const parsed: unknown = JSON.parse(raw);
    return typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
};

export const readDenySubmission = (
  values: ViewValues,
  privateMetadataJson: string,
): Submission<Readonly<{ timeOffId: string; reason: string }>> => {
  const { blockId, actionId } = TIME_OFF_FIELD.denyReason;
  const timeOffId = timeOffIdFromValue(parseMetadata(privateMetadataJson).timeOffId);
  if (timeOffId === null) {
    return { ok: false, errors: { [blockId]: 'This form lost its request; open it again from the DM.' } };
  }
  const reason = values[blockId]?.[actionId]?.value?.trim() ?? '';
  if (reason === '') return { ok: false, errors: { [blockId]: 'Say why, or use Deny without a reason.' } };
  if (reason.length > MAX_DENY_REASON)
    return { ok: false, errors: { [blockId]: `At most ${MAX_DENY_REASON} characters.` } };
  return { ok: true, value: { timeOffId, reason } };
};

import { MAX_STATUS_UPDATE } from '../../../machines/incident/statusUpdates.ts';
import { escapeMrkdwn, type ModalView, mrkdwn, plain, truncate } from '../../slack/blocks/format.ts';
import { INCIDENT_FIELD, INCIDENT_VIEW } from './incidentIds.ts';
import type { Submission, ViewValues } from './incidentModals.ts';

/**
 * Issue 22 item 3: the status update form (from the card's "Post update" button, or
 * `/incident update <n>` with no text). What it posts goes to the incident's channels and to the
 * channels subscribed to its service as stakeholders.
 */
export const statusUpdateModal = (input: Readonly<{ streamId: string; label: string }>): ModalView => ({
  type: 'modal',
  callback_id: INCIDENT_VIEW.update,
  private_metadata: JSON.stringify({ streamId: input.streamId }),
  title: plain('Status update'),
  submit: plain('Post update'),
  close: plain('Cancel'),
  blocks: [
    { type: 'section', text: mrkdwn(`*${escapeMrkdwn(truncate(input.label, 500))}*`) },
    {
      type: 'input',
      block_id: INCIDENT_FIELD.updateText.blockId,
      label: plain('What is happening, for people who are not responding'),
      element: {
        type: 'plain_text_input',
        action_id: INCIDENT_FIELD.updateText.actionId,
        multiline: true,
        max_length: MAX_STATUS_UPDATE,
      },
    },
    {
      type: 'context',
      elements: [mrkdwn("Posted in the incident's channels and its service's stakeholder channels.")],
    },
  ],
});

/** The submission: the incident (from private_metadata, checked by the caller) and the text. */
export const readStatusUpdateSubmission = (
  values: ViewValues,
  privateMetadataJson: string,
): Submission<Readonly<{ streamId: string; text: string }>> => {
  const text =
    values[INCIDENT_FIELD.updateText.blockId]?.[INCIDENT_FIELD.updateText.actionId]?.value?.trim() ?? '';
  let streamId: unknown;
  try {
    streamId = (JSON.parse(privateMetadataJson) as { streamId?: unknown }).streamId;
  } catch {
    streamId = undefined;
  }
  const block = INCIDENT_FIELD.updateText.blockId;
  if (typeof streamId !== 'string' || streamId === '') {
    return { ok: false, errors: { [block]: 'This form lost its incident; open it again.' } };
  }
  if (text === '') return { ok: false, errors: { [block]: 'Write something.' } };
  if (text.length > MAX_STATUS_UPDATE) {
    return { ok: false, errors: { [block]: `Keep it to ${MAX_STATUS_UPDATE} characters.` } };
  }
  return { ok: true, value: { streamId, text } };
};

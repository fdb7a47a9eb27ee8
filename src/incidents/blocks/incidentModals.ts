import type { types, ViewStateValue } from '@slack/bolt';
import type { Urgency } from '../../../machines/incident/events.ts';
import {
  escapeMrkdwn,
  type ModalView,
  mrkdwn,
  plain,
  SLACK_LIMITS,
  truncate,
} from '../../slack/blocks/format.ts';
import { INCIDENT_FIELD, INCIDENT_VIEW } from './incidentIds.ts';

// Modals for the incident moves that need more input than a click. Each has a builder (opened with
// `views.open` inside the 3 s trigger window, so it needs no upstream data it has not got) and a
// reader for the submission (`view.state.values`) that returns either the values or per-field
// errors for `ack({ response_action: 'errors', errors })`.

/** `view.state.values` as Slack sends it. */
export type ViewValues = Readonly<Record<string, Readonly<Record<string, ViewStateValue>>>>;

export type Submission<T> =
  | Readonly<{ ok: true; value: T }>
  | Readonly<{ ok: false; errors: Record<string, string> }>;

export type ServiceOption = Readonly<{ id: string; name: string }>;

/** Longest title we accept; the incident service's own limit is not published. */
export const MAX_TITLE = 255;
/** Longest note (Slack's input limit). */
export const MAX_NOTE = 3000;

const field = (values: ViewValues, f: { blockId: string; actionId: string }): ViewStateValue | undefined =>
  values[f.blockId]?.[f.actionId];

const metadata = (raw: string): Record<string, unknown> => {
  try {
    const parsed: unknown = JSON.parse(raw);
    return typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
};

const privateMetadata = (data: Record<string, unknown>): string => {
  const json = JSON.stringify(data);
  if (json.length > SLACK_LIMITS.privateMetadata)
    throw new RangeError('private_metadata over 3000 characters');
  return json;
};

/**
 * The trigger form. With `services` (at most 100 are listed) the service is a select; without
 * (they could not be fetched within the trigger window) it is a text field the handler resolves.
 */
export const triggerIncidentModal = (
  input: Readonly<{
    channel: string | null;
    services?: readonly ServiceOption[];
    initial?: Readonly<{ serviceId?: string; serviceText?: string; title?: string; urgency?: Urgency }>;
  }>,
): ModalView => {
  const services = (input.services ?? []).slice(0, SLACK_LIMITS.staticSelectOptions);
  const option = (s: ServiceOption): types.PlainTextOption => ({
    text: plain(truncate(s.name, SLACK_LIMITS.optionText)),
    value: s.id,
  });
  const initialService = services.find((s) => s.id === input.initial?.serviceId);
  const serviceElement: types.InputBlockElement =
    services.length > 0
      ? {
          type: 'static_select',
          action_id: INCIDENT_FIELD.triggerService.actionId,
          placeholder: plain('Pick a service'),
          options: services.map(option),
          ...(initialService ? { initial_option: option(initialService) } : {}),
        }
      : {
          type: 'plain_text_input',
          action_id: INCIDENT_FIELD.triggerService.actionId,
          placeholder: plain('Service name or id'),
          ...(input.initial?.serviceText ? { initial_value: input.initial.serviceText } : {}),
        };
  const urgencyOption = (u: Urgency): types.PlainTextOption => ({
    text: plain(u === 'high' ? 'High: page now' : 'Low: during working hours'),
    value: u,
  });
  return {
    type: 'modal',
    callback_id: INCIDENT_VIEW.trigger,
    private_metadata: privateMetadata({ channel: input.channel }),
    title: plain('Trigger incident'),
    submit: plain('Trigger'),
    close: plain('Cancel'),
    blocks: [
      {
        type: 'input',
        block_id: INCIDENT_FIELD.triggerService.blockId,
        label: plain('Service'),
        element: serviceElement,
      },
      {
        type: 'input',
        block_id: INCIDENT_FIELD.triggerTitle.blockId,
        label: plain('Title'),
        element: {
          type: 'plain_text_input',
          action_id: INCIDENT_FIELD.triggerTitle.actionId,
          max_length: MAX_TITLE,
          placeholder: plain('What is broken?'),
          ...(input.initial?.title ? { initial_value: truncate(input.initial.title, MAX_TITLE) } : {}),
        },
      },
      {
        type: 'input',
        block_id: INCIDENT_FIELD.triggerUrgency.blockId,
        label: plain('Urgency'),
        element: {
          type: 'radio_buttons',
          action_id: INCIDENT_FIELD.triggerUrgency.actionId,
          options: [urgencyOption('high'), urgencyOption('low')],
          initial_option: urgencyOption(input.initial?.urgency ?? 'high'),
        },
      },
      {
        type: 'input',
        block_id: INCIDENT_FIELD.triggerDetails.blockId,
        label: plain('Details'),
        optional: true,
        element: {
          type: 'plain_text_input',
          action_id: INCIDENT_FIELD.triggerDetails.actionId,
          multiline: true,
          max_length: SLACK_LIMITS.sectionText,
        },
      },
    ],
  };
};

export type TriggerIncidentSubmission = Readonly<{
  /** `id` when picked from the list, `query` when typed (resolve it against the service list). */
  service: Readonly<{ id: string }> | Readonly<{ query: string }>;
  title: string;
  urgency: Urgency;
  details: string | null;
  channel: string | null;
}>;

export const readTriggerIncidentSubmission = (
  values: ViewValues,
  privateMetadataJson: string,
): Submission<TriggerIncidentSubmission> => {
  const errors: Record<string, string> = {};
  const serviceField = field(values, INCIDENT_FIELD.triggerService);
  const picked = serviceField?.selected_option?.value;
  const typed = serviceField?.value?.trim();
  if (!picked && !typed) errors[INCIDENT_FIELD.triggerService.blockId] = 'Pick or type a service.';
  const title = field(values, INCIDENT_FIELD.triggerTitle)?.value?.trim() ?? '';
  if (title === '') errors[INCIDENT_FIELD.triggerTitle.blockId] = 'Say what is broken.';
  else if (title.length > MAX_TITLE)
    errors[INCIDENT_FIELD.triggerTitle.blockId] = `At most ${MAX_TITLE} characters.`;
  const urgencyValue = field(values, INCIDENT_FIELD.triggerUrgency)?.selected_option?.value ?? 'high';
  if (urgencyValue !== 'high' && urgencyValue !== 'low') {
    errors[INCIDENT_FIELD.triggerUrgency.blockId] = 'Pick high or low.';
  }
  if (Object.keys(errors).length > 0) return { ok: false, errors };
  const details = field(values, INCIDENT_FIELD.triggerDetails)?.value?.trim() || null;
  const channel = metadata(privateMetadataJson).channel;
  return {
    ok: true,
    value: {
      service: picked ? { id: picked } : { query: typed ?? '' },
      title,
      urgency: urgencyValue as Urgency,
      details,
      channel: typeof channel === 'string' ? channel : null,
    },
  };
};

/** The Add note form for one incident (`label` like `#42 db-primary disk 95%`). */
export const addIncidentNoteModal = (
  input: Readonly<{ streamId: string; label: string; initial?: string }>,
): ModalView => ({
  type: 'modal',
  callback_id: INCIDENT_VIEW.note,
  private_metadata: privateMetadata({ streamId: input.streamId }),
  title: plain('Add note'),
  submit: plain('Add note'),
  close: plain('Cancel'),
  blocks: [
    { type: 'section', text: mrkdwn(`*${escapeMrkdwn(truncate(input.label, 500))}*`) },
    {
      type: 'input',
      block_id: INCIDENT_FIELD.noteContent.blockId,
      label: plain('Note'),
      element: {
        type: 'plain_text_input',
        action_id: INCIDENT_FIELD.noteContent.actionId,
        multiline: true,
        max_length: MAX_NOTE,
        ...(input.initial ? { initial_value: truncate(input.initial, MAX_NOTE) } : {}),
      },
    },
  ],
});

export const readAddIncidentNoteSubmission = (
  values: ViewValues,
  privateMetadataJson: string,
): Submission<Readonly<{ streamId: string; content: string }>> => {
  const content = field(values, INCIDENT_FIELD.noteContent)?.value?.trim() ?? '';
  const streamId = metadata(privateMetadataJson).streamId;
  if (typeof streamId !== 'string' || streamId === '') {
    return {
      ok: false,
      errors: { [INCIDENT_FIELD.noteContent.blockId]: 'This form lost its incident; open it again.' },
    };
  }
  if (content === '')
    return { ok: false, errors: { [INCIDENT_FIELD.noteContent.blockId]: 'Write something.' } };
  return { ok: true, value: { streamId, content } };
};

/** The Reassign form: pick one or more people (the card's own picker takes one). */
export const reassignIncidentModal = (
  input: Readonly<{ streamId: string; label: string; initialUsers?: readonly string[] }>,
): ModalView => ({
  type: 'modal',
  callback_id: INCIDENT_VIEW.reassign,
  private_metadata: privateMetadata({ streamId: input.streamId }),
  title: plain('Reassign incident'),
  submit: plain('Reassign'),
  close: plain('Cancel'),
  blocks: [
    { type: 'section', text: mrkdwn(`*${escapeMrkdwn(truncate(input.label, 500))}*`) },
    {
      type: 'input',
      block_id: INCIDENT_FIELD.reassignUsers.blockId,
      label: plain('Reassign to'),
      element: {
        type: 'multi_users_select',
        action_id: INCIDENT_FIELD.reassignUsers.actionId,
        placeholder: plain('Pick people'),
        max_selected_items: 10,
        ...(input.initialUsers?.length ? { initial_users: [...input.initialUsers] } : {}),
      },
    },
  ],
});

export const readReassignIncidentSubmission = (
  values: ViewValues,
  privateMetadataJson: string,
): Submission<Readonly<{ streamId: string; slackUserIds: string[] }>> => {
  const users = field(values, INCIDENT_FIELD.reassignUsers)?.selected_users ?? [];
  const streamId = metadata(privateMetadataJson).streamId;
  if (typeof streamId !== 'string' || streamId === '') {
    return {
      ok: false,
      errors: { [INCIDENT_FIELD.reassignUsers.blockId]: 'This form lost its incident; open it again.' },
    };
  }
  if (users.length === 0)
    return { ok: false, errors: { [INCIDENT_FIELD.reassignUsers.blockId]: 'Pick someone.' } };
  return { ok: true, value: { streamId, slackUserIds: [...users] } };
};

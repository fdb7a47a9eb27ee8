import { describe, expect, it } from 'vitest';
import { INCIDENT_ACTION, INCIDENT_FIELD, INCIDENT_VIEW } from '../../../handlers/incident/ids.ts';
import { INCIDENT_USAGE, incidentHelp } from '../../../src/incidents/blocks/incidentHelp.ts';
import * as ids from '../../../src/incidents/blocks/incidentIds.ts';
import {
  addIncidentNoteModal,
  readAddIncidentNoteSubmission,
  readReassignIncidentSubmission,
  readTriggerIncidentSubmission,
  reassignIncidentModal,
  triggerIncidentModal,
  type ViewValues,
} from '../../../src/incidents/blocks/incidentModals.ts';
import { escapeMrkdwn } from '../../../src/slack/blocks/format.ts';
import { visibleText } from '../../slack/blocks/blockKit.ts';

const input = (modal: { blocks: readonly unknown[] }, blockId: string) =>
  modal.blocks.find((b) => (b as { block_id?: string }).block_id === blockId) as
    | {
        element: { type: string; action_id: string; options?: unknown[]; initial_option?: { value: string } };
      }
    | undefined;

describe('trigger modal', () => {
  it('lists services when it has them, remembers the channel, and reads a submission back', () => {
    const modal = triggerIncidentModal({
      channel: 'C_OPS',
      services: [
        { id: 'PSVC007', name: 'Payments DB' },
        { id: 'PSVC008', name: 'Checkout' },
      ],
      initial: { serviceId: 'PSVC007', title: 'db down' },
    });
    expect(modal.callback_id).toBe(INCIDENT_VIEW.trigger);
    const service = input(modal, INCIDENT_FIELD.triggerService.blockId);
    expect(service?.element.type).toBe('static_select');
    expect(service?.element.options).toHaveLength(2);
    expect(service?.element.initial_option?.value).toBe('PSVC007');
    expect(input(modal, INCIDENT_FIELD.triggerUrgency.blockId)?.element.initial_option?.value).toBe('high');

    const values: ViewValues = {
      [INCIDENT_FIELD.triggerService.blockId]: {
        service: {
          type: 'static_select',
          selected_option: { value: 'PSVC007', text: { type: 'plain_text', text: 'Payments DB' } },
        },
      },
      [INCIDENT_FIELD.triggerTitle.blockId]: {
        title: { type: 'plain_text_input', value: '  db-primary disk 95% ' },
      },
      [INCIDENT_FIELD.triggerUrgency.blockId]: {
        urgency: {
          type: 'radio_buttons',
          selected_option: { value: 'low', text: { type: 'plain_text', text: 'Low' } },
        },
      },
      [INCIDENT_FIELD.triggerDetails.blockId]: { details: { type: 'plain_text_input', value: '' } },
    };
    expect(readTriggerIncidentSubmission(values, modal.private_metadata ?? '')).toEqual({
      ok: true,
      value: {
        service: { id: 'PSVC007' },
        title: 'db-primary disk 95%',
        urgency: 'low',
        details: null,
        channel: 'C_OPS',
      },
    });
  });

  it('falls back to a text field for the service and reports missing fields per block', () => {
    const modal = triggerIncidentModal({ channel: null });
    expect(input(modal, INCIDENT_FIELD.triggerService.blockId)?.element.type).toBe('plain_text_input');
    const result = readTriggerIncidentSubmission({}, modal.private_metadata ?? '');
    expect(result).toEqual({
      ok: false,
      errors: {
        [INCIDENT_FIELD.triggerService.blockId]: 'Pick or type a service.',
        [INCIDENT_FIELD.triggerTitle.blockId]: 'Say what is broken.',
      },
    });
    const typed = readTriggerIncidentSubmission(
      {
        [INCIDENT_FIELD.triggerService.blockId]: { service: { type: 'plain_text_input', value: 'payments' } },
        [INCIDENT_FIELD.triggerTitle.blockId]: { title: { type: 'plain_text_input', value: 'down' } },
      },
      '',
    );
    expect(typed).toMatchObject({
      ok: true,
      value: { service: { query: 'payments' }, urgency: 'high', channel: null },
    });
  });
});

describe('note and reassign modals', () => {
  it('carry the stream id in private_metadata and read it back', () => {
    const note = addIncidentNoteModal({ streamId: 'incident-PINC042', label: '#42 db' });
    expect(note.callback_id).toBe(INCIDENT_VIEW.note);
    expect(
      readAddIncidentNoteSubmission(
        {
          [INCIDENT_FIELD.noteContent.blockId]: {
            content: { type: 'plain_text_input', value: ' rotated logs ' },
          },
        },
        note.private_metadata ?? '',
      ),
    ).toEqual({ ok: true, value: { streamId: 'incident-PINC042', content: 'rotated logs' } });
    expect(readAddIncidentNoteSubmission({}, note.private_metadata ?? '')).toMatchObject({ ok: false });

    const reassign = reassignIncidentModal({
      streamId: 'incident-PINC042',
      label: '#42 db',
      initialUsers: ['UBOB02'],
    });
    expect(reassign.callback_id).toBe(INCIDENT_VIEW.reassign);
    expect(
      readReassignIncidentSubmission(
        {
          [INCIDENT_FIELD.reassignUsers.blockId]: {
            users: { type: 'multi_users_select', selected_users: ['UBOB02'] },
          },
        },
        reassign.private_metadata ?? '',
      ),
    ).toEqual({ ok: true, value: { streamId: 'incident-PINC042', slackUserIds: ['UBOB02'] } });
    expect(readReassignIncidentSubmission({}, 'not json')).toMatchObject({ ok: false });
  });
});

describe('help and ids', () => {
  it('help names every subcommand and /oncall', () => {
    const text = visibleText(incidentHelp().blocks);
    for (const usage of Object.values(INCIDENT_USAGE).filter((u) => u !== INCIDENT_USAGE.help)) {
      // As Slack shows it: `<service>` escaped, so it is no link (issue 9 item 9).
      expect(text).toContain(escapeMrkdwn(usage));
    }
    expect(text).toContain('/oncall');
  });

  it('handlers/incident/ids.ts re-exports the same ids the builders use', () => {
    expect(INCIDENT_ACTION).toBe(ids.INCIDENT_ACTION);
    expect(INCIDENT_ACTION.acknowledge).toBe('incident.acknowledge');
    expect(INCIDENT_ACTION.resolve).toBe('incident.resolve');
    expect(INCIDENT_ACTION.escalate).toBe('incident.escalate');
    expect(INCIDENT_ACTION.note).toBe('incident.note');
    expect(INCIDENT_ACTION.reassign).toBe('incident.reassign');
    expect(ids.streamIdFromActionsBlockId(ids.incidentActionsBlockId('incident-PINC042'))).toBe(
      'incident-PINC042',
    );
    expect(ids.streamIdFromActionsBlockId('something.else')).toBeNull();
  });
});

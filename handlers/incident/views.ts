import type { App } from '@slack/bolt';
import { isIncidentStreamId } from '../../machines/incident/streams.ts';
import { ValidationError } from '../../src/core/errors.ts';
import {
  readAddIncidentNoteSubmission,
  readReassignIncidentSubmission,
  readTriggerIncidentSubmission,
  type Submission,
  type ViewValues,
} from '../../src/incidents/blocks/incidentModals.ts';
import { slackAssignee } from '../../src/incidents/slackCommands.ts';
import { slackInputOf } from '../middleware/slackInput.ts';
import type { IncidentListenerDeps } from './commands.ts';
import { INCIDENT_VIEW } from './ids.ts';
import { channelOf } from './modals.ts';
import { type IncidentCommandRequest, slackCommand } from './reply.ts';

/**
 * Submissions of the incident modals: trigger, add note, reassign. A form with problems is
 * answered with per-field errors (and recorded as refused); a good one becomes the command,
 * answered where the form was opened (the channel travels in `private_metadata`).
 */
export const registerIncidentViews = (app: App, deps: IncidentListenerDeps): void => {
  const { inbox } = deps;

  const handle = <T>(
    callbackId: string,
    read: (values: ViewValues, privateMetadata: string) => Submission<T>,
    toCommand: (value: T) => IncidentCommandRequest | null,
  ) =>
    app.view(callbackId, async ({ ack, view, context }) => {
      const input = slackInputOf(context);
      const submission = read(view.state.values as ViewValues, view.private_metadata ?? '');
      if (!submission.ok) {
        await inbox.accept({
          input,
          rejection: new ValidationError(`form problems: ${Object.values(submission.errors).join(' ')}`),
        });
        await ack({ response_action: 'errors', errors: submission.errors });
        return;
      }
      const command = toCommand(submission.value);
      if (!command) {
        await inbox.accept({ input, rejection: new ValidationError('form names no incident') });
        await ack();
        return;
      }
      const channel = channelOf(view.private_metadata);
      await inbox.accept({
        input,
        commands: [slackCommand(input, command, channel ? { channelId: channel } : {})],
      });
      await ack();
    });

  handle(INCIDENT_VIEW.trigger, readTriggerIncidentSubmission, (v) => ({
    type: 'TriggerIncident',
    data: {
      service: 'id' in v.service ? { id: v.service.id, name: null } : null,
      serviceQuery: 'query' in v.service ? v.service.query : null,
      serviceAndTitle: null,
      title: v.title,
      urgency: v.urgency,
      details: v.details,
      channel: v.channel,
    },
  }));
  handle(INCIDENT_VIEW.note, readAddIncidentNoteSubmission, (v) =>
    isIncidentStreamId(v.streamId)
      ? { type: 'AddIncidentNote', data: { streamId: v.streamId, content: v.content } }
      : null,
  );
  handle(INCIDENT_VIEW.reassign, readReassignIncidentSubmission, (v) =>
    isIncidentStreamId(v.streamId)
      ? {
          type: 'ReassignIncident',
          data: { streamId: v.streamId, assignees: v.slackUserIds.map(slackAssignee) },
        }
      : null,
  );
};

import {
  ackReminderDecider,
  ackReminderStreamId,
  workActivityDecider,
} from '../../machines/incident/ackReminder.ts';
import { incidentChannelDecider, incidentChannelStreamId } from '../../machines/incident/incidentChannel.ts';
import { isIncidentStreamId } from '../../machines/incident/streams.ts';
import type { CommandRoute } from '../application/dispatch.ts';
import { ValidationError } from '../core/errors.ts';
import type { Command } from '../core/messages.ts';

/**
 * Where the commands of working an incident go (issue 22 items 4 and 7): acknowledge reminders to
 * `incidentackreminder-<id>`, the incident channel to `incidentchannel-<id>`, and their timeline
 * lines (`RecordIncidentWorkActivity`) to the incident's own stream. The incident a command names
 * (`data.incident` or `data.streamId`, a button's value among them) is checked to be an incident
 * stream, so a tampered value reaches no other stream.
 */
const incidentOf = (command: Command, field: 'incident' | 'streamId'): string => {
  const id = (command.data as Record<string, unknown>)[field];
  if (typeof id !== 'string' || !isIncidentStreamId(id)) {
    throw new ValidationError(`${command.type} does not name an incident`, {
      details: { reason: 'not_an_incident' },
    });
  }
  return id;
};

const reminders = ackReminderDecider as unknown as CommandRoute['decider'];
const channels = incidentChannelDecider as unknown as CommandRoute['decider'];
const reminderRoute: CommandRoute = {
  decider: reminders,
  streamId: (c) => ackReminderStreamId(incidentOf(c, 'incident')),
};
const channelRoute: CommandRoute = {
  decider: channels,
  streamId: (c) => incidentChannelStreamId(incidentOf(c, 'streamId')),
};

export const workingRoutes = (): Readonly<Record<string, CommandRoute>> => ({
  RemindIncidentAssignee: reminderRoute,
  RecordIncidentAckReminderSent: reminderRoute,
  KeepIncidentAcknowledged: reminderRoute,
  CheckIncidentAckReminderAnswer: reminderRoute,
  CreateIncidentChannel: channelRoute,
  RecordIncidentChannelCreated: channelRoute,
  RecordIncidentChannelFailed: channelRoute,
  ArchiveIncidentChannel: channelRoute,
  RecordIncidentChannelArchived: channelRoute,
  RecordIncidentWorkActivity: {
    decider: workActivityDecider as unknown as CommandRoute['decider'],
    streamId: (c) => incidentOf(c, 'streamId'),
  },
});

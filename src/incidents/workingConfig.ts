import { z } from 'zod';
import type { ConfigVariableReader, ConfigVariableSpec } from '../lifecycles/config.ts';

/**
 * Working an incident in Slack (issue 22 items 4 and 7), read with the rest of the incident
 * lifecycle's configuration slice:
 *
 * | variable | default | what |
 * |---|---|---|
 * | `INCIDENT_ACK_REMINDER_MINUTES` | 30 | an incident still acknowledged (not resolved) this long after its acknowledgement, or after its assignee's last "Still working on it", DMs the assignee; 0 turns reminders off |
 * | `INCIDENT_ACK_REMINDER_ANSWER_MINUTES` | 15 | a reminder nobody answered this long is said in the incident's channel |
 * | `INCIDENT_CHANNEL_ARCHIVE_HOURS` | 24 | an incident channel is archived this long after the incident is resolved |
 */
export type WorkingSettings = Readonly<{
  /** 0: no reminders. */
  ackReminderMs: number;
  ackAnswerMs: number;
  channelArchiveMs: number;
}>;

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;
const minutes = z.string().regex(/^(0|[1-9][0-9]{0,4})$/, 'a whole number of minutes, 0-99999');
const hours = z.string().regex(/^(0|[1-9][0-9]{0,3})$/, 'a whole number of hours, 0-9999');

export const WORKING_VARIABLES: Readonly<Record<string, ConfigVariableSpec>> = {
  INCIDENT_ACK_REMINDER_MINUTES: {
    purpose:
      'minutes an incident stays acknowledged and open before its assignee is reminded by DM ("Still working on it" / "Resolve"); 0 turns reminders off; default 30',
    schema: minutes,
  },
  INCIDENT_ACK_REMINDER_ANSWER_MINUTES: {
    purpose:
      "minutes a reminder may go unanswered before the incident's channel is told; at least 1; default 15",
    schema: z.string().regex(/^[1-9][0-9]{0,4}$/, 'a whole number of minutes, 1-99999'),
  },
  INCIDENT_CHANNEL_ARCHIVE_HOURS: {
    purpose: 'hours after an incident is resolved before its incident channel is archived; default 24',
    schema: hours,
  },
};

export const DEFAULT_WORKING: WorkingSettings = {
  ackReminderMs: 30 * MINUTE_MS,
  ackAnswerMs: 15 * MINUTE_MS,
  channelArchiveMs: 24 * HOUR_MS,
};

/** The settings, or undefined when none of the variables is set (the defaults apply). */
export const readWorkingSettings = (v: ConfigVariableReader): WorkingSettings | undefined => {
  const reminder = v.optional('INCIDENT_ACK_REMINDER_MINUTES');
  const answer = v.optional('INCIDENT_ACK_REMINDER_ANSWER_MINUTES');
  const archive = v.optional('INCIDENT_CHANNEL_ARCHIVE_HOURS');
  if (reminder === undefined && answer === undefined && archive === undefined) return undefined;
  return {
    ackReminderMs: reminder === undefined ? DEFAULT_WORKING.ackReminderMs : Number(reminder) * MINUTE_MS,
    ackAnswerMs: answer === undefined ? DEFAULT_WORKING.ackAnswerMs : Number(answer) * MINUTE_MS,
    channelArchiveMs: archive === undefined ? DEFAULT_WORKING.channelArchiveMs : Number(archive) * HOUR_MS,
  };
};

import { timeOffCommandDataSchemas } from '../../machines/timeOff/commands.ts';
import { timeOffDecider } from '../../machines/timeOff/decider.ts';
import { directoryCommandDataSchemas, directoryDecider } from '../../machines/timeOff/directory.ts';
import {
  hrCalendarCommandDataSchemas,
  hrCalendarDecider,
  hrTimeOffStreamId,
  parseHrRequestId,
} from '../../machines/timeOff/hrCalendar.ts';
import { hrReadCommandDataSchemas, hrReadDecider, hrReadStreamId } from '../../machines/timeOff/hrReads.ts';
import {
  parseTimeOffRequestId,
  TIME_OFF_DIRECTORY_STREAM,
  timeOffStreamId,
} from '../../machines/timeOff/streams.ts';
import type { CommandRoute } from '../application/dispatch.ts';
import { ValidationError } from '../core/errors.ts';
import type { Command } from '../core/messages.ts';

/**
 * Where each time-off command goes:
 * - a request's commands: `timeoff-<request id>`, from `data.timeOffId` (checked to be one of our
 *   ids: a forged value names no stream; a well-formed id with no stream is refused by the decider);
 * - the directory's: the one `timeoff-directory` stream;
 * - HR's side of a request: `hrtimeoff-<HR request id>`, from `data.entry.hrRequestId`;
 * - a re-read of what an HR webhook named: `hrread-<timeoff|employee>-<HR id>`, from `data.action`
 *   and `data.id` (checked to be an HR id).
 */
const requestStream = (command: Command): string => {
  const id = parseTimeOffRequestId((command.data as { timeOffId?: unknown }).timeOffId);
  if (id === null) {
    throw new ValidationError(`${command.type} names no time-off request`, {
      details: { reason: 'unknown_request' },
    });
  }
  return timeOffStreamId(id);
};

const hrStream = (command: Command): string => {
  const entry = (command.data as { entry?: { hrRequestId?: unknown } }).entry;
  const id = parseHrRequestId(entry?.hrRequestId);
  if (id === null) {
    throw new ValidationError(`${command.type} names no HR request`, {
      details: { reason: 'no_hr_request' },
    });
  }
  return hrTimeOffStreamId(id);
};

const readStream = (command: Command): string => {
  const d = command.data as { action?: unknown; id?: unknown };
  try {
    return hrReadStreamId(d.action === 'read_timeoff' ? 'read_timeoff' : 'read_employee', String(d.id));
  } catch {
    throw new ValidationError(`${command.type} names no HR request or employee`, {
      details: { reason: 'no_hr_id' },
    });
  }
};

const as = (decider: unknown): CommandRoute['decider'] => decider as CommandRoute['decider'];

export const timeOffRoutes: Readonly<Record<string, CommandRoute>> = {
  ...Object.fromEntries(
    Object.keys(timeOffCommandDataSchemas).map((type) => [
      type,
      { decider: as(timeOffDecider), streamId: requestStream },
    ]),
  ),
  ...Object.fromEntries(
    Object.keys(directoryCommandDataSchemas).map((type) => [
      type,
      { decider: as(directoryDecider), streamId: () => TIME_OFF_DIRECTORY_STREAM },
    ]),
  ),
  ...Object.fromEntries(
    Object.keys(hrCalendarCommandDataSchemas).map((type) => [
      type,
      { decider: as(hrCalendarDecider), streamId: hrStream },
    ]),
  ),
  ...Object.fromEntries(
    Object.keys(hrReadCommandDataSchemas).map((type) => [
      type,
      { decider: as(hrReadDecider), streamId: readStream },
    ]),
  ),
};

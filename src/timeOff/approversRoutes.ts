import {
  handOnSweepCommandDataSchemas,
  handOnSweepDecider,
  handOnSweepStreamId,
} from '../../machines/timeOff/handOnSweep.ts';
import type { CommandRoute } from '../application/dispatch.ts';
import { ValidationError } from '../core/errors.ts';
import type { Command } from '../core/messages.ts';

/** Issue 12: the daily approver sweep's command goes to its day's stream (`timeoffsweep-<day>`). */
const sweepStream = (command: Command): string => {
  try {
    return handOnSweepStreamId(String((command.data as { day?: unknown }).day));
  } catch {
    throw new ValidationError(`${command.type} names no day`, { details: { reason: 'invalid_day' } });
  }
};

export const handOnRoutes: Readonly<Record<string, CommandRoute>> = Object.fromEntries(
  Object.keys(handOnSweepCommandDataSchemas).map((type) => [
    type,
    { decider: handOnSweepDecider as unknown as CommandRoute['decider'], streamId: sweepStream },
  ]),
);

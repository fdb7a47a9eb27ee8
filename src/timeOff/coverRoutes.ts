import {
  coverCommandDataSchemas,
  coverDecider,
  coverStreamId,
  parseCoverId,
} from '../../machines/timeOff/cover.ts';
import {
  coverAskCommandDataSchemas,
  coverAskDecider,
  coverAskStreamId,
  parseCoverAskId,
} from '../../machines/timeOff/coverAsk.ts';
import type { CommandRoute } from '../application/dispatch.ts';
import { ValidationError } from '../core/errors.ts';
import type { Command } from '../core/messages.ts';

/**
 * Where the cover commands go (machines/timeOff/cover.ts): `timeoffcover-<cover id>`, from
 * `data.coverId` (checked to be one of our ids before it names a stream).
 *
 * @example
 * await dispatch({ type: 'RequestCover', data: { coverId, absent, cover, slots, requestedBy, reason, notify }, metadata });
 */
const coverStream = (command: Command): string => {
  const id = parseCoverId((command.data as { coverId?: unknown }).coverId);
  if (id === null) {
    throw new ValidationError(`${command.type} names no cover`, { details: { reason: 'unknown_cover' } });
  }
  return coverStreamId(id);
};

/** Issue 20: the cover asks' commands go to `timeoffcoverask-<ask id>`, from `data.askId` (checked). */
const askStream = (command: Command): string => {
  const id = parseCoverAskId((command.data as { askId?: unknown }).askId);
  if (id === null) {
    throw new ValidationError(`${command.type} names no cover ask`, { details: { reason: 'unknown_ask' } });
  }
  return coverAskStreamId(id);
};

export const coverRoutes: Readonly<Record<string, CommandRoute>> = {
  ...Object.fromEntries(
    Object.keys(coverCommandDataSchemas).map((type) => [
      type,
      { decider: coverDecider as unknown as CommandRoute['decider'], streamId: coverStream },
    ]),
  ),
  ...Object.fromEntries(
    Object.keys(coverAskCommandDataSchemas).map((type) => [
      type,
      { decider: coverAskDecider as unknown as CommandRoute['decider'], streamId: askStream },
    ]),
  ),
};

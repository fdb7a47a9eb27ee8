import { uuidv5 } from '../core/ids.ts';
import type { Command, CommandMetadata, JsonObject } from '../core/messages.ts';
import { errorCodeOf, errorMessageOf } from './retryPolicy.ts';

/**
 * Sends one command to its lifecycle: the CommandBus's `dispatch` (src/application/dispatch.ts).
 * Typed loosely so processors do not depend on the bus's result type.
 */
export type Dispatch = (command: Command) => Promise<unknown>;

/**
 * Codes by which a lifecycle (or the bus) refuses a command for a reason the user should hear
 * about. Anything else thrown by `dispatch` is unexpected (store down, a bug) and propagates.
 */
export const REFUSAL_CODES: ReadonlySet<string> = new Set([
  'SB_ILLEGAL_STATE',
  'SB_NOT_FOUND',
  'SB_VALIDATION',
  'SB_UNMAPPED_USER',
  'SB_FORBIDDEN',
]);

export type DispatchOutcome =
  | Readonly<{ outcome: 'dispatched'; alreadyHandled: boolean; streamId?: string }>
  | Readonly<{ outcome: 'rejected'; code: string; message: string; details: JsonObject }>;

const toJsonObject = (value: unknown): JsonObject => {
  if (value === null || typeof value !== 'object') return {};
  try {
    return JSON.parse(JSON.stringify(value)) as JsonObject;
  } catch {
    return {};
  }
};

/**
 * Dispatches a command and classifies the result: `dispatched`, or `rejected` with the refusal's
 * code, message and details. Unexpected errors are rethrown (the runner retries, then parks).
 *
 * A redelivered command that was refused the first time is refused again by handleCommand,
 * with the recorded reason (its outcome never changes), so it is reported as rejected here too.
 *
 * @example
 * const r = await dispatchCommand(bus.dispatch, command);
 * if (r.outcome === 'rejected') // record CommandRejected { code: r.code, message: r.message }
 */
export const dispatchCommand = async (dispatch: Dispatch, command: Command): Promise<DispatchOutcome> => {
  let result: unknown;
  try {
    result = await dispatch(command);
  } catch (error) {
    const code = errorCodeOf(error);
    if (!REFUSAL_CODES.has(code)) throw error;
    return {
      outcome: 'rejected',
      code,
      message: errorMessageOf(error, 1_000),
      details: toJsonObject((error as { details?: unknown }).details),
    };
  }
  const r = (result ?? {}) as { alreadyHandled?: unknown; streamId?: unknown };
  const alreadyHandled = r.alreadyHandled === true;
  const streamId = typeof r.streamId === 'string' ? r.streamId : undefined;
  return { outcome: 'dispatched', alreadyHandled, ...(streamId ? { streamId } : {}) };
};

/**
 * The metadata of a command a processor sends because of an event: its id derived from the
 * processor and a key, so a redelivery or a restart sends the same command (deduplicated).
 *
 * @example
 * await dispatchOrWarn(dispatch, { type, data, metadata: causedMetadata(PROCESSOR, ACTOR, `x:${event.id}`, event, ctx.now()) }, ctx.logger, 'not recorded');
 */
export const causedMetadata = (
  processor: string,
  actor: string,
  key: string,
  cause: Readonly<{ id: string }>,
  now: Date,
): CommandMetadata => ({
  now: now.toISOString(),
  commandId: uuidv5(`${processor}:${key}`),
  actor,
  causationId: cause.id,
});

/**
 * A processor's command, dispatched: a refusal is a warning in the log (the lifecycle recorded
 * why), `<what>: <message>`; the outcome is returned for callers that act on it.
 */
export const dispatchOrWarn = async (
  dispatch: Dispatch,
  command: Command,
  logger: Readonly<{ warn(obj: object, msg: string): void }>,
  what: string,
): Promise<DispatchOutcome> => {
  const outcome = await dispatchCommand(dispatch, command);
  if (outcome.outcome === 'rejected') {
    logger.warn({ code: outcome.code, type: command.type }, `${what}: ${outcome.message}`);
  }
  return outcome;
};

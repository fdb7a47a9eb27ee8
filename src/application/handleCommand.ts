import type { Decider } from '../../machines/shared/machineDecider.ts';
import { ConcurrencyError, hasCode, IllegalStateError } from '../core/errors.ts';
import { uuidv5 } from '../core/ids.ts';
import type { Command, Event, JsonObject } from '../core/messages.ts';
import { isSealedValue } from '../core/sealed.ts';
import type { EventStore, ExpectedRevision, NewEvent, RecordedEvent } from '../eventStore/eventStore.ts';
import { foldHistory } from './fold.ts';

export type HandleCommandOptions = Readonly<{
  /** Re-read and re-decide this many times after a concurrency conflict (emmett's policy: 3). */
  maxRetries?: number;
  /**
   * Record refusals in the stream (as a `CommandRefused` message of kind 'command') when the
   * stream exists, so the timeline shows who tried what and why it was refused. Default true.
   */
  recordRejections?: boolean;
}>;

export type HandleCommandResult<State> = Readonly<{
  /** Events this command produced (the originals when it had already been handled). */
  events: RecordedEvent[];
  state: State;
  nextExpectedRevision: number | undefined;
  /** True when this command id had already been handled: nothing new was written. */
  alreadyHandled: boolean;
}>;

const metadataOf = (command: Command): JsonObject => {
  const m: Record<string, string> = {
    commandId: command.metadata.commandId,
    commandType: command.type,
    actor: command.metadata.actor,
    now: command.metadata.now,
  };
  if (command.metadata.causationId) m.causationId = command.metadata.causationId;
  if (command.metadata.channelId) m.channelId = command.metadata.channelId;
  // Where to answer the person later (replace "⏳ Creating…" in place): kept only sealed, never in
  // clear (the inbox seals it before any command is recorded).
  const responseUrl = command.metadata.responseUrl;
  if (responseUrl && isSealedValue(responseUrl)) m.responseUrl = responseUrl;
  return m;
};

/**
 * Read the stream, fold it (each stored event upcast and parsed with the lifecycle's schemas, then
 * `evolve`d: see foldHistory), `decide`, append with the expected revision; on a
 * concurrency conflict re-read and re-decide (bounded). The command itself is stored beside its
 * events (kind 'command') in the same atomic append, so the stream is its own audit trail.
 *
 * Idempotent by command id: every message it writes has a UUIDv5 of the command id, and a
 * command whose id is already in the stream returns the original outcome without deciding again
 * (so a processor that redelivers after a crash does not get a false "already acknowledged").
 *
 * Refusals throw IllegalStateError (code SB_ILLEGAL_STATE) with the decider's details. A stored
 * event that does not parse throws SB_STORE_CORRUPT naming the stream, position and type.
 *
 * @example
 * const { events } = await handleCommand(store, incidentDecider, incidentStreamId(id), command);
 */
export const handleCommand = async <State, C extends Command, E extends Event>(
  store: EventStore,
  decider: Decider<State, C, E>,
  streamId: string,
  command: C,
  options: HandleCommandOptions = {},
): Promise<HandleCommandResult<State>> => {
  const maxRetries = options.maxRetries ?? 3;
  const commandMessageId = uuidv5(`command:${command.metadata.commandId}`);
  for (let attempt = 0; ; attempt++) {
    const history = await store.readStream(streamId);
    const revision: number | undefined =
      history.length > 0 ? history[history.length - 1]!.revision : undefined;
    const events = history.filter((m) => m.kind === 'event');
    const state = foldHistory(decider, events);

    const recorded = history.find((m) => m.id === commandMessageId);
    if (recorded?.type === 'CommandRefused') {
      // A redelivered command that was refused the first time is refused again, with the
      // recorded reason: the outcome of a command id never changes.
      const reason =
        typeof recorded.data.reason === 'string' ? recorded.data.reason : `${command.type} was refused`;
      throw new IllegalStateError(reason, {
        details: { ...(recorded.data.details as JsonObject), redelivered: true },
      });
    }
    if (recorded) {
      const produced = events.filter((e) => e.metadata.commandId === command.metadata.commandId);
      return { events: produced, state, nextExpectedRevision: revision, alreadyHandled: true };
    }

    let proposed: E[];
    try {
      proposed = decider.decide(command, state);
    } catch (e) {
      if (!hasCode(e, 'SB_ILLEGAL_STATE')) throw e;
      const details = (e as { details?: Record<string, unknown> }).details ?? {};
      if ((options.recordRejections ?? true) && revision !== undefined) {
        const rejection: NewEvent = {
          id: commandMessageId,
          type: 'CommandRefused',
          kind: 'command',
          data: {
            command: command.type,
            data: command.data as JsonObject,
            reason: e.message,
            details: JSON.parse(JSON.stringify(details)) as JsonObject,
          },
          metadata: metadataOf(command),
        };
        try {
          await store.appendToStream(streamId, [rejection], { expectedRevision: revision });
        } catch (appendError) {
          if (!(appendError instanceof ConcurrencyError) || attempt >= maxRetries) throw appendError;
          continue; // the stream moved: the command may be legal now
        }
      }
      throw new IllegalStateError(e.message, { cause: e, details });
    }

    const metadata = metadataOf(command);
    const messages: NewEvent[] = [
      {
        id: commandMessageId,
        type: command.type,
        kind: 'command',
        data: command.data as JsonObject,
        metadata,
      },
      ...proposed.map(
        (e, i): NewEvent => ({
          id: uuidv5(`event:${command.metadata.commandId}:${i}`),
          type: e.type,
          data: e.data as JsonObject,
          metadata,
        }),
      ),
    ];
    const expectedRevision: ExpectedRevision = revision ?? 'no_stream';
    try {
      const result = await store.appendToStream(streamId, messages, { expectedRevision });
      const appended = await store.readStream(streamId, { fromRevision: (revision ?? -1) + 1 });
      const produced = appended.filter(
        (m) => m.kind === 'event' && m.metadata.commandId === command.metadata.commandId,
      );
      const next = proposed.reduce(decider.evolve, state);
      return {
        events: produced,
        state: next,
        nextExpectedRevision: result.nextExpectedRevision,
        alreadyHandled: result.deduplicated,
      };
    } catch (e) {
      if (e instanceof ConcurrencyError && attempt < maxRetries) continue;
      throw e;
    }
  }
};

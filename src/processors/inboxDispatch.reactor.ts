import { INBOX_STREAM_PREFIX, SLACK_INPUT_RECEIVED, WEBHOOK_RECEIVED } from '../application/inbox.ts';
import { uuidv5 } from '../core/ids.ts';
import type { Command, CommandMetadata, JsonObject } from '../core/messages.ts';
import type { RecordedEvent } from '../eventStore/eventStore.ts';
import { type Dispatch, type DispatchOutcome, dispatchCommand } from './dispatchCommand.ts';
import type { Processor, ProcessorContext } from './runner.ts';

/** Recorded inputs the dispatcher reads (appended by the Slack and webhook edge before the 2xx). */
export const INBOX_INPUT_TYPES = [SLACK_INPUT_RECEIVED, WEBHOOK_RECEIVED] as const;

/** The part of an inbox input's data this dispatcher reads. */
export type InboxInputData = Readonly<{
  /** Commands the edge built from the input, in order; `[]` when the input carries none. */
  commands?: readonly Command[];
}>;

/**
 * Appended to the inbox stream that carried the command when its lifecycle refused it; the
 * `command-replies` reactor turns it into an ephemeral Slack message. Event id:
 * `uuidv5('rejected:' + commandId)`, so a redelivery does not record it twice.
 */
export type CommandRejectedData = Readonly<{
  commandId: string;
  commandType: string;
  /** SB_ILLEGAL_STATE, SB_NOT_FOUND, SB_VALIDATION, SB_UNMAPPED_USER or SB_FORBIDDEN. */
  code: string;
  /** The refusal's text, written for the user. */
  message: string;
  details: JsonObject;
  /** The command's actor (a Slack user id for Slack inputs). */
  actor: string;
  channelId?: string;
  teamId?: string;
  responseUrl?: string;
  /** Id of the inbox event that carried the command. */
  inputId: string;
  rejectedAt: string;
}>;

export const commandRejectedEventId = (commandId: string): string => uuidv5(`rejected:${commandId}`);

type Parsed = { ok: true; command: Command } | { ok: false; command: Command; problem: string };

const isObject = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * A recorded command, checked before dispatch: the edge wrote it, but a store outlives code
 * versions. A malformed one is refused (SB_VALIDATION) rather than retried forever.
 */
const parseCommand = (input: RecordedEvent, raw: unknown, index: number): Parsed => {
  const r = isObject(raw) ? raw : {};
  const metadata = isObject(r.metadata) ? r.metadata : {};
  const str = (v: unknown): string | undefined => (typeof v === 'string' && v.length > 0 ? v : undefined);
  const commandId = str(metadata.commandId) ?? uuidv5(`${input.id}:command:${index}`);
  const type = str(r.type) ?? 'UnknownCommand';
  const actor = str(metadata.actor) ?? 'unknown';
  const now = str(metadata.now);
  const optional: Partial<Record<'teamId' | 'channelId' | 'responseUrl', string>> = {};
  for (const key of ['teamId', 'channelId', 'responseUrl'] as const) {
    const v = str(metadata[key]);
    if (v) optional[key] = v;
  }
  const fullMetadata: CommandMetadata = {
    ...optional,
    commandId,
    actor,
    now: now ?? input.recordedAt.toISOString(),
    causationId: str(metadata.causationId) ?? input.id,
  };
  const command: Command = {
    type,
    data: isObject(r.data) ? (r.data as JsonObject) : {},
    metadata: fullMetadata,
  };
  const problems: string[] = [];
  if (!isObject(raw)) problems.push('not an object');
  if (!str(r.type)) problems.push('no type');
  if (!str(metadata.commandId)) problems.push('no metadata.commandId');
  if (!str(metadata.actor)) problems.push('no metadata.actor');
  if (!now || Number.isNaN(Date.parse(now))) problems.push('no valid metadata.now');
  if (r.data !== undefined && !isObject(r.data)) problems.push('data is not an object');
  return problems.length === 0
    ? { ok: true, command }
    : { ok: false, command, problem: `recorded command #${index} is malformed: ${problems.join(', ')}` };
};

export type InboxDispatchOptions = Readonly<{
  /** The CommandBus's dispatch. */
  dispatch: Dispatch;
  /**
   * Completes a recorded command right before it is dispatched, with what the edge could not know
   * within Slack's 3 s (e.g. the acting Slack user's incident-service user, looked up by email).
   * A refusal-coded error (REFUSAL_CODES, e.g. SB_UNMAPPED_USER) refuses the command as a lifecycle
   * would; anything else is retried by the runner like a failed dispatch.
   */
  enrich?: (command: Command, ctx: ProcessorContext) => Promise<Command>;
}>;

/**
 * `inbox-dispatch`: the bridge from recorded inputs to lifecycles. For every `SlackInputReceived` /
 * `WebhookReceived` in an `inbox-` stream it dispatches `data.commands` in order through the
 * CommandBus (metadata.causationId defaults to the input's event id).
 *
 * - Accepted: nothing more here; reactors react to the lifecycle's events.
 * - Refused with a coded reason (REFUSAL_CODES): `CommandRejected` is appended to the same inbox
 *   stream (see CommandRejectedData) for the `command-replies` reactor.
 * - Anything else is thrown: the runner retries and then parks the input.
 *
 * Redelivery is safe: lifecycles dedupe by command id, and the rejection's event id is derived
 * from the command id.
 *
 * @example
 * const inbox = createInboxDispatchReactor({ dispatch: bus.dispatch });
 */
export const createInboxDispatchReactor = (options: InboxDispatchOptions): Processor => ({
  id: 'inbox-dispatch',
  filter: { streamPrefixes: [INBOX_STREAM_PREFIX], eventTypes: [...INBOX_INPUT_TYPES] },
  async handle(event, ctx) {
    if (!event.streamId.startsWith(INBOX_STREAM_PREFIX)) return;
    const raw = (event.data as InboxInputData).commands;
    const commands: readonly unknown[] = Array.isArray(raw) ? raw : [];
    for (const [index, item] of commands.entries()) {
      const parsed = parseCommand(event, item, index);
      const { command } = parsed;
      const log = ctx.logger.child({ commandId: command.metadata.commandId, commandType: command.type });
      let outcome: DispatchOutcome;
      if (parsed.ok) {
        const enrich = options.enrich;
        const dispatch: Dispatch = enrich
          ? async (c) => options.dispatch(await enrich(c, ctx))
          : options.dispatch;
        outcome = await dispatchCommand(dispatch, command);
      } else {
        outcome = { outcome: 'rejected', code: 'SB_VALIDATION', message: parsed.problem, details: { index } };
        log.warn({ err: new Error(parsed.problem) }, 'malformed recorded command');
      }
      if (outcome.outcome === 'dispatched') {
        log.debug(
          { streamId: outcome.streamId, alreadyHandled: outcome.alreadyHandled },
          'command dispatched',
        );
        continue;
      }
      const m = command.metadata;
      const data: CommandRejectedData = {
        commandId: m.commandId,
        commandType: command.type,
        code: outcome.code,
        message: outcome.message,
        details: outcome.details,
        actor: m.actor,
        ...(m.channelId ? { channelId: m.channelId } : {}),
        ...(m.teamId ? { teamId: m.teamId } : {}),
        ...(m.responseUrl ? { responseUrl: m.responseUrl } : {}),
        inputId: event.id,
        rejectedAt: ctx.now().toISOString(),
      };
      await ctx.store.appendToStream(event.streamId, [
        {
          id: commandRejectedEventId(m.commandId),
          type: 'CommandRejected',
          data: data as unknown as JsonObject,
          metadata: { commandId: m.commandId, causationId: event.id, actor: m.actor },
        },
      ]);
      log.info({ code: outcome.code }, 'command rejected');
    }
  },
});

import { handleCommand } from '../application/handleCommand.ts';
import { INBOX_STREAM_PREFIX } from '../application/inbox.ts';
import { asError } from '../core/errors.ts';
import { uuidv5 } from '../core/ids.ts';
import type { EventStore, RecordedEvent } from '../eventStore/eventStore.ts';
import {
  type CommandReplyCommand,
  type CommandReplyState,
  commandReplyDecider,
  REPLY_STREAM_PREFIX,
  type ReplyRetryRequestedData,
  replyStreamId,
} from './commandReplies.decider.ts';
import type { CommandRejectedData } from './inboxDispatch.reactor.ts';
import type { SlackReplies, SlackReplyMessage } from './ports.ts';
import {
  type BackoffOptions,
  errorCodeOf,
  errorMessageOf,
  nextAttemptAt,
  shouldRetry,
} from './retryPolicy.ts';
import type { Processor, ProcessorContext } from './runner.ts';
import { scheduleTimer } from './scheduler.ts';

const ACTOR = 'system:command-replies';
const SLACK_USER = /^[UW][A-Z0-9]{2,}$/;

export type CommandRepliesOptions = Readonly<{
  replies: SlackReplies;
  /** Attempts per reply before giving up with `ReplyFailed { final: true }` (default 4). */
  maxAttempts?: number;
  /** Durable retry backoff (default 2 s doubling, ≤ 5 min, jitter 0.2). Slack's Retry-After wins. */
  backoff?: BackoffOptions;
  /** Text for a refusal (default: an emoji by code and the refusal's message). */
  formatRejection?: (rejection: CommandRejectedData) => SlackReplyMessage;
}>;

const EMOJI: Readonly<Record<string, string>> = {
  SB_ILLEGAL_STATE: ':warning:',
  SB_NOT_FOUND: ':mag:',
  SB_VALIDATION: ':pencil2:',
  SB_UNMAPPED_USER: ':bust_in_silhouette:',
  SB_FORBIDDEN: ':no_entry:',
};

/** The default reply: `:warning: AcknowledgeIncident is not allowed while resolved`. */
export const defaultRejectionText = (rejection: CommandRejectedData): SlackReplyMessage => ({
  text: `${EMOJI[rejection.code] ?? ':warning:'} ${rejection.message}`,
});

/** Timer id of the retry after failed attempt `attempt` of the reply to `commandId`. */
export const replyRetryTimerId = (commandId: string, attempt: number): string =>
  `reply-${commandId}-${attempt}`;

/** The reply's current state, folded from `reply-<commandId>`. */
export const readReplyState = async (store: EventStore, commandId: string): Promise<CommandReplyState> =>
  (await store.readStream(replyStreamId(commandId)))
    .filter((m) => m.kind === 'event')
    .reduce(
      (state, e) => commandReplyDecider.evolve(state, { type: e.type, data: e.data } as never),
      commandReplyDecider.initialState(),
    );

type Source = { streamId: string; eventId: string };

/**
 * `command-replies`: tells the user why a command was refused. For each `CommandRejected` in an
 * `inbox-` stream it sends the text through the SlackReplies port, preferring the `response_url`;
 * when that cannot work (expired, used up, off the allowlist) it falls back to an ephemeral message
 * in the channel. Every outcome is an event in `reply-<commandId>`: `ReplySent { attempt, via }`,
 * `ReplyFailed { attempt, code, nextAttemptAt, final }` or `ReplySkipped { reason }`.
 *
 * Retries are durable: a retryable failure schedules timer `reply-<commandId>-<attempt>` whose
 * `RetryCommandReply` command (routed by `commandReplyRoutes`) records `ReplyRetryRequested`, which
 * this reactor handles like the original rejection. After `maxAttempts`, or on a failure that no
 * retry can fix (SB_UPSTREAM_AUTH, a rejected request), it records `ReplyFailed { final: true }`.
 *
 * Idempotent by command id: a reply already recorded as sent is never sent again; a redelivered
 * trigger in the `waiting` state only makes sure its retry timer exists. (A crash after Slack took
 * the message and before `ReplySent` was stored resends it once: Slack's response_url has no
 * idempotency key.)
 *
 * @example
 * const replies = createCommandRepliesReactor({ replies: slackReplies });
 * const bus = createCommandBus(store, { ...lifecycleRoutes, ...commandReplyRoutes });
 */
export const createCommandRepliesReactor = (options: CommandRepliesOptions): Processor => {
  const maxAttempts = options.maxAttempts ?? 4;
  const backoff: BackoffOptions = options.backoff ?? { baseMs: 2_000, maxMs: 5 * 60_000, jitter: 0.2 };
  const format = options.formatRejection ?? defaultRejectionText;

  const record = async (
    ctx: ProcessorContext,
    trigger: RecordedEvent,
    command: Pick<CommandReplyCommand, 'type' | 'data'>,
    key: string,
  ): Promise<void> => {
    const commandId = String(command.data.commandId);
    await handleCommand(
      ctx.store,
      commandReplyDecider,
      replyStreamId(commandId),
      {
        ...command,
        metadata: {
          now: ctx.now().toISOString(),
          commandId: uuidv5(`${command.type}:${commandId}:${key}`),
          actor: ACTOR,
          causationId: trigger.id,
        },
      } as CommandReplyCommand,
      { recordRejections: false },
    );
  };

  const ensureRetryTimer = async (
    ctx: ProcessorContext,
    trigger: RecordedEvent,
    commandId: string,
    state: CommandReplyState,
    source: Source,
  ): Promise<void> => {
    const last = state.context.lastFailure;
    if (!last?.nextAttemptAt) return;
    await scheduleTimer(ctx.store, {
      timerId: replyRetryTimerId(commandId, last.attempt),
      dueAt: last.nextAttemptAt,
      now: ctx.now(),
      command: {
        type: 'RetryCommandReply',
        data: {
          commandId,
          attempt: last.attempt + 1,
          sourceStreamId: source.streamId,
          sourceEventId: source.eventId,
        },
        metadata: { actor: ACTOR, causationId: trigger.id },
      },
    });
  };

  const send = async (rejection: CommandRejectedData): Promise<{ via: 'response_url' | 'ephemeral' }> => {
    const message = format(rejection);
    const canEphemeral = Boolean(rejection.channelId) && SLACK_USER.test(rejection.actor);
    if (rejection.responseUrl) {
      try {
        await options.replies.respond(rejection.responseUrl, message);
        return { via: 'response_url' };
      } catch (error) {
        // A response_url that cannot work any more (expired, used 5 times, refused): say it in the
        // channel instead. Transient failures keep the response_url for the retry.
        if (!canEphemeral || shouldRetry(error)) throw error;
      }
    }
    await options.replies.postEphemeral(rejection.channelId!, rejection.actor, message);
    return { via: 'ephemeral' };
  };

  return {
    id: 'command-replies',
    filter: {
      streamPrefixes: [INBOX_STREAM_PREFIX, REPLY_STREAM_PREFIX],
      eventTypes: ['CommandRejected', 'ReplyRetryRequested'],
    },
    async handle(event, ctx) {
      let rejection: CommandRejectedData | undefined;
      let source: Source;
      if (event.type === 'CommandRejected' && event.streamId.startsWith(INBOX_STREAM_PREFIX)) {
        rejection = event.data as unknown as CommandRejectedData;
        source = { streamId: event.streamId, eventId: event.id };
      } else if (event.type === 'ReplyRetryRequested' && event.streamId.startsWith(REPLY_STREAM_PREFIX)) {
        const d = event.data as unknown as ReplyRetryRequestedData;
        source = { streamId: d.sourceStreamId, eventId: d.sourceEventId };
        const original = (await ctx.store.readStream(d.sourceStreamId)).find((e) => e.id === d.sourceEventId);
        rejection = original?.data as unknown as CommandRejectedData | undefined;
        if (!rejection) {
          const state = await readReplyState(ctx.store, d.commandId);
          if (state.matches('pending')) {
            await record(
              ctx,
              event,
              { type: 'RecordReplySkipped', data: { commandId: d.commandId, reason: 'source_missing' } },
              'skip',
            );
          }
          return;
        }
      } else {
        return;
      }
      const { commandId } = rejection;
      const log = ctx.logger.child({ commandId });
      const state = await readReplyState(ctx.store, commandId);
      if (state.matches('waiting')) {
        await ensureRetryTimer(ctx, event, commandId, state, source);
        return;
      }
      if (!state.matches('pending')) return; // sent, skipped or abandoned: nothing more to do

      const attempt = state.context.failures + 1;
      const hasDestination =
        Boolean(rejection.responseUrl) || (Boolean(rejection.channelId) && SLACK_USER.test(rejection.actor));
      if (!hasDestination) {
        await record(
          ctx,
          event,
          { type: 'RecordReplySkipped', data: { commandId, reason: 'no_destination' } },
          'skip',
        );
        log.info({ code: rejection.code }, 'refusal has nowhere to be sent');
        return;
      }
      try {
        const { via } = await send(rejection);
        await record(
          ctx,
          event,
          { type: 'RecordReplySent', data: { commandId, attempt, via } },
          String(attempt),
        );
        log.info({ attempt, via }, 'reply sent');
      } catch (error) {
        const retry = shouldRetry(error, { attempt, maxAttempts });
        const now = ctx.now();
        const at = retry ? nextAttemptAt(attempt, now, { ...backoff, error }).toISOString() : null;
        await record(
          ctx,
          event,
          {
            type: 'RecordReplyFailed',
            data: {
              commandId,
              attempt,
              code: errorCodeOf(error),
              message: errorMessageOf(error, 500),
              nextAttemptAt: at,
              final: !retry,
            },
          },
          String(attempt),
        );
        if (retry) {
          log.warn({ err: asError(error), attempt, nextAttemptAt: at }, 'reply failed; retry scheduled');
          await ensureRetryTimer(ctx, event, commandId, await readReplyState(ctx.store, commandId), source);
        } else {
          log.error({ err: asError(error), attempt }, 'reply failed; giving up');
        }
      }
    },
  };
};

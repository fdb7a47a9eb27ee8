import type { UpstreamRequest } from '../../machines/shared/upstreamRequest.ts';
import { foldHistory } from '../application/fold.ts';
import { handleCommand } from '../application/handleCommand.ts';
import { INBOX_STREAM_PREFIX } from '../application/inbox.ts';
import type { JsonObject } from '../core/messages.ts';
import type { EventStore, RecordedEvent } from '../eventStore/eventStore.ts';
import {
  type CommandReplyCommand,
  type CommandReplyState,
  commandReplyDecider,
  pendingReply,
  REPLY_STREAM_PREFIX,
  type ReplyRetryRequestedData,
  replyStreamId,
} from './commandReplies.decider.ts';
import type { CommandRejectedData } from './inboxDispatch.reactor.ts';
import type { SlackReplies, SlackReplyMessage } from './ports.ts';
import { type BackoffOptions, shouldRetry } from './retryPolicy.ts';
import type { Processor, ProcessorContext } from './runner.ts';
import {
  createUpstreamCallProcessor,
  type UpstreamCallSpec,
  type UpstreamCallTarget,
} from './upstreamCall.ts';

const ACTOR = 'system:command-replies';
const PROCESSOR_ID = 'command-replies';
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
  foldHistory(commandReplyDecider, await store.readStream(replyStreamId(commandId)));

/** A reply to send: attempt `attempt` of the reply to `requestId` (the refused command's id). */
type ReplyTarget = UpstreamCallTarget &
  Readonly<{
    /** The refusal to tell the user about; undefined when its record is gone. */
    rejection: CommandRejectedData | undefined;
    /** Where the `CommandRejected` is (the retry command carries it). */
    source: Readonly<{ streamId: string; eventId: string }>;
  }>;

/** What an attempt came to: sent by one of the two routes, or nothing to send. */
type ReplyResult = Readonly<{ via: 'response_url' | 'ephemeral' }> | Readonly<{ skipped: string }>;

/**
 * `command-replies`: tells the user why a command was refused. For each `CommandRejected` in an
 * `inbox-` stream it sends the text through the SlackReplies port, preferring the `response_url`;
 * when that cannot work (expired, used up, off the allowlist) it falls back to an ephemeral message
 * in the channel. Every outcome is an event in `reply-<commandId>`: `ReplySent { attempt, via }`,
 * `ReplyFailed { attempt, code, nextAttemptAt, final }` or `ReplySkipped { reason }`.
 *
 * A reply is a durable upstream call like any other (src/processors/upstreamCall.ts): a retryable
 * failure schedules timer `reply-<commandId>-<attempt>` whose `RetryCommandReply` command (routed by
 * `commandReplyRoutes`) records `ReplyRetryRequested`, which this reactor handles like the original
 * rejection. After `maxAttempts`, or on a failure that no retry can fix (SB_UPSTREAM_AUTH, a
 * rejected request), it records `ReplyFailed { final: true }`.
 *
 * Idempotent by command id: a reply already recorded as sent is never sent again; a redelivered
 * trigger in the `waiting` state only makes sure its retry timer exists. (A crash after Slack took
 * the message and before `ReplySent` was stored resends it once: Slack's response_url has no
 * idempotency key and nothing to look at first.)
 *
 * @example
 * const replies = createCommandRepliesReactor({ replies: slackReplies });
 * const bus = createCommandBus(store, { ...lifecycleRoutes, ...commandReplyRoutes });
 */
export const createCommandRepliesReactor = (options: CommandRepliesOptions): Processor => {
  const maxAttempts = options.maxAttempts ?? 4;
  const backoff: BackoffOptions = options.backoff ?? { baseMs: 2_000, maxMs: 5 * 60_000, jitter: 0.2 };
  const format = options.formatRejection ?? defaultRejectionText;
  const hasDestination = (r: CommandRejectedData): boolean =>
    Boolean(r.responseUrl) || (Boolean(r.channelId) && SLACK_USER.test(r.actor));

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

  const json = (d: CommandReplyCommand['data']): JsonObject => d as unknown as JsonObject;

  const spec: UpstreamCallSpec<CommandReplyState, UpstreamRequest<'reply'>, ReplyTarget, ReplyResult> = {
    processorId: PROCESSOR_ID,
    actor: ACTOR,
    policy: { ...backoff, maxAttempts },
    messageMaxLength: 500,
    readState: async (store, streamId) => foldHistory(commandReplyDecider, await store.readStream(streamId)),
    pendingRequest: pendingReply,
    call: async ({ target, ctx }) => {
      const { rejection } = target;
      if (!rejection) return { skipped: 'source_missing' };
      if (!hasDestination(rejection)) {
        ctx.logger.info(
          { commandId: target.requestId, code: rejection.code },
          'refusal has nowhere to be sent',
        );
        return { skipped: 'no_destination' };
      }
      return send(rejection);
    },
    succeeded: ({ request, result }) =>
      'skipped' in result
        ? { type: 'RecordReplySkipped', data: json({ commandId: request.requestId, reason: result.skipped }) }
        : {
            type: 'RecordReplySent',
            data: json({ commandId: request.requestId, attempt: request.attempt, via: result.via }),
          },
    failed: ({ request, failure }) => ({
      type: 'RecordReplyFailed',
      data: json({
        commandId: request.requestId,
        attempt: failure.attempt,
        code: failure.code,
        message: failure.message,
        nextAttemptAt: failure.nextAttemptAt,
        final: failure.final,
      }),
    }),
    retry: ({ request, attempt, target }) => ({
      type: 'RetryCommandReply',
      data: json({
        commandId: request.requestId,
        attempt,
        sourceStreamId: target.source.streamId,
        sourceEventId: target.source.eventId,
      }),
    }),
    retryTimerId: (request, failedAttempt) => replyRetryTimerId(request.requestId, failedAttempt),
    record: (command, ctx) =>
      handleCommand(
        ctx.store,
        commandReplyDecider,
        replyStreamId(command.data.commandId as string),
        command as CommandReplyCommand,
        { recordRejections: false },
      ),
  };

  const target = async (event: RecordedEvent, ctx: ProcessorContext): Promise<ReplyTarget | null> => {
    if (event.type === 'CommandRejected' && event.streamId.startsWith(INBOX_STREAM_PREFIX)) {
      const rejection = event.data as unknown as CommandRejectedData;
      return {
        streamId: replyStreamId(rejection.commandId),
        requestId: rejection.commandId,
        attempt: 1,
        rejection,
        source: { streamId: event.streamId, eventId: event.id },
      };
    }
    if (event.type === 'ReplyRetryRequested' && event.streamId.startsWith(REPLY_STREAM_PREFIX)) {
      const d = event.data as unknown as ReplyRetryRequestedData;
      const original = (await ctx.store.readStream(d.sourceStreamId)).find((e) => e.id === d.sourceEventId);
      return {
        streamId: event.streamId,
        requestId: d.commandId,
        attempt: d.attempt,
        rejection: original?.data as unknown as CommandRejectedData | undefined,
        source: { streamId: d.sourceStreamId, eventId: d.sourceEventId },
      };
    }
    return null;
  };

  return createUpstreamCallProcessor({
    filter: {
      streamPrefixes: [INBOX_STREAM_PREFIX, REPLY_STREAM_PREFIX],
      eventTypes: ['CommandRejected', 'ReplyRetryRequested'],
    },
    target,
    spec,
  });
};

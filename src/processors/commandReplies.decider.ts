import { and, assign, setup } from 'xstate';
import { z } from 'zod';
import { machineDecider } from '../../machines/shared/machineDecider.ts';
import {
  attemptFailureApplies,
  attemptRetryApplies,
  FIRST_ATTEMPT,
  type UpstreamAttempts,
  type UpstreamRequest,
  withFailedAttempt,
  withRetry,
} from '../../machines/shared/upstreamRequest.ts';
import type { CommandRoute } from '../application/dispatch.ts';
import { type Command, type Event, exhaustive } from '../core/messages.ts';

/**
 * The life of one reply to a refused command, in stream `reply-<commandId>`. The reply is a
 * durable upstream call (to Slack) and its attempts follow the shared rules
 * (machines/shared/upstreamRequest.ts): the reactor records each attempt's outcome, and the
 * scheduler's `RetryCommandReply` starts the next attempt when it is due.
 *
 *   pending ──ReplySent──► sent
 *      │  └──ReplySkipped──► skipped            (nowhere to send it)
 *      ├──ReplyFailed{final}──► abandoned
 *      └──ReplyFailed──► waiting ──ReplyRetryRequested{attempt + 1}──► pending
 *
 * (It lives beside its reactor because it is bookkeeping of an effect, not a product lifecycle.)
 */
const isoTime = z.string().min(1);

export const commandReplyEventDataSchemas = {
  ReplySent: z.object({
    commandId: z.string().min(1),
    attempt: z.number().int().min(1),
    via: z.enum(['response_url', 'ephemeral']),
    sentAt: isoTime,
  }),
  ReplyFailed: z.object({
    commandId: z.string().min(1),
    attempt: z.number().int().min(1),
    code: z.string().min(1),
    message: z.string(),
    /** When the next attempt is due; null when `final`. */
    nextAttemptAt: isoTime.nullable(),
    final: z.boolean(),
    failedAt: isoTime,
  }),
  ReplyRetryRequested: z.object({
    commandId: z.string().min(1),
    attempt: z.number().int().min(2),
    /** Where the `CommandRejected` that needs the reply is. */
    sourceStreamId: z.string().min(1),
    sourceEventId: z.string().min(1),
    requestedAt: isoTime,
  }),
  ReplySkipped: z.object({ commandId: z.string().min(1), reason: z.string().min(1), skippedAt: isoTime }),
} as const;

type Schemas = typeof commandReplyEventDataSchemas;
export type ReplySentData = z.infer<Schemas['ReplySent']>;
export type ReplyFailedData = z.infer<Schemas['ReplyFailed']>;
export type ReplyRetryRequestedData = z.infer<Schemas['ReplyRetryRequested']>;
export type ReplySkippedData = z.infer<Schemas['ReplySkipped']>;

export type CommandReplyEvent =
  | Event<'ReplySent', ReplySentData>
  | Event<'ReplyFailed', ReplyFailedData>
  | Event<'ReplyRetryRequested', ReplyRetryRequestedData>
  | Event<'ReplySkipped', ReplySkippedData>;

export const commandReplyCommandDataSchemas = {
  RecordReplySent: commandReplyEventDataSchemas.ReplySent.omit({ sentAt: true }),
  RecordReplyFailed: commandReplyEventDataSchemas.ReplyFailed.omit({ failedAt: true }),
  RecordReplySkipped: commandReplyEventDataSchemas.ReplySkipped.omit({ skippedAt: true }),
  RetryCommandReply: commandReplyEventDataSchemas.ReplyRetryRequested.omit({ requestedAt: true }).extend({
    attempt: z.number().int().min(1),
  }),
} as const;

type CommandSchemas = typeof commandReplyCommandDataSchemas;
export type CommandReplyCommand =
  | Command<'RecordReplySent', z.infer<CommandSchemas['RecordReplySent']>>
  | Command<'RecordReplyFailed', z.infer<CommandSchemas['RecordReplyFailed']>>
  | Command<'RecordReplySkipped', z.infer<CommandSchemas['RecordReplySkipped']>>
  | Command<'RetryCommandReply', z.infer<CommandSchemas['RetryCommandReply']>>;

/** The reply's attempts (shared rules) and its last failure, for the retry and the logs. */
export type CommandReplyContext = UpstreamAttempts &
  Readonly<{
    lastFailure: Readonly<{ attempt: number; nextAttemptAt: string | null; code: string }> | null;
  }>;

export const commandReplyMachine = setup({
  types: { context: {} as CommandReplyContext, events: {} as CommandReplyEvent },
  guards: {
    isFinal: ({ event }) => event.type === 'ReplyFailed' && event.data.final,
    failureApplies: ({ context, event }) =>
      event.type === 'ReplyFailed' && attemptFailureApplies(context, event.data.attempt),
    retryApplies: ({ context, event }) =>
      event.type === 'ReplyRetryRequested' && attemptRetryApplies(context, event.data.attempt),
  },
  actions: {
    recordFailure: assign(({ context, event }) =>
      event.type === 'ReplyFailed'
        ? {
            ...withFailedAttempt(context, event.data),
            lastFailure: {
              attempt: event.data.attempt,
              nextAttemptAt: event.data.nextAttemptAt,
              code: event.data.code,
            },
          }
        : {},
    ),
    recordRetry: assign(({ context, event }) =>
      event.type === 'ReplyRetryRequested' ? withRetry(context, event.data) : {},
    ),
  },
}).createMachine({
  id: 'commandReply',
  initial: 'pending',
  context: { ...FIRST_ATTEMPT, lastFailure: null },
  states: {
    pending: {
      on: {
        ReplySent: 'sent',
        ReplySkipped: 'skipped',
        ReplyFailed: [
          { target: 'abandoned', guard: and(['failureApplies', 'isFinal']), actions: 'recordFailure' },
          { target: 'waiting', guard: 'failureApplies', actions: 'recordFailure' },
        ],
      },
    },
    waiting: {
      on: { ReplyRetryRequested: { target: 'pending', guard: 'retryApplies', actions: 'recordRetry' } },
    },
    sent: { type: 'final' },
    skipped: { type: 'final' },
    abandoned: { type: 'final' },
  },
});

export const commandReplyDecider = machineDecider({
  machine: commandReplyMachine,
  toEvents: (command: CommandReplyCommand, state): CommandReplyEvent[] => {
    const now = command.metadata.now;
    switch (command.type) {
      case 'RecordReplySent':
        return [{ type: 'ReplySent', data: { ...command.data, sentAt: now } }];
      case 'RecordReplyFailed':
        return [{ type: 'ReplyFailed', data: { ...command.data, failedAt: now } }];
      case 'RecordReplySkipped':
        return [{ type: 'ReplySkipped', data: { ...command.data, skippedAt: now } }];
      case 'RetryCommandReply':
        // A timer that fires late (the reply went out meanwhile, or a newer retry is due) is a no-op.
        if (!state.matches('waiting') || !attemptRetryApplies(state.context, command.data.attempt)) return [];
        return [{ type: 'ReplyRetryRequested', data: { ...command.data, requestedAt: now } }];
      default:
        return exhaustive(command, 'command reply command');
    }
  },
  events: { schemas: commandReplyEventDataSchemas },
  commands: commandReplyCommandDataSchemas,
});

export type CommandReplyState = ReturnType<typeof commandReplyDecider.initialState>;

/**
 * The reply to `commandId` as an upstream request, while it is pending or waiting for a retry;
 * null once it was sent, skipped or abandoned. (One reply per stream: its id is the command id.)
 */
export const pendingReply = (state: CommandReplyState, commandId: string): UpstreamRequest<'reply'> | null =>
  state.matches('pending') || state.matches('waiting')
    ? {
        requestId: commandId,
        action: 'reply',
        attempt: state.context.attempt,
        failedAttempts: state.context.failedAttempts,
        nextAttemptAt: state.context.nextAttemptAt,
      }
    : null;

export const REPLY_STREAM_PREFIX = 'reply-';
export const replyStreamId = (commandId: string): string => `${REPLY_STREAM_PREFIX}${commandId}`;

/** Routes for the CommandBus: the scheduler's `RetryCommandReply` reaches this decider through it. */
export const commandReplyRoutes: Readonly<Record<string, CommandRoute>> = {
  RetryCommandReply: {
    decider: commandReplyDecider as unknown as CommandRoute['decider'],
    streamId: (command) => replyStreamId(String(command.data.commandId)),
  },
};

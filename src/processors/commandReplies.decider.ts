import { assign, setup } from 'xstate';
import { machineDecider } from '../../machines/shared/machineDecider.ts';
import type { CommandRoute } from '../application/dispatch.ts';
import { type Command, type Event, exhaustive } from '../core/messages.ts';

/**
 * The life of one reply to a refused command, in stream `reply-<commandId>`: the reactor records
 * each attempt's outcome, and the scheduler's `RetryCommandReply` re-opens it when a retry is due.
 *
 *   pending ──ReplySent──► sent
 *      │  └──ReplySkipped──► skipped            (nowhere to send it)
 *      ├──ReplyFailed{final}──► abandoned
 *      └──ReplyFailed──► waiting ──ReplyRetryRequested{attempt = failures + 1}──► pending
 *
 * (It lives beside its reactor because it is bookkeeping of an effect, not a product lifecycle.)
 */
export type ReplySentData = {
  commandId: string;
  attempt: number;
  via: 'response_url' | 'ephemeral';
  sentAt: string;
};
export type ReplyFailedData = {
  commandId: string;
  attempt: number;
  code: string;
  message: string;
  /** When the next attempt is due; null when `final`. */
  nextAttemptAt: string | null;
  final: boolean;
  failedAt: string;
};
export type ReplyRetryRequestedData = {
  commandId: string;
  attempt: number;
  /** Where the `CommandRejected` that needs the reply is. */
  sourceStreamId: string;
  sourceEventId: string;
  requestedAt: string;
};
export type ReplySkippedData = { commandId: string; reason: string; skippedAt: string };

export type CommandReplyEvent =
  | Event<'ReplySent', ReplySentData>
  | Event<'ReplyFailed', ReplyFailedData>
  | Event<'ReplyRetryRequested', ReplyRetryRequestedData>
  | Event<'ReplySkipped', ReplySkippedData>;

export type CommandReplyCommand =
  | Command<'RecordReplySent', Omit<ReplySentData, 'sentAt'>>
  | Command<'RecordReplyFailed', Omit<ReplyFailedData, 'failedAt'>>
  | Command<'RecordReplySkipped', Omit<ReplySkippedData, 'skippedAt'>>
  | Command<'RetryCommandReply', Omit<ReplyRetryRequestedData, 'requestedAt'>>;

export type CommandReplyContext = {
  failures: number;
  lastFailure: { attempt: number; nextAttemptAt: string | null; code: string } | null;
};

export const commandReplyMachine = setup({
  types: { context: {} as CommandReplyContext, events: {} as CommandReplyEvent },
  guards: {
    isFinal: ({ event }) => event.type === 'ReplyFailed' && event.data.final,
    isNextAttempt: ({ context, event }) =>
      event.type === 'ReplyRetryRequested' && event.data.attempt === context.failures + 1,
  },
  actions: {
    recordFailure: assign(({ context, event }) =>
      event.type === 'ReplyFailed'
        ? {
            failures: context.failures + 1,
            lastFailure: {
              attempt: event.data.attempt,
              nextAttemptAt: event.data.nextAttemptAt,
              code: event.data.code,
            },
          }
        : {},
    ),
  },
}).createMachine({
  id: 'commandReply',
  initial: 'pending',
  context: { failures: 0, lastFailure: null },
  states: {
    pending: {
      on: {
        ReplySent: 'sent',
        ReplySkipped: 'skipped',
        ReplyFailed: [
          { target: 'abandoned', guard: 'isFinal', actions: 'recordFailure' },
          { target: 'waiting', actions: 'recordFailure' },
        ],
      },
    },
    waiting: { on: { ReplyRetryRequested: { target: 'pending', guard: 'isNextAttempt' } } },
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
        if (!state.matches('waiting') || command.data.attempt !== state.context.failures + 1) return [];
        return [{ type: 'ReplyRetryRequested', data: { ...command.data, requestedAt: now } }];
      default:
        return exhaustive(command, 'command reply command');
    }
  },
});

export type CommandReplyState = ReturnType<typeof commandReplyDecider.initialState>;

export const REPLY_STREAM_PREFIX = 'reply-';
export const replyStreamId = (commandId: string): string => `${REPLY_STREAM_PREFIX}${commandId}`;

/** Routes for the CommandBus: the scheduler's `RetryCommandReply` reaches this decider through it. */
export const commandReplyRoutes: Readonly<Record<string, CommandRoute>> = {
  RetryCommandReply: {
    decider: commandReplyDecider as unknown as CommandRoute['decider'],
    streamId: (command) => replyStreamId(String(command.data.commandId)),
  },
};

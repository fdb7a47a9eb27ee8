import { describe, expect, it } from 'vitest';
import type { CommandMetadata } from '../../src/core/messages.ts';
import {
  type CommandReplyCommand,
  type CommandReplyEvent,
  commandReplyDecider,
} from '../../src/processors/commandReplies.decider.ts';

const meta = (now = '2026-11-22T02:10:00.000Z'): CommandMetadata => ({
  now,
  commandId: 'cmd',
  actor: 'system:test',
});
const given = (events: CommandReplyEvent[]) =>
  events.reduce(commandReplyDecider.evolve, commandReplyDecider.initialState());

const failed = (attempt: number, final = false): CommandReplyEvent => ({
  type: 'ReplyFailed',
  data: {
    commandId: 'c1',
    attempt,
    code: 'SB_UPSTREAM_UNAVAILABLE',
    message: '500',
    nextAttemptAt: final ? null : '2026-11-22T02:11:00.000Z',
    final,
    failedAt: '2026-11-22T02:10:00.000Z',
  },
});
const retry = (attempt: number): CommandReplyCommand => ({
  type: 'RetryCommandReply',
  data: { commandId: 'c1', attempt, sourceStreamId: 'inbox-slack', sourceEventId: 'e1' },
  metadata: meta(),
});

describe('command reply decider', () => {
  it('records a send in the pending state', () => {
    const events = commandReplyDecider.decide(
      {
        type: 'RecordReplySent',
        data: { commandId: 'c1', attempt: 1, via: 'response_url' },
        metadata: meta(),
      },
      given([]),
    );
    expect(events).toEqual([
      {
        type: 'ReplySent',
        data: { commandId: 'c1', attempt: 1, via: 'response_url', sentAt: '2026-11-22T02:10:00.000Z' },
      },
    ]);
  });

  it('re-opens a waiting reply only for the next attempt', () => {
    const waiting = given([failed(1)]);
    expect(waiting.value).toBe('waiting');
    expect(waiting.context).toMatchObject({
      failedAttempts: 1,
      lastFailure: { attempt: 1, code: 'SB_UPSTREAM_UNAVAILABLE' },
    });
    expect(commandReplyDecider.decide(retry(2), waiting).map((e) => e.type)).toEqual(['ReplyRetryRequested']);
    expect(commandReplyDecider.decide(retry(3), waiting)).toEqual([]); // stale or early timer: no-op
  });

  it('ignores a late retry once the reply is sent or abandoned', () => {
    const sent: CommandReplyEvent = {
      type: 'ReplySent',
      data: { commandId: 'c1', attempt: 2, via: 'ephemeral', sentAt: 'x' },
    };
    const requested: CommandReplyEvent = {
      type: 'ReplyRetryRequested',
      data: {
        commandId: 'c1',
        attempt: 2,
        sourceStreamId: 'inbox-slack',
        sourceEventId: 'e1',
        requestedAt: 'x',
      },
    };
    expect(given([failed(1), requested, sent]).value).toBe('sent');
    expect(commandReplyDecider.decide(retry(2), given([failed(1), requested, sent]))).toEqual([]);
    expect(given([failed(1, true)]).value).toBe('abandoned');
    expect(commandReplyDecider.decide(retry(2), given([failed(1, true)]))).toEqual([]);
  });

  it('refuses to record a second send', () => {
    const sent: CommandReplyEvent = {
      type: 'ReplySent',
      data: { commandId: 'c1', attempt: 1, via: 'response_url', sentAt: 'x' },
    };
    expect(() =>
      commandReplyDecider.decide(
        {
          type: 'RecordReplySent',
          data: { commandId: 'c1', attempt: 2, via: 'response_url' },
          metadata: meta(),
        },
        given([sent]),
      ),
    ).toThrow(expect.objectContaining({ code: 'SB_ILLEGAL_STATE' }));
  });
});

import {
  type PagerReplyState,
  pagerReplyDecider,
  pendingReplyAnswer,
} from '../../../machines/verification/paging/decider.ts';
import { PAGER_REPLY_STREAM_PREFIX } from '../../../machines/verification/paging/streams.ts';
import { foldHistory } from '../../application/fold.ts';
import { ChatOpsError } from '../../core/errors.ts';
import { uuidv5 } from '../../core/ids.ts';
import type { JsonObject } from '../../core/messages.ts';
import type { Dispatch } from '../../processors/dispatchCommand.ts';
import type { RetryRules } from '../../processors/retryPolicy.ts';
import type { Processor } from '../../processors/runner.ts';
import {
  createUpstreamCallProcessor,
  type OutcomeCommand,
  type UpstreamCallTarget,
} from '../../processors/upstreamCall.ts';
import type { VonageClient } from '../../upstream/vonageContract.ts';
import { PAGER_ACTOR } from './pager.ts';

/**
 * Retries of an SMS answer: it is a courtesy (what was done is recorded and on the incident's
 * timeline), so 3 attempts, 1 s doubling; a rate limit waits for the reset the service named.
 */
export const ANSWER_RETRY: RetryRules<'answer'> = {
  base: { maxAttempts: 3, baseMs: 1_000, maxMs: 4_000, jitter: 0.2 },
};

export const PAGING_ANSWERS_PROCESSOR = 'paging-answers';

type Target = UpstreamCallTarget & Readonly<{ numberKey: string }>;

/**
 * `paging-answers`: the SMS that answers a reply (`PagerReplyHandled.answer`, written by
 * paging-replies: what was done, never what was sent), on the durable upstream-call mechanism: sent
 * once with a `client_ref` derived from the reply, a failed attempt recorded
 * (`PagerReplyAnswerFailed`) and retried on ANSWER_RETRY, the answer recorded as sent
 * (`PagerReplyAnswered`). A number that can no longer be read is not answered (a final failure).
 */
export const createPagingAnswersReactor = (
  deps: Readonly<{
    client: Pick<VonageClient, 'sendSms'>;
    /** Our sending number (E.164 digits). */
    from: string;
    dispatch: () => Dispatch;
    /** The digits of a recorded number; null once its person is forgotten. */
    openPhone(stored: string): Promise<string | null>;
    retry?: RetryRules<'answer'>;
  }>,
): Processor => {
  const json = (d: object): JsonObject => d as JsonObject;
  const byReply = (target: Target) => ({ numberKey: target.numberKey, replyId: target.requestId });
  return createUpstreamCallProcessor({
    filter: {
      streamPrefixes: [PAGER_REPLY_STREAM_PREFIX],
      eventTypes: ['PagerReplyHandled', 'PagerReplyAnswerRetried'],
    },
    target: (event): Target | null => {
      const d = event.data as { replyId?: unknown; requestId?: unknown; attempt?: unknown; answer?: unknown };
      const numberKey = event.streamId.slice(PAGER_REPLY_STREAM_PREFIX.length);
      if (event.type === 'PagerReplyHandled') {
        return typeof d.replyId === 'string' && typeof d.answer === 'string'
          ? { streamId: event.streamId, requestId: d.replyId, attempt: 1, numberKey }
          : null;
      }
      return typeof d.requestId === 'string' && typeof d.attempt === 'number'
        ? { streamId: event.streamId, requestId: d.requestId, attempt: d.attempt, numberKey }
        : null;
    },
    spec: {
      processorId: PAGING_ANSWERS_PROCESSOR,
      actor: PAGER_ACTOR,
      policy: deps.retry ?? ANSWER_RETRY,
      readState: async (store, streamId): Promise<PagerReplyState> =>
        foldHistory(pagerReplyDecider, await store.readStream(streamId)),
      pendingRequest: pendingReplyAnswer,
      async call({ request, state, target }): Promise<OutcomeCommand> {
        const phone = state.received[request.requestId]?.phone;
        // Digits as recorded before numbers were sealed are used as they are.
        const digits =
          phone === undefined ? null : /^[0-9]+$/.test(phone) ? phone : await deps.openPhone(phone);
        if (digits === null) {
          throw new ChatOpsError('SB_VALIDATION', 'the number can no longer be read', {
            details: { reason: 'phone_unreadable' },
          });
        }
        const sent = await deps.client.sendSms({
          to: digits,
          from: deps.from,
          text: request.text,
          clientRef: uuidv5(`pager-answer:${request.requestId}`).replace(/-/g, '').slice(0, 32),
        });
        return {
          type: 'RecordPagerReplyAnswered',
          data: json({ ...byReply(target), messageUuid: sent.messageUuid }),
        };
      },
      succeeded: ({ result }) => result,
      failed: ({ request, failure, target }) => ({
        type: 'RecordPagerReplyAnswerFailed',
        data: json({
          ...byReply(target),
          requestId: request.requestId,
          action: request.action,
          attempt: failure.attempt,
          maxAttempts: failure.maxAttempts,
          code: failure.code,
          message: failure.message,
          nextAttemptAt: failure.nextAttemptAt,
        }),
      }),
      retry: ({ request, attempt, target }) => ({
        type: 'RetryPagerReplyAnswer',
        data: json({ ...byReply(target), requestId: request.requestId, action: request.action, attempt }),
      }),
      retryTimerId: (request, failedAttempt) =>
        `pager-answer-retry-${uuidv5(`pager-answer:${request.requestId}`)}-${failedAttempt}`,
      record: (command) => deps.dispatch()(command),
    },
  });
};

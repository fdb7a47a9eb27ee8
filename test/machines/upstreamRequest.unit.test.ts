import { describe, expect, it } from 'vitest';
import {
  attemptStatus,
  decideFailure,
  decideRetry,
  FIRST_ATTEMPT,
  failureApplies,
  retryApplies,
  retryDue,
  type UpstreamRequest,
  withFailedAttempt,
  withRetry,
} from '../../machines/shared/upstreamRequest.ts';
import type { CommandMetadata } from '../../src/core/messages.ts';
import { deciderSpec } from '../support/deciderSpec.ts';
import { type TicketCommand, type TicketEvent, ticketDecider } from '../support/ticketLifecycle.ts';

/**
 * The rules every durable upstream call follows (machines/shared/upstreamRequest.ts), first as
 * plain data, then through a lifecycle that uses them (the ticket test lifecycle's filing call):
 * given the facts, when a command, then the facts it records.
 */
const T = (minute: number) => `2026-11-22T02:${String(minute).padStart(2, '0')}:00.000Z`;

const requested: UpstreamRequest<'file'> = { requestId: 'r1', action: 'file', ...FIRST_ATTEMPT };
const waiting = withFailedAttempt(requested, { attempt: 1, nextAttemptAt: T(1) });
const second = withRetry(waiting, { attempt: 2 });
const givenUp = withFailedAttempt(second, { attempt: 2, nextAttemptAt: null });

const report = (attempt: number, nextAttemptAt: string | null, requestId = 'r1') => ({
  requestId,
  action: 'file' as const,
  attempt,
  maxAttempts: 3,
  code: 'SB_UPSTREAM_UNAVAILABLE',
  message: '503',
  nextAttemptAt,
});
const retry = (attempt: number, requestId = 'r1') => ({ requestId, action: 'file' as const, attempt });

describe('upstream request rules, over data', () => {
  it('a request starts at attempt 1; a failure waits for its retry; a retry starts the next attempt', () => {
    expect(requested).toMatchObject({ attempt: 1, failedAttempts: 0, nextAttemptAt: null });
    expect(waiting).toMatchObject({ attempt: 1, failedAttempts: 1, nextAttemptAt: T(1) });
    expect(second).toMatchObject({ attempt: 2, failedAttempts: 1, nextAttemptAt: null });
    expect(givenUp).toMatchObject({ attempt: 2, failedAttempts: 2, nextAttemptAt: null });
  });

  it.each([
    ['in progress, its own attempt', requested, report(1, T(1)), true],
    ['in progress, another attempt', requested, report(2, T(1)), false],
    ['in progress, another request', requested, report(1, T(1), 'r2'), false],
    ['already failed (a repeated report)', waiting, report(1, T(1)), false],
    ['the retried attempt', second, report(2, null), true],
    ['the attempt before the retry', second, report(1, T(1)), false],
    ['given up', givenUp, report(2, null), false],
    ['no request (confirmed, superseded)', null, report(1, T(1)), false],
  ] as const)('a failure report applies: %s → %s', (_, request, failure, applies) => {
    expect(failureApplies(request, failure)).toBe(applies);
    const fact = decideFailure(request, failure, T(0));
    expect(fact).toEqual(applies ? { ...failure, final: failure.nextAttemptAt === null, at: T(0) } : null);
  });

  it.each([
    ['waiting, the next attempt', waiting, retry(2), true],
    ['waiting, a later attempt (an early timer)', waiting, retry(3), false],
    ['waiting, the same attempt again', waiting, retry(1), false],
    ['in progress (not failed)', requested, retry(2), false],
    ['retried already (a late timer)', second, retry(2), false],
    ['given up (final failure)', givenUp, retry(3), false],
    ['another request', waiting, retry(2, 'r2'), false],
    ['no request', null, retry(2), false],
  ] as const)('a retry applies: %s → %s', (_, request, r, applies) => {
    expect(retryApplies(request, r)).toBe(applies);
    expect(decideRetry(request, r, T(1))).toEqual(applies ? { ...r, at: T(1) } : null);
  });

  it.each([
    ['attempt 1 in progress', requested, 1, 'due'],
    ['attempt 1 failed, waiting', waiting, 1, 'failed'],
    ['attempt 2 asked while attempt 1 waits (an early retry)', waiting, 2, 'stale'],
    ['attempt 1 asked while attempt 2 runs (a redelivery)', second, 1, 'stale'],
    ['attempt 2 in progress', second, 2, 'due'],
    ['given up at attempt 2', givenUp, 2, 'failed'],
    ['no longer pending', null, 1, 'stale'],
  ] as const)('where an attempt stands for the processor: %s → %s', (_, request, attempt, status) => {
    expect(attemptStatus(request, attempt)).toBe(status);
  });

  it('the retry a request waits for: the next attempt at nextAttemptAt, none once given up', () => {
    expect(retryDue(waiting)).toEqual({ attempt: 2, dueAt: T(1) });
    expect(retryDue(requested)).toBeNull();
    expect(retryDue(second)).toBeNull();
    expect(retryDue(givenUp)).toBeNull();
    expect(retryDue(null)).toBeNull();
  });
});

const meta = (commandId: string, minute: number): CommandMetadata => ({
  now: T(minute),
  commandId,
  actor: 'system:test',
});
const cmd = {
  file: (): TicketCommand => ({ type: 'FileTicket', data: { ticketId: 't1' }, metadata: meta('r1', 0) }),
  failed: (attempt: number, nextAttemptAt: string | null, minute = 0): TicketCommand => ({
    type: 'RecordTicketFilingFailed',
    data: { ticketId: 't1', ...report(attempt, nextAttemptAt) },
    metadata: meta(`failed-${attempt}`, minute),
  }),
  retry: (attempt: number, minute: number): TicketCommand => ({
    type: 'RetryTicketFiling',
    data: { ticketId: 't1', ...retry(attempt) },
    metadata: meta(`retry-${attempt}`, minute),
  }),
  filed: (): TicketCommand => ({
    type: 'RecordTicketFiled',
    data: { ticketId: 't1', requestId: 'r1', trackerId: 'TRK-1' },
    metadata: meta('filed', 5),
  }),
  close: (): TicketCommand => ({ type: 'CloseTicket', data: { ticketId: 't1' }, metadata: meta('close', 5) }),
};
const ev = {
  opened: { type: 'TicketOpened', data: { ticketId: 't1', title: 'x', by: 'U1' } } as TicketEvent,
  requested: {
    type: 'TicketFilingRequested',
    data: { requestId: 'r1', ticketId: 't1', requestedAt: T(0) },
  } as TicketEvent,
  failed: (attempt: number, nextAttemptAt: string | null, minute = 0): TicketEvent => ({
    type: 'TicketFilingFailed',
    data: { ...report(attempt, nextAttemptAt), final: nextAttemptAt === null, at: T(minute) },
  }),
  retried: (attempt: number, minute: number): TicketEvent => ({
    type: 'TicketFilingRetried',
    data: { ...retry(attempt), at: T(minute) },
  }),
  filed: { type: 'TicketFiled', data: { requestId: 'r1', trackerId: 'TRK-1', at: T(5) } } as TicketEvent,
  closed: { type: 'TicketClosed', data: { ticketId: 't1', by: 'system:test' } } as TicketEvent,
};

describe('upstream request rules, in a lifecycle (given facts, when a command, then facts)', () => {
  const spec = deciderSpec(ticketDecider);

  it('records the request, a failed attempt, the retry, and the confirmation', () => {
    spec.given([ev.opened]).when(cmd.file()).then([ev.requested]);
    spec
      .given([ev.opened, ev.requested])
      .when(cmd.failed(1, T(1)))
      .then([ev.failed(1, T(1))]);
    spec
      .given([ev.opened, ev.requested, ev.failed(1, T(1))])
      .when(cmd.retry(2, 1))
      .then([ev.retried(2, 1)]);
    const state = spec
      .given([ev.opened, ev.requested, ev.failed(1, T(1)), ev.retried(2, 1)])
      .when(cmd.filed())
      .then([ev.filed]);
    expect(state.context.filing).toBeNull();
    expect(state.context.trackerId).toBe('TRK-1');
  });

  it('a repeated or stale failure report records nothing', () => {
    spec
      .given([ev.opened, ev.requested, ev.failed(1, T(1))])
      .when(cmd.failed(1, T(1)))
      .then([]);
    spec
      .given([ev.opened, ev.requested, ev.failed(1, T(1)), ev.retried(2, 1)])
      .when(cmd.failed(1, T(1)))
      .then([]);
    spec
      .given([ev.opened, ev.requested, ev.filed])
      .when(cmd.failed(1, T(1)))
      .then([]);
  });

  it('a retry that is early, late, or for a request no longer pending records nothing (so it is never sent)', () => {
    spec.given([ev.opened, ev.requested]).when(cmd.retry(2, 1)).then([]);
    spec
      .given([ev.opened, ev.requested, ev.failed(1, T(1))])
      .when(cmd.retry(3, 1))
      .then([]);
    spec
      .given([ev.opened, ev.requested, ev.failed(1, T(1)), ev.retried(2, 1)])
      .when(cmd.retry(2, 1))
      .then([]);
    spec
      .given([ev.opened, ev.requested, ev.failed(1, T(1)), ev.closed])
      .when(cmd.retry(2, 1))
      .then([]);
  });

  it('a final failure gives the request up: no retry applies, and it is no longer pending', () => {
    const state = spec
      .given([ev.opened, ev.requested, ev.failed(1, T(1)), ev.retried(2, 1)])
      .when(cmd.failed(2, null, 3))
      .then([ev.failed(2, null, 3)]);
    expect(state.context.filing).toBeNull();
    spec
      .given([ev.opened, ev.requested, ev.failed(1, T(1)), ev.retried(2, 1), ev.failed(2, null, 3)])
      .when(cmd.retry(3, 4))
      .then([]);
  });

  it('the state keeps the attempts the processor needs', () => {
    const { state } = spec
      .given([ev.opened, ev.requested])
      .when(cmd.failed(1, T(1)))
      .events();
    expect(state.context.filing).toEqual({
      requestId: 'r1',
      action: 'file',
      attempt: 1,
      failedAttempts: 1,
      nextAttemptAt: T(1),
    });
    expect(retryDue(state.context.filing)).toEqual({ attempt: 2, dueAt: T(1) });
  });
});

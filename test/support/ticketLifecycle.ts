import { assign, setup } from 'xstate';
import { z } from 'zod';
import type { StoredEvent } from '../../machines/shared/eventSchemas.ts';
import { machineDecider } from '../../machines/shared/machineDecider.ts';
import {
  decideFailure,
  decideRetry,
  FIRST_ATTEMPT,
  failureApplies,
  recordUpstreamCallFailedSchema,
  retryApplies,
  retryUpstreamCallSchema,
  type UpstreamRequest,
  upstreamCallFailedSchema,
  upstreamCallRetriedSchema,
  withFailedAttempt,
  withRetry,
} from '../../machines/shared/upstreamRequest.ts';
import type { CommandBus, CommandRoute } from '../../src/application/dispatch.ts';
import { foldHistory } from '../../src/application/fold.ts';
import {
  type Command,
  type CommandMetadata,
  type Event,
  exhaustive,
  type JsonObject,
} from '../../src/core/messages.ts';
import type { Processor } from '../../src/processors/runner.ts';
import {
  createUpstreamCallProcessor,
  type UpstreamCallTarget,
  type UpstreamRetryPolicy,
} from '../../src/processors/upstreamCall.ts';
import type { TicketTracker } from './ticketTracker.ts';

/**
 * A tiny lifecycle for processor tests (a real machineDecider, not a mock): a ticket is opened,
 * touched any number of times, filed with a vendor's tracker (a durable upstream call, with the
 * shared rules of machines/shared/upstreamRequest.ts), closed. Touching or closing a ticket that
 * is not open is refused (SB_ILLEGAL_STATE); closing drops a filing still in flight. Streams
 * `ticket-<ticketId>`. Its events are declared with zod schemas, and `TicketCreated { name }`, the
 * shape `TicketOpened` had once, is read through an upcaster.
 */
const ticketId = z.string().min(1);
const at = z.string().min(1);
const filingAction = z.enum(['file']);

export const ticketEventDataSchemas = {
  TicketOpened: z.object({ ticketId, title: z.string(), by: z.string() }),
  TicketTouched: z.object({ ticketId, by: z.string(), at }),
  TicketClosed: z.object({ ticketId, by: z.string() }),
  TicketFilingRequested: z.object({ requestId: z.string().min(1), ticketId, requestedAt: at }),
  TicketFiled: z.object({ requestId: z.string().min(1), trackerId: z.string().min(1), at }),
  TicketFilingFailed: upstreamCallFailedSchema(filingAction),
  TicketFilingRetried: upstreamCallRetriedSchema(filingAction),
} as const;

type Data<T extends keyof typeof ticketEventDataSchemas> = z.infer<(typeof ticketEventDataSchemas)[T]>;
export type TicketEvent = {
  [T in keyof typeof ticketEventDataSchemas]: Event<T, Data<T>>;
}[keyof typeof ticketEventDataSchemas];

/** The first shape of TicketOpened, stored under another name: `TicketCreated { ticketId, name, by }`. */
export const ticketEventUpcasters = {
  TicketCreated: (stored: StoredEvent): StoredEvent => {
    const d = stored.data as { ticketId?: unknown; name?: unknown; by?: unknown };
    return { type: 'TicketOpened', data: { ticketId: d.ticketId, title: d.name, by: d.by } };
  },
};

export const ticketCommandDataSchemas = {
  OpenTicket: z.object({ ticketId, title: z.string() }),
  TouchTicket: z.object({ ticketId }),
  CloseTicket: z.object({ ticketId }),
  FileTicket: z.object({ ticketId }),
  RecordTicketFiled: z.object({ ticketId, requestId: z.string().min(1), trackerId: z.string().min(1) }),
  RecordTicketFilingFailed: recordUpstreamCallFailedSchema(filingAction).extend({ ticketId }),
  RetryTicketFiling: retryUpstreamCallSchema(filingAction).extend({ ticketId }),
} as const;

type CommandData<T extends keyof typeof ticketCommandDataSchemas> = z.infer<
  (typeof ticketCommandDataSchemas)[T]
>;
export type TicketCommand = {
  [T in keyof typeof ticketCommandDataSchemas]: Command<T, CommandData<T>>;
}[keyof typeof ticketCommandDataSchemas];

/** Filing with the tracker, while it is in flight. */
export type TicketFiling = UpstreamRequest<'file'>;

type TicketContext = Readonly<{ touches: number; filing: TicketFiling | null; trackerId: string | null }>;

export const ticketMachine = setup({
  types: { context: {} as TicketContext, events: {} as TicketEvent },
  guards: {
    canFile: ({ context }) => context.filing === null && context.trackerId === null,
    confirmsFiling: ({ context, event }) =>
      event.type === 'TicketFiled' && context.filing?.requestId === event.data.requestId,
    failureApplies: ({ context, event }) =>
      event.type === 'TicketFilingFailed' && failureApplies(context.filing, event.data),
    retryApplies: ({ context, event }) =>
      event.type === 'TicketFilingRetried' && retryApplies(context.filing, event.data),
  },
  actions: {
    requestFiling: assign(({ event }) =>
      event.type === 'TicketFilingRequested'
        ? { filing: { requestId: event.data.requestId, action: 'file' as const, ...FIRST_ATTEMPT } }
        : {},
    ),
    recordFiled: assign(({ event }) =>
      event.type === 'TicketFiled' ? { filing: null, trackerId: event.data.trackerId } : {},
    ),
    recordFailure: assign(({ context, event }) =>
      event.type === 'TicketFilingFailed' && context.filing
        ? { filing: event.data.final ? null : withFailedAttempt(context.filing, event.data) }
        : {},
    ),
    recordRetry: assign(({ context, event }) =>
      event.type === 'TicketFilingRetried' && context.filing
        ? { filing: withRetry(context.filing, event.data) }
        : {},
    ),
  },
}).createMachine({
  id: 'ticket',
  initial: 'notOpened',
  context: { touches: 0, filing: null, trackerId: null },
  states: {
    notOpened: { on: { TicketOpened: 'open' } },
    open: {
      on: {
        TicketTouched: { actions: assign({ touches: ({ context }) => context.touches + 1 }) },
        TicketFilingRequested: { guard: 'canFile', actions: 'requestFiling' },
        TicketFiled: { guard: 'confirmsFiling', actions: 'recordFiled' },
        TicketFilingFailed: { guard: 'failureApplies', actions: 'recordFailure' },
        TicketFilingRetried: { guard: 'retryApplies', actions: 'recordRetry' },
        TicketClosed: { target: 'closed', actions: assign({ filing: null }) },
      },
    },
    closed: { type: 'final' },
  },
});

export const ticketDecider = machineDecider({
  machine: ticketMachine,
  toEvents: (command: TicketCommand, state): TicketEvent[] => {
    const by = command.metadata.actor;
    const now = command.metadata.now;
    const filing = state.context.filing;
    switch (command.type) {
      case 'OpenTicket':
        return [
          { type: 'TicketOpened', data: { ticketId: command.data.ticketId, title: command.data.title, by } },
        ];
      case 'TouchTicket':
        return [{ type: 'TicketTouched', data: { ticketId: command.data.ticketId, by, at: now } }];
      case 'CloseTicket':
        return [{ type: 'TicketClosed', data: { ticketId: command.data.ticketId, by } }];
      case 'FileTicket':
        return [
          {
            type: 'TicketFilingRequested',
            data: {
              requestId: command.metadata.commandId,
              ticketId: command.data.ticketId,
              requestedAt: now,
            },
          },
        ];
      case 'RecordTicketFiled':
        // Confirmed already, or dropped meanwhile: nothing to record.
        if (filing?.requestId !== command.data.requestId) return [];
        return [
          {
            type: 'TicketFiled',
            data: { requestId: command.data.requestId, trackerId: command.data.trackerId, at: now },
          },
        ];
      case 'RecordTicketFilingFailed': {
        const { ticketId: _, ...report } = command.data;
        const fact = decideFailure(filing, report, now);
        return fact ? [{ type: 'TicketFilingFailed', data: fact }] : [];
      }
      case 'RetryTicketFiling': {
        const { ticketId: _, ...retry } = command.data;
        const fact = decideRetry(filing, retry, now);
        return fact ? [{ type: 'TicketFilingRetried', data: fact }] : [];
      }
      default:
        return exhaustive(command, 'ticket command');
    }
  },
  events: { schemas: ticketEventDataSchemas, upcasters: ticketEventUpcasters },
  commands: ticketCommandDataSchemas,
});

export const ticketStreamId = (ticketId: string): string => `ticket-${ticketId}`;

const route: CommandRoute = {
  decider: ticketDecider as unknown as CommandRoute['decider'],
  streamId: (command) => ticketStreamId(String(command.data.ticketId)),
};

export const ticketRoutes: Readonly<Record<string, CommandRoute>> = Object.fromEntries(
  Object.keys(ticketCommandDataSchemas).map((type) => [type, route]),
);

/** A ticket command as the edge would build it. */
export const ticketCommand = (
  type: 'OpenTicket' | 'TouchTicket' | 'CloseTicket' | 'FileTicket',
  ticketId: string,
  metadata: Partial<CommandMetadata> & Pick<CommandMetadata, 'commandId'>,
): Command => ({
  type,
  data: type === 'OpenTicket' ? { ticketId, title: `ticket ${ticketId}` } : { ticketId },
  metadata: { now: '2026-11-22T02:00:00.000Z', actor: 'U0TESTER', ...metadata },
});

export const TICKET_FILING_PROCESSOR = 'ticket-filing';

/** Timer id of the retry after failed attempt `attempt` of a filing. */
export const ticketRetryTimerId = (requestId: string, attempt: number): string =>
  `ticket-retry-${requestId}-${attempt}`;

/**
 * `ticket-filing`: files tickets with the tracker through the shared durable-upstream-call
 * mechanism (createUpstreamCallProcessor), the way a lifecycle's reactor does. Its "check before
 * repeating" asks the tracker what it has for the ticket.
 */
export const createTicketFilingReactor = (
  options: Readonly<{
    tracker: TicketTracker;
    dispatch: CommandBus['dispatch'];
    /** A RetryPolicy, RetryRules, or a function of the failure (its error and the request). */
    policy: UpstreamRetryPolicy<unknown, TicketFiling, UpstreamCallTarget>;
  }>,
): Processor => {
  type Target = UpstreamCallTarget & Readonly<{ ticketId: string }>;
  const json = (d: object): JsonObject => d as JsonObject;
  return createUpstreamCallProcessor({
    filter: { streamPrefixes: ['ticket-'], eventTypes: ['TicketFilingRequested', 'TicketFilingRetried'] },
    target: (event): Target | null => {
      const d = event.data as { requestId?: string; ticketId?: string; attempt?: number };
      if (typeof d.requestId !== 'string') return null;
      const id = event.streamId.slice('ticket-'.length);
      return {
        streamId: event.streamId,
        requestId: d.requestId,
        attempt: event.type === 'TicketFilingRetried' ? Number(d.attempt) : 1,
        ticketId: id,
      };
    },
    spec: {
      processorId: TICKET_FILING_PROCESSOR,
      actor: 'system:ticket-filing',
      policy: options.policy,
      readState: async (store, streamId) => foldHistory(ticketDecider, await store.readStream(streamId)),
      pendingRequest: (state, requestId) =>
        state.context.filing?.requestId === requestId ? state.context.filing : null,
      check: async ({ target }) => options.tracker.find(target.ticketId),
      call: async ({ target }) => options.tracker.file(target.ticketId, `ticket ${target.ticketId}`),
      succeeded: ({ request, result, target }) => ({
        type: 'RecordTicketFiled',
        data: json({ ticketId: target.ticketId, requestId: request.requestId, trackerId: result }),
      }),
      failed: ({ request, failure, target }) => ({
        type: 'RecordTicketFilingFailed',
        data: json({
          ticketId: target.ticketId,
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
        type: 'RetryTicketFiling',
        data: json({
          ticketId: target.ticketId,
          requestId: request.requestId,
          action: request.action,
          attempt,
        }),
      }),
      retryTimerId: (request, failedAttempt) => ticketRetryTimerId(request.requestId, failedAttempt),
      record: (command) => options.dispatch(command),
    },
  });
};

import type { ErrorCode } from '../core/errors.ts';
import { isChatOpsError } from '../core/errors.ts';
import { uuidv5 } from '../core/ids.ts';
import type { Command, CommandMetadata, JsonObject, JsonValue } from '../core/messages.ts';
import { type EventStore, type RecordedEvent, streamCategory } from '../eventStore/eventStore.ts';
import type { Metrics } from '../metrics.ts';

/**
 * The inbox: every Slack input and webhook delivery is recorded with ONE append before it is
 * acknowledged, so nothing acknowledged is lost in a crash. The record carries the raw input (who, when,
 * source ids, payload) and the commands the edge parsed from it (or why it could not parse).
 * A processor dispatches those commands to the deciders later; handlers never touch deciders
 * or the store themselves.
 *
 * Idempotency: the inbox event id is `uuidv5('slack:' + deliveryId)` or
 * `uuidv5(source + ':' + deliveryId)`, so a Slack retry or a webhook redelivery appends nothing
 * and `accept` reports `deduplicated: true`.
 *
 * Streams: `inbox-slack`, `inbox-<source>` (e.g. `inbox-pagerduty`). Messages are
 * `kind: 'command'` (inputs, not facts), types `SlackInputReceived` and `WebhookReceived`.
 *
 * @example
 * // in a Bolt listener (handlers/), after the recording middleware put the input on context:
 * const input = context.slackInput;
 * const receipt = await deps.inbox.accept({ input, commands: [ackIncident(input, id)] });
 * await ack(receipt.deduplicated ? undefined : 'Acknowledging…');
 */

export const SLACK_INBOX_STREAM = 'inbox-slack';
export const INBOX_STREAM_PREFIX = 'inbox-';
export const SLACK_INPUT_RECEIVED = 'SlackInputReceived';
export const WEBHOOK_RECEIVED = 'WebhookReceived';

/** Where a webhook source's deliveries are recorded. `source` is a lower-case word (`pagerduty`). */
export const webhookInboxStream = (source: string): string => `${INBOX_STREAM_PREFIX}${source}`;

export const slackInboxEventId = (deliveryId: string): string => uuidv5(`slack:${deliveryId}`);
export const webhookInboxEventId = (source: string, deliveryId: string): string =>
  uuidv5(`${source}:${deliveryId}`);

export type SlackInputKind =
  | 'slash_command'
  | 'block_action'
  | 'view_submission'
  | 'view_closed'
  | 'event'
  | 'options'
  | 'shortcut';

/** Which kind of input a Slack request body is, or undefined for bodies that are not inputs. */
export const slackInputKind = (body: Readonly<Record<string, unknown>>): SlackInputKind | undefined => {
  if (typeof body['command'] === 'string') return 'slash_command';
  switch (body['type']) {
    case 'block_actions':
    case 'interactive_message':
      return 'block_action';
    case 'view_submission':
      return 'view_submission';
    case 'view_closed':
      return 'view_closed';
    case 'event_callback':
      return 'event';
    case 'block_suggestion':
    case 'dialog_suggestion':
      return 'options';
    case 'shortcut':
    case 'message_action':
      return 'shortcut';
    default:
      return undefined;
  }
};

/** One Slack request as recorded: who, where, which delivery, and the payload (minus Slack's deprecated `token`). */
export type SlackInput = Readonly<{
  source: 'slack';
  inputKind: SlackInputKind;
  /**
   * Slack's id of this delivery: trigger_id for commands, views and shortcuts; trigger_id +
   * action_ts for block actions (two clicks are two inputs, a retry is not); event_id for events.
   */
  deliveryId: string;
  /** The inbox event id derived from deliveryId. */
  eventId: string;
  /** What was invoked: `/incident`, an action_id, a view callback_id, an event type. */
  name: string;
  /** ISO time the request arrived (read at the edge). */
  receivedAt: string;
  /** Slack user id of whoever acted, when there is one. */
  actor: string | undefined;
  teamId: string | undefined;
  channelId: string | undefined;
  triggerId: string | undefined;
  responseUrl: string | undefined;
  /** `X-Slack-Retry-Num` / `X-Slack-Retry-Reason` (Events API redeliveries). */
  retryNum: number | undefined;
  retryReason: string | undefined;
  payload: JsonObject;
}>;

/** One webhook delivery as recorded. Signature headers are not kept. */
export type WebhookInput = Readonly<{
  source: string;
  deliveryId: string;
  eventId: string;
  /** The route it came in on (`/webhooks/vonage/verify`). */
  route: string;
  receivedAt: string;
  /** Selected, non-secret headers (content type, vendor event/delivery headers). */
  headers: Readonly<Record<string, string>>;
  /** The body parsed as JSON, or as text when it is not JSON. */
  body: JsonValue;
}>;

/** Why an input produced no command: shown to the user and kept for the timeline. */
export type InboxRejection = Readonly<{ code: ErrorCode | 'SB_UNHANDLED'; message: string }>;

export type SlackInputReceivedData = Readonly<{
  input: SlackInput;
  commands: readonly Command[];
  rejection?: InboxRejection;
}>;

export type WebhookReceivedData = Readonly<{
  input: WebhookInput;
  commands: readonly Command[];
  rejection?: InboxRejection;
}>;

export type InboxReceipt = Readonly<{
  eventId: string;
  streamId: string;
  position: bigint;
  /** True for a redelivery of something already recorded: nothing was appended. */
  deduplicated: boolean;
}>;

export type AcceptSlackInput = Readonly<{
  input: SlackInput;
  /** The commands parsed from the input; `[]` when it asks for nothing (or could not parse). */
  commands?: readonly Command[];
  /** When parsing failed or the input was not handled: a ValidationError, a ChatOpsError, or text. */
  rejection?: Error | InboxRejection;
}>;

export type AcceptWebhook = Readonly<{
  input: WebhookInput;
  commands?: readonly Command[];
  rejection?: Error | InboxRejection;
}>;

export type Inbox = Readonly<{
  /** Records a Slack input with one durable append; throws SB_STORE_UNAVAILABLE if it cannot. */
  accept(args: AcceptSlackInput): Promise<InboxReceipt>;
  /** Records a webhook delivery with one durable append. */
  acceptWebhook(args: AcceptWebhook): Promise<InboxReceipt>;
  /** Whether `accept` already ran for this input object (the catch-all middleware asks). */
  wasAccepted(input: SlackInput): boolean;
}>;

const toRejection = (r: Error | InboxRejection | undefined): InboxRejection | undefined => {
  if (r === undefined) return undefined;
  if (r instanceof Error) return { code: isChatOpsError(r) ? r.code : 'SB_VALIDATION', message: r.message };
  return r;
};

/**
 * The records are JSON-shaped by construction (parsed request bodies, plain commands); fields
 * that are `undefined` are dropped when the store serialises them.
 */
const json = (value: object): JsonObject => value as JsonObject;

export const createInbox = (
  deps: Readonly<{
    store: EventStore;
    metrics?: Metrics;
    /**
     * Seals a `response_url` before it is stored (src/core/sealed.ts): it is a bearer capability
     * for the conversation, so the store keeps it sealed in `input.responseUrl` and in each
     * command's `metadata.responseUrl`, and not at all in the recorded payload. The reply poster
     * opens it. Without it (some unit tests) response URLs are stored as they came.
     */
    sealResponseUrl?: (url: string) => string;
  }>,
): Inbox => {
  const { store, metrics, sealResponseUrl } = deps;
  const accepted = new WeakSet<SlackInput>();

  /** The input and commands as they may be stored: no response_url in clear. */
  const protect = (
    input: SlackInput,
    commands: readonly Command[],
  ): { input: SlackInput; commands: readonly Command[] } => {
    if (!sealResponseUrl) return { input, commands };
    const { response_url: _url, response_urls: _urls, ...payload } = input.payload;
    const sealed = input.responseUrl === undefined ? undefined : sealResponseUrl(input.responseUrl);
    return {
      input: { ...input, payload, responseUrl: sealed },
      commands: commands.map((c) =>
        typeof c.metadata?.responseUrl === 'string'
          ? {
              ...c,
              metadata: {
                ...c.metadata,
                responseUrl:
                  c.metadata.responseUrl === input.responseUrl && sealed !== undefined
                    ? sealed
                    : sealResponseUrl(c.metadata.responseUrl),
              },
            }
          : c,
      ),
    };
  };

  const append = async (
    streamId: string,
    eventId: string,
    type: string,
    data: JsonObject,
    metadata: JsonObject,
    labels: Readonly<{ source: string; kind: string }>,
  ): Promise<InboxReceipt> => {
    try {
      const r = await store.appendToStream(
        streamId,
        [{ id: eventId, type, data, metadata, kind: 'command' }],
        {
          expectedRevision: 'any',
        },
      );
      const result = r.deduplicated ? 'deduplicated' : 'appended';
      metrics?.appends.inc({ category: streamCategory(streamId), result });
      metrics?.inputs.inc({ ...labels, result: r.deduplicated ? 'duplicate' : 'recorded' });
      return { eventId, streamId, position: r.position, deduplicated: r.deduplicated };
    } catch (e) {
      metrics?.appends.inc({ category: streamCategory(streamId), result: 'failed' });
      metrics?.inputs.inc({ ...labels, result: 'failed' });
      throw e;
    }
  };

  return {
    async accept({ input, commands = [], rejection }) {
      accepted.add(input);
      const r = toRejection(rejection);
      const stored = protect(input, commands);
      const data = json({ input: stored.input, commands: stored.commands, ...(r ? { rejection: r } : {}) });
      return append(
        SLACK_INBOX_STREAM,
        input.eventId,
        SLACK_INPUT_RECEIVED,
        data,
        json({
          source: 'slack',
          inputKind: input.inputKind,
          actor: input.actor,
          receivedAt: input.receivedAt,
        }),
        { source: 'slack', kind: input.inputKind },
      );
    },
    async acceptWebhook({ input, commands = [], rejection }) {
      const r = toRejection(rejection);
      const data = json({ input, commands, ...(r ? { rejection: r } : {}) });
      return append(
        webhookInboxStream(input.source),
        input.eventId,
        WEBHOOK_RECEIVED,
        data,
        json({ source: input.source, route: input.route, receivedAt: input.receivedAt }),
        { source: input.source, kind: 'webhook' },
      );
    },
    wasAccepted: (input) => accepted.has(input),
  };
};

/**
 * Metadata for the `index`-th command parsed from an input: time from the edge, a deterministic
 * command id (so a re-dispatched inbox record decides nothing twice), the actor and Slack context,
 * and the inbox event as causation.
 *
 * @example
 * const command = { type: 'AcknowledgeIncident', data: { incidentId }, metadata: commandMetadata(input) };
 */
export const commandMetadata = (
  input: SlackInput | WebhookInput,
  index = 0,
  overrides: Partial<CommandMetadata> = {},
): CommandMetadata => {
  const base: CommandMetadata =
    input.source === 'slack' && 'inputKind' in input
      ? {
          now: input.receivedAt,
          commandId: uuidv5(`${input.eventId}:${index}`),
          actor: input.actor ?? 'slack:unknown',
          ...(input.teamId ? { teamId: input.teamId } : {}),
          ...(input.channelId ? { channelId: input.channelId } : {}),
          ...(input.responseUrl ? { responseUrl: input.responseUrl } : {}),
          causationId: input.eventId,
        }
      : {
          now: input.receivedAt,
          commandId: uuidv5(`${input.eventId}:${index}`),
          actor: `${input.source}:webhook`,
          causationId: input.eventId,
        };
  return { ...base, ...overrides };
};

/** The recorded inbox messages this module writes, for the processor that dispatches them. */
export const isInboxRecord = (event: RecordedEvent): boolean =>
  event.streamId.startsWith(INBOX_STREAM_PREFIX) &&
  (event.type === SLACK_INPUT_RECEIVED || event.type === WEBHOOK_RECEIVED);

/**
 * The commands inside a recorded inbox message (`[]` for anything else).
 *
 * @example
 * store.subscribe({ from, filter: { streamPrefixes: [INBOX_STREAM_PREFIX] }, onEvent: async (e) => {
 *   for (const command of inboxCommands(e)) await bus.dispatch(command);
 * }});
 */
export const inboxCommands = (event: RecordedEvent): Command[] => {
  if (!isInboxRecord(event)) return [];
  const commands = (event.data as { commands?: unknown }).commands;
  return Array.isArray(commands) ? (commands as Command[]) : [];
};

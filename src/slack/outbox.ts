import { isChatOpsError } from '../core/errors.ts';
import type { JsonObject } from '../core/messages.ts';
import type { EventStore } from '../eventStore/eventStore.ts';
import { abortableSleep } from '../processors/abortableSleep.ts';
import type { ProcessorLogger } from '../processors/ports.ts';
import { errorCodeOf, isPermanentError, retryAfterMsOf } from '../processors/retryPolicy.ts';
import type { KnownBlock, SlackMessage } from './blocks/format.ts';
import type { MessageMarker, OutboxLedger, OutboxRecord, Sent } from './outboxLedger.ts';
import { createRateGate, type RateGate } from './rateGate.ts';
import { messageForReader } from './readerDates.ts';

export type { MessageMarker, OutboxLedger, OutboxRecord, Sent } from './outboxLedger.ts';
export { NOTICE_METADATA_EVENT_TYPE, noticeLedger } from './outboxLedger.ts';

/**
 * What the outbox needs of the processor that sends (a ProcessorContext is one): its store and
 * time for the records, its logger, its signal (every wait ends when the runner stops), and whether
 * the event may have been handled before.
 */
export type OutboxContext = Readonly<{
  processorId: string;
  store: EventStore;
  now(): Date;
  logger: ProcessorLogger;
  signal: AbortSignal;
  /** The event may have been handled before (a restart, a retry, a replay): see ProcessorContext. */
  redelivery: boolean;
}>;

/** A message in a conversation's history, as conversations.history gives it. */
export type HistoryMessage = Readonly<{
  ts: string;
  text?: string | undefined;
  blocks?: readonly unknown[] | undefined;
  metadata?: Readonly<{ event_type?: string; event_payload?: Readonly<Record<string, unknown>> }> | undefined;
}>;

export type HomeView = Readonly<{ type: 'home'; blocks: KnownBlock[] }>;

/**
 * The Slack calls under the outbox (slackOutboxTransport over the Web API client). Errors are
 * ChatOpsErrors (src/slack/webClient.ts): `details.slackError`, and SB_UPSTREAM_RATE_LIMITED with
 * `details.retryAfterMs` at once (the outbox waits, never the client).
 */
export type OutboxTransport = Readonly<{
  /**
   * chat.postMessage with `marker` as metadata (in the thread of `threadTs` when given); never
   * retried blind (no idempotency key).
   */
  postMessage(
    channel: string,
    message: SlackMessage,
    marker: MessageMarker | undefined,
    threadTs?: string,
  ): Promise<Sent>;
  update(channel: string, ts: string, message: SlackMessage): Promise<void>;
  postEphemeral(channel: string, user: string, message: SlackMessage): Promise<void>;
  publishHome(user: string, view: HomeView): Promise<void>;
  /** The app's DM with `user` (conversations.open). */
  dmChannel(user: string): Promise<string>;
  /** Newest first, at most `limit`, posted after `oldest`, with their metadata. */
  history(channel: string, oldest: Date | undefined, limit: number): Promise<readonly HistoryMessage[]>;
}>;

/** A message, or how to build it with what its record keeps (built only when nothing is recorded). */
export type Composed = Readonly<{ message: SlackMessage; extras?: JsonObject }>;

export type PostRequest = Readonly<{
  ledger: OutboxLedger;
  key: string;
  /** A channel id, or a user id for the app's DM with them. */
  channel: string;
  message: SlackMessage | (() => Promise<Composed>);
  /**
   * A reply in the thread of this message of `channel` (not the fallback's). A thread reply is not
   * in the conversation's history: after a crash in the window below it may be posted twice.
   */
  threadTs?: string | undefined;
  /** When the post could have been made at the earliest (the event asking for it): bounds the history read. */
  since?: Date | undefined;
  /** Where it goes when `channel` refuses it for good (by default: the bot is not in it, it is gone or archived). */
  fallback?:
    | Readonly<{ channel: string; message: SlackMessage; on?: ReadonlySet<string> | undefined }>
    | undefined;
  /**
   * What a redelivery puts in doubt (default: this key). A surface whose posts for one thing are
   * keyed by channel (an incident's cards) doubts them together, and says when the doubt is over
   * ({@link SlackOutbox.resolve}).
   */
  doubtScope?: string | undefined;
  /** Retry-Afters waited before the call fails with SB_UPSTREAM_RATE_LIMITED (default 5). */
  maxRateLimitWaits?: number | undefined;
}>;

export type PostResult =
  /** Recorded before: nothing sent. */
  | Readonly<{ outcome: 'recorded'; record: OutboxRecord }>
  /** Sent now (`posted`) or found in Slack's history after a crash and brought up to date (`found`); recorded. */
  | Readonly<{
      outcome: 'posted' | 'found';
      record: OutboxRecord;
      sent: Sent | null;
      /** It went to the fallback. */
      fallback: boolean;
    }>
  /** Slack refused it for good (its channel, and the fallback if any); nothing recorded. */
  | Readonly<{ outcome: 'refused'; error: unknown; slackError: string | undefined; fallback: boolean }>;

export type UpdateResult =
  | Readonly<{ outcome: 'updated' | 'same' }>
  | Readonly<{ outcome: 'gone'; slackError: string }>
  /** Updated by key, and nothing (or nothing with a place: an ephemeral) is recorded under it. */
  | Readonly<{ outcome: 'missing' }>;

/** What to update: a message where it is, or what was posted under a key of a ledger. */
export type UpdateTarget = Sent | Readonly<{ ledger: OutboxLedger; key: string }>;

export type SlackOutbox = Readonly<{
  /**
   * Posts `message` once under `key`: nothing when the ledger has it; when the key is in doubt (a
   * redelivery, a post whose answer was lost, a post not yet recorded) the conversation's history
   * is read first and a message carrying the key's marker is recorded (and brought up to date)
   * instead of posted again. Slack's refusals for good come back as `refused`; anything that
   * passes (5xx, network, a rate limit waited out too often) is thrown for the processor to retry.
   */
  post(ctx: OutboxContext, request: PostRequest): Promise<PostResult>;
  /**
   * An ephemeral message once under `key` (recorded without a place: it cannot be updated), or,
   * with `dmFallback` when Slack cannot show it there (not in the channel), the same message by DM.
   */
  ephemeral(
    ctx: OutboxContext,
    request: Readonly<{
      ledger: OutboxLedger;
      key: string;
      channel: string;
      user: string;
      message: SlackMessage;
      dmFallback: boolean;
      since?: Date | undefined;
    }>,
  ): Promise<PostResult>;
  /**
   * Updates a posted message in place, found where it is or by the key it was posted under (the
   * message may then be built from its record); a redraw that shows what the message already shows
   * (in this process) is skipped. A message or channel gone for good (UPDATE_GONE, plus
   * `options.gone`) is not an error: `gone`.
   */
  update(
    ctx: OutboxContext,
    target: UpdateTarget,
    message: SlackMessage | ((record: OutboxRecord) => Promise<SlackMessage>),
    options?: Readonly<{ gone?: ReadonlySet<string>; maxRateLimitWaits?: number }>,
  ): Promise<UpdateResult>;
  /** Runs `send` once under `key` (a response_url answer): recorded with what it returns. */
  deliverOnce(
    ctx: OutboxContext,
    request: Readonly<{ ledger: OutboxLedger; key: string }>,
    send: () => Promise<Sent | null>,
  ): Promise<PostResult>;
  /** Publishes a user's App Home tab (views.publish replaces it: nothing to record). */
  publishHome(user: string, view: HomeView, signal?: AbortSignal): Promise<void>;
  /** Puts `scope` in doubt when `ctx` is a redelivery (what {@link post} does for its own scope). */
  suspect(ctx: OutboxContext, scope: string): void;
  /** Every post of `scope` is recorded: the doubt is over. */
  resolve(scope: string): void;
}>;

export type SlackOutboxOptions = Readonly<{
  transport: OutboxTransport;
  logger: ProcessorLogger;
  /** Milliseconds for Retry-After and the history settle (default `performance.now`). */
  now?: () => number;
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  gate?: RateGate;
  /**
   * A person's Slack time zone (IANA; `readerZones` of src/slack/time.ts): a DM's times are written
   * in its recipient's zone (src/slack/readerDates.ts). Without it every fallback stays in UTC.
   */
  zoneOf?: (slackUserId: string) => Promise<string>;
}>;

/** How far before `since` the history read starts (clock skew between us and Slack). */
export const HISTORY_MARGIN_MS = 5 * 60_000;
/** Messages read when looking for a post made before a crash. */
export const HISTORY_LIMIT = 200;
/**
 * How old a post in doubt must be before a history read that does not show it is believed (Slack
 * does not promise read-after-write): the read waits until the doubt is that old.
 */
export const HISTORY_SETTLE_MS = 2_000;
/** Retry-Afters waited per call before it fails (the processor then retries it). */
export const MAX_RATE_LIMIT_WAITS = 5;
/** Messages whose last rendering is remembered to skip identical redraws (oldest forgotten first). */
const SHOWN_LIMIT = 10_000;
/** Doubts and unrecorded posts remembered at most (oldest forgotten first). */
const DOUBT_LIMIT = 10_000;

/** Slack answers that mean the history cannot be read with this token: post as before, say so once. */
const NO_HISTORY_SCOPE = new Set(['missing_scope', 'no_permission', 'not_allowed_token_type']);
/** A post refused there goes to the fallback, when there is one. */
export const CHANNEL_UNREACHABLE: ReadonlySet<string> = new Set([
  'not_in_channel',
  'channel_not_found',
  'is_archived',
]);
/** Ephemerals Slack cannot show there (not a member, not in the channel): the DM fallback. */
export const EPHEMERAL_UNREACHABLE: ReadonlySet<string> = new Set([
  'not_in_channel',
  'channel_not_found',
  'user_not_in_channel',
]);
/** Slack answers to chat.update that mean the message or its channel is gone for good. */
export const UPDATE_GONE: ReadonlySet<string> = new Set([
  'message_not_found',
  'channel_not_found',
  'not_in_channel',
  'is_archived',
  'cant_update_message',
  'edit_window_closed',
]);

export const slackErrorOf = (e: unknown): string | undefined => {
  const v = isChatOpsError(e) ? e.details.slackError : undefined;
  return typeof v === 'string' ? v : undefined;
};

/** A failure after which Slack may or may not have done it (a 5xx, a network failure, a timeout). */
const answerLost = (e: unknown): boolean => {
  const code = errorCodeOf(e);
  return slackErrorOf(e) === undefined && code !== 'SB_UPSTREAM_RATE_LIMITED' && !isPermanentError(e);
};

const isUser = (channel: string) => /^[UW][A-Z0-9]{2,}$/.test(channel);
const isDm = (channel: string) => isUser(channel) || channel.startsWith('D');

const marks = (message: HistoryMessage, marker: MessageMarker): boolean => {
  if (message.metadata?.event_type !== marker.event_type) return false;
  const payload = message.metadata.event_payload ?? {};
  return Object.entries(marker.event_payload).every(([k, v]) => payload[k] === v);
};

const shows = (m: Readonly<{ text?: string | undefined; blocks?: readonly unknown[] | undefined }>) =>
  JSON.stringify([m.text ?? '', m.blocks ?? []]);

/** Forgets the oldest entries of a Map used in insertion order. */
const bound = <K, V>(map: Map<K, V>, limit: number) => {
  while (map.size > limit) map.delete(map.keys().next().value as K);
};

/**
 * The one way Switchboard sends to Slack what must reach people: every notice, card, report and
 * DM of every lifecycle (request-time answers, an ack's ephemeral, a modal, are not here).
 *
 * - **Post once, by key.** The surface's ledger ({@link OutboxLedger}) is read first: a recorded key
 *   is never posted again. A post carries its key's marker as message metadata, and is recorded
 *   once Slack took it.
 * - **The crash window, closed the same way for every surface.** `chat.postMessage` has no
 *   idempotency key, so a key is IN DOUBT, in this process, when its post may be in Slack without
 *   its record: the event asking for it may have been handled before (`ctx.redelivery`: a restart
 *   after `kill -9`, a retry, a replay; the doubt then dates from the first time this processor
 *   used the outbox in this process, which is after any post of an earlier process or replica), a
 *   post failed without Slack's answer (a 5xx, a timeout: never retried blind), or a post Slack
 *   took is not recorded yet. A post in doubt first reads the conversation's history
 *   (`conversations.history` with `include_all_metadata`, since the request's `since` minus
 *   {@link HISTORY_MARGIN_MS}, at most {@link HISTORY_LIMIT} messages; a DM through
 *   `conversations.open`), once the doubt is {@link HISTORY_SETTLE_MS} old (Slack does not promise
 *   read-after-write): a message with the marker is brought up to date and recorded instead.
 *   That needs `channels:history`, `groups:history` and `im:history`; without one (missing_scope)
 *   that kind of conversation is posted as before, and that is logged once. What remains (Slack
 *   offers nothing closer): a post still being applied inside Slack when the read is made, a
 *   history that lags more than the settle time, a message deleted since or pushed out of the page
 *   read, an ephemeral, a thread reply or a response_url answer (no history read there): a
 *   duplicate, never a loss.
 * - **Update in place, skipping identical redraws.** What each message last showed is kept in
 *   memory ({@link SHOWN_LIMIT} messages): persisting it would cost an append per redraw to save a
 *   call, and after a restart the first redraw of each message is simply sent again (it also
 *   repairs an update Slack applied whose answer was lost).
 * - **Fallbacks**: a channel post refused for good (the bot is not in it, it is gone or archived)
 *   goes to the request's fallback (a person's DM); an ephemeral Slack cannot show goes by DM.
 * - **Slack's rate limits**, per method and scope (src/slack/rateGate.ts): a 429's Retry-After holds
 *   back that method in that channel (chat.postMessage) or workspace (tiered methods) for every
 *   caller, then the scope keeps to the tier's pace for a minute; each call waits out at most
 *   {@link MAX_RATE_LIMIT_WAITS} Retry-Afters (abortable) before failing for the processor to retry.
 *
 * @example
 * const outbox = createSlackOutbox({ transport: slackOutboxTransport(slack), logger });
 * const result = await outbox.post(ctx, { ledger: notices, key: `approved:${event.id}`, channel: user, message, since: event.recordedAt });
 * if (result.outcome === 'refused') throw result.error;
 */
export const createSlackOutbox = (options: SlackOutboxOptions): SlackOutbox => {
  const { transport } = options;
  const now = options.now ?? (() => performance.now());
  const sleep = options.sleep ?? abortableSleep;
  const gate = options.gate ?? createRateGate({ now, sleep });
  /** What each message (`channel:ts`) last showed. */
  const shown = new Map<string, string>();
  /** Scopes in doubt from a redelivery, with the time from which a post in doubt is settled. */
  const doubts = new Map<string, number>();
  /** Keys (`ledger|key`) posted in this process without an answer or a record yet: since when. */
  const unrecorded = new Map<string, number>();
  /** When each processor first used the outbox in this process (after any earlier post of it). */
  const firstUse = new Map<string, number>();
  /** Kinds of conversation whose history this token cannot read ('channel' | 'im'). */
  const historyRefused = new Set<string>();
  const noSignal = new AbortController().signal;
  /** The person each DM conversation (`D…`) posted to in this process is with. */
  const readers = new Map<string, string>();

  /**
   * Issue 19 item 3: a message for one person (a DM) carries its times in their zone, its
   * notification text plain; a channel's keeps UTC fallbacks (many readers, many zones).
   */
  const forReader = async (reader: string | undefined, message: SlackMessage): Promise<SlackMessage> =>
    reader !== undefined && isUser(reader) && options.zoneOf
      ? messageForReader(message, await options.zoneOf(reader))
      : message;

  const remember = (sent: Sent, message: SlackMessage, rendered = shows(message)) => {
    const where = `${sent.channel}:${sent.ts}`;
    shown.delete(where);
    shown.set(where, rendered);
    bound(shown, SHOWN_LIMIT);
  };

  const firstUseOf = (ctx: OutboxContext): number => {
    let at = firstUse.get(ctx.processorId);
    if (at === undefined) {
      at = now();
      firstUse.set(ctx.processorId, at);
    }
    return at;
  };

  const suspect = (ctx: OutboxContext, scope: string) => {
    const since = firstUseOf(ctx);
    if (!ctx.redelivery || doubts.has(scope)) return;
    doubts.set(scope, since);
    bound(doubts, DOUBT_LIMIT);
  };

  /** Since when `key` is in doubt (the latest reason), or undefined. */
  const doubtOf = (scope: string, id: string): number | undefined => {
    const a = doubts.get(scope);
    const b = unrecorded.get(id);
    return a === undefined ? b : b === undefined ? a : Math.max(a, b);
  };

  /** One Slack call through the gate, waiting out Retry-After a few times. */
  const call = async <T>(
    ctx: Pick<OutboxContext, 'logger' | 'signal'>,
    method: string,
    channel: string | undefined,
    run: () => Promise<T>,
    maxWaits = MAX_RATE_LIMIT_WAITS,
  ): Promise<T> => {
    for (let waits = 0; ; waits++) {
      await gate.pass(method, channel, ctx.signal);
      try {
        return await run();
      } catch (error) {
        const waitMs = retryAfterMsOf(error);
        if (waitMs === undefined) throw error;
        gate.limited(method, channel, waitMs);
        if (waits >= maxWaits) throw error;
        ctx.logger.warn({ method, waitMs }, 'Slack asked to slow down; waiting before calling it again');
      }
    }
  };

  /** A message with `marker` in `channel`'s recent history, or null (history unreadable: post as before). */
  const findPosted = async (
    ctx: OutboxContext,
    channel: string,
    marker: MessageMarker,
    since: Date | undefined,
    doubtSince: number,
  ): Promise<{ sent: Sent; message: HistoryMessage } | null> => {
    const kind = isDm(channel) ? 'im' : 'channel';
    if (historyRefused.has(kind)) return null;
    // A post in doubt is older than its doubt: once this has passed, it is HISTORY_SETTLE_MS old.
    const settle = doubtSince + HISTORY_SETTLE_MS - now();
    if (settle > 0) await sleep(settle, ctx.signal);
    try {
      const conversation = isUser(channel)
        ? await call(ctx, 'conversations.open', undefined, () => transport.dmChannel(channel))
        : channel;
      const oldest = since ? new Date(since.getTime() - HISTORY_MARGIN_MS) : undefined;
      const messages = await call(ctx, 'conversations.history', conversation, () =>
        transport.history(conversation, oldest, HISTORY_LIMIT),
      );
      const found = messages.find((m) => marks(m, marker));
      return found ? { sent: { channel: conversation, ts: found.ts }, message: found } : null;
    } catch (error) {
      if (!isPermanentError(error)) throw error;
      const refused = slackErrorOf(error) ?? errorCodeOf(error);
      if (NO_HISTORY_SCOPE.has(refused)) {
        historyRefused.add(kind);
        const scopes = kind === 'im' ? 'im:history' : 'channels:history and groups:history';
        ctx.logger.warn(
          { slackError: refused, channel },
          `Slack history unreadable (${refused}): after a crash a message may be posted twice; add the ${scopes} scopes`,
        );
      }
      // Anything else (not in the channel, gone): the post says what Slack thinks of it.
      return null;
    }
  };

  type Attempt =
    | Readonly<{ sent: Sent; found: boolean }>
    | Readonly<{ refused: unknown; slackError: string | undefined }>;

  /** Posts in one conversation, or finds the post in doubt there. */
  const postIn = async (
    ctx: OutboxContext,
    request: PostRequest,
    scope: string,
    id: string,
    channel: string,
    built: SlackMessage,
  ): Promise<Attempt> => {
    const message = await forReader(channel, built);
    const marker = request.ledger.marker(request.key);
    const doubtSince = doubtOf(scope, id);
    if (doubtSince !== undefined) {
      const before = await findPosted(ctx, channel, marker, request.since, doubtSince);
      if (before) {
        // It shows what was true when it was posted: bring it up to date.
        if (shows(before.message) !== shows(message)) {
          await call(ctx, 'chat.update', before.sent.channel, () =>
            transport.update(before.sent.channel, before.sent.ts, message),
          );
        }
        remember(before.sent, message);
        if (isUser(channel)) readers.set(before.sent.channel, channel);
        unrecorded.set(id, unrecorded.get(id) ?? now());
        ctx.logger.info(
          { channel, ts: before.sent.ts, key: request.key },
          'a post made before a restart found; recorded',
        );
        return { sent: before.sent, found: true };
      }
    }
    try {
      const sent = await call(
        ctx,
        'chat.postMessage',
        channel,
        () =>
          channel === request.channel && request.threadTs !== undefined
            ? transport.postMessage(channel, message, marker, request.threadTs)
            : transport.postMessage(channel, message, marker),
        request.maxRateLimitWaits,
      );
      unrecorded.set(id, now());
      bound(unrecorded, DOUBT_LIMIT);
      remember(sent, message);
      if (isUser(channel)) {
        readers.set(sent.channel, channel);
        bound(readers, SHOWN_LIMIT);
      }
      return { sent, found: false };
    } catch (error) {
      if (answerLost(error)) {
        unrecorded.set(id, now());
        bound(unrecorded, DOUBT_LIMIT);
      }
      if (!isPermanentError(error)) throw error;
      return { refused: error, slackError: slackErrorOf(error) };
    }
  };

  const composed = async (message: PostRequest['message']): Promise<Composed> =>
    typeof message === 'function' ? message() : { message };

  const settled = async (
    ctx: OutboxContext,
    request: Readonly<{ ledger: OutboxLedger; key: string; doubtScope?: string | undefined }>,
    sent: Sent | null,
    extras: JsonObject | undefined,
  ): Promise<OutboxRecord> => {
    const record = await request.ledger.record(ctx, request.key, sent, extras);
    const id = `${request.ledger.name}|${request.key}`;
    unrecorded.delete(id);
    if (request.doubtScope === undefined) doubts.delete(id);
    return record;
  };

  const outbox: SlackOutbox = {
    async post(ctx, request) {
      const id = `${request.ledger.name}|${request.key}`;
      const scope = request.doubtScope ?? id;
      suspect(ctx, scope);
      const found = await request.ledger.find(ctx, request.key);
      if (found) {
        if (request.doubtScope === undefined) doubts.delete(id);
        return { outcome: 'recorded', record: found };
      }
      const { message, extras } = await composed(request.message);
      let attempt = await postIn(ctx, request, scope, id, request.channel, message);
      let fallback = false;
      const to = request.fallback;
      if ('refused' in attempt && to && (to.on ?? CHANNEL_UNREACHABLE).has(attempt.slackError ?? '')) {
        ctx.logger.warn(
          { channel: request.channel, slackError: attempt.slackError, key: request.key },
          'Slack refused the post there; it goes to the fallback',
        );
        fallback = true;
        attempt = await postIn(ctx, request, scope, id, to.channel, to.message);
      }
      if ('refused' in attempt) {
        return { outcome: 'refused', error: attempt.refused, slackError: attempt.slackError, fallback };
      }
      // A DM's record names its reader, so that its redraws (after a restart too) keep their zone.
      const reader = fallback ? to?.channel : request.channel;
      const record = await settled(
        ctx,
        request,
        attempt.sent,
        reader !== undefined && isUser(reader) ? { ...extras, reader } : extras,
      );
      return { outcome: attempt.found ? 'found' : 'posted', record, sent: attempt.sent, fallback };
    },

    async ephemeral(ctx, request) {
      const id = `${request.ledger.name}|${request.key}`;
      suspect(ctx, id);
      const found = await request.ledger.find(ctx, request.key);
      if (found) {
        doubts.delete(id);
        return { outcome: 'recorded', record: found };
      }
      try {
        await call(ctx, 'chat.postEphemeral', request.channel, () =>
          transport.postEphemeral(request.channel, request.user, request.message),
        );
        return {
          outcome: 'posted',
          record: await settled(ctx, request, null, undefined),
          sent: null,
          fallback: false,
        };
      } catch (error) {
        const slackError = slackErrorOf(error);
        if (!request.dmFallback || !slackError || !EPHEMERAL_UNREACHABLE.has(slackError)) {
          if (!isPermanentError(error)) throw error;
          return { outcome: 'refused', error, slackError, fallback: false };
        }
      }
      // Not a member there (or the bot is not): the person gets it by DM.
      const attempt = await postIn(
        ctx,
        { ...request, channel: request.user },
        id,
        id,
        request.user,
        request.message,
      );
      if ('refused' in attempt) {
        return { outcome: 'refused', error: attempt.refused, slackError: attempt.slackError, fallback: true };
      }
      const record = await settled(ctx, request, attempt.sent, undefined);
      return { outcome: attempt.found ? 'found' : 'posted', record, sent: attempt.sent, fallback: true };
    },

    async update(ctx, target, build, updateOptions) {
      let at: Sent;
      let message: SlackMessage;
      if ('ledger' in target) {
        const record = await target.ledger.find(ctx, target.key);
        if (!record?.channel || !record.ts) return { outcome: 'missing' };
        at = { channel: record.channel, ts: record.ts };
        message = typeof build === 'function' ? await build(record) : build;
        const reader = typeof record.reader === 'string' ? record.reader : readers.get(at.channel);
        message = await forReader(reader, message);
      } else {
        at = { channel: target.channel, ts: target.ts };
        message =
          typeof build === 'function' ? await build({ key: '', channel: at.channel, ts: at.ts }) : build;
        message = await forReader(readers.get(at.channel), message);
      }
      const rendered = shows(message);
      if (shown.get(`${at.channel}:${at.ts}`) === rendered) return { outcome: 'same' };
      try {
        await call(
          ctx,
          'chat.update',
          at.channel,
          () => transport.update(at.channel, at.ts, message),
          updateOptions?.maxRateLimitWaits,
        );
      } catch (error) {
        const slackError = slackErrorOf(error);
        if (slackError && (UPDATE_GONE.has(slackError) || updateOptions?.gone?.has(slackError))) {
          return { outcome: 'gone', slackError };
        }
        throw error;
      }
      remember(at, message, rendered);
      return { outcome: 'updated' };
    },

    async deliverOnce(ctx, request, send) {
      const found = await request.ledger.find(ctx, request.key);
      if (found) return { outcome: 'recorded', record: found };
      const sent = await send();
      return {
        outcome: 'posted',
        record: await settled(ctx, request, sent, undefined),
        sent,
        fallback: false,
      };
    },

    async publishHome(user, view, signal) {
      await call({ logger: options.logger, signal: signal ?? noSignal }, 'views.publish', user, () =>
        transport.publishHome(user, view),
      );
    },

    suspect,

    resolve(scope) {
      doubts.delete(scope);
    },
  };
  return outbox;
};

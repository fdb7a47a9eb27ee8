import { ConcurrencyError } from '../core/errors.ts';
import { uuidv5 } from '../core/ids.ts';
import type { JsonObject } from '../core/messages.ts';
import type { EventStore } from '../eventStore/eventStore.ts';

/** A message Slack took: where it is, to update it in place. */
export type Sent = Readonly<{ channel: string; ts: string }>;

/**
 * What a ledger keeps of one delivery: its key, where the message is (null for what cannot be
 * updated: an ephemeral, a response_url answer, a refusal recorded so it is not tried again), when,
 * and what the surface keeps with it (a time-off card's balance, …).
 */
export type OutboxRecord = Readonly<
  { key: string; channel: string | null; ts: string | null; at?: string } & Readonly<Record<string, unknown>>
>;

/** Message metadata (https://docs.slack.dev/messaging/message-metadata) that marks a post as ours. */
export type MessageMarker = Readonly<{ event_type: string; event_payload: Readonly<Record<string, string>> }>;

/** What a ledger needs of the processor that sends. */
export type LedgerContext = Readonly<{ store: EventStore; now(): Date }>;

/**
 * Where a surface keeps what it delivered, by key: the durable half of "post once". The outbox
 * (src/slack/outbox.ts) looks here before it sends anything and records here once Slack took it.
 * Each surface keeps the records it always kept, so stores written before the outbox read the same
 * (`IncidentNoticeSent`, `VerificationNoticeSent`, `TimeOffNoticeSent`, a card's
 * `IncidentCardPosted`, a leaver's `LeaverReportPosted`).
 *
 * @example
 * const notices = noticeLedger({ name: 'incident-notices', streamPrefix: 'incidentNotice-',
 *   streamSeed: 'notice', eventSeed: 'notice-sent', eventType: 'IncidentNoticeSent' });
 */
export type OutboxLedger = Readonly<{
  /** Unique among ledgers: keys of two ledgers never meet. */
  name: string;
  /** The record for `key`, or null when nothing was delivered under it. */
  find(ctx: LedgerContext, key: string): Promise<OutboxRecord | null>;
  /** Records that `key` was delivered (`sent` null: nothing to update later). Idempotent. */
  record(ctx: LedgerContext, key: string, sent: Sent | null, extras?: JsonObject): Promise<OutboxRecord>;
  /**
   * The metadata a post under `key` carries, so that after a crash between Slack taking it and its
   * record it is found in the conversation's history instead of being posted again.
   */
  marker(key: string): MessageMarker;
}>;

/** The `event_type` of the metadata on every notice the outbox posts (cards keep their own). */
export const NOTICE_METADATA_EVENT_TYPE = 'switchboard_notice';

export type NoticeLedgerSpec = Readonly<{
  name: string;
  /** Record streams are `<streamPrefix><UUIDv5 of "<streamSeed>:<key>">`. */
  streamPrefix: string;
  streamSeed: string;
  /** The record's event id is the UUIDv5 of `<eventSeed>:<key>` (a second append is a no-op). */
  eventSeed: string;
  eventType: string;
}>;

/**
 * The record every notice has had: one stream per key holding one event, `{ key, channel, ts, at,
 * …extras }`, appended with `no_stream` (a second record of the same key is dropped).
 */
export const noticeLedger = (spec: NoticeLedgerSpec): OutboxLedger & { streamOf(key: string): string } => {
  const streamOf = (key: string) => `${spec.streamPrefix}${uuidv5(`${spec.streamSeed}:${key}`)}`;
  return {
    name: spec.name,
    streamOf,
    async find(ctx, key) {
      const [first] = await ctx.store.readStream(streamOf(key), { maxCount: 1 });
      return first ? (first.data as unknown as OutboxRecord) : null;
    },
    async record(ctx, key, sent, extras) {
      const record = {
        key,
        channel: sent?.channel ?? null,
        ts: sent?.ts ?? null,
        at: ctx.now().toISOString(),
        ...extras,
      };
      try {
        await ctx.store.appendToStream(
          streamOf(key),
          [{ id: uuidv5(`${spec.eventSeed}:${key}`), type: spec.eventType, data: record as JsonObject }],
          { expectedRevision: 'no_stream' },
        );
      } catch (error) {
        if (!(error instanceof ConcurrencyError)) throw error;
      }
      return record;
    },
    marker: (key) => ({ event_type: NOTICE_METADATA_EVENT_TYPE, event_payload: { record: streamOf(key) } }),
  };
};

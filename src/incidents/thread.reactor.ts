import type { Clock } from '../core/clock.ts';
import type { Processor, ProcessorContext } from '../processors/runner.ts';
import { truncate } from '../slack/blocks/format.ts';
import { noticeLedger, type SlackOutbox } from '../slack/outbox.ts';
import { entryLine, type TimelineEntry, toTimelineEntries } from './blocks/incidentTimeline.ts';
import { foldIncidentHistory } from './incidentState.ts';

/**
 * `incident-thread` (issue 22 item 2): the thread of an incident's card tells its story. Every
 * state change, note, page, receipt, status update and final failure on the incident's timeline
 * (blocks/incidentTimeline.ts, the story) is also posted as a one-line reply in the thread of its
 * first card (the channel it was triggered from, or the first subscribed one), through the shared
 * outbox: one key per timeline entry (`thread:<stream>:<revision>`), recorded in
 * `incidentThread-<uuid>`, so a redelivery posts nothing twice; the outbox keeps to Slack's pace
 * per channel (chat.postMessage, about one a second) and waits out Retry-After.
 *
 * Left out of the thread: requests (`… requested`: the state change that follows says it), a
 * person's refused input, and notes added from the thread itself (they are already there).
 *
 * Entries are posted in stream order, catching up on every event of the incident: what happened
 * before the card was posted goes out once the card is there. A line whose time is more than
 * `THREAD_LATE_MS` (an hour) before the processor reaches it is not posted: the thread is the
 * live story, and a store from before this processor (an upgrade), or a long outage, must not
 * flood old threads with history. The timeline (`/incident timeline`) keeps every line.
 */
export const INCIDENT_THREAD_PROCESSOR = 'incident-thread';
export const INCIDENT_THREAD_STREAM_PREFIX = 'incidentThread-';

export const incidentThreadLedger = noticeLedger({
  name: INCIDENT_THREAD_PROCESSOR,
  streamPrefix: INCIDENT_THREAD_STREAM_PREFIX,
  streamSeed: 'thread',
  eventSeed: 'thread-posted',
  eventType: 'IncidentThreadReplyPosted',
});

/** The key of one timeline entry's reply. */
export const threadReplyKey = (streamId: string, revision: number): string =>
  `thread:${streamId}:${revision}`;

/** Timeline entries that are not told again in the thread. */
const inThread = (e: TimelineEntry): boolean =>
  !e.type.endsWith('Requested') && e.type !== 'CommandRefused' && e.type !== 'RecordIncidentThreadNote';

/** Keys known to be posted in this process (skips re-reading the ledger for each old entry). */
const KNOWN_LIMIT = 20_000;

/** How late a story line may still be posted in the thread. */
export const THREAD_LATE_MS = 60 * 60_000;

export const createIncidentThreadReactor = (
  options: Readonly<{ outbox: SlackOutbox; clock: Clock; lateMs?: number }>,
): Processor => {
  const { outbox, clock } = options;
  const lateMs = options.lateMs ?? THREAD_LATE_MS;
  const known = new Set<string>();
  const remember = (key: string) => {
    known.add(key);
    if (known.size > KNOWN_LIMIT) known.delete(known.values().next().value as string);
  };

  const catchUp = async (ctx: ProcessorContext, streamId: string, upTo: number, since: Date) => {
    const history = await ctx.store.readStream(streamId);
    const card = foldIncidentHistory(history).context.cards.find((c) => !c.channel.startsWith('D'));
    if (!card) return;
    const oldest = clock.now().getTime() - lateMs;
    // The entry's own time (the app's clock, as the timeline shows it), never the store's.
    const entries = toTimelineEntries(history.filter((m) => m.revision <= upTo)).filter(
      (e) => inThread(e) && Date.parse(e.at) >= oldest,
    );
    for (const entry of entries) {
      const key = threadReplyKey(streamId, entry.revision);
      if (known.has(key)) continue;
      const text = truncate(entryLine(entry), 3_000);
      const result = await outbox.post(ctx, {
        ledger: incidentThreadLedger,
        key,
        channel: card.channel,
        threadTs: card.ts,
        message: { text, blocks: [{ type: 'context', elements: [{ type: 'mrkdwn', text }] }] },
        since,
      });
      if (result.outcome === 'refused') {
        // The card's channel is gone or closed to the bot: the card says as much; stop here.
        ctx.logger.warn({ streamId, slackError: result.slackError }, 'thread reply refused; skipped');
        return;
      }
      remember(key);
    }
  };

  return {
    id: INCIDENT_THREAD_PROCESSOR,
    filter: { streamPrefixes: ['incident-'] },
    async handle(event, ctx) {
      if (event.type === 'IncidentCardUpdated' || event.type === 'RecordIncidentCardUpdated') return;
      await catchUp(ctx, event.streamId, event.revision, event.recordedAt);
    },
  };
};

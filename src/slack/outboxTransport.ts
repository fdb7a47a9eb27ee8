import type { OutboxTransport } from './outbox.ts';
import type { SwitchboardWebClient } from './webClient.ts';

/**
 * The outbox's Slack calls over the Web API client. Every call fails at once on a 429 (the outbox
 * waits out Retry-After for every caller of that method and channel); `chat.postMessage` is never
 * retried inside the call (no idempotency key: a retry after a lost answer would post twice; the
 * outbox looks in the history first instead); the other calls keep the client's quick retries of
 * 5xx and network failures.
 *
 * @example
 * const outbox = createSlackOutbox({ transport: slackOutboxTransport(slack), logger });
 */
export const slackOutboxTransport = (client: SwitchboardWebClient): OutboxTransport => {
  const posts = client.variant({ retries: 0, maxInlineWaitMs: 0 });
  const calls = client.variant({ maxInlineWaitMs: 0 });
  return {
    async postMessage(channel, m, marker, threadTs) {
      const r = await posts.chat.postMessage({
        channel,
        ...(threadTs ? { thread_ts: threadTs } : {}),
        text: m.text,
        blocks: m.blocks,
        ...(marker
          ? { metadata: { event_type: marker.event_type, event_payload: { ...marker.event_payload } } }
          : {}),
      });
      return { channel: r.channel ?? channel, ts: String(r.ts) };
    },
    async update(channel, ts, m) {
      await calls.chat.update({ channel, ts, text: m.text, blocks: m.blocks });
    },
    async postEphemeral(channel, user, m) {
      await calls.chat.postEphemeral({ channel, user, text: m.text, blocks: m.blocks });
    },
    async publishHome(user, view) {
      await calls.views.publish({ user_id: user, view });
    },
    async dmChannel(user) {
      const r = await calls.conversations.open({ users: user });
      return r.channel?.id ?? user;
    },
    async history(channel, oldest, limit) {
      const r = await calls.conversations.history({
        channel,
        ...(oldest ? { oldest: (oldest.getTime() / 1000).toFixed(6) } : {}),
        limit,
        include_all_metadata: true,
      });
      return (r.messages ?? []).flatMap((m) =>
        m.ts
          ? [
              {
                ts: m.ts,
                text: m.text,
                blocks: m.blocks,
                metadata: m.metadata as
                  | { event_type?: string; event_payload?: Record<string, unknown> }
                  | undefined,
              },
            ]
          : [],
      );
    },
  };
};

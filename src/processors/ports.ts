/**
 * The narrow shapes processors depend on, so that src/processors/ needs neither the app's logger
 * module nor Bolt. The composition root (src/app.ts) passes the real ones.
 */

/** One pino log method: `log(obj, msg)` or `log(msg)`. */
export type LogFn = {
  (obj: object, msg?: string): void;
  (msg: string): void;
};

/**
 * A pino-compatible logger (a pino `Logger` satisfies it). Errors go under `err`
 * (`logger.error({ err }, 'event parked')`); child bindings are never built from untrusted input.
 */
export type ProcessorLogger = {
  info: LogFn;
  warn: LogFn;
  error: LogFn;
  debug: LogFn;
  child(bindings: Record<string, unknown>): ProcessorLogger;
};

/** A Slack message a reactor sends (Block Kit optional; `text` is the notification fallback). */
export type SlackReplyMessage = Readonly<{
  text: string;
  blocks?: readonly Readonly<Record<string, unknown>>[];
  /**
   * Through a `response_url` only: replace the message that URL belongs to (for a slash command,
   * the answer Switchboard gave it) instead of adding one, so the person is left with one truthful
   * message ("⏳ Creating…" becomes "✅ Created #12").
   */
  replaceOriginal?: boolean;
}>;

/**
 * Where command replies go. The composition root adapts it: `respond` posts to a slash command's or
 * an interaction's `response_url` (see `createResponseUrlPoster` in ./responseUrl.ts), and
 * `postEphemeral` calls Bolt's `client.chat.postEphemeral`.
 *
 * Implementations throw coded errors (src/core/errors.ts) so reactors can decide what to retry:
 * `SB_UPSTREAM_UNAVAILABLE` (network, 5xx), `SB_UPSTREAM_RATE_LIMITED` (429; put the wait in
 * `details.retryAfterMs`), `SB_TIMEOUT`, `SB_UPSTREAM_AUTH` (401/403, bad token), and
 * `SB_UPSTREAM_REJECTED` / `SB_VALIDATION` for a request that will never succeed (an expired or
 * used-up `response_url`, a user not in the channel, a URL off the allowlist).
 *
 * @example
 * const replies: SlackReplies = {
 *   respond: createResponseUrlPoster(),
 *   postEphemeral: async (channel, user, m) => {
 *     await app.client.chat.postEphemeral({ channel, user, text: m.text, blocks: m.blocks });
 *   },
 * };
 */
export type SlackReplies = Readonly<{
  respond(responseUrl: string, message: SlackReplyMessage): Promise<void>;
  postEphemeral(channel: string, user: string, message: SlackReplyMessage): Promise<void>;
}>;

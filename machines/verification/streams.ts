/**
 * `verification-<slack user id>`: one stream per person, holding every verification they started
 * (one at a time), the number they verified last, and their recent starts (the per-person limit).
 *
 * The vendor echoes our `client_ref` on its verify events; it carries the Slack user so a webhook
 * finds its stream from its own payload: `<slack user id>z<attempt id hex>` (at most 40
 * alphanumerics, the vendor's limit; Slack user ids are upper case, so the lower-case `z` splits
 * it unambiguously).
 */
export const VERIFICATION_STREAM_CATEGORY = 'verification';
export const VERIFICATION_STREAM_PREFIX = `${VERIFICATION_STREAM_CATEGORY}-`;

const SLACK_USER = /^[UW][A-Z0-9]{2,20}$/;

export const isSlackUserId = (value: string): boolean => SLACK_USER.test(value);

export const verificationStreamId = (slackUserId: string): string => {
  if (!isSlackUserId(slackUserId)) {
    throw new TypeError(`not a Slack user id: ${JSON.stringify(slackUserId)}`);
  }
  return VERIFICATION_STREAM_PREFIX + slackUserId;
};

export const isVerificationStreamId = (streamId: string): boolean =>
  streamId.startsWith(VERIFICATION_STREAM_PREFIX) &&
  isSlackUserId(streamId.slice(VERIFICATION_STREAM_PREFIX.length));

export const slackUserOfStream = (streamId: string): string | null =>
  isVerificationStreamId(streamId) ? streamId.slice(VERIFICATION_STREAM_PREFIX.length) : null;

const CLIENT_REF_MAX = 40;

/** The `client_ref` of an attempt: the person and (as much as fits of) the attempt id. */
export const clientRefFor = (slackUserId: string, attemptId: string): string => {
  verificationStreamId(slackUserId);
  const hex = attemptId.replace(/[^0-9a-f]/gi, '').toLowerCase();
  return `${slackUserId}z${hex}`.slice(0, CLIENT_REF_MAX);
};

/** The Slack user inside one of our client refs, or null for refs we did not make. */
export const slackUserOfClientRef = (clientRef: string | null | undefined): string | null => {
  if (!clientRef || clientRef.length > CLIENT_REF_MAX) return null;
  const m = /^([UW][A-Z0-9]{2,20})z[0-9a-f]{1,38}$/.exec(clientRef);
  return m?.[1] ?? null;
};

/**
 * `timeoff-<request id>`: one stream per time-off request. The request id is the command id of
 * the input that asked for it (a UUID); it travels in button values, so an id read back from
 * Slack is checked with `parseTimeOffRequestId` before it names a stream, and a well-formed id
 * with no stream behind it is refused by the decider (`unknown_request`).
 *
 * `timeoff-directory`: the employee directory (directory.ts), one stream.
 */
export const TIME_OFF_STREAM_CATEGORY = 'timeoff';
export const TIME_OFF_STREAM_PREFIX = `${TIME_OFF_STREAM_CATEGORY}-`;
export const TIME_OFF_DIRECTORY_STREAM = `${TIME_OFF_STREAM_PREFIX}directory`;

const REQUEST_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The request id in a (hostile) value, or null when it is not one of ours. */
export const parseTimeOffRequestId = (value: unknown): string | null =>
  typeof value === 'string' && REQUEST_ID.test(value) ? value : null;

export const timeOffStreamId = (requestId: string): string => {
  if (parseTimeOffRequestId(requestId) === null) {
    throw new TypeError(`not a time-off request id: ${JSON.stringify(requestId)}`);
  }
  return TIME_OFF_STREAM_PREFIX + requestId;
};

export const requestIdOfStream = (streamId: string): string | null =>
  streamId.startsWith(TIME_OFF_STREAM_PREFIX)
    ? parseTimeOffRequestId(streamId.slice(TIME_OFF_STREAM_PREFIX.length))
    : null;

export const isTimeOffStreamId = (streamId: string): boolean => requestIdOfStream(streamId) !== null;

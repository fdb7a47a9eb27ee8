import type { IncomingMessage, ServerResponse } from 'node:http';

/** The body is larger than the route accepts; answer 413 and close the connection. */
export class BodyTooLargeError extends Error {
  readonly limit: number;
  constructor(limit: number) {
    super(`request body exceeds ${limit} bytes`);
    this.name = 'BodyTooLargeError';
    this.limit = limit;
  }
}

/** Too many bytes are held for requests not verified yet; answer 503 and close the connection. */
export class UnverifiedBudgetExceededError extends Error {
  constructor(limit: number) {
    super(`more than ${limit} bytes held for unverified requests`);
    this.name = 'UnverifiedBudgetExceededError';
  }
}

/**
 * Bytes held in memory, across all connections, for request bodies whose signature is not checked
 * yet (every body is unverified while it is read: the signature covers the whole of it). A body
 * with a `Content-Length` takes its whole declared length before a byte of it is read, and one
 * that does not fit what is left is refused (503) from its headers, unread; a chunked body takes
 * its chunks as they come and is cut (503) at the one that would pass the total. So an
 * unauthenticated sender cannot make the process hold more than `limit` bytes of bodies however
 * many connections it opens, nor make it read (and drop) bodies it will not keep.
 */
export type UnverifiedBytes = Readonly<{
  limit: number;
  /** Bytes held now. */
  held(): number;
  /** The most held at once since the start (for tests and metrics). */
  peak(): number;
  take(bytes: number): boolean;
  give(bytes: number): void;
}>;

/** Default total across connections: a few hundred Slack requests' worth. */
export const UNVERIFIED_BYTES_LIMIT = 8 * 1024 * 1024;

export const createUnverifiedBytes = (limit = UNVERIFIED_BYTES_LIMIT): UnverifiedBytes => {
  let held = 0;
  let peak = 0;
  return {
    limit,
    held: () => held,
    peak: () => peak,
    take: (bytes) => {
      if (held + bytes > limit) return false;
      held += bytes;
      if (held > peak) peak = held;
      return true;
    },
    give: (bytes) => {
      held = Math.max(0, held - bytes);
    },
  };
};

/** The process's budget: memory is per process, so every route shares it unless given its own. */
export const unverifiedBytes: UnverifiedBytes = createUnverifiedBytes();

/**
 * Reads the raw request body, exactly as sent (signatures are computed over these bytes, never a
 * re-serialisation: https://api.slack.com/authentication/verifying-requests-from-slack). Refuses
 * before reading a byte a declared Content-Length over the limit (BodyTooLargeError) or over what
 * is left of `budget` (UnverifiedBudgetExceededError; the process's unverified-bytes budget by
 * default), and stops reading once the limit is passed. What it took of the budget (the declared
 * length, or a chunked body's bytes so far) is given back when the read ends, whichever way it ends.
 * On a refusal the connection stops being read: answer it and close it (`closeUnread`).
 */
export const readRawBody = (
  req: IncomingMessage,
  limit: number,
  budget: UnverifiedBytes = unverifiedBytes,
): Promise<Buffer> =>
  new Promise((resolve, reject) => {
    // Node's parser takes a valid Content-Length or chunked encoding, never both, and delivers no
    // more than the length declared.
    const header = req.headers['content-length'];
    const declared = header === undefined ? undefined : Number(header);
    if (declared !== undefined && declared > limit) {
      stopReading(req);
      reject(new BodyTooLargeError(limit));
      return;
    }
    if (declared !== undefined && !budget.take(declared)) {
      stopReading(req);
      reject(new UnverifiedBudgetExceededError(budget.limit));
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = (error?: Error) => {
      if (done) return;
      done = true;
      budget.give(declared ?? size);
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('aborted', onAborted);
      if (error) {
        // Stop reading what is left: nothing more of this body will be used.
        stopReading(req);
        reject(error);
      } else resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    };
    const onData = (chunk: Buffer) => {
      if (size + chunk.length > limit) {
        finish(new BodyTooLargeError(limit));
        return;
      }
      if (declared === undefined && !budget.take(chunk.length)) {
        finish(new UnverifiedBudgetExceededError(budget.limit));
        return;
      }
      size += chunk.length;
      chunks.push(chunk);
    };
    const onEnd = () => finish();
    const onError = (e: Error) => finish(e);
    const onAborted = () => finish(new RequestAbortedError());
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('aborted', onAborted);
  });

/**
 * Stops reading a request whose body will not be used: the request and its socket are paused, so
 * nothing more of it is copied into memory (Node would otherwise read on, and buffer, up to the
 * request's high-water mark, and read and drop the rest once it is answered). Answer it with
 * `Connection: close`: the connection is closed once the answer is written (`closeUnread`).
 */
export const stopReading = (req: IncomingMessage): void => {
  req.pause();
  req.socket?.pause();
};

/**
 * Answers a request whose body was not (wholly) read and closes its connection as soon as the
 * answer is written, so its unread bytes are never read (Node reads and drops them while a
 * `Connection: close` socket shuts down). A client still sending may see the connection reset
 * instead of the answer; only unverified requests are answered this way.
 */
export const closeUnread = (req: IncomingMessage, res: ServerResponse): void => {
  stopReading(req);
  res.setHeader('connection', 'close');
  res.once('finish', () => req.socket?.destroy());
};

/** The client went away before its body was complete: nothing to answer, one log line. */
export class RequestAbortedError extends Error {
  readonly code = 'ECONNRESET';
  constructor() {
    super('request aborted by the client');
    this.name = 'RequestAbortedError';
  }
}

/** Is this error a client that went away mid-request (not a fault of ours)? */
export const isClientAbort = (e: unknown): boolean =>
  e instanceof RequestAbortedError ||
  (e instanceof Error && ((e as { code?: unknown }).code === 'ECONNRESET' || e.message === 'aborted'));

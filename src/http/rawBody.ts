import type { IncomingMessage } from 'node:http';

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
 * yet (every body is unverified while it is read: the signature covers the whole of it). A request
 * whose next chunk would pass the total is cut (503): an unauthenticated sender cannot make the
 * process hold more than `limit` bytes however many connections it opens.
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
 * re-serialisation: https://api.slack.com/authentication/verifying-requests-from-slack). Refuses early on a declared Content-Length over the limit
 * and stops reading once the limit is passed. The bytes count against `budget` (the process's
 * unverified-bytes budget by default) until the read ends, whichever way it ends.
 */
export const readRawBody = (
  req: IncomingMessage,
  limit: number,
  budget: UnverifiedBytes = unverifiedBytes,
): Promise<Buffer> =>
  new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > limit) {
      reject(new BodyTooLargeError(limit));
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = (error?: Error) => {
      if (done) return;
      done = true;
      budget.give(size);
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('aborted', onAborted);
      if (error) {
        // Stop reading what is left: nothing more of this body will be used.
        req.pause();
        reject(error);
      } else resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    };
    const onData = (chunk: Buffer) => {
      if (size + chunk.length > limit) {
        finish(new BodyTooLargeError(limit));
        return;
      }
      if (!budget.take(chunk.length)) {
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

/**
 * Coded errors. Callers branch on `code`, never on message text.
 * Adapters translate vendor errors (KurrentDB, undici, Slack) into these at the boundary.
 *
 * @example
 * try { await handleCommand(...) } catch (e) {
 *   if (isChatOpsError(e) && e.code === 'SB_ILLEGAL_STATE') reply(e.message);
 *   else throw e;
 * }
 */
export type ErrorCode =
  | 'SB_VALIDATION'
  | 'SB_ILLEGAL_STATE'
  | 'SB_CONCURRENCY'
  | 'SB_NOT_FOUND'
  | 'SB_STORE_UNAVAILABLE'
  | 'SB_STORE_CORRUPT'
  | 'SB_UPSTREAM_UNAVAILABLE'
  | 'SB_UPSTREAM_RATE_LIMITED'
  | 'SB_UPSTREAM_AUTH'
  | 'SB_UPSTREAM_REJECTED'
  | 'SB_UNMAPPED_USER'
  | 'SB_FORBIDDEN'
  | 'SB_CONFIG'
  | 'SB_TIMEOUT';

export type ErrorDetails = Readonly<Record<string, unknown>>;

export class ChatOpsError extends Error {
  readonly code: ErrorCode;
  readonly details: ErrorDetails;
  constructor(code: ErrorCode, message: string, options: { cause?: unknown; details?: ErrorDetails } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ChatOpsError';
    this.code = code;
    this.details = options.details ?? {};
  }
}

/** Input that does not parse: a malformed command, body or header. */
export class ValidationError extends ChatOpsError {
  constructor(message: string, options?: { cause?: unknown; details?: ErrorDetails }) {
    super('SB_VALIDATION', message, options);
    this.name = 'ValidationError';
  }
}

/** A command the lifecycle does not allow in its current state. */
export class IllegalStateError extends ChatOpsError {
  constructor(message: string, options?: { cause?: unknown; details?: ErrorDetails }) {
    super('SB_ILLEGAL_STATE', message, options);
    this.name = 'IllegalStateError';
  }
}

/** The stream moved on since it was read (expected revision mismatch). */
export class ConcurrencyError extends ChatOpsError {
  readonly streamId: string;
  readonly expected: string;
  readonly actual: string;
  constructor(streamId: string, expected: string, actual: string, options?: { cause?: unknown }) {
    super('SB_CONCURRENCY', `stream ${streamId}: expected revision ${expected}, actual ${actual}`, {
      ...options,
      details: { streamId, expected, actual },
    });
    this.name = 'ConcurrencyError';
    this.streamId = streamId;
    this.expected = expected;
    this.actual = actual;
  }
}

export class NotFoundError extends ChatOpsError {
  constructor(message: string, options?: { cause?: unknown; details?: ErrorDetails }) {
    super('SB_NOT_FOUND', message, options);
    this.name = 'NotFoundError';
  }
}

/** The store cannot take the write or the read right now; webhooks answer 503 so the sender retries. */
export class StoreUnavailableError extends ChatOpsError {
  constructor(message: string, options?: { cause?: unknown; details?: ErrorDetails }) {
    super('SB_STORE_UNAVAILABLE', message, options);
    this.name = 'StoreUnavailableError';
  }
}

export const isChatOpsError = (e: unknown): e is ChatOpsError => e instanceof ChatOpsError;

/** True for any Error carrying this code (ChatOpsError, or a machine DecisionRejected). */
export const hasCode = (e: unknown, code: ErrorCode): e is Error & { code: ErrorCode } =>
  e instanceof Error && (e as { code?: unknown }).code === code;

/** Wraps anything thrown into an Error, for the `err` key of a log line. */
export const asError = (e: unknown): Error => (e instanceof Error ? e : new Error(String(e)));

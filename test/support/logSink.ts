import { Writable } from 'node:stream';
import { createLogger, type Logger } from '../../src/logger.ts';

/**
 * An in-memory log destination (pino's `test/helper.js` sink): every line the logger writes is
 * kept as text and parsed back to JSON for assertions.
 *
 * @example
 * const sink = createLogSink();
 * const logger = sink.logger({ secrets: ['xoxb-secret'] });
 * ...; expect(sink.text()).not.toContain('xoxb-secret');
 */
export type LogSink = Readonly<{
  stream: Writable;
  /** Raw lines as written (after redaction and scrubbing). */
  raw(): string[];
  /** Every line parsed as JSON. */
  lines(): Record<string, unknown>[];
  /** All output as one string, for "contains none of" checks. */
  text(): string;
  /** A logger at `trace` writing to this sink. */
  logger(options?: Readonly<{ secrets?: readonly string[]; level?: 'trace' | 'debug' | 'info' }>): Logger;
  clear(): void;
}>;

export const createLogSink = (): LogSink => {
  let chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer | string, _enc, callback) {
      chunks.push(chunk.toString());
      callback();
    },
  });
  const raw = () =>
    chunks
      .join('')
      .split('\n')
      .filter((l) => l.length > 0);
  return {
    stream,
    raw,
    lines: () => raw().map((l) => JSON.parse(l) as Record<string, unknown>),
    text: () => chunks.join(''),
    logger: (options = {}) =>
      createLogger({
        level: options.level ?? 'trace',
        destination: stream,
        ...(options.secrets ? { secrets: options.secrets } : {}),
      }),
    clear: () => {
      chunks = [];
    },
  };
};

import { type DestinationStream, type Logger as PinoLogger, pino } from 'pino';
import pretty from 'pino-pretty';
import type { LogLevel } from './config.ts';
import { createScrubber, knowSecrets, REDACTED } from './core/scrub.ts';

/**
 * The one root logger. Everything else gets a child:
 * `logger.child({ commandId, streamId })`, `logger.child({ processorId })`, never bindings built
 * from untrusted input. Errors go under `err`.
 *
 * Two layers keep secrets out of every log line, whatever error path wrote it (credentials are
 * never logged: https://cheatsheetseries.owasp.org/cheatsheets/Logging_Cheat_Sheet.html):
 * 1. pino `redact` censors known keys (tokens, signing secrets, authorization headers,
 *    `response_url`, one-time codes, phone numbers) at any of the first three levels.
 * 2. Every serialised line is scrubbed of the configured secret values and of things shaped like
 *    credentials (src/core/scrub.ts, the one scrubber: Slack tokens, Authorization values, JWTs,
 *    `hooks.slack.com` URLs, URL userinfo, E.164 phone numbers), for when a secret hides in a
 *    message or an error text. The secrets given here are also made known to `scrubText`, which
 *    cleans error text before it is stored or shown.
 *
 * @example
 * const logger = createLogger({ level: 'info', secrets: config.secrets });
 * logger.child({ processorId: 'slack-replies' }).info({ position: 42n }, 'caught up');
 */
export type Logger = PinoLogger;

export type LoggerOptions = Readonly<{
  level: LogLevel;
  /** Secret values to scrub from every line (Config.secrets). */
  secrets?: readonly string[];
  /** Where lines go; stdout when omitted. Tests pass a sink (test/support/logSink.ts). */
  destination?: DestinationStream;
  /** Human-readable colour output (a terminal outside CI); JSON otherwise. */
  pretty?: boolean;
  /** Extra base bindings (e.g. `{ service: 'switchboard' }`). */
  base?: Readonly<Record<string, string>>;
}>;

/** Keys whose values never reach a log line. */
export const REDACTED_KEYS = [
  'token',
  'botToken',
  'appToken',
  'accessToken',
  'access_token',
  'refreshToken',
  'apiKey',
  'apiSecret',
  'api_secret',
  'privateKey',
  'signingSecret',
  'signatureSecret',
  'webhookSecret',
  'secret',
  'dataKeys',
  'password',
  'authorization',
  'Authorization',
  'cookie',
  'x-slack-signature',
  'x-pagerduty-signature',
  'bob-signature',
  'response_url',
  'responseUrl',
  'response_urls',
  'otp',
  'pin',
  'verificationCode',
  'verification_code',
  'oneTimeCode',
  'phone',
  'phoneNumber',
  'phone_number',
  'msisdn',
] as const;

const keyPath = (key: string): string => (/^[A-Za-z_$][\w$]*$/.test(key) ? key : `["${key}"]`);
const join = (prefix: string, key: string): string => {
  const k = keyPath(key);
  return k.startsWith('[') ? `${prefix}${k}` : `${prefix}.${k}`;
};

/** fast-redact paths: each key at the top level and up to two levels down. */
export const REDACT_PATHS: readonly string[] = REDACTED_KEYS.flatMap((key) => [
  keyPath(key),
  join('*', key),
  join('*.*', key),
]);

export { createScrubber, REDACTED };

export const createLogger = (options: LoggerOptions): Logger => {
  const scrub = createScrubber(options.secrets);
  // The same secrets are scrubbed wherever an error becomes data (src/core/scrub.ts).
  knowSecrets(options.secrets ?? []);
  const destination =
    options.destination ??
    (options.pretty
      ? pretty({ colorize: true, sync: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' })
      : pino.destination({ fd: 1, sync: false }));
  return pino(
    {
      level: options.level,
      base: { service: 'switchboard', ...options.base },
      redact: { paths: [...REDACT_PATHS], censor: REDACTED },
      serializers: { err: pino.stdSerializers.err, error: pino.stdSerializers.err },
      hooks: { streamWrite: scrub },
      timestamp: pino.stdTimeFunctions.isoTime,
      // JSON lines carry the level's name for people reading raw logs; pino-pretty wants numbers.
      ...(options.pretty ? {} : { formatters: { level: (label: string) => ({ level: label }) } }),
    },
    destination,
  );
};

/** A logger that writes nothing (for tools and tests that do not look at logs). */
export const silentLogger = (): Logger => pino({ level: 'silent' });

import type { Logger as SlackLogger, LogLevel as SlackLogLevel } from '@slack/logger';
import type { Logger } from '../logger.ts';

/**
 * Bolt and @slack/web-api log through this adapter into our pino logger, so
 * their lines are JSON, bound to `component`, and pass through the same redaction.
 * Their `(...msg)` arguments are joined into one message; an Error among them goes under `err`.
 *
 * @example new App({ logger: createBoltLogger(logger), ... })
 */
export const createBoltLogger = (logger: Logger, component = 'bolt'): SlackLogger => {
  let current = logger.child({ component });
  const write =
    (level: 'debug' | 'info' | 'warn' | 'error') =>
    (...msg: unknown[]): void => {
      if (!current.isLevelEnabled(level)) return;
      const err = msg.find((m): m is Error => m instanceof Error);
      const text = msg
        .filter((m) => m !== err)
        .map((m) => (typeof m === 'string' ? m : safeJson(m)))
        .join(' ');
      if (err) current[level]({ err }, text || err.message);
      else current[level](text);
    };
  return {
    debug: write('debug'),
    info: write('info'),
    warn: write('warn'),
    error: write('error'),
    // The root logger's level rules; Bolt and the SDK do not get to lower or raise it.
    setLevel: () => {},
    getLevel: () =>
      (['debug', 'info', 'warn', 'error'].includes(current.level) ? current.level : 'error') as SlackLogLevel,
    setName: (name: string) => {
      current = logger.child({ component: name });
    },
  };
};

const safeJson = (value: unknown): string => {
  try {
    return typeof value === 'bigint' ? String(value) : (JSON.stringify(value) ?? String(value));
  } catch {
    return String(value);
  }
};

import { createSwitchboard, type Switchboard } from './app.ts';
import { type Config, ConfigError, formatConfigProblems, loadConfig, processEnv } from './config.ts';
import { asError, isChatOpsError } from './core/errors.ts';
import { ALL_LIFECYCLES } from './lifecycleList.ts';
import { createLogger, type Logger } from './logger.ts';

/**
 * `npm start`: reads the environment, starts Switchboard, and stops it gracefully on SIGTERM or
 * SIGINT (stop taking requests, let processors finish the event in hand, close the store), exiting
 * 0 within 10 s, or 1 if that takes longer. A configuration that cannot work exits 2 with what to
 * fix on stderr: a missing or malformed variable, or a data key ring (SWITCHBOARD_DATA_KEYS) that
 * cannot open the person keys in the store (found before any traffic is taken).
 */
const SHUTDOWN_LIMIT_MS = 10_000;

const fail = (message: string, code: number): never => {
  process.stderr.write(`${message}\n`);
  process.exit(code);
};

const readConfig = (): Config => {
  try {
    return loadConfig(processEnv(), ALL_LIFECYCLES);
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    return fail(
      [
        'Switchboard cannot start: its configuration is incomplete.',
        '',
        formatConfigProblems(e.problems),
        '',
        'To try Switchboard without a Slack workspace or vendor accounts, run:  npm run sandbox',
        'To connect a real workspace, create the Slack app from manifest.yml and set the variables',
        'above (README.md, "Create the Slack app" and "Configuration").',
      ].join('\n'),
      2,
    );
  }
};

const main = async (): Promise<void> => {
  const config = readConfig();
  const logger: Logger = createLogger({
    level: config.logLevel,
    secrets: config.secrets,
    pretty: process.stdout.isTTY === true && !config.ci,
  });

  // Resolves once the app exists (or failed to), so a signal during start-up still closes the store.
  let created: Promise<Switchboard | undefined> = Promise.resolve(undefined);
  let shuttingDown = false;
  const shutdown = (reason: string, exitCode: number) => {
    if (shuttingDown) return;
    shuttingDown = true;
    logger.info({ reason }, 'shutting down');
    const limit = setTimeout(() => {
      logger.fatal({ limitMs: SHUTDOWN_LIMIT_MS }, 'shutdown took too long; exiting');
      logger.flush();
      process.exit(1);
    }, SHUTDOWN_LIMIT_MS);
    limit.unref();
    created
      .then((switchboard) => switchboard?.stop())
      .then(() => {
        clearTimeout(limit);
        logger.flush(() => process.exit(exitCode));
      })
      .catch((e: unknown) => {
        logger.fatal({ err: asError(e) }, 'shutdown failed');
        logger.flush(() => process.exit(1));
      });
  };
  process.once('SIGTERM', () => shutdown('SIGTERM', 0));
  process.once('SIGINT', () => shutdown('SIGINT', 0));
  process.on('uncaughtException', (e) => {
    logger.fatal({ err: e }, 'uncaught exception');
    shutdown('uncaughtException', 1);
  });
  process.on('unhandledRejection', (e) => {
    logger.fatal({ err: asError(e) }, 'unhandled promise rejection');
    shutdown('unhandledRejection', 1);
  });

  created = createSwitchboard({ config, logger }).catch((e: unknown) => {
    logger.fatal({ err: asError(e) }, `Switchboard failed to start: ${asError(e).message}`);
    return undefined;
  });
  const switchboard = await created;
  if (!switchboard) {
    logger.flush(() => process.exit(1));
    return;
  }
  try {
    await switchboard.start();
  } catch (e) {
    logger.fatal({ err: asError(e) }, `Switchboard failed to start: ${asError(e).message}`);
    await switchboard.stop().catch(() => undefined);
    // A configuration that cannot work (the data key ring): said where the operator looks, exit 2.
    const misconfigured = isChatOpsError(e) && e.code === 'SB_CONFIG';
    if (misconfigured) process.stderr.write(`Switchboard cannot start: ${asError(e).message}\n`);
    logger.flush(() => process.exit(misconfigured ? 2 : 1));
  }
};

await main();

import { isAbsolute, join, relative } from 'node:path';
import { parseArgs } from 'node:util';
import { DEFAULT_CONSOLE_PORT, type Sandbox, startSandbox } from './sandbox.ts';

/**
 * `npm run sandbox [-- --reset] [-- --port 3100] [-- --data ./data] [-- --page-after 0 --call-after 1] [-- --hr-lag 2]`:
 * Switchboard with a simulated Slack workspace, incident service, communications service
 * (everyone's phone) and HR service, driven from a console in the browser. `--page-after`/`--call-after` set the
 * bot's paging delays in whole minutes (default 5 and 3), to see a page without waiting; `--hr-lag`
 * how many seconds HR's API takes to show a change (default the vendor's 20; never 0), which the bot
 * waits too (the leaver guard, approvals shown in HR). Prints two lines:
 * the console URL, and the command that browses the sandbox's event store (the store CLI looks at
 * `./data/switchboard.db` unless told otherwise); the bot's logs go to `<data>/sandbox.log`.
 * Ctrl-C stops it; the world is kept for the next start unless `--reset`.
 */

const USAGE = `Usage: npm run sandbox -- [--reset] [--port <console port, default ${DEFAULT_CONSOLE_PORT}>] [--data <dir, default ./data>]
       [--page-after <minutes an incident stays triggered before its on-call is paged by SMS, default 5>]
       [--call-after <minutes from the SMS page to the call, default 3>]
       [--hr-lag <seconds HR's API takes to show a change, default 20; more than 0>]`;

const fail = (message: string): never => {
  process.stderr.write(`${message}\n`);
  process.exit(1);
};

const args = (() => {
  try {
    return parseArgs({
      options: {
        reset: { type: 'boolean', default: false },
        port: { type: 'string' },
        data: { type: 'string', default: './data' },
        'page-after': { type: 'string' },
        'call-after': { type: 'string' },
        'hr-lag': { type: 'string' },
        help: { type: 'boolean', short: 'h', default: false },
      },
      strict: true,
    }).values;
  } catch (e) {
    return fail(`${e instanceof Error ? e.message : String(e)}\n${USAGE}`);
  }
})();
if (args.help) {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}
const port = args.port === undefined ? DEFAULT_CONSOLE_PORT : Number(args.port);
if (!Number.isInteger(port) || port < 0 || port > 65535) fail(`--port must be a port number\n${USAGE}`);

/** A whole number of minutes from a flag, or undefined when it is not given. */
const minutesFlag = (name: string, raw: string | undefined): number | undefined => {
  if (raw === undefined) return undefined;
  if (!/^(0|[1-9]\d{0,3})$/.test(raw)) fail(`--${name} must be a whole number of minutes (0-9999)\n${USAGE}`);
  return Number(raw);
};
const delayMinutes = minutesFlag('page-after', args['page-after']);
const callAfterMinutes = minutesFlag('call-after', args['call-after']);

/** HR's read-after-write lag from `--hr-lag <seconds>` (decimals allowed), in ms; never 0. */
const hrLagMs = (() => {
  const raw = args['hr-lag'];
  if (raw === undefined) return undefined;
  const seconds = /^\d{1,4}(\.\d{1,3})?$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(seconds > 0))
    fail(`--hr-lag must be a number of seconds above 0 (HR always shows changes a little late)\n${USAGE}`);
  return Math.round(seconds * 1000);
})();

let sandbox: Sandbox | undefined;
try {
  sandbox = await startSandbox({
    dataDir: args.data ?? './data',
    reset: args.reset === true,
    ports: { console: port },
    paging: {
      ...(delayMinutes === undefined ? {} : { delayMinutes }),
      ...(callAfterMinutes === undefined ? {} : { callAfterMinutes }),
    },
    ...(hrLagMs === undefined ? {} : { hrLagMs }),
  });
} catch (e) {
  const code = (e as { code?: string }).code;
  if (code === 'EADDRINUSE')
    fail(`The sandbox console's port ${port} is in use; pass --port <another port>.`);
  fail(`The sandbox could not start: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
}
const running = sandbox as Sandbox;

/** A path as the person typing the next command needs it: relative to here when inside, quoted when needed. */
const shown = (path: string): string => {
  const rel = relative(process.cwd(), path);
  const text = rel === '' ? '.' : rel.startsWith('..') || isAbsolute(rel) ? path : `./${rel}`;
  return /^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replaceAll("'", `'\\''`)}'`;
};
process.stdout.write(
  `Switchboard sandbox: ${running.consoleUrl}  (${running.restored ? 'world restored' : 'fresh world'}; logs in ${shown(join(running.dataDir, 'sandbox.log'))}; Ctrl-C stops)\n` +
    `Browse its event store: EVENT_STORE_URL=sqlite:${shown(running.dbPath)} npm run events -- streams\n`,
);
for (const notice of running.notices) process.stdout.write(`${notice}\n`);

let stopping = false;
const stop = () => {
  if (stopping) return;
  stopping = true;
  const limit = setTimeout(() => process.exit(1), 10_000);
  limit.unref();
  running.stop().then(
    () => process.exit(0),
    () => process.exit(1),
  );
};
process.once('SIGINT', stop);
process.once('SIGTERM', stop);

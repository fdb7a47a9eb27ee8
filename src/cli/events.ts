import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Env, loadStoreConfig, processEnv } from '../config.ts';
import { asError, isChatOpsError } from '../core/errors.ts';
import type { EventStore, RecordedEvent, StreamInfo } from '../eventStore/eventStore.ts';
import { openEventStore } from '../eventStore/openEventStore.ts';

/**
 * The store CLI: `npm run events -- <command> [options]`, on the store named by EVENT_STORE_URL;
 * without it, on `./data/switchboard.db` (where `npm start` keeps its store), or, when only the
 * sandbox has run here, on the sandbox's `./data/sandbox.db` (saying so on stderr).
 *
 *   streams [--prefix P] [--limit N]            streams with their event counts and last write
 *   read <stream> [--from REV] [--limit N] [--backwards]
 *                                               one stream's events
 *   tail [--limit N] [--prefix P] [--follow]    the latest events in global order; --follow
 *                                               keeps printing new ones until Ctrl-C
 *   replay <processor> [--force]                resets the processor's checkpoint, so it
 *                                               rebuilds from the first event on its next start
 *   rebuild <read model>                        folds a snapshotted read model from the first
 *                                               event and writes a fresh snapshot (stop first)
 *
 * Tables for people (colour on a terminal; NO_COLOR turns it off), `--json` for JSON lines.
 */

const USAGE = `usage: npm run events -- <command> [options]

  streams [--prefix P] [--limit N]                 list streams
  read <stream> [--from REV] [--limit N] [--backwards]
                                                   one stream's events
  tail [--limit N] [--prefix P] [--follow]         latest events in global order
  replay <processor> [--force]                     reset a processor's checkpoint (stop Switchboard first)
  rebuild <read model>                             rebuild a read model's snapshot from zero (stop Switchboard first)

  --json   JSON lines instead of tables
Store: EVENT_STORE_URL (default sqlite:./data/switchboard.db; if only the sandbox
has run here, its sqlite:./data/sandbox.db)`;

export type CliIo = Readonly<{
  env: Env;
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  /** Colour and human widths (a terminal). */
  tty: boolean;
  /** Ends `tail --follow` (SIGINT in a real run). */
  signal?: AbortSignal;
  /** Use this store instead of opening EVENT_STORE_URL (it is not closed). */
  store?: EventStore;
  /** Directory that relative store paths are read from (default: the process's). */
  cwd?: string;
}>;

type Args = { positional: string[]; flags: Map<string, string | true> };

const VALUE_FLAGS = new Set(['--prefix', '--limit', '--from']);

const parseArgs = (argv: readonly string[]): Args => {
  const positional: string[] = [];
  const flags = new Map<string, string | true>();
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a.startsWith('--')) {
      const [name, inline] = a.split('=', 2) as [string, string | undefined];
      if (VALUE_FLAGS.has(name)) {
        const value = inline ?? argv[++i];
        if (value === undefined) throw new UsageError(`${name} needs a value`);
        flags.set(name, value);
      } else {
        flags.set(name, true);
      }
    } else {
      positional.push(a);
    }
  }
  return { positional, flags };
};

class UsageError extends Error {}

const intFlag = (args: Args, name: string, fallback: number | undefined): number | undefined => {
  const v = args.flags.get(name);
  if (v === undefined) return fallback;
  if (v === true || !/^\d+$/.test(v)) throw new UsageError(`${name} takes a whole number`);
  return Number(v);
};

// ---------- rendering ----------

type Colour = (s: string) => string;
const ansi =
  (code: number): Colour =>
  (s) =>
    `\u001b[${code}m${s}\u001b[0m`;
const palette = (on: boolean) => ({
  dim: on ? ansi(2) : (s: string) => s,
  bold: on ? ansi(1) : (s: string) => s,
  green: on ? ansi(32) : (s: string) => s,
  yellow: on ? ansi(33) : (s: string) => s,
  cyan: on ? ansi(36) : (s: string) => s,
});

// biome-ignore lint/suspicious/noControlCharactersInRegex: strips ANSI colour codes to measure width
const visible = (s: string): number => s.replace(/\u001b\[\d+m/g, '').length;

const table = (headers: string[], rows: string[][], bold: Colour): string => {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => visible(r[i] ?? ''))));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c + ' '.repeat(widths[i]! - visible(c))))
      .join('  ')
      .trimEnd();
  return [bold(line(headers)), ...rows.map(line)].join('\n');
};

const jsonReplacer = (_key: string, value: unknown): unknown =>
  typeof value === 'bigint' ? value.toString() : value;
const toJsonLine = (value: unknown): string => JSON.stringify(value, jsonReplacer);

const actorOf = (e: RecordedEvent): string => {
  const m = e.metadata as Record<string, unknown>;
  const d = e.data as Record<string, unknown>;
  const fromInput = (d['input'] as Record<string, unknown> | undefined)?.['actor'];
  const v = m['actor'] ?? fromInput ?? (d['metadata'] as Record<string, unknown> | undefined)?.['actor'];
  return typeof v === 'string' ? v : '';
};

/** A one-line summary of the data: for inbox inputs what was invoked, otherwise the first fields. */
const summary = (e: RecordedEvent, max: number): string => {
  const d = e.data as Record<string, unknown>;
  const input = d['input'] as Record<string, unknown> | undefined;
  let text: string;
  if (input && typeof input['name'] === 'string') {
    const payload = input['payload'] as Record<string, unknown> | undefined;
    const args = typeof payload?.['text'] === 'string' && payload['text'] ? ` ${payload['text']}` : '';
    const commands = Array.isArray(d['commands'])
      ? (d['commands'] as { type?: string }[]).map((c) => c.type)
      : [];
    const rejection = (d['rejection'] as { code?: string } | undefined)?.code;
    text = `${input['inputKind'] ?? input['source']} ${input['name']}${args}${commands.length ? ` → ${commands.join(', ')}` : ''}${rejection ? ` (${rejection})` : ''}`;
  } else {
    text = JSON.stringify(d, jsonReplacer);
  }
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
};

const eventRows = (
  events: readonly RecordedEvent[],
  c: ReturnType<typeof palette>,
  wide: boolean,
): string[][] =>
  events.map((e) => [
    c.dim(String(e.position)),
    e.streamId,
    String(e.revision),
    e.kind === 'command' ? c.yellow(e.type) : c.green(e.type),
    actorOf(e),
    c.dim(e.recordedAt.toISOString()),
    summary(e, wide ? 100 : 60),
  ]);
const EVENT_HEADERS = ['POSITION', 'STREAM', 'REV', 'TYPE', 'ACTOR', 'RECORDED', 'SUMMARY'];

const eventJson = (e: RecordedEvent) => ({
  position: e.position,
  streamId: e.streamId,
  revision: e.revision,
  id: e.id,
  type: e.type,
  kind: e.kind,
  recordedAt: e.recordedAt.toISOString(),
  data: e.data,
  metadata: e.metadata,
});

// ---------- commands ----------

const streams = async (
  store: EventStore,
  args: Args,
  io: CliIo,
  json: boolean,
  c: ReturnType<typeof palette>,
) => {
  const prefix = args.flags.get('--prefix');
  const list: StreamInfo[] = await store.listStreams({
    ...(typeof prefix === 'string' ? { prefix } : {}),
    limit: intFlag(args, '--limit', 1000)!,
  });
  if (json) {
    for (const s of list)
      io.stdout(
        toJsonLine({ ...s, events: s.lastRevision + 1, lastRecordedAt: s.lastRecordedAt.toISOString() }),
      );
    return;
  }
  if (list.length === 0) {
    io.stdout(c.dim('no streams'));
    return;
  }
  io.stdout(
    table(
      ['STREAM', 'EVENTS', 'LAST POSITION', 'LAST WRITE'],
      list.map((s) => [
        s.streamId,
        String(s.lastRevision + 1),
        String(s.lastPosition),
        c.dim(s.lastRecordedAt.toISOString()),
      ]),
      c.bold,
    ),
  );
};

const read = async (
  store: EventStore,
  args: Args,
  io: CliIo,
  json: boolean,
  c: ReturnType<typeof palette>,
) => {
  const streamId = args.positional[1];
  if (!streamId) throw new UsageError('read needs a stream id (see `streams`)');
  const from = intFlag(args, '--from', undefined);
  const limit = intFlag(args, '--limit', undefined);
  const events = await store.readStream(streamId, {
    direction: args.flags.has('--backwards') ? 'backwards' : 'forwards',
    ...(from === undefined ? {} : { fromRevision: from }),
    ...(limit === undefined ? {} : { maxCount: limit }),
  });
  if (json) {
    for (const e of events) io.stdout(toJsonLine(eventJson(e)));
    return;
  }
  if (events.length === 0) {
    io.stdout(c.dim(`stream ${streamId} has no events`));
    return;
  }
  io.stdout(table(EVENT_HEADERS, eventRows(events, c, io.tty), c.bold));
};

const tail = async (
  store: EventStore,
  args: Args,
  io: CliIo,
  json: boolean,
  c: ReturnType<typeof palette>,
) => {
  const limit = intFlag(args, '--limit', 20)!;
  const prefix = args.flags.get('--prefix');
  const filter = typeof prefix === 'string' ? { streamPrefixes: [prefix] } : undefined;
  const head = await store.headPosition();
  // Positions are dense in SQLite; in KurrentDB they have gaps, so this may show fewer events.
  const after = head === undefined || head <= BigInt(limit) ? undefined : head - BigInt(limit);
  const recent = (
    await store.readAll({ ...(after === undefined ? {} : { after }), ...(filter ? { filter } : {}) })
  ).slice(-limit);
  const print = (events: readonly RecordedEvent[], withHeader: boolean) => {
    if (events.length === 0) return;
    if (json) for (const e of events) io.stdout(toJsonLine(eventJson(e)));
    else if (withHeader) io.stdout(table(EVENT_HEADERS, eventRows(events, c, io.tty), c.bold));
    else for (const row of eventRows(events, c, io.tty)) io.stdout(row.join('  '));
  };
  print(recent, true);
  if (!args.flags.has('--follow')) return;
  if (!json) io.stderr(c.dim('following new events; Ctrl-C to stop'));
  const subscription = store.subscribe({
    from: recent.at(-1)?.position ?? head ?? 'start',
    ...(filter ? { filter } : {}),
    onEvent: async (e) => print([e], false),
  });
  await new Promise<void>((done) => {
    if (io.signal?.aborted) done();
    io.signal?.addEventListener('abort', () => done(), { once: true });
    subscription.done.then(done, done);
  });
  await subscription.stop();
};

const replay = async (
  store: EventStore,
  args: Args,
  io: CliIo,
  json: boolean,
  c: ReturnType<typeof palette>,
) => {
  const processorId = args.positional[1];
  if (!processorId) throw new UsageError('replay needs a processor id (e.g. inbox-dispatch)');
  const previous = await store.readCheckpoint(processorId);
  if (previous === undefined && !args.flags.has('--force')) {
    throw new UsageError(
      `no checkpoint stored for processor ${processorId}: it never ran here, or the id is misspelt (--force resets it anyway)`,
    );
  }
  // Checkpoint 0 lies before every event (SQLite positions start at 1; KurrentDB's log position 0
  // is its own start), so the processor resumes "after 0": from the first event.
  await store.storeCheckpoint(processorId, 0n);
  if (json) {
    io.stdout(toJsonLine({ processorId, previousCheckpoint: previous ?? null, checkpoint: 0n }));
    return;
  }
  io.stdout(
    `${c.bold(processorId)}: checkpoint reset (was ${previous ?? 'none'}). It rebuilds from the first event when Switchboard next starts.`,
  );
  io.stdout(
    c.dim(
      'If Switchboard is running, stop it first: a running processor keeps its position in memory and would write it back.',
    ),
  );
};

const rebuild = async (
  store: EventStore,
  args: Args,
  io: CliIo,
  json: boolean,
  c: ReturnType<typeof palette>,
) => {
  // The registrations, each by the module that owns the read model (loaded only for a rebuild).
  const { loadReadModels } = await import('../lifecycleList.ts');
  const READ_MODELS = await loadReadModels();
  const names = READ_MODELS.map((r) => r.name);
  const name = args.positional[1];
  const create = READ_MODELS.find((r) => r.name === name)?.create;
  if (!name || !create) {
    throw new UsageError(
      `${name ? `no read model ${name}` : 'rebuild needs a read model'}: one of ${names.join(', ')}`,
    );
  }
  const started = Date.now();
  const result = await create(store).rebuild(store);
  const ms = Date.now() - started;
  if (json) {
    io.stdout(toJsonLine({ readModel: name, ...result, ms }));
    return;
  }
  io.stdout(
    `${c.bold(name)}: rebuilt from the first event (${result.applied} events applied in ${ms} ms); snapshot at position ${result.position ?? 'none (empty store)'}, ${result.bytes} bytes.`,
  );
  io.stdout(
    c.dim(
      'The next start resumes from it. If Switchboard is running, stop it first: a running one writes its own snapshot when it stops.',
    ),
  );
};

const COMMANDS = { streams, read, tail, replay, rebuild } as const;

// ---------- which store ----------

/** Where `npm start` keeps its store when EVENT_STORE_URL is unset (config.ts's default). */
const DEFAULT_STORE = './data/switchboard.db';
/** Where `npm run sandbox` keeps its store (its default `--data ./data`). */
const SANDBOX_STORE = './data/sandbox.db';

type StoreChoice = { url: string; note?: string } | { missing: string };

/**
 * The store to open: EVENT_STORE_URL when set; otherwise Switchboard's default file, or the
 * sandbox's when only that one exists. SQLite files must exist (opening would create an empty one).
 */
const chooseStore = (env: CliIo['env'], cwd: string, command: string): StoreChoice => {
  const set = (env['EVENT_STORE_URL']?.trim() ?? '') !== '';
  const { eventStoreUrl } = loadStoreConfig(env);
  if (!eventStoreUrl.startsWith('sqlite:')) return { url: eventStoreUrl };
  const path = eventStoreUrl.slice('sqlite:'.length);
  if (path === '' || path === ':memory:') return { url: eventStoreUrl };
  if (existsSync(resolve(cwd, path))) return { url: `sqlite:${resolve(cwd, path)}` };
  if (set) {
    return {
      missing: `no event store at ${path} (EVENT_STORE_URL=${eventStoreUrl}): has Switchboard run from this directory?`,
    };
  }
  if (existsSync(resolve(cwd, SANDBOX_STORE))) {
    return {
      url: `sqlite:${resolve(cwd, SANDBOX_STORE)}`,
      note: `EVENT_STORE_URL is not set and ${DEFAULT_STORE} does not exist: reading the sandbox's store, ${SANDBOX_STORE}`,
    };
  }
  return {
    missing: [
      `no event store here: neither ${DEFAULT_STORE} (npm start) nor ${SANDBOX_STORE} (npm run sandbox) exists in ${cwd}.`,
      'Run Switchboard (npm start) or the sandbox (npm run sandbox) here first, or point EVENT_STORE_URL at a store:',
      `  EVENT_STORE_URL=sqlite:/path/to/switchboard.db npm run events -- ${command}`,
    ].join('\n'),
  };
};

/** Runs the CLI; resolves with the exit code. */
export const runEventsCli = async (argv: readonly string[], io: CliIo): Promise<number> => {
  let args: Args;
  try {
    args = parseArgs(argv);
  } catch (e) {
    io.stderr(`${asError(e).message}\n\n${USAGE}`);
    return 2;
  }
  const name = args.positional[0];
  if (!name || args.flags.has('--help') || name === 'help') {
    (name ? io.stdout : io.stderr)(USAGE);
    return name ? 0 : 2;
  }
  const command = COMMANDS[name as keyof typeof COMMANDS];
  if (!command) {
    io.stderr(`unknown command ${name}\n\n${USAGE}`);
    return 2;
  }
  const c = palette(io.tty && io.env['NO_COLOR'] === undefined);
  let store = io.store;
  try {
    if (!store) {
      const choice = chooseStore(io.env, io.cwd ?? process.cwd(), name);
      if ('missing' in choice) {
        io.stderr(choice.missing);
        return 1;
      }
      if (choice.note) io.stderr(c.dim(choice.note));
      store = await openEventStore(choice.url);
    }
    await command(store, args, io, args.flags.has('--json'), c);
    return 0;
  } catch (e) {
    if (e instanceof UsageError) {
      io.stderr(`${e.message}\n\n${USAGE}`);
      return 2;
    }
    io.stderr(`events ${name} failed: ${isChatOpsError(e) ? `${e.code}: ` : ''}${asError(e).message}`);
    return 1;
  } finally {
    if (store && !io.store) await store.close();
  }
};

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const controller = new AbortController();
  process.once('SIGINT', () => controller.abort());
  process.once('SIGTERM', () => controller.abort());
  const code = await runEventsCli(process.argv.slice(2), {
    env: processEnv(),
    stdout: (text) => process.stdout.write(`${text}\n`),
    stderr: (text) => process.stderr.write(`${text}\n`),
    tty: process.stdout.isTTY === true,
    signal: controller.signal,
  });
  process.exitCode = code;
}

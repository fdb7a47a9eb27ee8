/**
 * Test helpers for event store tests: event builders, unique names (so the contract suite can run
 * against a shared KurrentDB that already holds other runs' events), subscription collectors,
 * polling waits and temp directories.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { JsonObject } from '../../src/core/messages.ts';
import type {
  EventFilter,
  EventStore,
  NewEvent,
  RecordedEvent,
  Subscription,
} from '../../src/eventStore/eventStore.ts';

/** A new event with a fresh UUID. */
export const newEvent = (
  type: string,
  data: JsonObject = {},
  extra: Partial<Pick<NewEvent, 'metadata' | 'kind' | 'id'>> = {},
): NewEvent => ({ id: randomUUID(), type, data, ...extra });

/** `count` events of one type, numbered in `data.n`. */
export const newEvents = (count: number, type = 'Numbered', from = 0): NewEvent[] =>
  Array.from({ length: count }, (_, i) => newEvent(type, { n: from + i }));

/**
 * A category name no other test or run uses, e.g. `order3f9a1c2b`. Streams are
 * `${unique('order')}-1`; filter on the category with the prefix `${category}-`.
 */
export const unique = (base: string): string => `${base}${randomUUID().replaceAll('-', '').slice(0, 12)}`;

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `condition` every few milliseconds until it holds; fails with `what` after `timeoutMs`. */
export const waitUntil = async (
  condition: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = 20_000,
): Promise<void> => {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(5);
  }
};

export type Deferred<T> = { promise: Promise<T>; resolve: (value: T) => void; reject: (e: unknown) => void };

export const deferred = <T = void>(): Deferred<T> => {
  let resolve!: (value: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
};

export type Collector = {
  /** Events delivered so far, in delivery order. */
  events: RecordedEvent[];
  subscription: Subscription;
  /** Resolves with onCaughtUp's position when the subscription goes live. */
  caughtUp: Promise<bigint | undefined>;
  /** How many times onCaughtUp was called. */
  caughtUpCalls: () => number;
  /** Index in `events` at which onCaughtUp fired (events before it were delivered in catch-up). */
  caughtUpAt: () => number | undefined;
  /** Waits until at least `count` events were delivered. */
  waitFor: (count: number) => Promise<RecordedEvent[]>;
};

/** Subscribes and records every delivered event (optionally running `onEach` for each). */
export const collect = (
  store: EventStore,
  from: bigint | 'start' | 'end',
  filter?: EventFilter,
  onEach?: (event: RecordedEvent, index: number) => Promise<void> | void,
): Collector => {
  const events: RecordedEvent[] = [];
  const caught = deferred<bigint | undefined>();
  let calls = 0;
  let at: number | undefined;
  const subscription = store.subscribe({
    from,
    ...(filter ? { filter } : {}),
    onEvent: async (event) => {
      events.push(event);
      await onEach?.(event, events.length - 1);
    },
    onCaughtUp: (position) => {
      calls += 1;
      if (at === undefined) at = events.length;
      caught.resolve(position);
    },
  });
  // A failing subscription should fail the test that waits on it, not leave it hanging.
  subscription.done.catch((e: unknown) => caught.reject(e));
  return {
    events,
    subscription,
    caughtUp: caught.promise,
    caughtUpCalls: () => calls,
    caughtUpAt: () => at,
    waitFor: async (count) => {
      await waitUntil(() => events.length >= count, `${count} delivered events (have ${events.length})`);
      return events;
    },
  };
};

/** Ids of events, for order comparisons with readable diffs. */
export const ids = (events: readonly { id: string }[]): string[] => events.map((e) => e.id);

/** A temp directory under the OS temp dir (or `base`), removed by `cleanup()`. */
export const tempDir = (
  prefix = 'switchboard-test',
  base = tmpdir(),
): { path: string; file: (name: string) => string; cleanup: () => void } => {
  const path = mkdtempSync(join(base, `${prefix}-`));
  return {
    path,
    file: (name) => join(path, name),
    cleanup: () => rmSync(path, { recursive: true, force: true }),
  };
};

export type ChildRun = {
  child: ChildProcess;
  /** Complete stdout lines so far (a line cut short by a kill is never included). */
  lines: string[];
  /** Resolves with the first line (from the start) that satisfies `test`. */
  waitForLine: (test: (line: string) => boolean, what: string, timeoutMs?: number) => Promise<string>;
  /** Calls `onLine` for each complete line as it arrives (and for those already received). */
  onLine: (onLine: (line: string) => void) => void;
  /** Settles when the process has exited and its pipes are drained. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stderr: () => string;
};

/** Runs a `.ts` script under this Node (24, type stripping) and reads its stdout line by line. */
export const runChild = (script: string, args: readonly string[]): ChildRun => {
  const child = spawn(process.execPath, ['--no-warnings', script, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  const listeners: ((line: string) => void)[] = [];
  let partial = '';
  let err = '';
  child.stdout!.setEncoding('utf8');
  child.stdout!.on('data', (chunk: string) => {
    const parts = (partial + chunk).split('\n');
    partial = parts.pop()!;
    for (const line of parts) {
      lines.push(line);
      for (const l of listeners) l(line);
    }
  });
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (chunk: string) => {
    err += chunk;
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on('close', (code, signal) => resolve({ code, signal }));
  });
  return {
    child,
    lines,
    waitForLine: async (test, what, timeoutMs = 20_000) => {
      let found: string | undefined;
      let ended = false;
      void exited.then(() => {
        ended = true;
      });
      await waitUntil(
        () => {
          found = lines.find(test);
          if (found === undefined && ended) throw new Error(`child exited before ${what}; stderr: ${err}`);
          return found !== undefined;
        },
        what,
        timeoutMs,
      );
      return found!;
    },
    onLine: (onLine) => {
      for (const line of lines) onLine(line);
      listeners.push(onLine);
    },
    exited,
    stderr: () => err,
  };
};

import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runEventsCli } from '../../src/cli/events.ts';
import type { EventStore } from '../../src/eventStore/eventStore.ts';
import { openEventStore } from '../../src/eventStore/openEventStore.ts';
import { NODE24, ROOT, tempDir } from '../support/startApp.ts';

const tmp = tempDir();
const dbPath = join(tmp.dir, 'cli.db');
let store: EventStore;

const run = async (
  argv: string[],
  options: { tty?: boolean; signal?: AbortSignal; shared?: boolean } = {},
) => {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runEventsCli(argv, {
    env: { EVENT_STORE_URL: `sqlite:${dbPath}` },
    stdout: (t) => out.push(t),
    stderr: (t) => err.push(t),
    tty: options.tty ?? false,
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.shared ? { store } : {}),
  });
  return { code, out: out.join('\n'), err: err.join('\n') };
};

beforeAll(async () => {
  store = await openEventStore(`sqlite:${dbPath}`);
  await store.appendToStream('inbox-slack', [
    {
      id: '00000000-0000-4000-8000-000000000001',
      type: 'SlackInputReceived',
      kind: 'command',
      data: {
        input: {
          source: 'slack',
          inputKind: 'slash_command',
          name: '/incident',
          actor: 'U0ALICE',
          payload: { text: 'list' },
        },
        commands: [{ type: 'ListIncidents', data: {}, metadata: { actor: 'U0ALICE' } }],
      },
      metadata: { actor: 'U0ALICE' },
    },
  ]);
  await store.appendToStream('incident-P1', [
    { id: '00000000-0000-4000-8000-000000000002', type: 'IncidentTriggered', data: { title: 'DB down' } },
    { id: '00000000-0000-4000-8000-000000000003', type: 'IncidentAcknowledged', data: { by: 'U0BOB' } },
  ]);
  await store.storeCheckpoint('inbox-dispatch', 3n);
});
afterAll(async () => {
  await store.close();
  tmp.cleanup();
});

describe('npm run events', () => {
  it('streams: a table of streams with event counts', async () => {
    const { code, out } = await run(['streams']);
    expect(code).toBe(0);
    const lines = out.split('\n');
    expect(lines[0]).toMatch(/^STREAM\s+EVENTS\s+LAST POSITION\s+LAST WRITE$/);
    expect(out).toMatch(/incident-P1\s+2\s+3/);
    expect(out).toMatch(/inbox-slack\s+1\s+1/);
  });

  it('streams --json --prefix: JSON lines', async () => {
    const { out } = await run(['streams', '--prefix', 'incident-', '--json']);
    const rows = out.split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(rows).toEqual([
      expect.objectContaining({ streamId: 'incident-P1', events: 2, lastPosition: '3' }),
    ]);
  });

  it('read: one stream, with actor and a summary of inbox inputs', async () => {
    const { out } = await run(['read', 'inbox-slack']);
    expect(out).toContain('SlackInputReceived');
    expect(out).toContain('U0ALICE');
    expect(out).toContain('slash_command /incident list → ListIncidents');
    const backwards = await run(['read', 'incident-P1', '--backwards', '--limit', '1', '--json']);
    expect(JSON.parse(backwards.out)).toMatchObject({
      type: 'IncidentAcknowledged',
      revision: 1,
      position: '3',
    });
  });

  it('colours types on a terminal and not otherwise', async () => {
    expect((await run(['read', 'incident-P1'], { tty: true })).out).toContain('\u001b[32mIncidentTriggered');
    expect((await run(['read', 'incident-P1'])).out).not.toContain('\u001b[');
  });

  it('tail: the latest events in global order', async () => {
    const { out } = await run(['tail', '--limit', '2', '--json']);
    expect(out.split('\n').map((l) => (JSON.parse(l) as { type: string }).type)).toEqual([
      'IncidentTriggered',
      'IncidentAcknowledged',
    ]);
  });

  it('tail --follow prints new events until stopped', async () => {
    const controller = new AbortController();
    const lines: string[] = [];
    const done = runEventsCli(['tail', '--limit', '1', '--follow', '--json'], {
      env: {},
      store,
      tty: false,
      signal: controller.signal,
      stdout: (t) => {
        lines.push(t);
        if (lines.length === 2) controller.abort();
      },
      stderr: () => {},
    });
    await store.appendToStream('incident-P1', [
      { id: '00000000-0000-4000-8000-000000000004', type: 'IncidentResolved', data: { by: 'U0BOB' } },
    ]);
    expect(await done).toBe(0);
    expect(lines.map((l) => (JSON.parse(l) as { type: string }).type)).toEqual([
      'IncidentAcknowledged',
      'IncidentResolved',
    ]);
  });

  it('replay: resets a processor checkpoint, refusing unknown ids without --force', async () => {
    const { code, out } = await run(['replay', 'inbox-dispatch'], { shared: true });
    expect(code).toBe(0);
    expect(out).toContain('checkpoint reset (was 3)');
    expect(await store.readCheckpoint('inbox-dispatch')).toBe(0n);
    const unknown = await run(['replay', 'inbox-dispatsh'], { shared: true });
    expect(unknown.code).toBe(2);
    expect(unknown.err).toContain('no checkpoint stored for processor inbox-dispatsh');
    expect(await store.readCheckpoint('inbox-dispatsh')).toBeUndefined();
  });

  it('explains usage errors and a missing store', async () => {
    expect((await run([])).code).toBe(2);
    expect((await run(['frob'])).err).toContain('unknown command frob');
    expect((await run(['read'])).err).toContain('read needs a stream id');
    const missing = await runEventsCli(['streams'], {
      env: { EVENT_STORE_URL: `sqlite:${join(tmp.dir, 'nope.db')}` },
      stdout: () => {},
      stderr: (t) => expect(t).toContain('no event store at'),
      tty: false,
    });
    expect(missing).toBe(1);
  });

  it('runs as a script with Node 24 (npm run events)', () => {
    const r = spawnSync(NODE24, [join(ROOT, 'src/cli/events.ts'), 'streams', '--json'], {
      env: { PATH: process.env['PATH'] ?? '', EVENT_STORE_URL: `sqlite:${dbPath}` },
      encoding: 'utf8',
    });
    expect(r.status).toBe(0);
    expect(r.stdout.trim().split('\n')).toHaveLength(2);
  });
});

describe('npm run events without EVENT_STORE_URL', () => {
  /** A directory holding the named stores under ./data, each with one stream named after it. */
  const workdir = async (...stores: string[]): Promise<string> => {
    const dir = join(tmp.dir, `cwd-${stores.join('-') || 'empty'}`);
    mkdirSync(join(dir, 'data'), { recursive: true });
    for (const name of stores) {
      const s = await openEventStore(`sqlite:${join(dir, 'data', name)}`);
      await s.appendToStream(`from-${name.replace('.db', '')}`, [
        { id: '00000000-0000-4000-8000-0000000000a1', type: 'Marked', data: {} },
      ]);
      await s.close();
    }
    return dir;
  };
  const runIn = async (cwd: string, argv: string[]) => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runEventsCli(argv, {
      env: {},
      cwd,
      stdout: (t) => out.push(t),
      stderr: (t) => err.push(t),
      tty: false,
    });
    return { code, out: out.join('\n'), err };
  };

  it("reads the sandbox's store when only the sandbox has run here, and says so in one line", async () => {
    const cwd = await workdir('sandbox.db');
    const { code, out, err } = await runIn(cwd, ['streams']);
    expect(code).toBe(0);
    expect(out).toMatch(/from-sandbox\s+1\s+1/);
    expect(err).toEqual([
      "EVENT_STORE_URL is not set and ./data/switchboard.db does not exist: reading the sandbox's store, ./data/sandbox.db",
    ]);
    expect(existsSync(join(cwd, 'data/switchboard.db'))).toBe(false);
  });

  it("prefers Switchboard's own store when both exist, without a note", async () => {
    const cwd = await workdir('switchboard.db', 'sandbox.db');
    const { code, out, err } = await runIn(cwd, ['streams']);
    expect(code).toBe(0);
    expect(out).toContain('from-switchboard');
    expect(out).not.toContain('from-sandbox');
    expect(err).toEqual([]);
  });

  it('with neither, names both places and how to point at a store, and creates nothing', async () => {
    const cwd = await workdir();
    const { code, out, err } = await runIn(cwd, ['streams']);
    expect(code).toBe(1);
    expect(out).toBe('');
    const message = err.join('\n');
    expect(message).toContain('./data/switchboard.db (npm start)');
    expect(message).toContain('./data/sandbox.db (npm run sandbox)');
    expect(message).toContain('EVENT_STORE_URL=sqlite:/path/to/switchboard.db npm run events -- streams');
    expect(existsSync(join(cwd, 'data/switchboard.db'))).toBe(false);
    expect(existsSync(join(cwd, 'data/sandbox.db'))).toBe(false);
  });

  it('as a script, looks in the directory it runs from', async () => {
    const cwd = await workdir('sandbox.db');
    const r = spawnSync(NODE24, [join(ROOT, 'src/cli/events.ts'), 'streams', '--json'], {
      cwd,
      env: { PATH: process.env['PATH'] ?? '' },
      encoding: 'utf8',
    });
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ streamId: 'from-sandbox', events: 1 });
    expect(r.stderr.trim().split('\n')).toEqual([expect.stringContaining("reading the sandbox's store")]);
  });
});

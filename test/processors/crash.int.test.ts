import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createCommandBus } from '../../src/application/dispatch.ts';
import { newId } from '../../src/core/ids.ts';
import { createSqliteEventStore } from '../../src/eventStore/sqlite/sqliteEventStore.ts';
import { readTimer, scheduleTimer, timerStreamId } from '../../src/processors/scheduler.ts';
import { createCrashRig, type FixtureChild } from '../support/crashRig.ts';
import { ticketCommand, ticketRoutes, ticketStreamId } from '../support/ticketLifecycle.ts';

const FIXTURES = resolve(import.meta.dirname, 'fixtures');

/** Processes killed in the crash windows and started again (test/support/crashRig.ts). */
const rig = createCrashRig('sb-crash-proc-');
let dir: string | undefined;

afterEach(async () => {
  await rig.killAll();
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});
afterAll(() => rig.cleanup());

/** Runs a .ts fixture with the Node that runs vitest (Node 24, type stripping). */
const run = (script: string, args: string[], env: Record<string, string> = {}): FixtureChild =>
  rig.runFixture(join(FIXTURES, script), args, env);

const killHard = (child: FixtureChild) => rig.kill9(child);

describe('crash safety of processors (kill -9 between effect and checkpoint)', () => {
  it('resumes without losing an event; duplicates are only idempotent redeliveries', async () => {
    dir = mkdtempSync(join(tmpdir(), 'sb-crash-proc-'));
    const eventsPath = join(dir, 'events.db');
    const effectsPath = join(dir, 'effects.db');

    const store = createSqliteEventStore({ path: eventsPath });
    const work: { id: string; position: bigint }[] = [];
    for (let i = 0; i < 300; i++) {
      const id = newId();
      const streamId = i % 7 === 0 ? `other-${i % 3}` : `work-${i % 5}`;
      const r = await store.appendToStream(streamId, [{ id, type: 'WorkRequested', data: { n: i } }]);
      if (streamId.startsWith('work-')) work.push({ id, position: r.position });
    }
    await store.close();
    const pauseAt = work[180]!.position;

    // 1st run: killed while holding event #180, after its effect, before its checkpoint.
    const first = run('crashProcessorChild.ts', [eventsPath, effectsPath], { PAUSE_AT: String(pauseAt) });
    await first.waitForLine(new RegExp(`^paused ${pauseAt}$`));
    await killHard(first);

    const afterCrash = createSqliteEventStore({ path: eventsPath });
    const checkpointAtCrash = (await afterCrash.readCheckpoint('crash-effects')) ?? 0n;
    await afterCrash.close();
    expect(checkpointAtCrash).toBeLessThan(pauseAt);
    const fx = new DatabaseSync(effectsPath);
    expect(fx.prepare('SELECT COUNT(*) AS n FROM effects WHERE key = ?').get(work[180]!.id)).toEqual({
      n: 1,
    });
    fx.close();

    // 2nd run: resumes from the stored checkpoint and finishes.
    const second = run('crashProcessorChild.ts', [eventsPath, effectsPath]);
    await second.waitForLine(/^done$/);
    expect((await second.exited).code).toBe(0);

    const db = new DatabaseSync(effectsPath);
    const effectCounts = new Map(
      (
        db.prepare('SELECT key, COUNT(*) AS n FROM effects GROUP BY key').all() as {
          key: string;
          n: number;
        }[]
      ).map((r) => [r.key, r.n]),
    );
    const deliveries = new Map(
      (
        db.prepare('SELECT key, COUNT(*) AS n FROM deliveries GROUP BY key').all() as {
          key: string;
          n: number;
        }[]
      ).map((r) => [r.key, r.n]),
    );
    db.close();

    // Every event's effect happened exactly once; nothing else was touched.
    expect(effectCounts.size).toBe(work.length);
    for (const { id } of work) expect(effectCounts.get(id)).toBe(1);
    // Deliveries: at least once each; more than once only after the checkpoint at the crash.
    const redelivered = work.filter(({ id }) => (deliveries.get(id) ?? 0) > 1);
    for (const { id } of work) expect(deliveries.get(id) ?? 0).toBeGreaterThanOrEqual(1);
    expect(redelivered.map((w) => w.id)).toContain(work[180]!.id);
    for (const { position } of redelivered) expect(position).toBeGreaterThan(checkpointAtCrash);
    for (const { id } of redelivered) expect(deliveries.get(id)).toBe(2);

    const reopened = createSqliteEventStore({ path: eventsPath });
    expect(await reopened.readCheckpoint('crash-effects')).toBeGreaterThanOrEqual(work.at(-1)!.position);
    await reopened.close();
  });

  it('a scheduler killed between dispatch and TimerFired fires the timer once more, with one effect', async () => {
    dir = mkdtempSync(join(tmpdir(), 'sb-crash-sched-'));
    const eventsPath = join(dir, 'events.db');
    const store = createSqliteEventStore({ path: eventsPath });
    const bus = createCommandBus(store, ticketRoutes);
    await bus.dispatch(ticketCommand('OpenTicket', 't1', { commandId: 'open-t1' }));
    await scheduleTimer(store, {
      timerId: 'touch-t1',
      dueAt: '2026-11-22T02:15:00.000Z',
      command: { type: 'TouchTicket', data: { ticketId: 't1' } },
      now: '2026-11-22T02:00:00.000Z',
    });
    await store.close();

    const first = run('crashSchedulerChild.ts', [eventsPath, '2026-11-22T02:16:00.000Z'], { PAUSE: '1' });
    await first.waitForLine(/^dispatched t1$/);
    await killHard(first);

    const mid = createSqliteEventStore({ path: eventsPath });
    expect((await readTimer(mid, 'touch-t1')).status).toBe('pending');
    expect(
      (await mid.readStream(ticketStreamId('t1'))).filter((m) => m.type === 'TicketTouched'),
    ).toHaveLength(1);
    await mid.close();

    const second = run('crashSchedulerChild.ts', [eventsPath, '2026-11-22T02:20:00.000Z']);
    await second.waitForLine(/^done pending=0$/);
    expect(second.lines).toContain('fired touch-t1 dispatched');

    const third = run('crashSchedulerChild.ts', [eventsPath, '2026-11-22T03:00:00.000Z']);
    await third.waitForLine(/^done pending=0$/);
    expect(third.lines.filter((l) => l.startsWith('fired'))).toEqual([]);

    const end = createSqliteEventStore({ path: eventsPath });
    const touches = (await end.readStream(ticketStreamId('t1'))).filter((m) => m.type === 'TicketTouched');
    expect(touches).toHaveLength(1);
    expect(touches[0]?.data.at).toBe('2026-11-22T02:16:00.000Z');
    expect((await end.readStream(timerStreamId('touch-t1'))).map((e) => e.type)).toEqual([
      'TimerScheduled',
      'TimerFired',
    ]);
    await end.close();
  });
});

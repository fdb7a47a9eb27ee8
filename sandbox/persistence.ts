import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import type { PagerDutySimulator } from './simulators/pagerduty/index.ts';
import type { SimIncident } from './simulators/pagerduty/model.ts';
import type { FakeSlack, FakeSlackState } from './simulators/slack/fakeSlack.ts';

/**
 * Keeps the sandbox's world across restarts: the event store is a SQLite file already, and this
 * saves what the fake Slack workspace and the incident service hold (both in memory) beside it, so
 * a restarted sandbox shows the same cards and the bot can still update them.
 */

export type SavedWorld = Readonly<{
  version: 1;
  savedAt: string;
  slack: FakeSlackState;
  /** `rotationStart` keeps the on-call rotations where they were when the world was first made. */
  pagerduty: Readonly<{ incidents: SimIncident[]; rotationStart?: string }>;
}>;

export const readWorld = (path: string): SavedWorld | undefined => {
  if (!existsSync(path)) return undefined;
  try {
    const parsed = JSON.parse(readFileSync(path, 'utf8')) as SavedWorld;
    return parsed.version === 1 ? parsed : undefined;
  } catch {
    return undefined;
  }
};

/** Writes atomically (temp file, then rename), so a crash mid-write keeps the previous save. */
export const writeWorld = (
  path: string,
  fake: FakeSlack,
  sim: PagerDutySimulator,
  rotationStart: string,
): void => {
  const world: SavedWorld = {
    version: 1,
    savedAt: new Date().toISOString(),
    slack: fake.exportState(),
    pagerduty: { incidents: structuredClone([...sim.state.incidents.values()]), rotationStart },
  };
  writeFileSync(`${path}.tmp`, JSON.stringify(world));
  renameSync(`${path}.tmp`, path);
};

/** The sequence number inside a simulator id (`Q00000A` → 10); NaN for ids it did not make. */
const sequenceOf = (id: string): number => Number.parseInt(id.slice(1), 36);

/**
 * Puts saved incidents back into a freshly started simulator. Call it BEFORE subscribing anyone
 * to its webhooks.
 *
 * The simulator numbers incidents and mints ids from private counters, and has no restore hook
 * (yet): to keep new incidents from reusing a restored number or id, this advances the counters by
 * creating throwaway incidents (nobody hears of them: no subscription exists yet) and removing
 * them. A `restore` in the simulator would make this unnecessary.
 */
export const restoreIncidents = (sim: PagerDutySimulator, incidents: readonly SimIncident[]): void => {
  if (incidents.length === 0) return;
  const model = sim.state;
  const maxNumber = Math.max(...incidents.map((i) => i.number));
  const ids = incidents.flatMap((i) => [
    i.id,
    ...i.notes.map((n) => n.id),
    ...i.alerts.map((a) => a.id),
    ...i.logEntries.map((l) => l.id),
  ]);
  const maxSequence = Math.max(0, ...ids.map(sequenceOf).filter(Number.isFinite));
  const serviceId = [...model.services.keys()][0];
  if (!serviceId) throw new Error('the simulator has no service to restore incidents on');
  for (let guard = 0; guard < 100_000; guard++) {
    const scratch = model.createIncident({
      serviceId,
      title: 'restoring the sandbox',
      agent: { kind: 'system' },
      source: 'system',
    });
    model.incidents.delete(scratch.id);
    const lastId = scratch.logEntries.at(-1)?.id ?? scratch.id;
    if (scratch.number >= maxNumber && sequenceOf(lastId) >= maxSequence) break;
  }
  for (const inc of incidents) model.incidents.set(inc.id, structuredClone(inc));
};

import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import type { PagerDutyState, SimulatorSeed } from './simulators/pagerduty/index.ts';
import type { SimIncident } from './simulators/pagerduty/model.ts';
import { exportStates, type Simulator } from './simulators/simulator.ts';
import type { FakeSlackState } from './simulators/slack/fakeSlack.ts';

/**
 * Keeps the sandbox's world across restarts: the event store is a SQLite file already, and this
 * saves what the simulators hold in memory (the Slack workspace, the incident-service account)
 * beside it, each simulator's exported state under its name, so a restarted sandbox shows the same
 * cards and the bot can still update them. The incident service's schedules come back with their
 * rotations where they were when the world was first made; `--reset` makes a new world. Each
 * person's sandbox phone number is saved too, so a world keeps the numbers its people verified,
 * and the sandbox clock's offset from real time, so a world moved to next week stays there.
 */

export type SavedWorld = Readonly<{
  version: 2;
  savedAt: string;
  /** `Simulator.exportState()` of each simulator, under its `name`. */
  simulators: Readonly<Record<string, unknown>>;
  /** Each person's phone number (E.164) by Slack user id; absent in worlds saved before phones. */
  phones?: Readonly<Record<string, string>>;
  /** How far ahead of real time the sandbox clock was (ms); absent in worlds saved before it moved. */
  clockOffsetMs?: number;
}>;

/**
 * What sandboxes before the simulator interface saved: the Slack workspace, and the incident
 * service's incidents only (its account came from the world's seed, anchored at `rotationStart`).
 */
type SavedWorldV1 = Readonly<{
  version: 1;
  savedAt: string;
  slack: FakeSlackState;
  pagerduty: Readonly<{ incidents: SimIncident[]; rotationStart?: string }>;
}>;

export type ReadWorldOptions = Readonly<{
  /** The incident-service account a version-1 world was seeded with, from its rotation start. */
  pagerDutySeed: (rotationStart: string) => SimulatorSeed;
  /** The rotation start for a version-1 world saved before it kept one. */
  rotationStart: string;
}>;

/** The saved world, upgraded to the current version; undefined when there is none (or it is unreadable). */
export const readWorld = (path: string, options: ReadWorldOptions): SavedWorld | undefined => {
  if (!existsSync(path)) return undefined;
  let parsed: SavedWorld | SavedWorldV1;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8')) as SavedWorld | SavedWorldV1;
  } catch {
    return undefined;
  }
  if (parsed.version === 2) return parsed;
  if (parsed.version === 1) return upgradeV1(parsed, options);
  return undefined;
};

/** Writes atomically (temp file, then rename), so a crash mid-write keeps the previous save. */
export const writeWorld = (
  path: string,
  simulators: readonly Simulator[],
  phones?: Readonly<Record<string, string>>,
  clockOffsetMs?: number,
): void => {
  const world: SavedWorld = {
    version: 2,
    savedAt: new Date().toISOString(),
    simulators: exportStates(simulators),
    ...(phones ? { phones } : {}),
    ...(clockOffsetMs !== undefined ? { clockOffsetMs } : {}),
  };
  writeFileSync(`${path}.tmp`, JSON.stringify(world));
  renameSync(`${path}.tmp`, path);
};

/** The sequence number inside a simulator id (`Q00000A` → 10); NaN for ids it did not make. */
const sequenceOf = (id: string): number => Number.parseInt(id.slice(1), 36);

const upgradeV1 = (world: SavedWorldV1, options: ReadWorldOptions): SavedWorld => {
  const { incidents } = world.pagerduty;
  const ids = incidents.flatMap((i) => [
    i.id,
    ...i.notes.map((n) => n.id),
    ...i.alerts.map((a) => a.id),
    ...i.logEntries.map((l) => l.id),
  ]);
  const pagerduty: PagerDutyState = {
    version: 1,
    account: options.pagerDutySeed(world.pagerduty.rotationStart ?? options.rotationStart),
    incidents,
    changeEvents: [],
    counters: {
      incident: Math.max(0, ...incidents.map((i) => i.number)),
      id: Math.max(0, ...ids.map(sequenceOf).filter(Number.isFinite)),
      override: 0,
    },
  };
  return { version: 2, savedAt: world.savedAt, simulators: { slack: world.slack, pagerduty } };
};

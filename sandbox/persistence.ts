import { chmodSync, existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
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
 *
 * The world's secrets (every vendor's credentials and webhook secrets, and the bot's data key ring)
 * are kept apart, in `sandbox-secrets.json` (mode 0600, `writeSecrets`), never in the world file:
 * a restarted sandbox signs and verifies with the same secrets and opens what it sealed (verified
 * phones keep being paged); `--reset` deletes them with the world and makes new ones.
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

/** Every secret a sandbox world runs on, kept across restarts (`sandbox-secrets.json`). */
export type SandboxSecrets = Readonly<{
  version: 1;
  slack: Readonly<{ botToken: string; signingSecret: string }>;
  pagerduty: Readonly<{ token: string; webhookSecret: string }>;
  vonage: Readonly<{
    apiKey: string;
    apiSecret: string;
    applicationId: string;
    signatureSecret: string;
    /** PEM (PKCS #8) of the application's RSA key. */
    privateKey: string;
  }>;
  hibob: Readonly<{ serviceUserId: string; serviceUserToken: string; webhookSecret: string }>;
  /** The bot's SWITCHBOARD_DATA_KEYS. */
  dataKeys: string;
}>;

const SECRET_FIELDS = {
  slack: ['botToken', 'signingSecret'],
  pagerduty: ['token', 'webhookSecret'],
  vonage: ['apiKey', 'apiSecret', 'applicationId', 'signatureSecret', 'privateKey'],
  hibob: ['serviceUserId', 'serviceUserToken', 'webhookSecret'],
} as const;

/** The kept secrets; undefined when there are none (or the file is unreadable or incomplete). */
export const readSecrets = (path: string): SandboxSecrets | undefined => {
  if (!existsSync(path)) return undefined;
  let parsed: Record<string, unknown>;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
  } catch {
    return undefined;
  }
  if (parsed['version'] !== 1 || typeof parsed['dataKeys'] !== 'string' || parsed['dataKeys'] === '')
    return undefined;
  for (const [group, fields] of Object.entries(SECRET_FIELDS)) {
    const values = parsed[group] as Record<string, unknown> | undefined;
    if (!values || fields.some((f) => typeof values[f] !== 'string' || values[f] === '')) return undefined;
  }
  return parsed as unknown as SandboxSecrets;
};

/** Writes the secrets readable by their owner only (0600), atomically (temp file, then rename). */
export const writeSecrets = (path: string, secrets: SandboxSecrets): void => {
  const tmp = `${path}.tmp`;
  rmSync(tmp, { force: true });
  writeFileSync(tmp, JSON.stringify(secrets, null, 2), { mode: 0o600 });
  chmodSync(tmp, 0o600); // whatever the umask
  renameSync(tmp, path);
};

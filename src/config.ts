import { hostname } from 'node:os';
import { z } from 'zod';
import { ChatOpsError } from './core/errors.ts';
import {
  DATA_KEYS_VARIABLE,
  keyRingSecrets,
  type LegacySecrets,
  parseKeyRing,
  type RingKey,
} from './core/keyRing.ts';
import { RESPONSE_URL_PURPOSE } from './core/sealed.ts';
import { isKurrentDbUrl, redactStoreUrl, storeUrlSecrets } from './eventStore/storeUrl.ts';
import {
  type ConfigVariableReader,
  type ConfigVariableSpec,
  type LifecycleDeclaration,
  nonEmptyVariable,
  prefixedVariable,
  urlVariable,
} from './lifecycles/config.ts';

/**
 * Configuration from the environment, validated with zod at start: the shared variables (port,
 * store, logging, Slack) here, and each lifecycle's slice as the lifecycle declares it
 * (`config` in its module, see src/lifecycles/config.ts). This is the only module that reads
 * `process.env` (through `processEnv()`): everything else gets its configuration passed in.
 *
 * A missing or malformed value names itself and says what it is for; secret values never appear
 * in a message. A lifecycle whose credentials are all absent is switched off (not an error); one
 * with only some of them set is a mistake and is reported.
 *
 * The lifecycles are passed in (the composition root's list, src/lifecycleList.ts): the kernel
 * names none of them.
 *
 * @example
 * const config = loadConfig(processEnv(), ALL_LIFECYCLES); // throws ConfigError listing every problem
 * if (!config.lifecycles.incidents) logger.info('incidents off: PAGERDUTY_TOKEN not set');
 * const pd = lifecycleConfig(config, incidents); // the incidents slice, typed, or undefined when off
 */

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export type Env = Readonly<Record<string, string | undefined>>;

/** The process environment: the one place Switchboard touches `process.env`. */
export const processEnv = (): Env => process.env;

export type ConfigProblem = Readonly<{ variable: string; problem: string; purpose: string }>;

/** One or more environment variables are missing or malformed. `problems` names each. */
export class ConfigError extends ChatOpsError {
  readonly problems: readonly ConfigProblem[];
  constructor(problems: readonly ConfigProblem[]) {
    super('SB_CONFIG', `configuration is incomplete or invalid:\n${formatConfigProblems(problems)}`, {
      details: { variables: problems.map((p) => p.variable) },
    });
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

export const formatConfigProblems = (problems: readonly ConfigProblem[]): string =>
  problems.map((p) => `  - ${p.variable} ${p.problem}\n      ${p.purpose}`).join('\n');

export type SlackConfig = Readonly<{
  botToken: string;
  /** Absent only in Socket Mode, where requests are not signed HTTP. */
  signingSecret: string | undefined;
  /**
   * Every signing secret a request may be signed with: SLACK_SIGNING_SECRET, then
   * SLACK_SIGNING_SECRET_PREVIOUS while a rotation is under way; empty in Socket Mode without one.
   */
  signingSecrets: readonly string[];
  appToken: string | undefined;
  socketMode: boolean;
  /** Web API base URL ending in `/`; Slack's own when unset. */
  apiUrl: string | undefined;
}>;

/** Which lifecycles are on, by name: every declared lifecycle, built or planned. */
export type LifecycleSwitches = Readonly<Record<string, boolean>>;

export type Config = Readonly<{
  port: number;
  eventStoreUrl: string;
  logLevel: LogLevel;
  slack: SlackConfig;
  lifecycles: LifecycleSwitches;
  /** Each switched-on lifecycle's parsed slice, by name; read it typed with `lifecycleConfig`. */
  slices: Readonly<Record<string, unknown>>;
  /** Every secret value configured, so the logger can scrub them wherever they turn up. */
  secrets: readonly string[];
  /** True under CI (`CI` set and not "false"): logs stay JSON even on a terminal. */
  ci: boolean;
  /** This process among several replicas on one store (see src/processors/claims.ts). */
  replica: ReplicaConfig;
  /** The data key ring and the secrets values were sealed under before it (src/core/keyRing.ts). */
  dataKeys: DataKeysConfig;
  /**
   * SWITCHBOARD_OPERATORS_CHANNEL: where every parked event is also posted for operators (issue
   * 18); undefined when unset (the log line and the gauge only).
   */
  operatorsChannel: string | undefined;
}>;

export type DataKeysConfig = Readonly<{
  /** SWITCHBOARD_DATA_KEYS, parsed: the first seals, every one opens. */
  ring: readonly RingKey[];
  /** Per purpose, the configured secrets that sealed `sealed:v1:` values before the ring. */
  legacy: LegacySecrets;
}>;

export type ReplicaConfig = Readonly<{
  /** Unique among running replicas, kept across restarts (default: the host name). */
  id: string;
  /** How long a replica's claims hold without renewal before another takes over (ms). */
  claimExpiryMs: number;
}>;

/** The part of the configuration the store CLI needs (no Slack credentials). */
export type StoreConfig = Readonly<{ eventStoreUrl: string; logLevel: LogLevel; ci: boolean }>;

/** What the keys CLI needs: the store, the ring and the legacy secrets (no Slack credentials). */
export type KeysConfig = StoreConfig & Readonly<{ dataKeys: DataKeysConfig; secrets: readonly string[] }>;

const DATA_KEYS_MISSING = 'is not set: make a key with `npm run keys -- generate` and keep it safe';

const VARS = {
  PORT: {
    purpose: 'HTTP port for Slack requests, webhooks and health checks; default 3000',
    schema: z
      .string()
      .regex(/^\d{1,5}$/, 'must be a port number 0-65535')
      .refine((v) => Number(v) <= 65535, {
        message: 'must be a port number 0-65535',
      }),
  },
  EVENT_STORE_URL: {
    purpose:
      'where events are stored: sqlite:<file>, sqlite::memory: or kurrentdb://[user:password@]host:2113[,host:2113…]?tls=…',
    schema: z
      .string()
      .refine((v) => /^sqlite:.+/.test(v) || isKurrentDbUrl(v), 'must start with sqlite: or kurrentdb://'),
    // Not a secret as a whole (it is worth seeing what was read), but its password is.
    secretsIn: storeUrlSecrets,
    shown: redactStoreUrl,
  },
  LOG_LEVEL: {
    purpose: `log verbosity: ${LOG_LEVELS.join(', ')}; default info`,
    schema: z.enum(LOG_LEVELS, { error: `must be one of ${LOG_LEVELS.join(', ')}` }),
  },
  SWITCHBOARD_REPLICA_ID: {
    purpose:
      "this replica's id among several on one store, unique and kept across restarts; default the host name (a pod's name)",
    schema: z
      .string()
      .regex(/^[A-Za-z0-9._-]{1,100}$/, 'must be 1-100 letters, digits, dots, dashes or underscores'),
  },
  SWITCHBOARD_CLAIM_EXPIRY_SECONDS: {
    purpose:
      "seconds a replica's processor claims hold without renewal before another replica takes over; default 15",
    schema: z
      .string()
      .regex(/^\d{1,4}$/, 'must be a whole number of seconds from 3 to 3600')
      .refine((v) => Number(v) >= 3 && Number(v) <= 3600, {
        message: 'must be a whole number of seconds from 3 to 3600',
      }),
  },
  SLACK_BOT_TOKEN: {
    purpose: "the Slack app's bot token (OAuth & Permissions page)",
    secret: true,
    schema: prefixedVariable('xoxb-', 'a bot token'),
  },
  SLACK_SIGNING_SECRET: {
    purpose: 'verifies that requests come from Slack (Basic Information page); not needed in Socket Mode',
    secret: true,
    schema: nonEmptyVariable,
  },
  SLACK_SIGNING_SECRET_PREVIOUS: {
    purpose:
      'the previous Slack signing secret, still accepted while a rotation is under way (Basic Information → Regenerate); unset once Slack signs with the new one',
    secret: true,
    schema: nonEmptyVariable,
  },
  SLACK_APP_TOKEN: {
    purpose: 'app-level token with connections:write; when set, Switchboard uses Socket Mode',
    secret: true,
    schema: prefixedVariable('xapp-', 'an app-level token'),
  },
  SLACK_API_URL: {
    purpose: 'Slack Web API base URL; tests and the sandbox point it at a fake',
    schema: urlVariable,
  },
  SWITCHBOARD_OPERATORS_CHANNEL: {
    purpose:
      'Slack channel id where every event a processor gave up on (parked) is posted for operators, with how to replay it; optional (the bot must be in it)',
    schema: z
      .string()
      .regex(/^[CG][A-Z0-9]{2,30}$/, 'must be a Slack channel id (C… or G…), not a name or a user'),
  },
  [DATA_KEYS_VARIABLE]: {
    purpose:
      'Switchboard\'s own data encryption keys, <id>:<base64 of 32 bytes>[,<id>:<base64>…]: the first seals, every one opens; back them up apart from the store (docs/operations.md, "The data key ring")',
    secret: true,
    secretsIn: keyRingSecrets,
    schema: z.string().superRefine((v, ctx) => {
      const parsed = parseKeyRing(v);
      if (!parsed.ok) ctx.addIssue({ code: 'custom', message: parsed.problem });
    }),
  },
} as const satisfies Record<string, ConfigVariableSpec>;

class Reader implements ConfigVariableReader {
  readonly problems: ConfigProblem[] = [];
  readonly secrets: string[] = [];
  readonly env: Env;
  readonly specs: Readonly<Record<string, ConfigVariableSpec>>;
  constructor(env: Env, specs: Readonly<Record<string, ConfigVariableSpec>>) {
    this.env = env;
    this.specs = specs;
  }

  private spec(name: string): ConfigVariableSpec {
    const spec = this.specs[name];
    if (!spec) throw new TypeError(`configuration variable ${name} is not declared`);
    return spec;
  }

  /** The trimmed value, or undefined when unset/empty. Malformed values are recorded as problems. */
  optional(name: string): string | undefined {
    const spec = this.spec(name);
    const raw = this.env[name]?.trim();
    if (raw === undefined || raw === '') return undefined;
    const value = spec.normalize ? spec.normalize(raw) : raw;
    if (spec.secret) this.secrets.push(value);
    if (spec.secretsIn) this.secrets.push(...spec.secretsIn(value));
    const parsed = spec.schema.safeParse(value);
    if (!parsed.success) {
      const message = parsed.error.issues[0]?.message ?? 'is malformed';
      // Echo non-secret values: it helps to see what was read. Secrets are never echoed.
      const echoed = spec.shown ? spec.shown(value) : value;
      const shown = spec.secret ? '' : ` (got ${JSON.stringify(echoed.slice(0, 80))})`;
      this.problems.push({ variable: name, problem: `${message}${shown}`, purpose: spec.purpose });
      return undefined;
    }
    return value;
  }

  required(name: string, why = 'is not set'): string {
    const value = this.optional(name);
    if (value === undefined && !this.problems.some((p) => p.variable === name)) {
      this.problems.push({ variable: name, problem: why, purpose: this.spec(name).purpose });
    }
    return value ?? '';
  }

  /** all-or-nothing group: false when none is set; records the missing ones when only some are. */
  group(names: readonly string[], what: string): boolean {
    const set = names.filter((n) => (this.env[n]?.trim() ?? '') !== '');
    if (set.length === 0) return false;
    if (set.length < names.length) {
      for (const n of names) {
        if (!set.includes(n)) {
          this.required(
            n,
            `is not set, but ${set.join(', ')} ${set.length === 1 ? 'is' : 'are'} (set all of the ${what} variables, or none to switch it off)`,
          );
        }
      }
    }
    return true;
  }
}

/** The host name (unique per pod or container), cleaned to the replica id's characters. */
const defaultReplicaId = (): string =>
  hostname()
    .replace(/[^A-Za-z0-9._-]/g, '-')
    .slice(0, 100) || 'replica';

const withSlash = (u: string): string => (u.endsWith('/') ? u : `${u}/`);

/** `PAGERDUTY_*`: the prefix its credentials share, for messages. */
const prefixOf = (names: readonly string[]): string => {
  const prefixes = [...new Set(names.map((n) => n.split('_')[0] ?? n))];
  return prefixes.map((p) => `${p}_*`).join(', ');
};

/** SWITCHBOARD_DATA_KEYS, parsed (empty when missing or malformed: the problem is recorded). */
const readRing = (r: Reader): readonly RingKey[] => {
  const text = r.required(DATA_KEYS_VARIABLE, DATA_KEYS_MISSING);
  const parsed = text === '' ? undefined : parseKeyRing(text);
  return parsed?.ok ? parsed.keys : [];
};

/** Merges legacy secrets per purpose (empty and repeated ones dropped). */
const mergeLegacy = (all: Record<string, string[]>, more: LegacySecrets | undefined): void => {
  for (const [purpose, secrets] of Object.entries(more ?? {})) {
    const list = all[purpose] ?? [];
    for (const s of secrets) if (s !== '' && !list.includes(s)) list.push(s);
    all[purpose] = list;
  }
};

const readStorePart = (r: Reader): StoreConfig => ({
  eventStoreUrl: r.optional('EVENT_STORE_URL') ?? 'sqlite:./data/switchboard.db',
  logLevel: (r.optional('LOG_LEVEL') as LogLevel | undefined) ?? 'info',
  ci: !['', 'false', '0'].includes(r.env['CI']?.trim() ?? ''),
});

/**
 * Parses the whole configuration: the shared variables, then every lifecycle's slice (`lifecycles`:
 * every lifecycle Switchboard declares, built or planned, from the composition root).
 * @throws ConfigError naming every missing or malformed variable (never a secret's value).
 */
export const loadConfig = (env: Env, lifecycles: readonly LifecycleDeclaration[]): Config => {
  const specs: Record<string, ConfigVariableSpec> = { ...VARS };
  for (const l of lifecycles) Object.assign(specs, l.config.variables);
  const r = new Reader(env, specs);
  const port = Number(r.optional('PORT') ?? '3000');
  const { eventStoreUrl, logLevel, ci } = readStorePart(r);

  const appToken = r.optional('SLACK_APP_TOKEN');
  // Set but malformed still means Socket Mode was meant: the token's problem is reported instead.
  const socketMode = (env['SLACK_APP_TOKEN']?.trim() ?? '') !== '';
  const botToken = r.required('SLACK_BOT_TOKEN');
  const signingSecret = socketMode ? r.optional('SLACK_SIGNING_SECRET') : r.required('SLACK_SIGNING_SECRET');
  const previousSigningSecret = r.optional('SLACK_SIGNING_SECRET_PREVIOUS');
  const apiUrl = r.optional('SLACK_API_URL');
  const replica: ReplicaConfig = {
    id: r.optional('SWITCHBOARD_REPLICA_ID') ?? defaultReplicaId(),
    claimExpiryMs: Number(r.optional('SWITCHBOARD_CLAIM_EXPIRY_SECONDS') ?? '15') * 1_000,
  };
  const ring = readRing(r);
  const operatorsChannel = r.optional('SWITCHBOARD_OPERATORS_CHANNEL');

  // All or none of each lifecycle's credentials; then the slices of those switched on; then the
  // other variables of those switched off (URLs), so a typo shows up before it matters.
  const switches: Record<string, boolean> = {};
  for (const l of lifecycles) {
    switches[l.name] = r.group(
      l.config.credentials,
      `${l.title.toLowerCase()} (${prefixOf(l.config.credentials)})`,
    );
  }
  const slices: Record<string, unknown> = {};
  for (const l of lifecycles) if (switches[l.name]) slices[l.name] = l.config.read(r);
  for (const l of lifecycles) {
    if (switches[l.name]) continue;
    for (const name of Object.keys(l.config.variables)) {
      if (!l.config.credentials.includes(name)) r.optional(name);
    }
  }

  if (r.problems.length > 0) throw new ConfigError(dedupe(r.problems));
  // Values sealed before the ring: response_urls under the Slack secret, and what each lifecycle says.
  const legacy: Record<string, string[]> = {};
  mergeLegacy(legacy, {
    [RESPONSE_URL_PURPOSE]: [signingSecret, previousSigningSecret, appToken, botToken].filter(
      (s): s is string => s !== undefined,
    ),
  });
  for (const l of lifecycles) {
    if (switches[l.name]) mergeLegacy(legacy, l.config.legacySealingSecrets?.(slices[l.name]));
  }
  return {
    port,
    eventStoreUrl,
    logLevel,
    slack: {
      botToken,
      signingSecret,
      signingSecrets: [
        ...new Set(
          [signingSecret, previousSigningSecret].filter((s): s is string => s !== undefined && s !== ''),
        ),
      ],
      appToken,
      socketMode,
      apiUrl: apiUrl === undefined ? undefined : withSlash(apiUrl),
    },
    lifecycles: switches,
    slices,
    secrets: [...new Set(r.secrets)],
    ci,
    replica,
    dataKeys: { ring, legacy },
    operatorsChannel,
  };
};

/** A switched-on lifecycle's configuration slice, typed; undefined when it is off. */
export const lifecycleConfig = <C>(
  config: Config,
  lifecycle: LifecycleDeclaration<string, C>,
): C | undefined => config.slices[lifecycle.name] as C | undefined;

/** Only what the store CLI needs: EVENT_STORE_URL and LOG_LEVEL. */
export const loadStoreConfig = (env: Env): StoreConfig => {
  const r = new Reader(env, VARS);
  const part = readStorePart(r);
  if (r.problems.length > 0) throw new ConfigError(dedupe(r.problems));
  return part;
};

/**
 * What `npm run keys` needs: the store, SWITCHBOARD_DATA_KEYS, and the legacy sealing secrets of
 * each lifecycle whose credentials are set (VONAGE_SIGNATURE_SECRET for person keys made before
 * the ring). No Slack credentials.
 * @throws ConfigError naming every missing or malformed variable it reads.
 */
export const loadKeysConfig = (env: Env, lifecycles: readonly LifecycleDeclaration[]): KeysConfig => {
  const specs: Record<string, ConfigVariableSpec> = { ...VARS };
  for (const l of lifecycles) Object.assign(specs, l.config.variables);
  const r = new Reader(env, specs);
  const part = readStorePart(r);
  const ring = readRing(r);
  const legacy: Record<string, string[]> = {};
  for (const l of lifecycles) {
    if (!l.config.legacySealingSecrets) continue;
    if (!r.group(l.config.credentials, `${l.title.toLowerCase()} (${prefixOf(l.config.credentials)})`))
      continue;
    mergeLegacy(legacy, l.config.legacySealingSecrets(l.config.read(r)));
  }
  if (r.problems.length > 0) throw new ConfigError(dedupe(r.problems));
  return { ...part, dataKeys: { ring, legacy }, secrets: [...new Set(r.secrets)] };
};

/** One line per switched-off lifecycle, saying which variables would switch it on. */
export const describeSwitchedOff = (config: Config, lifecycles: readonly LifecycleDeclaration[]): string[] =>
  lifecycles
    .filter((l) => !config.lifecycles[l.name])
    .map(
      (l) =>
        `${l.title.toLowerCase()} (${l.slashCommands.join(', ')}) is switched off: set ${l.config.credentials.join(', ')} to switch it on`,
    );

const dedupe = (problems: readonly ConfigProblem[]): ConfigProblem[] => {
  const byVariable = new Map<string, ConfigProblem>();
  for (const p of problems) if (!byVariable.has(p.variable)) byVariable.set(p.variable, p);
  return [...byVariable.values()];
};

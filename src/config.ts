import { z } from 'zod';
import { ChatOpsError } from './core/errors.ts';

/**
 * Configuration from the environment (design.md "Configuration"), validated with zod at start.
 * This is the only module that reads `process.env` (style.md rule 7): callers pass the env in.
 *
 * A missing or malformed value names itself and says what it is for; secret values never appear
 * in a message. A lifecycle whose upstream credentials are all absent is switched off (not an
 * error); one with only some of them set is a mistake and is reported.
 *
 * @example
 * const config = loadConfig(process.env); // throws ConfigError listing every problem
 * if (!config.lifecycles.incidents) logger.info('incidents off: PAGERDUTY_TOKEN not set');
 */

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export type Env = Readonly<Record<string, string | undefined>>;

/** The process environment: the one place Switchboard touches `process.env` (style.md rule 7). */
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
  appToken: string | undefined;
  socketMode: boolean;
  /** Web API base URL ending in `/`; Slack's own when unset. */
  apiUrl: string | undefined;
}>;

export type PagerDutyConfig = Readonly<{
  apiUrl: string;
  eventsUrl: string;
  token: string;
  webhookSecret: string;
}>;

export type VonageConfig = Readonly<{
  apiUrl: string;
  restUrl: string;
  apiKey: string;
  apiSecret: string;
  applicationId: string;
  privateKey: string;
  signatureSecret: string;
  fromNumber: string;
}>;

export type HibobConfig = Readonly<{
  apiUrl: string;
  serviceUserId: string;
  serviceUserToken: string;
  webhookSecret: string;
}>;

export type LifecycleSwitches = Readonly<{ incidents: boolean; verification: boolean; timeOff: boolean }>;

export type Config = Readonly<{
  port: number;
  eventStoreUrl: string;
  logLevel: LogLevel;
  slack: SlackConfig;
  pagerduty: PagerDutyConfig | undefined;
  vonage: VonageConfig | undefined;
  hibob: HibobConfig | undefined;
  lifecycles: LifecycleSwitches;
  /** Every secret value configured, so the logger can scrub them wherever they turn up. */
  secrets: readonly string[];
  /** True under CI (`CI` set and not "false"): logs stay JSON even on a terminal. */
  ci: boolean;
}>;

/** The part of the configuration the store CLI needs (no Slack credentials). */
export type StoreConfig = Readonly<{ eventStoreUrl: string; logLevel: LogLevel; ci: boolean }>;

type VarSpec = Readonly<{
  purpose: string;
  secret?: boolean;
  /** Validates a present, non-empty value; returns a problem text or undefined. */
  schema: z.ZodType<string>;
}>;

const url = z
  .string()
  .refine((v) => URL.canParse(v) && /^https?:$/.test(new URL(v).protocol), 'must be an http(s) URL');
const prefixed = (prefix: string, what: string) =>
  z.string().refine((v) => v.startsWith(prefix), `must be ${what} (starts with "${prefix}")`);
const nonEmpty = z.string().min(1);

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
    purpose: 'where events are stored: sqlite:<file>, sqlite::memory: or kurrentdb://host:2113?tls=false',
    schema: z
      .string()
      .refine(
        (v) => /^sqlite:.+/.test(v) || /^(kurrentdb|esdb|kdb)(\+discover)?:\/\/.+/.test(v),
        'must start with sqlite: or kurrentdb://',
      ),
  },
  LOG_LEVEL: {
    purpose: `log verbosity: ${LOG_LEVELS.join(', ')}; default info`,
    schema: z.enum(LOG_LEVELS, { error: `must be one of ${LOG_LEVELS.join(', ')}` }),
  },
  SLACK_BOT_TOKEN: {
    purpose: "the Slack app's bot token (OAuth & Permissions page)",
    secret: true,
    schema: prefixed('xoxb-', 'a bot token'),
  },
  SLACK_SIGNING_SECRET: {
    purpose: 'verifies that requests come from Slack (Basic Information page); not needed in Socket Mode',
    secret: true,
    schema: nonEmpty,
  },
  SLACK_APP_TOKEN: {
    purpose: 'app-level token with connections:write; when set, Switchboard uses Socket Mode',
    secret: true,
    schema: prefixed('xapp-', 'an app-level token'),
  },
  SLACK_API_URL: {
    purpose: 'Slack Web API base URL; tests and the sandbox point it at a fake',
    schema: url,
  },
  PAGERDUTY_API_URL: { purpose: 'incident service REST API; default https://api.pagerduty.com', schema: url },
  PAGERDUTY_EVENTS_URL: {
    purpose: 'incident service Events API; default https://events.pagerduty.com',
    schema: url,
  },
  PAGERDUTY_TOKEN: {
    purpose: 'incident service REST API token (incidents lifecycle)',
    secret: true,
    schema: nonEmpty,
  },
  PAGERDUTY_WEBHOOK_SECRET: {
    purpose: 'verifies X-PagerDuty-Signature on /webhooks/pagerduty (incidents lifecycle)',
    secret: true,
    schema: nonEmpty,
  },
  VONAGE_API_URL: {
    purpose: 'communications API (Verify, Messages, Voice); default https://api.nexmo.com',
    schema: url,
  },
  VONAGE_REST_URL: { purpose: 'communications legacy REST API; default https://rest.nexmo.com', schema: url },
  VONAGE_API_KEY: {
    purpose: 'communications API key (verification lifecycle)',
    secret: true,
    schema: nonEmpty,
  },
  VONAGE_API_SECRET: {
    purpose: 'communications API secret (verification lifecycle)',
    secret: true,
    schema: nonEmpty,
  },
  VONAGE_APPLICATION_ID: {
    purpose: 'communications application id, for JWTs (verification lifecycle)',
    schema: nonEmpty,
  },
  VONAGE_PRIVATE_KEY: {
    purpose: 'PEM private key of the communications application, signs JWTs (verification lifecycle)',
    secret: true,
    schema: z
      .string()
      .refine((v) => /-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(v), 'must be a PEM private key'),
  },
  VONAGE_SIGNATURE_SECRET: {
    purpose: 'verifies signed webhooks on /webhooks/vonage/* (verification lifecycle)',
    secret: true,
    schema: nonEmpty,
  },
  VONAGE_FROM_NUMBER: {
    purpose: 'sender number for SMS and voice pages, E.164 without + (verification lifecycle)',
    schema: z.string().regex(/^\+?[1-9]\d{5,14}$/, 'must be a phone number in E.164 form'),
  },
  HIBOB_API_URL: { purpose: 'HR API; default https://api.hibob.com/v1', schema: url },
  HIBOB_SERVICE_USER_ID: { purpose: 'HR service user id (time-off lifecycle)', schema: nonEmpty },
  HIBOB_SERVICE_USER_TOKEN: {
    purpose: 'HR service user token (time-off lifecycle)',
    secret: true,
    schema: nonEmpty,
  },
  HIBOB_WEBHOOK_SECRET: {
    purpose: 'verifies Bob-Signature on /webhooks/hibob (time-off lifecycle)',
    secret: true,
    schema: nonEmpty,
  },
} as const satisfies Record<string, VarSpec>;

export type ConfigVariable = keyof typeof VARS;

/** The credentials that switch a lifecycle on: all set → on; none set → off; some → a problem. */
export const LIFECYCLE_VARIABLES = {
  incidents: ['PAGERDUTY_TOKEN', 'PAGERDUTY_WEBHOOK_SECRET'],
  verification: [
    'VONAGE_API_KEY',
    'VONAGE_API_SECRET',
    'VONAGE_APPLICATION_ID',
    'VONAGE_PRIVATE_KEY',
    'VONAGE_SIGNATURE_SECRET',
    'VONAGE_FROM_NUMBER',
  ],
  timeOff: ['HIBOB_SERVICE_USER_ID', 'HIBOB_SERVICE_USER_TOKEN', 'HIBOB_WEBHOOK_SECRET'],
} as const satisfies Record<keyof LifecycleSwitches, readonly ConfigVariable[]>;

class Reader {
  readonly problems: ConfigProblem[] = [];
  readonly secrets: string[] = [];
  readonly env: Env;
  constructor(env: Env) {
    this.env = env;
  }

  /** The trimmed value, or undefined when unset/empty. Malformed values are recorded as problems. */
  optional(name: ConfigVariable): string | undefined {
    const spec: VarSpec = VARS[name];
    const raw = this.env[name]?.trim();
    if (raw === undefined || raw === '') return undefined;
    const value = name === 'VONAGE_PRIVATE_KEY' ? raw.replace(/\\n/g, '\n') : raw;
    if (spec.secret) this.secrets.push(value);
    const parsed = spec.schema.safeParse(value);
    if (!parsed.success) {
      const message = parsed.error.issues[0]?.message ?? 'is malformed';
      // Echo non-secret values: it helps to see what was read. Secrets are never echoed.
      const shown = spec.secret ? '' : ` (got ${JSON.stringify(value.slice(0, 80))})`;
      this.problems.push({ variable: name, problem: `${message}${shown}`, purpose: spec.purpose });
      return undefined;
    }
    return value;
  }

  required(name: ConfigVariable, why = 'is not set'): string {
    const value = this.optional(name);
    if (value === undefined && !this.problems.some((p) => p.variable === name)) {
      this.problems.push({ variable: name, problem: why, purpose: VARS[name].purpose });
    }
    return value ?? '';
  }

  /** all-or-nothing group: returns undefined when none is set; records the missing ones otherwise. */
  group(names: readonly ConfigVariable[], lifecycle: string): boolean {
    const set = names.filter((n) => (this.env[n]?.trim() ?? '') !== '');
    if (set.length === 0) return false;
    if (set.length < names.length) {
      for (const n of names) {
        if (!set.includes(n)) {
          this.required(
            n,
            `is not set, but ${set.join(', ')} ${set.length === 1 ? 'is' : 'are'} (set all of the ${lifecycle} variables, or none to switch it off)`,
          );
        }
      }
    }
    return true;
  }
}

const withSlash = (u: string): string => (u.endsWith('/') ? u : `${u}/`);
const withoutSlash = (u: string): string => u.replace(/\/+$/, '');

const readStorePart = (r: Reader): StoreConfig => ({
  eventStoreUrl: r.optional('EVENT_STORE_URL') ?? 'sqlite:./data/switchboard.db',
  logLevel: (r.optional('LOG_LEVEL') as LogLevel | undefined) ?? 'info',
  ci: !['', 'false', '0'].includes(r.env['CI']?.trim() ?? ''),
});

/**
 * Parses the whole configuration.
 * @throws ConfigError naming every missing or malformed variable (never a secret's value).
 */
export const loadConfig = (env: Env): Config => {
  const r = new Reader(env);
  const port = Number(r.optional('PORT') ?? '3000');
  const { eventStoreUrl, logLevel, ci } = readStorePart(r);

  const appToken = r.optional('SLACK_APP_TOKEN');
  // Set but malformed still means Socket Mode was meant: the token's problem is reported instead.
  const socketMode = (env['SLACK_APP_TOKEN']?.trim() ?? '') !== '';
  const botToken = r.required('SLACK_BOT_TOKEN');
  const signingSecret = socketMode ? r.optional('SLACK_SIGNING_SECRET') : r.required('SLACK_SIGNING_SECRET');
  const apiUrl = r.optional('SLACK_API_URL');

  const incidents = r.group(LIFECYCLE_VARIABLES.incidents, 'incidents (PAGERDUTY_*)');
  const verification = r.group(LIFECYCLE_VARIABLES.verification, 'verification (VONAGE_*)');
  const timeOff = r.group(LIFECYCLE_VARIABLES.timeOff, 'time-off (HIBOB_*)');

  const pagerduty: PagerDutyConfig | undefined = incidents
    ? {
        apiUrl: withoutSlash(r.optional('PAGERDUTY_API_URL') ?? 'https://api.pagerduty.com'),
        eventsUrl: withoutSlash(r.optional('PAGERDUTY_EVENTS_URL') ?? 'https://events.pagerduty.com'),
        token: r.required('PAGERDUTY_TOKEN'),
        webhookSecret: r.required('PAGERDUTY_WEBHOOK_SECRET'),
      }
    : undefined;
  const vonage: VonageConfig | undefined = verification
    ? {
        apiUrl: withoutSlash(r.optional('VONAGE_API_URL') ?? 'https://api.nexmo.com'),
        restUrl: withoutSlash(r.optional('VONAGE_REST_URL') ?? 'https://rest.nexmo.com'),
        apiKey: r.required('VONAGE_API_KEY'),
        apiSecret: r.required('VONAGE_API_SECRET'),
        applicationId: r.required('VONAGE_APPLICATION_ID'),
        privateKey: r.required('VONAGE_PRIVATE_KEY'),
        signatureSecret: r.required('VONAGE_SIGNATURE_SECRET'),
        fromNumber: r.required('VONAGE_FROM_NUMBER').replace(/^\+/, ''),
      }
    : undefined;
  const hibob: HibobConfig | undefined = timeOff
    ? {
        apiUrl: withoutSlash(r.optional('HIBOB_API_URL') ?? 'https://api.hibob.com/v1'),
        serviceUserId: r.required('HIBOB_SERVICE_USER_ID'),
        serviceUserToken: r.required('HIBOB_SERVICE_USER_TOKEN'),
        webhookSecret: r.required('HIBOB_WEBHOOK_SECRET'),
      }
    : undefined;
  // URLs of switched-off lifecycles are still checked, so a typo shows up before it matters.
  const offUrls: ConfigVariable[] = [
    ...(incidents ? [] : (['PAGERDUTY_API_URL', 'PAGERDUTY_EVENTS_URL'] as const)),
    ...(verification ? [] : (['VONAGE_API_URL', 'VONAGE_REST_URL'] as const)),
    ...(timeOff ? [] : (['HIBOB_API_URL'] as const)),
  ];
  for (const name of offUrls) r.optional(name);

  if (r.problems.length > 0) throw new ConfigError(dedupe(r.problems));
  return {
    port,
    eventStoreUrl,
    logLevel,
    slack: {
      botToken,
      signingSecret,
      appToken,
      socketMode,
      apiUrl: apiUrl === undefined ? undefined : withSlash(apiUrl),
    },
    pagerduty,
    vonage,
    hibob,
    lifecycles: { incidents, verification, timeOff },
    secrets: [...new Set(r.secrets)],
    ci,
  };
};

/** Only what the store CLI needs: EVENT_STORE_URL and LOG_LEVEL. */
export const loadStoreConfig = (env: Env): StoreConfig => {
  const r = new Reader(env);
  const part = readStorePart(r);
  if (r.problems.length > 0) throw new ConfigError(dedupe(r.problems));
  return part;
};

/** One line per switched-off lifecycle, saying which variables would switch it on. */
export const describeSwitchedOff = (config: Config): string[] => {
  const names: Record<keyof LifecycleSwitches, string> = {
    incidents: 'incidents (/incident, /oncall)',
    verification: 'phone verification (/verify)',
    timeOff: 'time off (/timeoff, /whosout)',
  };
  return (Object.keys(names) as (keyof LifecycleSwitches)[])
    .filter((k) => !config.lifecycles[k])
    .map((k) => `${names[k]} is switched off: set ${LIFECYCLE_VARIABLES[k].join(', ')} to switch it on`);
};

const dedupe = (problems: readonly ConfigProblem[]): ConfigProblem[] => {
  const byVariable = new Map<string, ConfigProblem>();
  for (const p of problems) if (!byVariable.has(p.variable)) byVariable.set(p.variable, p);
  return [...byVariable.values()];
};

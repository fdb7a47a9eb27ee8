import { z } from 'zod';

/**
 * The configuration slice a lifecycle declares: its environment variables and how to read them.
 * `src/config.ts` composes every lifecycle's slice with the shared variables and applies the same
 * rules to each:
 *
 * - all of its `credentials` set → the lifecycle is on and `read` builds its slice;
 * - none set → it is off (one log line says which variables would switch it on);
 * - some set → a start-up error naming the missing ones;
 * - its other variables (URLs and the like) are checked even when it is off, so a typo shows up
 *   before it matters.
 *
 * A malformed value names itself and what it is for; a secret's value is never echoed, and every
 * secret configured goes to the logger's scrubber.
 *
 * @example
 * export const incidentsConfig: LifecycleConfig<IncidentsConfig> = {
 *   variables: { PAGERDUTY_TOKEN: { purpose: '…', secret: true, schema: nonEmpty }, … },
 *   credentials: ['PAGERDUTY_TOKEN', 'PAGERDUTY_WEBHOOK_SECRET'],
 *   read: (v) => ({ token: v.required('PAGERDUTY_TOKEN'), apiUrl: v.optional('PAGERDUTY_API_URL') ?? '…' }),
 * };
 */

export type ConfigVariableSpec = Readonly<{
  /** What it is for, shown with any problem (and in the README's table). */
  purpose: string;
  /** Never echoed in a problem; scrubbed from logs. */
  secret?: boolean;
  /** Validates a present, non-empty value (after `normalize`). */
  schema: z.ZodType<string>;
  /** Applied to the trimmed raw value before validation (e.g. `\n` escapes in a one-line PEM key). */
  normalize?: (raw: string) => string;
  /**
   * For a value that is not secret but may hold one (a URL with credentials): the secret parts,
   * scrubbed from logs like secrets; `shown` is how a malformed value is echoed (default: as is).
   */
  secretsIn?: (value: string) => readonly string[];
  shown?: (value: string) => string;
}>;

/** Reads this slice's variables, validated against their specs; problems are collected, not thrown. */
export type ConfigVariableReader = Readonly<{
  /** The value, or undefined when unset or empty (a malformed value is recorded as a problem). */
  optional(name: string): string | undefined;
  /** The value; a missing one is recorded as a problem (and '' returned, never used). */
  required(name: string): string;
}>;

export type LifecycleConfig<C> = Readonly<{
  /** Every variable the lifecycle reads, credentials included. */
  variables: Readonly<Record<string, ConfigVariableSpec>>;
  /** The variables that switch it on: all set → on, none → off, some → a start-up error. */
  credentials: readonly string[];
  /** Builds the slice of a switched-on lifecycle. */
  read(vars: ConfigVariableReader): C;
  /**
   * The secrets (from its slice) that sealed values, by purpose, before the data key ring
   * (SWITCHBOARD_DATA_KEYS) existed: the ring opens those `sealed:v1:` values with them (its
   * legacy entries). Several per purpose during a rotation window (the current and the previous).
   */
  legacySealingSecrets?(slice: C): Readonly<Record<string, readonly string[]>>;
}>;

/**
 * What a lifecycle declares up front, known before anything is built (also when it is switched
 * off): the configuration reads it, and the root knows from it who owns each slash command.
 */
export type LifecycleDeclaration<Name extends string = string, C = unknown> = Readonly<{
  name: Name;
  /** What users read: 'Incidents', 'Phone verification', 'Time off'. */
  title: string;
  /** "Incidents are …" rather than "… is …". */
  titleIsPlural?: boolean;
  /** The slash commands it owns, help command first (`/incident`). */
  slashCommands: readonly string[];
  config: LifecycleConfig<C>;
}>;

export const urlVariable = z
  .string()
  .refine((v) => URL.canParse(v) && /^https?:$/.test(new URL(v).protocol), 'must be an http(s) URL');
export const prefixedVariable = (prefix: string, what: string): z.ZodType<string> =>
  z.string().refine((v) => v.startsWith(prefix), `must be ${what} (starts with "${prefix}")`);
export const nonEmptyVariable = z.string().min(1);

/** The variable that holds a secret's previous value during a rotation: `<NAME>_PREVIOUS`. */
export const previousVariable = (name: string): string => `${name}_PREVIOUS`;

/**
 * A webhook or signing secret and its `<NAME>_PREVIOUS` companion, so the secret rotates without
 * downtime: set the new value in `<NAME>` and the old one in `<NAME>_PREVIOUS`, restart, move the
 * sender (the vendor's dashboard) to the new value, then unset `<NAME>_PREVIOUS`. Both are accepted
 * in between. Read the pair with `rotatingSecret`.
 *
 * @example
 * variables: { ...rotatingSecretVariables('HIBOB_WEBHOOK_SECRET', 'verifies Bob-Signature on /webhooks/hibob') }
 */
export const rotatingSecretVariables = (
  name: string,
  purpose: string,
  schema: z.ZodType<string> = nonEmptyVariable,
): Readonly<Record<string, ConfigVariableSpec>> => ({
  [name]: { purpose, secret: true, schema },
  [previousVariable(name)]: {
    purpose: `the previous value of ${name}, still accepted while a rotation is under way; unset once the sender uses the new one`,
    secret: true,
    schema,
  },
});

/**
 * The values a rotating secret accepts, the current one first; the previous one only when set
 * (and different). A missing current value is recorded as a problem like any required variable.
 */
export const rotatingSecret = (v: ConfigVariableReader, name: string): readonly string[] => {
  const current = v.required(name);
  const previous = v.optional(previousVariable(name));
  return previous !== undefined && previous !== current ? [current, previous] : [current];
};

/** A base URL without trailing slashes, as the upstream clients join paths onto it. */
export const withoutSlash = (u: string): string => u.replace(/\/+$/, '');

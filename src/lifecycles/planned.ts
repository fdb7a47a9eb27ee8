import { z } from 'zod';
import { type LifecycleConfig, nonEmptyVariable, urlVariable, withoutSlash } from './config.ts';
import type { LifecycleDeclaration } from './lifecycle.ts';

/**
 * The lifecycles that are planned but not built yet, declared in this one place: their names,
 * titles, slash commands and configuration slices, and no `create`.
 *
 * Why declare them at all: manifest.yml already registers `/verify`, `/timeoff` and `/whosout`
 * with Slack, so Slack sends them; someone must own them, so that they answer "Phone verification
 * is switched off …" instead of "Switchboard doesn't know `/verify`", the manifest test can check
 * that every command has exactly one owner, and an admin who sets the VONAGE_* or HIBOB_*
 * variables gets them validated (all or none) today. Its switch follows its credentials like any
 * other lifecycle's, but with no `create` nothing is built: when its variables are set, its
 * commands are answered like commands nobody handles yet.
 *
 * Building one: move its declaration into `src/<lifecycle>/module.ts`, add `create`, list it in
 * `src/lifecycles/index.ts` and delete it here (docs/adding-a-lifecycle.md).
 */

export type VerificationConfig = Readonly<{
  apiUrl: string;
  restUrl: string;
  apiKey: string;
  apiSecret: string;
  applicationId: string;
  privateKey: string;
  signatureSecret: string;
  fromNumber: string;
}>;

const verificationConfig: LifecycleConfig<VerificationConfig> = {
  variables: {
    VONAGE_API_URL: {
      purpose: 'communications API (Verify, Messages, Voice); default https://api.nexmo.com',
      schema: urlVariable,
    },
    VONAGE_REST_URL: {
      purpose: 'communications legacy REST API; default https://rest.nexmo.com',
      schema: urlVariable,
    },
    VONAGE_API_KEY: {
      purpose: 'communications API key (verification lifecycle)',
      secret: true,
      schema: nonEmptyVariable,
    },
    VONAGE_API_SECRET: {
      purpose: 'communications API secret (verification lifecycle)',
      secret: true,
      schema: nonEmptyVariable,
    },
    VONAGE_APPLICATION_ID: {
      purpose: 'communications application id, for JWTs (verification lifecycle)',
      schema: nonEmptyVariable,
    },
    VONAGE_PRIVATE_KEY: {
      purpose: 'PEM private key of the communications application, signs JWTs (verification lifecycle)',
      secret: true,
      // One line with `\n` escapes works too (env files and CI secrets rarely keep newlines).
      normalize: (raw) => raw.replace(/\\n/g, '\n'),
      schema: z
        .string()
        .refine((v) => /-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(v), 'must be a PEM private key'),
    },
    VONAGE_SIGNATURE_SECRET: {
      purpose: 'verifies signed webhooks on /webhooks/vonage/* (verification lifecycle)',
      secret: true,
      schema: nonEmptyVariable,
    },
    VONAGE_FROM_NUMBER: {
      purpose: 'sender number for SMS and voice pages, E.164 without + (verification lifecycle)',
      schema: z.string().regex(/^\+?[1-9]\d{5,14}$/, 'must be a phone number in E.164 form'),
    },
  },
  credentials: [
    'VONAGE_API_KEY',
    'VONAGE_API_SECRET',
    'VONAGE_APPLICATION_ID',
    'VONAGE_PRIVATE_KEY',
    'VONAGE_SIGNATURE_SECRET',
    'VONAGE_FROM_NUMBER',
  ],
  read: (v) => ({
    apiUrl: withoutSlash(v.optional('VONAGE_API_URL') ?? 'https://api.nexmo.com'),
    restUrl: withoutSlash(v.optional('VONAGE_REST_URL') ?? 'https://rest.nexmo.com'),
    apiKey: v.required('VONAGE_API_KEY'),
    apiSecret: v.required('VONAGE_API_SECRET'),
    applicationId: v.required('VONAGE_APPLICATION_ID'),
    privateKey: v.required('VONAGE_PRIVATE_KEY'),
    signatureSecret: v.required('VONAGE_SIGNATURE_SECRET'),
    fromNumber: v.required('VONAGE_FROM_NUMBER').replace(/^\+/, ''),
  }),
};

export type TimeOffConfig = Readonly<{
  apiUrl: string;
  serviceUserId: string;
  serviceUserToken: string;
  webhookSecret: string;
}>;

const timeOffConfig: LifecycleConfig<TimeOffConfig> = {
  variables: {
    HIBOB_API_URL: { purpose: 'HR API; default https://api.hibob.com/v1', schema: urlVariable },
    HIBOB_SERVICE_USER_ID: { purpose: 'HR service user id (time-off lifecycle)', schema: nonEmptyVariable },
    HIBOB_SERVICE_USER_TOKEN: {
      purpose: 'HR service user token (time-off lifecycle)',
      secret: true,
      schema: nonEmptyVariable,
    },
    HIBOB_WEBHOOK_SECRET: {
      purpose: 'verifies Bob-Signature on /webhooks/hibob (time-off lifecycle)',
      secret: true,
      schema: nonEmptyVariable,
    },
  },
  credentials: ['HIBOB_SERVICE_USER_ID', 'HIBOB_SERVICE_USER_TOKEN', 'HIBOB_WEBHOOK_SECRET'],
  read: (v) => ({
    apiUrl: withoutSlash(v.optional('HIBOB_API_URL') ?? 'https://api.hibob.com/v1'),
    serviceUserId: v.required('HIBOB_SERVICE_USER_ID'),
    serviceUserToken: v.required('HIBOB_SERVICE_USER_TOKEN'),
    webhookSecret: v.required('HIBOB_WEBHOOK_SECRET'),
  }),
};

/** Phone verification (Vonage-shaped communications service): `/verify`. */
export const verification: LifecycleDeclaration<'verification', VerificationConfig> = {
  name: 'verification',
  title: 'Phone verification',
  slashCommands: ['/verify'],
  config: verificationConfig,
};

/** Time off (HiBob-shaped HR service): `/timeoff`, `/whosout`. */
export const timeOff: LifecycleDeclaration<'timeOff', TimeOffConfig> = {
  name: 'timeOff',
  title: 'Time off',
  slashCommands: ['/timeoff', '/whosout'],
  config: timeOffConfig,
};

export const PLANNED_LIFECYCLES = [verification, timeOff] as const;

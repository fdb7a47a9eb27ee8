import { z } from 'zod';
import {
  type LifecycleConfig,
  type LifecycleDeclaration,
  nonEmptyVariable,
  rotatingSecret,
  rotatingSecretVariables,
  urlVariable,
  withoutSlash,
} from '../lifecycles/config.ts';
import { PERSON_KEY_PURPOSE } from '../people/personKeys.ts';

/** The verification lifecycle's configuration: the communications service (Vonage-shaped). */
/** The ring purpose numbers of nobody known are sealed under (its legacy entries: VONAGE_SIGNATURE_SECRET). */
export const PHONE_NUMBER_PURPOSE = 'phone-number';

export type VerificationConfig = Readonly<{
  apiUrl: string;
  restUrl: string;
  apiKey: string;
  apiSecret: string;
  applicationId: string;
  privateKey: string;
  /** The current webhook signature secret. */
  signatureSecret: string;
  /** Every signature secret accepted: the current one, then VONAGE_SIGNATURE_SECRET_PREVIOUS while rotating. */
  signatureSecrets: readonly string[];
  fromNumber: string;
  /** Starts and resends across the organisation per 10 minutes (default 50). */
  orgLimit: number;
  /**
   * Our `/webhooks/vonage/voice` as the vendor reaches it, given to every page call for its events
   * and the keys pressed; unset, the vendor uses the application's event URL from its dashboard.
   */
  voiceEventUrl: string | undefined;
}>;

export const verificationConfig: LifecycleConfig<VerificationConfig> = {
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
    ...rotatingSecretVariables(
      'VONAGE_SIGNATURE_SECRET',
      'verifies signed webhooks on /webhooks/vonage/* (verification lifecycle)',
    ),
    VONAGE_FROM_NUMBER: {
      purpose: 'sender number for SMS and voice pages, E.164 without + (verification lifecycle)',
      schema: z.string().regex(/^\+?[1-9]\d{5,14}$/, 'must be a phone number in E.164 form'),
    },
    VONAGE_VOICE_EVENT_URL: {
      purpose:
        "public URL of Switchboard's /webhooks/vonage/voice, given to page calls so a key pressed (4 to acknowledge) reaches it; unset, the application's event URL in the vendor's dashboard must point there",
      schema: urlVariable,
    },
    VERIFY_ORG_LIMIT: {
      purpose: 'verification codes Switchboard sends across the organisation per 10 minutes; default 50',
      schema: z.string().regex(/^[1-9][0-9]{0,5}$/, 'a whole number of codes, 1 or more'),
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
  read: (v) => {
    const signatureSecrets = rotatingSecret(v, 'VONAGE_SIGNATURE_SECRET');
    return {
      apiUrl: withoutSlash(v.optional('VONAGE_API_URL') ?? 'https://api.nexmo.com'),
      restUrl: withoutSlash(v.optional('VONAGE_REST_URL') ?? 'https://rest.nexmo.com'),
      apiKey: v.required('VONAGE_API_KEY'),
      apiSecret: v.required('VONAGE_API_SECRET'),
      applicationId: v.required('VONAGE_APPLICATION_ID'),
      privateKey: v.required('VONAGE_PRIVATE_KEY'),
      signatureSecret: signatureSecrets[0] ?? '',
      signatureSecrets,
      fromNumber: v.required('VONAGE_FROM_NUMBER').replace(/^\+/, ''),
      orgLimit: Number(v.optional('VERIFY_ORG_LIMIT') ?? 50),
      voiceEventUrl: v.optional('VONAGE_VOICE_EVENT_URL'),
    };
  },
  // Before SWITCHBOARD_DATA_KEYS, person keys and numbers of nobody known were sealed under a key
  // derived from the webhook signature secret: the ring opens them with it, the previous one
  // included during a rotation (and re-wraps person keys).
  legacySealingSecrets: (c) => ({
    [PERSON_KEY_PURPOSE]: c.signatureSecrets,
    [PHONE_NUMBER_PURPOSE]: c.signatureSecrets,
  }),
};

/**
 * The phone verification lifecycle as declared up front: what the configuration and the slash-command
 * owners need, also when it is off. Its module (handlers/verification/module.ts) adds what it builds.
 */
export const verificationDeclaration: LifecycleDeclaration<'verification', VerificationConfig> = {
  name: 'verification',
  title: 'Phone verification',
  slashCommands: ['/verify'],
  config: verificationConfig,
};

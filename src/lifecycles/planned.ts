import { type LifecycleConfig, nonEmptyVariable, urlVariable, withoutSlash } from './config.ts';
import type { LifecycleDeclaration } from './lifecycle.ts';

/**
 * The lifecycles that are planned but not built yet, declared in this one place: their names,
 * titles, slash commands and configuration slices, and no `create`.
 *
 * Why declare them at all: manifest.yml already registers `/timeoff` and `/whosout`
 * with Slack, so Slack sends them; someone must own them, so that they answer "Time off is
 * switched off …" instead of "Switchboard doesn't know `/timeoff`", the manifest test can check
 * that every command has exactly one owner, and an admin who sets the VONAGE_* or HIBOB_*
 * variables gets them validated (all or none) today. Its switch follows its credentials like any
 * other lifecycle's, but with no `create` nothing is built: when its variables are set, its
 * commands are answered like commands nobody handles yet.
 *
 * Building one: move its declaration into `src/<lifecycle>/module.ts`, add `create`, list it in
 * `src/lifecycles/index.ts` and delete it here (docs/adding-a-lifecycle.md).
 */

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

/** Time off (HiBob-shaped HR service): `/timeoff`, `/whosout`. */
export const timeOff: LifecycleDeclaration<'timeOff', TimeOffConfig> = {
  name: 'timeOff',
  title: 'Time off',
  slashCommands: ['/timeoff', '/whosout'],
  config: timeOffConfig,
};

export const PLANNED_LIFECYCLES = [timeOff] as const;

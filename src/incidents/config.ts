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
import { PAGING_VARIABLES, type PagingSettings, readPagingSettings } from './pagingConfig.ts';
import { readWorkingSettings, WORKING_VARIABLES, type WorkingSettings } from './workingConfig.ts';

/** The incident lifecycle's configuration: the incident service (PagerDuty-shaped). */
export type IncidentsConfig = Readonly<{
  apiUrl: string;
  eventsUrl: string;
  token: string;
  /** PAGERDUTY_WEBHOOK_SECRET as set: one secret, or several separated by commas while rotating. */
  webhookSecret: string;
  /**
   * Every webhook secret accepted: PAGERDUTY_WEBHOOK_SECRET's (split at commas), then
   * PAGERDUTY_WEBHOOK_SECRET_PREVIOUS's while rotating.
   */
  webhookSecrets: readonly string[];
  /** REST requests a minute all callers share (the service's limit per key; default 960). */
  requestsPerMinute: number;
  /**
   * Paging the on-call by phone when an incident stays triggered (src/incidents/pagingConfig.ts);
   * undefined when no PAGING_* variable is set: DEFAULT_PAGING.
   */
  paging?: PagingSettings | undefined;
  /**
   * Acknowledge reminders and incident channels (src/incidents/workingConfig.ts); undefined when
   * none of their variables is set: DEFAULT_WORKING.
   */
  working?: WorkingSettings | undefined;
  /**
   * Issue 22 item 3: minutes an open incident may go without a status update before its assignee
   * is reminded by DM (INCIDENT_UPDATE_REMINDER_MINUTES); undefined (unset) or 0: no reminders.
   */
  updateReminderMinutes?: number | undefined;
  /**
   * Issue 20 item 4: how many hours before an on-call shift starts its person is told by DM
   * (SHIFT_NOTICE_HOURS, default 12).
   */
  shiftNoticeHours: number;
}>;

export const DEFAULT_SHIFT_NOTICE_HOURS = 12;

export const incidentsConfig: LifecycleConfig<IncidentsConfig> = {
  variables: {
    PAGERDUTY_API_URL: {
      purpose: 'incident service REST API; default https://api.pagerduty.com',
      schema: urlVariable,
    },
    PAGERDUTY_EVENTS_URL: {
      purpose: 'incident service Events API; default https://events.pagerduty.com',
      schema: urlVariable,
    },
    PAGERDUTY_TOKEN: {
      purpose: 'incident service REST API token (incidents lifecycle)',
      secret: true,
      schema: nonEmptyVariable,
    },
    ...rotatingSecretVariables(
      'PAGERDUTY_WEBHOOK_SECRET',
      'verifies X-PagerDuty-Signature on /webhooks/pagerduty (incidents lifecycle); several separated by commas are accepted too',
    ),
    PAGERDUTY_REQUESTS_PER_MINUTE: {
      purpose:
        'incident service REST requests a minute Switchboard may send; default 960 (its limit per key)',
      schema: z.string().regex(/^[1-9][0-9]{0,6}$/, 'a whole number of requests, 1 or more'),
    },
    ...PAGING_VARIABLES,
    ...WORKING_VARIABLES,
    INCIDENT_UPDATE_REMINDER_MINUTES: {
      purpose:
        'minutes an open incident may go without a status update (`/incident update`) before its assignee is reminded by DM, and again after each reminder; unset or 0: no reminders',
      schema: z.string().regex(/^[0-9]{1,5}$/, 'a whole number of minutes, 0 to switch reminders off'),
    },
    SHIFT_NOTICE_HOURS: {
      purpose:
        'hours before an on-call shift starts that its person is told by DM (schedule, hours, open incidents, whether their phone can be paged); default 12',
      schema: z
        .string()
        .regex(/^\d{1,3}$/, 'a whole number of hours')
        .refine((v) => Number(v) >= 1 && Number(v) <= 168, 'between 1 and 168 hours'),
    },
  },
  credentials: ['PAGERDUTY_TOKEN', 'PAGERDUTY_WEBHOOK_SECRET'],
  read: (v) => {
    const webhookSecrets = rotatingSecret(v, 'PAGERDUTY_WEBHOOK_SECRET');
    return {
      apiUrl: withoutSlash(v.optional('PAGERDUTY_API_URL') ?? 'https://api.pagerduty.com'),
      eventsUrl: withoutSlash(v.optional('PAGERDUTY_EVENTS_URL') ?? 'https://events.pagerduty.com'),
      token: v.required('PAGERDUTY_TOKEN'),
      webhookSecret: webhookSecrets[0] ?? '',
      webhookSecrets: [
        ...new Set(
          webhookSecrets.flatMap((s) =>
            s
              .split(',')
              .map((part) => part.trim())
              .filter((part) => part.length > 0),
          ),
        ),
      ],
      requestsPerMinute: Number(v.optional('PAGERDUTY_REQUESTS_PER_MINUTE') ?? 960),
      paging: readPagingSettings(v),
      working: readWorkingSettings(v),
      updateReminderMinutes:
        v.optional('INCIDENT_UPDATE_REMINDER_MINUTES') === undefined
          ? undefined
          : Number(v.optional('INCIDENT_UPDATE_REMINDER_MINUTES')),
      shiftNoticeHours: Number(v.optional('SHIFT_NOTICE_HOURS') ?? DEFAULT_SHIFT_NOTICE_HOURS),
    };
  },
};

/**
 * The incidents lifecycle as declared up front: what the configuration and the slash-command
 * owners need, also when it is off. Its module (handlers/incident/module.ts) adds what it builds.
 */
export const incidentsDeclaration: LifecycleDeclaration<'incidents', IncidentsConfig> = {
  name: 'incidents',
  title: 'Incidents',
  titleIsPlural: true,
  slashCommands: ['/incident', '/oncall'],
  config: incidentsConfig,
};

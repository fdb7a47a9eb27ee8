import { z } from 'zod';
import { type ApprovalRules, DEFAULT_APPROVAL_RULES } from '../../machines/timeOff/commands.ts';
import { isIsoDate } from '../../machines/timeOff/workingDays.ts';
import {
  type LifecycleConfig,
  type LifecycleDeclaration,
  nonEmptyVariable,
  rotatingSecret,
  rotatingSecretVariables,
  urlVariable,
  withoutSlash,
} from '../lifecycles/config.ts';

/** The time-off lifecycle's configuration: the HR people service (HiBob-shaped). */
export type TimeOffConfig = Readonly<{
  apiUrl: string;
  serviceUserId: string;
  serviceUserToken: string;
  /** The current webhook secret. */
  webhookSecret: string;
  /** Every webhook secret accepted: the current one, then HIBOB_WEBHOOK_SECRET_PREVIOUS while rotating. */
  webhookSecrets: readonly string[];
  /**
   * Public holidays (YYYY-MM-DD), not counted as working days in requests, reminders and expiry.
   * HR's public API has no holiday calendar an integration can read, so they are configured here.
   */
  holidays: readonly string[];
  /** Reminders to the approver and expiry, in working days (default 1 and 3, expiry 7). */
  approvalRules: ApprovalRules;
  /** How often the whole directory is read again with one people search (default 60 minutes). */
  directoryRefreshMinutes: number;
  /** How often HR's time-off changes are polled, besides its webhooks (default 5 minutes). */
  changesPollMinutes: number;
  /**
   * Issue 12: the Slack channel (id) a request goes to when nobody in the requester's reporting
   * line can approve it (away, left, or at the top). Any member of the channel but the requester
   * may approve or deny it there (checked with `conversations.members` on every click; a
   * non-member's click is refused and recorded). Absent: such a request waits for the nearest
   * manager who is only away, and the requester and the logs are told.
   */
  hrChannel?: string;
  /**
   * Issue 20 item 7: the daily "who's out" post (WHOS_OUT_CHANNELS, WHOS_OUT_TIME,
   * WHOS_OUT_TIME_ZONE, WHOS_OUT_SHOWN_KINDS). Absent: no channel is configured, nothing is posted.
   */
  whosOutDaily?: WhosOutDailyConfig;
  /**
   * Issue 20: the policy types that may be recorded after the fact, for days already past (names
   * as HR has them, compared without case; default `Sick`). Any other policy's past days are
   * refused; the approver's card of such a request says "recorded after the fact".
   */
  pastPolicies: readonly string[];
}>;

export type WhosOutDailyConfig = Readonly<{
  /** Channel ids, each posted to once a day. */
  channels: readonly string[];
  /** Local time of day, in minutes after midnight (default 09:00). */
  minuteOfDay: number;
  /** The zone that time and "today" are in (default UTC). */
  timeZone: string;
  /**
   * The kinds of leave (HR policy types, compared without case) whose name may be shown in the
   * channel; any other reads "out". Default none: what kind of leave someone takes is theirs and
   * their managers' business (as `/whosout` shows it).
   */
  shownKinds: readonly string[];
}>;

/** The policy types recorded after the fact unless TIME_OFF_PAST_POLICIES says otherwise. */
export const DEFAULT_PAST_POLICIES: readonly string[] = ['Sick'];

const datesOf = (raw: string): string[] =>
  raw
    .split(/[\s,]+/)
    .map((d) => d.trim())
    .filter((d) => d !== '');

const DATE_LIST = z
  .string()
  .refine((raw) => datesOf(raw).every(isIsoDate), 'must be dates (YYYY-MM-DD) separated by commas')
  .refine((raw) => datesOf(raw).length <= 400, 'at most 400 dates');

const DAY_LIST = z
  .string()
  .regex(/^\s*\d{1,2}(\s*,\s*\d{1,2}){0,9}\s*$/, 'must be working days separated by commas, e.g. 1,3');

/** A public or private channel id (`C…`, `G…`): a DM or a user id is refused. */
const CHANNEL_ID = z
  .string()
  .regex(/^[CG][A-Z0-9]{2,30}$/, 'must be a Slack channel id (C… or G…), not a name or a user');

const CHANNEL_LIST = z.string().refine((raw) => {
  const ids = raw
    .split(',')
    .map((c) => c.trim())
    .filter((c) => c !== '');
  return ids.length > 0 && ids.length <= 20 && ids.every((c) => /^[CG][A-Z0-9]{2,30}$/.test(c));
}, 'must be 1 to 20 Slack channel ids (C… or G…) separated by commas');

const TIME_OF_DAY = z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$/, 'a time of day, HH:MM (24-hour)');

const TIME_ZONE = z.string().refine((tz) => {
  try {
    new Intl.DateTimeFormat('en-GB', { timeZone: tz.trim() });
    return tz.trim() !== '';
  } catch {
    return false;
  }
}, 'an IANA time zone, e.g. Europe/London');

const wholeNumber = (min: number, max: number, what: string) =>
  z
    .string()
    .regex(/^\d{1,5}$/, `a whole number of ${what}`)
    .refine((v) => Number(v) >= min && Number(v) <= max, `between ${min} and ${max} ${what}`);

export const timeOffConfig: LifecycleConfig<TimeOffConfig> = {
  variables: {
    HIBOB_API_URL: { purpose: 'HR API; default https://api.hibob.com/v1', schema: urlVariable },
    HIBOB_SERVICE_USER_ID: { purpose: 'HR service user id (time-off lifecycle)', schema: nonEmptyVariable },
    HIBOB_SERVICE_USER_TOKEN: {
      purpose: 'HR service user token (time-off lifecycle)',
      secret: true,
      schema: nonEmptyVariable,
    },
    ...rotatingSecretVariables(
      'HIBOB_WEBHOOK_SECRET',
      'verifies Bob-Signature on /webhooks/hibob (time-off lifecycle)',
    ),
    TIME_OFF_HOLIDAYS: {
      purpose:
        'public holidays not counted as working days, YYYY-MM-DD separated by commas (time-off lifecycle)',
      schema: DATE_LIST,
    },
    TIME_OFF_REMINDER_DAYS: {
      purpose: 'working days after a request when its approver is reminded; default 1,3',
      schema: DAY_LIST,
    },
    TIME_OFF_EXPIRY_DAYS: {
      purpose: 'working days after which an undecided request expires; default 7',
      schema: wholeNumber(1, 60, 'working days'),
    },
    HIBOB_DIRECTORY_REFRESH_MINUTES: {
      purpose: 'minutes between full reads of the HR directory (one people search each); default 60',
      schema: wholeNumber(5, 1440, 'minutes'),
    },
    HIBOB_CHANGES_POLL_MINUTES: {
      purpose: "minutes between polls of HR's time-off changes, besides webhooks; default 5",
      schema: wholeNumber(1, 1440, 'minutes'),
    },
    WHOS_OUT_CHANNELS: {
      purpose:
        'Slack channel ids (the bot in each) that get who is out today, once a day at WHOS_OUT_TIME; unset: no daily post',
      schema: CHANNEL_LIST,
    },
    WHOS_OUT_TIME: {
      purpose: "local time of the daily who's-out post, HH:MM in WHOS_OUT_TIME_ZONE; default 09:00",
      schema: TIME_OF_DAY,
    },
    WHOS_OUT_TIME_ZONE: {
      purpose: "IANA time zone of WHOS_OUT_TIME and of the day the who's-out post is about; default UTC",
      schema: TIME_ZONE,
    },
    WHOS_OUT_SHOWN_KINDS: {
      purpose:
        "kinds of leave (HR policy types, separated by commas) named in the who's-out post; any other kind reads 'out'; default none",
      schema: z.string().max(2000),
    },
    TIME_OFF_PAST_POLICIES: {
      purpose:
        'time-off policy types that may be asked for past days (recorded after the fact), names as in HR separated by commas; default Sick',
      schema: z
        .string()
        .refine(
          (raw) => raw.split(',').every((n) => n.trim().length <= 100),
          'names of at most 100 characters',
        )
        .refine((raw) => raw.split(',').length <= 50, 'at most 50 names'),
    },
    TIME_OFF_HR_CHANNEL: {
      purpose:
        "Slack channel id where time off goes when nobody in the requester's reporting line can approve it; any member but the requester decides (optional)",
      schema: CHANNEL_ID,
    },
  },
  credentials: ['HIBOB_SERVICE_USER_ID', 'HIBOB_SERVICE_USER_TOKEN', 'HIBOB_WEBHOOK_SECRET'],
  read: (v) => {
    const holidays = v.optional('TIME_OFF_HOLIDAYS');
    const reminders = v.optional('TIME_OFF_REMINDER_DAYS');
    const expiry = v.optional('TIME_OFF_EXPIRY_DAYS');
    const hrChannel = v.optional('TIME_OFF_HR_CHANNEL');
    const past = v.optional('TIME_OFF_PAST_POLICIES');
    const webhookSecrets = rotatingSecret(v, 'HIBOB_WEBHOOK_SECRET');
    const whosOutChannels = v.optional('WHOS_OUT_CHANNELS');
    // Each is read (so checked) whether or not a channel is set: a typo shows before it matters.
    const [hh, mm] = (v.optional('WHOS_OUT_TIME') ?? '09:00').split(':').map(Number);
    const whosOutZone = v.optional('WHOS_OUT_TIME_ZONE')?.trim() || 'UTC';
    const whosOutKinds = v.optional('WHOS_OUT_SHOWN_KINDS') ?? '';
    return {
      apiUrl: withoutSlash(v.optional('HIBOB_API_URL') ?? 'https://api.hibob.com/v1'),
      serviceUserId: v.required('HIBOB_SERVICE_USER_ID'),
      serviceUserToken: v.required('HIBOB_SERVICE_USER_TOKEN'),
      webhookSecret: webhookSecrets[0] ?? '',
      webhookSecrets,
      holidays: holidays ? [...new Set(datesOf(holidays).filter(isIsoDate))].sort() : [],
      approvalRules: {
        reminderWorkingDays: reminders
          ? reminders.split(',').map((d) => Number(d.trim()))
          : DEFAULT_APPROVAL_RULES.reminderWorkingDays,
        expiryWorkingDays: expiry ? Number(expiry) : DEFAULT_APPROVAL_RULES.expiryWorkingDays,
      },
      directoryRefreshMinutes: Number(v.optional('HIBOB_DIRECTORY_REFRESH_MINUTES') ?? 60),
      changesPollMinutes: Number(v.optional('HIBOB_CHANGES_POLL_MINUTES') ?? 5),
      ...(hrChannel ? { hrChannel: hrChannel.trim() } : {}),
      ...(whosOutChannels
        ? {
            whosOutDaily: {
              channels: [
                ...new Set(
                  whosOutChannels
                    .split(',')
                    .map((c) => c.trim())
                    .filter((c) => c !== ''),
                ),
              ],
              minuteOfDay: (hh ?? 9) * 60 + (mm ?? 0),
              timeZone: whosOutZone,
              shownKinds: whosOutKinds
                .split(',')
                .map((k) => k.trim())
                .filter((k) => k !== ''),
            },
          }
        : {}),
      pastPolicies: past
        ? past
            .split(',')
            .map((n) => n.trim())
            .filter((n) => n !== '')
        : [...DEFAULT_PAST_POLICIES],
    };
  },
};

/**
 * The time off lifecycle as declared up front: what the configuration and the slash-command
 * owners need, also when it is off. Its module (handlers/timeOff/module.ts) adds what it builds.
 */
export const timeOffDeclaration: LifecycleDeclaration<'timeOff', TimeOffConfig> = {
  name: 'timeOff',
  title: 'Time off',
  slashCommands: ['/timeoff', '/whosout'],
  config: timeOffConfig,
};

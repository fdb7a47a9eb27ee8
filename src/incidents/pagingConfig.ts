import { z } from 'zod';
import type { ConfigVariableReader, ConfigVariableSpec } from '../lifecycles/config.ts';

/**
 * When the incident lifecycle pages the on-call by phone (through the verification lifecycle's
 * pager), read with the rest of its configuration slice:
 *
 * | variable | default | what |
 * |---|---|---|
 * | `PAGING_DELAY_MINUTES` | 5 | an incident still triggered this long after it was triggered pages its level's on-call |
 * | `PAGING_DELAY_BY_SERVICE` | — | per-service overrides, `PSVC001=2,PSVC002=10` (service id = minutes) |
 * | `PAGING_CALL_AFTER_MINUTES` | 3 | the SMS is followed by a call this long after, unless acknowledged |
 * | `PAGING_MAX_PER_HOUR` | 10 | pages per person in any hour; more are held back (the timeline says so) |
 */
export type PagingSettings = Readonly<{
  delayMs: number;
  delayMsByService: Readonly<Record<string, number>>;
  callAfterMs: number;
  maxPerHour: number;
}>;

const MINUTE_MS = 60_000;
const minutes = z.string().regex(/^(0|[1-9][0-9]{0,3})$/, 'a whole number of minutes, 0-9999');
const serviceMap = z
  .string()
  .regex(
    /^\s*[A-Za-z0-9]{1,40}\s*=\s*(0|[1-9][0-9]{0,3})\s*(,\s*[A-Za-z0-9]{1,40}\s*=\s*(0|[1-9][0-9]{0,3})\s*)*$/,
    'service id = minutes pairs separated by commas, e.g. PSVC001=2,PSVC002=10',
  );

export const PAGING_VARIABLES: Readonly<Record<string, ConfigVariableSpec>> = {
  PAGING_DELAY_MINUTES: {
    purpose: 'minutes an incident stays triggered before its on-call are paged by phone; default 5',
    schema: minutes,
  },
  PAGING_DELAY_BY_SERVICE: {
    purpose: 'per-service paging delays, e.g. PSVC001=2,PSVC002=10 (service id = minutes)',
    schema: serviceMap,
  },
  PAGING_CALL_AFTER_MINUTES: {
    purpose: 'minutes after the SMS page before a voice call, unless acknowledged; default 3',
    schema: minutes,
  },
  PAGING_MAX_PER_HOUR: {
    purpose: 'most pages per person in any hour (more are held back); default 10',
    schema: z.string().regex(/^[1-9][0-9]{0,3}$/, 'a whole number, 1 or more'),
  },
};

export const parseServiceDelays = (raw: string | undefined): Record<string, number> =>
  Object.fromEntries(
    (raw ?? '')
      .split(',')
      .map((pair) => pair.split('=').map((x) => x.trim()))
      .filter((pair): pair is [string, string] => pair.length === 2 && pair[0] !== '' && pair[1] !== '')
      .map(([id, m]) => [id, Number(m) * MINUTE_MS]),
  );

export const DEFAULT_PAGING: PagingSettings = {
  delayMs: 5 * MINUTE_MS,
  delayMsByService: {},
  callAfterMs: 3 * MINUTE_MS,
  maxPerHour: 10,
};

/** The settings, or undefined when no PAGING_* variable is set (the defaults apply). */
export const readPagingSettings = (v: ConfigVariableReader): PagingSettings | undefined => {
  const delay = v.optional('PAGING_DELAY_MINUTES');
  const byService = v.optional('PAGING_DELAY_BY_SERVICE');
  const callAfter = v.optional('PAGING_CALL_AFTER_MINUTES');
  const max = v.optional('PAGING_MAX_PER_HOUR');
  if (delay === undefined && byService === undefined && callAfter === undefined && max === undefined) {
    return undefined;
  }
  return {
    delayMs: delay === undefined ? DEFAULT_PAGING.delayMs : Number(delay) * MINUTE_MS,
    delayMsByService: parseServiceDelays(byService),
    callAfterMs: callAfter === undefined ? DEFAULT_PAGING.callAfterMs : Number(callAfter) * MINUTE_MS,
    maxPerHour: max === undefined ? DEFAULT_PAGING.maxPerHour : Number(max),
  };
};

/** How long an incident of this service stays triggered before paging. */
export const pagingDelayMs = (settings: PagingSettings, serviceId: string | null): number =>
  (serviceId !== null ? settings.delayMsByService[serviceId] : undefined) ?? settings.delayMs;

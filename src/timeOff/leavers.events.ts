import { z } from 'zod';
import { coverSlotSchema } from '../../machines/timeOff/cover.ts';
import type { RecordedEvent } from '../eventStore/eventStore.ts';

/**
 * The leaver report's facts (issue 12, capability 3), one stream per leaver: `timeoffleaver-<HR id>`.
 *
 * - `LeaverReportPrepared`: what Switchboard found when HR said the person left: their Slack user,
 *   whether their phone was forgotten, their upcoming on-call shifts that can be covered (each with
 *   its index, the one a Cover… button names), the escalation policies still naming them, and which
 *   channel gets which part. Recorded once (the first one wins), before anything is posted: a
 *   redelivery, a retry or a restart posts from this record and never looks again.
 * - `LeaverReportPosted`: the report is in that channel (checked before posting: a redelivery posts
 *   nothing twice).
 *
 * A Cover… click is checked against `LeaverReportPrepared`, never against the button's text.
 */
export const LEAVER_STREAM_PREFIX = 'timeoffleaver-';
const HR_ID = /^[A-Za-z0-9._:-]{1,64}$/;

export const parseLeaverHrId = (value: unknown): string | null =>
  typeof value === 'string' && HR_ID.test(value) ? value : null;

export const leaverStreamId = (hrId: string): string => {
  if (parseLeaverHrId(hrId) === null) throw new TypeError(`not an HR id: ${JSON.stringify(hrId)}`);
  return LEAVER_STREAM_PREFIX + hrId;
};

const at = z.string().min(1).max(40);
const slackUserId = z.string().regex(/^[UW][A-Z0-9]{2,31}$/);

/** A shift of theirs to cover: a cover slot (an open-ended shift cut to the lookup's range) and its index. */
export const leaverShiftSchema = coverSlotSchema.extend({ index: z.number().int().min(0) });
export type LeaverShift = z.infer<typeof leaverShiftSchema>;

export const leaverPolicySchema = z.object({
  id: z.string().min(1).max(64),
  name: z.string().max(200).nullable(),
  level: z.number().int().min(1).max(100),
});
export type LeaverPolicy = z.infer<typeof leaverPolicySchema>;

/** An open incident still assigned to the leaver (triggered or acknowledged when the report was made). */
export const leaverIncidentSchema = z.object({
  index: z.number().int().min(0),
  number: z.number().int().min(1).nullable(),
  title: z.string().max(300),
  status: z.enum(['triggered', 'acknowledged']),
});
export type LeaverIncident = z.infer<typeof leaverIncidentSchema>;

export const leaverEventDataSchemas = {
  LeaverReportPrepared: z.object({
    hrId: z.string().min(1).max(64),
    slackUserId: slackUserId.nullable(),
    displayName: z.string().max(200),
    /** Their verified phone was forgotten (the pager's `forget`); false when verification is off. */
    phoneForgotten: z.boolean(),
    shifts: z.array(leaverShiftSchema).max(200),
    policies: z.array(leaverPolicySchema).max(100),
    /** Open incidents still assigned to them (absent in reports recorded before it was looked up). */
    incidents: z.array(leaverIncidentSchema).max(50).optional(),
    /** Per channel: the shifts (indexes), policies (ids) and incidents (indexes) it is told about. */
    channels: z
      .array(
        z.object({
          channel: z.string().min(1).max(40),
          shifts: z.array(z.number().int()),
          policies: z.array(z.string()),
          incidents: z.array(z.number().int()).optional(),
        }),
      )
      .max(50),
    /** Rotas no channel is subscribed to (said in the logs; nobody is DMed). */
    unannounced: z.array(z.string().max(200)).max(200),
    /** What could not be looked up, in words (on-call lookups off, the service unreachable for good). */
    problems: z.array(z.string().max(300)).max(10),
    /** How far ahead shifts are known. */
    until: at,
    at,
  }),
  LeaverReportPosted: z.object({
    hrId: z.string().min(1).max(64),
    channel: z.string().min(1).max(40),
    ts: z.string().min(1).max(40),
    at,
  }),
} as const;

export type LeaverReport = z.infer<(typeof leaverEventDataSchemas)['LeaverReportPrepared']>;

/** The recorded report and the channels it is posted in, from the leaver's stream. */
export const foldLeaver = (
  events: readonly RecordedEvent[],
): Readonly<{
  report: LeaverReport | null;
  posted: ReadonlySet<string>;
  /** Issue 20: where each channel's part is (its ts), to update it in place. */
  postedTs: ReadonlyMap<string, string>;
}> => {
  let report: LeaverReport | null = null;
  const posted = new Set<string>();
  const postedTs = new Map<string, string>();
  for (const e of events) {
    if (e.kind !== 'event') continue;
    if (e.type === 'LeaverReportPrepared' && report === null) {
      const parsed = leaverEventDataSchemas.LeaverReportPrepared.safeParse(e.data);
      if (parsed.success) report = parsed.data;
    } else if (e.type === 'LeaverReportPosted') {
      const parsed = leaverEventDataSchemas.LeaverReportPosted.safeParse(e.data);
      if (parsed.success) {
        posted.add(parsed.data.channel);
        postedTs.set(parsed.data.channel, parsed.data.ts);
      }
    }
  }
  return { report, posted, postedTs };
};

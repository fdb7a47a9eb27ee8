import { COVER_STREAM_PREFIX } from '../../machines/timeOff/cover.ts';
import { COVER_ASK_STREAM_PREFIX } from '../../machines/timeOff/coverAsk.ts';
import { HAND_ON_SWEEP_STREAM_PREFIX } from '../../machines/timeOff/handOnSweep.ts';
import { HR_TIME_OFF_STREAM_PREFIX } from '../../machines/timeOff/hrCalendar.ts';
import { HR_READ_STREAM_PREFIX } from '../../machines/timeOff/hrReads.ts';
import { isTimeOffStreamId, TIME_OFF_STREAM_PREFIX } from '../../machines/timeOff/streams.ts';
import { WHOS_OUT_DAY_STREAM_PREFIX } from '../../machines/timeOff/whosOutDaily.ts';
import type { ParkedNotice, ParkedNotices } from '../slack/parkedNotices.reactor.ts';
import { LEAVER_STREAM_PREFIX } from './leavers.events.ts';
import { TIME_OFF_NOTICE_STREAM_PREFIX } from './notices.reactor.ts';

/**
 * Whom the time-off lifecycle tells when a processor parks an event of one of its streams (issue
 * 18): for a request, its requester and its approver now (after any hand-on), by DM (an HR channel
 * approver in that channel); for a cover, whoever asked for it. The stream is read raw (it may
 * hold the corrupt event that caused the park). HR's calendar, reads, sweeps, leavers and notice
 * bookkeeping name nobody: operators only.
 */

type Person = Readonly<{ slackUserId?: unknown }>;
const slackIdOf = (p: unknown): string | undefined => {
  const id = (p as Person | undefined)?.slackUserId;
  return typeof id === 'string' && id !== '' ? id : undefined;
};

export const timeOffParkedNotices: ParkedNotices = {
  streamPrefixes: [
    TIME_OFF_STREAM_PREFIX,
    COVER_STREAM_PREFIX,
    HR_TIME_OFF_STREAM_PREFIX,
    HR_READ_STREAM_PREFIX,
    HAND_ON_SWEEP_STREAM_PREFIX,
    LEAVER_STREAM_PREFIX,
    TIME_OFF_NOTICE_STREAM_PREFIX,
    WHOS_OUT_DAY_STREAM_PREFIX,
  ],
  async noticesFor(parked, ctx) {
    // Issue 20: a cover ask (`timeoffcoverask-…`, whose prefix begins like a cover's): whoever opened it.
    if (parked.streamId.startsWith(COVER_ASK_STREAM_PREFIX)) {
      for (const e of await ctx.store.readStream(parked.streamId)) {
        const by = (e.data as { openedBy?: unknown }).openedBy;
        if (e.type === 'CoverAskOpened' && typeof by === 'string' && by !== '') {
          return [
            {
              user: by,
              text: "Switchboard could not finish asking for cover of an on-call shift; check the incident service's schedule before relying on it.",
            },
          ];
        }
      }
      return [];
    }
    if (parked.streamId.startsWith(COVER_STREAM_PREFIX)) {
      for (const e of await ctx.store.readStream(parked.streamId)) {
        const by = (e.data as { requestedBy?: unknown }).requestedBy;
        if (e.type === 'CoverRequested' && typeof by === 'string' && by !== '') {
          return [
            {
              user: by,
              text: "Switchboard could not finish setting up the on-call cover you asked for; check the incident service's schedule before relying on it.",
            },
          ];
        }
      }
      return [];
    }
    if (!isTimeOffStreamId(parked.streamId)) return [];
    let requester: string | undefined;
    let approver: string | undefined;
    let what = 'your time-off request';
    for (const e of await ctx.store.readStream(parked.streamId)) {
      const d = (e.data ?? {}) as Record<string, unknown>;
      if (e.type === 'TimeOffRequested') {
        requester ??= slackIdOf(d.requester);
        approver = slackIdOf(d.approver) ?? approver;
        if (typeof d.policyType === 'string' && typeof d.startDate === 'string') {
          what = `your time-off request (${d.policyType}, ${d.startDate} to ${String(d.endDate ?? d.startDate)})`;
        }
      } else if (e.type === 'TimeOffHandedOn') {
        approver = slackIdOf(d.to) ?? approver;
      }
    }
    const out: ParkedNotice[] = [];
    if (requester) {
      out.push({
        user: requester,
        text: `Switchboard could not finish handling ${what}; what you see about it may be out of date.`,
      });
    }
    if (approver && approver !== requester) {
      const from = requester ? `<@${requester}>'s time-off request` : 'a time-off request';
      const text = `Switchboard could not finish handling ${from} that you decide; what you see about it may be out of date.`;
      out.push(/^[CG]/.test(approver) ? { channel: approver, text } : { user: approver, text });
    }
    return out;
  },
};

import {
  ACK_REMINDER_STREAM_PREFIX,
  incidentOfAckReminderStream,
} from '../../machines/incident/ackReminder.ts';
import {
  INCIDENT_CHANNEL_STREAM_PREFIX,
  incidentOfChannelStream,
} from '../../machines/incident/incidentChannel.ts';
import { INCIDENT_PAGING_STREAM_PREFIX, incidentOfPagingStream } from '../../machines/incident/paging.ts';
import { SHIFT_WATCH_STREAM_PREFIX } from '../../machines/incident/shiftWatch.ts';
import { INCIDENT_ROUTING_STREAM_PREFIX } from '../../machines/incidentRouting/streams.ts';
import type { ParkedNotice, ParkedNotices } from '../slack/parkedNotices.reactor.ts';
import { INCIDENT_NOTICE_STREAM_PREFIX } from './notices.reactor.ts';
import {
  INCIDENT_STAKEHOLDERS_STREAM_PREFIX,
  INCIDENT_UPDATE_STREAM_PREFIX,
} from './statusUpdates.reactor.ts';
import { INCIDENT_THREAD_STREAM_PREFIX } from './thread.reactor.ts';

/**
 * Whom the incident lifecycle tells when a processor parks an event of one of its streams (issue
 * 18): the people looking at the incident, in the thread of each of its cards; with no card yet,
 * the channel it was triggered from, else the person who triggered it by DM. A parked paging event
 * says that someone may not have been paged. The stream is read raw (it may hold the corrupt event
 * that caused the park): only the card records and the trigger's channel and person are looked at.
 * Routing, notice, thread-reply, status-update and stakeholder streams are owned here and name
 * nobody (operators only).
 */

const INCIDENT_PREFIX = 'incident-';

const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

export const incidentParkedNotices: ParkedNotices = {
  streamPrefixes: [
    INCIDENT_PREFIX,
    INCIDENT_PAGING_STREAM_PREFIX,
    INCIDENT_ROUTING_STREAM_PREFIX,
    INCIDENT_NOTICE_STREAM_PREFIX,
    // Issue 22 items 4 and 7: acknowledge reminders and incident channels, and their notices' ledgers.
    ACK_REMINDER_STREAM_PREFIX,
    INCIDENT_CHANNEL_STREAM_PREFIX,
    'incidentAckReminderNotice-',
    'incidentChannelNotice-',
    // Issue 22: the thread's and the status updates' records, stakeholder subscriptions.
    INCIDENT_THREAD_STREAM_PREFIX,
    INCIDENT_UPDATE_STREAM_PREFIX,
    INCIDENT_STAKEHOLDERS_STREAM_PREFIX,
    SHIFT_WATCH_STREAM_PREFIX,
  ],
  async noticesFor(parked, ctx) {
    const paging = parked.streamId.startsWith(INCIDENT_PAGING_STREAM_PREFIX);
    const reminder = parked.streamId.startsWith(ACK_REMINDER_STREAM_PREFIX);
    const ownChannel = parked.streamId.startsWith(INCIDENT_CHANNEL_STREAM_PREFIX);
    if (!paging && !reminder && !ownChannel && !parked.streamId.startsWith(INCIDENT_PREFIX)) return [];
    const stream = paging
      ? incidentOfPagingStream(parked.streamId)
      : reminder
        ? incidentOfAckReminderStream(parked.streamId)
        : ownChannel
          ? incidentOfChannelStream(parked.streamId)
          : parked.streamId;
    const cards = new Map<string, string>();
    let number: number | undefined;
    let triggerChannel: string | undefined;
    let triggeredBy: string | undefined;
    for (const e of await ctx.store.readStream(stream)) {
      const d = (e.data ?? {}) as Record<string, unknown>;
      if (e.type === 'IncidentCardPosted') {
        const channel = str(d.channel);
        const ts = str(d.ts);
        if (channel && ts && !cards.has(channel)) cards.set(channel, ts);
      } else if (e.type === 'IncidentTriggerRequested') {
        triggerChannel ??= str(d.channel);
        triggeredBy ??= str(d.by);
      } else if (e.type === 'IncidentTriggered' && typeof d.number === 'number') {
        number ??= d.number;
      }
    }
    const what = paging
      ? 'Switchboard could not finish paging for this incident: someone on call may not have been paged. If nobody has acknowledged it, page them by hand.'
      : reminder
        ? "Switchboard could not finish reminding this incident's assignee that it is still open."
        : ownChannel
          ? "Switchboard could not finish making (or archiving) this incident's channel. Ask again with `/incident channel`, or do it by hand."
          : 'Switchboard could not finish updating this incident; what you see here may be out of date.';
    if (cards.size > 0) {
      return [...cards].map(([channel, ts]): ParkedNotice => ({ channel, threadTs: ts, text: what }));
    }
    const named = number === undefined ? 'an incident' : `incident #${number}`;
    const text = paging
      ? `Switchboard could not finish paging for ${named}: someone on call may not have been paged. If nobody has acknowledged it, page them by hand.`
      : `Switchboard could not finish handling ${named}; its card may be missing or out of date.`;
    if (triggerChannel) return [{ channel: triggerChannel, text }];
    if (triggeredBy) return [{ user: triggeredBy, text }];
    return [];
  },
};

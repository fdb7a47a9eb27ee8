import type { Actor } from '../../../machines/incident/events.ts';
import { LEFT_THE_COMPANY, type UnreachableReason } from '../../../machines/incident/pagingPlan.ts';
import {
  escapeMrkdwn,
  type KnownBlock,
  mention,
  mrkdwn,
  plain,
  SLACK_LIMITS,
  type SlackMessage,
  truncate,
} from '../../slack/blocks/format.ts';
// Why a call failed, in the words the requester's DM uses (never our internal codes).
import { slackDate } from '../../slack/time.ts';
import { failureReasonText } from '../notices.reactor.ts';
import { actorText } from './actorText.ts';

/** The part of a stored message the timeline reads (a RecordedEvent of the store satisfies it). */
export type TimelineRecord = Readonly<{
  type: string;
  kind: 'event' | 'command';
  data: Readonly<Record<string, unknown>>;
  metadata: Readonly<Record<string, unknown>>;
  recordedAt: Date;
  revision: number;
}>;

/** One line of the timeline. `actor` is mrkdwn (a mention or an escaped name) or null. */
export type TimelineEntry = Readonly<{
  revision: number;
  at: string;
  kind: 'event' | 'command';
  type: string;
  actor: string | null;
  summary: string;
}>;

type Data = Readonly<Record<string, unknown>>;

const str = (v: unknown): string | null => (typeof v === 'string' && v.length > 0 ? v : null);
const num = (v: unknown): number | null => (typeof v === 'number' ? v : null);
const esc = (v: unknown, max = 200): string => escapeMrkdwn(truncate(String(v ?? ''), max));

const isActor = (v: unknown): v is Actor =>
  typeof v === 'object' && v !== null && 'slackUserId' in v && 'upstreamUserId' in v;

const via = (d: Data): string => {
  switch (d.source) {
    case 'webhook':
      return ' (incident service webhook)';
    case 'events_api':
      return ' (events API)';
    case 'slack':
      return ' (from Slack)';
    default:
      return '';
  }
};

const people = (v: unknown): string =>
  Array.isArray(v) && v.length
    ? v
        .map((a: { slackUserId?: unknown; name?: unknown; id?: unknown }) =>
          str(a.slackUserId) ? mention(String(a.slackUserId)) : esc(a.name ?? a.id, 80),
        )
        .join(', ')
    : 'nobody';

const attemptText = (d: Data): string => {
  const attempt = num(d.attempt);
  const max = num(d.maxAttempts);
  return attempt === null ? '' : max === null ? `attempt ${attempt}` : `attempt ${attempt}/${max}`;
};

/** What an incident event says, in a few words. Unknown types fall back to their name. */
const eventSummary = (type: string, d: Data): string => {
  switch (type) {
    case 'IncidentTriggerRequested':
      return `Trigger requested: “${esc(d.title)}”${d.urgency === 'low' ? ' (low urgency)' : ''}`;
    case 'IncidentLinked':
      return `Linked to incident #${num(d.number) ?? '?'} (${esc(d.upstreamId, 40)}) in the incident service`;
    case 'IncidentTriggered':
      return `Triggered #${num(d.number) ?? '?'} “${esc(d.title)}”${via(d)}`;
    case 'IncidentAcknowledgeRequested':
      return 'Acknowledge requested';
    case 'IncidentAcknowledged':
      return `Acknowledged${via(d)}`;
    case 'IncidentUnacknowledged':
      return `Un-acknowledged${via(d)}${str(d.reason) ? `: ${esc(d.reason)}` : ''}`;
    case 'IncidentResolveRequested':
      return 'Resolve requested';
    case 'IncidentResolved':
      return `Resolved${via(d)}${str(d.resolution) ? `: ${esc(d.resolution)}` : ''}`;
    case 'IncidentReopened':
      return `Reopened${via(d)}`;
    case 'IncidentEscalateRequested':
      return `Escalation to level ${num(d.level) ?? '?'} requested`;
    case 'IncidentEscalated':
      return `Escalated to level ${num(d.level) ?? '?'}, assigned to ${people(d.assignees)}${via(d)}`;
    case 'IncidentReassignRequested':
      return `Reassignment to ${people(d.assignees)} requested`;
    case 'IncidentReassigned':
      return `Reassigned to ${people(d.assignees)}${via(d)}`;
    case 'IncidentNoteRequested':
      return `Note requested: “${esc(d.content, 150)}”`;
    case 'IncidentNoteAdded':
      return `Note added${via(d)}: “${esc(d.content, 150)}”`;
    case 'IncidentPriorityChangeRequested': {
      const p = d.priority as { name?: unknown } | null;
      return `Priority ${p ? esc(p.name, 40) : 'change'} requested`;
    }
    case 'IncidentUrgencyChangeRequested':
      return `Urgency ${esc(d.urgency, 10)} requested`;
    case 'IncidentPriorityChanged': {
      const p = d.priority as { name?: unknown } | null;
      if (d.superseded === true)
        return `Priority ${p ? esc(p.name, 40) : 'change'} taken, then replaced by a later change${via(d)}`;
      return `Priority set to ${p ? esc(p.name, 40) : 'none'}${via(d)}`;
    }
    case 'IncidentUrgencyChanged':
      return `Urgency set to ${esc(d.urgency, 10)}${via(d)}`;
    case 'IncidentUpstreamCallFailed':
      return `Upstream ${esc(d.action, 20)} call failed (${attemptText(d)}: ${esc(failureReasonText(String(d.code), String(d.message ?? '')), 200)})${
        d.final
          ? ', gave up'
          : str(d.nextAttemptAt)
            ? `, next try ${slackDate(String(d.nextAttemptAt), { format: 'dateTimeSecs' })}`
            : ''
      }`;
    case 'IncidentUpstreamCallRetried':
      return `Retrying upstream ${esc(d.action, 20)} call (${attemptText(d)})`;
    case 'IncidentWebhookIgnored':
      return `Webhook ${esc(d.eventType, 60)} from ${slackDate(String(d.occurredAt), { format: 'dateTimeSecs' })} ignored: ${
        d.reason === 'already_resolved'
          ? 'the incident was already resolved'
          : 'older than what we already knew'
      }`;
    case 'IncidentCardPosted':
      return `Card posted in <#${esc(d.channel, 30)}>`;
    case 'IncidentCardUpdated':
      return `Card updated in <#${esc(d.channel, 30)}>`;
    default:
      return humanize(type);
  }
};

/** What a recorded command (an input) says: shown when it changed nothing, or in full audits. */
const commandSummary = (type: string, d: Data): string => {
  switch (type) {
    case 'CommandRefused':
      return `Refused ${humanize(String(d.command ?? 'command')).toLowerCase()}: ${esc(d.reason, 300)}`;
    case 'RecordIncidentWebhook':
      return `Webhook ${esc(d.eventType, 60)} received`;
    case 'RecordIncidentUpstreamCallSucceeded':
      return `Upstream ${esc(d.action, 20)} call succeeded`;
    case 'RecordIncidentUpstreamCallFailed':
      return `Upstream ${esc(d.action, 20)} call failed (${attemptText(d)}: ${esc(failureReasonText(String(d.code), String(d.message ?? '')), 200)})`;
    case 'RetryIncidentUpstreamCall':
      return `Scheduled retry of ${esc(d.action, 20)} (${attemptText(d)})`;
    case 'RecordIncidentPageActivity':
      return pageActivityText(d);
    case 'RecordIncidentWorkActivity':
      return workActivityText(d);
    // Issue 22: a status update for stakeholders, and a thread reply added to the timeline.
    case 'RecordIncidentStatusUpdate':
      return `:mega: Status update: “${esc(d.text, 300)}”`;
    case 'RecordIncidentThreadNote':
      return `:memo: Note (from the thread${
        str(d.addedBy) && d.addedBy !== d.by ? `, added by ${mention(String(d.addedBy))}` : ''
      }): “${esc(d.content, 300)}”`;
    case 'RemindIncidentStatusUpdate':
      return 'Reminded the assignee to post a status update';
    case 'RecordIncidentCardPosted':
      return 'Card posted';
    case 'RecordIncidentCardUpdated':
      return 'Card updated';
    default:
      return humanize(type);
  }
};

/** Working the incident (issue 22 items 4 and 7): acknowledge reminders and its own channel. */
export const workActivityText = (d: Data): string => {
  const people = Array.isArray(d.slackUserIds)
    ? d.slackUserIds.filter((u): u is string => typeof u === 'string' && isPerson(u)).map(mention)
    : [];
  const who = people.length > 0 ? people.join(', ') : 'nobody Switchboard knows in Slack';
  const channel =
    str(d.channel) && /^[CG][A-Z0-9]{2,}$/.test(String(d.channel))
      ? `<#${String(d.channel)}>`
      : 'its channel';
  switch (d.kind) {
    case 'ack_reminder_sent':
      return `:alarm_clock: Still acknowledged and open: reminded ${who} by DM`;
    case 'ack_reminder_kept':
      return `:thumbsup: ${who} is still working on it`;
    case 'ack_reminder_unanswered':
      return `:hourglass: The reminder to ${who} went unanswered; the channel was told`;
    case 'channel_created':
      return `:hash: Incident channel ${channel} created${people.length ? ` for ${people.join(', ')}` : ''}`;
    case 'channel_failed':
      return d.detail === 'missing_scope'
        ? ":warning: The incident channel couldn't be created: Switchboard's Slack app lacks the channels:manage permission"
        : ":warning: The incident channel couldn't be created";
    case 'channel_archived':
      return `:file_cabinet: Incident channel ${channel} archived`;
    default:
      return 'Worked on the incident';
  }
};

/** Page activity (src/incidents/paging.ts): receipts, skips, and answers from the phone. */
export const pageActivityText = (d: Data): string => {
  const who = str(d.slackUserId) ? mention(String(d.slackUserId)) : str(d.name) ? esc(d.name, 80) : 'someone';
  const detail = str(d.detail) ? `: ${esc(d.detail, 200)}` : '';
  const level = num(d.level) === null ? '' : ` at level ${num(d.level)}`;
  switch (d.kind) {
    case 'sms_submitted':
      return `:iphone: Paged ${who} by SMS`;
    case 'sms_delivered':
      return `:iphone: SMS page to ${who} delivered`;
    case 'sms_rejected':
      return `:iphone: SMS page to ${who} rejected${detail}`;
    case 'sms_failed':
      return `:iphone: SMS page to ${who} could not be sent${detail}`;
    case 'call_created':
      return `:telephone_receiver: Calling ${who}`;
    case 'call_ringing':
      return `:telephone_receiver: Call to ${who} ringing`;
    case 'call_answered':
      return `:telephone_receiver: Call to ${who} answered`;
    case 'call_completed':
      return `:telephone_receiver: Call to ${who} completed`;
    case 'call_busy':
      return `:telephone_receiver: Call to ${who}: busy`;
    case 'call_unanswered':
      return `:telephone_receiver: Call to ${who}: no answer`;
    case 'call_failed':
      return `:telephone_receiver: Call to ${who} failed${detail}`;
    case 'no_verified_phone':
    case 'opted_out':
    case 'held_back':
    case 'undeliverable': {
      const reason = unreachableReasonOf(d);
      const limit = d.kind === 'held_back' && str(d.detail) ? ` (${esc(d.detail, 60)})` : '';
      return `${COULD_NOT_PAGE} ${who}${level}: ${reason ? UNREACHABLE_WORDS[reason] : 'the page did not reach them'}${limit}`;
    }
    case 'reply_ignored':
      return `Reply from ${who} ignored${detail}`;
    case 'phone_acknowledged':
      return `Acknowledged by ${who} by phone${d.via === 'voice' ? ' (keypad)' : ' (SMS reply)'}`;
    case 'phone_resolved':
      return `Resolved by ${who} by phone${d.via === 'voice' ? ' (keypad)' : ' (SMS reply)'}`;
    case 'no_pager':
      return `Nobody paged${level}: phone verification is switched off`;
    case 'nobody_on_call':
      return `Nobody on call${level} to page`;
    case 'no_slack_user':
      return `Not paged ${who}${level}: no Slack user found for them`;
    case 'on_leave':
      return `:palm_tree: ${onLeaveText(who, d.detail)}${level ? ` (${level.trim()})` : ''}`;
    case 'stand_in':
      return `Paging ${who} instead of ${str(d.standsInFor) ? mention(String(d.standsInFor)) : 'someone on leave'}${level}${
        str(d.detail) ? `: next on ${esc(d.detail, 80)}` : ''
      }`;
    case 'level_on_leave':
      return levelOnLeaveText(d);
    case 'everyone_on_leave':
      return `${EVERYONE_ON_LEAVE}`;
    case 'level_unreachable':
      return levelUnreachableText(d);
    case 'nobody_paged':
      return NOBODY_PAGED;
    default:
      return 'Page activity';
  }
};

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** `2026-12-03` → `3 Dec` (a calendar day: no time zone to name). */
export const dayText = (date: unknown): string | null => {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(String(date ?? ''));
  const month = m ? MONTHS[Number(m[2]) - 1] : undefined;
  return m && month ? `${Number(m[3])} ${month}` : null;
};

/** `<@U0ANA> skipped: on approved leave until 3 Dec` (the last day of leave), or `… left the company`. */
export const onLeaveText = (who: string, lastDay: unknown): string => {
  if (lastDay === LEFT_THE_COMPANY) return `${who} skipped: left the company`;
  const day = dayText(lastDay);
  return `${who} skipped: on approved leave${day ? ` until ${day}` : ''}`;
};

/** `everyone at level 1 is on leave: paging level 2`. */
export const levelOnLeaveText = (d: Readonly<Record<string, unknown>>): string =>
  `Everyone at level ${num(d.level) ?? '?'} is on leave: paging level ${num(d.toLevel) ?? '?'}`;

export const EVERYONE_ON_LEAVE = 'Everyone on call, at every level, is on approved leave: nobody paged';

/**
 * Why a page could not reach someone (issue 18), as the card, the timeline and the DM say it: about
 * them, never how Switchboard found out (no codes, no keys).
 */
export const UNREACHABLE_WORDS: Readonly<Record<UnreachableReason, string>> = {
  no_verified_phone: 'no verified phone',
  must_verify_again: 'their number must be verified again',
  opted_out: 'opted out of paging (replied STOP)',
  held_back: 'too many pages this hour',
  sms_refused: 'the SMS was refused',
  call_failed: 'the call failed',
  busy: 'the line was busy',
  unanswered: 'the call was not answered',
  gave_up: 'the phone service could not be reached',
};

export const COULD_NOT_PAGE = ':no_bell: Could not page';

/** The reason of a "could not page" activity: its `reason`, or its kind for the older kinds. */
export const unreachableReasonOf = (d: Readonly<Record<string, unknown>>): UnreachableReason | null => {
  const reason = typeof d.reason === 'string' ? d.reason : d.kind;
  return typeof reason === 'string' && reason in UNREACHABLE_WORDS ? (reason as UnreachableReason) : null;
};

/** `Nobody at level 1 could be paged: paging level 2`. */
export const levelUnreachableText = (d: Readonly<Record<string, unknown>>): string =>
  `Nobody at level ${num(d.level) ?? '?'} could be paged: paging level ${num(d.toLevel) ?? '?'}`;

export const NOBODY_PAGED =
  ':rotating_light: Nobody could be paged: everyone on call, at every level, is away or could not be reached';

/** `AcknowledgeIncident` → `Acknowledge incident`. */
const humanize = (type: string): string => {
  const words = type.replace(/([a-z0-9])([A-Z])/g, '$1 $2').toLowerCase();
  return words.charAt(0).toUpperCase() + words.slice(1);
};

const whenOf = (r: TimelineRecord): string =>
  str(r.data.at) ??
  str(r.data.requestedAt) ??
  (r.kind === 'event' ? str(r.data.occurredAt) : null) ??
  str(r.metadata.now) ??
  r.recordedAt.toISOString();

const actorOf = (r: TimelineRecord): string | null => {
  if (isActor(r.data.by)) return actorText(r.data.by);
  if (str(r.data.by)) return mention(String(r.data.by));
  if (r.kind === 'event' && r.data.source === 'webhook') return null;
  const actor = str(r.metadata.actor);
  if (!actor || actor.startsWith('system:')) return null;
  return mention(actor);
};

export type TimelineOptions = Readonly<{
  /**
   * `'story'` (default): what people did and how the incident changed: requests, state changes,
   * notes, assignments, refusals of a person's input and calls that failed for good. Plumbing (card
   * posts and updates, webhook receipts, links, retries, ignored stale webhooks) is left out.
   * `'audit'`: every event, and recorded inputs as `commands` says.
   */
  scope?: 'story' | 'audit';
  /**
   * In the audit: `'unmatched'` (default) shows a recorded command only when it produced no event
   * (a refusal, a duplicate, a late result), since its events already tell the story; `'all'`
   * shows every input too.
   */
  commands?: 'unmatched' | 'all';
}>;

/** Events that are how Switchboard works, not what happened to the incident. */
const PLUMBING_EVENTS: ReadonlySet<string> = new Set([
  'IncidentLinked',
  'IncidentCardPosted',
  'IncidentCardUpdated',
  'IncidentWebhookIgnored',
  'IncidentUpstreamCallRetried',
]);

/** A Slack user id (`U…`, `W…`): an input a person sent, not a webhook or a processor. */
const isPerson = (actor: unknown): boolean => typeof actor === 'string' && /^[UW][A-Z0-9]{2,}$/.test(actor);

/** Issue 22: status updates and thread notes are part of the story (recorded as commands). */
const STORY_COMMANDS: ReadonlySet<string> = new Set([
  'RecordIncidentStatusUpdate',
  'RecordIncidentThreadNote',
]);

const inStory = (r: TimelineRecord): boolean => {
  if (r.kind === 'command') {
    return (
      (r.type === 'CommandRefused' && isPerson(r.metadata.actor)) ||
      r.type === 'RecordIncidentPageActivity' ||
      r.type === 'RecordIncidentWorkActivity' ||
      STORY_COMMANDS.has(r.type)
    );
  }
  if (r.type === 'IncidentUpstreamCallFailed') return r.data.final === true;
  return !PLUMBING_EVENTS.has(r.type);
};

/**
 * Timeline lines from an incident stream's stored messages (events and recorded commands), in
 * stream order: the story by default, the full audit on request.
 *
 * @example
 * const entries = toTimelineEntries(await store.readStream(streamId));
 * const audit = toTimelineEntries(records, { scope: 'audit', commands: 'all' });
 */
export const toTimelineEntries = (
  records: readonly TimelineRecord[],
  options: TimelineOptions = {},
): TimelineEntry[] => {
  const producing = new Set(
    records
      .filter((r) => r.kind === 'event')
      .map((r) => str(r.metadata.commandId))
      .filter((id) => id !== null),
  );
  const audit = options.scope === 'audit';
  return [...records]
    .sort((a, b) => a.revision - b.revision)
    .filter((r) =>
      audit
        ? r.kind === 'event' ||
          options.commands === 'all' ||
          r.type === 'CommandRefused' ||
          !producing.has(str(r.metadata.commandId) ?? '')
        : inStory(r),
    )
    .map((r) => ({
      revision: r.revision,
      at: whenOf(r),
      kind: r.kind,
      type: r.type,
      actor: actorOf(r),
      summary: r.kind === 'event' ? eventSummary(r.type, r.data) : commandSummary(r.type, r.data),
    }));
};

/** `today at 13:58:48 · Acknowledged by <@U1>`: a Slack date token (never in a code span, where Slack would not render it). */
export const entryLine = (e: TimelineEntry): string =>
  `${slackDate(e.at, { format: 'dateTimeSecs' })} · ${e.kind === 'command' ? ':inbox_tray: ' : ''}${e.summary}${e.actor ? ` · ${e.actor}` : ''}`;

export type TimelinePageOptions = Readonly<{
  /** Blocks per message (Slack allows 50). */
  maxBlocks?: number;
  /** Lines per section block. */
  linesPerSection?: number;
  /** Characters per section block (Slack allows 3000). */
  maxSectionChars?: number;
  /** Lines per page, so one page stays readable. */
  maxEntriesPerPage?: number;
}>;

/**
 * The timeline as one or more messages, each within Slack's block and text limits: a header, a
 * "page i of n" context, then the lines packed into section blocks. Post the pages in order.
 *
 * @example
 * for (const page of incidentTimeline({ title: '#42 db-primary disk 95%', entries })) await respond(page);
 */
export const incidentTimeline = (
  input: Readonly<{
    title: string;
    entries: readonly TimelineEntry[];
    /** mrkdwn shown under the count on every page (e.g. how to see the full audit). */
    note?: string;
  }>,
  options: TimelinePageOptions = {},
): SlackMessage[] => {
  const maxBlocks = Math.min(
    options.maxBlocks ?? SLACK_LIMITS.blocksPerMessage,
    SLACK_LIMITS.blocksPerMessage,
  );
  const linesPerSection = Math.max(1, options.linesPerSection ?? 10);
  const maxChars = Math.min(options.maxSectionChars ?? 2900, SLACK_LIMITS.sectionText);
  const maxEntries = Math.max(1, options.maxEntriesPerPage ?? 100);
  const sectionsPerPage = Math.max(1, maxBlocks - 2);

  // Pack lines into sections, then sections into pages.
  const sections: { text: string; lines: number }[] = [];
  for (const entry of input.entries) {
    const line = truncate(entryLine(entry), maxChars);
    const last = sections.at(-1);
    if (last && last.lines < linesPerSection && last.text.length + 1 + line.length <= maxChars) {
      last.text += `\n${line}`;
      last.lines += 1;
    } else {
      sections.push({ text: line, lines: 1 });
    }
  }
  const pages: { text: string; lines: number }[][] = [];
  for (const section of sections) {
    const page = pages.at(-1);
    const lines = page?.reduce((n, s) => n + s.lines, 0) ?? 0;
    if (page && page.length < sectionsPerPage && lines + section.lines <= maxEntries) page.push(section);
    else pages.push([section]);
  }
  if (pages.length === 0) pages.push([]);

  const title = truncate(`Timeline: ${input.title}`, SLACK_LIMITS.headerText);
  return pages.map((page, i) => {
    const count = `${input.entries.length} entr${input.entries.length === 1 ? 'y' : 'ies'}`;
    const blocks: KnownBlock[] = [
      { type: 'header', text: plain(title) },
      {
        type: 'context',
        elements: [
          mrkdwn(
            `${pages.length > 1 ? `Page ${i + 1} of ${pages.length} · ${count}` : count}${input.note ? ` · ${input.note}` : ''}`,
          ),
        ],
      },
      ...page.map((s): KnownBlock => ({ type: 'section', text: mrkdwn(s.text) })),
    ];
    if (page.length === 0) blocks.push({ type: 'section', text: mrkdwn('_Nothing recorded yet._') });
    return { text: `${escapeMrkdwn(title)}${pages.length > 1 ? ` (${i + 1}/${pages.length})` : ''}`, blocks };
  });
};

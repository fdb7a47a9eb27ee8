import { LEFT_THE_COMPANY } from '../../../machines/incident/pagingPlan.ts';
import { escapeMrkdwn, mention, truncate } from '../../slack/blocks/format.ts';
import {
  EVERYONE_ON_LEAVE,
  levelOnLeaveText,
  levelUnreachableText,
  onLeaveText,
  UNREACHABLE_WORDS,
  unreachableReasonOf,
} from './incidentTimeline.ts';
import type { PagedInstead } from './pagedInstead.ts';

/** The part of a stored message the summary reads (a RecordedEvent of the store satisfies it). */
export type PagingRecord = Readonly<{
  type: string;
  kind: 'event' | 'command';
  data: Readonly<Record<string, unknown>>;
}>;

const WORDS: Readonly<Record<string, string>> = {
  sms_submitted: 'SMS sent',
  sms_delivered: 'SMS delivered',
  sms_rejected: 'SMS rejected',
  sms_failed: 'SMS not sent',
  call_created: 'calling',
  call_ringing: 'call ringing',
  call_answered: 'call answered',
  call_completed: 'call ended',
  call_busy: 'line busy',
  call_unanswered: 'call not answered',
  call_failed: 'call failed',
  phone_acknowledged: 'acknowledged by phone',
  phone_resolved: 'resolved by phone',
  no_slack_user: 'not paged: no Slack user',
};

const lowerFirst = (t: string): string => t.charAt(0).toLowerCase() + t.slice(1);

/** Kinds that say a page reached the person after all (a receipt after a failure overrides it). */
const REACHED: ReadonlySet<string> = new Set([
  'sms_delivered',
  'call_answered',
  'phone_acknowledged',
  'phone_resolved',
]);

/** Kinds that say someone is being paged (after them, "nobody could be paged" no longer holds). */
const PAGING_AGAIN: ReadonlySet<string> = new Set(['sms_submitted', 'stand_in']);

/**
 * The card's one-line summary of paging (src/incidents/paging.ts): where each person's page stands,
 * from the page activity recorded in the incident's stream, or null when there was none.
 *
 * Someone who could not be paged (issue 18) stays "could not be paged: <why>" until a receipt says
 * the page reached them after all; whoever was paged in their place keeps "instead of <@…>" beside
 * their own receipts; "nobody could be paged" comes first.
 *
 * @example
 * pagingSummary(history)
 * // ':iphone: *Paging* <@U0ANA> could not be paged: their number must be verified again · <@U0BEN> SMS delivered (paged instead of <@U0ANA>)'
 */
export const pagingSummary = (records: readonly PagingRecord[]): string | null => {
  const byPerson = new Map<string, { what: string; failed: boolean; insteadOf: string | null }>();
  let general: string | null = null;
  let nobody = false;
  /** Said whatever else is (who was skipped for leave is on the person's own entry). */
  const notes: string[] = [];
  for (const r of records) {
    if (r.type !== 'RecordIncidentPageActivity' || r.kind !== 'command') continue;
    const kind = String(r.data.kind ?? '');
    const who =
      typeof r.data.slackUserId === 'string' && r.data.slackUserId
        ? mention(r.data.slackUserId)
        : typeof r.data.name === 'string' && r.data.name
          ? escapeMrkdwn(truncate(r.data.name, 60))
          : null;
    const previous = who ? byPerson.get(who) : undefined;
    const set = (what: string, failed = false, insteadOf = previous?.insteadOf ?? null) => {
      if (who) byPerson.set(who, { what, failed, insteadOf });
    };
    if (PAGING_AGAIN.has(kind)) nobody = false;
    const reason = unreachableReasonOf(r.data);
    if (kind === 'no_pager') general = 'nobody paged: phone verification is switched off';
    else if (kind === 'nobody_on_call') general = 'nobody on call to page';
    else if (kind === 'level_on_leave') notes.push(lowerFirst(levelOnLeaveText(r.data)));
    else if (kind === 'level_unreachable') notes.push(lowerFirst(levelUnreachableText(r.data)));
    else if (kind === 'everyone_on_leave') notes.push(lowerFirst(EVERYONE_ON_LEAVE));
    else if (kind === 'nobody_paged') nobody = true;
    else if (who && kind === 'on_leave') {
      set(onLeaveText('', r.data.detail).trim());
    } else if (who && kind === 'stand_in') {
      const forWhom =
        typeof r.data.standsInFor === 'string' ? mention(r.data.standsInFor) : 'someone on leave';
      set('paged', false, forWhom);
    } else if (
      who &&
      reason &&
      ['no_verified_phone', 'opted_out', 'held_back', 'undeliverable'].includes(kind)
    ) {
      set(`could not be paged: ${UNREACHABLE_WORDS[reason]}`, true);
    } else if (who && WORDS[kind]) {
      // Once someone answered from the phone, later receipts (the call ending) do not hide it; once
      // they could not be paged, only a receipt that the page reached them does.
      if (previous?.what.endsWith('by phone') && kind.startsWith('call_')) continue;
      if (previous?.failed && !REACHED.has(kind)) continue;
      set(WORDS[kind]);
    }
  }
  const entries = [...byPerson].map(([who, e]) =>
    e.insteadOf
      ? e.what === 'paged'
        ? `${who} paged instead of ${e.insteadOf}`
        : `${who} ${e.what} (paged instead of ${e.insteadOf})`
      : `${who} ${e.what}`,
  );
  const parts = [...(nobody ? ['*nobody could be paged*'] : []), ...new Set(notes), ...entries];
  if (general && parts.length === 0) parts.push(general);
  return parts.length ? truncate(`:iphone: *Paging* ${parts.join(' · ')}`, 2_900) : null;
};

export type { PagedInstead } from './pagedInstead.ts';

/**
 * Who paging passed over and who it paged in their place (issue 20), by the passed-over person's
 * Slack user id, from the page activity the paging plan recorded (machines/incident/pagingPlan.ts:
 * the one rule): the card names who is really paged beside "Assigned".
 */
export const pagedInstead = (records: readonly PagingRecord[]): ReadonlyMap<string, PagedInstead> => {
  const out = new Map<
    string,
    { why: string; instead: string[]; otherwise: string | null; level: number | null }
  >();
  const levelOf = (d: Readonly<Record<string, unknown>>) => (typeof d.level === 'number' ? d.level : null);
  for (const r of records) {
    if (r.type !== 'RecordIncidentPageActivity' || r.kind !== 'command') continue;
    const kind = String(r.data.kind ?? '');
    const who = typeof r.data.slackUserId === 'string' && r.data.slackUserId ? r.data.slackUserId : null;
    const reason = unreachableReasonOf(r.data);
    if (who && kind === 'on_leave') {
      const why = r.data.detail === LEFT_THE_COMPANY ? 'left the company' : 'on leave';
      out.set(who, { why, instead: out.get(who)?.instead ?? [], otherwise: null, level: levelOf(r.data) });
    } else if (
      who &&
      reason &&
      ['no_verified_phone', 'opted_out', 'held_back', 'undeliverable'].includes(kind) &&
      !out.has(who)
    ) {
      out.set(who, { why: 'cannot be paged', instead: [], otherwise: null, level: levelOf(r.data) });
    } else if (who && kind === 'stand_in' && typeof r.data.standsInFor === 'string') {
      const away = out.get(r.data.standsInFor);
      if (away && !away.instead.includes(who)) away.instead.push(who);
    } else if (kind === 'level_on_leave' || kind === 'level_unreachable') {
      const next = typeof r.data.toLevel === 'number' ? r.data.toLevel : null;
      for (const e of out.values()) {
        if (e.instead.length === 0 && e.level === levelOf(r.data) && next !== null) {
          e.otherwise = `level ${next} is paged`;
        }
      }
    } else if (kind === 'everyone_on_leave' || kind === 'nobody_paged') {
      for (const e of out.values()) if (e.instead.length === 0) e.otherwise = 'nobody can be paged';
    }
  }
  return new Map([...out].map(([k, { level: _level, ...e }]) => [k, e]));
};

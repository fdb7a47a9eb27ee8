import { escapeMrkdwn, mention, truncate } from '../../slack/blocks/format.ts';
import { EVERYONE_ON_LEAVE, levelOnLeaveText, onLeaveText } from './incidentTimeline.ts';

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
  no_verified_phone: 'skipped: no verified phone',
  opted_out: 'skipped: opted out (STOP)',
  held_back: 'held back: too many pages this hour',
  phone_acknowledged: 'acknowledged by phone',
  phone_resolved: 'resolved by phone',
  no_slack_user: 'not paged: no Slack user',
};

const lowerFirst = (t: string): string => t.charAt(0).toLowerCase() + t.slice(1);

/**
 * The card's one-line summary of paging (src/incidents/paging.ts): where each person's page stands,
 * from the page activity recorded in the incident's stream, or null when there was none.
 *
 * @example
 * pagingSummary(history) // ':iphone: *Paging* <@U0CHEN> call answered · <@U0FRANK> skipped: no verified phone'
 */
export const pagingSummary = (records: readonly PagingRecord[]): string | null => {
  const byPerson = new Map<string, string>();
  let general: string | null = null;
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
    if (kind === 'no_pager') general = 'nobody paged: phone verification is switched off';
    else if (kind === 'nobody_on_call') general = 'nobody on call to page';
    else if (kind === 'level_on_leave') notes.push(lowerFirst(levelOnLeaveText(r.data)));
    else if (kind === 'everyone_on_leave') notes.push(lowerFirst(EVERYONE_ON_LEAVE));
    else if (who && kind === 'on_leave') {
      byPerson.set(who, onLeaveText('', r.data.detail).trim());
    } else if (who && kind === 'stand_in') {
      const forWhom =
        typeof r.data.standsInFor === 'string' ? mention(r.data.standsInFor) : 'someone on leave';
      byPerson.set(who, `paged instead of ${forWhom}`);
    } else if (who && WORDS[kind]) {
      // Once someone answered from the phone, later receipts (the call ending) do not hide it.
      const previous = byPerson.get(who);
      if (previous?.endsWith('by phone') && kind.startsWith('call_')) continue;
      byPerson.set(who, WORDS[kind]);
    }
  }
  const parts = [...new Set(notes), ...[...byPerson].map(([who, what]) => `${who} ${what}`)];
  if (general && parts.length === 0) parts.push(general);
  return parts.length ? truncate(`:iphone: *Paging* ${parts.join(' · ')}`, 2_900) : null;
};

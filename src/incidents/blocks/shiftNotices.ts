import type { PhoneStandingKind } from '../../lifecycles/ports.ts';
import { type KnownBlock, mention, mrkdwn, type SlackMessage } from '../../slack/blocks/format.ts';
import { escapeMrkdwn, truncate } from '../../slack/text.ts';
import { slackDate } from '../../slack/time.ts';

/**
 * Issue 20 item 4: what people read about on-call shifts. Times are Slack date tokens (each reader
 * sees their own zone; a DM's fallbacks are written in its reader's zone by the outbox); names
 * and titles from the incident service are escaped.
 */

/** An open incident on a rota's services, as a line: `#12 Checkout 5xx (triggered)`. */
export type OpenIncidentLine = Readonly<{ label: string; status: 'triggered' | 'acknowledged' }>;

const MAX_INCIDENTS = 10;

export const scheduleText = (name: string | null, id: string): string =>
  `*${escapeMrkdwn(truncate(name ?? `schedule ${id}`, 100))}*`;

const hours = (start: number, end: number | null): string =>
  end === null
    ? `from ${slackDate(new Date(start))}, with no end set`
    : `${slackDate(new Date(start))} to ${slackDate(new Date(end))}`;

const incidentLines = (open: readonly OpenIncidentLine[], none: string): string => {
  if (open.length === 0) return none;
  const shown = open.slice(0, MAX_INCIDENTS).map((i) => `• ${i.label} (${i.status})`);
  const more = open.length - shown.length;
  return `${shown.join('\n')}${more > 0 ? `\n…and ${more} more` : ''}`;
};

const PHONE_LINE: Readonly<Record<PhoneStandingKind, string>> = {
  pageable: ':white_check_mark: Your phone is verified: you can be paged by SMS and call.',
  none: ':warning: Your phone is not verified: verify now or you cannot be paged. `/verify &lt;your number&gt;`',
  must_verify_again:
    ':warning: Your verified number can no longer be used: verify now or you cannot be paged. `/verify &lt;your number&gt;`',
  opted_out:
    ':warning: You replied STOP to a page, so pages are not sent to your phone: verify now or you cannot be paged. `/verify &lt;your number&gt;`',
};

/** The DM before a shift starts. `phone` null: phone paging is switched off (nothing to say). */
export const shiftStartDm = (
  input: Readonly<{
    scheduleId: string;
    scheduleName: string | null;
    start: number;
    end: number | null;
    open: readonly OpenIncidentLine[];
    phone: PhoneStandingKind | null;
  }>,
): SlackMessage => {
  const schedule = scheduleText(input.scheduleName, input.scheduleId);
  const head = `:pager: Your on-call shift for ${schedule} starts ${slackDate(new Date(input.start))}.`;
  const blocks: KnownBlock[] = [
    { type: 'section', text: mrkdwn(`${head}\n*Hours:* ${hours(input.start, input.end)}`) },
    {
      type: 'section',
      text: mrkdwn(
        truncate(
          `*Open on its services:*\n${incidentLines(input.open, 'Nothing open on its services right now.')}`,
          3000,
        ),
      ),
    },
  ];
  if (input.phone !== null) blocks.push({ type: 'section', text: mrkdwn(PHONE_LINE[input.phone]) });
  const warn =
    input.phone !== null && input.phone !== 'pageable'
      ? ' Verify your phone now or you cannot be paged.'
      : '';
  return { text: `${head}${warn}`, blocks };
};

/** The post in a rota's channel when it changes hands. */
export const handoffPost = (
  input: Readonly<{
    scheduleId: string;
    scheduleName: string | null;
    /** Slack users (or names when not in Slack); null: nobody was on call just before. */
    from: Readonly<{ slackUserId: string | null; name: string }> | null;
    to: Readonly<{ slackUserId: string | null; name: string }>;
    at: number;
    end: number | null;
    open: readonly OpenIncidentLine[];
  }>,
): SlackMessage => {
  const who = (p: Readonly<{ slackUserId: string | null; name: string }>) =>
    p.slackUserId ? mention(p.slackUserId) : escapeMrkdwn(truncate(p.name, 100));
  const schedule = scheduleText(input.scheduleName, input.scheduleId);
  const head = input.from
    ? `:arrows_counterclockwise: ${schedule}: ${who(input.from)} hands on call to ${who(input.to)} ${slackDate(new Date(input.at))}.`
    : `:arrows_counterclockwise: ${schedule}: ${who(input.to)} is on call from ${slackDate(new Date(input.at))}.`;
  const until = input.end === null ? '' : ` Until ${slackDate(new Date(input.end))}.`;
  const open = incidentLines(input.open, 'Nothing is open on its services.');
  return {
    text: `${head}${until}`,
    blocks: [
      { type: 'section', text: mrkdwn(`${head}${until}`) },
      {
        type: 'section',
        text: mrkdwn(truncate(input.open.length ? `*Still open:*\n${open}` : open, 3000)),
      },
    ],
  };
};

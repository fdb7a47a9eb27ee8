import { describe, expect, it } from 'vitest';
import { incidentDecider } from '../../../machines/incident/decider.ts';
import type { IncidentEvent } from '../../../machines/incident/events.ts';
import { incidentStreamIdForRequest } from '../../../machines/incident/streams.ts';
import { parseKeepButtonValue } from '../../../src/incidents/ackReminders.reactor.ts';
import { incidentCard } from '../../../src/incidents/blocks/incidentCard.ts';
import { type TimelineRecord, toTimelineEntries } from '../../../src/incidents/blocks/incidentTimeline.ts';
import { toIncidentView } from '../../../src/incidents/blocks/incidentView.ts';
import { ACKED, OPEN, RESOLVED, TRIGGER_ID } from '../../machines/incident/fixtures.ts';
import { actionIds, expectWithinSlackLimits, visibleText } from '../../slack/blocks/blockKit.ts';

// Issue 22 items 4 and 7 on the card and the timeline: "Create channel" while the incident is
// open and has none, the channel named once it has one, and work activity lines in the story.

const STREAM = incidentStreamIdForRequest(TRIGGER_ID);
const card = (
  events: readonly IncidentEvent[],
  incidentChannel?: { channel: string | null; archived?: boolean },
) => {
  const state = events.reduce(incidentDecider.evolve, incidentDecider.initialState());
  const message = incidentCard(toIncidentView(STREAM, state), incidentChannel ? { incidentChannel } : {});
  expectWithinSlackLimits(message.blocks);
  return { ids: actionIds(message.blocks), text: visibleText(message.blocks) };
};

describe('the card and its incident channel', () => {
  it('offers Create channel while open with none, names the channel once made, never when resolved', () => {
    expect(card(ACKED, { channel: null }).ids).toContain('incident.channel');
    expect(card(OPEN, { channel: null }).ids).toContain('incident.channel');
    expect(card(RESOLVED, { channel: null }).ids).not.toContain('incident.channel');
    // Rendered outside the card reactor (`/incident show`): no button, as before.
    expect(card(ACKED).ids).not.toContain('incident.channel');
    const made = card(ACKED, { channel: 'C0INC42' });
    expect(made.ids).not.toContain('incident.channel');
    expect(made.text).toContain('Incident channel: <#C0INC42>');
    expect(card(RESOLVED, { channel: 'C0INC42', archived: true }).text).toContain('<#C0INC42> (archived)');
  });
});

describe('work activity on the timeline', () => {
  const line = (data: Record<string, unknown>, revision: number): TimelineRecord => ({
    type: 'RecordIncidentWorkActivity',
    kind: 'command',
    data: { streamId: STREAM, slackUserIds: [], channel: null, detail: null, ...data },
    metadata: { actor: 'system:incident-ack-reminders' },
    recordedAt: new Date('2026-11-23T09:30:00Z'),
    revision,
  });
  it('is part of the story, in words, with mentions', () => {
    const entries = toTimelineEntries([
      line({ kind: 'ack_reminder_sent', slackUserIds: ['U0CHEN'] }, 1),
      line({ kind: 'ack_reminder_kept', slackUserIds: ['U0CHEN'] }, 2),
      line({ kind: 'ack_reminder_unanswered', slackUserIds: ['U0CHEN'] }, 3),
      line({ kind: 'channel_created', slackUserIds: ['U0ANA'], channel: 'C0INC42', detail: 'inc-42-db' }, 4),
      line({ kind: 'channel_failed', detail: 'missing_scope' }, 5),
      line({ kind: 'channel_archived', channel: 'C0INC42' }, 6),
    ]);
    expect(entries.map((e) => e.summary)).toEqual([
      ':alarm_clock: Still acknowledged and open: reminded <@U0CHEN> by DM',
      ':thumbsup: <@U0CHEN> is still working on it',
      ':hourglass: The reminder to <@U0CHEN> went unanswered; the channel was told',
      ':hash: Incident channel <#C0INC42> created for <@U0ANA>',
      ":warning: The incident channel couldn't be created: Switchboard's Slack app lacks the channels:manage permission",
      ':file_cabinet: Incident channel <#C0INC42> archived',
    ]);
  });
});

describe('the reminder button’s value is parsed strictly', () => {
  it.each([
    ['incident-PINC042|0b7d8a5e-3c1f-5a2b-9d4e-6f7a8b9c0d1e|0', true],
    ['incident-PINC042|abc|12', true],
    ['timeoff-1|abc|0', false],
    ['incident-PINC042|abc|-1', false],
    ['incident-PINC042|abc|01', false],
    ['incident-PINC042|a b|0', false],
    ['incident-PINC042|abc', false],
    [`incident-PINC042|abc|0${'x'.repeat(300)}`, false],
  ])('%s → %s', (value, ok) => {
    expect(parseKeepButtonValue(value) !== null).toBe(ok);
  });
});

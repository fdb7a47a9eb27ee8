import { describe, expect, it } from 'vitest';
import type { IncidentEvent } from '../../../machines/incident/events.ts';
import {
  incidentTimeline,
  type TimelineEntry,
  type TimelineRecord,
  toTimelineEntries,
} from '../../../src/incidents/blocks/incidentTimeline.ts';
import { ev, OPEN, t } from '../../machines/incident/fixtures.ts';
import { expectWithinSlackLimits, visibleText } from '../../slack/blocks/blockKit.ts';

const NOW = new Date('2026-11-22T03:00:00.000Z');

/** Stored messages as handleCommand writes them: the command, then its events, same commandId. */
const stored = (
  steps: ReadonlyArray<{
    command: string;
    data?: Record<string, unknown>;
    actor: string;
    now: string;
    events: IncidentEvent[];
  }>,
): TimelineRecord[] => {
  const records: TimelineRecord[] = [];
  steps.forEach((step, i) => {
    const metadata = { commandId: `c${i}`, commandType: step.command, actor: step.actor, now: step.now };
    records.push({
      type: step.command,
      kind: 'command',
      data: step.data ?? {},
      metadata,
      recordedAt: NOW,
      revision: records.length,
    });
    for (const e of step.events) {
      records.push({
        type: e.type,
        kind: 'event',
        data: e.data,
        metadata,
        recordedAt: NOW,
        revision: records.length,
      });
    }
  });
  return records;
};

const history = stored([
  { command: 'TriggerIncident', actor: 'UANA01', now: t('00:00'), events: [ev.triggerRequested()] },
  {
    command: 'RecordIncidentUpstreamCallSucceeded',
    data: { action: 'trigger' },
    actor: 'system:upstream-calls',
    now: t('00:30'),
    events: OPEN.slice(1),
  },
  {
    command: 'AcknowledgeIncident',
    actor: 'UANA01',
    now: t('01:00'),
    events: [ev.ackRequested('ack-1', t('01:00'))],
  },
  {
    command: 'RecordIncidentUpstreamCallFailed',
    data: { action: 'acknowledge', attempt: 1, maxAttempts: 5, code: 'SB_UPSTREAM_UNAVAILABLE' },
    actor: 'system:upstream-calls',
    now: t('01:01'),
    events: [ev.failed('ack-1', 'acknowledge', t('01:01'), 1, t('01:31'))],
  },
  {
    command: 'CommandRefused',
    data: { command: 'AcknowledgeIncident', reason: 'acknowledge requested by UANA01 is in flight' },
    actor: 'UBOB02',
    now: t('01:02'),
    events: [],
  },
  {
    command: 'RecordIncidentWebhook',
    data: { eventType: 'incident.acknowledged' },
    actor: 'pagerduty',
    now: t('01:10'),
    events: [
      ev.acknowledged(null, t('01:09'), { slackUserId: null, upstreamUserId: 'PWEB', name: 'Wendy Web' }),
    ],
  },
  {
    command: 'RecordIncidentWebhook',
    data: { eventType: 'incident.acknowledged' },
    actor: 'pagerduty',
    now: t('01:11'),
    events: [],
  },
  {
    command: 'RecordIncidentCardPosted',
    data: { channel: 'C_OPS', ts: '1.2' },
    actor: 'system:slack-replies',
    now: t('01:12'),
    events: [ev.cardPosted(t('01:12'))],
  },
]);

describe('incident timeline entries', () => {
  it("by default tells the story: people's actions and the incident's state changes, no plumbing", () => {
    const entries = toTimelineEntries(history);
    expect(entries.map((e) => e.type)).toEqual([
      'IncidentTriggerRequested',
      'IncidentTriggered',
      'IncidentAcknowledgeRequested',
      'CommandRefused',
      'IncidentAcknowledged',
    ]);
    const text = entries.map((e) => e.summary).join('\n');
    for (const plumbing of ['Card posted', 'Webhook', 'Linked', 'call failed'])
      expect(text).not.toContain(plumbing);
  });

  it('shows a call that failed for good, and drops refusals no person caused', () => {
    const records = stored([
      {
        command: 'RecordIncidentUpstreamCallFailed',
        data: { action: 'acknowledge', attempt: 5, maxAttempts: 5, code: 'SB_UPSTREAM_UNAVAILABLE' },
        actor: 'system:upstream-calls',
        now: t('02:00'),
        events: [ev.failed('ack-1', 'acknowledge', t('02:00'), 5, null)],
      },
      {
        command: 'CommandRefused',
        data: { command: 'RecordIncidentWebhook', reason: 'stale' },
        actor: 'pagerduty:webhook',
        now: t('02:01'),
        events: [],
      },
    ]);
    const entries = toTimelineEntries(records);
    expect(entries.map((e) => e.type)).toEqual(['IncidentUpstreamCallFailed']);
    expect(entries[0]!.summary).toContain('gave up');
    // In words, never our internal codes (the timeline is shown to everyone who asks).
    expect(entries[0]!.summary).toContain('could not be reached');
    expect(entries[0]!.summary).not.toMatch(/SB_[A-Z_]+/);
  });

  it('shows no internal error code anywhere, default view or full audit', () => {
    for (const options of [
      { scope: 'story' },
      { scope: 'audit' },
      { scope: 'audit', commands: 'all' },
    ] as const) {
      const text = JSON.stringify(toTimelineEntries(history, options));
      expect(text, JSON.stringify(options)).not.toMatch(/SB_[A-Z_]+/);
    }
  });

  it('escapes the title in the notification text as well as in the blocks', () => {
    const [page] = incidentTimeline({ title: '#7 <!channel> db & co', entries: [] });
    expect(page!.text).not.toContain('<!channel>');
    expect(page!.text).toContain('&lt;!channel&gt; db &amp; co');
  });

  it('the audit lists events with actor and time, and inputs only when they changed nothing', () => {
    const entries = toTimelineEntries(history, { scope: 'audit' });
    const lines = entries.map((e) => `${e.at} ${e.type} ${e.actor ?? '-'} ${e.summary}`);
    expect(entries.map((e) => e.type)).toEqual([
      'IncidentTriggerRequested',
      'IncidentLinked',
      'IncidentTriggered',
      'IncidentAcknowledgeRequested',
      'IncidentUpstreamCallFailed',
      'CommandRefused',
      'IncidentAcknowledged',
      'RecordIncidentWebhook',
      'IncidentCardPosted',
    ]);
    expect(lines[0]).toBe(
      `${t('00:00')} IncidentTriggerRequested <@UANA01> Trigger requested: “db-primary disk 95%”`,
    );
    expect(lines[3]).toContain('Acknowledge requested');
    expect(lines[4]).toContain(
      'Upstream acknowledge call failed (attempt 1/5: the incident service could not be reached)',
    );
    expect(lines[4]).toContain(
      `next try <!date^${Date.parse('2026-11-22T02:01:31.000Z') / 1000}^{date_short_pretty} at {time_secs}|Nov 22, 02:01:31 UTC>`,
    );
    expect(lines[5]).toContain(
      '<@UBOB02> Refused acknowledge incident: acknowledge requested by UANA01 is in flight',
    );
    expect(lines[6]).toBe(`${t('01:09')} IncidentAcknowledged Wendy Web Acknowledged (from Slack)`);
    expect(lines[7]).toContain('Webhook incident.acknowledged received');
    expect(lines[8]).toContain('Card posted in <#C_OPS>');
  });

  it("the audit with 'all' includes every recorded input", () => {
    expect(toTimelineEntries(history, { scope: 'audit', commands: 'all' }).length).toBe(history.length);
  });
});

describe('incident timeline pages', () => {
  const entry = (i: number): TimelineEntry => ({
    revision: i,
    at: new Date(Date.UTC(2026, 10, 22, 2, 0, i)).toISOString(),
    kind: 'event',
    type: 'IncidentNoteAdded',
    actor: '<@UANA01>',
    summary: `Note added: “line ${i} ${'x'.repeat(i % 7 === 0 ? 400 : 20)}”`,
  });

  it('one page for a short history, with header, count and every line', () => {
    const [page, ...rest] = incidentTimeline({
      title: '#42 db-primary disk 95%',
      entries: toTimelineEntries(history, { scope: 'audit' }),
      note: 'the story only',
    });
    expect(rest).toEqual([]);
    expect(page!.blocks[0]).toMatchObject({
      type: 'header',
      text: { text: 'Timeline: #42 db-primary disk 95%' },
    });
    const text = visibleText(page!.blocks);
    expect(text).toContain('9 entries · the story only');
    // Issue 19: a Slack date token (the reader's zone, dated unless today for them), never in a code span.
    expect(text).toContain(
      `<!date^${Date.parse('2026-11-22T02:00:00.000Z') / 1000}^{date_short_pretty} at {time_secs}|Nov 22, 02:00:00 UTC> · Trigger requested: “db-primary disk 95%” · <@UANA01>`,
    );
    expect(text).toContain(':inbox_tray: Webhook incident.acknowledged received');
  });

  it('paginates a long history under the 50-block limit without losing or repeating a line', () => {
    const entries = Array.from({ length: 2000 }, (_, i) => entry(i));
    const pages = incidentTimeline({ title: 'x', entries }, { maxEntriesPerPage: 400 });
    expect(pages.length).toBeGreaterThan(1);
    for (const [i, page] of pages.entries()) {
      expectWithinSlackLimits(page.blocks);
      expect(visibleText(page.blocks)).toContain(`Page ${i + 1} of ${pages.length}`);
    }
    const all = pages.map((p) => visibleText(p.blocks)).join('\n');
    for (const i of [0, 1, 999, 1999])
      expect(all.match(new RegExp(`line ${i} `, 'g'))?.length, `line ${i}`).toBe(1);
  });

  it('keeps to the block cap even when each line needs its own section', () => {
    const entries = Array.from({ length: 120 }, (_, i) => entry(i));
    const pages = incidentTimeline({ title: 'x', entries }, { linesPerSection: 1, maxEntriesPerPage: 1000 });
    expect(pages.length).toBe(3);
    for (const page of pages) expect(page.blocks.length).toBeLessThanOrEqual(50);
  });

  it('says so when nothing is recorded', () => {
    const [page] = incidentTimeline({ title: 'x', entries: [] });
    expect(visibleText(page!.blocks)).toContain('Nothing recorded yet');
  });
});

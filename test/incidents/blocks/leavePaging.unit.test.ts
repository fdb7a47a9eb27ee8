import { describe, expect, it } from 'vitest';
import { incidentDecider } from '../../../machines/incident/decider.ts';
import { incidentStreamIdForRequest } from '../../../machines/incident/streams.ts';
import { incidentCard } from '../../../src/incidents/blocks/incidentCard.ts';
import { dayText, pageActivityText } from '../../../src/incidents/blocks/incidentTimeline.ts';
import { toIncidentView } from '../../../src/incidents/blocks/incidentView.ts';
import { pagedInstead, pagingSummary } from '../../../src/incidents/blocks/pagingSummary.ts';
import { OPEN, TRIGGER_ID } from '../../machines/incident/fixtures.ts';
import { visibleText } from '../../slack/blocks/blockKit.ts';

/** What the timeline and the card say when paging skipped someone on approved leave. */
const activity = (data: Record<string, unknown>) => ({
  type: 'RecordIncidentPageActivity',
  kind: 'command' as const,
  data: { slackUserId: null, name: null, level: null, detail: null, via: null, ...data },
});

describe('leave-aware paging in words', () => {
  it('the timeline names who was skipped, until which last day, and who is paged instead', () => {
    expect(pageActivityText({ kind: 'on_leave', slackUserId: 'U0ANA', level: 1, detail: '2026-12-03' })).toBe(
      ':palm_tree: <@U0ANA> skipped: on approved leave until 3 Dec (at level 1)',
    );
    expect(
      pageActivityText({
        kind: 'stand_in',
        slackUserId: 'U0BEN',
        standsInFor: 'U0ANA',
        level: 1,
        detail: 'Payments Primary',
      }),
    ).toBe('Paging <@U0BEN> instead of <@U0ANA> at level 1: next on Payments Primary');
    expect(pageActivityText({ kind: 'level_on_leave', level: 1, toLevel: 2 })).toBe(
      'Everyone at level 1 is on leave: paging level 2',
    );
    expect(pageActivityText({ kind: 'everyone_on_leave', level: 1 })).toBe(
      'Everyone on call, at every level, is on approved leave: nobody paged',
    );
    expect(dayText('2027-01-09')).toBe('9 Jan');
    expect(dayText('not a day')).toBeNull();
  });

  it('the card’s paging line says it too, beside the pages that went out', () => {
    expect(
      pagingSummary([
        activity({ kind: 'on_leave', slackUserId: 'U0ANA', level: 1, detail: '2026-12-03' }),
        activity({ kind: 'stand_in', slackUserId: 'U0BEN', standsInFor: 'U0ANA', level: 1 }),
      ]),
    ).toBe(
      ':iphone: *Paging* <@U0ANA> skipped: on approved leave until 3 Dec · <@U0BEN> paged instead of <@U0ANA>',
    );
    expect(
      pagingSummary([
        activity({ kind: 'on_leave', slackUserId: 'U0ANA', level: 1, detail: '2026-12-03' }),
        activity({ kind: 'level_on_leave', level: 1, toLevel: 2 }),
        activity({ kind: 'sms_submitted', slackUserId: 'U0DANA' }),
      ]),
    ).toBe(
      ':iphone: *Paging* everyone at level 1 is on leave: paging level 2 · <@U0ANA> skipped: on approved leave until 3 Dec · <@U0DANA> SMS sent',
    );
    expect(
      pagingSummary([
        activity({ kind: 'on_leave', slackUserId: 'U0FRANK', level: 1, detail: '2026-12-03' }),
        activity({ kind: 'everyone_on_leave', level: 1 }),
      ]),
    ).toBe(
      ':iphone: *Paging* everyone on call, at every level, is on approved leave: nobody paged · <@U0FRANK> skipped: on approved leave until 3 Dec',
    );
  });

  it('the card names who is really paged (issue 20): the assignee on leave, and who is paged instead', () => {
    // The fixtures' incident is assigned to Ana (UANA01), who is on leave: Ben (UBEN01) stands in.
    const history = [
      activity({ kind: 'on_leave', slackUserId: 'UANA01', level: 1, detail: '2026-12-03' }),
      activity({ kind: 'stand_in', slackUserId: 'UBEN01', standsInFor: 'UANA01', level: 1 }),
    ];
    expect([...pagedInstead(history)]).toEqual([
      ['UANA01', { why: 'on leave', instead: ['UBEN01'], otherwise: null }],
    ]);
    const view = toIncidentView(
      incidentStreamIdForRequest(TRIGGER_ID),
      OPEN.reduce(incidentDecider.evolve, incidentDecider.initialState()),
    );
    const text = visibleText(incidentCard(view, { pagedInstead: pagedInstead(history) }).blocks);
    expect(text).toContain('*Assigned*\n<@UANA01> (on leave) → <@UBEN01> is paged instead');
    // Nobody stands in at her level (the next level is paged): she is still said to be away.
    const noStandIn = pagedInstead([
      activity({ kind: 'on_leave', slackUserId: 'UANA01', level: 1, detail: '2026-12-03' }),
      activity({ kind: 'level_on_leave', level: 1, toLevel: 2 }),
    ]);
    expect(visibleText(incidentCard(view, { pagedInstead: noStandIn }).blocks)).toContain(
      '*Assigned*\n<@UANA01> (on leave: level 2 is paged)',
    );
    // Without leave, as before.
    expect(visibleText(incidentCard(view).blocks)).toContain('*Assigned*\n<@UANA01>');
    expect(visibleText(incidentCard(view).blocks)).not.toContain('paged instead');
  });
});

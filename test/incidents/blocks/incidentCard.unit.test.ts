import { describe, expect, it } from 'vitest';
import { incidentDecider } from '../../../machines/incident/decider.ts';
import type { IncidentEvent } from '../../../machines/incident/events.ts';
import { incidentStreamIdForRequest } from '../../../machines/incident/streams.ts';
import { failureText, incidentCard } from '../../../src/incidents/blocks/incidentCard.ts';
import {
  INCIDENT_ACTION,
  incidentActionsBlockId,
  streamIdFromActionsBlockId,
} from '../../../src/incidents/blocks/incidentIds.ts';
import { incidentRejectionText } from '../../../src/incidents/blocks/incidentReplies.ts';
import { toIncidentView } from '../../../src/incidents/blocks/incidentView.ts';
import { slackDatesAsFallback } from '../../../src/slack/time.ts';
import { ACKED, ANA_ACTOR, ev, OPEN, RESOLVED, TRIGGER_ID, t } from '../../machines/incident/fixtures.ts';
import { factsOf, pathsToEveryState } from '../../machines/incident/paths.ts';
import {
  actionIds,
  expectWithinSlackLimits,
  interactiveElements,
  visibleText,
} from '../../slack/blocks/blockKit.ts';

const STREAM = incidentStreamIdForRequest(TRIGGER_ID);
const card = (events: readonly IncidentEvent[]) => {
  const state = events.reduce(incidentDecider.evolve, incidentDecider.initialState());
  const view = toIncidentView(STREAM, state);
  const message = incidentCard(view);
  return {
    view,
    ...message,
    // Slack shows each reader the token in their zone; the fallback (UTC, named) is what is compared.
    all: slackDatesAsFallback(`${message.text}\n${visibleText(message.blocks)}`),
    raw: visibleText(message.blocks),
    ids: actionIds(message.blocks),
  };
};

const rejection = (...args: Parameters<typeof incidentRejectionText>) =>
  slackDatesAsFallback(incidentRejectionText(...args));

const ALL = [
  INCIDENT_ACTION.acknowledge,
  INCIDENT_ACTION.resolve,
  INCIDENT_ACTION.escalate,
  INCIDENT_ACTION.note,
  INCIDENT_ACTION.reassign,
];

/** Not a move of the incident: a status update for stakeholders (issue 22 item 3), offered while it is open. */
const WHILE_OPEN: string[] = [INCIDENT_ACTION.update];

describe('incident card', () => {
  it('while triggering: says who asked and when, and offers no buttons', () => {
    const c = card([ev.triggerRequested()]);
    expect(c.ids).toEqual([]);
    expect(c.all).toContain('Triggering…');
    expect(c.all).toContain('Requested by <@UANA01> Nov 22, 02:00 UTC');
    expect(c.all).toContain('Payments DB');
  });

  it('triggered: title with link and number, fields, and every button carrying only the stream id', () => {
    const c = card(OPEN);
    expect(c.ids).toEqual([...ALL, ...WHILE_OPEN]);
    expect(c.all).toContain('<https://acme.pagerduty.com/incidents/PINC042|#42 db-primary disk 95%>');
    expect(c.all).toContain(':red_circle: Triggered');
    expect(c.all).toContain('*Urgency*\nHigh');
    expect(c.all).toContain('*Assigned*\n<@UANA01>');
    expect(c.all).toContain('Triggered by <@UANA01> Nov 22, 02:00 UTC');
    for (const e of interactiveElements(c.blocks)) {
      if (e.type === 'button') expect(e.value).toBe(STREAM);
    }
    const actions = c.blocks.find((b) => b.type === 'actions');
    expect(streamIdFromActionsBlockId(actions?.block_id)).toBe(STREAM);
    expect(actions?.block_id).toBe(incidentActionsBlockId(STREAM));
    // Escalating and reassigning page people: both ask first.
    const escalate = interactiveElements(c.blocks).find((e) => e.action_id === INCIDENT_ACTION.escalate);
    const reassign = interactiveElements(c.blocks).find((e) => e.action_id === INCIDENT_ACTION.reassign);
    expect(escalate?.confirm).toBeDefined();
    expect(reassign?.type).toBe('users_select');
    expect(reassign?.confirm).toBeDefined();
  });

  it('acknowledge in flight: shows who asked, hides Acknowledge and Resolve', () => {
    const c = card([...OPEN, ev.ackRequested('ack-1', t('04:10'))]);
    expect(c.all).toContain('Acknowledging… requested by <@UANA01> Nov 22, 02:04 UTC');
    expect(c.ids).not.toContain(INCIDENT_ACTION.acknowledge);
    expect(c.ids).not.toContain(INCIDENT_ACTION.resolve);
    expect(c.ids).toContain(INCIDENT_ACTION.note);
  });

  it('acknowledged: says by whom and when; no Acknowledge button', () => {
    const c = card(ACKED);
    expect(c.all).toContain(':large_yellow_circle: Acknowledged');
    expect(c.all).toContain('Acknowledged by <@UANA01> Nov 22, 02:01 UTC');
    expect(c.text).toContain('Acknowledged by <@UANA01> Nov 22, 02:01 UTC');
    expect(c.ids).toEqual([...ALL.filter((id) => id !== INCIDENT_ACTION.acknowledge), ...WHILE_OPEN]);
  });

  it('acknowledged in the incident service: names the upstream user and where', () => {
    const c = card([
      ...OPEN,
      {
        type: 'IncidentAcknowledged',
        data: {
          at: t('02:00'),
          source: 'webhook',
          requestId: null,
          webhookEventId: 'wh-1',
          by: { slackUserId: null, upstreamUserId: 'PWEB', name: 'Wendy <Web>' },
        },
      },
    ]);
    expect(c.all).toContain('Acknowledged by Wendy &lt;Web&gt; Nov 22, 02:02 UTC in the incident service');
  });

  it('resolved: only Add note remains', () => {
    const c = card(RESOLVED);
    expect(c.ids).toEqual([INCIDENT_ACTION.note]);
    expect(c.all).toContain(':white_check_mark: Resolved');
    expect(c.all).toContain('Resolved by <@UANA01> Nov 22, 02:04 UTC');
  });

  it('a failing upstream call says what, when the retry is, and which attempt', () => {
    const c = card([
      ...OPEN,
      ev.ackRequested('ack-1', t('04:00')),
      ev.failed('ack-1', 'acknowledge', t('04:01'), 1, t('06:00')),
    ]);
    expect(c.all).toContain("Couldn't reach the incident service, retrying Nov 22, 02:06 UTC (attempt 2/5)");
  });

  it('a final failure says it gave up, and the move is offered again', () => {
    const attempts = [1, 2, 3, 4].flatMap((n) => [
      ev.failed('ack-1', 'acknowledge', t(`0${4 + n}:00`), n, t(`0${4 + n}:30`)),
      ev.retried('ack-1', 'acknowledge', t(`0${4 + n}:30`), n + 1),
    ]);
    const c = card([
      ...OPEN,
      ev.ackRequested('ack-1', t('04:00')),
      ...attempts,
      ev.failed('ack-1', 'acknowledge', t('20:00'), 5, null),
    ]);
    expect(c.all).toContain('Gave up trying to acknowledge after 5 attempts');
    expect(c.ids).toContain(INCIDENT_ACTION.acknowledge);
  });

  it('shows the latest note and escapes user text', () => {
    const c = card([...OPEN, ev.noteAdded(null, t('05:00'), 'N1', 'rm -rf <b>logs</b> & rotate')]);
    expect(c.all).toContain(
      '1 note · latest by <@UANA01> Nov 22, 02:05 UTC: “rm -rf &lt;b&gt;logs&lt;/b&gt; &amp; rotate”',
    );
  });

  it('dates times that fall on another day than the trigger', () => {
    const c = card([
      ...OPEN,
      ev.ackRequested('a', '2026-11-23T01:00:00.000Z'),
      ev.acknowledged('a', '2026-11-23T01:00:05.000Z'),
    ]);
    expect(c.all).toContain('Acknowledged by <@UANA01> Nov 23, 01:00 UTC');
    // Issue 19: a Slack date token, which each reader sees in their zone, dated unless it is today for them.
    expect(c.raw).toContain(
      `Acknowledged by <@UANA01> <!date^${Date.parse('2026-11-23T01:00:05.000Z') / 1000}^{date_short_pretty} at {time}|Nov 23, 01:00 UTC>`,
    );
  });

  it('in every reachable state: buttons are exactly the legal moves, within Slack limits', () => {
    const byMove = {
      acknowledge: INCIDENT_ACTION.acknowledge,
      resolve: INCIDENT_ACTION.resolve,
      escalate: INCIDENT_ACTION.escalate,
      note: INCIDENT_ACTION.note,
      reassign: INCIDENT_ACTION.reassign,
    } as const;
    for (const [key, path] of pathsToEveryState()) {
      const c = card(factsOf(path));
      expectWithinSlackLimits(c.blocks);
      const expected = (Object.keys(byMove) as (keyof typeof byMove)[])
        .filter((m) => c.view.moves[m])
        .map((m): string => byMove[m]);
      if (c.view.phase === 'open') expected.push(...WHILE_OPEN);
      expect(c.ids.sort(), key).toEqual([...expected].sort());
    }
  });
});

describe('incident rejection replies', () => {
  it('tells a second clicker who acknowledged and when', () => {
    expect(
      rejection({
        reason: 'already_acknowledged',
        by: ANA_ACTOR,
        at: '2026-11-22T02:04:00.000Z',
      }),
    ).toBe('Already acknowledged by <@UANA01> Nov 22, 02:04 UTC.');
  });

  it('tells a double-clicker their own request is in progress', () => {
    const details = {
      reason: 'acknowledge_in_flight',
      requestedBy: 'UANA01',
      requestedAt: t('04:00'),
    } as const;
    expect(rejection(details, 'UANA01')).toContain('You already asked for an acknowledge Nov 22, 02:04 UTC');
    expect(rejection(details, 'UBOB02')).toContain('an acknowledge requested by <@UANA01> Nov 22, 02:04 UTC');
  });

  it('explains ack-vs-resolve races and refusals on resolved incidents', () => {
    expect(rejection({ reason: 'resolve_in_flight', requestedBy: 'UBOB02', requestedAt: t('03:00') })).toBe(
      'Hold on: a resolve requested by <@UBOB02> Nov 22, 02:03 UTC is still in progress. Try again once the card shows the result.',
    );
    expect(rejection({ reason: 'already_resolved', by: null, at: t('03:00') })).toBe(
      'Already resolved by someone outside Slack Nov 22, 02:03 UTC.',
    );
  });

  it('answers every decider reason with something specific', () => {
    const reasons = [
      'not_triggered',
      'trigger_in_flight',
      'trigger_failed',
      'already_triggered',
      'already_acknowledged',
      'already_resolved',
      'acknowledge_in_flight',
      'resolve_in_flight',
      'escalate_in_flight',
      'reassign_in_flight',
      'already_assigned',
      'already_at_level',
      'incident_mismatch',
      'unknown_card',
    ] as const;
    const fallback = rejection({});
    for (const reason of reasons) expect(rejection({ reason }), reason).not.toBe(fallback);
  });
});

describe('failures on the card (issue 9 item 8)', () => {
  it.each(['SB_VALIDATION', 'SB_NOT_FOUND', 'SB_UPSTREAM_REJECTED', 'UNCODED'])(
    '%s: the service’s reason in words, never the code',
    (code) => {
      const text = failureText({
        action: 'escalate',
        attempt: 1,
        maxAttempts: 5,
        code,
        message: 'pagerduty updateIncident failed: HTTP 400 Escalation level must be between 1 and 2 <x>',
        nextAttemptAt: null,
        final: true,
        at: t('00:00'),
      });
      expect(text).toContain(
        'The incident service refused to escalate: Escalation level must be between 1 and 2 &lt;x&gt;',
      );
      expect(text).not.toMatch(/SB_|UNCODED|HTTP 400|pagerduty updateIncident/);
    },
  );
});

describe('what the card shows of the trigger (issue 9 item 10)', () => {
  it('the details typed in the trigger form, escaped', () => {
    const requested = ev.triggerRequested() as Extract<IncidentEvent, { type: 'IncidentTriggerRequested' }>;
    const withDetails: IncidentEvent = {
      ...requested,
      data: { ...requested.data, details: 'since 02:00 <!channel> & rising' },
    };
    const c = card([withDetails, ...OPEN.slice(1)]);
    expect(c.all).toContain('*Details*\nsince 02:00 &lt;!channel&gt; &amp; rising');
    expect(card(OPEN).all).not.toContain('*Details*');
  });
});

describe('priority and urgency selects (issue 22 item 1)', () => {
  const PRIORITIES = [
    { id: 'PP1', name: 'P1' },
    { id: 'PP2', name: 'P2 <!here>' },
  ];
  const selects = (events: readonly IncidentEvent[]) => {
    const state = events.reduce(incidentDecider.evolve, incidentDecider.initialState());
    const message = incidentCard(toIncidentView(STREAM, state), { priorities: PRIORITIES });
    const actions = (message.blocks ?? []).filter((b) => b.type === 'actions') as {
      elements: {
        type: string;
        action_id: string;
        options?: unknown[];
        initial_option?: { value: string };
      }[];
    }[];
    return actions.flatMap((b) => b.elements).filter((e) => e.type === 'static_select');
  };
  const priorityRequested = (priority: { id: string; name: string }): IncidentEvent => ({
    type: 'IncidentPriorityChangeRequested',
    data: {
      requestId: 'prio-1',
      by: 'U0ANA',
      asUser: { id: 'PANA', email: 'ana@example.org', name: 'Ana' },
      requestedAt: t('01:30'),
      priority,
    },
  });

  it('an open incident offers the priorities (plain text, never mrkdwn) and high/low, with the current urgency picked', () => {
    const s = selects(OPEN);
    expect(s.map((e) => e.action_id)).toEqual(['incident.priority', 'incident.urgency']);
    expect(JSON.stringify(s[0]!.options)).toContain('"type":"plain_text","text":"P2 <!here>"');
    expect(s[1]!.initial_option?.value).toBe('high');
  });

  it('while a priority change is in flight neither select is offered, and the card says what was asked', () => {
    const events = [...OPEN, priorityRequested({ id: 'PP1', name: 'P1' })];
    expect(selects(events)).toEqual([]);
    const state = events.reduce(incidentDecider.evolve, incidentDecider.initialState());
    expect(visibleText(incidentCard(toIncidentView(STREAM, state)).blocks)).toContain(
      'Setting the priority to P1…',
    );
  });

  it('a resolved incident offers neither', () => {
    expect(selects(RESOLVED)).toEqual([]);
  });
});

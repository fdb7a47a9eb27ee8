import { describe, expect, it } from 'vitest';
import { getStateNodes } from 'xstate/graph';
import type { IncidentCommand } from '../../../machines/incident/commands.ts';
import {
  availableIncidentMoves,
  findPendingRequest,
  type IncidentMove,
  incidentDecider,
  incidentStatus,
} from '../../../machines/incident/decider.ts';
import { type IncidentEvent, parseIncidentEvent } from '../../../machines/incident/events.ts';
import { incidentMachine } from '../../../machines/incident/machine.ts';
import { incidentKeyForRequest } from '../../../machines/incident/streams.ts';
import { ReplayMismatch } from '../../../machines/shared/machineDecider.ts';
import { deciderSpec } from '../../support/deciderSpec.ts';
import {
  ACKED,
  ANA_ACTOR,
  ANA_ASSIGNEE,
  BOB_ASSIGNEE,
  cmd,
  ev,
  OPEN,
  RESOLVED,
  TRIGGER_ID,
  t,
  upstreamIncident,
  WEB_ACTOR,
} from './fixtures.ts';
import { factsOf, pathsToEveryState, stateKey } from './paths.ts';

const spec = deciderSpec(incidentDecider);
const fold = (events: readonly IncidentEvent[]) =>
  events.reduce(incidentDecider.evolve, incidentDecider.initialState());
const rejected = (reason: string, details: Record<string, unknown> = {}) => ({
  code: 'SB_ILLEGAL_STATE',
  details: { reason, ...details },
});

// ---------------------------------------------------------------------------------------------
// Every state, every user move

type Outcome = 'ok' | string;
type Row = Readonly<Record<'trigger' | IncidentMove, Outcome>>;

const row = (
  trigger: Outcome,
  acknowledge: Outcome,
  resolve: Outcome,
  escalate: Outcome,
  reassign: Outcome,
  note: Outcome,
): Row => ({
  trigger,
  acknowledge,
  resolve,
  escalate,
  reassign,
  note,
});

const A = 'already_triggered';
const ACK = 'acknowledge_in_flight';
const RES = 'resolve_in_flight';
const ESC = 'escalate_in_flight';
const REA = 'reassign_in_flight';
const ACKD = 'already_acknowledged';

/** What each user move does in each state: 'ok' (a request is recorded) or the refusal reason. */
const EXPECTED: Readonly<Record<string, Row>> = {
  notTriggered: row(
    'ok',
    'not_triggered',
    'not_triggered',
    'not_triggered',
    'not_triggered',
    'not_triggered',
  ),
  triggering: row(
    'trigger_in_flight',
    'trigger_in_flight',
    'trigger_in_flight',
    'trigger_in_flight',
    'trigger_in_flight',
    'trigger_in_flight',
  ),
  triggerFailed: row(
    'trigger_failed',
    'trigger_failed',
    'trigger_failed',
    'trigger_failed',
    'trigger_failed',
    'trigger_failed',
  ),
  'open(triggered,idle,idle)': row(A, 'ok', 'ok', 'ok', 'ok', 'ok'),
  'open(triggered,acknowledging,idle)': row(A, ACK, ACK, 'ok', 'ok', 'ok'),
  'open(triggered,resolving,idle)': row(A, RES, RES, RES, RES, 'ok'),
  'open(triggered,idle,escalating)': row(A, 'ok', 'ok', ESC, ESC, 'ok'),
  'open(triggered,idle,reassigning)': row(A, 'ok', 'ok', REA, REA, 'ok'),
  'open(triggered,acknowledging,escalating)': row(A, ACK, ACK, ESC, ESC, 'ok'),
  'open(triggered,acknowledging,reassigning)': row(A, ACK, ACK, REA, REA, 'ok'),
  'open(triggered,resolving,escalating)': row(A, RES, RES, RES, RES, 'ok'),
  'open(triggered,resolving,reassigning)': row(A, RES, RES, RES, RES, 'ok'),
  'open(acknowledged,idle,idle)': row(A, ACKD, 'ok', 'ok', 'ok', 'ok'),
  'open(acknowledged,resolving,idle)': row(A, ACKD, RES, RES, RES, 'ok'),
  'open(acknowledged,idle,escalating)': row(A, ACKD, 'ok', ESC, ESC, 'ok'),
  'open(acknowledged,idle,reassigning)': row(A, ACKD, 'ok', REA, REA, 'ok'),
  'open(acknowledged,resolving,escalating)': row(A, ACKD, RES, RES, RES, 'ok'),
  'open(acknowledged,resolving,reassigning)': row(A, ACKD, RES, RES, RES, 'ok'),
  resolved: row(A, 'already_resolved', 'already_resolved', 'already_resolved', 'already_resolved', 'ok'),
};

const NEW_ID = 'b7e0c7a4-5f7d-5b0e-9d2a-000000000001';
const userCommand: Record<keyof Row, () => IncidentCommand> = {
  trigger: () => cmd.trigger(NEW_ID, t('20:00')),
  acknowledge: () => cmd.ack('probe-ack', t('20:00'), 'bob'),
  resolve: () => cmd.resolve('probe-resolve', t('20:00'), 'bob'),
  escalate: () => cmd.escalate('probe-escalate', t('20:00'), 3),
  reassign: () =>
    cmd.reassign('probe-reassign', t('20:00'), [{ id: 'PCAR', name: 'Carla', slackUserId: 'UCAR03' }]),
  note: () => cmd.note('probe-note', t('20:00')),
};
const requestType: Record<keyof Row, IncidentEvent['type']> = {
  trigger: 'IncidentTriggerRequested',
  acknowledge: 'IncidentAcknowledgeRequested',
  resolve: 'IncidentResolveRequested',
  escalate: 'IncidentEscalateRequested',
  reassign: 'IncidentReassignRequested',
  note: 'IncidentNoteRequested',
};

describe('incident machine: every state is reachable and decided', () => {
  const paths = pathsToEveryState();

  it('reaches exactly the states the table describes', () => {
    expect([...paths.keys()].sort()).toEqual(Object.keys(EXPECTED).sort());
  });

  it('reaches every state node of the machine', () => {
    const covered = new Set<string>();
    for (const p of paths.values()) for (const n of p.state._nodes) covered.add(n.id);
    const all = getStateNodes(incidentMachine.root).map((n) => n.id);
    expect(all.filter((id) => !covered.has(id))).toEqual([]);
  });

  it('generated histories are valid stored events and replay to the same state', () => {
    for (const [key, p] of paths) {
      const facts = factsOf(p);
      for (const e of facts) expect(parseIncidentEvent(JSON.parse(JSON.stringify(e)))).toEqual(e);
      expect(stateKey(fold(facts))).toBe(key);
    }
  });

  for (const [key, expected] of Object.entries(EXPECTED)) {
    describe(key, () => {
      for (const move of Object.keys(expected) as (keyof Row)[]) {
        const outcome = expected[move];
        it(`${move} → ${outcome === 'ok' ? requestType[move] : outcome}`, () => {
          const path = paths.get(key);
          expect(path, `no path to ${key}`).toBeDefined();
          const when = spec.given(factsOf(path!)).when(userCommand[move]());
          if (outcome === 'ok') {
            expect(when.events().events.map((e) => e.type)).toEqual([requestType[move]]);
          } else {
            when.then(rejected(outcome));
          }
        });
      }
      it('offers exactly the moves decide accepts (card buttons)', () => {
        const moves = availableIncidentMoves(fold(factsOf(paths.get(key)!)));
        for (const move of Object.keys(moves) as IncidentMove[]) {
          expect(moves[move], move).toBe(expected[move] === 'ok');
        }
      });
    });
  }
});

// ---------------------------------------------------------------------------------------------

describe('trigger from Slack', () => {
  it('records the request with the incident key the create call sends', () => {
    spec.given([]).when(cmd.trigger()).then([ev.triggerRequested()]);
    expect((ev.triggerRequested().data as { incidentKey: string }).incidentKey).toBe(
      `switchboard:${TRIGGER_ID}`,
    );
  });

  it('a redelivered trigger is a no-op', () => {
    spec.given([ev.triggerRequested()]).when(cmd.trigger()).then([]);
  });

  it('the create response links and confirms it', () => {
    spec
      .given([ev.triggerRequested()])
      .when(cmd.succeeded(TRIGGER_ID, 'trigger', t('00:30')))
      .then([ev.linked(), ev.triggered()]);
  });

  it('a self-assigned incident starts acknowledged upstream, and so here', () => {
    const { events, state } = spec
      .given([ev.triggerRequested()])
      .when(
        cmd.succeeded(TRIGGER_ID, 'trigger', t('00:30'), {
          incident: upstreamIncident({ status: 'acknowledged' }),
        }),
      )
      .events();
    expect(events.map((e) => e.type)).toEqual([
      'IncidentLinked',
      'IncidentTriggered',
      'IncidentAcknowledged',
    ]);
    expect(state.context.acknowledged?.by).toEqual(ANA_ACTOR);
  });

  it('the webhook may beat the response: it confirms the trigger, and the response is then a no-op', () => {
    const { events, state } = spec
      .given([ev.triggerRequested()])
      .when(cmd.webhook('wh-1', 'incident.triggered', t('00:31')))
      .events();
    expect(events.map((e) => e.type)).toEqual(['IncidentLinked', 'IncidentTriggered']);
    expect(events[1]!.data).toMatchObject({
      source: 'webhook',
      requestId: TRIGGER_ID,
      by: ANA_ACTOR,
      webhookEventId: 'wh-1',
    });
    spec
      .given([ev.triggerRequested(), ...events])
      .when(cmd.succeeded(TRIGGER_ID, 'trigger', t('00:32')))
      .then([]);
    expect(incidentStatus(state)).toBe('triggered');
  });

  it('retries durably, then gives up; a late webhook with our key still links it', () => {
    const failed1 = ev.failed(TRIGGER_ID, 'trigger', t('00:05'), 1, t('00:10'));
    spec
      .given([ev.triggerRequested()])
      .when(cmd.failed(TRIGGER_ID, 'trigger', t('00:05'), 1, t('00:10')))
      .then([failed1]);
    spec
      .given([ev.triggerRequested(), failed1])
      .when(cmd.failed(TRIGGER_ID, 'trigger', t('00:05'), 1, t('00:10')))
      .then([]);
    const retried = ev.retried(TRIGGER_ID, 'trigger', t('00:10'), 2);
    spec
      .given([ev.triggerRequested(), failed1])
      .when(cmd.retry(TRIGGER_ID, 'trigger', t('00:10'), 2))
      .then([retried]);
    spec
      .given([ev.triggerRequested(), failed1])
      .when(cmd.retry(TRIGGER_ID, 'trigger', t('00:10'), 3))
      .then([]);
    const final = ev.failed(TRIGGER_ID, 'trigger', t('00:20'), 2, null);
    const gaveUp = spec
      .given([ev.triggerRequested(), failed1, retried])
      .when(cmd.failed(TRIGGER_ID, 'trigger', t('00:20'), 2, null))
      .then([final]);
    expect(gaveUp.value).toBe('triggerFailed');
    expect(gaveUp.context.lastFailure).toMatchObject({ final: true, attempt: 2, maxAttempts: 5 });
    const late = spec
      .given([ev.triggerRequested(), failed1, retried, final])
      .when(cmd.webhook('wh-9', 'incident.triggered', t('00:40')))
      .events();
    expect(late.events.map((e) => e.type)).toEqual(['IncidentLinked', 'IncidentTriggered']);
    expect(incidentStatus(late.state)).toBe('triggered');
  });

  it('refuses a webhook for another incident key while waiting for ours', () => {
    spec
      .given([ev.triggerRequested()])
      .when(
        cmd.webhook('wh-1', 'incident.triggered', t('00:31'), {
          incident: upstreamIncident({ incidentKey: 'disk/db' }),
        }),
      )
      .then(rejected('incident_mismatch'));
  });
});

describe('acknowledge', () => {
  it('records the request, then the confirmed fact from the call', () => {
    spec
      .given(OPEN)
      .when(cmd.ack('ack-1', t('01:00')))
      .then([ev.ackRequested('ack-1', t('01:00'))]);
    const state = spec
      .given([...OPEN, ev.ackRequested('ack-1', t('01:00'))])
      .when(cmd.succeeded('ack-1', 'acknowledge', t('01:05')))
      .then([ev.acknowledged('ack-1', t('01:05'))]);
    expect(state.context.acknowledged).toEqual({ by: ANA_ACTOR, at: t('01:05'), source: 'slack' });
    expect(state.context.statusRequest).toBeNull();
  });

  it('a double click while the first is in flight is refused with who asked and when', () => {
    spec
      .given([...OPEN, ev.ackRequested('ack-1', t('01:00'))])
      .when(cmd.ack('ack-2', t('01:01')))
      .then(rejected('acknowledge_in_flight', { requestedBy: 'UANA01', requestedAt: t('01:00') }));
  });

  it("a second user's click on an acknowledged incident says who acknowledged it and when", () => {
    spec
      .given(ACKED)
      .when(cmd.ack('ack-bob', t('04:00'), 'bob'))
      .then(rejected('already_acknowledged', { by: ANA_ACTOR, at: t('01:05') }));
  });

  it('a Slack retry of the same click is a no-op, not a refusal', () => {
    spec
      .given([...OPEN, ev.ackRequested('ack-1', t('01:00'))])
      .when(cmd.ack('ack-1', t('01:00')))
      .then([]);
  });

  it('is refused while a resolve is in flight', () => {
    spec
      .given([...OPEN, ev.resolveRequested('res-1', t('03:00'), 'bob')])
      .when(cmd.ack('ack-1', t('03:01')))
      .then(rejected('resolve_in_flight', { requestedBy: 'UBOB02', requestedAt: t('03:00') }));
  });

  it('the webhook of our own acknowledge confirms it, and the later call result is a no-op', () => {
    const pending = [...OPEN, ev.ackRequested('ack-1', t('01:00'))];
    const { events } = spec
      .given(pending)
      .when(
        cmd.webhook('wh-ack', 'incident.acknowledged', t('01:02'), {
          agent: { ...WEB_ACTOR, upstreamUserId: 'PANA', name: 'Ana Silva' },
        }),
      )
      .events();
    expect(events).toEqual([
      {
        type: 'IncidentAcknowledged',
        data: {
          at: t('01:02'),
          source: 'webhook',
          webhookEventId: 'wh-ack',
          by: ANA_ACTOR,
          requestId: 'ack-1',
          upstreamAt: t('01:02'),
        },
      },
    ]);
    spec
      .given([...pending, ...events])
      .when(cmd.succeeded('ack-1', 'acknowledge', t('01:03')))
      .then([]);
  });

  it('is allowed again after upstream un-acknowledges (ack timeout re-trigger)', () => {
    const unack = spec
      .given(ACKED)
      .when(cmd.webhook('wh-u', 'incident.unacknowledged', t('31:05')))
      .events();
    expect(unack.events).toEqual([ev.unacknowledged('wh-u', t('31:05'))]);
    spec
      .given([...ACKED, ...unack.events])
      .when(cmd.ack('ack-2', t('32:00'), 'bob'))
      .then([ev.ackRequested('ack-2', t('32:00'), 'bob')]);
  });
});

describe('resolve', () => {
  it('is refused while an acknowledge is in flight: one status change at a time', () => {
    spec
      .given([...OPEN, ev.ackRequested('ack-1', t('01:00'))])
      .when(cmd.resolve('res-1', t('01:01'), 'bob'))
      .then(rejected('acknowledge_in_flight', { requestedBy: 'UANA01' }));
  });

  it('confirmed by the call; a second resolve says who resolved and when', () => {
    const state = spec
      .given([...ACKED, ev.resolveRequested('res-1', t('04:00'))])
      .when(cmd.succeeded('res-1', 'resolve', t('04:05')))
      .then([ev.resolved('res-1', t('04:05'))]);
    expect(state.value).toBe('resolved');
    spec
      .given(RESOLVED)
      .when(cmd.resolve('res-2', t('05:00'), 'bob'))
      .then(rejected('already_resolved', { by: ANA_ACTOR, at: t('04:05') }));
  });

  it('resolved in the web app while our acknowledge waits for a retry: the retry is dropped', () => {
    const history = [
      ...OPEN,
      ev.ackRequested('ack-1', t('01:00')),
      ev.failed('ack-1', 'acknowledge', t('01:01'), 1, t('01:30')),
    ];
    const { events, state } = spec
      .given(history)
      .when(cmd.webhook('wh-r', 'incident.resolved', t('01:10')))
      .events();
    expect(events).toEqual([ev.resolvedByWebhook('wh-r', t('01:10'))]);
    expect(findPendingRequest(state, 'ack-1')).toBeNull();
    spec
      .given([...history, ...events])
      .when(cmd.retry('ack-1', 'acknowledge', t('01:30'), 2))
      .then([]);
    spec
      .given([...history, ...events])
      .when(cmd.succeeded('ack-1', 'acknowledge', t('01:31')))
      .then([]);
  });
});

describe('out-of-order and repeated webhooks', () => {
  it('a late acknowledgement after resolve is recorded as ignored and does not reopen', () => {
    const state = spec
      .given(RESOLVED)
      .when(cmd.webhook('wh-late', 'incident.acknowledged', t('01:04'), {}, t('04:10')))
      .then([
        ev.webhookIgnored('wh-late', 'incident.acknowledged', t('01:04'), 'already_resolved', t('04:10')),
      ]);
    expect(state.value).toBe('resolved');
    expect(state.context.ignoredWebhookCount).toBe(1);
  });

  it('the same webhook applied twice is a no-op', () => {
    const once = spec
      .given(OPEN)
      .when(cmd.webhook('wh-1', 'incident.acknowledged', t('01:00')))
      .events();
    expect(once.events.map((e) => e.type)).toEqual(['IncidentAcknowledged']);
    spec
      .given([...OPEN, ...once.events])
      .when(cmd.webhook('wh-1', 'incident.acknowledged', t('01:00')))
      .then([]);
    const ignored = ev.webhookIgnored(
      'wh-late',
      'incident.acknowledged',
      t('01:04'),
      'already_resolved',
      t('04:10'),
    );
    spec
      .given([...RESOLVED, ignored])
      .when(cmd.webhook('wh-late', 'incident.acknowledged', t('01:04'), {}, t('04:11')))
      .then([]);
  });

  it('resolved delivered before acknowledged ends resolved (T4)', () => {
    const r = spec
      .given(OPEN)
      .when(cmd.webhook('wh-r', 'incident.resolved', t('02:00')))
      .events();
    const a = spec
      .given([...OPEN, ...r.events])
      .when(cmd.webhook('wh-a', 'incident.acknowledged', t('01:00'), {}, t('02:01')))
      .events();
    expect(a.events.map((e) => e.type)).toEqual(['IncidentWebhookIgnored']);
    expect(incidentStatus(a.state)).toBe('resolved');
  });

  it('a status webhook older than the last status change is stale', () => {
    // Acknowledged via Slack at 02:01:05; an un-acknowledge generated at 02:01:00 arrives after.
    spec
      .given(ACKED)
      .when(cmd.webhook('wh-u', 'incident.unacknowledged', t('01:00'), {}, t('01:10')))
      .then([ev.webhookIgnored('wh-u', 'incident.unacknowledged', t('01:00'), 'stale', t('01:10'))]);
  });

  it("orders a webhook against our call's answer by the vendor's times only, never by our clock", () => {
    // Our acknowledge landed at 02:01:05 (vendor clock) but its answer was recorded at 02:09 on our
    // clock (late, or our clock ahead); a web-app resolve at 02:01:06 is newer and must apply.
    const pending = [...OPEN, ev.ackRequested('ack-1', t('01:00'))];
    const answered = spec
      .given(pending)
      .when(
        cmd.succeeded('ack-1', 'acknowledge', t('09:00'), {
          incident: upstreamIncident({ status: 'acknowledged', statusChangedAt: t('01:05') }),
        }),
      )
      .then([ev.acknowledged('ack-1', t('09:00'), ANA_ACTOR, t('01:05'))]);
    expect(answered.context.upstreamStatusAt).toBe(t('01:05'));
    spec
      .given([...pending, ev.acknowledged('ack-1', t('09:00'), ANA_ACTOR, t('01:05'))])
      .when(cmd.webhook('wh-r', 'incident.resolved', t('01:06'), {}, t('09:01')))
      .then([ev.resolvedByWebhook('wh-r', t('01:06'))]);
    // Only a webhook that occurred before 02:01:05 on the vendor's clock is stale.
    spec
      .given([...pending, ev.acknowledged('ack-1', t('09:00'), ANA_ACTOR, t('01:05'))])
      .when(cmd.webhook('wh-u', 'incident.unacknowledged', t('01:04'), {}, t('09:01')))
      .then([ev.webhookIgnored('wh-u', 'incident.unacknowledged', t('01:04'), 'stale', t('09:01'))]);
  });

  it('without a vendor time for our status, a webhook is applied (the read-back converges later)', () => {
    const history = [...OPEN, ev.ackRequested('ack-1', t('01:00')), ev.acknowledged('ack-1', t('01:05'))];
    spec
      .given(history)
      .when(cmd.webhook('wh-u', 'incident.unacknowledged', t('01:00'), {}, t('01:10')))
      .then([ev.unacknowledged('wh-u', t('01:00'))]);
  });

  it('an explicit reopen upstream is the only way out of resolved', () => {
    const state = spec
      .given(RESOLVED)
      .when(cmd.webhook('wh-o', 'incident.reopened', t('09:00')))
      .then([ev.reopened('wh-o', t('09:00'))]);
    expect(incidentStatus(state)).toBe('triggered');
    expect(availableIncidentMoves(state).acknowledge).toBe(true);
  });

  it('replay accepts a late webhook after resolve without ReplayMismatch', () => {
    const history = [
      ...RESOLVED,
      ev.webhookIgnored('wh-late', 'incident.acknowledged', t('01:04'), 'already_resolved', t('04:10')),
      ev.noteRequested('note-1', t('05:00')),
    ];
    const stored = history.map((e) => parseIncidentEvent(JSON.parse(JSON.stringify(e))));
    const state = fold(stored);
    expect(state.value).toBe('resolved');
    expect(state.context.pendingNotes.map((n) => n.requestId)).toEqual(['note-1']);
    // Whereas a raw acknowledgement after resolve is exactly what replay must refuse loudly.
    expect(() => fold([...RESOLVED, ev.acknowledged(null, t('04:10'))])).toThrow(ReplayMismatch);
  });
});

describe('first sight of an incident created outside Slack', () => {
  const outside = { incidentKey: 'disk/db-primary' };

  it('links, triggers and catches up with the status the payload reports', () => {
    const { events, state } = spec
      .given([])
      .when(
        cmd.webhook('wh-1', 'incident.escalated', t('05:00'), {
          incident: upstreamIncident({ ...outside, status: 'acknowledged', assignees: [BOB_ASSIGNEE] }),
        }),
      )
      .events();
    expect(events.map((e) => e.type)).toEqual([
      'IncidentLinked',
      'IncidentTriggered',
      'IncidentEscalated',
      'IncidentAcknowledged',
    ]);
    expect(events[1]!.data).toMatchObject({ by: null, requestId: null, source: 'webhook', at: t('00:30') });
    expect(incidentStatus(state)).toBe('acknowledged');
    expect(state.context.incident?.escalationLevel).toBe(2);
  });

  it('a resolved incident seen first is folded straight to resolved', () => {
    const { state } = spec
      .given([])
      .when(
        cmd.webhook('wh-1', 'incident.resolved', t('05:00'), {
          incident: upstreamIncident({ ...outside, status: 'resolved' }),
        }),
      )
      .events();
    expect(state.value).toBe('resolved');
    expect(state.context.resolved?.by).toEqual(WEB_ACTOR);
  });

  it('a note for an incident we have not seen is refused (the index routes it, or nothing can)', () => {
    spec
      .given([])
      .when(cmd.webhook('wh-n', 'incident.annotated', t('05:00'), { note: { id: 'N1', content: 'hi' } }))
      .then(rejected('not_triggered'));
  });

  it('a webhook for another upstream incident is refused', () => {
    spec
      .given(OPEN)
      .when(cmd.webhook('wh-x', 'incident.acknowledged', t('05:00'), { incidentId: 'POTHER' }))
      .then(rejected('incident_mismatch'));
  });
});

describe('escalate and reassign', () => {
  it('escalates to the next level by default, confirmed with the response', () => {
    spec
      .given(OPEN)
      .when(cmd.escalate('esc-1', t('02:00')))
      .then([ev.escalateRequested('esc-1', t('02:00'), 2)]);
    const state = spec
      .given([...OPEN, ev.escalateRequested('esc-1', t('02:00'), 2)])
      .when(
        cmd.succeeded('esc-1', 'escalate', t('02:01'), {
          incident: upstreamIncident({ escalationLevel: 2, assignees: [BOB_ASSIGNEE] }),
        }),
      )
      .then([ev.escalated('esc-1', t('02:01'), 2, [BOB_ASSIGNEE])]);
    expect(state.context.incident).toMatchObject({ escalationLevel: 2, assignees: [BOB_ASSIGNEE] });
  });

  it('refuses escalating to the current level', () => {
    spec
      .given(OPEN)
      .when(cmd.escalate('esc-1', t('02:00'), 1))
      .then(rejected('already_at_level', { level: 1 }));
  });

  it('the webhook echo of an escalation we recorded is a no-op', () => {
    const history = [
      ...OPEN,
      ev.escalateRequested('esc-1', t('02:00')),
      ev.escalated('esc-1', t('02:01'), 2, [BOB_ASSIGNEE]),
    ];
    spec
      .given(history)
      .when(
        cmd.webhook('wh-e', 'incident.escalated', t('02:01'), {
          incident: upstreamIncident({ assignees: [BOB_ASSIGNEE] }),
        }),
      )
      .then([]);
  });

  it('refuses reassigning to the current assignees', () => {
    spec
      .given(OPEN)
      .when(cmd.reassign('rea-1', t('02:00'), [ANA_ASSIGNEE]))
      .then(rejected('already_assigned', { assignees: [ANA_ASSIGNEE] }));
  });

  it('a reassignment upstream that re-triggers an acknowledged incident is followed', () => {
    const { events, state } = spec
      .given(ACKED)
      .when(
        cmd.webhook('wh-re', 'incident.reassigned', t('06:00'), {
          incident: upstreamIncident({ status: 'triggered', assignees: [BOB_ASSIGNEE] }),
        }),
      )
      .events();
    expect(events.map((e) => e.type)).toEqual(['IncidentReassigned', 'IncidentUnacknowledged']);
    expect(incidentStatus(state)).toBe('triggered');
    expect(state.context.incident?.assignees).toEqual([BOB_ASSIGNEE]);
  });

  it('a final failure frees the slot and leaves the failure for the card', () => {
    const history = [...OPEN, ev.reassignRequested('rea-1', t('02:00'))];
    const state = spec
      .given(history)
      .when(cmd.failed('rea-1', 'reassign', t('02:01'), 1, null))
      .then([ev.failed('rea-1', 'reassign', t('02:01'), 1, null)]);
    expect(state.context.assignmentRequest).toBeNull();
    expect(state.context.lastFailure).toMatchObject({ action: 'reassign', final: true });
    expect(availableIncidentMoves(state).reassign).toBe(true);
  });
});

describe('notes', () => {
  it('are allowed after resolve', () => {
    spec
      .given(RESOLVED)
      .when(cmd.note('note-1', t('05:00')))
      .then([ev.noteRequested('note-1', t('05:00'))]);
  });

  it('our note webhook beating the response confirms the pending note; the response is then a no-op', () => {
    const history = [...OPEN, ev.noteRequested('note-1', t('02:00'))];
    const { events } = spec
      .given(history)
      .when(
        cmd.webhook('wh-n', 'incident.annotated', t('02:01'), {
          agent: { slackUserId: null, upstreamUserId: 'PANA', name: 'Ana Silva' },
          note: { id: 'N1', content: 'disk cleanup running' },
        }),
      )
      .events();
    expect(events).toEqual([
      {
        type: 'IncidentNoteAdded',
        data: {
          at: t('02:01'),
          source: 'webhook',
          webhookEventId: 'wh-n',
          by: ANA_ACTOR,
          requestId: 'note-1',
          noteId: 'N1',
          content: 'disk cleanup running',
          upstreamAt: t('02:01'),
        },
      },
    ]);
    spec
      .given([...history, ...events])
      .when(cmd.succeeded('note-1', 'note', t('02:02'), { noteId: 'N1' }))
      .then([]);
  });

  it('a note already known by id is a no-op', () => {
    spec
      .given([...OPEN, ev.noteAdded(null, t('02:00'), 'N1')])
      .when(
        cmd.webhook('wh-n2', 'incident.annotated', t('02:01'), {
          note: { id: 'N1', content: 'disk cleanup running' },
        }),
      )
      .then([]);
  });
});

describe('priority and urgency', () => {
  it('a priority webhook changes the priority; other webhooks catch up on urgency', () => {
    const p = spec
      .given(OPEN)
      .when(
        cmd.webhook('wh-p', 'incident.priority_updated', t('03:00'), {
          incident: upstreamIncident({ priority: { id: 'PP1', name: 'P1' } }),
        }),
      )
      .events();
    expect(p.events.map((e) => e.type)).toEqual(['IncidentPriorityChanged']);
    expect(p.state.context.incident?.priority).toEqual({ id: 'PP1', name: 'P1' });
    const u = spec
      .given(OPEN)
      .when(
        cmd.webhook('wh-a', 'incident.acknowledged', t('03:00'), {
          incident: upstreamIncident({ status: 'acknowledged', urgency: 'low' }),
        }),
      )
      .events();
    expect(u.events.map((e) => e.type)).toEqual(['IncidentAcknowledged', 'IncidentUrgencyChanged']);
  });
});

describe('cards', () => {
  it('records a card once and its updates', () => {
    spec
      .given([ev.triggerRequested()])
      .when(cmd.cardPosted(t('00:01')))
      .then([ev.cardPosted(t('00:01'))]);
    spec
      .given([ev.triggerRequested(), ev.cardPosted(t('00:01'))])
      .when(cmd.cardPosted(t('00:02')))
      .then([]);
    const state = spec
      .given([...OPEN, ev.cardPosted(t('00:01'))])
      .when(cmd.cardUpdated(t('00:31')))
      .then([
        { type: 'IncidentCardUpdated', data: { channel: 'C_OPS', ts: '1700000000.000100', at: t('00:31') } },
      ]);
    expect(state.context.cards).toEqual([
      { channel: 'C_OPS', ts: '1700000000.000100', postedAt: t('00:01'), updatedAt: t('00:31') },
    ]);
    spec
      .given(OPEN)
      .when(cmd.cardUpdated(t('00:31')))
      .then(rejected('unknown_card'));
  });
});

describe('incident keys', () => {
  it('the trigger request carries the key derived from its request id', () => {
    const { events } = spec.given([]).when(cmd.trigger()).events();
    expect(events[0]!.data).toMatchObject({
      incidentKey: incidentKeyForRequest(TRIGGER_ID),
      requestId: TRIGGER_ID,
    });
  });
});

describe('reading the incident back', () => {
  const snapshot = (
    over: Partial<Parameters<typeof upstreamIncident>[0]>,
    now: string,
    by: typeof WEB_ACTOR | null = WEB_ACTOR,
  ): IncidentCommand => ({
    type: 'RecordIncidentUpstreamSnapshot',
    data: { incident: upstreamIncident(over), statusChangedBy: by },
    metadata: { commandId: `read:${now}`, now, actor: 'system:incident-upstream' },
  });

  it('applies a newer vendor status, attributed to who the vendor says changed it', () => {
    spec
      .given(ACKED)
      .when(snapshot({ status: 'resolved', statusChangedAt: t('02:00') }, t('02:30')))
      .then([
        {
          type: 'IncidentResolved',
          data: {
            at: t('02:00'),
            source: 'webhook',
            requestId: null,
            webhookEventId: null,
            by: WEB_ACTOR,
            resolution: null,
            upstreamAt: t('02:00'),
          },
        },
      ]);
  });

  it('a read that lags behind, or repeats what we hold, changes nothing', () => {
    // ACKED holds the acknowledgement at 02:01:05 on the vendor's clock.
    spec
      .given(ACKED)
      .when(snapshot({ status: 'triggered', statusChangedAt: t('00:30') }, t('05:00')))
      .then([]);
    spec
      .given(ACKED)
      .when(snapshot({ status: 'triggered', statusChangedAt: t('01:05') }, t('05:00')))
      .then([]);
    spec
      .given(ACKED)
      .when(snapshot({ status: 'acknowledged', statusChangedAt: t('03:00') }, t('05:00')))
      .then([]);
    spec
      .given(ACKED)
      .when(snapshot({ status: 'resolved', statusChangedAt: null }, t('05:00')))
      .then([]);
  });

  it('at the same vendor instant as what we hold, a read moves the status forward only', () => {
    // The vendor's times are often whole seconds: an acknowledge and the resolve right after it
    // share one. The read shows what the vendor has now; a lagging read cannot be ahead of it.
    spec
      .given(ACKED)
      .when(snapshot({ status: 'resolved', statusChangedAt: t('01:05') }, t('05:00')))
      .then([
        {
          type: 'IncidentResolved',
          data: {
            at: t('01:05'),
            source: 'webhook',
            requestId: null,
            webhookEventId: null,
            by: WEB_ACTOR,
            resolution: null,
            upstreamAt: t('01:05'),
          },
        },
      ]);
    spec
      .given(RESOLVED)
      .when(snapshot({ status: 'acknowledged', statusChangedAt: t('04:05') }, t('05:00')))
      .then([]);
  });

  it('a resolved incident the vendor reopened and acknowledged is reopened, then acknowledged', () => {
    const state = spec
      .given(RESOLVED)
      .when(snapshot({ status: 'acknowledged', statusChangedAt: t('06:00') }, t('06:30')))
      .then([
        {
          type: 'IncidentReopened',
          data: {
            at: t('06:00'),
            source: 'webhook',
            requestId: null,
            webhookEventId: null,
            by: WEB_ACTOR,
            upstreamAt: t('06:00'),
          },
        },
        {
          type: 'IncidentAcknowledged',
          data: {
            at: t('06:00'),
            source: 'webhook',
            requestId: null,
            webhookEventId: null,
            by: WEB_ACTOR,
            upstreamAt: t('06:00'),
          },
        },
      ]);
    expect(incidentStatus(state)).toBe('acknowledged');
  });

  it('confirms our pending request when the vendor says it was us', () => {
    spec
      .given([...OPEN, ev.ackRequested('ack-1', t('01:00'))])
      .when(snapshot({ status: 'acknowledged', statusChangedAt: t('01:01') }, t('01:30'), ANA_ACTOR))
      .then(
        [ev.acknowledged('ack-1', t('01:01'), ANA_ACTOR, t('01:01'))].map((e) => ({
          ...e,
          data: { ...e.data, source: 'webhook' },
        })) as IncidentEvent[],
      );
  });
});

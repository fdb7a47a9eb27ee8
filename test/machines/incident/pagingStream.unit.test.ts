import { describe, it } from 'vitest';
import { type IncidentPagingEvent, incidentPagingDecider } from '../../../machines/incident/paging.ts';
import type { Command } from '../../../machines/shared/messages.ts';
import { deciderSpec } from '../../support/deciderSpec.ts';

/**
 * `incidentpaging-<id>` (issue 18): each level's page is due once per round, and a person whose page
 * cannot be delivered is unreachable once per round (found again, by another receipt or a retry,
 * it changes nothing); a new round starts afresh.
 */
const spec = deciderSpec(incidentPagingDecider);
const INCIDENT = 'incident-PINC042';
const AT = '2026-11-23T09:05:00.000Z';

const mark = (round: number, reason: 'sms_refused' | 'busy', id: string): Command =>
  ({
    type: 'MarkPageUndeliverable',
    data: { incident: INCIDENT, level: 1, round, slackUserId: 'U0ANA', reason, replan: true },
    metadata: { now: AT, commandId: id, actor: 'system:paging' },
  }) as Command;
const marked = (round: number, reason: 'sms_refused' | 'busy'): IncidentPagingEvent => ({
  type: 'IncidentPageUndeliverable',
  data: {
    incident: INCIDENT,
    level: 1,
    ...(round ? { round } : {}),
    slackUserId: 'U0ANA',
    reason,
    replan: true,
    at: AT,
  },
});
const due: IncidentPagingEvent = {
  type: 'IncidentPagingDue',
  data: { incident: INCIDENT, level: 1, at: AT },
};

describe('incident paging stream', () => {
  it('makes a person unreachable once a round, beside the levels due', () => {
    spec
      .given([due])
      .when(mark(0, 'sms_refused', 'm1') as never)
      .then([marked(0, 'sms_refused')]);
    spec
      .given([due, marked(0, 'sms_refused')])
      .when(mark(0, 'busy', 'm2') as never)
      .then([]);
    spec
      .given([due, marked(0, 'sms_refused')])
      .when(mark(1, 'busy', 'm3') as never)
      .then([marked(1, 'busy')]);
  });
});

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  actorFromWebhookAgent,
  incidentWebhookTypeOf,
  noteFromWebhook,
  pagerDutyWebhookEnvelopeSchema,
  upstreamIncidentFromWebhook,
} from '../../src/incidents/pagerdutyMapping.ts';

const SAMPLES = new URL('../../sandbox/simulators/pagerduty/samples/', import.meta.url);
const sample = (name: string): unknown => JSON.parse(readFileSync(new URL(name, SAMPLES), 'utf8'));

describe('PagerDuty webhook payloads as decider input (vendor samples)', () => {
  it('reads an incident', () => {
    const incident = upstreamIncidentFromWebhook(sample('data-incident.json'), (id) =>
      id === 'PTUXL6G' ? 'U0ANA' : null,
    );
    expect(incident).toEqual({
      id: 'PGR0VU2',
      number: 2,
      title: 'A little bump in the road',
      status: 'triggered',
      urgency: 'high',
      priority: { id: 'PSO75BM', name: 'P1' },
      service: { id: 'PF9KMXH', name: 'API Service' },
      assignees: [{ id: 'PTUXL6G', name: 'User 123', slackUserId: 'U0ANA' }],
      htmlUrl: 'https://acme.pagerduty.com/incidents/PGR0VU2',
      createdAt: '2020-04-09T15:16:27Z',
      incidentKey: 'd3640fbd41094207a1c11e58e46b1662',
      escalationLevel: null,
      resolveReason: null,
    });
  });

  it('reads a note and its incident reference', () => {
    expect(noteFromWebhook(sample('data-incident_note.json'))).toEqual({
      incidentId: 'PGR0VU2',
      note: { id: 'P2LA89X', content: 'I sure am glad we are using PagerDuty!' },
    });
  });

  it('reads the envelope and the agent', () => {
    const envelope = pagerDutyWebhookEnvelopeSchema.parse(sample('envelope-incident-priority_updated.json'));
    expect(envelope.event.event_type).toBe('incident.priority_updated');
    expect(actorFromWebhookAgent(envelope.event.agent)).toEqual({
      slackUserId: null,
      upstreamUserId: 'PLH1HKV',
      name: 'Tenex Engineer',
    });
    expect(
      actorFromWebhookAgent({ id: 'PSVC001', type: 'service_reference', summary: 'Payments API' }),
    ).toEqual({
      slackUserId: null,
      upstreamUserId: null,
      name: 'Payments API',
    });
    expect(actorFromWebhookAgent(null)).toBeNull();
  });

  it('maps event types: delegated is a reassignment; others are recorded only', () => {
    expect(incidentWebhookTypeOf('incident.delegated')).toBe('incident.reassigned');
    expect(incidentWebhookTypeOf('incident.resolved')).toBe('incident.resolved');
    expect(incidentWebhookTypeOf('incident.responder.added')).toBeNull();
    expect(incidentWebhookTypeOf('service.updated')).toBeNull();
  });

  it('refuses an incident without the fields the card needs', () => {
    expect(() => upstreamIncidentFromWebhook({ id: 'P1' })).toThrow();
  });
});

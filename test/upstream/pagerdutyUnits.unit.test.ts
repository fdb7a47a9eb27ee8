import { describe, expect, it } from 'vitest';
import { enqueueBody } from '../../src/upstream/pagerduty/eventsApi.ts';
import { incidentChanges } from '../../src/upstream/pagerduty/incidents.ts';
import { checkPage, paginate } from '../../src/upstream/pagerduty/pagination.ts';

const KEY = 'R'.repeat(32);

describe('incident changes as the service takes them', () => {
  it('maps each change to its field', () => {
    expect(
      incidentChanges({ status: 'resolved', resolution: 'fixed', priority: 'P1', escalationLevel: 2 }),
    ).toEqual({ status: 'resolved', resolution: 'fixed', priority: 'P1', escalation_level: 2 });
    expect(incidentChanges({ assigneeIds: ['PU1'], priority: { id: 'PP1' } })).toEqual({
      assignments: [{ assignee: { id: 'PU1', type: 'user_reference' } }],
      priority: { id: 'PP1', type: 'priority_reference' },
    });
    expect(incidentChanges({ escalationPolicyId: 'PEP1' })).toEqual({
      escalation_policy: { id: 'PEP1', type: 'escalation_policy_reference' },
    });
  });

  it('refuses what the service refuses', () => {
    expect(() => incidentChanges({ status: 'acknowledged', resolution: 'x' })).toThrow(
      /only allowed when resolving/,
    );
    expect(() => incidentChanges({ escalationLevel: 0 })).toThrow(/integer ≥ 1/);
    expect(() => incidentChanges({ assigneeIds: ['PU1'], escalationPolicyId: 'PEP1' })).toThrow(
      /mutually exclusive/,
    );
  });
});

describe('the Events API body', () => {
  it('a trigger carries only the fields given; acknowledge and resolve carry the dedup key', () => {
    expect(
      enqueueBody({
        routingKey: KEY,
        eventAction: 'trigger',
        payload: { summary: 'db down', source: 'mon', severity: 'critical', customDetails: { a: 1 } },
      }),
    ).toEqual({
      routing_key: KEY,
      event_action: 'trigger',
      payload: { summary: 'db down', source: 'mon', severity: 'critical', custom_details: { a: 1 } },
    });
    expect(enqueueBody({ routingKey: KEY, eventAction: 'resolve', dedupKey: 'k1' })).toEqual({
      routing_key: KEY,
      event_action: 'resolve',
      dedup_key: 'k1',
    });
  });

  it('refuses a routing key, dedup key or summary the Events API refuses', () => {
    expect(() => enqueueBody({ routingKey: 'short', eventAction: 'resolve', dedupKey: 'k' })).toThrow(
      /routing key must be 32/,
    );
    expect(() => enqueueBody({ routingKey: KEY, eventAction: 'resolve', dedupKey: '' })).toThrow(/dedup_key/);
    expect(() =>
      enqueueBody({
        routingKey: KEY,
        eventAction: 'trigger',
        payload: { summary: '', source: 's', severity: 'info' },
      }),
    ).toThrow(/summary/);
  });
});

describe('pagination', () => {
  it('checks the classic window before sending', () => {
    expect(() => checkPage({ limit: 100, offset: 9_900 }, 'listIncidents')).not.toThrow();
    expect(() => checkPage({ limit: 101 }, 'listIncidents')).toThrow(
      /limit must be an integer from 1 to 100/,
    );
    expect(() => checkPage({ offset: -1 }, 'listIncidents')).toThrow(/non-negative/);
    expect(() => checkPage({ limit: 100, offset: 9_901 }, 'listIncidents')).toThrow(/may not exceed 10000/);
  });

  it('walks pages until `more` is false or `maxItems` is reached', async () => {
    const asked: { limit: number; offset: number }[] = [];
    const pageOf = async (p: { limit: number; offset: number }) => {
      asked.push(p);
      const items = Array.from({ length: Math.min(p.limit, 5 - p.offset) }, (_, i) => p.offset + i);
      return { items, limit: p.limit, offset: p.offset, more: p.offset + items.length < 5, total: null };
    };
    const all: number[] = [];
    for await (const n of paginate(pageOf, { limit: 2 })) all.push(n);
    expect(all).toEqual([0, 1, 2, 3, 4]);
    expect(asked.map((p) => p.offset)).toEqual([0, 2, 4]);
    const some: number[] = [];
    for await (const n of paginate(pageOf, { limit: 2, maxItems: 3 })) some.push(n);
    expect(some).toEqual([0, 1, 2]);
  });
});

import { describe, expect, it } from 'vitest';
import { parseIncidentText } from '../../../handlers/incident/parse.ts';
import { MAX_STATUS_UPDATE, slackTsTime } from '../../../machines/incident/statusUpdates.ts';
import { incidentRoutingDecider } from '../../../machines/incidentRouting/decider.ts';

/** Issue 22 items 2 and 3: `/incident update`, `subscribe … stakeholders`, a message's own time. */
describe('parseIncidentText: update and stakeholders', () => {
  it.each([
    ['update 42 Rolled back, watching', { sub: 'update', ref: '42', text: 'Rolled back, watching' }],
    ['update #42', { sub: 'update', ref: '42', text: null }],
    [
      'subscribe Payments API stakeholders',
      { sub: 'subscribe', service: 'Payments API', stakeholders: true },
    ],
    [
      'unsubscribe Payments API Stakeholders',
      { sub: 'unsubscribe', service: 'Payments API', stakeholders: true },
    ],
    ['subscribe stakeholders', { sub: 'subscribe', service: null, stakeholders: true }],
    ['subscribe Payments API', { sub: 'subscribe', service: 'Payments API' }],
  ])('%j', (text, expected) => {
    expect(parseIncidentText(text)).toEqual(expected);
  });

  it('refuses an update with no incident, or too long, with the usage', () => {
    expect(parseIncidentText('update')).toMatchObject({
      error: expect.stringContaining('Which incident?'),
      usage: expect.stringContaining('/incident update'),
    });
    const long = parseIncidentText(`update 42 ${'x'.repeat(MAX_STATUS_UPDATE + 1)}`);
    expect(long).toMatchObject({ error: expect.stringContaining(`keep it to ${MAX_STATUS_UPDATE}`) });
  });
});

describe('stakeholder subscriptions (routing decider)', () => {
  const service = { id: 'PSVC001', name: 'Payments API' };
  const command = (type: 'SubscribeChannelToIncidents' | 'UnsubscribeChannelFromIncidents') => ({
    type,
    data: { service, channel: 'C0STAKE', by: 'U0ANA', kind: 'stakeholders' as const },
    metadata: { now: '2026-11-23T09:00:00.000Z', commandId: 'c1', actor: 'U0ANA' },
  });

  it('says "status updates", not cards, when refusing twice or unsubscribing what is not subscribed', () => {
    const state = incidentRoutingDecider.initialState();
    expect(() => incidentRoutingDecider.decide(command('UnsubscribeChannelFromIncidents'), state)).toThrow(
      'This channel is not subscribed to the status updates of “Payments API” incidents.',
    );
    const events = incidentRoutingDecider.decide(command('SubscribeChannelToIncidents'), state);
    const after = events.reduce(incidentRoutingDecider.evolve, state);
    expect(() => incidentRoutingDecider.decide(command('SubscribeChannelToIncidents'), after)).toThrow(
      'This channel already gets the status updates of “Payments API” incidents.',
    );
  });
});

describe('slackTsTime', () => {
  it('is the instant a message ts stands for, to the millisecond', () => {
    expect(slackTsTime('1795424400.123456')).toBe('2026-11-23T09:00:00.123Z');
    expect(slackTsTime('1795424400.1')).toBe('2026-11-23T09:00:00.100Z');
    expect(slackTsTime('not-a-ts')).toBeNull();
  });
});

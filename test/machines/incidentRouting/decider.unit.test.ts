import { describe, it } from 'vitest';
import type { IncidentRoutingCommand } from '../../../machines/incidentRouting/commands.ts';
import { incidentRoutingDecider } from '../../../machines/incidentRouting/decider.ts';
import type { IncidentRoutingEvent } from '../../../machines/incidentRouting/events.ts';
import { deciderSpec } from '../../support/deciderSpec.ts';

const spec = deciderSpec(incidentRoutingDecider);
const service = { id: 'PSVC001', name: 'Payments API' };
const at = '2026-11-22T02:00:00.000Z';
const meta = (commandId: string) => ({ commandId, now: at, actor: 'U0ANA' });
const subscribe = (channel: string): IncidentRoutingCommand => ({
  type: 'SubscribeChannelToIncidents',
  data: { service, channel, by: 'U0ANA' },
  metadata: meta(`s-${channel}`),
});
const unsubscribe = (channel: string): IncidentRoutingCommand => ({
  type: 'UnsubscribeChannelFromIncidents',
  data: { service, channel, by: 'U0ANA' },
  metadata: meta(`u-${channel}`),
});
const subscribed = (channel: string): IncidentRoutingEvent => ({
  type: 'IncidentChannelSubscribed',
  data: { serviceId: service.id, serviceName: service.name, channel, by: 'U0ANA', at },
});
const unsubscribed = (channel: string): IncidentRoutingEvent => ({
  type: 'IncidentChannelUnsubscribed',
  data: { serviceId: service.id, channel, by: 'U0ANA', at },
});

describe('incident routing decider', () => {
  it('subscribes a channel once', () => {
    spec
      .given([])
      .when(subscribe('C1'))
      .then([subscribed('C1')]);
    spec
      .given([subscribed('C1')])
      .when(subscribe('C2'))
      .then([subscribed('C2')]);
    spec
      .given([subscribed('C1')])
      .when(subscribe('C1'))
      .then({ code: 'SB_ILLEGAL_STATE', details: { reason: 'already_subscribed', channel: 'C1' } });
  });

  it('unsubscribes only a subscribed channel; it may subscribe again afterwards', () => {
    spec
      .given([subscribed('C1')])
      .when(unsubscribe('C1'))
      .then([unsubscribed('C1')]);
    spec
      .given([subscribed('C1'), unsubscribed('C1')])
      .when(unsubscribe('C1'))
      .then({ code: 'SB_ILLEGAL_STATE', details: { reason: 'not_subscribed' } });
    spec
      .given([subscribed('C1'), unsubscribed('C1')])
      .when(subscribe('C1'))
      .then([subscribed('C1')]);
  });
});

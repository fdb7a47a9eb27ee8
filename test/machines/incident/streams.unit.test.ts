import { describe, expect, it } from 'vitest';
import {
  incidentKeyForRequest,
  incidentStreamId,
  incidentStreamIdForRequest,
  incidentStreamIdForUpstream,
  isIncidentStreamId,
  requestIdFromIncidentKey,
} from '../../../machines/incident/streams.ts';

const REQUEST = '9b2f6c1e-0c1a-5d7e-8f00-0123456789ab';

describe('incident streams', () => {
  it('names upstream incidents by their id', () => {
    expect(incidentStreamId('PINC042')).toBe('incident-PINC042');
    expect(() => incidentStreamId('')).toThrow(TypeError);
    expect(() => incidentStreamId('a-b')).toThrow(TypeError);
  });

  it('names Slack-triggered incidents by their request id', () => {
    expect(incidentStreamIdForRequest(REQUEST.toUpperCase())).toBe(`incident-${REQUEST}`);
    expect(() => incidentStreamIdForRequest('PINC042')).toThrow(TypeError);
  });

  it('round-trips the incident key we send upstream', () => {
    expect(incidentKeyForRequest(REQUEST)).toBe(`switchboard:${REQUEST}`);
    expect(requestIdFromIncidentKey(incidentKeyForRequest(REQUEST))).toBe(REQUEST);
    expect(requestIdFromIncidentKey('disk/db-primary')).toBeNull();
    expect(requestIdFromIncidentKey('switchboard:not-a-uuid')).toBeNull();
    expect(requestIdFromIncidentKey(null)).toBeNull();
  });

  it('routes a webhook to our stream by its incident key, else to the upstream id', () => {
    expect(incidentStreamIdForUpstream({ id: 'PINC042', incidentKey: incidentKeyForRequest(REQUEST) })).toBe(
      `incident-${REQUEST}`,
    );
    expect(incidentStreamIdForUpstream({ id: 'PINC042', incidentKey: 'disk/db-primary' })).toBe(
      'incident-PINC042',
    );
    expect(incidentStreamIdForUpstream({ id: 'PINC042', incidentKey: null })).toBe('incident-PINC042');
  });

  it('both forms are in the incident category', () => {
    expect(isIncidentStreamId(`incident-${REQUEST}`)).toBe(true);
    expect(isIncidentStreamId('incident-PINC042')).toBe(true);
    expect(isIncidentStreamId('incident-')).toBe(false);
    expect(isIncidentStreamId('timeOff-1')).toBe(false);
  });
});

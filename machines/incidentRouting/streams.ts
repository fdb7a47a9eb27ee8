/** `incidentRouting-<service id>`: the channels subscribed to one service's incidents. */
export const INCIDENT_ROUTING_STREAM_PREFIX = 'incidentRouting-';

export const incidentRoutingStreamId = (serviceId: string): string => {
  if (!/^[A-Za-z0-9]+$/.test(serviceId)) {
    throw new TypeError(`not an incident-service service id: ${JSON.stringify(serviceId)}`);
  }
  return INCIDENT_ROUTING_STREAM_PREFIX + serviceId;
};

// Which stream an incident lives in.
//
// - An incident first seen upstream (webhook, `/incident show <id>`) lives in
//   `incident-<upstream id>`: `incidentStreamId('PINC042')`.
// - An incident triggered from Slack exists before the upstream id does, so it lives in
//   `incident-<request id>` for its whole life, where the request id is the TriggerIncident's
//   `metadata.commandId` (UUIDv5 of the Slack trigger_id / view id): `incidentStreamIdForRequest`.
//   The create call sends `incident_key` (REST) or `dedup_key` (events route) =
//   `switchboard:<request id>` (`incidentKeyForRequest`), and the incident service echoes it back
//   in every incident webhook's `data.incident_key`. So a webhook finds the stream from its own
//   payload (`incidentStreamIdForUpstream`), even when it arrives before our create call's
//   response is recorded; no read model is on that path.
// - Payloads without the key (`incident.annotated` carries only an incident reference) and
//   `/incident ack 42` need the upstream id/number → stream index: a read model (not here) that
//   follows `IncidentLinked { upstreamId, number, incidentKey }`, the first fact of every
//   confirmed incident, and the stream id it was recorded in. When the index has no entry, fall
//   back to `incidentStreamIdForUpstream`.
//
// Upstream ids (`PINC042`) have no `-` and our request ids are UUIDs, so the two forms never collide,
// and the category (text before the first `-`) is `incident` for both.

export const INCIDENT_STREAM_CATEGORY = 'incident';
const PREFIX = `${INCIDENT_STREAM_CATEGORY}-`;
const INCIDENT_KEY_PREFIX = 'switchboard:';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** `incident-<upstream incident id>`. */
export const incidentStreamId = (upstreamId: string): string => {
  if (upstreamId.length === 0 || upstreamId.includes('-')) {
    throw new TypeError(`not an upstream incident id: ${JSON.stringify(upstreamId)}`);
  }
  return PREFIX + upstreamId;
};

/** `incident-<request id>` for an incident triggered from Slack (request id = UUIDv5 command id). */
export const incidentStreamIdForRequest = (requestId: string): string => {
  if (!UUID.test(requestId)) throw new TypeError(`not a request id (UUID): ${JSON.stringify(requestId)}`);
  return PREFIX + requestId.toLowerCase();
};

/** The `incident_key` / `dedup_key` we send upstream when triggering from Slack. */
export const incidentKeyForRequest = (requestId: string): string =>
  INCIDENT_KEY_PREFIX + requestId.toLowerCase();

/** The request id inside one of our incident keys, or null for keys we did not make. */
export const requestIdFromIncidentKey = (incidentKey: string | null | undefined): string | null => {
  if (!incidentKey?.startsWith(INCIDENT_KEY_PREFIX)) return null;
  const id = incidentKey.slice(INCIDENT_KEY_PREFIX.length);
  return UUID.test(id) ? id.toLowerCase() : null;
};

/**
 * The stream for an upstream incident, from what its payload says: ours (by incident key) or
 * `incident-<id>`. Consult the upstream-id index first when the payload has no incident key.
 *
 * @example
 * incidentStreamIdForUpstream({ id: 'PINC042', incidentKey: 'switchboard:9b2…' }) // 'incident-9b2…'
 * incidentStreamIdForUpstream({ id: 'PINC042', incidentKey: 'disk/db-primary' }) // 'incident-PINC042'
 */
export const incidentStreamIdForUpstream = (incident: {
  readonly id: string;
  readonly incidentKey: string | null;
}): string => {
  const requestId = requestIdFromIncidentKey(incident.incidentKey);
  return requestId === null ? incidentStreamId(incident.id) : incidentStreamIdForRequest(requestId);
};

export const isIncidentStreamId = (streamId: string): boolean =>
  streamId.startsWith(PREFIX) && streamId.length > PREFIX.length;

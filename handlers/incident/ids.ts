// The incident surface's Slack ids live beside the block builders (src/ may not import handlers/);
// listeners import them from here.
export {
  INCIDENT_ACTION,
  INCIDENT_FIELD,
  INCIDENT_SHORTCUT,
  INCIDENT_VIEW,
  type IncidentActionId,
  type IncidentViewId,
  incidentActionsBlockId,
  streamIdFromActionsBlockId,
} from '../../src/incidents/blocks/incidentIds.ts';

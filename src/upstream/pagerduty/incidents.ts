import { z } from 'zod';
import { ChatOpsError, ValidationError } from '../../core/errors.ts';
import type { UpstreamHttp } from '../http.ts';
import { checkPage, pageQuery, paginate, toPage } from './pagination.ts';
import type {
  BulkStatusParams,
  CreateIncidentParams,
  ListIncidentsParams,
  PageParams,
  UpdateIncidentParams,
} from './params.ts';
import {
  alertSchema,
  noteSchema,
  type Page,
  type PagerDutyAlert,
  type PagerDutyIncident,
  type PagerDutyNote,
  type PagerDutyPriority,
  pageFields,
  pagerDutyIncidentSchema,
  prioritySchema,
} from './schemas.ts';

/** `PUT /incidents` refuses more than this many with 413. */
export const PAGERDUTY_BULK_UPDATE_MAX = 250;

const checkFrom = (from: string, operation: string) => {
  if (!/^[^\s@]+@[^\s@]+$/.test(from)) {
    throw new ValidationError(`${operation}: From must be the acting user's email address`);
  }
};

const userRef = (id: string) => ({ assignee: { id, type: 'user_reference' } });

/** The fields of `PUT /incidents/{id}` for these changes; refuses combinations the service refuses. */
export const incidentChanges = (params: Omit<UpdateIncidentParams, 'from'>): Record<string, unknown> => {
  const out: Record<string, unknown> = {};
  if (params.status) out.status = params.status;
  if (params.resolution !== undefined) {
    if (params.status !== 'resolved') throw new ValidationError('resolution is only allowed when resolving');
    out.resolution = params.resolution;
  }
  if (params.title !== undefined) out.title = params.title;
  if (params.urgency) out.urgency = params.urgency;
  if (params.priority !== undefined) {
    out.priority =
      typeof params.priority === 'string'
        ? params.priority
        : { id: params.priority.id, type: 'priority_reference' };
  }
  if (params.escalationLevel !== undefined) {
    if (!Number.isInteger(params.escalationLevel) || params.escalationLevel < 1) {
      throw new ValidationError('escalationLevel must be an integer ≥ 1');
    }
    out.escalation_level = params.escalationLevel;
  }
  if (params.assigneeIds && params.assigneeIds.length > 0 && params.escalationPolicyId) {
    throw new ValidationError('assignees and an escalation policy are mutually exclusive');
  }
  if (params.assigneeIds && params.assigneeIds.length > 0) out.assignments = params.assigneeIds.map(userRef);
  if (params.escalationPolicyId) {
    out.escalation_policy = { id: params.escalationPolicyId, type: 'escalation_policy_reference' };
  }
  return out;
};

/**
 * Incidents on the REST API: list, read, create, change (acknowledge, resolve, escalate, reassign),
 * bulk status changes, notes and alerts. Every write names the acting user (`from`, their email).
 */
export const createIncidentCalls = (rest: UpstreamHttp) => {
  const listIncidents = async (params: ListIncidentsParams = {}): Promise<Page<PagerDutyIncident>> => {
    checkPage(params, 'listIncidents');
    const { data } = await rest.request({
      operation: 'listIncidents',
      method: 'GET',
      path: '/incidents',
      query: {
        ...pageQuery(params),
        'statuses[]': params.statuses,
        'service_ids[]': params.serviceIds,
        'team_ids[]': params.teamIds,
        'user_ids[]': params.userIds,
        'urgencies[]': params.urgencies,
        since: params.since,
        until: params.until,
        date_range: params.dateRange,
        incident_key: params.incidentKey,
        sort_by: params.sortBy && params.sortBy.length > 0 ? params.sortBy.join(',') : undefined,
        'include[]': params.include,
      },
      schema: z.looseObject({ ...pageFields, incidents: z.array(pagerDutyIncidentSchema) }),
    });
    return toPage(data, data.incidents);
  };

  const getIncident = async (idOrNumber: string | number): Promise<PagerDutyIncident> => {
    const id = String(idOrNumber).trim();
    if (!/^[A-Za-z0-9]+$/.test(id))
      throw new ValidationError('getIncident: an incident id or number is required');
    const { data } = await rest.request({
      operation: 'getIncident',
      method: 'GET',
      path: `/incidents/${encodeURIComponent(id)}`,
      schema: z.looseObject({ incident: pagerDutyIncidentSchema }),
    });
    return data.incident;
  };

  const createIncident = async (params: CreateIncidentParams): Promise<PagerDutyIncident> => {
    checkFrom(params.from, 'createIncident');
    if (params.title.trim() === '') throw new ValidationError('createIncident: title is required');
    if (params.assigneeIds && params.assigneeIds.length > 0 && params.escalationPolicyId) {
      throw new ValidationError('createIncident: assignees and an escalation policy are mutually exclusive');
    }
    const incident: Record<string, unknown> = {
      type: 'incident',
      title: params.title,
      service: { id: params.serviceId, type: 'service_reference' },
    };
    if (params.urgency) incident.urgency = params.urgency;
    if (params.priorityId) incident.priority = { id: params.priorityId, type: 'priority_reference' };
    if (params.details !== undefined) incident.body = { type: 'incident_body', details: params.details };
    if (params.incidentKey !== undefined) incident.incident_key = params.incidentKey;
    if (params.assigneeIds && params.assigneeIds.length > 0)
      incident.assignments = params.assigneeIds.map(userRef);
    if (params.escalationPolicyId) {
      incident.escalation_policy = { id: params.escalationPolicyId, type: 'escalation_policy_reference' };
    }
    if (params.conferenceBridge) {
      incident.conference_bridge = {
        conference_number: params.conferenceBridge.conferenceNumber,
        conference_url: params.conferenceBridge.conferenceUrl,
      };
    }
    const { data } = await rest.request({
      operation: 'createIncident',
      method: 'POST',
      path: '/incidents',
      headers: { from: params.from },
      body: { incident },
      schema: z.looseObject({ incident: pagerDutyIncidentSchema }),
    });
    return data.incident;
  };

  const updateIncident = async (id: string, params: UpdateIncidentParams): Promise<PagerDutyIncident> => {
    checkFrom(params.from, 'updateIncident');
    const { from, ...fields } = params;
    const changes = incidentChanges(fields);
    if (Object.keys(changes).length === 0) throw new ValidationError('updateIncident: nothing to change');
    const { data } = await rest.request({
      operation: 'updateIncident',
      method: 'PUT',
      path: `/incidents/${encodeURIComponent(id)}`,
      headers: { from },
      body: { incident: { type: 'incident_reference', ...changes } },
      schema: z.looseObject({ incident: pagerDutyIncidentSchema }),
    });
    return data.incident;
  };

  /**
   * Acknowledges or resolves many incidents, `PAGERDUTY_BULK_UPDATE_MAX` per call, in order. If a
   * chunk fails, the error's `details.updatedIds` lists the incidents earlier chunks did update.
   */
  const bulkUpdateStatus = async (params: BulkStatusParams): Promise<PagerDutyIncident[]> => {
    checkFrom(params.from, 'bulkUpdateIncidents');
    if (params.resolution !== undefined && params.status !== 'resolved') {
      throw new ValidationError('bulkUpdateIncidents: resolution is only allowed when resolving');
    }
    const ids = [...new Set(params.incidentIds)];
    const updated: PagerDutyIncident[] = [];
    for (let i = 0; i < ids.length; i += PAGERDUTY_BULK_UPDATE_MAX) {
      const chunk = ids.slice(i, i + PAGERDUTY_BULK_UPDATE_MAX);
      try {
        const { data } = await rest.request({
          operation: 'bulkUpdateIncidents',
          method: 'PUT',
          path: '/incidents',
          headers: { from: params.from },
          body: {
            incidents: chunk.map((id) => ({
              id,
              type: 'incident_reference',
              status: params.status,
              ...(params.resolution === undefined ? {} : { resolution: params.resolution }),
            })),
          },
          schema: z.looseObject({ incidents: z.array(pagerDutyIncidentSchema) }),
        });
        updated.push(...data.incidents);
      } catch (err) {
        if (err instanceof ChatOpsError && updated.length > 0) {
          throw new ChatOpsError(err.code, err.message, {
            cause: err,
            details: { ...err.details, updatedIds: updated.map((x) => x.id) },
          });
        }
        throw err;
      }
    }
    return updated;
  };

  const listIncidentNotes = async (incidentId: string): Promise<PagerDutyNote[]> => {
    const { data } = await rest.request({
      operation: 'listIncidentNotes',
      method: 'GET',
      path: `/incidents/${encodeURIComponent(incidentId)}/notes`,
      schema: z.looseObject({ notes: z.array(noteSchema) }),
    });
    return data.notes;
  };

  const addIncidentNote = async (incidentId: string, params: { from: string; content: string }) => {
    checkFrom(params.from, 'addIncidentNote');
    if (params.content.trim() === '') throw new ValidationError('addIncidentNote: content is required');
    const { data } = await rest.request({
      operation: 'addIncidentNote',
      method: 'POST',
      path: `/incidents/${encodeURIComponent(incidentId)}/notes`,
      headers: { from: params.from },
      body: { note: { content: params.content } },
      schema: z.looseObject({ note: noteSchema }),
    });
    return data.note;
  };

  const listIncidentAlerts = async (
    incidentId: string,
    params: PageParams & { statuses?: readonly ('triggered' | 'resolved')[]; alertKey?: string } = {},
  ): Promise<Page<PagerDutyAlert>> => {
    checkPage(params, 'listIncidentAlerts');
    const { data } = await rest.request({
      operation: 'listIncidentAlerts',
      method: 'GET',
      path: `/incidents/${encodeURIComponent(incidentId)}/alerts`,
      query: { ...pageQuery(params), 'statuses[]': params.statuses, alert_key: params.alertKey },
      schema: z.looseObject({ ...pageFields, alerts: z.array(alertSchema) }),
    });
    return toPage(data, data.alerts);
  };

  /** `GET /priorities`: the account's priorities, most to least severe (one page). */
  const listPriorities = async (params: PageParams = {}): Promise<Page<PagerDutyPriority>> => {
    checkPage(params, 'listPriorities');
    const { data } = await rest.request({
      operation: 'listPriorities',
      method: 'GET',
      path: '/priorities',
      query: { ...pageQuery(params) },
      schema: z.looseObject({ ...pageFields, priorities: z.array(prioritySchema) }),
    });
    return toPage(data, data.priorities);
  };

  /** Every incident matching the filters, following `more` (bounded by the 10,000 window). */
  const listAllIncidents = async (
    params: Omit<ListIncidentsParams, 'limit' | 'offset'> = {},
    opts: { maxItems?: number } = {},
  ): Promise<PagerDutyIncident[]> => {
    const out: PagerDutyIncident[] = [];
    for await (const i of paginate((p) => listIncidents({ ...params, ...p }), opts)) out.push(i);
    return out;
  };

  return {
    listIncidents,
    listAllIncidents,
    getIncident,
    createIncident,
    updateIncident,
    acknowledgeIncident: (id: string, from: string) => updateIncident(id, { from, status: 'acknowledged' }),
    resolveIncident: (id: string, from: string, resolution?: string) =>
      updateIncident(id, { from, status: 'resolved', ...(resolution === undefined ? {} : { resolution }) }),
    escalateIncident: (id: string, from: string, escalationLevel: number) =>
      updateIncident(id, { from, escalationLevel }),
    reassignIncident: (
      id: string,
      from: string,
      to: { userIds: readonly string[] } | { escalationPolicyId: string },
    ) =>
      updateIncident(
        id,
        'userIds' in to
          ? { from, assigneeIds: to.userIds }
          : { from, escalationPolicyId: to.escalationPolicyId },
      ),
    bulkUpdateStatus,
    listIncidentNotes,
    addIncidentNote,
    listIncidentAlerts,
    listPriorities,
  };
};

import { z } from 'zod';
import { ValidationError } from '../../core/errors.ts';
import type { UpstreamHttp } from '../http.ts';
import { checkPage, pageQuery, toPage } from './pagination.ts';
import type { ListOnCallsParams, OverrideInput, PageParams } from './params.ts';
import {
  escalationPolicySchema,
  oncallSchema,
  overrideResult,
  type Page,
  type PagerDutyEscalationPolicy,
  type PagerDutyOnCall,
  type PagerDutyOverrideResult,
  type PagerDutySchedule,
  pageFields,
  scheduleSchema,
} from './schemas.ts';

/** Who is on call: on-call entries, schedules and their overrides, escalation policies (REST API). */
export const createScheduleCalls = (rest: UpstreamHttp) => {
  const listOnCalls = async (params: ListOnCallsParams = {}): Promise<Page<PagerDutyOnCall>> => {
    checkPage(params, 'listOnCalls');
    const { data } = await rest.request({
      operation: 'listOnCalls',
      method: 'GET',
      path: '/oncalls',
      query: {
        ...pageQuery(params),
        'user_ids[]': params.userIds,
        'schedule_ids[]': params.scheduleIds,
        'escalation_policy_ids[]': params.escalationPolicyIds,
        since: params.since,
        until: params.until,
        earliest: params.earliest === undefined ? undefined : String(params.earliest),
        'include[]': params.include,
        time_zone: params.timeZone,
      },
      schema: z.looseObject({ ...pageFields, oncalls: z.array(oncallSchema) }),
    });
    return toPage(data, data.oncalls);
  };

  /** A schedule with `final_schedule.rendered_schedule_entries` for [since, until]. */
  const getSchedule = async (
    id: string,
    params: { since?: string; until?: string; timeZone?: string; overflow?: boolean } = {},
  ): Promise<PagerDutySchedule> => {
    const { data } = await rest.request({
      operation: 'getSchedule',
      method: 'GET',
      path: `/schedules/${encodeURIComponent(id)}`,
      query: {
        since: params.since,
        until: params.until,
        time_zone: params.timeZone,
        overflow: params.overflow === undefined ? undefined : String(params.overflow),
      },
      schema: z.looseObject({ schedule: scheduleSchema }),
    });
    return data.schedule;
  };

  /** Creates overrides; the answer has one status per item (some may fail while others succeed). */
  const createScheduleOverrides = async (
    scheduleId: string,
    overrides: readonly OverrideInput[],
  ): Promise<PagerDutyOverrideResult[]> => {
    if (overrides.length === 0) throw new ValidationError('createScheduleOverrides: no overrides given');
    for (const o of overrides) {
      if (
        Number.isNaN(Date.parse(o.start)) ||
        Number.isNaN(Date.parse(o.end)) ||
        Date.parse(o.end) <= Date.parse(o.start)
      ) {
        throw new ValidationError('createScheduleOverrides: each override needs ISO start < end', {
          details: { start: o.start, end: o.end },
        });
      }
    }
    const { data } = await rest.request({
      operation: 'createScheduleOverrides',
      method: 'POST',
      path: `/schedules/${encodeURIComponent(scheduleId)}/overrides`,
      body: {
        overrides: overrides.map((o) => ({
          start: o.start,
          end: o.end,
          user: { id: o.userId, type: 'user_reference' },
          ...(o.timeZone ? { time_zone: o.timeZone } : {}),
        })),
      },
      schema: z.array(overrideResult),
    });
    return data;
  };

  /**
   * `DELETE /schedules/{id}/overrides/{override_id}`: a future override is deleted (204), one in
   * progress is truncated to now (200); a past one cannot be removed (the service refuses it), an
   * unknown one is SB_NOT_FOUND.
   */
  const deleteScheduleOverride = async (
    scheduleId: string,
    overrideId: string,
  ): Promise<'deleted' | 'truncated'> => {
    const { status } = await rest.request({
      operation: 'deleteScheduleOverride',
      method: 'DELETE',
      path: `/schedules/${encodeURIComponent(scheduleId)}/overrides/${encodeURIComponent(overrideId)}`,
      schema: z.unknown(),
    });
    return status === 200 ? 'truncated' : 'deleted';
  };

  const getEscalationPolicy = async (id: string): Promise<PagerDutyEscalationPolicy> => {
    const { data } = await rest.request({
      operation: 'getEscalationPolicy',
      method: 'GET',
      path: `/escalation_policies/${encodeURIComponent(id)}`,
      schema: z.looseObject({ escalation_policy: escalationPolicySchema }),
    });
    return data.escalation_policy;
  };

  /** Escalation policies; `userIds`: only those on which any of the users is a target. */
  const listEscalationPolicies = async (
    params: PageParams & { userIds?: readonly string[]; query?: string } = {},
  ): Promise<Page<PagerDutyEscalationPolicy>> => {
    checkPage(params, 'listEscalationPolicies');
    const { data } = await rest.request({
      operation: 'listEscalationPolicies',
      method: 'GET',
      path: '/escalation_policies',
      query: { ...pageQuery(params), query: params.query, 'user_ids[]': params.userIds },
      schema: z.looseObject({ ...pageFields, escalation_policies: z.array(escalationPolicySchema) }),
    });
    return toPage(data, data.escalation_policies);
  };

  return {
    listOnCalls,
    getSchedule,
    createScheduleOverrides,
    deleteScheduleOverride,
    getEscalationPolicy,
    listEscalationPolicies,
  };
};

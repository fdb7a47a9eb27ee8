import { z } from 'zod';
import { ValidationError } from '../../core/errors.ts';
import type { UpstreamHttp } from '../http.ts';
import { checkPage, pageQuery, paginate, toPage } from './pagination.ts';
import type { PageParams } from './params.ts';
import {
  type Page,
  type PagerDutyService,
  type PagerDutyUser,
  pageFields,
  serviceSchema,
  userSchema,
} from './schemas.ts';

/** Services and users on the REST API (the user whose email is exactly that one, across pages). */
export const createDirectoryCalls = (rest: UpstreamHttp) => {
  const listServices = async (
    params: PageParams & { query?: string; teamIds?: readonly string[]; name?: string } = {},
  ): Promise<Page<PagerDutyService>> => {
    checkPage(params, 'listServices');
    const { data } = await rest.request({
      operation: 'listServices',
      method: 'GET',
      path: '/services',
      query: { ...pageQuery(params), query: params.query, 'team_ids[]': params.teamIds, name: params.name },
      schema: z.looseObject({ ...pageFields, services: z.array(serviceSchema) }),
    });
    return toPage(data, data.services);
  };

  const getService = async (id: string): Promise<PagerDutyService> => {
    const { data } = await rest.request({
      operation: 'getService',
      method: 'GET',
      path: `/services/${encodeURIComponent(id)}`,
      schema: z.looseObject({ service: serviceSchema }),
    });
    return data.service;
  };

  const listUsers = async (
    params: PageParams & { query?: string; teamIds?: readonly string[]; include?: readonly string[] } = {},
  ): Promise<Page<PagerDutyUser>> => {
    checkPage(params, 'listUsers');
    const { data } = await rest.request({
      operation: 'listUsers',
      method: 'GET',
      path: '/users',
      query: {
        ...pageQuery(params),
        query: params.query,
        'team_ids[]': params.teamIds,
        'include[]': params.include,
      },
      schema: z.looseObject({ ...pageFields, users: z.array(userSchema) }),
    });
    return toPage(data, data.users);
  };

  const getUser = async (id: string): Promise<PagerDutyUser> => {
    const { data } = await rest.request({
      operation: 'getUser',
      method: 'GET',
      path: `/users/${encodeURIComponent(id)}`,
      schema: z.looseObject({ user: userSchema }),
    });
    return data.user;
  };

  /**
   * The user whose email is exactly `email` (case-insensitive), or undefined. The API's `query`
   * is a substring match over names and emails, so results are filtered here, across pages.
   */
  const findUserByEmail = async (email: string): Promise<PagerDutyUser | undefined> => {
    const wanted = email.trim().toLowerCase();
    if (!/^[^\s@]+@[^\s@]+$/.test(wanted)) throw new ValidationError('findUserByEmail: not an email address');
    for await (const user of paginate((p) => listUsers({ ...p, query: wanted }), { maxItems: 1_000 })) {
      if (user.email.trim().toLowerCase() === wanted) return user;
    }
    return undefined;
  };

  return {
    listServices,
    getService,
    listUsers,
    getUser,
    findUserByEmail,
  };
};

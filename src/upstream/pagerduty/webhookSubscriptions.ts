import { z } from 'zod';
import { ValidationError } from '../../core/errors.ts';
import type { UpstreamHttp } from '../http.ts';
import { checkPage, pageQuery, toPage } from './pagination.ts';
import type { CreateWebhookSubscriptionParams, PageParams } from './params.ts';
import {
  type Page,
  type PagerDutyWebhookSubscription,
  pageFields,
  webhookSubscriptionSchema,
} from './schemas.ts';

/** V3 webhook subscriptions (`npm run pagerduty:webhook`): create one, list those that exist. */
export const createWebhookSubscriptionCalls = (rest: UpstreamHttp) => {
  const createWebhookSubscription = async (
    params: CreateWebhookSubscriptionParams,
  ): Promise<PagerDutyWebhookSubscription> => {
    if (!/^https?:\/\//.test(params.url))
      throw new ValidationError('createWebhookSubscription: url must be http(s)');
    if (params.events.length === 0)
      throw new ValidationError('createWebhookSubscription: at least one event type');
    if (params.filter.type !== 'account_reference' && !params.filter.id)
      throw new ValidationError(`createWebhookSubscription: a ${params.filter.type} filter needs an id`);
    const { data } = await rest.request({
      operation: 'createWebhookSubscription',
      method: 'POST',
      path: '/webhook_subscriptions',
      body: {
        webhook_subscription: {
          type: 'webhook_subscription',
          delivery_method: { type: 'http_delivery_method', url: params.url },
          events: [...params.events],
          filter:
            params.filter.type === 'account_reference'
              ? { type: 'account_reference' }
              : { type: params.filter.type, id: params.filter.id },
          ...(params.description ? { description: params.description } : {}),
        },
      },
      schema: z.looseObject({ webhook_subscription: webhookSubscriptionSchema }),
    });
    return data.webhook_subscription;
  };

  const listWebhookSubscriptions = async (
    params: PageParams & Readonly<{ filterType?: 'account' | 'service' | 'team'; filterId?: string }> = {},
  ): Promise<Page<PagerDutyWebhookSubscription>> => {
    checkPage(params, 'listWebhookSubscriptions');
    const { data } = await rest.request({
      operation: 'listWebhookSubscriptions',
      method: 'GET',
      path: '/webhook_subscriptions',
      query: { ...pageQuery(params), filter_type: params.filterType, filter_id: params.filterId },
      schema: z.looseObject({ ...pageFields, webhook_subscriptions: z.array(webhookSubscriptionSchema) }),
    });
    return toPage(data, data.webhook_subscriptions);
  };

  return {
    createWebhookSubscription,
    listWebhookSubscriptions,
  };
};

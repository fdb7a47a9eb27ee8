import { ValidationError } from '../../core/errors.ts';
import type { UpstreamHttp } from '../http.ts';
import type { ChangeEventParams, EnqueueEventParams } from './params.ts';
import { changeAccepted, eventsAccepted } from './schemas.ts';

export const PAGERDUTY_ROUTING_KEY_LENGTH = 32;
export const PAGERDUTY_DEDUP_KEY_MAX = 255;

/** The body of `POST /v2/enqueue`; refuses a routing key, dedup key or summary the Events API refuses. */
export const enqueueBody = (params: EnqueueEventParams): Record<string, unknown> => {
  if (params.routingKey.length !== PAGERDUTY_ROUTING_KEY_LENGTH) {
    throw new ValidationError(`enqueueEvent: routing key must be ${PAGERDUTY_ROUTING_KEY_LENGTH} characters`);
  }
  if (
    params.dedupKey !== undefined &&
    (params.dedupKey.length === 0 || params.dedupKey.length > PAGERDUTY_DEDUP_KEY_MAX)
  ) {
    throw new ValidationError(`enqueueEvent: dedup_key must be 1..${PAGERDUTY_DEDUP_KEY_MAX} characters`);
  }
  if (params.eventAction === 'trigger') {
    const p = params.payload;
    if (p.summary.length === 0 || p.summary.length > 1024) {
      throw new ValidationError('enqueueEvent: payload.summary must be 1..1024 characters');
    }
    return {
      routing_key: params.routingKey,
      event_action: 'trigger',
      ...(params.dedupKey === undefined ? {} : { dedup_key: params.dedupKey }),
      payload: {
        summary: p.summary,
        source: p.source,
        severity: p.severity,
        ...(p.timestamp ? { timestamp: p.timestamp } : {}),
        ...(p.component ? { component: p.component } : {}),
        ...(p.group ? { group: p.group } : {}),
        ...(p.class ? { class: p.class } : {}),
        ...(p.customDetails ? { custom_details: p.customDetails } : {}),
      },
      ...(params.client ? { client: params.client } : {}),
      ...(params.clientUrl ? { client_url: params.clientUrl } : {}),
      ...(params.links ? { links: params.links } : {}),
      ...(params.images ? { images: params.images } : {}),
    };
  }
  return { routing_key: params.routingKey, event_action: params.eventAction, dedup_key: params.dedupKey };
};

/** The Events API v2 (`/v2/enqueue`, `/v2/change/enqueue`): alerts by routing key and dedup key, and change events. */
export const createEventsApiCalls = (events: UpstreamHttp) => {
  const enqueueEvent = async (
    params: EnqueueEventParams,
  ): Promise<{ dedupKey: string; status: string; message: string }> => {
    const body = enqueueBody(params);
    const { data } = await events.request({
      operation: 'enqueueEvent',
      method: 'POST',
      path: '/v2/enqueue',
      body,
      schema: eventsAccepted,
    });
    return { dedupKey: data.dedup_key, status: data.status, message: data.message };
  };

  const sendChangeEvent = async (params: ChangeEventParams): Promise<{ status: string; message: string }> => {
    if (params.routingKey.length !== PAGERDUTY_ROUTING_KEY_LENGTH) {
      throw new ValidationError(
        `sendChangeEvent: routing key must be ${PAGERDUTY_ROUTING_KEY_LENGTH} characters`,
      );
    }
    const { data } = await events.request({
      operation: 'sendChangeEvent',
      method: 'POST',
      path: '/v2/change/enqueue',
      body: {
        routing_key: params.routingKey,
        payload: {
          summary: params.summary,
          ...(params.source ? { source: params.source } : {}),
          ...(params.timestamp ? { timestamp: params.timestamp } : {}),
          ...(params.customDetails ? { custom_details: params.customDetails } : {}),
        },
        ...(params.links ? { links: params.links } : {}),
        ...(params.images ? { images: params.images } : {}),
      },
      schema: changeAccepted,
    });
    return { status: data.status, message: data.message };
  };

  return {
    enqueueEvent,
    sendChangeEvent,
  };
};

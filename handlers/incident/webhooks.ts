import type { IncomingHttpHeaders } from 'node:http';
import type { RecordIncidentWebhook } from '../../machines/incident/commands.ts';
import { ValidationError } from '../../src/core/errors.ts';
import type { WebhookVerifier } from '../../src/http/webhookRoutes.ts';
import {
  actorFromWebhookAgent,
  incidentWebhookTypeOf,
  noteFromWebhook,
  pagerDutyWebhookEnvelopeSchema,
  type SlackUserOf,
  upstreamIncidentFromWebhook,
} from '../../src/incidents/pagerdutyMapping.ts';
import type { Logger } from '../../src/logger.ts';
import { verifyPagerDutySignature } from '../../src/upstream/pagerdutySignature.ts';

/**
 * `POST /webhooks/pagerduty`: V3 webhooks of the incident service
 * (https://developer.pagerduty.com/docs/webhooks-overview).
 *
 * - `X-PagerDuty-Signature` (`v1=<hex HMAC-SHA256 of the raw body>`, several during a rotation) is
 *   checked against every configured secret (`PAGERDUTY_WEBHOOK_SECRET`, comma-separated while
 *   rotating): 401 and nothing stored when none matches.
 * - A signed body that is not a V3 envelope: 400. Anything else is a valid delivery: recorded and
 *   answered 2xx, whatever happens to it later (the decider may ignore or refuse it; a 4xx would
 *   make the vendor drop it and, after three, disable the endpoint).
 * - Deliveries are deduplicated by `X-Webhook-Id` (the inbox event id derives from it).
 * - Incident events (`incident.triggered`, `acknowledged`, `unacknowledged`, `resolved`,
 *   `reopened`, `escalated`, `reassigned`, `delegated`, `annotated`, `priority_updated`) become
 *   `RecordIncidentWebhook` commands; other incident types and `service.*` events are recorded
 *   only (the service directory refreshes on its own).
 *
 * @example
 * webhookRoutes([pagerDutyWebhookVerifier({ secrets: ['whsec1', 'whsec0'], slackUserOf, logger })], deps);
 */
export type PagerDutyWebhookDeps = Readonly<{
  /** Every secret accepted (the current one first; more during a rotation). */
  secrets: readonly string[];
  /** Maps incident-service users to the Slack users we know, so cards can mention them. */
  slackUserOf?: SlackUserOf;
  logger: Logger;
}>;

const header = (headers: IncomingHttpHeaders, name: string): string | undefined => {
  const v = headers[name];
  return Array.isArray(v) ? v.join(',') : v;
};

export const pagerDutyWebhookVerifier = (deps: PagerDutyWebhookDeps): WebhookVerifier => {
  const secrets = deps.secrets.filter((s) => s.length > 0);
  const slackUserOf = deps.slackUserOf ?? (() => null);
  const log = deps.logger.child({ webhook: 'pagerduty' });
  return {
    source: 'pagerduty',
    path: '/webhooks/pagerduty',
    signatureHeader: 'x-pagerduty-signature',
    keepHeaders: ['x-webhook-id', 'x-webhook-subscription'],
    verify(rawBody, headers) {
      const signature = header(headers, 'x-pagerduty-signature');
      if (!signature) return { ok: false, reason: 'no X-PagerDuty-Signature header' };
      return verifyPagerDutySignature(rawBody, signature, secrets)
        ? { ok: true }
        : { ok: false, reason: 'no signature matches a configured secret' };
    },
    parse(rawBody, headers, context) {
      let json: unknown;
      try {
        json = JSON.parse(rawBody.toString('utf8'));
      } catch {
        return new ValidationError('body is not JSON');
      }
      const envelope = pagerDutyWebhookEnvelopeSchema.safeParse(json);
      if (!envelope.success) {
        return new ValidationError(
          `not a V3 webhook: ${envelope.error.issues.map((i) => `${i.path.join('.') || '(root)'} ${i.message}`).join('; ')}`,
        );
      }
      const event = envelope.data.event;
      const deliveryId = header(headers, 'x-webhook-id')?.trim() || `event:${event.id}`;
      const eventType = incidentWebhookTypeOf(event.event_type);
      if (event.resource_type !== 'incident' || eventType === null) return { deliveryId, commands: [] };

      let data: RecordIncidentWebhook['data'];
      try {
        const agent = actorFromWebhookAgent(event.agent, slackUserOf);
        if (eventType === 'incident.annotated') {
          const { incidentId, note } = noteFromWebhook(event.data);
          data = {
            webhookEventId: event.id,
            eventType,
            occurredAt: event.occurred_at,
            agent,
            incidentId,
            incident: null,
            note,
          };
        } else {
          const incident = upstreamIncidentFromWebhook(event.data, slackUserOf);
          data = {
            webhookEventId: event.id,
            eventType,
            occurredAt: event.occurred_at,
            agent,
            incidentId: incident.id,
            incident,
            note: null,
          };
        }
      } catch (e) {
        // Signed and enveloped, but not the incident shape we know: keep it (recorded, no command)
        // rather than refuse a delivery the vendor would count against the endpoint.
        log.warn(
          { eventType: event.event_type, eventId: event.id, err: e },
          'incident webhook data not understood; recorded only',
        );
        return { deliveryId, commands: [] };
      }
      const command: RecordIncidentWebhook = {
        type: 'RecordIncidentWebhook',
        data,
        metadata: context.metadata(deliveryId, 0, {
          actor: data.agent?.upstreamUserId ? `pagerduty:${data.agent.upstreamUserId}` : 'pagerduty:webhook',
        }),
      };
      return { deliveryId, commands: [command] };
    },
  };
};

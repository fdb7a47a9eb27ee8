import type { IncomingHttpHeaders } from 'node:http';
import { z } from 'zod';
import type { VerificationCommandOf } from '../../machines/verification/commands.ts';
import { slackUserOfClientRef } from '../../machines/verification/streams.ts';
import { ValidationError } from '../../src/core/errors.ts';
import type { WebhookVerification, WebhookVerifier } from '../../src/http/webhookRoutes.ts';
import type { Logger } from '../../src/logger.ts';
import { withoutNumbers } from './pagingWebhooks.ts';

/**
 * `POST /webhooks/vonage/verify`: the communications service's Verify v2 status callbacks
 * (https://developer.vonage.com/en/api/verify.v2#status-callbacks), signed with a JWT (HS256 with
 * VONAGE_SIGNATURE_SECRET) in `Authorization`, whose `payload_hash` must match the raw body and
 * whose `iat` must be fresh (the check is `verifySignature`, src/upstream/vonageSignature.ts).
 *
 * - No `Authorization` header: 401 before the body is read; a bad signature: 401, nothing stored.
 * - Signed but not a verify callback (not JSON, no `request_id`): 400.
 * - A summary (`completed`, `failed`, `expired`) or a channel event (the move to voice) of one of
 *   our attempts becomes `RecordVerificationWebhook` on the person's stream, found from our own
 *   `client_ref`; anything else (another app's verification, a status we do not act on) is recorded
 *   only and answered 200, as the vendor retries every non-2xx.
 * - Redeliveries are recognised by what they say, not by their token: the delivery id is
 *   `<request id>:<type>:<channel>:<status>`, so a retry re-signed with a new JWT is one delivery
 *   (the inbox answers it 200 `duplicate: true`), and the decider ignores a fact it already has.
 */
export type VerifyWebhookDeps = Readonly<{
  verifySignature(rawBody: Buffer, headers: IncomingHttpHeaders): WebhookVerification;
  logger: Logger;
}>;

const callbackSchema = z.looseObject({
  request_id: z.string().min(1).max(100),
  type: z.string().min(1).max(40).optional(),
  status: z.string().min(1).max(40),
  channel: z.string().max(40).nullish(),
  client_ref: z.string().max(100).nullish(),
});

export const verifyWebhookVerifier = (deps: VerifyWebhookDeps): WebhookVerifier => ({
  source: 'vonage',
  path: '/webhooks/vonage/verify',
  signatureHeader: 'authorization',
  keepHeaders: [],
  bodyLimit: 64 * 1024,
  verify: (rawBody, headers) => deps.verifySignature(rawBody, headers),
  // A summary may name the number in its workflow steps: not recorded.
  storedBody: withoutNumbers,
  parse(rawBody, _headers, context) {
    let json: unknown;
    try {
      json = JSON.parse(rawBody.toString('utf8'));
    } catch {
      return new ValidationError('body is not JSON');
    }
    const parsed = callbackSchema.safeParse(json);
    if (!parsed.success) {
      return new ValidationError(
        `not a verify callback: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'} ${i.message}`).join('; ')}`,
      );
    }
    const c = parsed.data;
    const kind = c.type === 'summary' ? 'summary' : 'event';
    const channel = c.channel ?? null;
    const deliveryId = `verify:${c.request_id}:${kind}:${channel ?? '-'}:${c.status}`;
    const slackUserId = slackUserOfClientRef(c.client_ref);
    if (!slackUserId || !c.client_ref) {
      deps.logger.info(
        { kind, status: c.status },
        'verify callback for a verification that is not ours: recorded only',
      );
      return { deliveryId, commands: [] };
    }
    const command: VerificationCommandOf<'RecordVerificationWebhook'> = {
      type: 'RecordVerificationWebhook',
      data: {
        slackUserId,
        clientRef: c.client_ref,
        vendorRequestId: c.request_id,
        kind,
        status: c.status,
        channel,
      },
      metadata: context.metadata(deliveryId, 0, { actor: 'vonage:webhook' }),
    };
    return { deliveryId, commands: [command] };
  },
});

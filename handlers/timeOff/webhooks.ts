import type { IncomingHttpHeaders } from 'node:http';
import type { Logger } from '../../src/logger.ts';
import type { WebhookVerification, WebhookVerifier } from '../webhooks/routes.ts';

// CONTRACT STUB (slice hr): replaced by `POST /webhooks/hibob`.
export type HiBobWebhookDeps = Readonly<{
  verifySignature(rawBody: Buffer, headers: IncomingHttpHeaders): WebhookVerification;
  logger: Logger;
}>;

export const hibobWebhookVerifier = (deps: HiBobWebhookDeps): WebhookVerifier => ({
  source: 'hibob',
  path: '/webhooks/hibob',
  signatureHeader: 'bob-signature',
  verify: (raw, headers) => deps.verifySignature(raw, headers),
  parse: () => ({ deliveryId: 'stub', commands: [] }),
});

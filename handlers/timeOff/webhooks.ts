import type { IncomingHttpHeaders } from 'node:http';
import { z } from 'zod';
import { parseHrRequestId } from '../../machines/timeOff/hrCalendar.ts';
import {
  type HrReadAction,
  type HrReadCommand,
  type HrReadExpect,
  parseHrEmployeeId,
} from '../../machines/timeOff/hrReads.ts';
import { ValidationError } from '../../src/core/errors.ts';
import type { WebhookVerification, WebhookVerifier } from '../../src/http/webhookRoutes.ts';
import type { Logger } from '../../src/logger.ts';
import { hibobDeliveryId } from '../../src/upstream/hibobSignature.ts';

/**
 * `POST /webhooks/hibob`: HR's v2 webhooks (`companyId`, `type`, `triggeredBy`, `triggeredAt`,
 * `version`, `data`), signed `Bob-Signature: base64(HMAC-SHA512(HIBOB_WEBHOOK_SECRET, raw body))`.
 *
 * - No `Bob-Signature`: 401 before the body is read; a wrong one: 401, nothing stored.
 * - Signed but not a v2 payload, or naming an id that is not an HR id: 400.
 * - A payload is a NOTIFICATION, never the data: time off (`timeoff.request.*`) and employees
 *   (`employee.created|joined|updated|left|deleted`, `table.entry.*` of an employee) become
 *   `RequestHrReRead` (machines/timeOff/hrReads.ts), due once HR's read-after-write lag has passed
 *   since the delivery arrived (`notBefore`): the HR sync re-reads the thing through the API then.
 * - Any other type: recorded in the inbox only, answered 200 (`commands: []`).
 * - HR sends no delivery id: the delivery id is a hash of the body (`hibobDeliveryId`), so a
 *   redelivery (the same bytes) is recognised by its content and recorded once.
 */
export type HiBobWebhookDeps = Readonly<{
  verifySignature(rawBody: Buffer, headers: IncomingHttpHeaders): WebhookVerification;
  logger: Logger;
  /** How long HR may take to show what a webhook announces (default 30 s: its ~20 s and a margin). */
  hrLagMs?: number;
}>;

const payloadSchema = z.object({
  companyId: z.union([z.string().min(1).max(100), z.number()]),
  type: z.string().min(1).max(100),
  triggeredBy: z.union([z.string().max(100), z.number()]).nullish(),
  triggeredAt: z.string().min(1).max(40),
  version: z.string().min(1).max(10),
  data: z.record(z.string(), z.unknown()),
});

const ACTOR = 'hibob:webhook';

/** What a webhook type asks to re-read, or null for types nobody acts on. */
const readFor = (type: string): Readonly<{ action: HrReadAction; expect: HrReadExpect }> | null => {
  if (type.startsWith('timeoff.request.')) {
    const verb = type.slice('timeoff.request.'.length);
    const gone = ['cancelled', 'canceled', 'declined', 'deleted', 'rejected'].includes(verb);
    return { action: 'read_timeoff', expect: gone ? 'cancelled' : 'present' };
  }
  switch (type) {
    case 'employee.created':
    case 'employee.joined':
      return { action: 'read_employee', expect: 'present' };
    case 'employee.updated':
      return { action: 'read_employee', expect: 'any' };
    case 'employee.left':
    case 'employee.deleted':
      return { action: 'read_employee', expect: 'left' };
    default:
      return type.startsWith('table.entry.') ? { action: 'read_employee', expect: 'any' } : null;
  }
};

export const hibobWebhookVerifier = (deps: HiBobWebhookDeps): WebhookVerifier => ({
  source: 'hibob',
  path: '/webhooks/hibob',
  signatureHeader: 'bob-signature',
  bodyLimit: 256 * 1024,
  verify: (raw, headers) => deps.verifySignature(raw, headers),
  parse(raw, _headers, context) {
    let json: unknown;
    try {
      json = JSON.parse(raw.toString('utf8'));
    } catch {
      return new ValidationError('body is not JSON');
    }
    const parsed = payloadSchema.safeParse(json);
    if (!parsed.success) {
      return new ValidationError(
        `not an HR v2 webhook: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'} ${i.message}`).join('; ')}`,
      );
    }
    const p = parsed.data;
    const deliveryId = hibobDeliveryId(raw);
    const read = readFor(p.type);
    if (!read) {
      deps.logger.info({ type: p.type }, 'HR webhook of a type Switchboard does not act on: recorded only');
      return { deliveryId, commands: [] };
    }
    const employeeId = parseHrEmployeeId(p.data.employeeId);
    if (employeeId === null) {
      return new ValidationError(`${p.type}: data.employeeId is not an HR employee id`);
    }
    let id = employeeId;
    if (read.action === 'read_timeoff') {
      const requestId = parseHrRequestId(p.data.timeoffRequestId ?? p.data.requestId);
      if (requestId === null) {
        return new ValidationError(`${p.type}: data.timeoffRequestId is not an HR request id`);
      }
      id = requestId;
    }
    const lagMs = deps.hrLagMs ?? 30_000;
    const command: Extract<HrReadCommand, { type: 'RequestHrReRead' }> = {
      type: 'RequestHrReRead',
      data: {
        action: read.action,
        id,
        employeeId,
        expect: read.expect,
        reason: p.type,
        notBefore: new Date(Date.parse(context.receivedAt) + lagMs).toISOString(),
      },
      metadata: context.metadata(deliveryId, 0, { actor: ACTOR }),
    };
    return { deliveryId, commands: [command] };
  },
});

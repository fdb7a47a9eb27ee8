import { createHash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { parseReply } from '../../machines/verification/paging/commands.ts';
import { PAGE_ID } from '../../machines/verification/paging/streams.ts';
import { ValidationError } from '../../src/core/errors.ts';
import type { Command, JsonObject, JsonValue } from '../../src/core/messages.ts';
import type { NccoAction } from '../../src/upstream/vonageContract.ts';
import type {
  ParsedWebhook,
  WebhookParseContext,
  WebhookVerification,
  WebhookVerifier,
} from '../webhooks/routes.ts';

/**
 * The communications service's paging webhooks (Vonage-shaped), each signed with a JWT in
 * `Authorization: Bearer` (HS256 with the signature secret, `payload_hash` = SHA-256 of the raw
 * body, `iat` fresh: `verify` is the vonage client's check):
 *
 * - `POST /webhooks/vonage/messages`: message status (`status`: submitted, delivered, rejected,
 *   undeliverable, with the vendor's error) → `RecordPageReceipt`; inbound SMS (`text`, `from`) →
 *   `RecordPagerReply` (a reply to a page: `4`, `ACK`, `6`, `STOP`, `4 12`).
 * - `POST /webhooks/vonage/voice`: call events (`status`: ringing, answered, completed, busy,
 *   failed…) → `RecordPageReceipt`; keys pressed (`dtmf.digits`, the page call's input action) →
 *   `RecordPagerReply`, answered with an NCCO that says what was recorded (after the durable
 *   append: `answer`).
 *
 * Delivery ids make redeliveries one: an SMS by `message_uuid` (+ `status`), a call event by call
 * `uuid` + `status` + `timestamp`, keys by call `uuid` + `timestamp`. Everything in a body is
 * checked: a phone number is 6-15 digits, a vendor id `[A-Za-z0-9-]`, digits `0-9*#`; a signed body
 * that is not JSON, or names a bad number, is answered 400 naming what was wrong. A signed body of
 * a kind we do not handle is recorded with no command (2xx: the vendor would retry otherwise).
 */

export type PagingWebhookDeps = Readonly<{
  /** The signed-webhook check (src/upstream/vonageSignature.ts). Must not throw. */
  verify(rawBody: Buffer, headers: IncomingHttpHeaders): WebhookVerification;
  /** Our sending number (E.164 digits): in a call's events the other party is the person. */
  fromNumber: string;
  /** The label of the page a call is about (for the NCCO answering keys), when known. */
  pageLabelOfCall(callUuid: string): Promise<string | null>;
  /** Where the re-asked input's keys go (undefined: the application's event URL). */
  voiceEventUrl: string | undefined;
  /**
   * A number from a webhook, sealed (under the data key of the person who verified it, so
   * forgetting them shreds it) with the blind index naming its replies stream.
   */
  sealInbound(digits: string): Promise<Readonly<{ phone: string; numberKey: string }>>;
}>;

/** Fields of the communications service's webhooks that hold phone numbers. */
const NUMBER_FIELDS: ReadonlySet<string> = new Set(['to', 'from', 'msisdn', 'number', 'phone']);

/**
 * The body as the inbox records it: every phone number replaced by `[number]` (at any depth:
 * `to` and `from` of messages and calls, a verify summary's workflow steps). The commands carry
 * what is needed, sealed.
 */
export const withoutNumbers = (body: JsonValue): JsonValue => {
  if (Array.isArray(body)) return body.map(withoutNumbers);
  if (typeof body === 'string') return /^\+?[1-9][0-9]{5,14}$/.test(body) ? '[number]' : body;
  if (typeof body !== 'object' || body === null) return body;
  return Object.fromEntries(
    Object.entries(body).map(([k, v]) => [
      k,
      NUMBER_FIELDS.has(k) && (typeof v === 'string' || typeof v === 'number')
        ? '[number]'
        : withoutNumbers(v),
    ]),
  );
};

const VENDOR_ID = /^[A-Za-z0-9-]{1,64}$/;
const PHONE = /^[1-9][0-9]{5,14}$/;

const json = (raw: Buffer): Record<string, unknown> => {
  let body: unknown;
  try {
    body = JSON.parse(raw.toString('utf8'));
  } catch {
    throw new ValidationError('the body is not JSON');
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new ValidationError('the body is not a JSON object');
  }
  return body as Record<string, unknown>;
};

const text = (body: Record<string, unknown>, field: string, max = 200): string | null => {
  const v = body[field];
  if (v === undefined || v === null) return null;
  if (typeof v !== 'string' && typeof v !== 'number') throw new ValidationError(`${field} is not a string`);
  const s = String(v);
  if (s.length > max) throw new ValidationError(`${field} is longer than ${max} characters`);
  return s;
};

const vendorId = (body: Record<string, unknown>, field: string): string => {
  const v = text(body, field, 64);
  if (v === null || !VENDOR_ID.test(v)) throw new ValidationError(`${field} is missing or not a vendor id`);
  return v;
};

const phone = (v: string | null, field: string): string => {
  const digits = (v ?? '').replace(/^\+/, '');
  if (!PHONE.test(digits)) throw new ValidationError(`${field} is not a phone number in E.164 form`);
  return digits;
};

const status = (body: Record<string, unknown>): string => {
  const s = text(body, 'status', 40);
  if (s === null || !/^[a-z_]{1,40}$/.test(s)) throw new ValidationError('status is not a status word');
  return s;
};

const otherDelivery = (raw: Buffer): string =>
  `other:${createHash('sha256').update(raw).digest('hex').slice(0, 40)}`;

const command = (
  type: string,
  data: JsonObject,
  deliveryId: string,
  context: WebhookParseContext,
): Command => ({ type, data, metadata: context.metadata(deliveryId, 0, { actor: 'system:vonage' }) });

export type SealInbound = PagingWebhookDeps['sealInbound'];

/**
 * The parsed delivery as it may be recorded: a reply's number sealed (its owner's data key, or the
 * configured secret for a number nobody verified) with the blind index naming its stream.
 */
export const sealReplies = async (
  parsed: ParsedWebhook,
  sealInbound: SealInbound,
): Promise<ParsedWebhook> => ({
  ...parsed,
  commands: await Promise.all(
    parsed.commands.map(async (c) => {
      if (c.type !== 'RecordPagerReply' || typeof c.data.phone !== 'string') return c;
      const sealed = await sealInbound(c.data.phone);
      return { ...c, data: { ...c.data, phone: sealed.phone, numberKey: sealed.numberKey } };
    }),
  ),
});

export const parseMessagesWebhook = (raw: Buffer, context: WebhookParseContext): ParsedWebhook => {
  const body = json(raw);
  if (typeof body.status === 'string') {
    const uuid = vendorId(body, 'message_uuid');
    const s = status(body);
    const error = body.error as { title?: unknown; detail?: unknown } | undefined;
    const reason =
      typeof error === 'object' && error !== null
        ? [error.title, error.detail]
            .filter((x) => typeof x === 'string' || typeof x === 'number')
            .join(' ')
            .slice(0, 300) || null
        : null;
    const clientRef = text(body, 'client_ref', 100);
    const deliveryId = `sms-status:${uuid}:${s}`;
    return {
      deliveryId,
      commands: [
        command(
          'RecordPageReceipt',
          {
            vendorId: uuid,
            channel: 'sms',
            status: s,
            reason,
            pageId: clientRef !== null && PAGE_ID.test(clientRef) ? clientRef : null,
            vendorTimestamp: text(body, 'timestamp', 64),
          },
          deliveryId,
          context,
        ),
      ],
    };
  }
  if (typeof body.text === 'string' || body.channel === 'sms') {
    const uuid = vendorId(body, 'message_uuid');
    const from = phone(text(body, 'from', 20), 'from');
    const said = text(body, 'text', 3200) ?? '';
    const { action, number } = parseReply(said);
    const deliveryId = `sms-in:${uuid}`;
    return {
      deliveryId,
      commands: [
        command(
          'RecordPagerReply',
          {
            replyId: uuid,
            via: 'sms',
            phone: from,
            // Only what was understood is kept: a stray message (someone texting a one-time code
            // to the paging number) is not copied into the pager's facts.
            text:
              action === 'unknown'
                ? `[${Math.min(said.length, 9999)} characters]`
                : said.trim().slice(0, 160),
            action,
            number,
            callUuid: null,
          },
          deliveryId,
          context,
        ),
      ],
    };
  }
  return { deliveryId: otherDelivery(raw), commands: [] };
};

export const parseVoiceWebhook = (
  raw: Buffer,
  context: WebhookParseContext,
  fromNumber: string,
): ParsedWebhook => {
  const body = json(raw);
  const dtmf = body.dtmf as { digits?: unknown } | undefined;
  if (typeof dtmf === 'object' && dtmf !== null) {
    const uuid = vendorId(body, 'uuid');
    const digits = dtmf.digits ?? '';
    if (typeof digits !== 'string' || !/^[0-9*#]{0,20}$/.test(digits)) {
      throw new ValidationError('dtmf.digits is not a string of keys (0-9, *, #)');
    }
    const to = text(body, 'to', 20);
    const from = text(body, 'from', 20);
    const other = phone(to !== null && to.replace(/^\+/, '') !== fromNumber ? to : from, 'to');
    const timestamp = text(body, 'timestamp', 64) ?? '';
    const action = digits === '4' ? 'acknowledge' : digits === '6' ? 'resolve' : 'unknown';
    const deliveryId = `dtmf:${uuid}:${timestamp}`;
    return {
      deliveryId,
      commands: [
        command(
          'RecordPagerReply',
          {
            replyId: `dtmf-${uuid}-${createHash('sha256').update(timestamp).digest('hex').slice(0, 12)}`,
            via: 'voice',
            phone: other,
            text: digits,
            action,
            number: null,
            callUuid: uuid,
          },
          deliveryId,
          context,
        ),
      ],
    };
  }
  if (typeof body.status === 'string') {
    const uuid = vendorId(body, 'uuid');
    const s = status(body);
    const timestamp = text(body, 'timestamp', 64);
    const deliveryId = `call:${uuid}:${s}:${timestamp ?? ''}`;
    const detail = text(body, 'detail', 300) ?? text(body, 'reason', 300);
    return {
      deliveryId,
      commands: [
        command(
          'RecordPageReceipt',
          {
            vendorId: uuid,
            channel: 'voice',
            status: s,
            reason: detail,
            pageId: null,
            vendorTimestamp: timestamp,
          },
          deliveryId,
          context,
        ),
      ],
    };
  }
  return { deliveryId: otherDelivery(raw), commands: [] };
};

/** What the call says once the keys are recorded. */
export const keysAnswer = (
  digits: string,
  label: string | null,
  voiceEventUrl: string | undefined,
): NccoAction[] => {
  const what = label ?? 'the incident';
  if (digits === '4') {
    return [
      { action: 'talk', text: `Recorded: you acknowledge ${what}. Switchboard tells the team. Goodbye.` },
    ];
  }
  if (digits === '6') {
    return [{ action: 'talk', text: `Recorded: you resolve ${what}. Switchboard tells the team. Goodbye.` }];
  }
  return [
    { action: 'talk', text: 'Nothing was done. Press 4 to acknowledge, or 6 to resolve.', bargeIn: true },
    {
      action: 'input',
      type: ['dtmf'],
      dtmf: { maxDigits: 1, timeOut: 10 },
      ...(voiceEventUrl ? { eventUrl: [voiceEventUrl], eventMethod: 'POST' as const } : {}),
    },
  ];
};

export const pagingWebhookVerifiers = (deps: PagingWebhookDeps): WebhookVerifier[] => [
  {
    source: 'vonage',
    path: '/webhooks/vonage/messages',
    signatureHeader: 'authorization',
    bodyLimit: 64 * 1024,
    verify: deps.verify,
    storedBody: withoutNumbers,
    parse: (raw, _headers, context) => sealReplies(parseMessagesWebhook(raw, context), deps.sealInbound),
  },
  {
    source: 'vonage',
    path: '/webhooks/vonage/voice',
    signatureHeader: 'authorization',
    bodyLimit: 64 * 1024,
    verify: deps.verify,
    storedBody: withoutNumbers,
    parse: (raw, _headers, context) =>
      sealReplies(parseVoiceWebhook(raw, context, deps.fromNumber), deps.sealInbound),
    async answer(parsed, duplicate) {
      const reply = parsed.commands.find((c) => c.type === 'RecordPagerReply');
      if (!reply) return { ok: true, ...(duplicate ? { duplicate: true } : {}) };
      const data = reply.data as { text: string; callUuid: string };
      return keysAnswer(data.text, await deps.pageLabelOfCall(data.callUuid), deps.voiceEventUrl);
    },
  },
];

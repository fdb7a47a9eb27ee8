import { createHash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { parseReply } from '../../machines/verification/paging/commands.ts';
import { PAGE_ID } from '../../machines/verification/paging/streams.ts';
import { ValidationError } from '../../src/core/errors.ts';
import type { Command, JsonObject, JsonValue } from '../../src/core/messages.ts';
import type {
  ParsedWebhook,
  WebhookParseContext,
  WebhookVerification,
  WebhookVerifier,
} from '../../src/http/webhookRoutes.ts';
import type { NccoAction } from '../../src/upstream/vonageContract.ts';

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
 *
 * **What people send is never kept as text** (issue 18 item 7): anyone can text the paging number
 * anything (a one-time code, a card number). The commands carry what a reply asks for (`action`,
 * `number`) and its text as a length and a keyed hash (`keyedHash`); the inbox records the
 * delivery without its numbers and without its text (`storedMessagesBody`, `storedVoiceBody`).
 * Not even an understood reply (`4`, `ACK 12`) is kept as sent: `action` and `number` say all of
 * it, and one rule for every text leaves nothing to a parser's mistake.
 */

export type PagingWebhookDeps = Readonly<{
  /** The signed-webhook check (src/upstream/vonageSignature.ts). Must not throw. */
  verify(rawBody: Buffer, headers: IncomingHttpHeaders): WebhookVerification;
  /** Our sending number (E.164 digits): in a call's events the other party is the person. */
  fromNumber: string;
  /**
   * The page a call's keys act on: the page whose call this is (`PageCallPlaced`), when the number
   * pressing them is the paged person's; null otherwise (the keys are refused: the NCCO says so).
   */
  pageOfKeys(callUuid: string, digits: string): Promise<Readonly<{ label: string }> | null>;
  /** A keyed hash of what someone sent (32 hex), kept instead of the text. */
  keyedHash(text: string): string;
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

type KeyedHash = PagingWebhookDeps['keyedHash'];

/** A text as it may be kept: how long it was and its keyed hash. */
const textFacts = (said: string, keyedHash: KeyedHash): JsonObject => ({
  textLength: said.length,
  textHash: keyedHash(said),
});

const isObject = (v: JsonValue | undefined): v is JsonObject =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** Fields of an inbound message kept in the inbox: its kind and ids (numbers masked), never what it says. */
const INBOUND_KEPT: readonly string[] = [
  'channel',
  'message_uuid',
  'message_type',
  'to',
  'from',
  'timestamp',
];

/**
 * The messages webhook as the inbox records it. A status report keeps its fields (no message text
 * in them), numbers masked. An inbound message keeps only its kind, ids and time (numbers masked),
 * how many parts it came in, and its `text` as `textLength` and `textHash`; everything else
 * (`sms.keyword`, the first word in capitals; an MMS's media; any field we do not know) is dropped.
 */
export const storedMessagesBody =
  (keyedHash: KeyedHash) =>
  (body: JsonValue): JsonValue => {
    if (!isObject(body)) return '[not a JSON object]';
    const { text, ...rest } = body;
    const said: JsonObject = typeof text === 'string' ? textFacts(text, keyedHash) : {};
    if (typeof body.status === 'string') return withoutNumbers({ ...rest, ...said });
    const kept: JsonObject = {};
    for (const k of INBOUND_KEPT) if (rest[k] !== undefined) kept[k] = rest[k];
    const sms = body.sms;
    if (isObject(sms) && typeof sms.num_messages === 'string') kept.sms = { num_messages: sms.num_messages };
    return withoutNumbers({ ...kept, ...said });
  };

/**
 * The voice webhook as the inbox records it: numbers masked, keys pressed as `digitsLength` and
 * `digitsHash`, and no speech (what someone said in a call is not kept).
 */
export const storedVoiceBody =
  (keyedHash: KeyedHash) =>
  (body: JsonValue): JsonValue => {
    if (!isObject(body)) return '[not a JSON object]';
    const { speech: _speech, dtmf, ...rest } = body;
    if (!isObject(dtmf)) return withoutNumbers(rest);
    const { digits, ...keys } = dtmf;
    const pressed: JsonObject =
      typeof digits === 'string' ? { digitsLength: digits.length, digitsHash: keyedHash(digits) } : {};
    return withoutNumbers({ ...rest, dtmf: { ...keys, ...pressed } });
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

export const parseMessagesWebhook = (
  raw: Buffer,
  context: WebhookParseContext,
  keyedHash: KeyedHash,
): ParsedWebhook => {
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
    // Any length the route takes: the text is kept only as its length and hash, and a long one is a
    // valid delivery (a 4xx would make the vendor drop it and count the endpoint as failing).
    const said = text(body, 'text', Number.MAX_SAFE_INTEGER) ?? '';
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
            // What it asks for, and the text as its length and a keyed hash: never the text.
            ...textFacts(said, keyedHash),
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
  keyedHash: KeyedHash,
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
            ...textFacts(digits, keyedHash),
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

/**
 * What the call says once the keys are recorded: for a page call of the person pressing them
 * (`page`), what their keys do; for any other call, that nothing was done (the keys are refused).
 */
export const keysAnswer = (
  action: string,
  page: Readonly<{ label: string }> | null,
  voiceEventUrl: string | undefined,
): NccoAction[] => {
  if (page === null) {
    return [
      {
        action: 'talk',
        text: 'Switchboard did not page this phone in this call. Nothing was done. Goodbye.',
      },
    ];
  }
  const what = page.label;
  if (action === 'acknowledge') {
    return [
      { action: 'talk', text: `Recorded: you acknowledge ${what}. Switchboard tells the team. Goodbye.` },
    ];
  }
  if (action === 'resolve') {
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

export const pagingWebhookVerifiers = (deps: PagingWebhookDeps): WebhookVerifier[] => {
  /** The page each parsed keys delivery acts on, looked up while its number is still in clear. */
  const keysPage = new WeakMap<ParsedWebhook, Readonly<{ label: string }> | null>();
  return [
    {
      source: 'vonage',
      path: '/webhooks/vonage/messages',
      signatureHeader: 'authorization',
      bodyLimit: 64 * 1024,
      verify: deps.verify,
      storedBody: storedMessagesBody(deps.keyedHash),
      parse: (raw, _headers, context) =>
        sealReplies(parseMessagesWebhook(raw, context, deps.keyedHash), deps.sealInbound),
    },
    {
      source: 'vonage',
      path: '/webhooks/vonage/voice',
      signatureHeader: 'authorization',
      bodyLimit: 64 * 1024,
      verify: deps.verify,
      storedBody: storedVoiceBody(deps.keyedHash),
      async parse(raw, _headers, context) {
        const parsed = parseVoiceWebhook(raw, context, deps.fromNumber, deps.keyedHash);
        const keys = parsed.commands.find((c) => c.type === 'RecordPagerReply')?.data as
          | { phone: string; callUuid: string }
          | undefined;
        const page = keys ? await deps.pageOfKeys(keys.callUuid, keys.phone) : null;
        const sealed = await sealReplies(parsed, deps.sealInbound);
        if (keys) keysPage.set(sealed, page);
        return sealed;
      },
      answer(parsed, duplicate) {
        const reply = parsed.commands.find((c) => c.type === 'RecordPagerReply');
        if (!reply) return { ok: true, ...(duplicate ? { duplicate: true } : {}) };
        const { action } = reply.data as { action: string };
        return keysAnswer(action, keysPage.get(parsed) ?? null, deps.voiceEventUrl);
      },
    },
  ];
};

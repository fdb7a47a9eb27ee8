import {
  createPublicKey,
  generateKeyPairSync,
  type KeyObject,
  randomBytes,
  randomInt,
  randomUUID,
} from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { jwtVerify } from 'jose';
import { type Clock, systemClock } from '../../../src/core/clock.ts';
import {
  createOpenApiValidator,
  loadOpenApiDocument,
  type OpenApiPatch,
  type OpenApiValidator,
  serverBasePath,
  type ValidationIssue,
} from '../openapi.ts';
import type { ContractViolation, Simulator } from '../simulator.ts';
import { createCallbackValidator } from './callbacks.ts';
import {
  createVonageWebhooks,
  type DeliveryResult,
  type VonageDeliveryAttempt,
  type VonageWebhookOptions,
} from './webhooks.ts';

/**
 * A loopback communications service (Vonage-shaped): Verify v2, Messages (SMS), Voice (calls with
 * an NCCO), the legacy SMS API and Number Insight basic, on one `node:http` server (port 0) that
 * serves both the API host and the REST host. For the sandbox and the tests; the bot never imports
 * it. It is a {@link Simulator} (../simulator.ts): `env()`, `connect(botUrl)`, `exportState()`…
 *
 * What it checks, as the vendor would:
 * - every request against the vendored OpenAPI files (`./specs/`), and its own 2xx answers and
 *   webhook bodies (./callbacks.ts); whatever breaks them is a violation (`violations`,
 *   `assertNoViolations()`), and a request that does answers 422;
 * - credentials: HTTP Basic (`VONAGE_API_KEY:VONAGE_API_SECRET`) on Verify, Messages, Number
 *   Insight and legacy SMS; an RS256 application JWT, checked against the application's public key
 *   (`application_id`, `iat`, `jti`, `exp` at most 24 h after `iat`), on Voice (required) and
 *   Verify/Messages (accepted). A `jti` seen twice is a violation;
 * - rate limits per API, on a sliding one-second window of its clock: call creation 3/s, other
 *   voice 15/s, Messages 75/s, legacy SMS 30/s (Verify: none unless `limits.verify` is set); over
 *   it → 429 with `Retry-After` and `X-RateLimit-*`, RFC 7807 body;
 * - Verify v2's rules: callbacks (events, summary) only for a verification started with the
 *   application's JWT (Basic is "for synchronous calls", says the Verify v2 document); 409 for a
 *   second verification to a number with one running (`#concurrent`); a wrong code → 400
 *   (`#invalid-code`; `wrongCodeStatus: 401` gives the seed's 401); the third wrong code fails the
 *   request → 410; a check on an expired, failed or cancelled request → 410, on a completed one →
 *   409; cancel only from 30 s after the start and before the second workflow event → 409
 *   otherwise; the workflow moves from SMS to voice after `channel_timeout` on its clock and
 *   expires after the last step's;
 * - credit: every billable request costs (verify 0.05, SMS 0.0075, call 0.02 EUR); below the price
 *   → 402 (`setCredit`);
 * - Number Insight answers 410 from 2027-02-04 on its clock (the sunset).
 *
 * Phones: every number has one. `phones.inbox(n)` lists the SMS it received (verification codes
 * included); `phones.calls(n)` its incoming calls, each with what the NCCO said (`spoken`);
 * `phones.lastCode(n)` is the last verification code sent to it. The person acts on the phone:
 * `phones.replySms(from, text)` (an inbound SMS webhook), `phones.answer(callUuid)`,
 * `phones.pressKeys(callUuid, digits)` (posts the DTMF input to the NCCO's input `eventUrl`, plays
 * the NCCO it answers), `phones.hangUp(callUuid)`, `phones.reject(n, 'busy' | 'failed')` (calls are
 * refused and SMS rejected until `phones.restore(n)`). `phones.numbers()` lists the phones and
 * `phones.onChange(listener)` says which one changed, for a console that shows them live.
 *
 * Webhooks (signed HS256 with `payload_hash`, see src/upstream/vonageSignature.ts), once
 * `connect(botUrl)` named the bot: verify events and summaries to `/webhooks/vonage/verify`,
 * message status (submitted, delivered | rejected with the reason) and inbound SMS to
 * `/webhooks/vonage/messages`, call events (started, ringing, answered, completed, busy, failed,
 * timeout, cancelled) to the call's `event_url` or `/webhooks/vonage/voice`. Non-2xx answers are
 * retried; `webhooks.duplicateNext(n)` redelivers, `webhooks.hold()`/`release()` queue them,
 * `webhooks.idle()` waits until all are out, `webhooks.attempts` lists every attempt.
 *
 * Faults and records: `failNext(operation, fault)` (`fault.to`: only requests to that number; an
 * operation is the vendor's operationId or
 * the client's name: `startVerification`/`newRequest`, `checkCode`, `cancelVerification`/
 * `cancelRequest`, `nextWorkflow`, `sendSms`/`SendMessage`, `createCall`, `hangUpCall`/
 * `updateCall`, `send-an-sms`, `lookupNumber`/`niBasic`), `delayNext(operation, { until })`
 * (held until a promise the test opens), `requests` (each with the clock time it arrived, `at`),
 * `requestsFor(operation)`, `setCredit(eur)`, `setLimits`, `rotateSignatureSecret`,
 * `runTimers()` (channel timeouts, expiry, unanswered calls due on the clock; with the system
 * clock it also runs by itself), `stop()`.
 *
 * @example
 * const sim = await startVonageSimulator({ clock });
 * const vonage = createVonageClient({ ...sim.clientOptions(), clock });
 * const { requestId } = await vonage.startVerification({ to: '447700900123', brand: 'Switchboard', clientRef: 'a1' });
 * await vonage.checkCode(requestId, sim.phones.lastCode('447700900123')!);
 * sim.assertNoViolations();
 * await sim.stop();
 */

const SPECS = new URL('./specs/', import.meta.url);
const ERRORS = 'https://developer.vonage.com/en/api-errors';

export type VonageOperation =
  | 'newRequest'
  | 'checkCode'
  | 'cancelRequest'
  | 'nextWorkflow'
  | 'SendMessage'
  | 'createCall'
  | 'updateCall'
  | 'send-an-sms'
  | 'niBasic'
  | (string & {});

const ALIASES: Readonly<Record<string, string>> = {
  startVerification: 'newRequest',
  cancelVerification: 'cancelRequest',
  sendSms: 'SendMessage',
  hangUpCall: 'updateCall',
  lookupNumber: 'niBasic',
};
const canonical = (op: string) => ALIASES[op] ?? op;

export type VonageFault = Readonly<{
  status: 400 | 401 | 402 | 403 | 404 | 409 | 410 | 422 | 429 | 500 | 502 | 503 | 'reset';
  /** How many matching requests fail (default 1). */
  times?: number;
  /** The RFC 7807 body to answer (default: one fitting the status). */
  body?: Readonly<Record<string, unknown>>;
  /** `Retry-After` on a 429 (default 1). */
  retryAfterSeconds?: number;
  /** 422: the field named in `invalid_parameters` (default `to`). */
  field?: string;
  /** The body repeats the request's `Authorization` header, as some gateways do. */
  echoAuthorization?: boolean;
  /** Only requests to this number (E.164 digits: an SMS's `to`, a call's phone) fail; default any. */
  to?: string;
}>;

export type VonageDelay = Readonly<{ until: Promise<unknown>; times?: number }>;

export type RecordedVonageRequest = {
  readonly operationId: string | undefined;
  readonly method: string;
  /** Path and query as received. */
  readonly url: string;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly body: unknown;
  /** The simulator's clock when it arrived (ms). */
  readonly at: number;
  status: number | 'reset';
};

export type VonageViolation = Readonly<{
  kind: 'request' | 'response' | 'route' | 'contract' | 'webhook' | 'crash';
  operationId: string | undefined;
  method: string;
  path: string;
  issues: readonly ValidationIssue[];
}>;

export type SmsOnPhone = {
  readonly messageUuid: string;
  readonly at: string;
  readonly from: string;
  readonly to: string;
  readonly text: string;
  /** `verify`: a one-time code sent by Verify. */
  readonly kind: 'sms' | 'verify';
  readonly clientRef?: string;
  status: 'submitted' | 'delivered' | 'rejected';
};

export type CallOnPhone = {
  readonly uuid: string;
  readonly conversationUuid: string;
  readonly at: string;
  readonly from: string;
  readonly to: string;
  /** `verify`: a one-time code read out by Verify. */
  readonly kind: 'call' | 'verify';
  status: 'ringing' | 'answered' | 'completed' | 'busy' | 'failed' | 'timeout' | 'cancelled';
  /** The NCCO being played (the last one answered). */
  ncco: unknown[];
  /** Everything the call said, in order (talk actions). */
  spoken: string[];
  /** Set while the call waits for keys (an NCCO `input` action). */
  awaitingInput: { readonly eventUrl: string | undefined; readonly maxDigits: number } | undefined;
  /** Keys pressed so far. */
  keys: string[];
  /** Each key press with the bot's answer to it (status, and the NCCO it answered), oldest first. */
  inputs: Array<{ readonly digits: string; readonly at: string; status: number | undefined; ncco: unknown }>;
  readonly eventUrl: string | undefined;
  readonly ringingUntil: number;
  answeredAt: string | undefined;
};

export type PhoneRejection = 'busy' | 'failed';

type VerifyStep = { channel: 'sms' | 'voice'; initiatedAt: string | undefined; status: string };
type Verification = {
  id: string;
  to: string;
  brand: string;
  code: string;
  codeLength: number;
  channelTimeout: number;
  locale: string;
  clientRef: string | undefined;
  submittedAt: string;
  startedAtMs: number;
  step: number;
  stepStartedAtMs: number;
  steps: VerifyStep[];
  wrongCodes: number;
  status: 'in_progress' | 'completed' | 'failed' | 'expired' | 'cancelled';
  /** Started with the application's JWT: only then are its events and summary sent. */
  callbacks: boolean;
};

export type VonageSimState = {
  verifications: Verification[];
  phones: Array<{
    number: string;
    inbox: SmsOnPhone[];
    sent: SmsOnPhone[];
    calls: CallOnPhone[];
    reject?: PhoneRejection;
  }>;
  credit: number;
};

export type VonageLimits = Readonly<{
  verify?: number;
  messages?: number;
  callCreation?: number;
  voiceOther?: number;
  legacySms?: number;
}>;

export type VonageSimulatorOptions = Readonly<{
  clock?: Clock;
  apiKey?: string;
  apiSecret?: string;
  applicationId?: string;
  /** The account's signature secret (`VONAGE_SIGNATURE_SECRET`). Default random. */
  signatureSecret?: string;
  /**
   * The application's private key (PEM, `VONAGE_PRIVATE_KEY`); its public half verifies the bot's
   * JWTs. Default: one key pair made per process (the sandbox keeps its own across restarts).
   */
  privateKey?: string;
  /** The virtual number pages come from (`VONAGE_FROM_NUMBER`). */
  fromNumber?: string;
  /** Requests per second; defaults to the vendor's (see the header). */
  limits?: VonageLimits;
  /** Starting credit in EUR (default 100). */
  credit?: number;
  /** Status of a wrong code: the vendor's 400 (default) or the seed's 401. */
  wrongCodeStatus?: 400 | 401;
  webhooks?: VonageWebhookOptions;
  /** Check the simulator's own 2xx answers against the documents (default true). */
  validateResponses?: boolean;
  /** Runs `runTimers()` every this many ms (default 250 with the system clock, never with another). */
  tickMs?: number;
}>;

/**
 * Corrections to the vendor documents, each with its reason. The SMS API's 200 answer is
 * `oneOf: [SMS, Error]`, two objects whose properties are all optional: every body matches both,
 * so `oneOf` refuses them all. The SMS API reference
 * (https://developer.vonage.com/en/api/sms#send-an-sms) shows an accepted message carrying
 * `message-id` and a refused one `error-text`: requiring those tells the two apart.
 */
export const VONAGE_SMS_SPEC_PATCHES: readonly OpenApiPatch[] = [
  {
    pointer: '/components/schemas/Message/required',
    value: ['message-id'],
    reason:
      'an accepted SMS carries message-id; without a required field SMS and Error both match every body',
  },
  {
    pointer: '/components/schemas/ErrorMessage/required',
    value: ['error-text'],
    reason: 'a refused SMS carries error-text; without a required field SMS and Error both match every body',
  },
];

const PRICES = { verify: 0.05, sms: 0.0075, call: 0.02 } as const;
const DEFAULT_LIMITS: Required<VonageLimits> = {
  verify: Infinity,
  messages: 75,
  callCreation: 3,
  voiceOther: 15,
  legacySms: 30,
};
const NI_SUNSET = Date.parse('2027-02-04T00:00:00.000Z');

/** One RSA key pair per process: generating one costs ~100 ms, and every simulator may share it. */
let sharedKeys: { privatePem: string; publicKey: KeyObject } | undefined;
const applicationKeys = () => {
  if (!sharedKeys) {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    sharedKeys = { privatePem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), publicKey };
  }
  return sharedKeys;
};

const readBody = (req: IncomingMessage): Promise<Buffer> =>
  new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });

const describe = (i: ValidationIssue) => `${i.where}${i.name ? ` ${i.name}` : ''}: ${i.message}`;

class Problem extends Error {
  readonly status: number;
  readonly body: Record<string, unknown>;
  readonly headers: Record<string, string>;
  constructor(status: number, body: Record<string, unknown>, headers: Record<string, string> = {}) {
    super(String(body.title ?? status));
    this.status = status;
    this.body = body;
    this.headers = headers;
  }
}

const problem = (
  status: number,
  anchor: string,
  title: string,
  detail: string,
  extra: Record<string, unknown> = {},
) =>
  new Problem(status, {
    type: `${ERRORS}${anchor}`,
    title,
    detail,
    instance: randomUUID(),
    ...extra,
  });

export const startVonageSimulator = async (options: VonageSimulatorOptions = {}) => {
  const clock = options.clock ?? systemClock;
  const apiKey = options.apiKey ?? 'simkey01';
  const apiSecret = options.apiSecret ?? `Sim${randomBytes(9).toString('hex')}`;
  const applicationId = options.applicationId ?? randomUUID();
  let signatureSecret = options.signatureSecret ?? randomBytes(24).toString('hex');
  const fromNumber = (options.fromNumber ?? '447700900999').replace(/^\+/, '');
  const wrongCodeStatus = options.wrongCodeStatus ?? 400;
  const validateResponses = options.validateResponses ?? true;
  let limits: Required<VonageLimits> = { ...DEFAULT_LIMITS, ...options.limits };
  let credit = options.credit ?? 100;
  const keys = options.privateKey
    ? { privatePem: options.privateKey, publicKey: createPublicKey(options.privateKey) }
    : applicationKeys();

  const load = (file: string, name: string, patches: readonly OpenApiPatch[] = []) => {
    const doc = loadOpenApiDocument(new URL(file, SPECS));
    return createOpenApiValidator(doc, { name, basePath: serverBasePath(doc), patches });
  };
  const validators = {
    verify: load('vonage-verify-v2-openapi.yml', 'vonage-sim-verify'),
    messages: load('vonage-messages-openapi.yml', 'vonage-sim-messages'),
    voice: load('vonage-voice-openapi.yml', 'vonage-sim-voice'),
    sms: load('vonage-sms-openapi.yml', 'vonage-sim-sms', VONAGE_SMS_SPEC_PATCHES),
  };

  const webhooks = createVonageWebhooks({
    ...options.webhooks,
    secret: () => signatureSecret,
    apiKey,
    applicationId,
    clock,
  });
  let botUrl: string | undefined;
  const hookUrl = (route: 'verify' | 'messages' | 'voice') =>
    botUrl === undefined ? undefined : `${botUrl}/webhooks/vonage/${route}`;
  const callbacks = createCallbackValidator();
  const messagesDoc = loadOpenApiDocument(new URL('vonage-messages-openapi.yml', SPECS));
  const verifyDoc = loadOpenApiDocument(new URL('vonage-verify-v2-openapi.yml', SPECS));
  /** The documented schema of a webhook body, when the vendored documents give one. */
  const callbackSchema = (kind: Parameters<typeof webhooks.send>[0], payload: unknown) => {
    if (kind === 'message-status') return { document: messagesDoc, schema: 'messageStatusSMS' };
    if (kind === 'inbound-sms') return { document: messagesDoc, schema: 'inboundMessageSMS' };
    if (kind === 'verify') {
      const type = (payload as { type?: unknown }).type;
      return {
        document: verifyDoc,
        schema: type === 'summary' ? 'VerifyResource' : 'VerifyResourceEventCallBackExample',
      };
    }
    return undefined;
  };
  const publish = (
    kind: Parameters<typeof webhooks.send>[0],
    url: string | undefined,
    payload: unknown,
  ): Promise<DeliveryResult> => {
    const target = callbackSchema(kind, payload);
    const issues = target ? callbacks.validate(target, payload) : [];
    if (issues.length > 0) {
      violations.push({
        kind: 'webhook',
        operationId: target?.schema,
        method: 'POST',
        path: url ?? kind,
        issues,
      });
    }
    return url === undefined ? Promise.resolve({ ok: false }) : webhooks.send(kind, url, payload);
  };

  // ---------------------------------------------------------------- state

  const verifications = new Map<string, Verification>();
  type Phone = VonageSimState['phones'][number];
  const phones = new Map<string, Phone>();
  const phone = (number: string): Phone => {
    const n = number.replace(/^\+/, '');
    let p = phones.get(n);
    if (!p) {
      p = { number: n, inbox: [], sent: [], calls: [] };
      phones.set(n, p);
    }
    return p;
  };
  const callsByUuid = new Map<string, CallOnPhone>();
  const listeners = new Set<(number: string) => void>();
  /** Something on this phone changed (for a console that shows the phones live). */
  const changed = (number: string) => {
    for (const listener of listeners) {
      try {
        listener(number);
      } catch {
        // A watcher's failure is not the phone's.
      }
    }
  };
  const iso = () => clock.now().toISOString();
  const nowMs = () => clock.now().getTime();

  const violations: VonageViolation[] = [];
  const requests: RecordedVonageRequest[] = [];
  const faults: Array<{ op: string; fault: VonageFault; left: number }> = [];
  const delays: Array<{ op: string; delay: VonageDelay; left: number }> = [];
  const seenJti = new Set<string>();
  const windows = new Map<keyof VonageLimits, number[]>();

  const takeFrom = <T extends { op: string; left: number }>(
    list: T[],
    op: string | undefined,
    matches: (x: T) => boolean = () => true,
  ) => {
    const i = list.findIndex((x) => x.op === op && matches(x));
    if (i < 0) return undefined;
    const x = list[i]!;
    x.left -= 1;
    if (x.left <= 0) list.splice(i, 1);
    return x;
  };

  /** The number a request is for: an SMS's `to`, a call's first phone endpoint (E.164 digits). */
  const requestedNumber = (body: unknown): string | undefined => {
    const to = (body as { to?: unknown } | null | undefined)?.to;
    if (typeof to === 'string') return to.replace(/\D/g, '');
    const first = Array.isArray(to) ? (to[0] as { number?: unknown } | undefined) : undefined;
    return typeof first?.number === 'string' ? first.number.replace(/\D/g, '') : undefined;
  };

  // ---------------------------------------------------------------- phones: what arrives on them

  const deliverSms = (to: string, text: string, kind: SmsOnPhone['kind'], clientRef?: string): SmsOnPhone => {
    const sms: SmsOnPhone = {
      messageUuid: randomUUID(),
      at: iso(),
      from: fromNumber,
      to,
      text,
      kind,
      ...(clientRef === undefined ? {} : { clientRef }),
      status: 'submitted',
    };
    const p = phone(to);
    if (p.reject) sms.status = 'rejected';
    else {
      sms.status = 'delivered';
      p.inbox.push(sms);
    }
    changed(p.number);
    return sms;
  };

  const callEvent = (call: CallOnPhone, status: string, extra: Record<string, unknown> = {}) => {
    if (call.kind !== 'call') return;
    void publish('call-event', call.eventUrl ?? hookUrl('voice'), {
      from: call.from,
      to: call.to,
      uuid: call.uuid,
      conversation_uuid: call.conversationUuid,
      status,
      direction: 'outbound',
      timestamp: iso(),
      ...extra,
    });
  };

  const placeCall = (
    to: string,
    ncco: unknown[],
    kind: CallOnPhone['kind'],
    eventUrl: string | undefined,
    ringingSeconds: number,
  ) => {
    const call: CallOnPhone = {
      uuid: randomUUID(),
      conversationUuid: randomUUID(),
      at: iso(),
      from: fromNumber,
      to,
      kind,
      status: 'ringing',
      ncco,
      spoken: [],
      awaitingInput: undefined,
      keys: [],
      inputs: [],
      eventUrl,
      ringingUntil: nowMs() + ringingSeconds * 1000,
      answeredAt: undefined,
    };
    const p = phone(to);
    p.calls.push(call);
    callsByUuid.set(call.uuid, call);
    callEvent(call, 'started');
    if (p.reject) {
      call.status = p.reject;
      callEvent(call, p.reject);
    } else {
      callEvent(call, 'ringing');
    }
    changed(p.number);
    return call;
  };

  const finishCall = (call: CallOnPhone) => {
    if (call.status === 'completed') return;
    call.status = 'completed';
    call.awaitingInput = undefined;
    changed(call.to);
    const start = call.answeredAt ?? call.at;
    const duration = Math.max(0, Math.round((nowMs() - Date.parse(start)) / 1000));
    callEvent(call, 'completed', {
      start_time: start,
      end_time: iso(),
      duration: String(duration),
      rate: '0.01000000',
      price: (0.0001 * duration).toFixed(8),
      network: 'GB-SIM',
    });
  };

  /** Plays an NCCO: talk actions are spoken, an input action waits for keys; at the end the call ends. */
  const play = (call: CallOnPhone, ncco: unknown[]) => {
    call.ncco = ncco;
    for (const raw of ncco) {
      const action = (raw ?? {}) as Record<string, unknown>;
      if (action.action === 'talk' && typeof action.text === 'string') call.spoken.push(action.text);
      if (action.action === 'input') {
        const urls = Array.isArray(action.eventUrl) ? action.eventUrl : [];
        const dtmf = (action.dtmf ?? {}) as { maxDigits?: unknown };
        call.awaitingInput = {
          eventUrl: typeof urls[0] === 'string' ? urls[0] : call.eventUrl,
          maxDigits: typeof dtmf.maxDigits === 'number' ? dtmf.maxDigits : 4,
        };
        return;
      }
    }
    finishCall(call);
  };

  const requireCall = (uuid: string) => {
    const call = callsByUuid.get(uuid);
    if (!call) throw new Error(`vonage simulator: no call ${uuid}`);
    return call;
  };

  // ---------------------------------------------------------------- Verify v2

  const verifyEvent = (v: Verification, channel: string, status: string) =>
    !v.callbacks
      ? undefined
      : publish('verify', hookUrl('verify'), {
          request_id: v.id,
          triggered_at: iso(),
          type: 'event',
          channel,
          status,
          finalized_at: iso(),
          channel_timeout: v.channelTimeout,
          ...(v.clientRef === undefined ? {} : { client_ref: v.clientRef }),
        });
  const verifySummary = (v: Verification) =>
    !v.callbacks
      ? undefined
      : publish('verify', hookUrl('verify'), {
          request_id: v.id,
          submitted_at: v.submittedAt,
          status: v.status,
          type: 'summary',
          channel_timeout: v.channelTimeout,
          workflow: v.steps.map((s) => ({
            channel: s.channel,
            ...(s.initiatedAt ? { initiated_at: s.initiatedAt } : {}),
            status: s.status,
          })),
          ...(v.clientRef === undefined ? {} : { client_ref: v.clientRef }),
        });

  const sendCodeStep = (v: Verification) => {
    const step = v.steps[v.step]!;
    step.initiatedAt = iso();
    v.stepStartedAtMs = nowMs();
    const minutes = Math.ceil(v.channelTimeout / 60);
    if (step.channel === 'sms') {
      deliverSms(v.to, `${v.brand} code: ${v.code}. Valid for ${minutes} minutes.`, 'verify');
    } else {
      const call = placeCall(v.to, [], 'verify', undefined, 60);
      if (call.status === 'ringing') {
        call.spoken.push(
          `Your ${v.brand} code is ${v.code.split('').join(' ')}. Again: ${v.code.split('').join(' ')}.`,
        );
      }
    }
  };

  const endVerification = (v: Verification, status: Verification['status'], stepStatus: string) => {
    v.status = status;
    const step = v.steps[v.step];
    if (step) step.status = stepStatus;
    if (status !== 'cancelled') {
      void verifyEvent(v, step?.channel ?? 'sms', stepStatus === 'completed' ? 'completed' : 'failed');
      void verifySummary(v);
    }
  };

  const nextStep = (v: Verification) => {
    v.steps[v.step]!.status = 'expired';
    v.step += 1;
    sendCodeStep(v);
  };

  const runTimers = () => {
    const now = nowMs();
    for (const v of verifications.values()) {
      while (v.status === 'in_progress' && now >= v.stepStartedAtMs + v.channelTimeout * 1000) {
        if (v.step + 1 < v.steps.length) {
          const dueAt = v.stepStartedAtMs + v.channelTimeout * 1000;
          nextStep(v);
          v.stepStartedAtMs = dueAt;
        } else {
          endVerification(v, 'expired', 'expired');
        }
      }
    }
    for (const call of callsByUuid.values()) {
      if (call.status === 'ringing' && now >= call.ringingUntil) {
        call.status = 'timeout';
        callEvent(call, 'timeout');
        changed(call.to);
      }
    }
  };

  const active = (id: string) => {
    const v = verifications.get(id);
    if (!v)
      throw problem(
        404,
        '/verify-v2#not-found',
        'Not Found',
        `Request '${id}' was not found or it has been verified already.`,
      );
    return v;
  };

  const verifyStart = (body: Record<string, unknown>, viaJwt: boolean) => {
    const workflow = (body.workflow as Array<{ channel: string; to: string }>) ?? [];
    const channels = workflow.map((w) => w.channel);
    if (channels.some((c) => c !== 'sms' && c !== 'voice')) {
      throw problem(
        422,
        '/verify-v2#invalid-params',
        'Invalid params',
        'The simulator only offers sms and voice workflows.',
        {
          invalid_parameters: [{ name: 'workflow', reason: 'only sms and voice are simulated' }],
        },
      );
    }
    const to = workflow[0]!.to.replace(/^\+/, '');
    if (workflow.some((w) => w.to.replace(/^\+/, '') !== to)) {
      throw problem(
        422,
        '/verify-v2#invalid-params',
        'Invalid params',
        'Every workflow step must go to the same number.',
        {
          invalid_parameters: [{ name: 'workflow', reason: 'different numbers' }],
        },
      );
    }
    const brand = String(body.brand);
    if (/[/{}:$]/.test(brand)) {
      throw problem(422, '/verify-v2#invalid-params', 'Invalid params', 'Invalid value for param: brand', {
        invalid_parameters: [{ name: 'brand', reason: 'must not contain / { } : $' }],
      });
    }
    for (const v of verifications.values()) {
      if (v.to === to && v.status === 'in_progress') {
        throw problem(
          409,
          '/verify-v2#concurrent',
          'Conflict',
          'Concurrent verifications to the same number are not allowed.',
        );
      }
    }
    charge('verify');
    const codeLength = typeof body.code_length === 'number' ? body.code_length : 4;
    const v: Verification = {
      id: randomUUID(),
      to,
      brand,
      code: Array.from({ length: codeLength }, () => String(randomInt(10))).join(''),
      codeLength,
      channelTimeout: typeof body.channel_timeout === 'number' ? body.channel_timeout : 180,
      locale: typeof body.locale === 'string' ? body.locale : 'en-us',
      clientRef: typeof body.client_ref === 'string' ? body.client_ref : undefined,
      submittedAt: iso(),
      startedAtMs: nowMs(),
      step: 0,
      stepStartedAtMs: nowMs(),
      steps: channels.map((channel) => ({
        channel: channel as 'sms' | 'voice',
        initiatedAt: undefined,
        status: 'unused',
      })),
      wrongCodes: 0,
      status: 'in_progress',
      callbacks: viaJwt,
    };
    verifications.set(v.id, v);
    sendCodeStep(v);
    return { status: 202, body: { request_id: v.id } };
  };

  const gone = (v: Verification) => {
    if (v.status === 'completed') {
      return problem(409, '/verify-v2#conflict', 'Conflict', 'This request has already been verified.');
    }
    return problem(410, '/verify-v2#expired', 'Gone', `This request is no longer active (${v.status}).`);
  };

  const verifyCheck = (id: string, body: Record<string, unknown>) => {
    const v = active(id);
    if (v.status !== 'in_progress') throw gone(v);
    if (String(body.code) === v.code) {
      endVerification(v, 'completed', 'completed');
      return { status: 200, body: { request_id: v.id, status: 'completed' } };
    }
    v.wrongCodes += 1;
    if (v.wrongCodes >= 3) {
      endVerification(v, 'failed', 'failed');
      throw problem(
        410,
        '/verify-v2#expired',
        'Gone',
        'An incorrect code has been provided too many times. Workflow terminated.',
      );
    }
    throw problem(
      wrongCodeStatus,
      '/verify-v2#invalid-code',
      'Invalid Code',
      'The code you provided does not match the expected value.',
    );
  };

  const verifyCancel = (id: string) => {
    const v = active(id);
    if (v.status !== 'in_progress') throw gone(v);
    if (nowMs() - v.startedAtMs < 30_000) {
      throw problem(
        409,
        '/verify-v2#conflict',
        'Conflict',
        'Verification requests can only be cancelled 30 s after they started: too early.',
      );
    }
    if (v.step > 0) {
      throw problem(
        409,
        '/verify-v2#conflict',
        'Conflict',
        'The second workflow event has already taken place: the request can no longer be cancelled.',
      );
    }
    endVerification(v, 'cancelled', 'unused');
    return { status: 204, body: undefined };
  };

  const verifyNext = (id: string) => {
    const v = active(id);
    if (v.status !== 'in_progress') throw gone(v);
    if (v.step + 1 >= v.steps.length) {
      throw problem(409, '/verify-v2#conflict', 'Conflict', 'There is no next workflow to move to.');
    }
    nextStep(v);
    return { status: 200, body: undefined };
  };

  // ---------------------------------------------------------------- Messages, Voice, SMS, Number Insight

  const charge = (what: keyof typeof PRICES) => {
    if (credit < PRICES[what]) {
      throw problem(
        402,
        '#low-balance',
        'Low balance',
        'This request could not be performed due to your account balance being low.',
      );
    }
    credit = Math.round((credit - PRICES[what]) * 1e6) / 1e6;
  };

  const sendMessage = (body: Record<string, unknown>) => {
    if (body.channel !== 'sms') {
      throw problem(422, '/messages-olympus#1150', 'Invalid params', 'The simulator only sends SMS.', {
        invalid_parameters: [{ name: 'channel', reason: 'only sms is simulated' }],
      });
    }
    charge('sms');
    const to = String(body.to);
    const clientRef = typeof body.client_ref === 'string' ? body.client_ref : undefined;
    const sms = deliverSms(to, String(body.text), 'sms', clientRef);
    const status = (s: string, extra: Record<string, unknown> = {}) =>
      void publish(
        'message-status',
        typeof body.webhook_url === 'string' ? body.webhook_url : hookUrl('messages'),
        {
          message_uuid: sms.messageUuid,
          to,
          from: String(body.from),
          timestamp: iso(),
          status: s,
          channel: 'sms',
          ...(clientRef === undefined ? {} : { client_ref: clientRef }),
          ...extra,
        },
      );
    status('submitted', { usage: { currency: 'EUR', price: String(PRICES.sms) } });
    if (sms.status === 'rejected') {
      status('rejected', {
        error: {
          type: `${ERRORS}/messages#1300`,
          title: '1300',
          detail: 'Absent subscriber: the handset is switched off or out of coverage.',
          instance: randomUUID(),
        },
      });
    } else {
      status('delivered');
    }
    return { status: 202, body: { message_uuid: sms.messageUuid } };
  };

  const createCall = (body: Record<string, unknown>) => {
    const to = (body.to as Array<{ type: string; number?: string }>)[0];
    if (to?.type !== 'phone' || !to.number) {
      throw problem(400, '#bad-request', 'Bad Request', 'The simulator only calls phones.');
    }
    if (!Array.isArray(body.ncco)) {
      throw problem(
        400,
        '#bad-request',
        'Bad Request',
        'The simulator needs an ncco (answer_url is not simulated).',
      );
    }
    charge('call');
    const eventUrls = Array.isArray(body.event_url) ? body.event_url : [];
    const call = placeCall(
      to.number,
      body.ncco as unknown[],
      'call',
      typeof eventUrls[0] === 'string' ? eventUrls[0] : undefined,
      typeof body.ringing_timer === 'number' ? body.ringing_timer : 60,
    );
    return {
      status: 201,
      body: {
        uuid: call.uuid,
        status: 'started',
        direction: 'outbound',
        conversation_uuid: call.conversationUuid,
      },
    };
  };

  /** `PUT /v1/calls/{uuid}`: only `hangup` is simulated. */
  const updateCall = (uuid: string, body: Record<string, unknown>) => {
    const call = callsByUuid.get(uuid);
    if (call?.kind !== 'call') throw problem(404, '#not-found', 'Not Found', `No call ${uuid}.`);
    if (body.action !== 'hangup') {
      throw problem(
        400,
        '#bad-request',
        'Bad Request',
        `The simulator only simulates hangup, not ${String(body.action)}.`,
      );
    }
    if (call.status === 'ringing') {
      call.status = 'cancelled';
      callEvent(call, 'cancelled');
      changed(call.to);
    } else if (call.status === 'answered') {
      finishCall(call);
    }
    return { status: 204, body: undefined };
  };

  const legacySms = (body: Record<string, unknown>) => {
    const to = String(body.to);
    const sms = deliverSms(
      to,
      String(body.text ?? ''),
      'sms',
      typeof body['client-ref'] === 'string' ? body['client-ref'] : undefined,
    );
    return {
      status: 200,
      body: {
        'message-count': '1',
        messages: [
          sms.status === 'rejected'
            ? { to, status: '6', 'error-text': 'Unroutable message' }
            : {
                to,
                'message-id': sms.messageUuid,
                status: '0',
                'remaining-balance': String(credit),
                'message-price': String(PRICES.sms),
                network: '23410',
              },
        ],
      },
    };
  };

  const numberInsight = (query: URLSearchParams) => {
    if (nowMs() >= NI_SUNSET) {
      throw problem(410, '#gone', 'Gone', 'Number Insight was retired on 2027-02-04.');
    }
    const number = (query.get('number') ?? '').replace(/^\+/, '');
    if (!/^[1-9]\d{6,14}$/.test(number)) {
      return { status: 200, body: { status: 3, status_message: 'Invalid request: number' } };
    }
    const uk = number.startsWith('44');
    return {
      status: 200,
      body: {
        status: 0,
        status_message: 'Success',
        request_id: randomUUID(),
        international_format_number: number,
        national_format_number: uk ? `0${number.slice(2, 6)} ${number.slice(6)}` : number,
        country_code: uk ? 'GB' : 'US',
        country_code_iso3: uk ? 'GBR' : 'USA',
        country_name: uk ? 'United Kingdom' : 'United States of America',
        country_prefix: uk ? '44' : '1',
      },
    };
  };

  // ---------------------------------------------------------------- auth and rate limits

  const basicOk = (auth: string | undefined) =>
    auth !== undefined && auth === `Basic ${Buffer.from(`${apiKey}:${apiSecret}`).toString('base64')}`;

  /** Undefined when the JWT is good, else why not. */
  const jwtProblem = async (auth: string | undefined, record: RecordedVonageRequest, path: string) => {
    const token = auth?.startsWith('Bearer ') ? auth.slice(7) : undefined;
    if (!token) return 'no bearer token';
    try {
      const { payload } = await jwtVerify(token, keys.publicKey, {
        algorithms: ['RS256'],
        currentDate: clock.now(),
        clockTolerance: 30,
      });
      if (payload.application_id !== applicationId) return 'application_id is not this application';
      if (typeof payload.iat !== 'number') return 'no iat';
      if (payload.exp === undefined && nowMs() / 1000 > payload.iat + 900)
        return 'no exp, and older than 15 min';
      if (payload.exp !== undefined && payload.exp - payload.iat > 86_400)
        return 'exp more than 24 h after iat';
      if (typeof payload.jti !== 'string' || payload.jti.length === 0) return 'no jti';
      if (seenJti.has(payload.jti)) {
        violations.push({
          kind: 'contract',
          operationId: record.operationId,
          method: record.method,
          path,
          issues: [{ where: 'header', name: 'Authorization', message: 'a JWT jti was used twice' }],
        });
      }
      seenJti.add(payload.jti);
      return undefined;
    } catch (err) {
      return err instanceof Error ? err.name : 'invalid token';
    }
  };

  const unauthorized = (why: string) =>
    problem(401, '#unauthorized', 'Unauthorized', `You did not provide correct credentials (${why}).`);

  /** Counts an accepted request; throws the 429 when the API's window is full. */
  const rateLimit = (bucket: keyof VonageLimits) => {
    const limit = limits[bucket];
    if (limit === Infinity) return;
    const now = nowMs();
    const list = (windows.get(bucket) ?? []).filter((t) => t > now - 1000);
    windows.set(bucket, list);
    if (list.length >= limit) {
      const resetAt = list[list.length - limit]! + 1000;
      const err = problem(429, '#throttled', 'Rate Limit Hit', 'Please wait, then retry your request');
      Object.assign(err.headers, {
        'retry-after': String(Math.max(1, Math.ceil((resetAt - now) / 1000))),
        'x-ratelimit-limit': String(limit),
        'x-ratelimit-remaining': '0',
        'x-ratelimit-reset': String(resetAt),
      });
      throw err;
    }
    list.push(now);
  };

  // ---------------------------------------------------------------- the server

  const send = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    if (res.destroyed) return;
    const text = body === undefined ? '' : JSON.stringify(body);
    const problemJson =
      status >= 400 && body !== undefined && typeof (body as { type?: unknown }).type === 'string';
    res.writeHead(status, {
      ...(text ? { 'content-type': problemJson ? 'application/problem+json' : 'application/json' } : {}),
      ...headers,
    });
    res.end(text);
  };

  /** Some gateways log the Basic pair decoded (`key:secret`). */
  const decodedBasic = (auth: string) =>
    auth.startsWith('Basic ') ? Buffer.from(auth.slice(6), 'base64').toString() : '(none)';
  const faultBody = (fault: VonageFault, auth: string): Record<string, unknown> => {
    if (fault.body) return { ...fault.body };
    const statusText: Record<number, [string, string, string]> = {
      400: ['#invalid-code', 'Invalid Code', 'The code you provided does not match the expected value.'],
      401: ['#unauthorized', 'Unauthorized', 'You did not provide correct credentials.'],
      402: [
        '#low-balance',
        'Low balance',
        'This request could not be performed due to your account balance being low.',
      ],
      403: ['#forbidden', 'Forbidden', 'Your account does not have permission to perform this action.'],
      404: ['#not-found', 'Not Found', 'Request was not found.'],
      409: ['/verify-v2#conflict', 'Conflict', 'Conflict.'],
      410: ['/verify-v2#expired', 'Gone', 'This request is no longer active.'],
      422: ['#invalid-params', 'Invalid params', 'The value of one or more parameters is invalid.'],
      429: ['#throttled', 'Rate Limit Hit', 'Please wait, then retry your request'],
    };
    const [anchor, title, detail] = statusText[fault.status as number] ?? [
      '#internal-error',
      'Internal Error',
      'Something went wrong.',
    ];
    const body: Record<string, unknown> = {
      type: `${ERRORS}${anchor}`,
      title,
      detail: fault.echoAuthorization
        ? `${detail} (Authorization: ${auth}; user ${decodedBasic(auth)})`
        : detail,
      instance: randomUUID(),
    };
    if (fault.status === 422) {
      body.invalid_parameters = [{ name: fault.field ?? 'to', reason: 'Invalid value' }];
    }
    if (fault.echoAuthorization) {
      body.received_authorization = auth;
      // Some gateways log the Basic pair decoded.
      if (auth.startsWith('Basic '))
        body.received_credentials = Buffer.from(auth.slice(6), 'base64').toString();
    }
    return body;
  };

  type Api = {
    validator: OpenApiValidator | undefined;
    name: 'verify' | 'messages' | 'voice' | 'sms' | 'ni';
  };
  const apiFor = (method: string, path: string): Api | undefined => {
    if (path === '/v2/verify' || path.startsWith('/v2/verify/'))
      return { validator: validators.verify, name: 'verify' };
    if (path === '/v1/calls' || path.startsWith('/v1/calls/'))
      return { validator: validators.voice, name: 'voice' };
    if (path === '/v1/messages' || path.startsWith('/v1/messages/'))
      return { validator: validators.messages, name: 'messages' };
    if (path.startsWith('/sms/')) return { validator: validators.sms, name: 'sms' };
    if (method === 'GET' && path === '/ni/basic/json') return { validator: undefined, name: 'ni' };
    return undefined;
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const raw = await readBody(req);
    runTimers();
    const method = (req.method ?? 'GET').toUpperCase();
    const reqUrl = req.url ?? '/';
    const url = new URL(reqUrl, 'http://sim.invalid');
    const path = url.pathname;
    const api = apiFor(method, path);
    const operationId = api?.name === 'ni' ? 'niBasic' : api?.validator?.match(method, reqUrl)?.operationId;
    let parsed: unknown;
    try {
      parsed = raw.length ? JSON.parse(raw.toString()) : undefined;
    } catch {
      parsed = raw.toString();
    }
    const record: RecordedVonageRequest = {
      operationId,
      method,
      url: reqUrl,
      headers: { ...req.headers },
      body: parsed,
      at: nowMs(),
      status: 0,
    };
    requests.push(record);
    const answer = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      record.status = status;
      send(res, status, body, headers);
    };

    const fault = takeFrom(
      faults,
      operationId,
      (f) => f.fault.to === undefined || requestedNumber(parsed) === f.fault.to,
    );
    if (fault) {
      if (fault.fault.status === 'reset') {
        record.status = 'reset';
        res.socket?.destroy();
        return;
      }
      const headers: Record<string, string> =
        fault.fault.status === 429 ? { 'retry-after': String(fault.fault.retryAfterSeconds ?? 1) } : {};
      return answer(
        fault.fault.status,
        faultBody(fault.fault, String(req.headers.authorization ?? '')),
        headers,
      );
    }
    const delay = takeFrom(delays, operationId);
    if (delay) {
      await delay.delay.until;
      runTimers();
    }

    if (!api || (api.validator && !operationId)) {
      violations.push({
        kind: 'route',
        operationId,
        method,
        path,
        issues: [{ where: 'route', message: 'no such operation' }],
      });
      return answer(404, {
        type: `${ERRORS}#not-found`,
        title: 'Not Found',
        detail: `${method} ${path}`,
        instance: randomUUID(),
      });
    }

    try {
      // Credentials first, as the vendor's gateway does.
      const auth = req.headers.authorization;
      if (api.name === 'voice') {
        const why = await jwtProblem(auth, record, path);
        if (why) throw unauthorized(why);
      } else if (api.name === 'verify' || api.name === 'messages') {
        if (!basicOk(auth)) {
          const why = await jwtProblem(auth, record, path);
          if (why) throw unauthorized(auth?.startsWith('Basic ') ? 'wrong key or secret' : why);
        }
      } else if (api.name === 'ni') {
        const byQuery =
          url.searchParams.get('api_key') === apiKey && url.searchParams.get('api_secret') === apiSecret;
        if (!basicOk(auth) && !byQuery) throw unauthorized('wrong key or secret');
      } else if (api.name === 'sms') {
        const form = new URLSearchParams(raw.toString());
        const byForm = form.get('api_key') === apiKey && form.get('api_secret') === apiSecret;
        if (!basicOk(auth) && !byForm) throw unauthorized('wrong key or secret');
      }

      const bucket: keyof VonageLimits | undefined =
        api.name === 'voice'
          ? operationId === 'createCall'
            ? 'callCreation'
            : 'voiceOther'
          : api.name === 'messages'
            ? 'messages'
            : api.name === 'sms'
              ? 'legacySms'
              : api.name === 'verify'
                ? 'verify'
                : undefined;
      if (bucket) rateLimit(bucket);

      let body: Record<string, unknown> = {};
      if (api.validator) {
        const validated = api.validator.validateRequest({
          method,
          url: reqUrl,
          headers: req.headers,
          body: raw,
        });
        const issues = validated.issues.filter((i) => i.where !== 'security');
        if (issues.length > 0) {
          violations.push({ kind: 'request', operationId, method, path, issues });
          throw problem(
            422,
            '#invalid-params',
            'Invalid params',
            'The value of one or more parameters is invalid.',
            {
              invalid_parameters: issues.map((i) => ({ name: i.name ?? i.where, reason: describe(i) })),
            },
          );
        }
        body = (validated.body ?? {}) as Record<string, unknown>;
      }

      const pathParams = api.validator?.match(method, reqUrl)?.pathParams ?? {};
      const id = pathParams.request_id ?? '';
      let result: { status: number; body: unknown };
      switch (operationId) {
        case 'newRequest':
          result = verifyStart(body, !basicOk(req.headers.authorization));
          break;
        case 'checkCode':
          result = verifyCheck(id, body);
          break;
        case 'cancelRequest':
          result = verifyCancel(id);
          break;
        case 'nextWorkflow':
          result = verifyNext(id);
          break;
        case 'SendMessage':
          result = sendMessage(body);
          break;
        case 'createCall':
          result = createCall(body);
          break;
        case 'updateCall':
          result = updateCall(pathParams.uuid ?? '', body);
          break;
        case 'send-an-sms':
          result = legacySms(body);
          break;
        case 'niBasic':
          result = numberInsight(url.searchParams);
          break;
        default:
          throw problem(
            501,
            '#not-implemented',
            'Not Implemented',
            `${operationId} is in the document but not simulated`,
          );
      }
      if (validateResponses && api.validator && operationId && result.body !== undefined) {
        const issues = api.validator.validateResponse(operationId, result.status, result.body);
        if (issues.length > 0) violations.push({ kind: 'response', operationId, method, path, issues });
      }
      return answer(result.status, result.body);
    } catch (err) {
      if (err instanceof Problem) return answer(err.status, err.body, err.headers);
      throw err;
    }
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      violations.push({
        kind: 'crash',
        operationId: undefined,
        method: req.method ?? '',
        path: req.url ?? '',
        issues: [
          { where: 'route', message: `simulator crashed: ${err instanceof Error ? err.stack : String(err)}` },
        ],
      });
      send(res, 500, {
        type: `${ERRORS}#internal-error`,
        title: 'Internal Error',
        detail: 'Simulator error',
        instance: randomUUID(),
      });
    });
  });
  const url = await new Promise<string>((resolve) => {
    server.listen(0, '127.0.0.1', () =>
      resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`),
    );
  });
  const tickMs = options.tickMs ?? (clock === systemClock ? 250 : undefined);
  const ticker = tickMs === undefined ? undefined : setInterval(runTimers, tickMs);
  ticker?.unref();

  // ---------------------------------------------------------------- the person holding the phone

  const phonesApi = {
    /** Every number that has received or sent something, in order of first use. */
    numbers: (): readonly string[] => [...phones.keys()],
    /**
     * Calls `listener(number)` whenever something on a phone changes (an SMS in or out, a call
     * placed, answered, spoken to, ended). Returns the function that stops it.
     */
    onChange(listener: (number: string) => void): () => void {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    /** The SMS this number received, oldest first (verification codes included). */
    inbox: (number: string): readonly SmsOnPhone[] => phone(number).inbox,
    /** The SMS this number sent (replies), oldest first. */
    sent: (number: string): readonly SmsOnPhone[] => phone(number).sent,
    /** The calls this number received, oldest first. */
    calls: (number: string): readonly CallOnPhone[] => phone(number).calls,
    call: (uuid: string): CallOnPhone => requireCall(uuid),
    /** The last verification code sent to this number (by SMS or read out in a call). */
    lastCode(number: string): string | undefined {
      const n = number.replace(/^\+/, '');
      let last: Verification | undefined;
      for (const v of verifications.values()) if (v.to === n) last = v;
      return last?.code;
    },
    /** The person replies by SMS: an inbound-SMS webhook to the bot. Resolves when it was delivered. */
    replySms(from: string, text: string): Promise<DeliveryResult> {
      const n = from.replace(/^\+/, '');
      const sms: SmsOnPhone = {
        messageUuid: randomUUID(),
        at: iso(),
        from: n,
        to: fromNumber,
        text,
        kind: 'sms',
        status: 'delivered',
      };
      phone(n).sent.push(sms);
      changed(n);
      return publish('inbound-sms', hookUrl('messages'), {
        channel: 'sms',
        message_uuid: sms.messageUuid,
        to: fromNumber,
        from: n,
        timestamp: sms.at,
        text,
        message_type: 'text',
        sms: { num_messages: '1' },
      });
    },
    /** The person picks up: `answered`, then the NCCO plays (talk is spoken; input waits for keys). */
    answer(uuid: string): CallOnPhone {
      const call = requireCall(uuid);
      if (call.status !== 'ringing')
        throw new Error(`vonage simulator: call ${uuid} is ${call.status}, not ringing`);
      call.status = 'answered';
      call.answeredAt = iso();
      callEvent(call, 'answered', { start_time: call.answeredAt });
      if (call.kind === 'call') play(call, call.ncco);
      changed(call.to);
      return call;
    },
    /**
     * Keys on the keypad: the DTMF input goes to the NCCO input's `eventUrl` (signed), and the NCCO
     * it answers is played. Resolves with that answer.
     */
    async pressKeys(
      uuid: string,
      digits: string,
    ): Promise<{ status: number | undefined; ncco: unknown; call: CallOnPhone }> {
      const call = requireCall(uuid);
      const input = call.awaitingInput;
      if (call.status !== 'answered' || !input)
        throw new Error(`vonage simulator: call ${uuid} is not waiting for keys`);
      if (!/^[0-9*#]{1,20}$/.test(digits)) throw new Error('vonage simulator: keys are 0-9, * and #');
      call.keys.push(digits);
      call.awaitingInput = undefined;
      const pressed: CallOnPhone['inputs'][number] = {
        digits,
        at: iso(),
        status: undefined,
        ncco: undefined,
      };
      call.inputs.push(pressed);
      if (!input.eventUrl) {
        finishCall(call);
        return { status: undefined, ncco: undefined, call };
      }
      const result = await webhooks.sendNow('input', input.eventUrl, {
        speech: { results: [] },
        dtmf: { digits: digits.slice(0, input.maxDigits), timed_out: false },
        from: call.to,
        to: call.from,
        uuid: call.uuid,
        conversation_uuid: call.conversationUuid,
        timestamp: iso(),
      });
      let ncco: unknown;
      try {
        ncco = result.responseBody ? JSON.parse(result.responseBody) : undefined;
      } catch {
        ncco = undefined;
      }
      pressed.status = result.status;
      pressed.ncco = ncco;
      if (result.ok && Array.isArray(ncco)) play(call, ncco);
      else {
        call.spoken.push('(the call could not continue)');
        finishCall(call);
      }
      changed(call.to);
      return { status: result.status, ncco, call };
    },
    /** The person hangs up (or the call ends): a `completed` event. */
    hangUp(uuid: string): CallOnPhone {
      const call = requireCall(uuid);
      if (call.status === 'ringing') {
        call.status = 'failed';
        callEvent(call, 'rejected');
        changed(call.to);
        return call;
      }
      finishCall(call);
      return call;
    },
    /** From now on calls to this number are `busy` (or `failed`) and its SMS `rejected`. */
    reject(number: string, how: PhoneRejection = 'busy') {
      phone(number).reject = how;
    },
    restore(number: string) {
      delete phone(number).reject;
    },
  };

  // ---------------------------------------------------------------- the handle

  const describeViolation = (v: VonageViolation) =>
    `${v.kind} ${v.method} ${v.path}${v.operationId ? ` (${v.operationId})` : ''}: ${v.issues.map(describe).join('; ')}`;

  const simulator = {
    name: 'vonage' as const,
    /** What the bot needs (the names `src/lifecycles` reads for the verification lifecycle). */
    env: () => ({
      VONAGE_API_URL: url,
      VONAGE_REST_URL: url,
      VONAGE_API_KEY: apiKey,
      VONAGE_API_SECRET: apiSecret,
      VONAGE_APPLICATION_ID: applicationId,
      VONAGE_PRIVATE_KEY: keys.privatePem,
      VONAGE_SIGNATURE_SECRET: signatureSecret,
      VONAGE_FROM_NUMBER: fromNumber,
    }),
    /** Webhooks go to `<botUrl>/webhooks/vonage/{verify,messages,voice}` from now on. */
    connect(bot: string) {
      botUrl = bot.replace(/\/+$/, '');
    },
    exportState: (): VonageSimState => ({
      verifications: [...verifications.values()].map((v) => structuredClone(v)),
      phones: [...phones.values()].map((p) => structuredClone(p)),
      credit,
    }),
    importState(state: VonageSimState) {
      verifications.clear();
      phones.clear();
      callsByUuid.clear();
      for (const v of state.verifications) verifications.set(v.id, structuredClone(v));
      for (const p of state.phones) {
        const copy = structuredClone(p);
        phones.set(copy.number, copy);
        for (const c of copy.calls) callsByUuid.set(c.uuid, c);
      }
      credit = state.credit;
    },
    contractViolations: (): readonly ContractViolation[] =>
      violations.map((v) => ({ simulator: 'vonage', summary: describeViolation(v) })),
  };

  const handleObject = {
    ...simulator,
    url,
    apiKey,
    apiSecret,
    applicationId,
    fromNumber,
    /** The application's private key (PEM), as `VONAGE_PRIVATE_KEY`. */
    privateKey: keys.privatePem,
    get signatureSecret() {
      return signatureSecret;
    },
    /** Options for `createVonageClient` that reach this simulator. */
    clientOptions: () => ({
      apiUrl: url,
      restUrl: url,
      apiKey,
      apiSecret,
      applicationId,
      privateKey: keys.privatePem,
    }),
    phones: phonesApi,
    requests,
    violations,
    requestsFor: (operation: string) => requests.filter((r) => r.operationId === canonical(operation)),
    /** A verification as the simulator holds it (code included), by request id. */
    verification: (requestId: string) => verifications.get(requestId),
    credit: () => credit,
    setCredit(eur: number) {
      credit = eur;
    },
    setLimits(next: VonageLimits) {
      limits = { ...limits, ...next };
      windows.clear();
    },
    /** Webhooks are signed with this secret from now on (the bot's old one stops verifying). */
    rotateSignatureSecret(next: string) {
      signatureSecret = next;
    },
    failNext(operation: string, fault: VonageFault) {
      faults.push({ op: canonical(operation), fault, left: fault.times ?? 1 });
    },
    delayNext(operation: string, delay: VonageDelay) {
      delays.push({ op: canonical(operation), delay, left: delay.times ?? 1 });
    },
    clearFaults() {
      faults.length = 0;
      delays.length = 0;
    },
    runTimers,
    webhooks: {
      attempts: webhooks.attempts as readonly VonageDeliveryAttempt[],
      delivered: (kind?: VonageDeliveryAttempt['kind']) =>
        webhooks.attempts.filter((a) => a.outcome === 'delivered' && (kind === undefined || a.kind === kind)),
      duplicateNext: (count = 1) => webhooks.duplicateNext(count),
      hold: () => webhooks.hold(),
      release: () => webhooks.release(),
      heldCount: () => webhooks.heldCount(),
      idle: () => webhooks.idle(),
    },
    assertNoViolations() {
      if (violations.length > 0) {
        throw new Error(
          `Vonage simulator saw ${violations.length} violation(s):\n${violations.map(describeViolation).join('\n')}`,
        );
      }
    },
    clearViolations() {
      violations.length = 0;
    },
    async stop() {
      if (ticker) clearInterval(ticker);
      await webhooks.stop();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
  return handleObject satisfies Simulator<VonageSimState>;
};

export type VonageSimulator = Awaited<ReturnType<typeof startVonageSimulator>>;
